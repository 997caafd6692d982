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
 * Acquire the word as a queue head: spin with test-and-test-and-set for
 * spin_budget rounds, then sleep on it as glibc does (set 2, futex wait).
 * Returns true if it slept.
 */
bool word_lock_as_head(_Atomic uint32_t *word, unsigned spin_budget);

/* Test-and-test-and-set for up to spin_budget rounds; true if acquired. */
bool word_spin_lock(_Atomic uint32_t *word, unsigned spin_budget);

/* glibc's own contended wait: x -> 2 until the old value was 0. */
void word_lock_sleeping(_Atomic uint32_t *word);

/*
 * Timed acquisition on the word alone (never queues, so giving up leaves no
 * trace but a 2 that a later unlock wakes harmlessly).  Returns 0,
 * ETIMEDOUT or EINVAL (bad tv_nsec, only checked when it has to wait).
 */
int word_lock_until(_Atomic uint32_t *word, clockid_t clock,
		    const struct timespec *abstime, unsigned spin_budget);

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
