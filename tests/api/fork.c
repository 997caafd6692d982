/* tests/api/fork.c — fork() from a busy multithreaded parent.
 *
 * Usage: fork [stats]
 * Eight workers first contend hard on the mutexes of set B (so the queue
 * table has history), then move to set A and hammer it while the main
 * thread, holding nothing, forks repeatedly.  B is free at every fork, and
 * so is any A mutex whose word the child reads as 0 (only the forking
 * thread exists there), however many parent workers were queued on it.
 * Each child must lock every such mutex and run four threads that contend
 * on them through the queue.  With "stats" (and CNAMUTEX_STATS=1) each child's
 * exit must print the statistics line.
 */
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "../fork_child.h"
#include "api.h"

#define WORKERS 8
#define SET_SIZE 8
#define CHILD_THREADS 4
#define FORKS (20 / (API_SCALE > 1 ? 4 : 1))

struct guarded {
	pthread_mutex_t mutex;
	long count;               /* changed only under mutex */
	_Atomic int occupancy;
};

static struct guarded set_a[SET_SIZE], set_b[SET_SIZE];
static _Atomic bool stop;
static _Atomic long overlaps, child_pairs;
static pthread_barrier_t phase;

static void guarded_init(struct guarded *g)
{
	CHECK_EQ(pthread_mutex_init(&g->mutex, NULL), 0);
	g->count = 0;
}

static void critical(struct guarded *g)
{
	if (atomic_fetch_add_explicit(&g->occupancy, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
	long seen = g->count;
	if ((seen & 127) == 0)
		sched_yield();
	g->count = seen + 1;
	atomic_fetch_sub_explicit(&g->occupancy, 1, memory_order_relaxed);
}

/* Mostly the first two mutexes of a set (every worker on them), else one's own. */
static struct guarded *pick(struct guarded *set, long worker, long i)
{
	return i % 4 == 3 ? &set[worker % SET_SIZE] : &set[i & 1];
}

static void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < 4000 / API_SCALE; i++) {
		struct guarded *g = pick(set_b, id, i);
		CHECK_EQ(pthread_mutex_lock(&g->mutex), 0);
		critical(g);
		CHECK_EQ(pthread_mutex_unlock(&g->mutex), 0);
	}
	pthread_barrier_wait(&phase);    /* B is left alone from here on */
	long done = 0;
	/* Relaxed: the flag only ends the loop; join orders the rest. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct guarded *g = pick(set_a, id, done++);
		CHECK_EQ(pthread_mutex_lock(&g->mutex), 0);
		critical(g);
		CHECK_EQ(pthread_mutex_unlock(&g->mutex), 0);
	}
	return (void *)done;
}

/* --- in the child --- */

/*
 * The mutexes the child may use: all of B, and every A mutex whose word
 * reads 0 in the child — it was free at the fork, though parent workers
 * may have been queued on it, and their queue must not haunt the child.
 * Sorted by address, the order pairs are locked in.
 */
static struct guarded *usable[2 * SET_SIZE];
static int usable_count;
static long child_iterations;
static pthread_mutex_t main_only = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

static void collect_usable(void)
{
	usable_count = 0;
	for (int k = 0; k < SET_SIZE; k++) {
		CHECK_EQ(api_word(&set_b[k].mutex), 0);
		usable[usable_count++] = &set_b[k];
		if (api_word(&set_a[k].mutex) == 0)
			usable[usable_count++] = &set_a[k];
	}
	for (int i = 1; i < usable_count; i++)           /* insertion sort by address */
		for (int j = i; j > 0 && usable[j - 1] > usable[j]; j--) {
			struct guarded *t = usable[j];
			usable[j] = usable[j - 1];
			usable[j - 1] = t;
		}
}

static void *child_worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < child_iterations; i++) {
		/* Two usable mutexes at a time, in address order; mostly the
		 * same few, so the child's threads queue on them. */
		int first = (int)((i & 1 ? id : i) % usable_count);
		int second = (first + 1 + (int)(i % 3)) % usable_count;
		if (second < first) {
			int t = first;
			first = second;
			second = t;
		}
		if (first == second)
			continue;
		CHECK_EQ(pthread_mutex_lock(&usable[first]->mutex), 0);
		CHECK_EQ(pthread_mutex_lock(&usable[second]->mutex), 0);
		critical(usable[first]);
		critical(usable[second]);
		CHECK_EQ(pthread_mutex_unlock(&usable[second]->mutex), 0);
		CHECK_EQ(pthread_mutex_unlock(&usable[first]->mutex), 0);
		atomic_fetch_add_explicit(&child_pairs, 1, memory_order_relaxed);
	}
	return NULL;
}

static int child_main(void)
{
	alarm(20);   /* a deadlocked child dies of SIGALRM, and the parent says so */

	/* The forking thread is itself again: its own tid, its own mutex. */
	CHECK_EQ(pthread_mutex_lock(&main_only), 0);
	CHECK_EQ(api_owner(&main_only), gettid());
	CHECK_EQ(pthread_mutex_lock(&main_only), EDEADLK);
	CHECK_EQ(pthread_mutex_unlock(&main_only), 0);

	collect_usable();
	long before = 0;
	for (int k = 0; k < usable_count; k++) {
		pthread_mutex_t *m = &usable[k]->mutex;
		CHECK_EQ(pthread_mutex_trylock(m), 0);
		CHECK_EQ(api_owner(m), gettid());
		CHECK_EQ(pthread_mutex_unlock(m), 0);
		before += usable[k]->count;
	}
	for (int k = 0; k < usable_count; k++)
		CHECK_EQ(pthread_mutex_lock(&usable[k]->mutex), 0);
	for (int k = usable_count - 1; k >= 0; k--)
		CHECK_EQ(pthread_mutex_unlock(&usable[k]->mutex), 0);

	child_iterations = 3000 / API_SCALE;
	pthread_t threads[CHILD_THREADS];
	for (long t = 0; t < CHILD_THREADS; t++)
		fork_child_thread_create(&threads[t], child_worker, (void *)t);
	for (int t = 0; t < CHILD_THREADS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	long after = 0;
	for (int k = 0; k < usable_count; k++) {
		after += usable[k]->count;
		CHECK_EQ(api_word(&usable[k]->mutex), 0);
	}
	/* Relaxed: the joins above order every thread's updates before this. */
	long pairs = atomic_load_explicit(&child_pairs, memory_order_relaxed);
	CHECK_EQ(after - before, 2 * pairs);
	/* With at least 8 usable mutexes, every iteration takes a pair. */
	CHECK_EQ(pairs, (long)CHILD_THREADS * child_iterations);
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);
	fflush(stdout);
	return check_failures ? 1 : 0;
}

/* --- in the parent --- */

/* Wait for the child for at most 30 s; its stderr is read from err_fd (or -1). */
static void reap(pid_t child, int err_fd, bool want_stats)
{
	char text[8192];
	size_t used = 0;
	int status = 0;
	struct timespec limit = api_deadline_ms(CLOCK_MONOTONIC, 30000);
	for (;;) {
		if (err_fd >= 0) {
			struct pollfd p = { .fd = err_fd, .events = POLLIN };
			if (poll(&p, 1, 5) > 0 && used < sizeof text - 1) {
				ssize_t n = read(err_fd, text + used, sizeof text - 1 - used);
				if (n > 0)
					used += (size_t)n;
			}
		} else {
			struct timespec pause = { 0, 5000000 };
			nanosleep(&pause, NULL);
		}
		pid_t done = waitpid(child, &status, WNOHANG);
		if (done == child)
			break;
		if (api_reached(CLOCK_MONOTONIC, limit)) {
			fprintf(stderr, "child %d hangs; killing it\n", (int)child);
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			break;
		}
	}
	if (err_fd >= 0) {
		ssize_t n;
		while (used < sizeof text - 1 &&
		       (n = read(err_fd, text + used, sizeof text - 1 - used)) > 0)
			used += (size_t)n;
		close(err_fd);
	}
	text[used] = '\0';
	if (used)
		fputs(text, stderr);   /* pass on what the child said */
	CHECK(WIFEXITED(status));
	if (WIFSIGNALED(status))
		fprintf(stderr, "child died of signal %d\n", WTERMSIG(status));
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	if (want_stats)
		CHECK(strstr(text, "cnamutex: stats ") != NULL);
}

int main(int argc, char **argv)
{
	api_start("fork");
	bool want_stats = argc > 1 && strcmp(argv[1], "stats") == 0;
	if (want_stats && !getenv("CNAMUTEX_STATS")) {
		fprintf(stderr, "fork stats: run with CNAMUTEX_STATS=1\n");
		return 2;
	}
	for (int k = 0; k < SET_SIZE; k++) {
		guarded_init(&set_a[k]);
		guarded_init(&set_b[k]);
	}
	CHECK_EQ(pthread_barrier_init(&phase, NULL, WORKERS + 1), 0);
	pthread_t threads[WORKERS];
	for (long t = 0; t < WORKERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, worker, (void *)t), 0);
	pthread_barrier_wait(&phase);
	/* The forking thread has used the shim, so a stale per-thread state
	 * (its tid) would show in the child. */
	CHECK_EQ(pthread_mutex_lock(&main_only), 0);
	CHECK_EQ(pthread_mutex_unlock(&main_only), 0);

	int forks = 0;
	for (int f = 0; f < FORKS; f++) {
		struct timespec pause = { 0, 2000000 };   /* let the workers queue up */
		nanosleep(&pause, NULL);
		int pipe_fds[2] = { -1, -1 };
		if (want_stats)
			CHECK_EQ(pipe(pipe_fds), 0);
		fflush(stdout);
		fflush(stderr);
		pid_t child = fork();
		CHECK(child >= 0);
		if (child == 0) {
			if (want_stats) {
				dup2(pipe_fds[1], STDERR_FILENO);
				close(pipe_fds[0]);
				close(pipe_fds[1]);
			}
			exit(child_main());   /* exit, not _exit: the stats line prints at exit */
		}
		if (want_stats)
			close(pipe_fds[1]);
		if (child > 0) {
			forks++;
			reap(child, pipe_fds[0], want_stats);
		}
		if (check_failures) {
			fprintf(stderr, "fork %d of %d failed\n", f + 1, FORKS);
			break;
		}
	}

	atomic_store_explicit(&stop, true, memory_order_relaxed);
	long total = 0;
	for (int t = 0; t < WORKERS; t++) {
		void *done;
		CHECK_EQ(pthread_join(threads[t], &done), 0);
		total += (long)done;
	}
	long counted = 0;
	for (int k = 0; k < SET_SIZE; k++)
		counted += set_a[k].count;
	CHECK_EQ(counted, total);
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);   /* after the joins */
	pthread_barrier_destroy(&phase);
	printf("fork: %d children, %ld acquisitions in the parent meanwhile\n", forks, total);
	return check_report("fork");
}
