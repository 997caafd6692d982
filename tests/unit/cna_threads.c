/* tests/unit/cna_threads.c — the CNA queue on its own as a lock: the head
 * runs the critical section, then passes the headship on.  Many threads on
 * few cores, a tiny spin budget so waiters park, a plain counter that only
 * exclusion keeps exact.
 *
 *   unit-cna-threads numa|fifo THREADS ITERATIONS
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "cna.h"

#define MAX_THREADS 64

static struct cna_queue queue;
static struct cna_params params = {
	.threshold_ns = 1000000,      /* 1 ms */
	.shuffle_bits = 0,
	.spin_budget = 4,
};
static long iterations;

static unsigned long counter;          /* plain: only the lock protects it */
static _Atomic int inside;             /* owners in the critical section now */
static _Atomic int overlaps;
static _Atomic bool start;

struct worker {
	pthread_t thread;
	struct cna_node node;
	int index;
	long done;
	unsigned long parks, local, remote, moved, flushes;
};

static struct worker workers[MAX_THREADS];

static void *work(void *arg)
{
	struct worker *w = arg;
	uint32_t prng = (uint32_t)w->index * 2654435761u | 1u;
	while (!atomic_load_explicit(&start, memory_order_relaxed))
		sched_yield();
	for (long i = 0; i < iterations; i++) {
		w->node.real_node = w->index % 2;
		w->node.priority = w->index == 0;   /* one priority waiter */
		w->parks += cna_wait_for_head(&queue, &w->node, &params);

		if (atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed) != 0)
			atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
		counter++;
		if (i % 16 == 0)
			sched_yield();   /* let the others queue up behind the owner */
		atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);

		struct cna_handoff out;
		cna_pass_head(&queue, &w->node, &params, &prng, &out);
		if (out.granted)
			(*(out.local ? &w->local : &w->remote))++;
		w->moved += out.moved;
		w->flushes += out.flushed;
		w->done++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s numa|fifo THREADS ITERATIONS\n", argv[0]);
		return 2;
	}
	params.numa_aware = !strcmp(argv[1], "numa");
	int threads = atoi(argv[2]);
	iterations = atol(argv[3]);
	if (threads < 2 || threads > MAX_THREADS || iterations < 1)
		return 2;

	for (int i = 0; i < threads; i++) {
		workers[i].index = i;
		CHECK_EQ(pthread_create(&workers[i].thread, NULL, work, &workers[i]), 0);
	}
	atomic_store_explicit(&start, true, memory_order_relaxed);
	unsigned long parks = 0, local = 0, remote = 0, moved = 0, flushes = 0;
	for (int i = 0; i < threads; i++) {
		CHECK_EQ(pthread_join(workers[i].thread, NULL), 0);
		CHECK_EQ(workers[i].done, iterations);
		parks += workers[i].parks;
		local += workers[i].local;
		remote += workers[i].remote;
		moved += workers[i].moved;
		flushes += workers[i].flushes;
	}
	CHECK_EQ(counter, (unsigned long)threads * (unsigned long)iterations);
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);   /* after join */
	CHECK(cna_queue_is_idle(&queue));
	CHECK(parks > 0);
	/* Every grant but the first headship of each idle period is a handoff. */
	CHECK(local + remote < (unsigned long)threads * (unsigned long)iterations);
	if (params.numa_aware) {
		/* Full queues from two nodes and no shuffle reduction: CNA reorders. */
		CHECK(moved > 0);
		CHECK(local > remote);
	} else {
		CHECK_EQ(moved + flushes, 0);
	}
	printf("%d threads x %ld: parks=%lu handoffs local=%lu remote=%lu moved=%lu flushes=%lu\n",
	       threads, iterations, parks, local, remote, moved, flushes);
	return check_report("cna-threads");
}
