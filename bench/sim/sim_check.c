/* bench/sim/sim_check.c — the simulator's own invariants on short runs.
 * Checks the model's bookkeeping and the real queue's ordering effects; all
 * times are simulated, so nothing here depends on this machine's speed. */
#include <stdio.h>

#include "check.h"
#include "engine.h"

static struct sim_config config(const char *machine, unsigned threads, bool numa_aware)
{
	struct sim_config cfg = {
		.work = { .cs_ns = 100, .cs_lines = 4, .ncs_ns = 2000, .pass_ns = 10,
			  .cna_pass_ns = 12, .cna_sec_pass_ns = 30 },
		.threads = threads, .numa_aware = numa_aware,
		.threshold_ns = 10000000u, .shuffle_bits = 7,
		.warmup_ns = 5000000u, .duration_ns = 50000000u,
		.seed = 3, .verify = true,
	};
	sim_machine_preset(machine, &cfg.machine);
	return cfg;
}

static struct sim_result run(const char *machine, unsigned threads, bool numa_aware)
{
	struct sim_config cfg = config(machine, threads, numa_aware);
	struct sim_result r;
	CHECK(sim_run(&cfg, &r));
	CHECK(sim_result_consistent(&r));
	CHECK_EQ(r.exclusion_violations, 0);
	CHECK_EQ(r.queue_errors, 0);
	CHECK(r.arrivals == r.acquisitions + r.still_waiting);
	CHECK(r.acquisitions - r.releases <= 1);
	CHECK(r.ops > 0);
	CHECK(r.min_ops > 0);   /* nobody starves in 45 ms with a 10 ms threshold */
	return r;
}

int main(void)
{
	/* One thread: no queue, so both orders are the same run. */
	struct sim_result fifo1 = run("4s", 1, false), cna1 = run("4s", 1, true);
	CHECK_EQ(fifo1.ops, cna1.ops);
	CHECK_EQ(cna1.flushes, 0);

	/* Saturated 4-socket lock: CNA keeps the lock on one socket much more
	 * often, and the threshold brings the remote waiters back in time. */
	struct sim_result fifo = run("4s", 32, false), cna = run("4s", 32, true);
	printf("4s/32: same-socket FIFO %.2f CNA %.2f, Jain FIFO %.3f CNA %.3f, flushes %llu\n",
	       fifo.local_share, cna.local_share, fifo.jain, cna.jain,
	       (unsigned long long)cna.flushes);
	CHECK(cna.local_share > fifo.local_share + 0.3);
	CHECK(cna.flushes > 0);
	CHECK(cna.max_wait_ns < 2 * 10000000u);
	CHECK(fifo.jain > 0.95);
	CHECK(cna.ops > fifo.ops);

	/* Two sockets, threads on both, hyperthread siblings in use. */
	struct sim_result fifo2 = run("2s", 40, false), cna2 = run("2s", 40, true);
	CHECK(cna2.local_share > fifo2.local_share);

	/* The consistency check itself can fail. */
	struct sim_result broken = cna;
	broken.acquisitions += 2;
	CHECK(!sim_result_consistent(&broken));
	broken = cna;
	broken.exclusion_violations = 1;
	CHECK(!sim_result_consistent(&broken));

	return check_report("sim_check");
}
