/* interpose/word_handoff.h — an owner hands the word to a starving waiter.
 *
 * A waiter on the word competes with every thread that takes a free word,
 * the owner coming straight back included: on one hot mutex it can lose at
 * every release, past any threshold.  So a waiter whose wait has passed
 * the threshold asks for the word, and the next unlock hands it over:
 * the unlock swaps in the 0 as glibc's does, sees the request in the value
 * it swapped out, takes the word straight back (CAS 0 -> 2, a few
 * instructions later, before a barger can have fetched the line to see
 * the 0) and grants it.  Keeping glibc's exchange keeps every unlock one
 * atomic; a CAS 1 -> 0 that left a requested word held would have cost
 * the unlock that finds a 2 a second atomic (2-3% in the simulator's
 * leveldb-like profile).
 *
 * The request is the word's value WORD_HELD_HANDOFF (3) plus this
 * process's token in the handoff slot, the third 32 bits of the mutex's
 * __list (locality.h, word_spinner.h: glibc touches __list only for robust
 * mutexes).  glibc's own paths treat a 3 as they treat a 2: its unlock
 * frees the word and wakes one sleeper, its waiters swap in 2 and sleep.
 * Either only withdraws the request (the waiter sees a 0 or a 2 and asks
 * again), never a lock.  The states of one request:
 *
 *   slot 0 --(a starving waiter claims it)--> token
 *     word 1 or 2 --(the claimant asks)--> 3
 *     word 3 --(the owner's unlock: 0, then CAS 0 -> 2)--> slot GRANTED:
 *               the claimant owns the mutex; it sets the slot to 0
 *     word 3 --(glibc's unlock, ours with a foreign token, or ours whose
 *               CAS a barger beat)--> 0, one sleeper woken: the claimant
 *               competes for the free word
 *     word 3 --(a sleeper swaps in 2)--> 2: the claimant asks again
 *   token --(the claimant takes a free word, or withdraws)--> 0
 *
 * Only the claimant writes a 3, and only an unlocker that holds the word
 * again grants, so a GRANTED slot always names a held word and its one
 * new owner.  The token is the
 * process id (plus 2, clear of NONE and GRANTED), read only on these rare
 * paths, so a forked child has its own without writing a page at fork: a
 * request of a thread that existed only in the parent is never granted
 * there, and the child's unlock frees the word as glibc's would.  (A
 * child in a new PID namespace can have its parent's pid number, 1 when
 * both are a namespace's init; a request pending at that fork would then
 * be granted to nobody in the child.)
 */
#ifndef INTERPOSE_WORD_HANDOFF_H
#define INTERPOSE_WORD_HANDOFF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cna/platform.h"
#include "glibc_mutex.h"

_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list) >= 3 * sizeof(uint32_t),
	       "room for the owner slot, the spinner claim and the handoff slot");

#define WORD_HANDOFF_NONE 0u
#define WORD_HANDOFF_GRANTED 1u

static inline _Atomic uint32_t *mutex_handoff_slot(pthread_mutex_t *m)
{
	return (_Atomic uint32_t *)(void *)((char *)&m->__data.__list + 2 * sizeof(uint32_t));
}

/* This process's token: never NONE or GRANTED, and another in a child. */
static inline uint32_t word_handoff_token(void)
{
	return (uint32_t)platform_getpid() + 2u;
}

/* Become the waiter that may ask for the word; mine is
 * word_handoff_token(), which the caller keeps for its withdrawal (each
 * read is a getpid).  Relaxed: the word's 3, written after this with
 * release, is what publishes the claim. */
static inline bool word_handoff_claim(_Atomic uint32_t *slot, uint32_t mine)
{
	uint32_t seen = atomic_load_explicit(slot, memory_order_relaxed);
	if (seen == mine || seen == WORD_HANDOFF_GRANTED)
		return false;   /* another waiter of ours asks, or was just handed it */
	/* NONE, or a token of the process we were forked from. */
	return atomic_compare_exchange_strong_explicit(slot, &seen, mine,
						       memory_order_relaxed,
						       memory_order_relaxed);
}

/* The claimant is done, however it got the word (it owns the mutex). */
static inline void word_handoff_release(_Atomic uint32_t *slot)
{
	atomic_store_explicit(slot, WORD_HANDOFF_NONE, memory_order_relaxed);
}

/* The unlock that took a requested word back: hand it over if one of our
 * threads still asks for it.  Release: pairs with the claimant's acquire
 * load of the slot, so it sees our critical section. */
static inline bool word_handoff_grant(_Atomic uint32_t *slot)
{
	uint32_t expected = word_handoff_token();
	return atomic_compare_exchange_strong_explicit(slot, &expected, WORD_HANDOFF_GRANTED,
						       memory_order_release,
						       memory_order_relaxed);
}

/* Acquire: pairs with the release CAS in word_handoff_grant(). */
static inline bool word_handoff_granted(_Atomic uint32_t *slot)
{
	return atomic_load_explicit(slot, memory_order_acquire) == WORD_HANDOFF_GRANTED;
}

#endif
