/* cna/futex.h — thin wrappers over the futex(2) system call.
 *
 * Shared by the queue (parking on a node) and the shim (sleeping on the
 * mutex word).  Every wait may return early (EINTR, EAGAIN, a spurious or
 * stale wake); callers always re-check their condition in a loop.
 */
#ifndef CNA_FUTEX_H
#define CNA_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

#ifdef CNA_SIMULATED
/* The simulator (bench/sim) provides these, with the semantics below. */
int futex_wait_private(_Atomic uint32_t *word, uint32_t expected);
int futex_wait_abs_private(_Atomic uint32_t *word, uint32_t expected,
			   clockid_t clock, const struct timespec *abstime);
void futex_wake_private(_Atomic uint32_t *word, int n);
bool futex_requeue_one_private(_Atomic uint32_t *from, uint32_t expected,
			       _Atomic uint32_t *to);
#else

/* Wait while *word == expected.  Returns 0 or the errno of the wait. */
static inline int futex_wait_private(_Atomic uint32_t *word, uint32_t expected)
{
	long rc = syscall(SYS_futex, (uint32_t *)word,
			  FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, NULL, NULL, 0);
	return rc == 0 ? 0 : errno;
}

/*
 * Wait while *word == expected, until the absolute time abstime on clock
 * (CLOCK_REALTIME or CLOCK_MONOTONIC).  Returns 0, ETIMEDOUT, EINTR, EAGAIN
 * or EINVAL.
 */
static inline int futex_wait_abs_private(_Atomic uint32_t *word, uint32_t expected,
					 clockid_t clock, const struct timespec *abstime)
{
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	long rc = syscall(SYS_futex, (uint32_t *)word, op, expected, abstime,
			  NULL, FUTEX_BITSET_MATCH_ANY);
	return rc == 0 ? 0 : errno;
}

/* Wake up to n waiters on word.  A wake of an address nobody waits on is harmless. */
static inline void futex_wake_private(_Atomic uint32_t *word, int n)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		NULL, NULL, 0);
}

/*
 * If *from == expected, move one waiter of from to to's wait queue without
 * waking it (FUTEX_CMP_REQUEUE): it wakes when to is woken.  A mismatch
 * (EAGAIN) or nobody waiting on from moves nothing; both are harmless.
 * Returns true if a waiter was moved.
 */
static inline bool futex_requeue_one_private(_Atomic uint32_t *from, uint32_t expected,
					     _Atomic uint32_t *to)
{
	return syscall(SYS_futex, (uint32_t *)from, FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG,
		       0 /* wake none */, (void *)1L /* move one */, (uint32_t *)to,
		       expected) > 0;
}

#endif /* CNA_SIMULATED */

#endif
