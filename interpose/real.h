/* interpose/real.h — glibc's own functions, found with dlsym(RTLD_NEXT).
 *
 * Resolved at load by real_resolve_all(), and lazily on first use, because
 * a program's constructors may lock a mutex before ours has run.
 */
#ifndef INTERPOSE_REAL_H
#define INTERPOSE_REAL_H

#include <pthread.h>
#include <sched.h>
#include <time.h>

struct real_functions {
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*mutex_unlock)(pthread_mutex_t *);
	int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
	int (*mutex_destroy)(pthread_mutex_t *);
	int (*mutex_consistent)(pthread_mutex_t *);
	int (*mutex_getprioceiling)(const pthread_mutex_t *, int *);
	int (*mutex_setprioceiling)(pthread_mutex_t *, int, int *);
	int (*setschedparam)(pthread_t, int, const struct sched_param *);
	int (*sched_setscheduler)(pid_t, int, const struct sched_param *);
};

/* The table, every entry resolved (aborts with a message if glibc lacks one). */
const struct real_functions *real(void);
void real_resolve_all(void);

#endif
