/* cna/cna.h — the compact NUMA-aware queue (Dice & Kogan, arXiv 1810.05600).
 *
 * An MCS queue whose head alone competes for the protected resource (the
 * caller's lock word).  When the head has won the resource it passes the
 * headship on, preferring a waiter on its own NUMA node; the remote waiters
 * it skips wait in a secondary queue that the head owns and hands on with
 * the headship:
 *
 *   queue->tail ---------------------------------------+
 *                                                      v
 *   primary     [ head ] -> [ w1 ] -> [ w2 ] -> ... -> [ wn ]
 *                  |
 *                  | sec_head                          sec_tail
 *                  +-----> [ r1 ] -> [ r2 ] -> ... -> [ rk ]
 *   secondary   (remote waiters, oldest first; empty iff sec_head == NULL)
 *
 * The secondary queue goes back in front of the primary one when no local
 * waiter is left, or when its oldest waiter has waited (since it joined
 * the queue) longer than the threshold: the local run has then lasted that
 * long while remote waiters wait.  A waiter that has waited longer than the
 * threshold is never moved again, like a priority waiter: it is served in
 * queue order, so on any number of nodes nobody is passed over for much
 * more than one threshold (moved again after a flush, a waiter of the
 * fourth node of four would wait out the runs of the other three, one
 * threshold each).  Priority waiters are never moved; while
 * the secondary queue is empty, reordering is skipped with probability
 * 1 - 2^-shuffle_bits (shuffle reduction) -- until a secondary queue first
 * forms.  From then on every head reorders until the queue is empty (no
 * waiter left in either queue), even while the secondary queue is empty
 * after a flush: queue handoffs can be rare enough (waiters park) that
 * 2^shuffle_bits of them in FIFO order would outlast the threshold itself.
 * A queue that empties while reordering and refills within the threshold
 * is the same bout of contention: its first head reorders at once.
 *
 * Node states (the futex word a waiter parks on):
 *   WAITING --(waiter gives up spinning)--> PARKED, or DORMANT if it would
 *                                          not spin as head either
 *   WAITING, PARKED or DORMANT --(predecessor grants headship)--> HEAD
 * Only the granter moves a node to HEAD; only the owner moves it to PARKED
 * or DORMANT.  The granter wakes a PARKED head, to spin on the resource
 * while the granter still holds it.  A DORMANT head would only go back to
 * sleep on the resource: when the caller names the resource's futex
 * (cna_params.release_futex) the granter moves the head, still asleep, onto
 * it (FUTEX_CMP_REQUEUE), so it wakes once, when the resource is released.
 *
 * This module knows nothing of pthreads or of what the head competes for.
 */
#ifndef CNA_CNA_H
#define CNA_CNA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cna_node_state {
	CNA_WAITING = 0,
	CNA_PARKED = 1,
	CNA_HEAD = 2,
	CNA_DORMANT = 3,
};

struct cna_node {
	_Atomic(struct cna_node *) next;
	_Atomic uint32_t state;        /* enum cna_node_state; futex word */
	int32_t real_node;             /* NUMA node of the waiter, set before enqueue */
	int32_t numa_node;             /* preferred node while head (may be inherited) */
	bool priority;                 /* never moved to the secondary queue */
	/* Owned by the head; written by the granter before the grant. */
	struct cna_node *sec_head;
	struct cna_node *sec_tail;
	uint64_t wait_start_ns;        /* when this waiter joined the queue */
	uint64_t sec_oldest_ns;        /* the earliest wait_start_ns in the secondary queue */
	bool reordering;               /* a secondary queue formed since the queue was empty */
	/* Set by a head that moved this waiter to the secondary queue, when
	 * cna_params.mark_moved asks; read by the waiter once it is head. */
	bool was_moved;
} __attribute__((aligned(64)));

struct cna_queue {
	_Atomic(struct cna_node *) tail;
	/* A head that finds the queue empty before this time reorders at
	 * once (0: never).  A hint, so relaxed: a stale value costs order only. */
	_Atomic uint64_t reorder_until_ns;
};

struct cna_params {
	bool numa_aware;               /* false: plain MCS order */
	uint64_t threshold_ns;         /* longest wait before a waiter is served in order */
	unsigned shuffle_bits;         /* 0..31 */
	unsigned spin_budget;          /* spins before a waiter parks */
	bool park_dormant;             /* a waiter that parks does so DORMANT */
	bool mark_moved;               /* heads set was_moved in the waiters they move */
	/*
	 * Where a DORMANT successor sleeps on after the grant (NULL: it is
	 * woken instead).  The granter stores release_mark there first; the
	 * caller's protocol must make the resource's release wake one waiter
	 * of this futex whenever it holds release_mark, and the granter must
	 * own the resource until cna_pass_head() returns (so the successor
	 * cannot reuse its node before the requeue).  A head that parked
	 * DORMANT may have been woken from that futex, so it must take the
	 * resource as the futex's own waiters do (glibc's word: exchange in 2,
	 * never 0 -> 1, or the others sleeping there lose their wake).
	 */
	_Atomic uint32_t *release_futex;
	uint32_t release_mark;
};

/* What one pass of the headship did, for the caller's statistics. */
struct cna_handoff {
	bool granted;                  /* a waiter became head */
	bool local;                    /* ... on the same real node as the granter */
	bool flushed;                  /* the secondary queue was spliced back */
	bool requeued;                 /* it slept on, moved to release_futex */
	unsigned moved;                /* waiters moved to the secondary queue */
};

/*
 * Join the queue and return once me is its head.  The caller sets
 * me->real_node and me->priority first.  Returns true if it parked.
 */
bool cna_wait_for_head(struct cna_queue *q, struct cna_node *me,
		       const struct cna_params *params);

/* The two halves of cna_wait_for_head(), for callers that must not block
 * (unit tests, the simulator): cna_enqueue() returns true if me is head at
 * once; otherwise cna_wait_granted() waits for the grant. */
bool cna_enqueue(struct cna_queue *q, struct cna_node *me);
bool cna_wait_granted(struct cna_node *me, const struct cna_params *params);

/*
 * Called by the head once it owns the resource: choose the successor, hand
 * it the headship (and the secondary queue), or empty the queue.  After
 * this returns, nobody touches *me on behalf of this queue again, so it may
 * be reused at once.  *prng is the caller's per-thread random state.
 */
void cna_pass_head(struct cna_queue *q, struct cna_node *me,
		   const struct cna_params *params, uint32_t *prng,
		   struct cna_handoff *out);

/* Nobody is queued (a hint: it may change at once). */
static inline bool cna_queue_is_idle(struct cna_queue *q)
{
	return atomic_load_explicit(&q->tail, memory_order_relaxed) == NULL;
}

/* Monotonic clock in nanoseconds. */
uint64_t cna_now_ns(void);

/* Hook for race-window widening in debug builds; a no-op otherwise. */
#ifdef CNA_DEBUG_YIELD
void cna_debug_yield(void);
#define CNA_INJECT() cna_debug_yield()
#else
#define CNA_INJECT() ((void)0)
#endif

#endif
