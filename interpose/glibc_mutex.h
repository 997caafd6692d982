/* interpose/glibc_mutex.h — glibc's pthread_mutex_t layout and word protocol.
 *
 * The shim keeps every field exactly as glibc does, so glibc's internal
 * lock paths (pthread_cond_*wait's unlock and relock, destroy's EBUSY check)
 * keep working on mutexes the shim locks:
 *   __lock   0 free, 1 held, 2 held and a futex sleeper may exist.  A thread
 *            that sleeps on the word sets 2 first; an unlock that swaps out
 *            a value > 1 wakes one sleeper.  A 2 is never turned into a 1.
 *            3 is held with a starving waiter asking for it (the shim's
 *            word_handoff.h), which glibc treats as 2.
 *   __owner  kernel tid of the holder (0 when free).
 *   __count  recursion depth of a RECURSIVE mutex.
 *   __nusers holders by pthread_mutex_lock, for destroy's EBUSY check.
 *   __kind   the type in the low bits and glibc's flag bits above.
 */
#ifndef INTERPOSE_GLIBC_MUTEX_H
#define INTERPOSE_GLIBC_MUTEX_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>

/* glibc's internal __kind bits (nptl/pthreadP.h), stable ABI since 2.x. */
enum {
	GLIBC_KIND_TYPE_MASK = 3,        /* TIMED(NORMAL), RECURSIVE, ERRORCHECK, ADAPTIVE */
	GLIBC_KIND_ROBUST = 16,
	GLIBC_KIND_PRIO_INHERIT = 32,
	GLIBC_KIND_PRIO_PROTECT = 64,
	GLIBC_KIND_PSHARED = 128,
	GLIBC_KIND_ELISION = 256,
	GLIBC_KIND_NO_ELISION = 512,
};

/* Kinds the shim takes over; elision hints are ignored (no elision here). */
static inline int glibc_kind_is_queueable(int kind)
{
	return (kind & ~(GLIBC_KIND_TYPE_MASK | GLIBC_KIND_ELISION |
			 GLIBC_KIND_NO_ELISION)) == 0;
}

_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0, "__lock offset");
_Static_assert(offsetof(pthread_mutex_t, __data.__count) == 4, "__count offset");
_Static_assert(offsetof(pthread_mutex_t, __data.__owner) == 8, "__owner offset");
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(offsetof(pthread_mutex_t, __data.__nusers) == 12, "__nusers offset");
_Static_assert(offsetof(pthread_mutex_t, __data.__kind) == 16, "__kind offset");
#endif
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__lock) == sizeof(_Atomic uint32_t),
	       "the word is a 32-bit futex");
_Static_assert(alignof(_Atomic uint32_t) <= alignof(int), "word alignment");
_Static_assert(sizeof(_Atomic int) == sizeof(int), "owner/kind atomics");

enum { WORD_FREE = 0, WORD_HELD = 1, WORD_HELD_SLEEPERS = 2, WORD_HELD_HANDOFF = 3 };

static inline _Atomic uint32_t *mutex_word(pthread_mutex_t *m)
{
	return (_Atomic uint32_t *)&m->__data.__lock;
}

static inline int mutex_kind(pthread_mutex_t *m)
{
	return atomic_load_explicit((_Atomic int *)&m->__data.__kind,
				    memory_order_relaxed);
}

/* Read by other threads for the recursion/deadlock checks: relaxed atomics. */
static inline int mutex_owner(pthread_mutex_t *m)
{
	return atomic_load_explicit((_Atomic int *)&m->__data.__owner,
				    memory_order_relaxed);
}

static inline void mutex_set_owner(pthread_mutex_t *m, int tid)
{
	atomic_store_explicit((_Atomic int *)&m->__data.__owner, tid,
			      memory_order_relaxed);
}

/* Fast path: 0 -> 1.  Acquire pairs with the release CAS/exchange in word_unlock(). */
static inline int word_try_lock(_Atomic uint32_t *word)
{
	uint32_t expected = WORD_FREE;
	return atomic_compare_exchange_strong_explicit(word, &expected, WORD_HELD,
						       memory_order_acquire,
						       memory_order_relaxed);
}

/*
 * The uncontended acquisition, as glibc does it: while the process has a
 * single thread (glibc's __libc_single_threaded, never set back once a
 * thread was created) nobody can race us, so plain accesses do; otherwise
 * the CAS.
 */
static inline int word_lock_uncontended(_Atomic uint32_t *word)
{
	if (__libc_single_threaded) {
		if (atomic_load_explicit(word, memory_order_relaxed) != WORD_FREE)
			return 0;
		atomic_store_explicit(word, WORD_HELD, memory_order_relaxed);
		return 1;
	}
	return word_try_lock(word);
}

#endif
