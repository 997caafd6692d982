/* bench/sim/machine.c — presets, placement and line-transfer costs. */
#include "machine.h"

#include <string.h>

/*
 * The transfer costs are round figures within the ranges published for
 * multi-socket Intel Xeons (Haswell-EX/Broadwell/Skylake-SP): Intel Memory
 * Latency Checker's cache-to-cache (HITM) latencies and public core-to-core
 * ping-pong measurements put an on-socket transfer at about 20-50 ns, a
 * cross-socket one over QPI/UPI at about 100-150 ns, and a transfer between
 * hyperthread siblings at about 5-15 ns.  Four-socket parts sit at the high
 * end of the remote range (snoops go to three other sockets).
 */
static const struct sim_machine presets[] = {
	{ .name = "4s", .sockets = 4, .cores_per_socket = 18, .threads_per_core = 2,
	  .same_core_ns = 10, .same_socket_ns = 40, .remote_ns = 140,
	  .placement = SIM_FILL },
	{ .name = "2s", .sockets = 2, .cores_per_socket = 18, .threads_per_core = 2,
	  .same_core_ns = 10, .same_socket_ns = 40, .remote_ns = 120,
	  .placement = SIM_FILL },
};

const char *sim_machine_sources(void)
{
	return "line-transfer costs are round figures from published cache-to-cache "
	       "latencies of 2- and 4-socket Intel Xeons (Intel Memory Latency Checker "
	       "HITM figures, public core-to-core ping-pong measurements): "
	       "hyperthread sibling ~5-15 ns, same socket ~20-50 ns, other socket "
	       "~100-150 ns";
}

bool sim_machine_preset(const char *name, struct sim_machine *out)
{
	for (unsigned i = 0; i < sizeof presets / sizeof presets[0]; i++) {
		if (strcmp(presets[i].name, name) == 0) {
			*out = presets[i];
			return true;
		}
	}
	return false;
}

unsigned sim_machine_hw_threads(const struct sim_machine *m)
{
	return m->sockets * m->cores_per_socket * m->threads_per_core;
}

/* Cores are used once each before any second hyperthread is. */
struct sim_place sim_machine_place(const struct sim_machine *m, unsigned thread)
{
	unsigned cores = m->sockets * m->cores_per_socket;
	unsigned slot = thread % cores;
	struct sim_place p;
	if (m->placement == SIM_SPREAD) {
		p.socket = slot % m->sockets;
		p.core = p.socket * m->cores_per_socket + slot / m->sockets;
	} else {
		p.socket = slot / m->cores_per_socket;
		p.core = slot;
	}
	return p;
}

uint64_t sim_machine_xfer_ns(const struct sim_machine *m, struct sim_place from,
			     struct sim_place to)
{
	if (from.socket != to.socket)
		return m->remote_ns;
	if (from.core != to.core)
		return m->same_socket_ns;
	return m->same_core_ns;
}
