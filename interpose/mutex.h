/* interpose/mutex.h — the shim's mutex operations, shared by pthread and C11 entry points. */
#ifndef INTERPOSE_MUTEX_H
#define INTERPOSE_MUTEX_H

#include <pthread.h>
#include <time.h>

int cnamutex_lock(pthread_mutex_t *m);
int cnamutex_trylock(pthread_mutex_t *m);
int cnamutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime);
int cnamutex_unlock(pthread_mutex_t *m);

#endif
