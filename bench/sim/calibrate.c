/* bench/sim/calibrate.c — time the real cna_pass_head() on this machine. */
#include "calibrate.h"

#include "cna.h"

#define RING 16

static struct cna_node ring[RING];

static struct cna_node *granted_node(void)
{
	for (unsigned i = 0; i < RING; i++)
		if (atomic_load_explicit(&ring[i].state, memory_order_relaxed) == CNA_HEAD)
			return &ring[i];
	return NULL;
}

/* Mean time of one timed pass and of one timed empty interval, in ns. */
static void measure_once(bool numa_aware, unsigned nodes, unsigned passes,
			 uint64_t *pass_ns, uint64_t *timer_ns)
{
	struct cna_params params = { .numa_aware = numa_aware, .threshold_ns = 10000000u,
				     .shuffle_bits = 7, .spin_budget = 0 };
	struct cna_queue queue;
	atomic_init(&queue.tail, NULL);
	uint32_t prng[RING];
	for (unsigned i = 0; i < RING; i++) {
		ring[i].real_node = (int32_t)(i % (nodes ? nodes : 1));
		ring[i].priority = false;
		prng[i] = 0x2545f491u * (i + 1);
		cna_enqueue(&queue, &ring[i]);
	}
	atomic_store_explicit(&ring[0].state, CNA_HEAD, memory_order_relaxed);

	/* the timer's own cost, to subtract */
	uint64_t empty = 0;
	for (unsigned k = 0; k < passes; k++) {
		uint64_t t0 = cna_now_ns();
		empty += cna_now_ns() - t0;
	}

	uint64_t busy = 0;
	struct cna_node *head = &ring[0];
	for (unsigned k = 0; k < passes && head; k++) {
		struct cna_handoff handoff;
		uint32_t *state = &prng[head - ring];
		uint64_t t0 = cna_now_ns();
		cna_pass_head(&queue, head, &params, state, &handoff);
		busy += cna_now_ns() - t0;
		cna_enqueue(&queue, head);   /* back to the tail: the queue stays full */
		head = granted_node();
	}
	*pass_ns = busy / passes;
	*timer_ns = empty / passes;
}

/*
 * The least of a few means, taken separately for the timed passes and for
 * the timer's own cost: scheduling noise only ever adds time to either, so
 * each minimum is the cleanest, and their difference is not dragged down
 * by a noisy timer measurement.
 */
uint64_t sim_measure_pass_ns(bool numa_aware, unsigned nodes, unsigned passes)
{
	uint64_t best_pass = UINT64_MAX, best_timer = UINT64_MAX;
	for (unsigned k = 0; k < 5; k++) {
		uint64_t pass_ns, timer_ns;
		measure_once(numa_aware, nodes, passes / 5 + 1, &pass_ns, &timer_ns);
		if (pass_ns < best_pass)
			best_pass = pass_ns;
		if (timer_ns < best_timer)
			best_timer = timer_ns;
	}
	return best_pass > best_timer ? best_pass - best_timer : 0;
}
