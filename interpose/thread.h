/* interpose/thread.h — the calling thread's state: queue node, tid, counters. */
#ifndef INTERPOSE_THREAD_H
#define INTERPOSE_THREAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../cna/cna.h"
#include "cpu_batch.h"
#include "spin_credit.h"
#include "stats.h"

struct cnamutex_thread {
	struct cna_node node;      /* our place in a queue; one queue at a time */
	pid_t tid;                 /* cached gettid(), 0 until first use */
	pid_t fast_tid;            /* tid for mutex.c's fast path; 0: take the slow one */
	uint32_t acquisitions;     /* mutexes acquired, wrapping (cpu_batch.h) */
	uint32_t prng;             /* shuffle-reduction random state */
	struct spin_credit spin;   /* adaptive spin budgets, see spin_credit.h */
	uint8_t gate_grace;        /* word_gate's learnt grace plus one; 0 until the first gate */
	struct cpu_batch_sampler batch; /* this thread's part in measuring the CPU gate */
	unsigned index;            /* order of first contended acquisition */
	bool index_assigned;
	unsigned sched_epoch_seen; /* see thread_is_priority() */
	bool priority;
	bool stats_registered;
	unsigned report_countdown; /* fast acquisitions until the next look at the clock */
	struct stats_block stats;
};

extern __thread struct cnamutex_thread cnamutex_self
	__attribute__((tls_model("initial-exec")));

#ifdef CNA_SIMULATED
/* Simulated threads share one OS thread's TLS: each has its own state. */
struct cnamutex_thread *platform_thread_state(void);
static inline struct cnamutex_thread *thread_self(void)
{
	return platform_thread_state();
}
#else
static inline struct cnamutex_thread *thread_self(void)
{
	return &cnamutex_self;
}
#endif

pid_t thread_fetch_tid(void);

/* Kernel tid of the caller, as glibc keeps it in __owner. */
static inline pid_t thread_tid(void)
{
	pid_t tid = thread_self()->tid;
	if (__builtin_expect(tid == 0, 0))
		tid = thread_fetch_tid();
	return tid;
}

/* On every contended acquisition: the first one gives the thread its index
 * (CNAMUTEX_TOPOLOGY=threads=N places threads by it), whichever way it
 * then waits. */
void thread_note_contended(struct cnamutex_thread *self);

/* Threads that have contended so far (exited ones too): while this is no
 * more than the CPUs, every contender can run at once. */
unsigned thread_contenders(void);

/* Fill in the node fields a waiter sets before it enqueues. */
void thread_prepare_node(struct cnamutex_thread *self);
/* The same, for a caller that has just asked which CPU it runs on. */
void thread_prepare_node_on(struct cnamutex_thread *self, int cpu);

/* A scheduling policy may have changed somewhere: re-check priority. */
void thread_sched_changed(void);

/* In the child after fork(): forget the parent's tid and spin history. */
__attribute__((cold)) void thread_reset_after_fork(void);

#ifdef CNA_SIMULATED
/* The simulator: thread indexes and the policy epoch start again, as in a
 * new process, before each run. */
void thread_forget_all(void);
#endif

#endif
