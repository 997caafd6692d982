/* interpose/report.h — when the statistics and the profile are written:
 * at exit, and every CNAMUTEX_REPORT_INTERVAL_S seconds while the process
 * runs, each report with the counts since the previous one.
 *
 * There is no reporting thread.  Lock callers look at the due time, only
 * when instrumentation is on: the contended path at its start (it reads
 * the clock there anyway), the fast path every REPORT_FAST_CHECK_EVERY
 * acquisitions per thread, so a process whose locks are mostly
 * uncontended reports too.  The first to find the time passed and win the
 * guard writes the report; the others go on at once.
 */
#ifndef INTERPOSE_REPORT_H
#define INTERPOSE_REPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../cna/cna.h"
#include "thread.h"

#define REPORT_FAST_CHECK_EVERY 1024u

/* What every report line says about the report it belongs to. */
struct report_stamp {
	pid_t pid;
	double time_s;     /* wall clock, seconds since the Unix epoch */
	double interval_s; /* seconds covered: since the previous report, or the start */
	bool final;        /* the exit report */
};

/* 0: reports only at exit.  Set once at load. */
extern uint64_t report_interval_ns;
/* CLOCK_MONOTONIC time of the next interval report. */
extern _Atomic uint64_t report_due_ns;

/* After stats_init() and profile_init(); interval_s 0 for none. */
void report_init(unsigned interval_s);

/* Write an interval report if it is still due and nobody else is at it. */
void report_if_due(uint64_t now_ns);

static inline void report_tick(uint64_t now_ns)
{
	if (__builtin_expect(report_interval_ns != 0, 0) &&
	    now_ns >= atomic_load_explicit(&report_due_ns, memory_order_relaxed))
		report_if_due(now_ns);
}

/* From instrument_fast_acquisition(): a clock read every so often. */
static inline void report_tick_fast(struct cnamutex_thread *self)
{
	if (__builtin_expect(report_interval_ns != 0, 0) && self->report_countdown-- == 0) {
		self->report_countdown = REPORT_FAST_CHECK_EVERY - 1;
		report_tick(cna_now_ns());
	}
}

/*
 * The guard: one thread at a time writes a report or folds an exiting
 * thread's counters away (which a report must not see half done).  Never
 * taken by a lock caller that would wait for it.
 */
bool report_guard_try(void);
void report_guard_wait(void);
void report_guard_release(void);

void report_at_exit(void);
void report_reset_after_fork(void);

#endif
