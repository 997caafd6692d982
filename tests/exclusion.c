/* tests/exclusion.c — mutual exclusion under many threads, for every CNA kind.
 *
 * Usage: exclusion [--expect-violation] KIND [THREADS] [ITERATIONS]
 *   KIND: static normal adaptive errorcheck recursive
 * --expect-violation is for a deliberately broken shim: the run passes only
 * if it saw an overlap or a lost update (a crash or a setup error does not).
 * Each critical section reads a counter, dawdles, and writes it back plus
 * one, and writes a few shared cache lines; an overlap is detected both by
 * an occupancy flag and by lost updates.  Run with more threads than cores.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

#define SHARED_LINES 4

static pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t dynamic_mutex;
static pthread_mutex_t *mutex = &static_mutex;
static int kind = -1;
static long iterations;

static _Atomic int occupancy;
static _Atomic long overlaps;
static long counter;
static struct { long v; char pad[56]; } lines[SHARED_LINES];

static void critical_section(long i)
{
	if (atomic_fetch_add_explicit(&occupancy, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
	long seen = *(volatile long *)&counter;
	for (int k = 0; k < SHARED_LINES; k++)
		lines[k].v += 1;
	if ((i & 63) == 0)
		sched_yield();   /* be preempted inside sometimes */
	*(volatile long *)&counter = seen + 1;
	atomic_fetch_sub_explicit(&occupancy, 1, memory_order_relaxed);
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++) {
		CHECK_EQ(pthread_mutex_lock(mutex), 0);
		if (kind == PTHREAD_MUTEX_RECURSIVE) {
			CHECK_EQ(pthread_mutex_lock(mutex), 0);
			critical_section(i);
			CHECK_EQ(pthread_mutex_unlock(mutex), 0);
		} else {
			critical_section(i);
		}
		CHECK_EQ(pthread_mutex_unlock(mutex), 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	bool expect_violation = argc > 1 && !strcmp(argv[1], "--expect-violation");
	if (expect_violation) {
		argv++;
		argc--;
	}
	const char *name = argc > 1 ? argv[1] : "static";
	int threads = argc > 2 ? atoi(argv[2]) : 16;
	iterations = argc > 3 ? atol(argv[3]) : 20000;

	if (!strcmp(name, "normal"))
		kind = PTHREAD_MUTEX_NORMAL;
	else if (!strcmp(name, "adaptive"))
		kind = PTHREAD_MUTEX_ADAPTIVE_NP;
	else if (!strcmp(name, "errorcheck"))
		kind = PTHREAD_MUTEX_ERRORCHECK;
	else if (!strcmp(name, "recursive"))
		kind = PTHREAD_MUTEX_RECURSIVE;
	else if (strcmp(name, "static") != 0) {
		fprintf(stderr, "unknown kind %s\n", name);
		return 2;
	}
	if (kind >= 0) {
		pthread_mutexattr_t attr;
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_settype(&attr, kind);
		CHECK_EQ(pthread_mutex_init(&dynamic_mutex, &attr), 0);
		pthread_mutexattr_destroy(&attr);
		mutex = &dynamic_mutex;
	}

	pthread_t tids[256];
	if (threads > 256)
		threads = 256;
	for (int t = 0; t < threads; t++)
		CHECK_EQ(pthread_create(&tids[t], NULL, worker, NULL), 0);
	for (int t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);

	long expected = (long)threads * iterations;
	if (expect_violation) {
		long seen = atomic_load(&overlaps);
		/* A failed thread start also leaves the counter short: no catch. */
		bool caught = (seen > 0 || counter != expected) && !check_failures;
		if (caught)
			printf("%s: the broken lock was caught (%ld overlaps, counter %ld of %ld)\n",
			       name, seen, counter, expected);
		else
			fprintf(stderr, "%s: a broken lock went unnoticed\n", name);
		return caught ? 0 : 1;
	}
	CHECK_EQ(atomic_load(&overlaps), 0);
	CHECK_EQ(counter, expected);
	for (int k = 0; k < SHARED_LINES; k++)
		CHECK_EQ(lines[k].v, expected);
	CHECK_EQ(pthread_mutex_destroy(mutex), 0);
	printf("%s: %d threads x %ld iterations, counter %ld\n", name, threads,
	       iterations, counter);
	return check_report("exclusion");
}
