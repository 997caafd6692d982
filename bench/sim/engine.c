/* bench/sim/engine.c — the event scheduler and the modelled CPUs. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

size_t sim_fiber_stack_bytes(void);

struct sim *sim_active;
static void *main_sp;

uint64_t sim_kernel_ns(struct sim_thread *t, uint64_t ns)
{
	uint64_t spread = ns * sim_active->machine.kernel_jitter_pct / 100;
	if (!spread)
		return ns;
	return ns - spread + sim_random(&t->rng) % (2 * spread + 1);
}

uint32_t sim_random(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* Earlier clock first; equal clocks by thread id, so runs are deterministic. */
static bool earlier(const struct sim_thread *a, const struct sim_thread *b)
{
	return a->now < b->now || (a->now == b->now && a->id < b->id);
}

static void heap_place(struct sim *s, unsigned i, struct sim_thread *t)
{
	s->heap[i] = t;
	t->heap_slot = i;
}

/* t, at slot i, moves towards the root while it is earlier than its parent. */
static void heap_sift_up(struct sim *s, unsigned i, struct sim_thread *t)
{
	while (i > 0) {
		unsigned parent = (i - 1) / 2;
		if (!earlier(t, s->heap[parent]))
			break;
		heap_place(s, i, s->heap[parent]);
		i = parent;
	}
	heap_place(s, i, t);
}

static void heap_push(struct sim *s, struct sim_thread *t)
{
	heap_sift_up(s, s->heap_len++, t);
}

static struct sim_thread *heap_pop(struct sim *s)
{
	struct sim_thread *top = s->heap[0], *last = s->heap[--s->heap_len];
	unsigned i = 0, n = s->heap_len;
	for (;;) {
		unsigned child = 2 * i + 1;
		if (child >= n)
			break;
		if (child + 1 < n && earlier(s->heap[child + 1], s->heap[child]))
			child++;
		if (!earlier(s->heap[child], last))
			break;
		heap_place(s, i, s->heap[child]);
		i = child;
	}
	if (n)
		heap_place(s, i, last);
	return top;
}

/* EEVDF gives every runnable thread the same base slice. */
static uint64_t slice_ns(const struct sim *s, const struct sim_cpu *c)
{
	(void)c;
	return s->machine.slice_ns;
}

/* t starts running on CPU cpu at time at (or when it is ready, if later). */
static void cpu_run(struct sim *s, unsigned cpu, struct sim_thread *t, uint64_t at)
{
	struct sim_cpu *c = &s->cpus[cpu];
	uint64_t start = at > t->ready_at ? at : t->ready_at;
	if (start > t->now)
		t->now = start;
	t->cpu = cpu;
	t->state = SIM_RUNNING;
	t->ran_since = t->now;
	c->current = t;
	heap_push(s, t);
}

/* The READY thread with the least vruntime (the oldest among equals). */
static struct sim_thread *rq_take(struct sim_cpu *c)
{
	unsigned best = 0;
	for (unsigned i = 1; i < c->rq_len; i++)
		if (c->rq[i]->vruntime < c->rq[best]->vruntime)
			best = i;
	struct sim_thread *t = c->rq[best];
	memmove(&c->rq[best], &c->rq[best + 1], (c->rq_len - best - 1) * sizeof *c->rq);
	c->rq_len--;
	return t;
}

static void rq_add(struct sim_cpu *c, struct sim_thread *t, uint64_t ready_at)
{
	t->state = SIM_READY;
	t->ready_at = ready_at;
	c->rq[c->rq_len++] = t;
}

/* The CPU's thread stops running at time at: account its CPU time. */
static void leave_cpu(struct sim *s, struct sim_thread *t)
{
	t->vruntime += t->now - t->ran_since;
	s->cpus[t->cpu].current = NULL;
}

/* Whatever is READY on cpu runs next (after a context switch), or it idles. */
static void cpu_next(struct sim *s, unsigned cpu, uint64_t at)
{
	struct sim_cpu *c = &s->cpus[cpu];
	if (c->rq_len) {
		cpu_run(s, cpu, rq_take(c), at + s->machine.switch_ns);
	} else {
		c->current = NULL;
		c->idle_since = at;
	}
}

static void to_engine(struct sim_thread *t)
{
	sim_fiber_switch(&t->sp, main_sp);
}

static void chaos(struct sim *s, struct sim_thread *t)
{
	const struct sim_chaos *k = &s->chaos;
	if (k->delay_one_in && sim_random(&s->rng) % k->delay_one_in == 0)
		t->now += sim_random(&s->rng) % (k->delay_max_ns + 1);
	if (k->preempt_one_in && sim_random(&s->rng) % k->preempt_one_in == 0)
		t->now += sim_random(&s->rng) % (k->preempt_max_ns + 1);
}

void sim_point(struct sim_thread *t)
{
	struct sim *s = sim_active;
	t->events++;
	s->events++;
	s->trace_hash = (s->trace_hash ^ (t->now * 1024 + t->id)) * 0x100000001b3ull;
	if (s->check)
		s->check(s, s->check_arg);
	if (s->failure) {
		to_engine(t);          /* never resumed */
		return;
	}
	chaos(s, t);
	struct sim_cpu *c = &s->cpus[t->cpu];
	if (c->rq_len && t->now >= t->ran_since + slice_ns(s, c)) {
		leave_cpu(s, t);
		rq_add(c, t, t->now);
		cpu_next(s, t->cpu, t->now);
		to_engine(t);
		return;
	}
	if (s->heap_len == 0 || t->now <= s->heap[0]->now + s->lag_ns)
		return;
	heap_push(s, t);
	to_engine(t);
}

void sim_work(struct sim_thread *t, uint64_t ns)
{
	t->now += ns;
	sim_point(t);
}

/*
 * A spin on a line that only another thread's write can end, fast-forwarded:
 * the thread keeps its CPU but takes no events until the line is written
 * (sim_line_written) or max_ns (or its time slice) has passed.  The
 * simulator's own reference MCS lock uses it, and the library's queued
 * waiters through platform_spin_while(); the library's other spins run
 * round by round.
 */
void sim_spin_until_written(struct sim_thread *t, const volatile void *address,
			    uint64_t max_ns)
{
	struct sim *s = sim_active;
	struct sim_cpu *c = &s->cpus[t->cpu];
	if (t->written) {
		/* written since sim_spin_arm(), after the caller's poll */
		t->written = false;
		t->watching = 0;
		return;
	}
	uint64_t until = t->now + max_ns;
	if (c->rq_len) {
		uint64_t slice_end = t->ran_since + slice_ns(s, c);
		if (slice_end < until)
			until = slice_end > t->now ? slice_end : t->now;
	}
	t->watching = (uintptr_t)address >> 6;
	sim_line_watch(address);
	t->now = until;
	sim_point(t);
	t->watching = 0;
	t->written = false;
}

void sim_spin_arm(struct sim_thread *t, const volatile void *address)
{
	t->watching = (uintptr_t)address >> 6;
	t->written = false;
	sim_line_watch(address);
}

void sim_line_written(struct sim_thread *writer, const volatile void *address)
{
	struct sim *s = sim_active;
	uintptr_t line = (uintptr_t)address >> 6;
	for (unsigned i = 0; i < s->heap_len; i++) {
		struct sim_thread *w = s->heap[i];
		if (w->watching != line)
			continue;
		w->written = true;
		if (w->now > writer->now) {
			w->now = writer->now;
			heap_sift_up(s, i, w);
		}
	}
}

void sim_block(struct sim_thread *t)
{
	struct sim *s = sim_active;
	leave_cpu(s, t);
	t->state = SIM_BLOCKED;
	cpu_next(s, t->cpu, t->now);
	to_engine(t);
}

static int idle_cpu_near(struct sim *s, unsigned home)
{
	if (!s->cpus[home].current)
		return (int)home;
	unsigned socket = sim_machine_socket(&s->machine, home);
	for (unsigned k = 1; k < s->ncpus; k++) {
		unsigned cpu = (home + k) % s->ncpus;
		if (!s->cpus[cpu].current && sim_machine_socket(&s->machine, cpu) == socket)
			return (int)cpu;
	}
	return -1;
}

void sim_wake(struct sim_thread *waker, struct sim_thread *t)
{
	struct sim *s = sim_active;
	uint64_t at = waker->now + sim_kernel_ns(waker, s->machine.wake_ns);
	int idle = idle_cpu_near(s, t->cpu);
	if (idle >= 0) {
		struct sim_cpu *c = &s->cpus[idle];
		t->ready_at = at > c->idle_since ? at : c->idle_since;
		cpu_run(s, (unsigned)idle, t, t->ready_at);
		return;
	}
	/* EEVDF (Linux >= 6.6) with RUN_TO_PARITY: the woken thread waits
	 * for the current one's slice to end rather than preempting it. */
	rq_add(&s->cpus[t->cpu], t, at);
}

void sim_yield(struct sim_thread *t)
{
	struct sim *s = sim_active;
	struct sim_cpu *c = &s->cpus[t->cpu];
	sim_drain_stores(t);
	t->now += sim_kernel_ns(t, s->machine.yield_ns ? s->machine.yield_ns
						       : s->machine.syscall_ns);
	if (!c->rq_len) {
		sim_point(t);
		return;
	}
	/* CFS skips the yielder once: the best other thread runs. */
	leave_cpu(s, t);
	struct sim_thread *next = rq_take(c);
	rq_add(c, t, t->now);
	cpu_run(s, t->cpu, next, t->now + sim_kernel_ns(t, s->machine.switch_ns));
	to_engine(t);
}

unsigned sim_thread_socket(const struct sim_thread *t)
{
	return sim_machine_socket(&sim_active->machine, t->cpu);
}

bool sim_create(struct sim *s, const struct sim_machine *m, unsigned threads, uint32_t seed)
{
	memset(s, 0, sizeof *s);
	s->machine = *m;
	s->nthreads = threads;
	s->ncpus = sim_machine_cpus(m);
	s->rng = seed * 2654435761u | 1u;
	s->time_limit_ns = UINT64_MAX;
	/* The threads' library state and stacks from the arena: see arena.c. */
	s->threads = sim_arena_alloc(threads * sizeof *s->threads, 64);
	s->cpus = calloc(s->ncpus, sizeof *s->cpus);
	s->heap = calloc(threads, sizeof *s->heap);
	if (!s->threads || !s->cpus || !s->heap)
		return false;
	for (unsigned c = 0; c < s->ncpus; c++) {
		s->cpus[c].rq = calloc(threads, sizeof *s->cpus[c].rq);
		if (!s->cpus[c].rq)
			return false;
	}
	for (unsigned i = 0; i < threads; i++) {
		s->threads[i].stack = sim_arena_alloc(sim_fiber_stack_bytes(), 4096);
		if (!s->threads[i].stack)
			return false;
	}
	return true;
}

void sim_destroy(struct sim *s)
{
	for (unsigned c = 0; s->cpus && c < s->ncpus; c++)
		free(s->cpus[c].rq);
	free(s->cpus);
	free(s->heap);
	memset(s, 0, sizeof *s);
}

static void thread_entry(void)
{
	struct sim *s = sim_active;
	struct sim_thread *t = s->current;
	t->body(t, t->arg);
	leave_cpu(s, t);
	t->state = SIM_DONE;
	cpu_next(s, t->cpu, t->now);
	to_engine(t);
	abort();                       /* a finished thread is never resumed */
}

void sim_spawn(struct sim *s, unsigned i, unsigned cpu,
	       void (*body)(struct sim_thread *, void *), void *arg)
{
	struct sim_thread *t = &s->threads[i];
	t->id = i;
	t->body = body;
	t->arg = arg;
	t->rng = (i + 1) * 0x2545f491u ^ s->rng;
	sim_fiber_init(t, thread_entry);
	if (s->cpus[cpu].current)
		rq_add(&s->cpus[cpu], t, 0);
	else
		cpu_run(s, cpu, t, 0);
	t->cpu = cpu;
}

bool sim_run(struct sim *s)
{
	sim_active = s;
	sim_lines_reset();
	while (!s->failure) {
		if (s->heap_len == 0) {
			for (unsigned i = 0; i < s->nthreads; i++)
				if (s->threads[i].state != SIM_DONE)
					s->failure = "lost wake-up: a thread sleeps with nobody left to wake it";
			break;
		}
		struct sim_thread *t = heap_pop(s);
		if (t->now > s->time_limit_ns) {
			s->failure = "livelock: simulated time limit passed";
			break;
		}
		s->current = t;
		sim_fiber_switch(&main_sp, t->sp);
		s->current = NULL;
	}
	sim_active = NULL;
	return !s->failure;
}
