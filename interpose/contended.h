/* interpose/contended.h — the contended acquisition: CNA queue, then the word. */
#ifndef INTERPOSE_CONTENDED_H
#define INTERPOSE_CONTENDED_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "../cna/cna.h"

extern struct cna_params cnamutex_params;

/* How long a waiter leaves a free word to the CPU that last owned it (0: never). */
extern uint64_t contended_cpu_batch_ns;

/* CPUs this process may run on, at load (the simulator: its machine's). */
extern unsigned contended_cpus;

/* Acquire a queueable mutex whose fast-path CAS failed. */
void contended_lock(pthread_mutex_t *m);

/* Timed acquisition after a failed CAS: waits on the word, never queues. */
int contended_lock_until(pthread_mutex_t *m, clockid_t clock,
			 const struct timespec *abstime);

#endif
