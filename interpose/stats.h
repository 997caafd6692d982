/* interpose/stats.h — per-thread counters, summed in each report (CNAMUTEX_STATS=1). */
#ifndef INTERPOSE_STATS_H
#define INTERPOSE_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Written only by the owning thread (relaxed load+store, no RMW); read by
 * the reports while other threads may still run.  A report also swaps the
 * MAX counters back to 0, so that each report has the maximum since the
 * previous one: an owner's store racing with the swap is a wait that ended
 * at the report, counted in the next one. */
struct stats_block {
#define STAT(name, how) _Atomic uint64_t name;
#include "stats_list.h"
#undef STAT
};

extern bool stats_enabled;

void stats_init(bool enabled);
/* The calling thread's block, registered for the exit report on first use. */
struct stats_block *stats_self(void);
void stats_add(_Atomic uint64_t *counter, uint64_t n);
void stats_max(_Atomic uint64_t *counter, uint64_t value);
__attribute__((cold)) void stats_reset_after_fork(void);

struct report_stamp;
/* Under the report guard: the stats line, counts since the previous report. */
void stats_report(const struct report_stamp *stamp);
/* fork() reset the counters: the next report counts from 0. */
void stats_forget_previous(void);

#endif
