/* interpose/stats.h — per-thread counters, summed at exit (CNAMUTEX_STATS=1). */
#ifndef INTERPOSE_STATS_H
#define INTERPOSE_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Written only by the owning thread (relaxed load+store, no RMW); read by
 * the exit report while other threads may still run. */
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
void stats_report(void);

#endif
