/* bench/sim/explore.c — random schedules of the real code, checked. */
#include "explore.h"

#include <stdio.h>
#include <string.h>

#include "workload.h"

/* The shim's starvation threshold in the explorer: short, so that a run of
 * a few hundred acquisitions crosses it many times. */
#define EXPLORE_THRESHOLD_NS 200000ull
/*
 * No acquisition may wait longer than this.  A remote waiter waits about the
 * threshold before it is served in queue order, then for the waiters ahead
 * of it (each one hold, a wake and the injected delays, up to
 * EXPLORE_DELAY_MAX_NS and EXPLORE_PREEMPT_MAX_NS) and for the slices of the
 * other threads on its CPU.  Over seeds 1-2000 the longest wait is 2.33 ms
 * (seed 120: a head granted the queue stayed 1.5 ms ready behind another
 * thread on its CPU); with the threshold test in cna.c disabled (no flush,
 * no waiter served in order for its age), 2.86 ms (seed 592), and seeds
 * 1-500 alone reach only 2.34 ms, so the suite explores 700.  The runs are
 * deterministic, so the margin is exact, but a change of the profiles, the
 * costs or the queue's order moves both (before a waiter's age made it be
 * served in order: 1.76 and 2.34 ms).
 */
#define EXPLORE_DELAY_MAX_NS 400u
#define EXPLORE_PREEMPT_MAX_NS 40000u
#define EXPLORE_SLICE_NS 50000u
#define EXPLORE_WAIT_BOUND_NS (25 * EXPLORE_THRESHOLD_NS / 2)

static const unsigned spin_budgets[] = { 0, 4, 64, 1000 };

/* A small machine: 2 sockets x 2 cores, short slices so that more threads
 * than CPUs are preempted often. */
static struct sim_machine explore_machine(void)
{
	struct sim_machine m;
	sim_machine_preset("2s", &m);
	m.name = "explore";
	m.cores_per_socket = 2;
	m.threads_per_core = 1;
	m.slice_ns = EXPLORE_SLICE_NS;
	/* The chaos below perturbs the timing; the kernel's jitter on top only
	 * moves the tail of the waits (seeds 1-2000: 2.08 ms without, 2.38 ms
	 * with it), not what is checked. */
	m.kernel_jitter_pct = 0;
	return m;
}

static void config_for_seed(uint32_t seed, struct sim_run_config *c)
{
	uint32_t rng = seed * 0x9e3779b9u + 0x7f4a7c15u;
	memset(c, 0, sizeof *c);
	c->machine = explore_machine();
	c->lock = (enum sim_lock_kind)(seed % LOCK_KINDS == 0 ? LOCK_SHIM : sim_random(&rng) % LOCK_KINDS);
	if (sim_random(&rng) % 4)
		c->lock = LOCK_SHIM;    /* the library's code gets most seeds */
	c->profile = &sim_profiles[sim_random(&rng) % 3];
	c->threads = 2 + sim_random(&rng) % 6;   /* up to 7 on 4 CPUs */
	c->ops_per_thread = 30 + sim_random(&rng) % 50;
	c->seed = seed;
	c->threshold_ns = EXPLORE_THRESHOLD_NS;
	c->spin_budget = spin_budgets[sim_random(&rng) % 4];
	/* Often reorder at once, so that CNA order and the threshold run. */
	c->shuffle_bits = sim_random(&rng) % 2 ? 0 : SIM_TUNABLE_DEFAULT;
	if (sim_random(&rng) % 4 == 0)
		c->machine.sockets = 1;          /* one node: CNAMUTEX_NUMA=auto is off */
	if (seed % 8 == 0) {
		/* A long, busy run on two nodes: local waiters keep the primary
		 * queue full, so only the threshold brings the remote ones back. */
		c->lock = LOCK_SHIM;
		c->machine.sockets = 2;
		c->profile = &sim_profiles[0];
		c->threads = 7;
		c->ops_per_thread = 1500;
		c->spin_budget = 1000;
		c->shuffle_bits = 0;
	}
	c->wait_bound_ns = EXPLORE_WAIT_BOUND_NS;
	c->chaos = (struct sim_chaos){
		.delay_one_in = 4, .delay_max_ns = EXPLORE_DELAY_MAX_NS,
		.preempt_one_in = 300, .preempt_max_ns = EXPLORE_PREEMPT_MAX_NS,
		.spurious_one_in = 8, .weak_cas_fail_one_in = 6,
		.random_wake_order = true,
	};
}

static void describe(uint32_t seed, const struct sim_run_config *c, const struct sim_run_result *r)
{
	printf("seed %u: lock=%s workload=%s threads=%u sockets=%u spin=%u shuffle=%d ops=%u: %s%s"
	       " (events %llu, trace %016llx)\n",
	       seed, sim_lock_names[c->lock], c->profile->name, c->threads, c->machine.sockets,
	       c->spin_budget, c->shuffle_bits == SIM_TUNABLE_DEFAULT ? -1 : (int)c->shuffle_bits,
	       c->ops_per_thread, r->failure ? "FAILED " : "ok",
	       r->failure ? r->failure : "",
	       (unsigned long long)r->events, (unsigned long long)r->trace_hash);
	if (r->failure && r->failure_detail[0])
		printf("  %s\n", r->failure_detail);
}

unsigned sim_explore(uint32_t first, unsigned count, bool verbose)
{
	unsigned long long events = 0;
	uint64_t longest = 0;
	uint32_t longest_seed = first;
	for (unsigned k = 0; k < count; k++) {
		uint32_t seed = first + k;
		struct sim_run_config c;
		struct sim_run_result r;
		config_for_seed(seed, &c);
		if (!sim_run_workload(&c, &r)) {
			printf("seed %u: out of memory\n", seed);
			return 1;
		}
		events += r.events;
		if (r.max_wait_ns > longest) {
			longest = r.max_wait_ns;
			longest_seed = seed;
		}
		if (verbose || r.failure)
			describe(seed, &c, &r);
		if (!r.failure)
			continue;
		struct sim_run_result again;
		sim_run_workload(&c, &again);
		bool same = again.failure && strcmp(again.failure, r.failure) == 0 &&
			    again.events == r.events && again.trace_hash == r.trace_hash;
		printf("  replay: cnasim --explore --seed %u -> %s\n", seed,
		       same ? "the same failure at the same event (replays exactly)"
			    : "DIFFERENT (the run is not deterministic)");
		return same ? 1 : 2;
	}
	printf("explored %u seeds from %u: every check held (%llu events; longest wait %llu us,"
	       " seed %u; bound %llu us)\n", count, first, events,
	       (unsigned long long)(longest / 1000), longest_seed,
	       (unsigned long long)(EXPLORE_WAIT_BOUND_NS / 1000));
	return 0;
}
