/* tests/hostile/memory_bound.c — many distinct mutexes, each contended once,
 * must leave the shim's memory bounded: the resident set grows by less than
 * a fixed allowance, whatever the number of mutexes.
 *
 *   hostile-memory-bound MUTEXES PAIRS MAX_GROWTH_KIB
 *
 * Each pair is a holder and a waiter thread.  For every mutex of its slice
 * the holder locks it, the waiter calls pthread_mutex_lock and blocks, the
 * holder waits until the mutex word says "contended" (2, glibc's protocol,
 * which the shim keeps) so the waiter really is in the slow path, then
 * unlocks.  The mutex array and the threads exist before the first reading.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "../check.h"

#define MAX_PAIRS 16
#define QUEUED_WAIT_NS 5000000L /* give up waiting for the word after 5 ms */

struct pair {
	pthread_mutex_t *mutexes;
	long count;
	atomic_long offered;  /* holder -> waiter: index now held */
	atomic_long released; /* holder: index it is about to unlock */
	atomic_long finished; /* waiter -> holder: index it acquired and released */
	long seen_queued;     /* holder only */
	pthread_t holder, waiter;
};

static atomic_bool go;

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void wait_for_go(void)
{
	while (!atomic_load_explicit(&go, memory_order_acquire)) /* pairs with main's store */
		sched_yield();
}

/* Spin until the mutex word shows a waiter, or the deadline passes. */
static bool wait_until_queued(pthread_mutex_t *mutex)
{
	long deadline = now_ns() + QUEUED_WAIT_NS;
	for (unsigned spins = 0;; spins++) {
		/* Relaxed: a hint only; exclusion is checked through released. */
		if (__atomic_load_n(&mutex->__data.__lock, __ATOMIC_RELAXED) == 2)
			return true;
		if (spins % 64 == 63 && now_ns() > deadline)
			return false;
		sched_yield();
	}
}

static void *holder(void *arg)
{
	struct pair *p = arg;
	wait_for_go();
	for (long i = 0; i < p->count; i++) {
		pthread_mutex_t *m = &p->mutexes[i];
		CHECK_EQ(pthread_mutex_lock(m), 0);
		atomic_store_explicit(&p->offered, i, memory_order_release); /* pairs with the waiter's load */
		if (wait_until_queued(m))
			p->seen_queued++;
		atomic_store_explicit(&p->released, i, memory_order_relaxed); /* published by the unlock */
		CHECK_EQ(pthread_mutex_unlock(m), 0);
		while (atomic_load_explicit(&p->finished, memory_order_acquire) != i) /* pairs with the waiter's store */
			sched_yield();
	}
	return NULL;
}

static void *waiter(void *arg)
{
	struct pair *p = arg;
	wait_for_go();
	for (long i = 0; i < p->count; i++) {
		while (atomic_load_explicit(&p->offered, memory_order_acquire) != i) /* pairs with the holder's store */
			sched_yield();
		pthread_mutex_t *m = &p->mutexes[i];
		CHECK_EQ(pthread_mutex_lock(m), 0);
		/* The holder let go before we got in. */
		CHECK_EQ(atomic_load_explicit(&p->released, memory_order_relaxed), i);
		CHECK_EQ(pthread_mutex_unlock(m), 0);
		atomic_store_explicit(&p->finished, i, memory_order_release); /* pairs with the holder's load */
	}
	return NULL;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	long mutexes = argc > 1 ? atol(argv[1]) : 100000;
	int pairs = argc > 2 ? atoi(argv[2]) : 4;
	long max_growth_kib = argc > 3 ? atol(argv[3]) : 8192;
	if (mutexes < 1 || pairs < 1 || pairs > MAX_PAIRS || mutexes < pairs) {
		fprintf(stderr, "usage: %s MUTEXES PAIRS(1..%d) MAX_GROWTH_KIB\n", argv[0], MAX_PAIRS);
		return 2;
	}

	pthread_mutex_t *all = malloc((size_t)mutexes * sizeof *all);
	CHECK(all != NULL);
	if (!all)
		return check_report("memory-bound");
	for (long i = 0; i < mutexes; i++)
		CHECK_EQ(pthread_mutex_init(&all[i], NULL), 0);

	static struct pair pair[MAX_PAIRS];
	long slice = mutexes / pairs;
	for (int p = 0; p < pairs; p++) {
		pair[p].mutexes = all + p * slice;
		pair[p].count = p == pairs - 1 ? mutexes - p * slice : slice;
		atomic_init(&pair[p].offered, -1);
		atomic_init(&pair[p].released, -1);
		atomic_init(&pair[p].finished, -1);
		CHECK_EQ(pthread_create(&pair[p].holder, NULL, holder, &pair[p]), 0);
		CHECK_EQ(pthread_create(&pair[p].waiter, NULL, waiter, &pair[p]), 0);
	}

	long before = rss_kib();
	long start = now_ns();
	atomic_store_explicit(&go, true, memory_order_release); /* pairs with wait_for_go */
	long queued = 0;
	for (int p = 0; p < pairs; p++) {
		CHECK_EQ(pthread_join(pair[p].holder, NULL), 0);
		CHECK_EQ(pthread_join(pair[p].waiter, NULL), 0);
		queued += pair[p].seen_queued;
	}
	long after = rss_kib();
	double seconds = (double)(now_ns() - start) / 1e9;

	for (long i = 0; i < mutexes; i++)
		CHECK_EQ(pthread_mutex_destroy(&all[i]), 0);
	free(all);

	long growth = after - before;
	printf("%ld mutexes contended once (%ld seen queued) by %d pairs in %.2f s\n",
	       mutexes, queued, pairs, seconds);
	printf("VmRSS %ld KiB before, %ld KiB after: growth %ld KiB (%.1f bytes per mutex), "
	       "allowed %ld KiB\n", before, after, growth, growth * 1024.0 / (double)mutexes,
	       max_growth_kib);
	CHECK(before > 0);
	CHECK(after > 0);
	CHECK(growth < max_growth_kib);
	/* The test means something only if the waiters really queued. */
	CHECK(queued * 2 >= mutexes);
	return check_report("memory-bound");
}
