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
 * A waiter's node preference, with NUMA ordering on (NULL: none).  While
 * the mutex's last owner ran on another node than ours, a word seen free is
 * left alone for a yield, so that a waiter of the owner's node -- or the
 * owner itself, coming back -- takes it and keeps the lock's lines on that
 * node; if nobody does, we take it.  From defer_until_ns on (our wait has
 * lasted the threshold) we are starving: we defer no more, and each attempt
 * we lose marks the mutex OWNER_STARVING, which makes every other gated
 * waiter leave a free word alone for a few yields more, so that we get it.
 * Every deference is bounded, so a stale mark costs yields, never the lock.
 */
struct word_gate {
	_Atomic uint32_t *owner_node;       /* locality.h's slot: owner's node + 1 */
	uint32_t mine;                      /* our node + 1 */
	uint64_t defer_until_ns;
	bool expired;                       /* defer_until_ns has passed: starving */
	unsigned deferrals;                 /* free words left alone (read by the word-gate test) */
};

/*
 * Acquire the word as a queue head: spin with test-and-test-and-set for
 * spin_budget rounds, then sleep on it as glibc does (set 2, futex wait).
 * Returns true if it slept.
 */
bool word_lock_as_head(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate);

/*
 * A newcomer's spin: test-and-test-and-set for up to spin_budget rounds,
 * but only while nobody waits on the word (1, not 2).  Once somebody waits,
 * spinning would only race the waiters for the word (and, with NUMA
 * ordering, take the lock out of the queue's order): queue instead, as
 * qspinlock does when the lock has a pending or queued waiter.
 */
enum { WORD_SPIN_ACQUIRED, WORD_SPIN_WAITED_ON, WORD_SPIN_SPENT };
int word_spin_unwaited(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate);

/*
 * The first waiter of a held word waits on the word itself, as glibc's
 * waiters do, without queueing (qspinlock's pending waiter in user space):
 * if the word is 1 (held, nobody waiting) set it to 2, sleep, and take it
 * the glibc way.  Returns false at once if the word is 2 already: then
 * somebody waits on it and the caller should queue.  True once acquired.
 */
bool word_lock_as_first_waiter(_Atomic uint32_t *word, struct word_gate *gate);

/* Test-and-test-and-set for up to spin_budget rounds; true if acquired. */
bool word_spin_lock(_Atomic uint32_t *word, unsigned spin_budget, struct word_gate *gate);

/*
 * glibc's own contended wait: x -> 2 until the old value was 0.  Whoever
 * may have been woken from the word's futex must take it this way, never
 * with 0 -> 1: others may still sleep there, and the 2 it leaves is what
 * makes the next unlock wake them.  Returns true if it slept.
 */
bool word_lock_sleeping(_Atomic uint32_t *word, struct word_gate *gate);

/*
 * Timed acquisition on the word alone (never queues, so giving up leaves no
 * trace but a 2 that a later unlock wakes harmlessly).  Returns 0,
 * ETIMEDOUT or EINVAL (bad tv_nsec, only checked when it has to wait).
 */
int word_lock_until(_Atomic uint32_t *word, clockid_t clock,
		    const struct timespec *abstime, unsigned spin_budget,
		    struct word_gate *gate);

/* x -> 0; wake one sleeper if x was 2. */
static inline void word_unlock(_Atomic uint32_t *word)
{
	uint32_t old;
	if (__libc_single_threaded) {
		/* No other thread: plain accesses, as glibc does. */
		old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, WORD_FREE, memory_order_relaxed);
	} else {
		/* Release: pairs with the acquire CAS/exchange of the next locker. */
		old = atomic_exchange_explicit(word, WORD_FREE, memory_order_release);
	}
	if (__builtin_expect(old > WORD_HELD, 0))
		futex_wake_private(word, 1);
}

#endif
