/* tests/unit/cna_order.c — cna_pass_head()'s successor choice on hand-built
 * queues: nodes from two virtual nodes, enqueued in a chosen order without
 * any thread waiting, then one pass of the headship inspected field by field.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"
#include "cna.h"

#define MAX_WAITERS 8
#define FAR_FUTURE_NS (UINT64_C(1) << 62)

/* One scene: a queue, its head and waiters named by letters in the checks. */
struct scene {
	struct cna_queue queue;
	struct cna_node head;
	struct cna_node waiter[MAX_WAITERS];
	struct cna_params params;
	uint32_t prng;
	struct cna_handoff out;
};

static struct scene scene;
static struct cna_node secondary[MAX_WAITERS];

static const struct cna_params reorder_always = {
	.numa_aware = true,
	.threshold_ns = FAR_FUTURE_NS,
	.shuffle_bits = 0,
	.spin_budget = 0,
};

/* A fresh queue with a head on head_node and waiters on the given nodes
 * (a negative node -n-1 marks a priority waiter on node n). */
static void build(int head_node, int count, ...)
{
	memset(&scene, 0, sizeof scene);
	memset(secondary, 0, sizeof secondary);
	scene.params = reorder_always;
	scene.prng = 12345;
	scene.head.real_node = head_node;
	CHECK(cna_enqueue(&scene.queue, &scene.head));

	va_list nodes;
	va_start(nodes, count);
	for (int i = 0; i < count; i++) {
		int node = va_arg(nodes, int);
		struct cna_node *w = &scene.waiter[i];
		w->priority = node < 0;
		w->real_node = node < 0 ? -node - 1 : node;
		CHECK(!cna_enqueue(&scene.queue, w));
	}
	va_end(nodes);
}

#define PRIORITY_ON(node) (-(node) - 1)

/* Give the head a secondary queue of hand-linked remote nodes (not enqueued
 * through the queue: they were moved there by an earlier head). */

static void give_secondary(int count, int node, uint64_t run_start_ns)
{
	memset(secondary, 0, sizeof secondary);
	for (int i = 0; i < count; i++) {
		secondary[i].real_node = node;
		secondary[i].numa_node = node;
		atomic_store_explicit(&secondary[i].next, i + 1 < count ? &secondary[i + 1] : NULL,
				      memory_order_relaxed);
	}
	scene.head.sec_head = &secondary[0];
	scene.head.sec_tail = &secondary[count - 1];
	scene.head.sec_oldest_ns = run_start_ns;
}

static void pass_from(struct cna_node *head)
{
	cna_pass_head(&scene.queue, head, &scene.params, &scene.prng, &scene.out);
}

static void pass(void)
{
	pass_from(&scene.head);
}

static struct cna_node *next_of(struct cna_node *n)
{
	return atomic_load_explicit(&n->next, memory_order_relaxed);
}

static uint32_t state_of(struct cna_node *n)
{
	return atomic_load_explicit(&n->state, memory_order_relaxed);
}

static struct cna_node *queue_tail(void)
{
	return atomic_load_explicit(&scene.queue.tail, memory_order_relaxed);
}

/* Exactly one node holds the headship after a grant: succ. */
static void check_only_head(const struct cna_node *succ)
{
	for (int i = 0; i < MAX_WAITERS; i++) {
		bool is_succ = &scene.waiter[i] == succ;
		CHECK_EQ(state_of(&scene.waiter[i]) == CNA_HEAD, is_succ);
		bool sec_succ = &secondary[i] == succ;
		CHECK_EQ(state_of(&secondary[i]) == CNA_HEAD, sec_succ);
	}
}

/* A list from first, following ->next, equals the given nodes and ends there. */
static void check_list(struct cna_node *first, int count, ...)
{
	va_list nodes;
	va_start(nodes, count);
	struct cna_node *n = first;
	for (int i = 0; i < count; i++) {
		struct cna_node *want = va_arg(nodes, struct cna_node *);
		CHECK(n == want);
		if (!n)
			break;
		n = next_of(n);
	}
	va_end(nodes);
	CHECK(n == NULL);
}

#define W(i) (&scene.waiter[i])
#define S(i) (&secondary[i])

static void next_is_local(void)
{
	build(0, 2, 0, 1);
	pass();
	CHECK(scene.out.granted);
	CHECK(scene.out.local);
	CHECK(!scene.out.flushed);
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == NULL);
	CHECK_EQ(W(0)->numa_node, 0);
	check_list(W(0), 2, W(0), W(1));
	CHECK(queue_tail() == W(1));
}

static void remote_run_moves_to_secondary(void)
{
	build(0, 4, 1, 1, 0, 1);
	pass();
	CHECK(scene.out.granted);
	CHECK(scene.out.local);
	CHECK(!scene.out.flushed);
	CHECK_EQ(scene.out.moved, 2);
	check_only_head(W(2));
	CHECK_EQ(W(2)->numa_node, 0);
	/* secondary: the skipped run, oldest first; primary goes on after the successor */
	CHECK(W(2)->sec_head == W(0));
	CHECK(W(2)->sec_tail == W(1));
	check_list(W(2)->sec_head, 2, W(0), W(1));
	check_list(W(2), 2, W(2), W(3));
	CHECK_EQ(W(2)->sec_oldest_ns, W(0)->wait_start_ns);
	CHECK(queue_tail() == W(3));
}

/* With mark_moved, exactly the waiters moved aside are marked, over two
 * moves; without it nobody is (the default costs no extra writes). */
static void moved_waiters_are_marked(void)
{
	build(0, 6, 1, 1, 0, 1, 0, 0);
	scene.params.mark_moved = true;
	pass();                     /* W0 W1 move, W2 is head */
	CHECK_EQ(scene.out.moved, 2);
	pass_from(W(2));            /* W3 moves, W4 is head */
	CHECK_EQ(scene.out.moved, 1);
	CHECK_EQ(state_of(W(4)), CNA_HEAD);
	const bool want[6] = { true, true, false, true, false, false };
	for (int i = 0; i < 6; i++)
		CHECK_EQ(W(i)->was_moved, want[i]);
	CHECK(!scene.head.was_moved);

	build(0, 4, 1, 1, 0, 1);
	pass();
	CHECK_EQ(scene.out.moved, 2);
	for (int i = 0; i < 4; i++)
		CHECK(!W(i)->was_moved);

	/* No preferred waiter: a stand-in takes over and nothing is moved or
	 * marked, though the search walked over every waiter. */
	build(0, 3, 1, 1, 1);
	scene.params.mark_moved = true;
	pass();
	CHECK_EQ(scene.out.moved, 0);
	CHECK_EQ(state_of(W(0)), CNA_HEAD);
	for (int i = 0; i < 3; i++)
		CHECK(!W(i)->was_moved);

	/* A node enqueued again starts unmarked. */
	build(0, 1, 1);
	scene.waiter[0].was_moved = true;
	memset(&scene.queue, 0, sizeof scene.queue);
	CHECK(cna_enqueue(&scene.queue, W(0)));
	CHECK(!W(0)->was_moved);
}

/* A later move appends to the existing secondary queue; the queue's oldest
 * wait start stays the earliest of its waiters'. */
static void moves_append_to_secondary(void)
{
	build(0, 3, 1, 0, 0);
	uint64_t start = W(0)->wait_start_ns - 1;   /* older than the waiter moved */
	give_secondary(2, 1, start);
	pass();
	CHECK_EQ(scene.out.moved, 1);
	CHECK(!scene.out.flushed);
	check_only_head(W(1));
	check_list(W(1)->sec_head, 3, S(0), S(1), W(0));
	CHECK(W(1)->sec_tail == W(0));
	CHECK_EQ(W(1)->sec_oldest_ns, start);
	check_list(W(1), 2, W(1), W(2));

	/* The waiter moved now waited longer than the secondary queue's oldest. */
	build(0, 3, 1, 0, 0);
	give_secondary(2, 1, W(0)->wait_start_ns + 1);
	pass();
	CHECK_EQ(scene.out.moved, 1);
	CHECK_EQ(W(1)->sec_oldest_ns, W(0)->wait_start_ns);
}

/* The secondary queue's oldest wait start is the earliest of the waiters
 * moved, not the first one's: a waiter put back in front by a flush can
 * queue behind a younger one. */
static void oldest_wait_start_is_tracked(void)
{
	build(0, 3, 1, 1, 0);
	W(1)->wait_start_ns = W(0)->wait_start_ns - 1000;
	pass();
	CHECK_EQ(scene.out.moved, 2);
	check_only_head(W(2));
	CHECK_EQ(W(2)->sec_oldest_ns, W(1)->wait_start_ns);
}

/*
 * A waiter that has waited longer than the threshold is served in queue
 * order, whatever its node: the head does not move it, it becomes the
 * successor and inherits the preference (so the waiters of the preferred
 * node behind it keep theirs).  One that has not is moved as usual.
 */
static void waiter_past_threshold_is_not_moved(void)
{
	const uint64_t threshold = UINT64_C(1000000000);   /* 1 s */
	build(0, 3, 1, 1, 0);
	scene.params.threshold_ns = threshold;
	uint64_t now = cna_now_ns();
	W(1)->wait_start_ns = now - 2 * threshold;
	pass();
	CHECK_EQ(scene.out.moved, 1);      /* W0 only: it has not waited so long */
	check_only_head(W(1));
	CHECK(!scene.out.local);
	CHECK_EQ(W(1)->numa_node, 0);      /* the preference carries on */
	check_list(W(1)->sec_head, 1, W(0));
	check_list(W(1), 2, W(1), W(2));

	/* At the head of the queue: granted at once, nothing moved. */
	build(0, 2, 1, 0);
	scene.params.threshold_ns = threshold;
	W(0)->wait_start_ns = cna_now_ns() - 2 * threshold;
	pass();
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == NULL);

	/* Below the threshold the same queue is reordered. */
	build(0, 2, 1, 0);
	scene.params.threshold_ns = threshold;
	pass();
	CHECK_EQ(scene.out.moved, 1);
	check_only_head(W(1));
}

/* cna_enqueue() stamps the waiter's wait start from the clock. */
static void enqueue_stamps_wait_start(void)
{
	uint64_t before = cna_now_ns();
	build(0, 1, 1);
	uint64_t after = cna_now_ns();
	CHECK(W(0)->wait_start_ns >= before && W(0)->wait_start_ns <= after);
	CHECK(scene.head.wait_start_ns >= before && scene.head.wait_start_ns <= after);
}

/* The successor inherits the head's preferred node, not its own. */
static void successor_inherits_preference(void)
{
	build(1, 2, 0, 0);
	scene.head.numa_node = 0;   /* a stand-in head filtering for node 0 */
	pass();
	check_only_head(W(0));
	CHECK(!scene.out.local);    /* real nodes differ: 1 -> 0 */
	CHECK_EQ(W(0)->numa_node, 0);
}

/*
 * No preferred waiter in the primary queue, secondary non-empty: the next
 * waiter becomes head as a stand-in that keeps the secondary queue and the
 * preference (as the kernel's CNA does); the secondary queue comes back on
 * the threshold or when the primary queue empties.
 */
static void no_local_keeps_secondary_with_stand_in(void)
{
	build(0, 2, 1, 1);
	uint64_t start = cna_now_ns();
	give_secondary(2, 1, start);
	pass();
	CHECK(scene.out.granted);
	CHECK(!scene.out.local);
	CHECK(!scene.out.flushed);
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == S(0));
	CHECK(W(0)->sec_tail == S(1));
	check_list(W(0)->sec_head, 2, S(0), S(1));
	CHECK_EQ(W(0)->numa_node, 0);
	CHECK_EQ(W(0)->sec_oldest_ns, start);
	check_list(W(0), 2, W(0), W(1));
}

/* No preferred waiter, secondary empty: the next waiter, nothing moved. */
static void no_local_no_secondary_takes_next(void)
{
	build(0, 3, 1, 1, 1);
	pass();
	CHECK(scene.out.granted);
	CHECK(!scene.out.local);
	CHECK(!scene.out.flushed);
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == NULL);
	check_list(W(0), 3, W(0), W(1), W(2));
	CHECK(queue_tail() == W(2));
}

/* A priority waiter on the other node is chosen as if local, never moved. */
static void priority_waiter_is_chosen(void)
{
	build(0, 3, 1, PRIORITY_ON(1), 0);
	pass();
	CHECK_EQ(scene.out.moved, 1);
	check_only_head(W(1));
	CHECK(!scene.out.local);
	CHECK_EQ(W(1)->numa_node, 0);
	check_list(W(1)->sec_head, 1, W(0));
	check_list(W(1), 2, W(1), W(2));

	build(0, 2, PRIORITY_ON(1), 0);
	pass();
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == NULL);
}

/* The primary tail is never moved: a local tail behind remote waiters is the
 * successor with the run moved before it; a remote tail stays in place. */
static void primary_tail_never_moved(void)
{
	build(0, 3, 1, 1, 0);
	pass();
	check_only_head(W(2));
	CHECK_EQ(scene.out.moved, 2);
	check_list(W(2)->sec_head, 2, W(0), W(1));
	CHECK(queue_tail() == W(2));
	CHECK(next_of(W(2)) == NULL);

	build(0, 2, 1, 1);
	pass();
	CHECK_EQ(scene.out.moved, 0);
	CHECK(queue_tail() == W(1));
	check_list(W(0), 2, W(0), W(1));
}

/* The secondary queue's oldest waiter has waited past the threshold: the
 * secondary queue goes in front of the primary one and its first waiter is
 * the successor. */
static void threshold_flushes(void)
{
	build(0, 2, 0, 1);
	give_secondary(3, 1, 1);
	scene.params.threshold_ns = 1;
	pass();
	CHECK(scene.out.granted);
	CHECK(scene.out.flushed);
	CHECK(!scene.out.local);
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(S(0));
	CHECK(S(0)->sec_head == NULL);
	CHECK(S(0)->sec_tail == NULL);
	CHECK_EQ(S(0)->numa_node, 1);
	check_list(S(0), 5, S(0), S(1), S(2), W(0), W(1));
	CHECK(queue_tail() == W(1));

	/* threshold 0 flushes at once too */
	build(0, 1, 0);
	give_secondary(1, 1, cna_now_ns());
	scene.params.threshold_ns = 0;
	uint64_t before = cna_now_ns();
	while (cna_now_ns() == before)
		;
	pass();
	CHECK(scene.out.flushed);
	check_only_head(S(0));
	check_list(S(0), 2, S(0), W(0));
}

/* Below the threshold a local waiter is still preferred over the secondary. */
static void below_threshold_keeps_local(void)
{
	build(0, 1, 0);
	give_secondary(1, 1, cna_now_ns());
	pass();
	CHECK(!scene.out.flushed);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == S(0));
}

/* Nobody in the primary queue: the secondary queue becomes the queue. */
static void empty_primary_promotes_secondary(void)
{
	build(0, 0);
	give_secondary(3, 1, cna_now_ns());
	pass();
	CHECK(scene.out.granted);
	CHECK(scene.out.flushed);
	CHECK(!scene.out.local);
	check_only_head(S(0));
	CHECK(queue_tail() == S(2));
	CHECK(S(0)->sec_head == NULL);
	CHECK_EQ(S(0)->numa_node, 1);
	check_list(S(0), 3, S(0), S(1), S(2));
}

static void empty_everything_empties_queue(void)
{
	build(0, 0);
	pass();
	CHECK(!scene.out.granted);
	CHECK(!scene.out.flushed);
	CHECK(queue_tail() == NULL);
	check_only_head(NULL);
}

/* NUMA-blind: plain FIFO whatever the nodes. */
static void fifo_when_not_numa_aware(void)
{
	build(0, 3, 1, 0, 1);
	scene.params.numa_aware = false;
	pass();
	CHECK(scene.out.granted);
	CHECK(!scene.out.local);
	CHECK_EQ(scene.out.moved, 0);
	check_only_head(W(0));
	CHECK(W(0)->sec_head == NULL);
	CHECK_EQ(W(0)->numa_node, 1);
	check_list(W(0), 3, W(0), W(1), W(2));
}

/* How many of trials passes on head(0), remote, local reorder the queue. */
static int reorders(unsigned shuffle_bits, int trials)
{
	uint32_t prng = 0x2545f491u;
	int moved = 0;
	for (int t = 0; t < trials; t++) {
		build(0, 2, 1, 0);
		scene.params.shuffle_bits = shuffle_bits;
		cna_pass_head(&scene.queue, &scene.head, &scene.params, &prng, &scene.out);
		bool reordered = state_of(W(1)) == CNA_HEAD;
		CHECK_EQ(reordered, scene.out.moved == 1);
		moved += reordered;
	}
	return moved;
}

/* With the secondary queue empty, reordering happens with probability 2^-bits. */
static void shuffle_reduction(void)
{
	enum { TRIALS = 4000 };
	CHECK_EQ(reorders(0, TRIALS), TRIALS);
	int half = reorders(1, TRIALS);
	CHECK(half > TRIALS / 4 && half < TRIALS * 3 / 4);
	CHECK(reorders(31, TRIALS) <= 1);

	/* A non-empty secondary queue always reorders, whatever the bits. */
	build(0, 2, 1, 0);
	give_secondary(1, 1, cna_now_ns());
	scene.params.shuffle_bits = 31;
	pass();
	CHECK_EQ(scene.out.moved, 1);
	check_only_head(W(1));
}

/* Once a secondary queue has formed, the heads reorder at every handoff,
 * whatever the shuffle bits, through flushes, until the queue is empty,
 * and in a queue refilled within the threshold after that. */
static void reordering_lasts_until_queue_empty(void)
{
	/* A move sets it (bits 0: the first head reorders for sure). */
	build(0, 2, 1, 0);
	CHECK(!scene.head.reordering);
	pass();
	CHECK_EQ(scene.out.moved, 1);
	CHECK(W(1)->reordering);

	/* A threshold flush keeps it. */
	build(0, 2, 0, 1);
	give_secondary(1, 1, 1);
	scene.head.reordering = true;
	scene.params.threshold_ns = 1;
	scene.params.shuffle_bits = 31;
	pass();
	CHECK(scene.out.flushed);
	check_only_head(S(0));
	CHECK(S(0)->reordering);
	check_list(S(0), 3, S(0), W(0), W(1));

	/* S(0), node 1, secondary empty: reorders although 2^-31 says not. */
	scene.params.threshold_ns = FAR_FUTURE_NS;
	pass_from(S(0));
	CHECK(scene.out.granted);
	CHECK(scene.out.local);
	CHECK_EQ(scene.out.moved, 1);
	CHECK_EQ(state_of(W(1)), CNA_HEAD);
	CHECK_EQ(state_of(W(0)), CNA_WAITING);
	CHECK(W(1)->sec_head == W(0));
	CHECK(W(1)->reordering);

	/* W(1) is the primary tail: the primary drains, W(0) comes back from
	 * the secondary queue; the queue is not empty, so it stays on. */
	pass_from(W(1));
	CHECK(scene.out.granted);
	CHECK(scene.out.flushed);
	CHECK_EQ(state_of(W(0)), CNA_HEAD);
	CHECK(W(0)->sec_head == NULL);
	CHECK(W(0)->reordering);
	CHECK(queue_tail() == W(0));

	/* W(0) leaves an empty queue; refilled within the threshold, the new
	 * head reorders at once. */
	pass_from(W(0));
	CHECK(!scene.out.granted);
	CHECK(queue_tail() == NULL);
	CHECK(cna_enqueue(&scene.queue, W(2)));
	CHECK(W(2)->reordering);

	/* W(2) empties it with a 1 ns threshold: the next queue, refilled
	 * later than that, starts with shuffle reduction again. */
	scene.params.threshold_ns = 1;
	pass_from(W(2));
	CHECK(!scene.out.granted);
	uint64_t until = atomic_load_explicit(&scene.queue.reorder_until_ns,
					      memory_order_relaxed);
	while (cna_now_ns() < until)
		;
	CHECK(cna_enqueue(&scene.queue, W(3)));
	CHECK(!W(3)->reordering);

	/* ... and one that empties without reordering leaves no window. */
	scene.params.threshold_ns = FAR_FUTURE_NS;
	pass_from(W(3));
	CHECK(cna_enqueue(&scene.queue, W(4)));
	CHECK(!W(4)->reordering);
}

/* A queue that never reordered leaves no window for the next one. */
static void no_window_without_reordering(void)
{
	build(0, 1, 0);
	pass();
	pass_from(W(0));
	CHECK(queue_tail() == NULL);
	CHECK_EQ(atomic_load_explicit(&scene.queue.reorder_until_ns, memory_order_relaxed), 0);
}

/* The grant of a DORMANT successor marks the granter's resource futex
 * before moving the sleeper there; a PARKED one is woken and leaves it
 * alone.  (Nobody sleeps here, so the requeue itself moves nothing.) */
static void dormant_successor_marks_release_futex(void)
{
	static const uint32_t held = 1, sleepers = 2;
	_Atomic uint32_t resource;
	for (int dormant = 0; dormant <= 1; dormant++) {
		build(0, 1, 0);
		atomic_store_explicit(&W(0)->state, dormant ? CNA_DORMANT : CNA_PARKED,
				      memory_order_relaxed);
		atomic_store_explicit(&resource, held, memory_order_relaxed);
		scene.params.release_futex = &resource;
		scene.params.release_mark = sleepers;
		pass();
		CHECK_EQ(state_of(W(0)), CNA_HEAD);
		CHECK(scene.out.granted);
		CHECK(!scene.out.requeued);
		CHECK_EQ(atomic_load_explicit(&resource, memory_order_relaxed),
			 dormant ? sleepers : held);
	}
	/* Without a release futex a DORMANT successor is simply woken. */
	build(0, 1, 0);
	atomic_store_explicit(&W(0)->state, CNA_DORMANT, memory_order_relaxed);
	pass();
	CHECK_EQ(state_of(W(0)), CNA_HEAD);
	CHECK(!scene.out.requeued);
}

int main(void)
{
	next_is_local();
	remote_run_moves_to_secondary();
	moved_waiters_are_marked();
	moves_append_to_secondary();
	oldest_wait_start_is_tracked();
	waiter_past_threshold_is_not_moved();
	enqueue_stamps_wait_start();
	successor_inherits_preference();
	no_local_keeps_secondary_with_stand_in();
	no_local_no_secondary_takes_next();
	priority_waiter_is_chosen();
	primary_tail_never_moved();
	threshold_flushes();
	below_threshold_keeps_local();
	empty_primary_promotes_secondary();
	empty_everything_empties_queue();
	fifo_when_not_numa_aware();
	shuffle_reduction();
	reordering_lasts_until_queue_empty();
	no_window_without_reordering();
	dormant_successor_marks_release_futex();
	return check_report("cna-order");
}
