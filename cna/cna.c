/* cna/cna.c — queue operations of the compact NUMA-aware lock.
 * The queue diagram and node states are in cna.h.
 */
#include "cna.h"

#include <stddef.h>

#include "futex.h"

/* Spins on a predecessor's half-finished enqueue before yielding the CPU. */
#define LINK_SPINS_BEFORE_YIELD 256

uint64_t cna_now_ns(void)
{
	return platform_now_ns();
}

/* xorshift32: cheap, per thread, good enough to thin out reordering. */
static uint32_t prng_next(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* True with probability 1 - 2^-bits (never true for bits == 0). */
static bool probably(uint32_t *prng, unsigned bits)
{
	uint32_t mask = bits >= 32 ? UINT32_MAX : (1u << bits) - 1u;
	return (prng_next(prng) & mask) != 0;
}

/* WAITING -> HEAD (spinning) or WAITING -> PARKED/DORMANT -> HEAD (parked). */
static bool wait_for_grant(struct cna_node *me, const struct cna_params *params)
{
	/* Only grant() changes a WAITING node's state, to HEAD.  Acquire (in
	 * the spin): pairs with the release exchange in grant(). */
	if (platform_spin_while(&me->state, CNA_WAITING, params->spin_budget) == CNA_HEAD)
		return false;

	CNA_INJECT();
	uint32_t state = CNA_WAITING;
	uint32_t sleeping = params->park_dormant ? CNA_DORMANT : CNA_PARKED;
	bool parked = false;
	/* Acquire on failure: the state is then HEAD, pairs with grant()'s exchange. */
	if (atomic_compare_exchange_strong_explicit(&me->state, &state, sleeping,
						    memory_order_acquire,
						    memory_order_acquire)) {
		parked = true;
		state = sleeping;
	}
	while (state != CNA_HEAD) {
		/* A DORMANT node may be woken here from the release futex. */
		futex_wait_private(&me->state, sleeping);
		/* Acquire: pairs with the release exchange in grant(). */
		state = atomic_load_explicit(&me->state, memory_order_acquire);
	}
	return parked;
}

/*
 * WAITING/PARKED/DORMANT -> HEAD.  The granter's last touch of succ is the
 * wake: once the exchange is done succ may run, return and reuse its node,
 * so a late wake can land on a node that waits for something else; every
 * wait re-checks its state, so that wake is only spurious.  A requeue is
 * different (it would move a sleeper off a node it waits on again), so it
 * relies on the caller's promise that succ cannot finish before this
 * granter releases the resource.  If the DORMANT successor has not gone to
 * sleep yet, the requeue moves nothing and it sees HEAD at once.
 */
static bool grant(struct cna_node *succ, const struct cna_params *params)
{
	CNA_INJECT();
	/* Release: publishes the secondary queue written into succ; pairs with
	 * the acquire loads in wait_for_grant(). */
	uint32_t old = atomic_exchange_explicit(&succ->state, CNA_HEAD,
						memory_order_release);
	if (old == CNA_DORMANT && params->release_futex) {
		/* Relaxed: the granter owns the resource, and only its own
		 * release reads the mark to decide on the wake. */
		atomic_store_explicit(params->release_futex, params->release_mark,
				      memory_order_relaxed);
		CNA_INJECT();
		return futex_requeue_one_private(&succ->state, CNA_HEAD,
						 params->release_futex);
	}
	if (old == CNA_PARKED || old == CNA_DORMANT)
		futex_wake_private(&succ->state, 1);
	return false;
}

bool cna_enqueue(struct cna_queue *q, struct cna_node *me)
{
	atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&me->state, CNA_WAITING, memory_order_relaxed);
	me->numa_node = me->real_node;
	me->sec_head = NULL;
	me->sec_tail = NULL;
	me->sec_oldest_ns = 0;
	me->reordering = false;
	me->was_moved = false;
	/* Before the exchange below publishes the node to the heads that
	 * read it (prefers()). */
	uint64_t now = cna_now_ns();
	me->wait_start_ns = now;

	CNA_INJECT();
	/* tail: X -> me.  Release publishes the initialised node to the next
	 * enqueuer, acquire sees the previous owner of the tail (pairs with
	 * this same exchange by others and with the CAS in cna_pass_head()). */
	struct cna_node *prev = atomic_exchange_explicit(&q->tail, me,
							 memory_order_acq_rel);
	if (!prev) {
		/* Empty queue: head at once; the last bout's reordering may
		 * carry over (written before the CAS that emptied the queue). */
		uint64_t until = atomic_load_explicit(&q->reorder_until_ns,
						      memory_order_relaxed);
		me->reordering = until && now < until;
		return true;
	}

	CNA_INJECT();
	/* Release: pairs with the acquire loads of ->next in cna_pass_head(). */
	atomic_store_explicit(&prev->next, me, memory_order_release);
	return false;
}

bool cna_wait_granted(struct cna_node *me, const struct cna_params *params)
{
	return wait_for_grant(me, params);
}

bool cna_wait_for_head(struct cna_queue *q, struct cna_node *me,
		       const struct cna_params *params)
{
	if (cna_enqueue(q, me))
		return false;
	return wait_for_grant(me, params);
}

/* The enqueuer that replaced us as tail has not linked itself yet. */
static struct cna_node *wait_for_next(struct cna_node *me)
{
	struct cna_node *next;
	unsigned spins = 0;
	/* Acquire: pairs with the release store of prev->next in cna_enqueue(). */
	while (!(next = atomic_load_explicit(&me->next, memory_order_acquire))) {
		if (++spins < LINK_SPINS_BEFORE_YIELD)
			cpu_relax();
		else
			platform_yield();  /* the enqueuer may be preempted */
	}
	return next;
}

/* The succession a head decides on, written into the successor by grant_with(). */
struct succession {
	struct cna_node *succ;
	struct cna_node *sec_head, *sec_tail;
	uint64_t sec_oldest_ns;
	int32_t preferred_node;
	bool reordering;
	uint64_t now_ns;               /* read once per pass, when first needed (0: not yet) */
};

static uint64_t pass_now(struct succession *s)
{
	if (!s->now_ns)
		s->now_ns = cna_now_ns();
	return s->now_ns;
}

/* Waited since `since` for longer than the threshold. */
static bool waited_past_threshold(struct succession *s, uint64_t since,
				  const struct cna_params *params)
{
	uint64_t now = pass_now(s);
	return now > since && now - since > params->threshold_ns;
}

/* Served in queue order: the preferred node's, a priority waiter, or one
 * that has waited past the threshold (starvation avoidance). */
static bool prefers(struct succession *s, const struct cna_node *candidate,
		    const struct cna_params *params)
{
	return candidate->priority || candidate->real_node == s->preferred_node ||
	       waited_past_threshold(s, candidate->wait_start_ns, params);
}

/* The oldest remote waiter becomes the successor; its node the preferred one. */
static void promote_secondary(struct succession *s)
{
	s->succ = s->sec_head;
	s->preferred_node = s->succ->real_node;
	s->sec_head = s->sec_tail = NULL;
	s->sec_oldest_ns = 0;
}

/* secondary r1..rk, primary next.. -> primary r1..rk next..; secondary empty. */
static void flush_secondary(struct succession *s, struct cna_node *next)
{
	atomic_store_explicit(&s->sec_tail->next, next, memory_order_relaxed);
	promote_secondary(s);
}

/*
 * Find the first preferred waiter from next on; move the remote run before
 * it to the secondary tail (the waiter then inherits the preference).  The primary tail is never moved: its next may
 * be about to be written by an enqueuer.  Returns waiters moved, or -1 if
 * no preferred waiter was found (nothing moved).
 */
static int order_queue(struct succession *s, struct cna_node *next,
		       const struct cna_params *params)
{
	struct cna_node *prev = NULL, *cur = next;
	int skipped = 0;
	uint64_t oldest = UINT64_MAX;   /* the earliest wait start skipped */

	while (!prefers(s, cur, params)) {
		if (cur->wait_start_ns < oldest)
			oldest = cur->wait_start_ns;
		/* Acquire: pairs with the release store in cna_enqueue(). */
		struct cna_node *after = atomic_load_explicit(&cur->next,
							      memory_order_acquire);
		if (!after)
			return -1;
		prev = cur;
		cur = after;
		skipped++;
	}
	if (prev) {
		/* The moved waiters read was_moved only once head, after grants
		 * that order this write before their reads.  A second walk, on
		 * lines the first one just read, and only for statistics. */
		if (params->mark_moved)
			for (struct cna_node *n = next; n != cur;
			     n = atomic_load_explicit(&n->next, memory_order_relaxed))
				n->was_moved = true;
		/* primary next..prev cur.. -> primary cur..; secondary ..next..prev */
		atomic_store_explicit(&prev->next, NULL, memory_order_relaxed);
		if (s->sec_tail) {
			atomic_store_explicit(&s->sec_tail->next, next,
					      memory_order_relaxed);
			if (oldest < s->sec_oldest_ns)
				s->sec_oldest_ns = oldest;
		} else {
			s->sec_head = next;
			s->sec_oldest_ns = oldest;
			s->reordering = true;
		}
		s->sec_tail = prev;
	}
	s->succ = cur;
	return skipped;
}

static void choose_successor(struct succession *s, struct cna_node *next,
			     const struct cna_params *params, uint32_t *prng,
			     struct cna_handoff *out)
{
	if (s->sec_head) {
		if (waited_past_threshold(s, s->sec_oldest_ns, params)) {
			flush_secondary(s, next);   /* starvation avoidance */
			out->flushed = true;
			return;
		}
	} else if (!s->reordering && probably(prng, params->shuffle_bits)) {
		s->succ = next;                     /* shuffle reduction: keep FIFO */
		s->preferred_node = next->real_node;
		return;
	}

	int moved = order_queue(s, next, params);
	if (moved >= 0) {
		out->moved = (unsigned)moved;
		return;
	}
	/*
	 * No preferred waiter in the primary queue now.  Rather than give up
	 * the preference (and the secondary queue, which would drop us back
	 * into shuffle reduction), hand to the next waiter as a stand-in that
	 * keeps filtering for the preferred node, as the kernel's CNA does.
	 * The secondary queue comes back when the primary queue empties or
	 * the threshold passes.
	 */
	s->succ = next;
}

static void grant_with(const struct cna_node *me, const struct succession *s,
		       const struct cna_params *params, struct cna_handoff *out)
{
	struct cna_node *succ = s->succ;
	succ->sec_head = s->sec_head;
	succ->sec_tail = s->sec_tail;
	succ->sec_oldest_ns = s->sec_oldest_ns;
	succ->numa_node = s->preferred_node;
	succ->reordering = s->reordering;
	out->granted = true;
	out->local = succ->real_node == me->real_node;
	out->requeued = grant(succ, params);
}

void cna_pass_head(struct cna_queue *q, struct cna_node *me,
		   const struct cna_params *params, uint32_t *prng,
		   struct cna_handoff *out)
{
	*out = (struct cna_handoff){ 0 };
	struct succession s = {
		.sec_head = me->sec_head,
		.sec_tail = me->sec_tail,
		.sec_oldest_ns = me->sec_oldest_ns,
		.preferred_node = me->numa_node,
		.reordering = me->reordering,
	};

	/* Acquire: pairs with the release store in cna_enqueue(). */
	struct cna_node *next = atomic_load_explicit(&me->next, memory_order_acquire);
	if (!next) {
		struct cna_node *expected = me;
		/* tail: me -> NULL, or me -> sec_tail (secondary becomes primary).
		 * Release: pairs with the acquire exchange of the next enqueuer, who
		 * then sees sec_tail->next == NULL before it writes it. */
		if (s.sec_tail)
			atomic_store_explicit(&s.sec_tail->next, NULL, memory_order_relaxed);
		else if (s.reordering)
			atomic_store_explicit(&q->reorder_until_ns,
					      cna_now_ns() + params->threshold_ns,
					      memory_order_relaxed);
		if (atomic_compare_exchange_strong_explicit(&q->tail, &expected,
							    s.sec_tail,
							    memory_order_release,
							    memory_order_relaxed)) {
			if (!s.sec_head)
				return;
			/* sec_tail is the primary tail now: an enqueuer may be
			 * writing its next already, so leave it alone. */
			promote_secondary(&s);
			out->flushed = true;
			grant_with(me, &s, params, out);
			return;
		}
		next = wait_for_next(me);
	}

	if (params->numa_aware) {
		choose_successor(&s, next, params, prng, out);
	} else {
		s.succ = next;
		s.preferred_node = next->real_node;
	}
	grant_with(me, &s, params, out);
}
