// forkbench: what fork() costs a program whose mutexes the shim runs.  The
// main thread loops: lock a mutex, fork(); the child trylocks that mutex
// (held by the forking thread, so EBUSY) and _exits; the parent waits for
// it and unlocks.  Run with and without LD_PRELOAD to compare.
//
//   forkbench [--forks N] [--live-records R]
//
// Without --live-records the parent never contends.  With it, before the
// loop the main thread takes R more mutexes and WAITERS_PER_MUTEX threads
// wait on each (under the shim the first one sleeps on the word and the
// others queue, so R queue records are in use at every fork).
//
// Prints one line: forks=N live_records=R ns_per_fork=T cpu_ns_per_fork=C
// minflt_per_child=F.  T is wall time; C is the CPU time of this process
// and its children (getrusage RUSAGE_SELF + RUSAGE_CHILDREN, user + system),
// which other work on the machine disturbs much less; F is
// RUSAGE_CHILDREN's ru_minflt / N.  Exits 1 if a child saw the held mutex
// free (or any call failed).
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAITERS_PER_MUTEX 3
#define MAX_LIVE_RECORDS 256
#define SETTLE_NS 100000000L   // lets the waiters spin out and sleep

static pthread_mutex_t forked_over = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held[MAX_LIVE_RECORDS];

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(const struct rusage *u)
{
	return ((double)u->ru_utime.tv_sec + (double)u->ru_stime.tv_sec) * 1e9 +
	       ((double)u->ru_utime.tv_usec + (double)u->ru_stime.tv_usec) * 1e3;
}

static void *waiter(void *arg)
{
	pthread_mutex_t *m = arg;
	if (pthread_mutex_lock(m) != 0 || pthread_mutex_unlock(m) != 0)
		exit(1);
	return NULL;
}

static unsigned long parse_count(const char *flag, const char *text, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || *end || end == text || v > max) {
		fprintf(stderr, "forkbench: bad %s %s (at most %lu)\n", flag, text, max);
		exit(2);
	}
	return v;
}

// One fork, trylock in the child, wait in the parent; false on any failure.
static int fork_once(void)
{
	if (pthread_mutex_lock(&forked_over) != 0)
		return 0;
	pid_t child = fork();
	if (child == 0)
		_exit(pthread_mutex_trylock(&forked_over) == EBUSY ? 0 : 1);
	int status = 0;
	int ok = child > 0 && waitpid(child, &status, 0) == child &&
		 WIFEXITED(status) && WEXITSTATUS(status) == 0;
	return pthread_mutex_unlock(&forked_over) == 0 && ok;
}

int main(int argc, char **argv)
{
	unsigned long forks = 2000, live = 0;
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--forks") == 0)
			forks = parse_count("--forks", argv[++i], 1000000);
		else if (i + 1 < argc && strcmp(argv[i], "--live-records") == 0)
			live = parse_count("--live-records", argv[++i], MAX_LIVE_RECORDS);
		else {
			fprintf(stderr, "usage: forkbench [--forks N] [--live-records R]\n");
			return 2;
		}
	}
	if (forks == 0) {
		fprintf(stderr, "forkbench: --forks must be at least 1\n");
		return 2;
	}

	pthread_t waiters[MAX_LIVE_RECORDS][WAITERS_PER_MUTEX];
	for (unsigned long r = 0; r < live; r++) {
		pthread_mutex_init(&held[r], NULL);
		pthread_mutex_lock(&held[r]);
		for (int w = 0; w < WAITERS_PER_MUTEX; w++)
			if (pthread_create(&waiters[r][w], NULL, waiter, &held[r]) != 0) {
				fprintf(stderr, "forkbench: pthread_create failed\n");
				return 1;
			}
	}
	if (live) {
		struct timespec settle = { 0, SETTLE_NS };
		nanosleep(&settle, NULL);
	}

	struct rusage self_before;
	getrusage(RUSAGE_SELF, &self_before);
	double start = now_ns();
	for (unsigned long f = 0; f < forks; f++)
		if (!fork_once()) {
			fprintf(stderr, "forkbench: fork %lu failed\n", f + 1);
			return 1;
		}
	double elapsed = now_ns() - start;

	struct rusage children, self_after;
	getrusage(RUSAGE_CHILDREN, &children);
	getrusage(RUSAGE_SELF, &self_after);
	double cpu = cpu_ns(&self_after) - cpu_ns(&self_before) + cpu_ns(&children);
	for (unsigned long r = 0; r < live; r++) {
		pthread_mutex_unlock(&held[r]);
		for (int w = 0; w < WAITERS_PER_MUTEX; w++)
			pthread_join(waiters[r][w], NULL);
	}
	printf("forks=%lu live_records=%lu ns_per_fork=%.0f cpu_ns_per_fork=%.0f"
	       " minflt_per_child=%.2f\n",
	       forks, live, elapsed / (double)forks, cpu / (double)forks,
	       (double)children.ru_minflt / (double)forks);
	return 0;
}
