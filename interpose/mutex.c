/* interpose/mutex.c — pthread_mutex_* with glibc's semantics, CNA when contended.
 *
 * NORMAL (glibc's TIMED), ADAPTIVE, ERRORCHECK and RECURSIVE mutexes are
 * ours; robust, priority-inheritance, priority-protect and process-shared
 * ones go to glibc unchanged.  Field updates follow glibc's
 * pthread_mutex_lock.c / pthread_mutex_unlock.c so either side may lock or
 * unlock what the other locked.
 */
#include "mutex.h"

#include <errno.h>
#include <stdbool.h>

#include "contended.h"
#include "glibc_mutex.h"
#include "profile.h"
#include "real.h"
#include "stats.h"
#include "thread.h"
#include "word.h"
#include "word_handoff.h"

#define EXPORT __attribute__((visibility("default")))

static inline bool checks_owner(int type)
{
	return type == PTHREAD_MUTEX_RECURSIVE_NP || type == PTHREAD_MUTEX_ERRORCHECK_NP;
}

/*
 * The caller already owns m: the answer for a RECURSIVE or ERRORCHECK
 * mutex (0 after counting one more level, EAGAIN, or EDEADLK).
 */
static int relock_by_owner(pthread_mutex_t *m, int type)
{
	if (type == PTHREAD_MUTEX_ERRORCHECK_NP)
		return EDEADLK;
	if (m->__data.__count + 1 == 0)
		return EAGAIN;
	m->__data.__count++;
	return 0;
}

static inline void become_owner(pthread_mutex_t *m, int type, pid_t tid)
{
	thread_self()->acquisitions++;
	mutex_set_owner(m, tid);
	if (type == PTHREAD_MUTEX_RECURSIVE_NP)
		m->__data.__count = 1;
	m->__data.__nusers++;
}

static inline void count_fast(pthread_mutex_t *m)
{
	if (__builtin_expect(instrument_enabled, 0))
		instrument_fast_acquisition(m);
}

/* Any kind but NORMAL: pass-through kinds, and the owner checks. */
__attribute__((noinline)) static int lock_other_kind(pthread_mutex_t *m, int kind)
{
	if (!glibc_kind_is_queueable(kind))
		return real()->mutex_lock(m);
	int type = kind & GLIBC_KIND_TYPE_MASK;
	pid_t tid = thread_tid();
	if (checks_owner(type) && mutex_owner(m) == tid)
		return relock_by_owner(m, type);

	if (word_lock_uncontended(mutex_word(m)))
		count_fast(m);
	else
		contended_lock(m);
	become_owner(m, type, tid);
	return 0;
}

/* NORMAL, when the fast path below does not apply: first use by this
 * thread, statistics on, or the word taken.  It also gives the fast path
 * the tid it needs, unless statistics or the profile count every
 * acquisition here. */
__attribute__((noinline)) static int lock_normal_slow(pthread_mutex_t *m)
{
	if (word_lock_uncontended(mutex_word(m)))
		count_fast(m);
	else
		contended_lock(m);
	struct cnamutex_thread *self = thread_self();
	pid_t tid = thread_tid();
	self->fast_tid = instrument_enabled ? 0 : tid;
	self->acquisitions++;
	mutex_set_owner(m, tid);
	m->__data.__nusers++;
	return 0;
}

int cnamutex_lock(pthread_mutex_t *m)
{
	int kind = mutex_kind(m);
	if (__builtin_expect(kind != PTHREAD_MUTEX_NORMAL, 0))
		return lock_other_kind(m, kind);

	/* The common case, NORMAL/DEFAULT: glibc's fast path and no call, so
	 * the compiler saves no registers on it.  fast_tid is 0 until the
	 * thread's first lock and while instrumenting: one test for both.  The
	 * count is the CPU gate's measure of progress (cpu_batch.h). */
	pid_t tid = cnamutex_self.fast_tid;
	if (__builtin_expect(tid != 0 && word_lock_uncontended(mutex_word(m)), 1)) {
		mutex_set_owner(m, tid);
		m->__data.__nusers++;
		cnamutex_self.acquisitions++;
		return 0;
	}
	return lock_normal_slow(m);
}

int cnamutex_trylock(pthread_mutex_t *m)
{
	int kind = mutex_kind(m);
	if (__builtin_expect(!glibc_kind_is_queueable(kind), 0))
		return real()->mutex_trylock(m);
	int type = kind & GLIBC_KIND_TYPE_MASK;
	pid_t tid = thread_tid();
	/* glibc: only RECURSIVE counts; ERRORCHECK relock by the owner is EBUSY. */
	if (type == PTHREAD_MUTEX_RECURSIVE_NP && mutex_owner(m) == tid)
		return relock_by_owner(m, type);
	if (!word_lock_uncontended(mutex_word(m)))
		return EBUSY;
	count_fast(m);
	become_owner(m, type, tid);
	return 0;
}

int cnamutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return EINVAL;
	int kind = mutex_kind(m);
	if (__builtin_expect(!glibc_kind_is_queueable(kind), 0))
		return real()->mutex_clocklock(m, clock, abstime);
	int type = kind & GLIBC_KIND_TYPE_MASK;
	pid_t tid = thread_tid();
	if (checks_owner(type) && mutex_owner(m) == tid)
		return relock_by_owner(m, type);

	if (word_lock_uncontended(mutex_word(m))) {
		count_fast(m);
	} else {
		int err = contended_lock_until(m, clock, abstime);
		if (err)
			return err;
	}
	become_owner(m, type, tid);
	return 0;
}

/* Returns 0, pthread_mutex_unlock's result (word_unlock() says why). */
static inline __attribute__((always_inline)) int release(pthread_mutex_t *m)
{
	mutex_set_owner(m, 0);
	m->__data.__nusers--;
	return word_unlock(mutex_word(m), mutex_handoff_slot(m));
}

/* Any kind but NORMAL: pass-through kinds, and the owner checks. */
__attribute__((noinline)) static int unlock_other_kind(pthread_mutex_t *m, int kind)
{
	if (!glibc_kind_is_queueable(kind))
		return real()->mutex_unlock(m);
	int type = kind & GLIBC_KIND_TYPE_MASK;
	if (type == PTHREAD_MUTEX_RECURSIVE_NP) {
		if (mutex_owner(m) != thread_tid())
			return EPERM;
		if (--m->__data.__count != 0)
			return 0;
	} else if (type == PTHREAD_MUTEX_ERRORCHECK_NP) {
		if (mutex_owner(m) != thread_tid() ||
		    atomic_load_explicit(mutex_word(m), memory_order_relaxed) == WORD_FREE)
			return EPERM;
	}
	return release(m);
}

int cnamutex_unlock(pthread_mutex_t *m)
{
	int kind = mutex_kind(m);
	if (__builtin_expect(kind != PTHREAD_MUTEX_NORMAL, 0))
		return unlock_other_kind(m, kind);
	return release(m);
}

/* Aliases, not wrappers: the fast path is one function with no extra jump. */
EXPORT int pthread_mutex_lock(pthread_mutex_t *m) __attribute__((alias("cnamutex_lock")));
EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) __attribute__((alias("cnamutex_trylock")));
EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) __attribute__((alias("cnamutex_unlock")));

EXPORT int pthread_mutex_timedlock(pthread_mutex_t *restrict m,
				   const struct timespec *restrict abstime)
{
	int kind = mutex_kind(m);
	if (__builtin_expect(!glibc_kind_is_queueable(kind), 0))
		return real()->mutex_timedlock(m, abstime);
	return cnamutex_clocklock(m, CLOCK_REALTIME, abstime);
}

EXPORT int pthread_mutex_clocklock(pthread_mutex_t *restrict m, clockid_t clock,
				   const struct timespec *restrict abstime)
{
	return cnamutex_clocklock(m, clock, abstime);
}

/* Pass-through: glibc initialises and checks the fields we keep its way. */
EXPORT int pthread_mutex_init(pthread_mutex_t *restrict m,
			      const pthread_mutexattr_t *restrict attr)
{
	return real()->mutex_init(m, attr);
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	return real()->mutex_destroy(m);
}

EXPORT int pthread_mutex_consistent(pthread_mutex_t *m)
{
	return real()->mutex_consistent(m);
}

EXPORT int pthread_mutex_getprioceiling(const pthread_mutex_t *restrict m,
					int *restrict ceiling)
{
	return real()->mutex_getprioceiling(m, ceiling);
}

EXPORT int pthread_mutex_setprioceiling(pthread_mutex_t *restrict m, int ceiling,
					int *restrict old_ceiling)
{
	return real()->mutex_setprioceiling(m, ceiling, old_ceiling);
}
