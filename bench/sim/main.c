/* bench/sim/main.c — cnasim: the shim's contended path on modelled machines.
 *
 *   cnasim [--machine 4s,2s,2c] [--workload tiny,mutexbench,leveldb]
 *          [--threads 1,2,4,...] [--duration-ms D] [--warmup-ms W]
 *          [--xfer-ns N] [--syscall-ns N] [--syscall-entry-ns N] [--yield-ns N]
 *          [--wake-call-ns N] [--wake-ns N] [--switch-ns N] [--runs N] [--csv FILE]
 *       every lock (glibc, adaptive, mcs, shim) at every point; a markdown
 *       table on stdout, and with --csv one row per machine, workload and
 *       thread count.  --stats: the shim's own counters, summed, and every
 *       lock's futex calls (as perf stat counts them), to stderr.
 *       --runs N: seeds per point (default 3), medians reported.
 *   cnasim --explore [--seeds N] [--seed S] [--verbose] [--expect-violation]
 *       the schedule explorer (explore.h).  --seed S replays one seed.
 *       --expect-violation: succeed only if a seed fails and replays exactly
 *       (for the deliberately broken build).
 * AN ESTIMATE FROM A MODEL: see bench/sim/machine.c for every cost.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "workload.h"

#define MAX_LIST 64

static const char csv_header[] =
	"machine,workload,threads,glibc_ops,adaptive_ops,mcs_ops,shim_ops,"
	"shim_local_share,shim_jain,shim_max_wait_us";

static void usage(void)
{
	fprintf(stderr, "usage: cnasim [--machine LIST] [--workload LIST] [--threads LIST]\n"
			"              [--duration-ms D] [--warmup-ms W] [--xfer-ns N] [--csv FILE]\n"
			"              [--lock glibc,adaptive,mcs,shim] [--lag-ns N] [--stats]\n"
			"              [--syscall-ns N] [--syscall-entry-ns N] [--yield-ns N]\n"
			"              [--wake-call-ns N] [--wake-ns N] [--switch-ns N]\n"
			"              [--runs N]\n"
			"       cnasim --explore [--seeds N] [--seed S] [--verbose] [--expect-violation]\n");
	exit(2);
}

static unsigned split(char *text, char **items)
{
	unsigned n = 0;
	for (char *tok = strtok(text, ","); tok && n < MAX_LIST; tok = strtok(NULL, ","))
		items[n++] = tok;
	return n;
}

static unsigned long number(const char *text)
{
	char *end;
	unsigned long v = strtoul(text, &end, 10);
	if (!*text || *end)
		usage();
	return v;
}

/* glibc keeps __libc_single_threaded at 1 until a thread is created, and
 * the library's unlock takes plain stores then: the simulated threads must
 * see the multi-threaded path, as the real ones do. */
static void *nothing(void *arg) { return arg; }
static void leave_single_threaded(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
}

static unsigned lock_mask(char *list)
{
	char *items[MAX_LIST];
	unsigned n = split(list, items), mask = 0;
	for (unsigned i = 0; i < n; i++) {
		int k = 0;
		while (k < LOCK_KINDS && strcmp(items[i], sim_lock_names[k]))
			k++;
		if (k == LOCK_KINDS)
			usage();
		mask |= 1u << k;
	}
	return mask;
}

struct sweep {
	char *machines[MAX_LIST], *workloads[MAX_LIST], *threads[MAX_LIST];
	unsigned nmachines, nworkloads, nthreads;
	uint64_t duration_ns, warmup_ns, xfer_ns, lag_ns;
	/* kernel costs measured on this machine (0: the preset's) */
	uint64_t syscall_ns, syscall_entry_ns, yield_ns, wake_call_ns, wake_ns, switch_ns;
	unsigned lock_mask;            /* locks to run; the others print 0 */
	unsigned runs;                 /* seeds per point, 1..MAX_RUNS */
	bool library_stats;
	FILE *csv;
};

#define MAX_RUNS 15

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof *v, by_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One machine, workload and thread count: every lock, w->runs times with
 * seeds 1, 2, ... (each seed draws other work lengths and wake orders).  A
 * point of this model swings by tens of per cent with such details, so
 * what is reported is the median over the runs: ops/s of each lock, the
 * shim/glibc ratio of the runs paired by seed, the shim's same-node share
 * and Jain index; its longest wait is the longest of all runs, printed
 * beside glibc's (the markdown only: the CSV's columns are fixed).
 */
static int run_point(const struct sweep *w, const struct sim_machine *m,
		     const struct sim_profile *p, unsigned threads)
{
	double ops[LOCK_KINDS][MAX_RUNS] = { { 0 } }, ratio[MAX_RUNS], share[MAX_RUNS],
	       jain[MAX_RUNS];
	uint64_t max_wait_ns = 0, glibc_max_wait_ns = 0;
	for (unsigned run = 0; run < w->runs; run++) {
		struct sim_run_result r[LOCK_KINDS];
		for (int k = 0; k < LOCK_KINDS; k++) {
			memset(&r[k], 0, sizeof r[k]);
			if (!(w->lock_mask >> k & 1))
				continue;
			struct sim_run_config c = {
				.machine = *m, .profile = p, .lock = (enum sim_lock_kind)k,
				.threads = threads, .warmup_ns = w->warmup_ns,
				.duration_ns = w->duration_ns, .seed = run + 1,
				.spin_budget = SIM_TUNABLE_DEFAULT,
				.shuffle_bits = SIM_TUNABLE_DEFAULT,
				.lag_ns = w->lag_ns,
				.library_stats = w->library_stats,
			};
			if (!sim_run_workload(&c, &r[k]))
				return 1;
			if (r[k].failure) {
				fprintf(stderr, "cnasim: %s %s %u threads %s seed %u: %s %s\n", m->name,
					p->name, threads, sim_lock_names[k], run + 1, r[k].failure,
					r[k].failure_detail);
				return 1;
			}
			ops[k][run] = r[k].ops_per_s;
		}
		const struct sim_run_result *shim = &r[LOCK_SHIM];
		ratio[run] = r[LOCK_GLIBC].ops_per_s > 0 ? shim->ops_per_s / r[LOCK_GLIBC].ops_per_s : 0;
		share[run] = shim->local_share;
		jain[run] = shim->jain;
		if (shim->max_wait_ns > max_wait_ns)
			max_wait_ns = shim->max_wait_ns;
		if (r[LOCK_GLIBC].max_wait_ns > glibc_max_wait_ns)
			glibc_max_wait_ns = r[LOCK_GLIBC].max_wait_ns;
	}
	double med[LOCK_KINDS];
	for (int k = 0; k < LOCK_KINDS; k++)
		med[k] = median(ops[k], w->runs);
	double ratio_low = ratio[0], ratio_high = ratio[0];
	for (unsigned run = 1; run < w->runs; run++) {
		ratio_low = ratio[run] < ratio_low ? ratio[run] : ratio_low;
		ratio_high = ratio[run] > ratio_high ? ratio[run] : ratio_high;
	}
	double ratio_median = median(ratio, w->runs), share_median = median(share, w->runs),
	       jain_median = median(jain, w->runs);
	printf("| %s | %s | %u | %.2f | %.2f | %.2f | %.2f | %.3f | %.2f-%.2f | %.2f | %.2f | %.0f | %.0f |\n",
	       m->name, p->name, threads, med[LOCK_GLIBC] / 1e6, med[LOCK_ADAPTIVE] / 1e6,
	       med[LOCK_MCS] / 1e6, med[LOCK_SHIM] / 1e6, ratio_median, ratio_low, ratio_high,
	       share_median, jain_median, (double)max_wait_ns / 1000.0,
	       (double)glibc_max_wait_ns / 1000.0);
	fflush(stdout);
	if (w->csv)
		fprintf(w->csv, "%s,%s,%u,%.0f,%.0f,%.0f,%.0f,%.4f,%.4f,%.1f\n", m->name, p->name,
			threads, med[LOCK_GLIBC], med[LOCK_ADAPTIVE], med[LOCK_MCS], med[LOCK_SHIM],
			share_median, jain_median, (double)max_wait_ns / 1000.0);
	return 0;
}

static int sweep(struct sweep *w)
{
	printf("ESTIMATE FROM A MODEL, not a measurement (%s)\n\n", sim_machine_sources());
	printf("Each point: the median of %u runs (seeds 1-%u); shim/glibc is the median of the\n"
	       "ratios of runs paired by seed, with their range.\n\n", w->runs, w->runs);
	printf("| machine | workload | threads | glibc Mops/s | adaptive | mcs | shim | shim/glibc |"
	       " range | shim same-node share | shim Jain | shim max wait us | glibc max wait us |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
	if (w->csv)
		fprintf(w->csv, "%s\n", csv_header);
	for (unsigned a = 0; a < w->nmachines; a++) {
		struct sim_machine m;
		if (!sim_machine_preset(w->machines[a], &m)) {
			fprintf(stderr, "cnasim: unknown machine %s (4s, 2s, 2c)\n", w->machines[a]);
			return 2;
		}
		if (w->xfer_ns && m.sockets == 1)
			m.same_core_ns = m.same_socket_ns = m.remote_ns = w->xfer_ns;
		if (w->syscall_ns)
			m.syscall_ns = w->syscall_ns;
		if (w->syscall_entry_ns)
			m.syscall_entry_ns = w->syscall_entry_ns;
		if (w->yield_ns)
			m.yield_ns = w->yield_ns;
		if (w->wake_call_ns)
			m.wake_call_ns = w->wake_call_ns;
		if (w->wake_ns)
			m.wake_ns = w->wake_ns;
		if (w->switch_ns)
			m.switch_ns = w->switch_ns;
		for (unsigned b = 0; b < w->nworkloads; b++) {
			const struct sim_profile *p = sim_profile_named(w->workloads[b]);
			if (!p) {
				fprintf(stderr, "cnasim: unknown workload %s\n", w->workloads[b]);
				return 2;
			}
			for (unsigned c = 0; c < w->nthreads; c++)
				if (run_point(w, &m, p, (unsigned)number(w->threads[c])))
					return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char machines[] = "4s,2s", workloads[] = "tiny,mutexbench,leveldb",
	     threads[] = "1,2,4,8,16,32,72,142";
	struct sweep w = { .duration_ns = 20000000, .warmup_ns = 2000000,
			   .lock_mask = (1u << LOCK_KINDS) - 1, .runs = 3 };
	bool explore = false, verbose = false, expect_violation = false;
	unsigned long seeds = 200, first_seed = 1;
	bool one_seed = false;
	const char *csv = NULL;
	w.nmachines = split(machines, w.machines);
	w.nworkloads = split(workloads, w.workloads);
	w.nthreads = split(threads, w.threads);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--explore")) { explore = true; continue; }
		if (!strcmp(a, "--verbose")) { verbose = true; continue; }
		if (!strcmp(a, "--expect-violation")) { expect_violation = true; continue; }
		if (!strcmp(a, "--stats")) { w.library_stats = true; continue; }
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--machine")) w.nmachines = split(argv[i], w.machines);
		else if (!strcmp(a, "--workload")) w.nworkloads = split(argv[i], w.workloads);
		else if (!strcmp(a, "--threads")) w.nthreads = split(argv[i], w.threads);
		else if (!strcmp(a, "--duration-ms")) w.duration_ns = number(v) * 1000000ull;
		else if (!strcmp(a, "--warmup-ms")) w.warmup_ns = number(v) * 1000000ull;
		else if (!strcmp(a, "--xfer-ns")) w.xfer_ns = number(v);
		else if (!strcmp(a, "--syscall-ns")) w.syscall_ns = number(v);
		else if (!strcmp(a, "--syscall-entry-ns")) w.syscall_entry_ns = number(v);
		else if (!strcmp(a, "--yield-ns")) w.yield_ns = number(v);
		else if (!strcmp(a, "--wake-call-ns")) w.wake_call_ns = number(v);
		else if (!strcmp(a, "--wake-ns")) w.wake_ns = number(v);
		else if (!strcmp(a, "--switch-ns")) w.switch_ns = number(v);
		else if (!strcmp(a, "--csv")) csv = v;
		else if (!strcmp(a, "--lag-ns")) w.lag_ns = number(v);
		else if (!strcmp(a, "--lock")) w.lock_mask = lock_mask(argv[i]);
		else if (!strcmp(a, "--seeds")) seeds = number(v);
		else if (!strcmp(a, "--runs")) w.runs = (unsigned)number(v);
		else if (!strcmp(a, "--seed")) { first_seed = number(v); one_seed = true; }
		else usage();
	}
	leave_single_threaded();
	if (w.runs < 1 || w.runs > MAX_RUNS) {
		fprintf(stderr, "cnasim: --runs takes 1 to %d\n", MAX_RUNS);
		return 2;
	}

	if (explore) {
		unsigned rc = sim_explore((uint32_t)first_seed, one_seed ? 1 : (unsigned)seeds,
					  verbose || one_seed);
		if (expect_violation) {
			printf("%s\n", rc == 1 ? "violation found and replayed, as expected"
				       : "expected a violation that replays exactly");
			return rc == 1 ? 0 : 1;
		}
		return rc ? 1 : 0;
	}
	if (csv && !(w.csv = fopen(csv, "w"))) {
		perror(csv);
		return 2;
	}
	int rc = sweep(&w);
	if (w.csv)
		fclose(w.csv);
	return rc;
}
