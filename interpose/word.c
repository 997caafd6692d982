/* interpose/word.c — waiting on glibc's mutex word (protocol in glibc_mutex.h). */
#include "word.h"

#include <errno.h>

#include "../cna/cna.h"
#include "locality.h"
#include "word_handoff.h"


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
 * A waiter of another node than the owner's waits this many yields more
 * than one of the owner's node on another CPU: when the owner's CPU stops
 * taking the lock (its thread was preempted, or is done), the lock then
 * moves to a CPU of its node first.  With both equally patient, the lock
 * moved at random at the end of each CPU's batch: on two virtual nodes,
 * tiny critical section, 8 and 16 threads, 0.50 of transfers same-node
 * with 0 more yields, 0.74 and 0.86 with 2, 0.90 and 0.96 with 6.  But 6
 * cost leveldb readrandom at 16 threads 8% of its throughput against NUMA
 * ordering off (0.918 of off, 0.94 same-node).  With 3: 0.966-0.969 of off
 * at 16 threads (0.87-0.90 same-node), but 0.79-0.83 same-node at 8; with
 * 4: 0.950 at 16 (0.92 same-node), 0.975-0.977 and 0.84-0.85 at 8 (slow
 * mode, median of 5 pairs, 2-3 runs each).
 */
#define NODE_EXTRA_GRACE_YIELDS 4
/* At a grace of 0, every this many free words seen one deference anyway,
 * so that a waiter whose owners have started coming back learns it. */
#define GATE_PROBE_EVERY 8
/* How many yields a free word is left to a starving waiter, which may
 * first have to be scheduled. */
#define STARVING_GRACE_YIELDS 4
/*
 * While the owner is elsewhere, a spin ends once the word has stayed held
 * this many rounds in a row, whatever the budget left: the owner holds it
 * long, and sleeping is cheaper.  Below that the budget does not apply,
 * since what a spin spends deferring says nothing of how long the lock is
 * held (counting it sent mutexbench's waiters to sleep on every attempt).
 */
#define GATE_HELD_ROUNDS 32
/*
 * A waiter that asked for the word spins for it (a handover comes within
 * one critical section) for up to this many rounds, yielding every
 * SPIN_ROUNDS_PER_YIELD, then withdraws and sleeps on the word until the
 * next wake: a SCHED_FIFO waiter must not spin out an owner it preempted.
 */
#define STARVING_SPIN_ROUNDS 4096

static bool level_open(struct gate_level *level)
{
	if (!level->expired && cna_now_ns() >= level->until_ns)
		level->expired = true;
	return level->expired;
}

/* The owner recorded in slot is outside our domain at this level. */
static bool level_elsewhere(const struct gate_level *level, uint32_t slot)
{
	uint32_t owner = slot & level->mask;
	return level->mask && level->mine && owner && owner != level->mine;
}

/* The last owner ran outside our domain at a level where we still defer. */
static bool gate_owner_elsewhere(struct word_gate *gate)
{
	if (!gate)
		return false;
	uint32_t slot = atomic_load_explicit(gate->owner_slot, memory_order_relaxed);
	return (level_elsewhere(&gate->node, slot) && !level_open(&gate->node)) ||
	       (level_elsewhere(&gate->cpu, slot) && !level_open(&gate->cpu));
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
	if (!gate || !gate->node.mask || !level_open(&gate->node))
		return;
	uint32_t slot = atomic_load_explicit(gate->owner_slot, memory_order_relaxed);
	if (!(slot & OWNER_STARVING) && level_elsewhere(&gate->node, slot))
		atomic_fetch_or_explicit(gate->owner_slot, OWNER_STARVING, memory_order_relaxed);
}

/* The word is free: leave it to the last owner's domain, or to a starving
 * waiter, for now? */
static bool gate_defers(struct word_gate *gate, unsigned *grace_used)
{
	if (!gate)
		return false;
	if (gate->node.mask && level_open(&gate->node))
		return false;   /* starving: we defer to nobody */
	uint32_t slot = atomic_load_explicit(gate->owner_slot, memory_order_relaxed);
	unsigned grace = gate->grace;
	if (slot & OWNER_STARVING)
		grace = STARVING_GRACE_YIELDS;
	else if (level_elsewhere(&gate->node, slot))
		grace += NODE_EXTRA_GRACE_YIELDS;   /* not open: checked above */
	else if (!level_elsewhere(&gate->cpu, slot) || level_open(&gate->cpu))
		return false;
	else if (grace == 0 && ++gate->probes % GATE_PROBE_EVERY == 0)
		grace = 1;   /* now and then, see whether deferring pays again */
	if (*grace_used >= grace)
		return false;
	++*grace_used;
	gate->deferrals++;
	return true;
}

/*
 * How many yields a free word is left to the owner's domain (word_gate)
 * each time it is seen free: the waiter's own grace, between word.h's bounds.
 * A yield lets whatever else is runnable on our CPU -- often a waiter of
 * the owner's domain -- run first, and gives the owner time to come back.
 * A deference the owner's domain used raises the grace, one that left the
 * lock idle or saw it go elsewhere lowers it.  With a fixed grace of one, a
 * waiter took the word whenever the owner's work outside the lock
 * outlasted a yield, and the lock moved nearly as often as without the gate
 * (mutexbench, 2 threads: 3.8M ops/s, 4.3M with 4, 6.8M for one thread
 * alone); with a fixed 4, leveldb readrandom's waiters, whose owners seldom
 * come back soon, left the lock idle (2 threads: 1.00 of glibc, against
 * 1.04 without the gate).  Learning only whether anybody took the word
 * kept the grace at 4 with many waiters (somebody always does), and the
 * lock idled 4 yields at every transfer: in the simulator's 4-socket
 * leveldb-like profile at 142 threads 0.59 of glibc, 0.91 with the owner's
 * domain as the test, 1.07 with the grace allowed down to 0.
 *
 * Here a deference has ended: did it serve the owner's domain (the word was taken
 * meanwhile and the slot still names the same owner domain: the owner, or
 * one of its domain, came back), or was it wasted (left idle, or taken by
 * a waiter of another domain, who deferred no longer than we did)?
 * owner_before: the slot's bits when we deferred.
 */
static void gate_learn(struct word_gate *gate, bool taken, uint32_t owner_before)
{
	uint32_t domain = gate->node.mask | gate->cpu.mask;
	uint32_t owner_now = atomic_load_explicit(gate->owner_slot, memory_order_relaxed);
	bool used = taken && (owner_now & domain) == (owner_before & domain);
	if (used && gate->grace < WORD_GATE_GRACE_MAX)
		gate->grace++;
	else if (!used && gate->grace > WORD_GATE_GRACE_MIN)
		gate->grace--;
}

/* Leave the free word alone for a yield, then learn whether that served. */
static void gate_defer(_Atomic uint32_t *word, struct word_gate *gate)
{
	uint32_t owner_before = atomic_load_explicit(gate->owner_slot, memory_order_relaxed);
	platform_yield();
	gate_learn(gate, atomic_load_explicit(word, memory_order_relaxed) != WORD_FREE,
		   owner_before);
}

/* Test-and-test-and-set; with stop_when_waited, give up once the word is 2. */
static int spin_on_word(_Atomic uint32_t *word, unsigned spin_budget, bool stop_when_waited,
			struct word_gate *gate)
{
	unsigned grace_used = 0;   /* yields in deference since the word was last held */
	unsigned spent = 0;        /* rounds counted against spin_budget */
	unsigned held = 0;         /* rounds the word has stayed held */
	for (unsigned round = 1; spin_budget; round++) {
		if (round % SPIN_ROUNDS_PER_YIELD == 0)
			platform_yield();
		uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
		if (seen == WORD_FREE) {
			held = 0;
			if (gate_defers(gate, &grace_used)) {
				gate_defer(word, gate);
				continue;
			}
			if (word_try_lock(word))
				return WORD_SPIN_ACQUIRED;
			gate_lost(gate);
		} else {
			grace_used = 0;
			held++;
		}
		if (stop_when_waited && seen >= WORD_HELD_SLEEPERS)
			return WORD_SPIN_WAITED_ON;
		if (gate_owner_elsewhere(gate)) {
			if (held >= GATE_HELD_ROUNDS)
				break;
			platform_yield();
		} else {
			cpu_relax();
			if (++spent >= spin_budget)
				break;
		}
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
 * Past the deadline: claim the handoff slot, ask for the word (3) and spin
 * until the owner hands it over or it is free.  Returns true once acquired,
 * false if another waiter has the claim or the spin ran out (withdrawn).
 * Each round re-asks: glibc's waiters and ours swap a 3 for a 2.
 */
static bool lock_starving(_Atomic uint32_t *word, struct word_starving *starving)
{
	uint32_t token = word_handoff_token();
	if (!word_handoff_claim(starving->slot, token))
		return false;
	for (unsigned round = 1;; round++) {
		if (word_handoff_granted(starving->slot)) {
			/* Ours, still held: no 3 may outlive the request, and
			 * sleepers may exist, so 2. */
			atomic_store_explicit(word, WORD_HELD_SLEEPERS, memory_order_relaxed);
			word_handoff_release(starving->slot);
			starving->handed = true;
			return true;
		}
		uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
		if (seen == WORD_FREE) {
			/* Freed without a handover (glibc's unlock, ours before
			 * our 3, or ours that lost the word it freed to a barger):
			 * take it glibc's way, as we may have been woken.
			 * Acquire: pairs with the release exchange in
			 * word_unlock() or glibc's unlock. */
			if (atomic_exchange_explicit(word, WORD_HELD_SLEEPERS,
						     memory_order_acquire) == WORD_FREE) {
				word_handoff_release(starving->slot);
				return true;
			}
			continue;
		}
		/* Release: pairs with the acquire fence in
		 * word_unlock_waited(), which then sees our claim. */
		if (seen != WORD_HELD_HANDOFF &&
		    !atomic_compare_exchange_strong_explicit(word, &seen, WORD_HELD_HANDOFF,
							     memory_order_release,
							     memory_order_relaxed))
			continue;
		if (round >= STARVING_SPIN_ROUNDS) {
			uint32_t mine = token;
			/* If the grant came first, the word is ours after all. */
			if (!atomic_compare_exchange_strong_explicit(starving->slot, &mine,
								     WORD_HANDOFF_NONE,
								     memory_order_relaxed,
								     memory_order_relaxed))
				continue;
			/* Withdrawn: our 3 acts as a 2 now, and becomes one, so
			 * that the caller's futex wait on 2 sleeps. */
			uint32_t asked = WORD_HELD_HANDOFF;
			atomic_compare_exchange_strong_explicit(word, &asked, WORD_HELD_SLEEPERS,
								memory_order_relaxed,
								memory_order_relaxed);
			return false;
		}
		if (round % SPIN_ROUNDS_PER_YIELD == 0)
			platform_yield();
		else
			cpu_relax();
	}
}

static bool past_deadline(const struct word_starving *starving)
{
	return starving && cna_now_ns() >= starving->deadline_ns;
}

int word_unlock_waited(_Atomic uint32_t *word, _Atomic uint32_t *handoff_slot, uint32_t old)
{
	if (old == WORD_HELD_HANDOFF && handoff_slot) {
		/* The word has been free for these few instructions; a barger
		 * has to fetch its line to see the 0, so this CAS almost always
		 * wins it back (the slot is checked after, by the grant: its
		 * token costs a getpid).  2: sleepers may exist.  Acquire: pairs
		 * with the release CAS that wrote the 3 (lock_starving), so the
		 * claim in the slot is visible, and with the release of whoever
		 * took and freed the word in between, for the claimant to see. */
		uint32_t free_word = WORD_FREE;
		if (atomic_compare_exchange_strong_explicit(word, &free_word, WORD_HELD_SLEEPERS,
							    memory_order_acquire,
							    memory_order_relaxed)) {
			if (word_handoff_grant(handoff_slot))
				return 0;   /* the claimant owns it now */
			/* Nobody of ours asks (any more): free it again.
			 * Release: as in word_unlock(). */
			atomic_exchange_explicit(word, WORD_FREE, memory_order_release);
		}
	}
	futex_wake_private(word, 1);
	return 0;
}

/*
 * A sleeper woken by an unlock finds the word free, and the gate may leave
 * it to the owner's node for a moment first; it takes it glibc's way all
 * the same, so the wake chain of the sleepers behind it holds.
 */
bool word_lock_sleeping(_Atomic uint32_t *word, struct word_gate *gate,
			struct word_starving *starving)
{
	bool slept = false;
	bool may_ask = true;    /* once per wake: an owner holding long gets no spinner */
	unsigned grace_used = 0;
	for (;;) {
		if (slept && atomic_load_explicit(word, memory_order_relaxed) == WORD_FREE &&
		    gate_defers(gate, &grace_used))
			gate_defer(word, gate);
		/* x -> 2.  Acquire: pairs with the release CAS/exchange in
		 * word_unlock() (or glibc's own unlock, which does the same). */
		if (atomic_exchange_explicit(word, WORD_HELD_SLEEPERS,
					     memory_order_acquire) == WORD_FREE)
			return slept;
		if (slept)
			gate_lost(gate);   /* woken, and somebody else had it first */
		if (may_ask && past_deadline(starving)) {
			if (lock_starving(word, starving))
				return slept;
			may_ask = false;
		}
		/* 0: woken (EAGAIN, EINTR: the word changed, or a signal) */
		if (futex_wait_private(word, WORD_HELD_SLEEPERS) == 0)
			may_ask = true;
		slept = true;
		grace_used = 0;
	}
}

bool word_lock_as_first_waiter(_Atomic uint32_t *word, struct word_gate *gate,
			       struct word_starving *starving)
{
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);
	for (;;) {
		if (seen >= WORD_HELD_SLEEPERS)
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
	word_lock_sleeping(word, gate, starving);
	return true;
}

bool word_lock_as_head(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate,
		       struct word_starving *starving)
{
	if (word_spin_lock(word, spin_budget, gate))
		return false;
	CNA_INJECT();
	word_lock_sleeping(word, gate, starving);
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
