/* interpose/cpu_batch.h — whether the CPU gate's batches pay, measured.
 *
 * The CPU gate (word.h) keeps a lock on one CPU for a batch: waiters on
 * other CPUs leave it alone meanwhile.  That pays where moving the lock
 * costs more than the work the other CPUs could do meanwhile, and loses
 * where it does not.  Which one depends on the program and on the machine
 * (this VM's cache-line cost changes several-fold between its modes).
 * With a ping-pong round trip of 50-60 ns, mutexbench (one line, 100
 * iterations in and out of the lock) ran 0.80-0.83x as fast with the gate
 * as without it at 2-16 threads, the tiny critical section (4 lines,
 * nothing inside) 1.8-2.0x.
 * So with CNAMUTEX_CPU_BATCH=auto the process measures both and keeps the
 * faster -- while no more threads have contended than it has CPUs.  With
 * more, the gate stays on (contended.c says why: it also bounds waits).
 *
 * Time is cut into slots of CPU_BATCH_SLOT_NS, and slots into periods of
 * CPU_BATCH_SLOTS_PER_PERIOD.  The first CPU_BATCH_TRIAL_SLOTS slots of a
 * period are trials, with the gate on, off, off and on.  Each thread
 * counts its acquisitions (all of them, the fast path's included: thread.h)
 * and, whenever it waits for a lock, spreads those since its last wait
 * evenly over the time between, so that the ones that fell in a trial slot
 * go to that slot's setting.  It hands its counts to the process once,
 * at its first wait after the trials.  From slot CPU_BATCH_DECIDE_SLOT on,
 * the first waiter to look compares the process's two counts (both
 * settings had the same time) and sets the gate for the rest of the
 * period: to the other setting only if that counted more by over
 * CPU_BATCH_MARGIN_PERCENT, and not at all with too few.  Until the first
 * decision the gate is on.  A decision that keeps the setting puts the
 * next trials 2, then 4, then 8 periods off (one that changes it, 1): a
 * steady program spends under 2% of its time in trials, half of them in
 * the slower setting.  The stats line counts the decisions
 * (cpu_batch_on, cpu_batch_off).  Nothing of this is on the fast path but
 * the counter's increment; the waiters, which read the clock anyway, do
 * the rest, and touch the process's shared line a few times per period.
 *
 * Counting per thread-interval and leaving out the intervals that spanned
 * two slots, as first built, chose wrong: with the gate on, a thread's
 * interval between waits holds its whole batch, so the productive ones
 * spanned slots and were left out (tiny critical section, 8 threads: off
 * chosen, at half the throughput of on).
 */
#ifndef INTERPOSE_CPU_BATCH_H
#define INTERPOSE_CPU_BATCH_H

#include <stdbool.h>
#include <stdint.h>

enum cpu_batch_mode { CPU_BATCH_AUTO, CPU_BATCH_ON, CPU_BATCH_OFF };

#define CPU_BATCH_SLOT_SHIFT 23             /* 8.4 ms slots */
#define CPU_BATCH_SLOT_NS (1ull << CPU_BATCH_SLOT_SHIFT)
#define CPU_BATCH_SLOTS_PER_PERIOD 32u      /* 268 ms periods */
#define CPU_BATCH_TRIAL_SLOTS 4u            /* on, off, off, on: 34 ms */
#define CPU_BATCH_DECIDE_SLOT 8u            /* after the threads' hand-ins */
#define CPU_BATCH_MARGIN_PERCENT 4u
#define CPU_BATCH_MAX_BACKOFF 3u            /* trials at least every 2^3 periods */
/* Fewest acquisitions per setting for a decision. */
#define CPU_BATCH_MIN_ACQUISITIONS 256ull

/* A thread's share of the measurement (in struct cnamutex_thread). */
struct cpu_batch_sampler {
	uint64_t last_ns;        /* the clock when our last wait began; 0: none yet */
	uint32_t last_count;     /* our acquisition counter then */
	bool handed_in;          /* pending went to the process's counts */
	uint64_t period;         /* the period pending is of */
	uint64_t pending[2];     /* our acquisitions in its trials: gate on, off */
};

extern enum cpu_batch_mode cpu_batch_mode;

/*
 * A waiter at now_ns, with acquisitions acquired so far by its thread:
 * should its CPU gate apply to this wait?  Records the thread's interval
 * since its last call, hands in its sums, and may make the period's
 * decision.
 */
bool cpu_batch_applies(struct cpu_batch_sampler *sampler, uint32_t acquisitions,
		       uint64_t now_ns);

/* Forget every measurement and decision, as a new process (tests, the
 * simulator before each run). */
void cpu_batch_forget_all(void);

#endif
