/* interpose/topology.c — cpu -> node table, read once at load. */
#include "topology.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cna/platform.h"
#include "tunables.h"

#ifdef HAVE_LIBNUMA
#include <dlfcn.h>
#include <numa.h>

/* libnuma is opened only to read the table at load and closed again: kept
 * mapped it would cost every fork() of the program its mappings (fork +
 * wait with libnuma merely preloaded: 1.10-1.15x glibc's time). */
#define LIBNUMA_SONAME "libnuma.so.1"
#endif

enum topology_mode { TOPOLOGY_REAL, TOPOLOGY_STRIPE, TOPOLOGY_THREADS, TOPOLOGY_CPULIST };

struct topology {
	enum topology_mode mode;
	int nodes;
	int16_t cpu_node[TOPOLOGY_MAX_CPUS];
};

static struct topology topo = { .mode = TOPOLOGY_REAL, .nodes = 1 };

static bool parse_count(const char *text, int *out, const char **reason)
{
	unsigned n;
	if (!tunable_parse_uint(text, 1, TOPOLOGY_MAX_NODES, &n, reason))
		return false;
	*out = (int)n;
	return true;
}

/* One node's list: "a-b,c,..." up to '/' or the end. */
static const char *parse_cpu_list(const char *p, int node, struct topology *t,
				  const char **reason)
{
	for (;;) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				goto bad;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi >= TOPOLOGY_MAX_CPUS) {
			*reason = "CPU out of range";
			return NULL;
		}
		for (unsigned long c = lo; c <= hi; c++)
			t->cpu_node[c] = (int16_t)node;
		if (*p != ',')
			return p;
		p++;
	}
bad:
	*reason = "malformed CPU list";
	return NULL;
}

static bool parse_into(const char *spec, struct topology *t, const char **reason)
{
	memset(t, 0, sizeof *t);
	if (!strncmp(spec, "nodes=", 6)) {
		t->mode = TOPOLOGY_STRIPE;
		return parse_count(spec + 6, &t->nodes, reason);
	}
	if (!strncmp(spec, "threads=", 8)) {
		t->mode = TOPOLOGY_THREADS;
		return parse_count(spec + 8, &t->nodes, reason);
	}
	if (!strncmp(spec, "cpus=", 5)) {
		t->mode = TOPOLOGY_CPULIST;
		const char *p = spec + 5;
		for (int node = 0;; node++) {
			if (node >= TOPOLOGY_MAX_NODES) {
				*reason = "too many nodes";
				return false;
			}
			p = parse_cpu_list(p, node, t, reason);
			if (!p)
				return false;
			t->nodes = node + 1;
			if (!*p)
				return true;
			if (*p != '/') {
				*reason = "malformed CPU list";
				return false;
			}
			p++;
		}
	}
	*reason = *spec ? "expected nodes=N, threads=N or cpus=LIST/LIST..."
			: "empty value";
	return false;
}

bool topology_parse(const char *spec, const char **reason)
{
	static struct topology scratch;   /* large: keep it off the stack */
	return parse_into(spec, &scratch, reason);
}

static void load_real(void)
{
	topo.mode = TOPOLOGY_REAL;
	topo.nodes = 1;
	memset(topo.cpu_node, 0, sizeof topo.cpu_node);
#ifdef HAVE_LIBNUMA
	void *libnuma = dlopen(LIBNUMA_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!libnuma)
		return;
	__typeof__(numa_available) *available =
		(__typeof__(numa_available) *)dlsym(libnuma, "numa_available");
	__typeof__(numa_num_configured_cpus) *configured_cpus =
		(__typeof__(numa_num_configured_cpus) *)dlsym(libnuma, "numa_num_configured_cpus");
	__typeof__(numa_node_of_cpu) *node_of_cpu =
		(__typeof__(numa_node_of_cpu) *)dlsym(libnuma, "numa_node_of_cpu");
	if (!available || !configured_cpus || !node_of_cpu || available() < 0) {
		dlclose(libnuma);
		return;
	}
	int cpus = configured_cpus();
	if (cpus > TOPOLOGY_MAX_CPUS)
		cpus = TOPOLOGY_MAX_CPUS;
	int max_node = 0;
	for (int c = 0; c < cpus; c++) {
		int node = node_of_cpu(c);
		if (node < 0 || node >= TOPOLOGY_MAX_NODES)
			node = 0;
		topo.cpu_node[c] = (int16_t)node;
		if (node > max_node)
			max_node = node;
	}
	topo.nodes = max_node + 1;
	dlclose(libnuma);
#endif
}

void topology_load(void)
{
	const char *spec = getenv("CNAMUTEX_TOPOLOGY");
	const char *reason;
	if (spec && parse_into(spec, &topo, &reason))
		return;
	if (spec)
		tunable_complain("CNAMUTEX_TOPOLOGY", spec, reason, "the machine's topology");
	load_real();
}

int topology_nodes(void) { return topo.nodes; }

bool topology_is_per_thread(void) { return topo.mode == TOPOLOGY_THREADS; }

int topology_node_of_cpu(int cpu)
{
	if (cpu < 0)
		return 0;
	if (topo.mode == TOPOLOGY_STRIPE)
		return cpu % topo.nodes;
	return cpu < TOPOLOGY_MAX_CPUS ? topo.cpu_node[cpu] : 0;
}

int topology_node_of_thread_index(unsigned index)
{
	return (int)(index % (unsigned)topo.nodes);
}

/* The CPU matters: neither a per-thread mode nor a single node. */
static bool node_follows_cpu(void)
{
	return topo.mode != TOPOLOGY_THREADS && topo.nodes > 1;
}

int topology_node_at(unsigned thread_index, int cpu)
{
	if (topo.mode == TOPOLOGY_THREADS)
		return topology_node_of_thread_index(thread_index);
	return node_follows_cpu() ? topology_node_of_cpu(cpu) : 0;
}

int topology_current_node(unsigned thread_index)
{
	return topology_node_at(thread_index, node_follows_cpu() ? platform_current_cpu() : 0);
}
