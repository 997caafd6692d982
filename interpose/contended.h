/* interpose/contended.h — the contended acquisition: CNA queue, then the word. */
#ifndef INTERPOSE_CONTENDED_H
#define INTERPOSE_CONTENDED_H

#include <pthread.h>
#include <time.h>

#include "../cna/cna.h"

extern struct cna_params cnamutex_params;

/* Acquire a queueable mutex whose fast-path CAS failed. */
void contended_lock(pthread_mutex_t *m);

/* Timed acquisition after a failed CAS: waits on the word, never queues. */
int contended_lock_until(pthread_mutex_t *m, clockid_t clock,
			 const struct timespec *abstime);

#endif
