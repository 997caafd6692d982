/* bench/sim/engine.h — discrete-event replay of one lock on the model.
 *
 * N simulated threads alternate non-critical work and acquisitions of one
 * lock whose waiters queue in a real struct cna_queue: arrivals call
 * cna_enqueue(), and each new owner calls the real cna_pass_head(), so the
 * order of owners is exactly the one cna/ chooses.  Only time is modelled:
 * an acquisition costs the transfers of the lock line, of the critical
 * section's shared lines (from the previous owner) and of the queue nodes
 * cna_pass_head() reads or writes, plus the measured software cost of a
 * pass and the critical section's own work.  The result is an ESTIMATE.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "machine.h"

struct sim_workload {
	uint64_t cs_ns;               /* work inside the critical section */
	unsigned cs_lines;            /* shared lines written inside it */
	uint64_t ncs_ns;              /* mean non-critical work (uniform 0.5x..1.5x) */
	uint64_t pass_ns;             /* software cost of a pass, FIFO order */
	uint64_t cna_pass_ns;         /* ... CNA order, no secondary queue */
	uint64_t cna_sec_pass_ns;     /* ... CNA order with a secondary queue */
};

struct sim_config {
	struct sim_machine machine;
	struct sim_workload work;
	unsigned threads;
	bool numa_aware;              /* CNA order, else FIFO (MCS) order */
	uint64_t threshold_ns;        /* of simulated time */
	unsigned shuffle_bits;
	uint64_t warmup_ns, duration_ns;   /* simulated; ops count after warm-up */
	uint32_t seed;
	bool verify;                  /* walk and check the queue after every event */
	uint64_t *thread_ops;         /* optional: per-thread ops out, threads long */
};

struct sim_result {
	double ops_per_s;             /* estimated throughput */
	uint64_t ops;                 /* releases in the measured window */
	double jain;                  /* Jain fairness of per-thread ops */
	uint64_t min_ops, max_ops;    /* per thread, measured window */
	double local_share;           /* lock transfers between threads of one socket */
	uint64_t flushes;             /* secondary queue spliced back */
	uint64_t max_wait_ns;         /* longest arrival-to-ownership, simulated */
	/* Invariants of the model (whole run, warm-up included). */
	uint64_t arrivals, acquisitions, releases, still_waiting;
	uint64_t exclusion_violations; /* an owner chosen while another held it */
	uint64_t queue_errors;        /* queue walk disagreed with the threads' phases */
};

/* Returns false only if memory runs out. */
bool sim_run(const struct sim_config *cfg, struct sim_result *out);

/* Every acquisition accounted and no invariant broken. */
bool sim_result_consistent(const struct sim_result *r);

#endif
