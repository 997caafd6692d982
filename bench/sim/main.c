/* bench/sim/main.c — cnasim: estimate CNA against FIFO (MCS) order on
 * modelled multi-socket machines; prints a markdown table, optionally CSV.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "engine.h"

#define MAX_LIST 32

struct options {
	char machines[MAX_LIST][8];
	unsigned n_machines;
	unsigned threads[MAX_LIST];
	unsigned n_threads;
	struct sim_workload work;
	bool pass_ns_given;
	uint64_t duration_ms, warmup_ms, threshold_ms;
	unsigned shuffle_bits;
	enum sim_placement placement;
	uint64_t remote_ns, socket_ns, core_ns;   /* 0: the preset's */
	const char *csv_path;
	uint32_t seed;
	bool verify;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cnasim [options]   (prints an ESTIMATE FROM A MODEL)\n"
		"  --machine LIST      presets 4s,2s (default 4s,2s)\n"
		"  --threads LIST      default 1,2,4,8,16,32,72,108,142,144 (capped per machine)\n"
		"  --cs-ns N           work inside the critical section (default 100)\n"
		"  --cs-lines N        shared lines written in it (default 4)\n"
		"  --ncs-ns N          mean non-critical work (default 2000)\n"
		"  --pass-ns N         software cost of a pass (default: measured here)\n"
		"  --remote-ns N, --socket-ns N, --core-ns N   override transfer costs\n"
		"  --placement fill|spread   (default fill: CPUs in Linux order, socket 0 first;\n"
		"                      spread: thread i on socket i mod S)\n"
		"  --duration-ms N     simulated time (default 400), --warmup-ms N (40)\n"
		"  --threshold-ms N    CNA local-run threshold (10), --shuffle-bits N (7)\n"
		"  --seed N, --verify (check the queue after every event), --csv FILE\n");
}

static unsigned parse_list(const char *arg, unsigned *out)
{
	unsigned n = 0;
	char *copy = strdup(arg), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok && n < MAX_LIST;
	     tok = strtok_r(NULL, ",", &save))
		out[n++] = (unsigned)strtoul(tok, NULL, 10);
	free(copy);
	return n;
}

static unsigned parse_names(const char *arg, char (*out)[8])
{
	unsigned n = 0;
	char *copy = strdup(arg), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok && n < MAX_LIST;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(out[n++], sizeof out[0], "%s", tok);
	free(copy);
	return n;
}

static bool parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "machine", required_argument, 0, 'm' }, { "threads", required_argument, 0, 't' },
		{ "cs-ns", required_argument, 0, 'c' }, { "cs-lines", required_argument, 0, 'l' },
		{ "ncs-ns", required_argument, 0, 'n' }, { "pass-ns", required_argument, 0, 'p' },
		{ "remote-ns", required_argument, 0, 'R' }, { "socket-ns", required_argument, 0, 'S' },
		{ "core-ns", required_argument, 0, 'C' }, { "placement", required_argument, 0, 'P' },
		{ "duration-ms", required_argument, 0, 'd' }, { "warmup-ms", required_argument, 0, 'w' },
		{ "threshold-ms", required_argument, 0, 'T' }, { "shuffle-bits", required_argument, 0, 'b' },
		{ "seed", required_argument, 0, 's' }, { "verify", no_argument, 0, 'v' },
		{ "csv", required_argument, 0, 'o' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	*o = (struct options){
		.work = { .cs_ns = 100, .cs_lines = 4, .ncs_ns = 2000 },
		.duration_ms = 400, .warmup_ms = 40, .threshold_ms = 10, .shuffle_bits = 7,
		.placement = SIM_FILL, .seed = 1,
	};
	o->n_machines = parse_names("4s,2s", o->machines);
	o->n_threads = parse_list("1,2,4,8,16,32,72,108,142,144", o->threads);
	int c;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'm': o->n_machines = parse_names(optarg, o->machines); break;
		case 't': o->n_threads = parse_list(optarg, o->threads); break;
		case 'c': o->work.cs_ns = strtoull(optarg, NULL, 10); break;
		case 'l': o->work.cs_lines = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': o->work.ncs_ns = strtoull(optarg, NULL, 10); break;
		case 'p':
			o->work.pass_ns = o->work.cna_pass_ns = o->work.cna_sec_pass_ns =
				strtoull(optarg, NULL, 10);
			o->pass_ns_given = true;
			break;
		case 'R': o->remote_ns = strtoull(optarg, NULL, 10); break;
		case 'S': o->socket_ns = strtoull(optarg, NULL, 10); break;
		case 'C': o->core_ns = strtoull(optarg, NULL, 10); break;
		case 'P': o->placement = strcmp(optarg, "spread") == 0 ? SIM_SPREAD : SIM_FILL; break;
		case 'd': o->duration_ms = strtoull(optarg, NULL, 10); break;
		case 'w': o->warmup_ms = strtoull(optarg, NULL, 10); break;
		case 'T': o->threshold_ms = strtoull(optarg, NULL, 10); break;
		case 'b': o->shuffle_bits = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': o->seed = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'v': o->verify = true; break;
		case 'o': o->csv_path = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: return false;
		}
	}
	if (optind != argc || o->duration_ms <= o->warmup_ms || !o->n_threads ||
	    o->shuffle_bits > 31) {
		fprintf(stderr, "cnasim: bad arguments\n");
		return false;
	}
	return true;
}

struct pair {
	struct sim_result mcs, cna;
};

static bool run_pair(const struct options *o, const struct sim_machine *m, unsigned threads,
		     struct pair *p)
{
	struct sim_config cfg = {
		.machine = *m, .work = o->work, .threads = threads,
		.threshold_ns = o->threshold_ms * 1000000u, .shuffle_bits = o->shuffle_bits,
		.warmup_ns = o->warmup_ms * 1000000u, .duration_ns = o->duration_ms * 1000000u,
		.seed = o->seed, .verify = o->verify,
	};
	if (!sim_run(&cfg, &p->mcs))
		return false;
	cfg.numa_aware = true;
	return sim_run(&cfg, &p->cna);
}

static double min_max(const struct sim_result *r)
{
	return r->max_ops ? (double)r->min_ops / (double)r->max_ops : 0;
}

int main(int argc, char **argv)
{
	struct options o;
	if (!parse_options(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	if (!o.pass_ns_given) {
		o.work.pass_ns = sim_measure_pass_ns(false, 1, 200000);
		o.work.cna_pass_ns = sim_measure_pass_ns(true, 1, 200000);
		o.work.cna_sec_pass_ns = sim_measure_pass_ns(true, 4, 200000);
	}
	FILE *csv = NULL;
	if (o.csv_path && !(csv = fopen(o.csv_path, "w"))) {
		perror(o.csv_path);
		return 1;
	}
	if (csv)
		fprintf(csv, "machine,placement,threads,mcs_ops_s,cna_ops_s,cna_over_mcs,mcs_same_socket,"
			     "cna_same_socket,mcs_jain,cna_jain,mcs_min_over_max,cna_min_over_max,"
			     "cna_max_wait_ms,cna_flushes\n");

	printf("ESTIMATE FROM A MODEL, not a measurement: the real cna/ queue code picks every\n"
	       "owner; times come from a cost model (%s).\n", sim_machine_sources());
	printf("Workload: critical section %llu ns + %u shared lines, non-critical %llu ns mean; "
	       "threshold %llu ms simulated, shuffle_bits %u, %llu ms simulated per run.\n",
	       (unsigned long long)o.work.cs_ns, o.work.cs_lines, (unsigned long long)o.work.ncs_ns,
	       (unsigned long long)o.threshold_ms, o.shuffle_bits,
	       (unsigned long long)o.duration_ms);
	printf("Software cost of one cna_pass_head(), %s on this machine (warm, one core): "
	       "FIFO %llu ns, CNA %llu ns, CNA with a secondary queue %llu ns.\n",
	       o.pass_ns_given ? "given, not measured" : "measured",
	       (unsigned long long)o.work.pass_ns, (unsigned long long)o.work.cna_pass_ns,
	       (unsigned long long)o.work.cna_sec_pass_ns);

	int status = 0;
	for (unsigned k = 0; k < o.n_machines; k++) {
		struct sim_machine m;
		if (!sim_machine_preset(o.machines[k], &m)) {
			fprintf(stderr, "cnasim: unknown machine %s\n", o.machines[k]);
			return 2;
		}
		m.placement = o.placement;
		if (o.remote_ns) m.remote_ns = o.remote_ns;
		if (o.socket_ns) m.same_socket_ns = o.socket_ns;
		if (o.core_ns) m.same_core_ns = o.core_ns;
		printf("\n### %s: %u sockets x %u cores x %u threads; line transfer %llu/%llu/%llu ns "
		       "(sibling/socket/remote), %s placement\n\n",
		       m.name, m.sockets, m.cores_per_socket, m.threads_per_core,
		       (unsigned long long)m.same_core_ns, (unsigned long long)m.same_socket_ns,
		       (unsigned long long)m.remote_ns, m.placement == SIM_SPREAD ? "spread" : "fill");
		printf("| threads | FIFO Mops/s | CNA Mops/s | CNA/FIFO | same-socket FIFO | same-socket CNA "
		       "| Jain FIFO | Jain CNA | min/max CNA | max wait CNA ms |\n");
		printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (unsigned j = 0; j < o.n_threads; j++) {
			unsigned n = o.threads[j];
			if (n == 0 || n > sim_machine_hw_threads(&m))
				continue;
			struct pair p;
			if (!run_pair(&o, &m, n, &p)) {
				fprintf(stderr, "cnasim: out of memory\n");
				return 1;
			}
			if (!sim_result_consistent(&p.mcs) || !sim_result_consistent(&p.cna)) {
				fprintf(stderr, "cnasim: model invariant broken at %u threads\n", n);
				status = 1;
			}
			double ratio = p.mcs.ops_per_s > 0 ? p.cna.ops_per_s / p.mcs.ops_per_s : 0;
			printf("| %u | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f |\n", n,
			       p.mcs.ops_per_s / 1e6, p.cna.ops_per_s / 1e6, ratio, p.mcs.local_share,
			       p.cna.local_share, p.mcs.jain, p.cna.jain, min_max(&p.cna),
			       (double)p.cna.max_wait_ns / 1e6);
			if (csv)
				fprintf(csv, "%s,%s,%u,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%llu\n",
					m.name, m.placement == SIM_SPREAD ? "spread" : "fill", n,
					p.mcs.ops_per_s, p.cna.ops_per_s, ratio,
					p.mcs.local_share, p.cna.local_share, p.mcs.jain, p.cna.jain,
					min_max(&p.mcs), min_max(&p.cna), (double)p.cna.max_wait_ns / 1e6,
					(unsigned long long)p.cna.flushes);
			fflush(stdout);
		}
	}
	if (csv)
		fclose(csv);
	return status;
}
