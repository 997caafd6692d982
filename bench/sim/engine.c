/* bench/sim/engine.c — the event loop around the real cna/ queue.
 *
 * The simulator is single-threaded: cna_enqueue() and cna_pass_head() run
 * to completion one at a time, so every queue link is in place whenever the
 * queue is looked at, and nobody ever waits in the real code.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include "cna.h"
#include "events.h"

enum phase {
	PHASE_WORK,                   /* non-critical work */
	PHASE_QUEUED,                 /* in the primary or the secondary queue */
	PHASE_HEAD,                   /* head of the queue, waits for the lock */
	PHASE_OWNER,                  /* holds the lock */
};

struct sim_thread {
	struct cna_node node;         /* first: 64-byte aligned */
	struct sim_place place;
	enum phase phase;
	uint32_t cna_prng;            /* the real code's per-thread PRNG state */
	uint32_t work_prng;
	uint64_t arrived_ns;
	uint64_t ops;                 /* releases in the measured window */
};

struct sim {
	const struct sim_config *cfg;
	struct cna_params params;
	struct cna_queue queue;
	struct sim_thread *threads;
	struct event_heap events;
	int owner, head, last_owner;  /* thread indices, -1 for none */
	uint64_t run_start_ns;        /* simulated start of the current local run */
	uint64_t reorder_until_ns;    /* simulated end of the queue's reorder window, 0: none */
	uint64_t transfers, local_transfers;
	struct sim_result *out;
};

static uint32_t xorshift(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static void schedule(struct sim *s, uint64_t time_ns, int thread, enum event_kind kind)
{
	if (!event_push(&s->events, time_ns, thread, kind))
		s->out->queue_errors++;   /* more than one pending event per thread */
}

static uint64_t ncs_duration(struct sim *s, struct sim_thread *t)
{
	uint64_t mean = s->cfg->work.ncs_ns;
	if (mean == 0)
		return 0;
	/* uniform in [mean/2, 3*mean/2) so that threads drift out of lockstep */
	return mean / 2 + (uint64_t)((double)mean * (xorshift(&t->work_prng) / 4294967296.0));
}

static int index_of(const struct sim *s, const struct cna_node *n)
{
	return (int)((const struct sim_thread *)(const void *)n - s->threads);
}

static struct cna_node *next_of(struct cna_node *n)
{
	return atomic_load_explicit(&n->next, memory_order_relaxed);
}

/* Cost of one line last written by thread from, now wanted by thread to. */
static uint64_t xfer(const struct sim *s, int from, int to)
{
	if (from < 0 || from == to)
		return 0;
	return sim_machine_xfer_ns(&s->cfg->machine, s->threads[from].place,
				   s->threads[to].place);
}

/* Cost of reading every node of the chain that starts at n. */
static uint64_t chain_xfer(const struct sim *s, struct cna_node *n, int reader)
{
	uint64_t ns = 0;
	for (; n; n = next_of(n))
		ns += xfer(s, index_of(s, n), reader);
	return ns;
}

/* After a reordering the successor is no longer linked from the old next. */
static int find_granted(const struct sim *s)
{
	for (unsigned i = 0; i < s->cfg->threads; i++) {
		const struct sim_thread *t = &s->threads[i];
		if (t->phase == PHASE_QUEUED &&
		    atomic_load_explicit(&t->node.state, memory_order_relaxed) == CNA_HEAD)
			return (int)i;
	}
	return -1;
}

/*
 * cna_pass_head() measures the local run against the real clock; give it
 * a start that lies as far in the real past as the run has lasted in
 * simulated time, so that the threshold applies to simulated time.
 */
static void rebase_run_start(struct sim *s, struct cna_node *me, uint64_t now)
{
	if (!me->sec_head)
		return;
	uint64_t elapsed = now - s->run_start_ns;
	uint64_t real = cna_now_ns();
	me->local_run_start_ns = real > elapsed ? real - elapsed : 0;
}

/*
 * Likewise the window in which a refilled queue reorders at once: the
 * library keeps its end in real time, the simulator in simulated time.
 */
static void rebase_reorder_window(struct sim *s, uint64_t now)
{
	uint64_t until = 0;
	if (s->reorder_until_ns > now)
		until = cna_now_ns() + (s->reorder_until_ns - now);
	else if (s->reorder_until_ns)
		until = 1;              /* over: a time long past */
	atomic_store_explicit(&s->queue.reorder_until_ns, until, memory_order_relaxed);
}

/*
 * The new owner i passes the headship at time now, as the shim does once
 * it holds the lock word.  Returns the cost of the queue work: the lines
 * the real code touched in other threads' nodes, and its software cost.
 */
static uint64_t pass_head(struct sim *s, int i, uint64_t now)
{
	struct sim_thread *me = &s->threads[i];
	struct cna_node *next = next_of(&me->node);
	struct cna_node *old_sec_head = me->node.sec_head;
	struct cna_node *old_sec_tail = me->node.sec_tail;
	int32_t preferred = me->node.numa_node;
	uint32_t prng_before = me->cna_prng;
	struct cna_handoff handoff;

	rebase_run_start(s, &me->node, now);
	uint64_t window_before = atomic_load_explicit(&s->queue.reorder_until_ns,
						      memory_order_relaxed);
	cna_pass_head(&s->queue, &me->node, &s->params, &me->cna_prng, &handoff);
	if (atomic_load_explicit(&s->queue.reorder_until_ns, memory_order_relaxed) !=
	    window_before)
		s->reorder_until_ns = now + s->params.threshold_ns;

	if (!handoff.granted)
		return 0;   /* the queue emptied: one CAS on a line this thread wrote last */
	/* me->next was written by next */
	uint64_t ns = 0;
	if (next)
		ns += xfer(s, index_of(s, next), i);

	int succ;
	if (handoff.flushed) {
		succ = index_of(s, old_sec_head);
		/* sec_tail->next is written (to next, or NULL as the queue empties) */
		ns += xfer(s, succ, i) + xfer(s, index_of(s, old_sec_tail), i);
		s->out->flushes++;
	} else if (handoff.moved > 0) {
		succ = find_granted(s);
		/* the moved run, now unlinked after its last node, then the successor */
		ns += chain_xfer(s, next, i) + xfer(s, succ, i);
		if (old_sec_tail)
			ns += xfer(s, index_of(s, old_sec_tail), i);
	} else {
		succ = index_of(s, next);
		uint32_t mask = s->params.shuffle_bits >= 32 ? UINT32_MAX :
				(1u << s->params.shuffle_bits) - 1u;
		bool kept_fifo = !s->params.numa_aware ||
				 (!old_sec_head && me->cna_prng != prng_before &&
				  (me->cna_prng & mask) != 0);
		if (kept_fifo || next->real_node == preferred)
			ns += xfer(s, succ, i);
		else
			ns += chain_xfer(s, next, i);  /* scanned to the tail, no match */
	}

	if (succ < 0 || s->threads[succ].phase != PHASE_QUEUED) {
		s->out->queue_errors++;
		return ns;
	}
	struct sim_thread *st = &s->threads[succ];
	if (st->node.sec_head && !old_sec_head)
		s->run_start_ns = now;    /* this pass started a local run */
	/* the measured software cost of the path the real code took */
	if (!s->params.numa_aware)
		ns += s->cfg->work.pass_ns;
	else if (old_sec_head || st->node.sec_head)
		ns += s->cfg->work.cna_sec_pass_ns;
	else
		ns += s->cfg->work.cna_pass_ns;
	st->phase = PHASE_HEAD;
	s->head = succ;
	return ns;
}

/* Thread i takes the lock at time now and schedules its release. */
static void acquire(struct sim *s, int i, uint64_t now)
{
	struct sim_thread *t = &s->threads[i];
	if (s->owner >= 0)
		s->out->exclusion_violations++;
	s->owner = i;
	if (s->head == i)
		s->head = -1;
	t->phase = PHASE_OWNER;
	s->out->acquisitions++;
	if (now >= s->cfg->warmup_ns && now - t->arrived_ns > s->out->max_wait_ns)
		s->out->max_wait_ns = now - t->arrived_ns;

	int prev = s->last_owner;
	if (prev >= 0 && prev != i) {
		s->transfers++;
		if (s->threads[prev].place.socket == t->place.socket)
			s->local_transfers++;
	}
	/* the lock line and the critical section's lines come from the previous owner */
	uint64_t hold = xfer(s, prev, i) * (1 + s->cfg->work.cs_lines);
	hold += pass_head(s, i, now);
	hold += s->cfg->work.cs_ns;
	schedule(s, now + hold, i, EVENT_RELEASE);
}

static void on_arrive(struct sim *s, int i, uint64_t now)
{
	struct sim_thread *t = &s->threads[i];
	s->out->arrivals++;
	t->arrived_ns = now;
	t->node.real_node = (int32_t)t->place.socket;
	t->node.priority = false;
	rebase_reorder_window(s, now);
	if (!cna_enqueue(&s->queue, &t->node)) {
		t->phase = PHASE_QUEUED;
		return;
	}
	t->phase = PHASE_HEAD;
	if (s->head >= 0)
		s->out->queue_errors++;   /* an empty queue cannot have had a head */
	s->head = i;
	if (s->owner < 0)
		acquire(s, i, now);
}

static void on_release(struct sim *s, int i, uint64_t now)
{
	struct sim_thread *t = &s->threads[i];
	if (s->owner != i)
		s->out->exclusion_violations++;
	s->owner = -1;
	s->out->releases++;
	if (now >= s->cfg->warmup_ns)
		t->ops++;
	s->last_owner = i;
	t->phase = PHASE_WORK;
	schedule(s, now + ncs_duration(s, t), i, EVENT_ARRIVE);
	if (s->head >= 0)
		acquire(s, s->head, now);
}

/* Walk primary and secondary queues; they must hold exactly the waiters. */
static void verify_queue(struct sim *s)
{
	unsigned waiting = 0, seen = 0;
	for (unsigned i = 0; i < s->cfg->threads; i++)
		if (s->threads[i].phase == PHASE_QUEUED || s->threads[i].phase == PHASE_HEAD)
			waiting++;
	struct cna_node *tail = atomic_load_explicit(&s->queue.tail, memory_order_relaxed);
	if (s->head < 0) {
		if (waiting || tail)
			s->out->queue_errors++;
		return;
	}
	struct cna_node *head = &s->threads[s->head].node;
	struct cna_node *last = NULL;
	for (struct cna_node *n = head; n && seen <= waiting; n = next_of(n)) {
		/* a head granted by a predecessor is HEAD; one that found the
		 * queue empty stays WAITING; nobody parks in the model */
		enum phase want = n == head ? PHASE_HEAD : PHASE_QUEUED;
		uint32_t state = atomic_load_explicit(&n->state, memory_order_relaxed);
		bool state_ok = n == head ? state != CNA_PARKED : state == CNA_WAITING;
		if (s->threads[index_of(s, n)].phase != want || !state_ok)
			s->out->queue_errors++;
		last = n;
		seen++;
	}
	if (last != tail)
		s->out->queue_errors++;
	for (struct cna_node *n = head->sec_head; n && seen <= waiting; n = next_of(n)) {
		if (s->threads[index_of(s, n)].phase != PHASE_QUEUED)
			s->out->queue_errors++;
		last = n;
		seen++;
	}
	if (head->sec_head && last != head->sec_tail)
		s->out->queue_errors++;
	if (seen != waiting)
		s->out->queue_errors++;
}

static void summarize(struct sim *s)
{
	struct sim_result *r = s->out;
	double sum = 0, sum_sq = 0;
	r->min_ops = UINT64_MAX;
	for (unsigned i = 0; i < s->cfg->threads; i++) {
		const struct sim_thread *t = &s->threads[i];
		double x = (double)t->ops;
		sum += x;
		sum_sq += x * x;
		r->ops += t->ops;
		if (t->ops < r->min_ops)
			r->min_ops = t->ops;
		if (t->ops > r->max_ops)
			r->max_ops = t->ops;
		if (t->phase == PHASE_QUEUED || t->phase == PHASE_HEAD)
			r->still_waiting++;
		if (s->cfg->thread_ops)
			s->cfg->thread_ops[i] = t->ops;
	}
	r->jain = sum_sq > 0 ? sum * sum / ((double)s->cfg->threads * sum_sq) : 0;
	r->ops_per_s = (double)r->ops * 1e9 / (double)(s->cfg->duration_ns - s->cfg->warmup_ns);
	r->local_share = s->transfers ? (double)s->local_transfers / (double)s->transfers : 1.0;
}

bool sim_run(const struct sim_config *cfg, struct sim_result *out)
{
	struct sim s = {
		.cfg = cfg,
		.params = { .numa_aware = cfg->numa_aware, .threshold_ns = cfg->threshold_ns,
			    .shuffle_bits = cfg->shuffle_bits, .spin_budget = 0 },
		.owner = -1, .head = -1, .last_owner = -1,
		.out = out,
	};
	*out = (struct sim_result){ 0 };
	size_t bytes = sizeof(struct sim_thread) * cfg->threads;
	s.threads = aligned_alloc(_Alignof(struct sim_thread), bytes);
	if (!s.threads || !event_heap_init(&s.events, cfg->threads + 1)) {
		free(s.threads);
		return false;
	}
	memset(s.threads, 0, bytes);
	atomic_init(&s.queue.tail, NULL);

	for (unsigned i = 0; i < cfg->threads; i++) {
		struct sim_thread *t = &s.threads[i];
		t->place = sim_machine_place(&cfg->machine, i);
		t->cna_prng = cfg->seed * 2654435761u + i + 1;
		t->work_prng = (cfg->seed + 1) * 40503u + i * 2246822519u + 7;
		if (!t->work_prng)
			t->work_prng = 1;
		t->phase = PHASE_WORK;
		schedule(&s, ncs_duration(&s, t), (int)i, EVENT_ARRIVE);
	}

	struct event ev;
	while (event_pop(&s.events, &ev) && ev.time_ns < cfg->duration_ns) {
		if (ev.kind == EVENT_ARRIVE)
			on_arrive(&s, ev.thread, ev.time_ns);
		else
			on_release(&s, ev.thread, ev.time_ns);
		if (cfg->verify)
			verify_queue(&s);
	}
	summarize(&s);
	event_heap_free(&s.events);
	free(s.threads);
	return true;
}

bool sim_result_consistent(const struct sim_result *r)
{
	uint64_t holding = r->acquisitions - r->releases;   /* 0 or 1 */
	return r->exclusion_violations == 0 && r->queue_errors == 0 && holding <= 1 &&
	       r->arrivals == r->acquisitions + r->still_waiting;
}
