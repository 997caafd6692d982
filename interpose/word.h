/* interpose/word.h — waiting on and releasing glibc's mutex word. */
#ifndef INTERPOSE_WORD_H
#define INTERPOSE_WORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../cna/futex.h"
#include "glibc_mutex.h"

/*
 * A waiter's preference for the domain that holds the lock (NULL: none).
 * Moving a lock to another CPU moves its lines (the word, the data it
 * guards), and between nodes that costs most; so while the mutex's last
 * owner ran elsewhere, a word seen free is left alone for a few yields,
 * for the owner itself, coming back, or a waiter of its domain to take:
 * the lock serves a batch there before it moves.  Two levels, each with
 * its own deadline: the node (with NUMA ordering on and more than one
 * node), up to the threshold, and the CPU, for a shorter time
 * (CNAMUTEX_CPU_BATCH_US).  While we defer
 * to a busy owner elsewhere, the spin budget counts only rounds the word
 * stays held, so a lock that keeps changing hands there does not send us
 * to sleep, but one held long does.
 *
 * Past its node deadline a waiter is starving: it defers no more, and each
 * attempt it loses to another node's owner marks the mutex OWNER_STARVING,
 * which makes every other gated waiter leave a free word alone longer, so
 * that the starving one gets it.  Past the CPU deadline it simply competes
 * as an ungated waiter does.  Every deference is bounded, so a stale mark
 * costs yields, never the lock.
 */
struct gate_level {
	uint32_t mask;        /* the owner slot's bits naming this level's domain; 0: unused */
	uint32_t mine;        /* our domain, as those bits (0: not known) */
	uint64_t until_ns;    /* we defer at this level until then */
	bool expired;         /* until_ns has passed */
};

/* Bounds of a gate's grace (word.c says how it is learnt). */
#define WORD_GATE_GRACE_MIN 0u
#define WORD_GATE_GRACE_MAX 4u

struct word_gate {
	_Atomic uint32_t *owner_slot;       /* locality.h's slot: owner's node and CPU */
	struct gate_level node, cpu;
	unsigned grace;                     /* yields per free word, learnt (word.c) */
	unsigned probes;                    /* free words seen at grace 0 */
	unsigned deferrals;                 /* free words left alone (read by the word-gate test) */
};

/*
 * A waiter that may ask for the word once its wait passes the threshold
 * (word_handoff.h).  NULL where nobody may: timed waits, bare words.
 */
struct word_starving {
	_Atomic uint32_t *slot;       /* the mutex's handoff slot */
	uint64_t deadline_ns;         /* past it, ask */
	bool handed;                  /* out: the owner handed us the word */
};

/*
 * Acquire the word as a queue head: spin with test-and-test-and-set for
 * spin_budget rounds, then sleep on it as glibc does (set 2, futex wait).
 * Returns true if it slept.
 */
bool word_lock_as_head(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate,
		       struct word_starving *starving);

/*
 * A newcomer's spin: test-and-test-and-set for up to spin_budget rounds,
 * but only while nobody waits on the word (1, not 2 or 3).  Once somebody
 * waits, spinning would only race the waiters for the word (and, with NUMA
 * ordering, take the lock out of the queue's order): queue instead, as
 * qspinlock does when the lock has a pending or queued waiter.
 */
enum { WORD_SPIN_ACQUIRED, WORD_SPIN_WAITED_ON, WORD_SPIN_SPENT };
int word_spin_unwaited(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate);

/*
 * The first waiter of a held word waits on the word itself, as glibc's
 * waiters do, without queueing (qspinlock's pending waiter in user space):
 * if the word is 1 (held, nobody waiting) set it to 2, sleep, and take it
 * the glibc way.  Returns false at once if the word is 2 or 3 already: then
 * somebody waits on it and the caller should queue.  True once acquired.
 */
bool word_lock_as_first_waiter(_Atomic uint32_t *word, struct word_gate *gate,
			       struct word_starving *starving);

/* Test-and-test-and-set for up to spin_budget rounds; true if acquired. */
bool word_spin_lock(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate);

/*
 * glibc's own contended wait: x -> 2 until the old value was 0.  Whoever
 * may have been woken from the word's futex must take it this way, never
 * with 0 -> 1: others may still sleep there, and the 2 it leaves is what
 * makes the next unlock wake them.  Past the starving deadline it asks for
 * the word instead of sleeping again.  Returns true if it slept.
 */
bool word_lock_sleeping(_Atomic uint32_t *word, struct word_gate *gate,
			struct word_starving *starving);

/*
 * Timed acquisition on the word alone (never queues, so giving up leaves no
 * trace but a 2 that a later unlock wakes harmlessly).  Returns 0,
 * ETIMEDOUT or EINVAL (bad tv_nsec, only checked when it has to wait).
 */
int word_lock_until(_Atomic uint32_t *word, clockid_t clock,
		    const struct timespec *abstime, unsigned spin_budget,
		    struct word_gate *gate);

/* The unlock swapped out a 2 or a 3 (old): wake one sleeper, or take the
 * word straight back for the starving waiter that asked for it and hand
 * it over.  Returns 0, for word_unlock() to return: as a tail call it
 * keeps the fast path free of a stack frame. */
int word_unlock_waited(_Atomic uint32_t *word, _Atomic uint32_t *handoff_slot, uint32_t old);

/*
 * x -> 0, as glibc does, and if x was 2 or 3 word_unlock_waited().
 * handoff_slot may be NULL (a bare word: nobody asks).  Returns 0
 * (pthread_mutex_unlock's result).
 */
static inline int word_unlock(_Atomic uint32_t *word, _Atomic uint32_t *handoff_slot)
{
	uint32_t old;
	if (__libc_single_threaded) {
		/* No other thread: plain accesses, as glibc does.  (A 3 here was
		 * asked for by a thread of the parent of a fork.) */
		old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, WORD_FREE, memory_order_relaxed);
	} else {
		/* Release: pairs with the acquire CAS/exchange of the next locker. */
		old = atomic_exchange_explicit(word, WORD_FREE, memory_order_release);
	}
	if (__builtin_expect(old <= WORD_HELD, 1))
		return 0;
	return word_unlock_waited(word, handoff_slot, old);
}

#endif
