/* bench/sim/workload.h — what the simulated threads do, and what is measured.
 *
 * A profile is a short list of steps, each one critical section: take a
 * mutex (a fixed one, or one of a few at random), write its shared lines,
 * work inside, release, then work outside (uniform 0.5x..1.5x, so threads
 * do not march in step).  One pass over the steps is one operation.
 */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "locks.h"

#define SIM_MAX_STEPS 6
#define SIM_MAX_MUTEXES 32
#define SIM_MAX_LINES 4

struct sim_step {
	unsigned first_mutex, mutex_choices;   /* one of [first, first + choices) */
	uint64_t cs_ns;
	unsigned cs_lines;
	uint64_t after_ns;
};

struct sim_profile {
	const char *name;
	unsigned mutexes;
	unsigned steps;
	struct sim_step step[SIM_MAX_STEPS];
};

/* "tiny", "mutexbench", "leveldb"; NULL if unknown. */
const struct sim_profile *sim_profile_named(const char *name);
extern const struct sim_profile sim_profiles[3];

struct sim_run_config {
	struct sim_machine machine;
	const struct sim_profile *profile;
	enum sim_lock_kind lock;
	unsigned threads;
	uint64_t warmup_ns, duration_ns;   /* by time ... */
	unsigned ops_per_thread;           /* ... or, if set, a fixed count each */
	uint32_t seed;
	uint64_t lag_ns;
	struct sim_chaos chaos;
	uint64_t wait_bound_ns;            /* fail if any wait is longer (0: none) */
	uint64_t threshold_ns;             /* the shim's; 0: CNAMUTEX_THRESHOLD_MS */
	unsigned spin_budget;              /* the shim's; SIM_TUNABLE_DEFAULT: CNAMUTEX_SPIN */
	unsigned shuffle_bits;             /* the shim's; SIM_TUNABLE_DEFAULT: CNAMUTEX_SHUFFLE_BITS */
	bool library_stats;                /* the shim's own counters (CNAMUTEX_STATS=1) to stderr */
};

struct sim_run_result {
	double ops_per_s;
	uint64_t ops;
	double local_share;                /* lock transfers within one socket */
	uint64_t transfers;
	double jain;
	uint64_t max_wait_ns;
	uint64_t events;
	uint64_t trace_hash;
	uint64_t sim_ns;
	const char *failure;               /* NULL: every check held */
	char failure_detail[240];
};

bool sim_run_workload(const struct sim_run_config *cfg, struct sim_run_result *out);

#endif
