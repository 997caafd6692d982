/* interpose/word_spinner.h — one newcomer at a time spins on a mutex's word.
 *
 * A newcomer that spins on the word before queueing reads its line at
 * every round, and at each release every such spinner fetches the line
 * again and tries its CAS: with many of them each transfer waits behind
 * all their fetches, and the owner's unlock behind their CASes.  So, like
 * qspinlock's pending waiter, only one newcomer spins on the word; the
 * others go on at once (wait on the word as its first waiter, or queue,
 * where only the head watches the word).  In the simulator's 4-socket
 * leveldb-like profile at 8 threads, with every newcomer spinning, the DB
 * mutex was held 395 ns an acquisition, 265 of them in the unlock's
 * exchange behind the spinners' fetches, and 586 ns passed from a release
 * to the next acquisition (an MCS lock: 172 and 88 ns); with one spinner
 * the profile runs 1.00 Mops/s instead of 0.51 (glibc 1.32).
 *
 * Only while no more threads have contended than the process has CPUs
 * (contended.c): with more, a claimant is often preempted, and the claim
 * would only keep the others from spinning meanwhile and send them to
 * sleep on the word (on this 2-CPU VM, the tiny critical section at 8 and
 * 16 threads: the shim kept 1.07 of the CPUs busy with the claim, glibc
 * 1.99; the 2-socket model's leveldb-like profile at 96 threads on its 72
 * CPUs: 0.75 of glibc with the claim, 0.83 without).
 *
 * The claim is a hint kept in the upper half of the mutex's __list, which
 * glibc touches only for robust mutexes (never taken over, locality.h):
 * the clock, in units of WORD_SPINNER_TICK_SHIFT bits of nanoseconds, when
 * the spinner began, or 0.  A claim older than WORD_SPINNER_STALE_TICKS is
 * free again, so a spinner preempted for long, or one that existed only in
 * the parent of a fork, never keeps the others from spinning for long.  Two
 * spinners at once (a stale claim taken over while its spinner still
 * spins) cost only line transfers: exclusion never depends on the claim.
 */
#ifndef INTERPOSE_WORD_SPINNER_H
#define INTERPOSE_WORD_SPINNER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "locality.h"

#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(offsetof(pthread_mutex_t, __data.__list) + 4 == 28, "claim offset");
#endif
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list) >= 2 * sizeof(uint32_t),
	       "room for the owner slot and the spinner claim");

/* ~1 us ticks; a claim is stale after ~1 ms, a few times the longest
 * pre-queue spin that is not preempted (1000/8 rounds and their yields). */
#define WORD_SPINNER_TICK_SHIFT 10
#define WORD_SPINNER_STALE_TICKS 1024u

static inline _Atomic uint32_t *word_spinner_claim(pthread_mutex_t *m)
{
	return (_Atomic uint32_t *)(void *)((char *)&m->__data.__list + sizeof(uint32_t));
}

static inline uint32_t word_spinner_tick(uint64_t now_ns)
{
	return (uint32_t)(now_ns >> WORD_SPINNER_TICK_SHIFT) | 1u;   /* never 0 */
}

/* Become m's spinner at now_ns, unless a fresh claim names another.
 * Relaxed: a hint, ordering nothing. */
static inline bool word_spinner_try_claim(pthread_mutex_t *m, uint64_t now_ns)
{
	_Atomic uint32_t *claim = word_spinner_claim(m);
	uint32_t mine = word_spinner_tick(now_ns);
	uint32_t seen = atomic_load_explicit(claim, memory_order_relaxed);
	if (seen && mine - seen < WORD_SPINNER_STALE_TICKS)
		return false;
	return atomic_compare_exchange_strong_explicit(claim, &seen, mine,
						       memory_order_relaxed,
						       memory_order_relaxed);
}

static inline void word_spinner_release(pthread_mutex_t *m)
{
	atomic_store_explicit(word_spinner_claim(m), 0, memory_order_relaxed);
}

#endif
