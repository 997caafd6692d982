/* interpose/sched.c — notice scheduling-policy changes (priority waiters).
 *
 * A SCHED_FIFO/SCHED_RR waiter is never moved to the secondary queue.  Each
 * thread caches its policy; these wrappers tell every thread to look again.
 */
#include <pthread.h>
#include <sched.h>

#include "real.h"
#include "thread.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int pthread_setschedparam(pthread_t thread, int policy,
				 const struct sched_param *param)
{
	int err = real()->setschedparam(thread, policy, param);
	thread_sched_changed();
	return err;
}

EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param)
{
	int rc = real()->sched_setscheduler(pid, policy, param);
	thread_sched_changed();
	return rc;
}
