/* tests/unit/colliding.c — 4,096 mutexes under the shim, locked in pairs in
 * address order by threads choosing random pairs.  Address order rules out
 * deadlock between the mutexes themselves, so the run can only hang if two
 * mutexes were coupled (say, by sharing a queue record in the table).  A
 * counter per mutex, updated only under it, proves exclusion.
 *
 *   unit-colliding THREADS PAIRS_PER_THREAD
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"

#define MUTEXES 4096
#define HOT 16          /* half the pairs come from these: real contention */
#define MAX_THREADS 64

static pthread_mutex_t mutexes[MUTEXES];
static unsigned long guarded[MUTEXES];   /* changed only with its mutex held */
static long pairs_per_thread;

struct worker {
	pthread_t thread;
	uint32_t prng;
	unsigned long *taken;   /* per-mutex tally of this thread's acquisitions */
};

static uint32_t next_random(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static unsigned pick(uint32_t *prng, bool hot)
{
	return next_random(prng) % (hot ? HOT : MUTEXES);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	for (long i = 0; i < pairs_per_thread; i++) {
		bool hot = next_random(&w->prng) & 1;
		unsigned a = pick(&w->prng, hot), b = pick(&w->prng, hot);
		if (a == b)
			b = (b + 1) % MUTEXES;
		unsigned lo = a < b ? a : b, hi = a < b ? b : a;   /* array order is address order */

		CHECK_EQ(pthread_mutex_lock(&mutexes[lo]), 0);
		CHECK_EQ(pthread_mutex_lock(&mutexes[hi]), 0);
		guarded[lo]++;
		guarded[hi]++;
		if (i % 64 == 0)
			sched_yield();   /* owners preempted while holding: queues form */
		CHECK_EQ(pthread_mutex_unlock(&mutexes[hi]), 0);
		CHECK_EQ(pthread_mutex_unlock(&mutexes[lo]), 0);
		w->taken[lo]++;
		w->taken[hi]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	if (argc != 3)
		return 2;
	int threads = atoi(argv[1]);
	pairs_per_thread = atol(argv[2]);
	if (threads < 1 || threads > MAX_THREADS || pairs_per_thread < 1)
		return 2;

	for (unsigned i = 0; i < MUTEXES; i++)
		CHECK_EQ(pthread_mutex_init(&mutexes[i], NULL), 0);
	struct worker workers[MAX_THREADS];
	for (int t = 0; t < threads; t++) {
		workers[t].prng = 0x9e3779b9u * (uint32_t)(t + 1);
		workers[t].taken = calloc(MUTEXES, sizeof *workers[t].taken);
		CHECK(workers[t].taken != NULL);
		if (!workers[t].taken)
			return 1;
		CHECK_EQ(pthread_create(&workers[t].thread, NULL, work, &workers[t]), 0);
	}
	for (int t = 0; t < threads; t++)
		CHECK_EQ(pthread_join(workers[t].thread, NULL), 0);

	unsigned long total = 0;
	for (unsigned i = 0; i < MUTEXES; i++) {
		unsigned long expected = 0;
		for (int t = 0; t < threads; t++)
			expected += workers[t].taken[i];
		CHECK_EQ(guarded[i], expected);
		total += guarded[i];
		CHECK_EQ(pthread_mutex_destroy(&mutexes[i]), 0);
	}
	CHECK_EQ(total, 2ul * (unsigned long)threads * (unsigned long)pairs_per_thread);
	for (int t = 0; t < threads; t++)
		free(workers[t].taken);
	return check_report("colliding");
}
