/* bench/sim/futex.c — futex wait, wake and requeue of simulated threads.
 *
 * What cna/futex.h declares under CNA_SIMULATED.  A wait compares the word
 * and sleeps in one step, as the kernel does under its hash-bucket lock; a
 * wake takes the oldest sleeper of the word (or any, in the explorer); a
 * requeue moves one sleeper to another word's list without waking it.
 * Each call costs a syscall, a wake more, and the woken thread runs after
 * the wake latency (engine.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "futex.h"

#define BUCKETS 1024

struct bucket {
	struct sim_thread *first;     /* sleepers, oldest first */
};

static struct bucket buckets[BUCKETS];
struct sim_futex_counts sim_futex_counts;

static struct bucket *bucket_of(const void *word)
{
	return &buckets[((uintptr_t)word >> 2) * 0x9e3779b1u % BUCKETS];
}

/* The kernel reads the word: one access to its line. */
static uint32_t read_word(struct sim_thread *t, _Atomic uint32_t *word)
{
	t->now += sim_line_access(t, word, false);
	return __atomic_load_n((uint32_t *)word, __ATOMIC_RELAXED);   /* no second event */
}

static struct sim_thread *take_sleeper(struct bucket *b, const void *word, bool any)
{
	struct sim_thread **link = &b->first, **chosen = NULL;
	unsigned seen = 0;
	for (; *link; link = &(*link)->futex_next) {
		if ((*link)->futex_word != word)
			continue;
		seen++;
		if (!chosen || (any && sim_random(&sim_active->rng) % seen == 0))
			chosen = link;
		if (!any)
			break;
	}
	if (!chosen)
		return NULL;
	struct sim_thread *t = *chosen;
	*chosen = t->futex_next;
	t->futex_next = NULL;
	return t;
}

static void add_sleeper(struct bucket *b, struct sim_thread *t, const void *word)
{
	struct sim_thread **link = &b->first;
	while (*link)
		link = &(*link)->futex_next;
	t->futex_word = word;
	t->futex_next = NULL;
	*link = t;
}

/*
 * The calling thread enters the kernel: part of a syscall's cost is spent
 * before the kernel acts (reads the word, wakes), the rest on the way back
 * (leave_syscall).  Charging all of it before the read made a waiter whose
 * word had changed return at once, and win the word from a waker still
 * inside its own call.  The presets put the kernel's act half-way;
 * bench/kernelprobe measures where it falls on this VM (futex_read_ns).
 */
static uint64_t entry_ns(const struct sim_machine *m)
{
	uint64_t entry = m->syscall_entry_ns ? m->syscall_entry_ns : m->syscall_ns / 2;
	return entry < m->syscall_ns ? entry : m->syscall_ns;
}

static struct sim_thread *enter_syscall(void)
{
	struct sim_thread *t = sim_self();
	sim_drain_stores(t);
	t->now += sim_kernel_ns(t, entry_ns(&sim_active->machine));
	sim_point(t);
	return t;
}

static void leave_syscall(struct sim_thread *t)
{
	const struct sim_machine *m = &sim_active->machine;
	t->now += sim_kernel_ns(t, m->syscall_ns - entry_ns(m));
	sim_point(t);
}

int futex_wait_private(_Atomic uint32_t *word, uint32_t expected)
{
	struct sim *s = sim_active;
	struct sim_thread *t = enter_syscall();
	sim_futex_counts.waits++;
	if (read_word(t, word) != expected) {
		sim_futex_counts.waits_changed++;
		leave_syscall(t);
		return EAGAIN;
	}
	if (s->chaos.spurious_one_in && sim_random(&s->rng) % s->chaos.spurious_one_in == 0) {
		leave_syscall(t);
		return EINTR;
	}
	add_sleeper(bucket_of(word), t, word);
	sim_block(t);   /* the way back is in the wake latency */
	return 0;
}

int futex_wait_abs_private(_Atomic uint32_t *word, uint32_t expected,
			   clockid_t clock, const struct timespec *abstime)
{
	(void)word, (void)expected, (void)clock, (void)abstime;
	fprintf(stderr, "cnasim: timed futex waits are not simulated\n");
	abort();
}

void futex_wake_private(_Atomic uint32_t *word, int n)
{
	struct sim *s = sim_active;
	struct sim_thread *t = enter_syscall();
	sim_futex_counts.wakes++;
	for (int i = 0; i < n; i++) {
		struct sim_thread *sleeper = take_sleeper(bucket_of(word), word,
							  s->chaos.random_wake_order);
		if (!sleeper)
			break;
		sim_futex_counts.woken++;
		t->now += sim_kernel_ns(t, s->machine.wake_call_ns - s->machine.syscall_ns);
		sim_wake(t, sleeper);
	}
	leave_syscall(t);
}

bool futex_requeue_one_private(_Atomic uint32_t *from, uint32_t expected,
			       _Atomic uint32_t *to)
{
	struct sim_thread *t = enter_syscall();
	sim_futex_counts.requeues++;
	bool moved = false;
	if (read_word(t, from) == expected) {
		struct sim_thread *sleeper = take_sleeper(bucket_of(from), from, false);
		if (sleeper) {
			add_sleeper(bucket_of(to), sleeper, to);
			moved = true;
		}
	}
	leave_syscall(t);
	return moved;
}

unsigned sim_futex_sleepers(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < BUCKETS; i++)
		for (struct sim_thread *t = buckets[i].first; t; t = t->futex_next)
			n++;
	return n;
}

void sim_futex_reset(void)
{
	for (unsigned i = 0; i < BUCKETS; i++)
		buckets[i].first = NULL;
	memset(&sim_futex_counts, 0, sizeof sim_futex_counts);
}
