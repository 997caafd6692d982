/* interpose/c11.c — C11 <threads.h> mutexes.
 *
 * glibc's mtx_lock and friends call its hidden internal mutex functions, so
 * without these a C11 program would bypass the shim.  mtx_t has the layout
 * of pthread_mutex_t (mtx_init is glibc's own and sets the kind).
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>

#include "mutex.h"

#define EXPORT __attribute__((visibility("default")))

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t is a pthread_mutex_t");

static pthread_mutex_t *as_pthread(mtx_t *m)
{
	return (pthread_mutex_t *)m;
}

EXPORT int mtx_lock(mtx_t *m)
{
	return cnamutex_lock(as_pthread(m)) == 0 ? thrd_success : thrd_error;
}

EXPORT int mtx_trylock(mtx_t *m)
{
	int err = cnamutex_trylock(as_pthread(m));
	return err == 0 ? thrd_success : err == EBUSY ? thrd_busy : thrd_error;
}

EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abstime)
{
	int err = cnamutex_clocklock(as_pthread(m), CLOCK_REALTIME, abstime);
	return err == 0 ? thrd_success : err == ETIMEDOUT ? thrd_timedout : thrd_error;
}

EXPORT int mtx_unlock(mtx_t *m)
{
	return cnamutex_unlock(as_pthread(m)) == 0 ? thrd_success : thrd_error;
}
