/* interpose/word.c — waiting on glibc's mutex word (protocol in glibc_mutex.h). */
#include "word.h"

#include <errno.h>

#include "../cna/cna.h"
#include "locality.h"


/*
 * Every this many rounds a spin on the word gives up the CPU for a moment.
 * With more runnable threads than CPUs the holder is often preempted, and a
 * spinner only burns the timeslice the holder needs: a yield lets the
 * holder (or other useful work) run and keeps the spinner runnable, cheaper
 * than a futex sleep and its wake.  With a CPU to spare it returns at once.
 * leveldb readrandom at 16 threads on 2 CPUs: 0.96 -> 1.20 of glibc's
 * throughput (pair medians, 8 pairs); mutexbench unchanged (2.00 vs 1.96 at
 * 16 threads, 1.13 vs 1.17 at 2).  Every 8 rounds cost mutexbench a sixth.
 */
#define SPIN_ROUNDS_PER_YIELD 32

/*
 * How many yields a free word is left to the owner's node (word_gate).  One
 * yield lets whatever else is runnable on our CPU -- often a waiter of the
 * owner's node -- run first; more would leave the lock idle when nobody of
 * that node wants it.
 */
#define GATE_GRACE_YIELDS 1
/* ... and to a starving waiter, which may first have to be scheduled. */
#define STARVING_GRACE_YIELDS 4

static bool gate_expired(struct word_gate *gate)
{
	if (!gate->expired && cna_now_ns() >= gate->defer_until_ns)
		gate->expired = true;
	return gate->expired;
}

/*
 * We just lost the word to somebody else: once starving, say so -- when the
 * winner is of another node, since then the node preference is what
 * starves us.  Losing to our own node is the barging that NUMA ordering
 * off has too, and a mark there would only cost the others yields (NUMA
 * ordering on one node: 0.64-0.87 of off at 16 threads with it).
 */
static void gate_lost(struct word_gate *gate)
{
	if (!gate || !gate_expired(gate))
		return;
	uint32_t slot = atomic_load_explicit(gate->owner_node, memory_order_relaxed);
	uint32_t owner = slot & OWNER_NODE_MASK;
	if (!(slot & OWNER_STARVING) && owner != OWNER_NODE_UNKNOWN && owner != gate->mine)
		atomic_fetch_or_explicit(gate->owner_node, OWNER_STARVING, memory_order_relaxed);
}

/* The word is free: leave it to the last owner's node, or to a starving
 * waiter, for now? */
static bool gate_defers(struct word_gate *gate, unsigned *grace_used)
{
	if (!gate || gate->expired)
		return false;
	uint32_t slot = atomic_load_explicit(gate->owner_node, memory_order_relaxed);
	uint32_t owner = slot & OWNER_NODE_MASK;
	unsigned grace = GATE_GRACE_YIELDS;
	if (slot & OWNER_STARVING)
		grace = STARVING_GRACE_YIELDS;
	else if (owner == OWNER_NODE_UNKNOWN || owner == gate->mine)
		return false;
	if (*grace_used >= grace || gate_expired(gate))
		return false;
	++*grace_used;
	gate->deferrals++;
	return true;
}

/* Test-and-test-and-set; with stop_when_waited, give up once the word is 2. */
static int spin_on_word(_Atomic uint32_t *word, unsigned spin_budget, bool stop_when_waited,
			struct word_gate *gate)
{
	unsigned grace_used = 0;   /* yields in deference since the word was last held */
	for (unsigned i = 0; i < spin_budget; i++) {
		if (i && i % SPIN_ROUNDS_PER_YIELD == 0)
			platform_yield();
		uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
		if (seen == WORD_FREE) {
			if (gate_defers(gate, &grace_used)) {
				platform_yield();
				continue;
			}
			if (word_try_lock(word))
				return WORD_SPIN_ACQUIRED;
			gate_lost(gate);
		} else {
			grace_used = 0;
		}
		if (stop_when_waited && seen == WORD_HELD_SLEEPERS)
			return WORD_SPIN_WAITED_ON;
		cpu_relax();
	}
	return WORD_SPIN_SPENT;
}

bool word_spin_lock(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate)
{
	return spin_on_word(word, spin_budget, false, gate) == WORD_SPIN_ACQUIRED;
}

int word_spin_unwaited(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate)
{
	return spin_on_word(word, spin_budget, true, gate);
}

/*
 * A sleeper woken by an unlock finds the word free, and the gate may leave
 * it to the owner's node for a moment first; it takes it glibc's way all
 * the same, so the wake chain of the sleepers behind it holds.
 */
bool word_lock_sleeping(_Atomic uint32_t *word, struct word_gate *gate)
{
	bool slept = false;
	unsigned grace_used = 0;
	for (;;) {
		if (slept && atomic_load_explicit(word, memory_order_relaxed) == WORD_FREE &&
		    gate_defers(gate, &grace_used))
			platform_yield();
		/* x -> 2.  Acquire: pairs with the release exchange in
		 * word_unlock() (or glibc's own unlock, which does the same). */
		if (atomic_exchange_explicit(word, WORD_HELD_SLEEPERS,
					     memory_order_acquire) == WORD_FREE)
			return slept;
		if (slept)
			gate_lost(gate);   /* woken, and somebody else had it first */
		futex_wait_private(word, WORD_HELD_SLEEPERS);
		slept = true;
		grace_used = 0;
	}
}

bool word_lock_as_first_waiter(_Atomic uint32_t *word, struct word_gate *gate)
{
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		if (seen == WORD_HELD_SLEEPERS)
			return false;           /* somebody waits on it already */
		if (seen == WORD_FREE) {
			if (word_try_lock(word))
				return true;
			seen = atomic_load_explicit(word, memory_order_relaxed);
			continue;
		}
		/* 1 -> 2: we are its waiter.  Relaxed: nothing is acquired
		 * here; the exchange in word_lock_sleeping() acquires. */
		if (atomic_compare_exchange_weak_explicit(word, &seen, WORD_HELD_SLEEPERS,
							  memory_order_relaxed,
							  memory_order_relaxed))
			break;
	}
	word_lock_sleeping(word, gate);
	return true;
}

bool word_lock_as_head(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate)
{
	if (word_spin_lock(word, spin_budget, gate))
		return false;
	CNA_INJECT();
	word_lock_sleeping(word, gate);
	return true;
}

static bool valid_timespec(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

int word_lock_until(_Atomic uint32_t *word, clockid_t clock,
		    const struct timespec *abstime, unsigned spin_budget,
		    struct word_gate *gate)
{
	if (word_spin_lock(word, spin_budget, gate))
		return 0;
	if (!valid_timespec(abstime))
		return EINVAL;
	if (abstime->tv_sec < 0)
		return ETIMEDOUT;
	/* x -> 2.  Acquire: pairs with the release exchange in word_unlock(). */
	while (atomic_exchange_explicit(word, WORD_HELD_SLEEPERS,
					memory_order_acquire) != WORD_FREE) {
		int err = futex_wait_abs_private(word, WORD_HELD_SLEEPERS, clock, abstime);
		if (err == ETIMEDOUT || err == EINVAL)
			return err;
	}
	return 0;
}
