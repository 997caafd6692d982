/* interpose/tunables.h — settings from the environment, read once at load. */
#ifndef INTERPOSE_TUNABLES_H
#define INTERPOSE_TUNABLES_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu_batch.h"

enum numa_mode { NUMA_AUTO, NUMA_ON, NUMA_OFF };
enum profile_mode { PROFILE_OFF, PROFILE_TABLE, PROFILE_JSON };

struct tunables {
	enum numa_mode numa;
	unsigned threshold_ms;    /* CNAMUTEX_THRESHOLD_MS, 1..100 */
	unsigned shuffle_bits;    /* CNAMUTEX_SHUFFLE_BITS, 0..31 */
	unsigned spin;            /* CNAMUTEX_SPIN, spin rounds before parking */
	bool stats;               /* CNAMUTEX_STATS */
	enum profile_mode profile; /* CNAMUTEX_PROFILE: 0, 1 (table) or json */
	unsigned cpu_batch_us;    /* CNAMUTEX_CPU_BATCH_US, 0..1000000 */
	enum cpu_batch_mode cpu_batch; /* CNAMUTEX_CPU_BATCH: auto, on or off */
	unsigned report_interval_s; /* CNAMUTEX_REPORT_INTERVAL_S, 1..86400; 0 only at exit */
};

#define TUNABLE_THRESHOLD_MS_DEFAULT 10u
#define TUNABLE_SHUFFLE_BITS_DEFAULT 7u
/* About 18 us of pause on the machine it was measured on, a few futex
 * sleep/wake round trips (3-4 us each there): 2000 spent more CPU than it
 * saved once the critical sections grew long (leveldb at 8-16 threads on
 * two CPUs) and was no better in interleaved A/B runs of leveldb
 * readrandom (4, 8, 16 threads) and mutexbench (2, 4, 8, 16 threads). */
#define TUNABLE_SPIN_DEFAULT 1000u
#define TUNABLE_SPIN_MAX 100000000u
/* A tenth of the threshold: moving between CPUs costs less than between
 * nodes, so a shorter batch amortises it, and keeps the order fair at a
 * finer grain (see word.h). */
#define TUNABLE_CPU_BATCH_US_DEFAULT 1000u
#define TUNABLE_CPU_BATCH_US_MAX 1000000u
#define TUNABLE_REPORT_INTERVAL_MAX 86400u

/*
 * Parse a decimal number in [min, max]: digits only, no sign, no blanks.
 * On failure returns false and sets *reason to a short phrase.
 */
bool tunable_parse_uint(const char *text, unsigned min, unsigned max,
			unsigned *out, const char **reason);

/* One line on stderr: "cnamutex: ignoring NAME=VALUE: reason; using DEFAULT". */
void tunable_complain(const char *name, const char *value, const char *reason,
		      const char *fallback);

/* Complaints go to fd (the log file, while it is open at load) instead of
 * stderr; -1 for stderr again. */
void tunable_complaints_to(int fd);

/* Read every CNAMUTEX_* variable except the topology (see topology.h). */
void tunables_load(struct tunables *t);

#endif
