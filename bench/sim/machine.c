/* bench/sim/machine.c — presets, placement and costs, each with its source. */
#include "machine.h"

#include <string.h>

/*
 * Line transfers: round figures within the ranges published for multi-socket
 * Intel Xeons (Haswell-EX/Broadwell/Skylake-SP): Intel Memory Latency
 * Checker's cache-to-cache (HITM) latencies and public core-to-core
 * ping-pong measurements put an on-socket transfer at about 20-50 ns, a
 * cross-socket one over QPI/UPI at about 100-150 ns, and a transfer between
 * hyperthread siblings at about 5-15 ns.  Four-socket parts sit at the high
 * end of the remote range (snoops go to three other sockets).  Local DRAM
 * about 80-90 ns (the same MLC figures).
 *
 * CPU: a hit costs about one L1 access plus the loop around it (~1 ns); a
 * LOCK-prefixed RMW about 18-20 cycles (Agner Fog's instruction tables,
 * Haswell), ~7 ns at 2.6 GHz; PAUSE is ~10 cycles before Skylake (Intel's
 * optimization manual, 140 on Skylake-SP), so one spin round with its load
 * and branch about 5 ns on the cover letter's Haswell-EX.
 *
 * Kernel: a futex syscall that finds nobody about 0.3 us and one that
 * wakes a sleeper about 1 us (the wake sends an IPI); a sleeper on an idle
 * CPU runs about 4 us after the wake (idle exit plus scheduling; the same
 * order as the 3-4 us futex sleep/wake round trip measured on this VM, see
 * interpose/tunables.h); a context switch about 1.5 us with its cache
 * refill (lmbench lat_ctx figures for small working sets).  The scheduler
 * is EEVDF's (Linux >= 6.6, kernel/sched/fair.c): base_slice 0.75 ms scaled
 * by 1 + log2(CPUs) up to 8 CPUs (SCHED_TUNABLESCALING_LOG), x4 on the big
 * presets, x2 on 2 CPUs; with RUN_TO_PARITY a woken thread does not preempt
 * the running one before its slice is used.  Kernel costs vary by +-10%:
 * sched_yield() alone on this VM takes 1233-1483 ns from its 1st to its
 * 99th percentile around a median of 1332 (200 000 calls).
 */
#define KERNEL_COSTS(scale)                                                    \
	.syscall_ns = 300, .wake_call_ns = 1000, .wake_ns = 4000,              \
	.switch_ns = 1500, .slice_ns = 750000 * (scale), .kernel_jitter_pct = 10

static const struct sim_machine presets[] = {
	{ .name = "4s", .sockets = 4, .cores_per_socket = 18, .threads_per_core = 2,
	  .same_core_ns = 10, .same_socket_ns = 40, .remote_ns = 140, .memory_ns = 90,
	  .hit_ns = 1, .atomic_ns = 7, .pause_ns = 5, KERNEL_COSTS(4) },
	{ .name = "2s", .sockets = 2, .cores_per_socket = 18, .threads_per_core = 2,
	  .same_core_ns = 10, .same_socket_ns = 40, .remote_ns = 120, .memory_ns = 90,
	  .hit_ns = 1, .atomic_ns = 7, .pause_ns = 5, KERNEL_COSTS(4) },
	/* This VM: two vCPUs of one node.  Its transfer cost swings with the
	 * host's placement of the vCPUs (a ping-pong round trip of ~110 ns at
	 * times, 420-550 ns at others), so scripts/simulate --validate measures
	 * it and passes it in (--xfer-ns); 60 ns is the fast mode's figure.
	 * PAUSE: 1000 spin rounds take ~18 us here (interpose/tunables.h).  A
	 * locked RMW 4 ns: this AMD EPYC's single-thread mutexbench --cs-work 0
	 * --noncs-work 0 is 15 ns an operation, two of them and a few hits. */
	{ .name = "2c", .sockets = 1, .cores_per_socket = 2, .threads_per_core = 1,
	  .same_core_ns = 60, .same_socket_ns = 60, .remote_ns = 60, .memory_ns = 90,
	  .hit_ns = 1, .atomic_ns = 4, .pause_ns = 18, KERNEL_COSTS(2) },
};

const char *sim_machine_sources(void)
{
	return "costs are round figures from published measurements (Intel MLC "
	       "cache-to-cache latencies, Agner Fog's tables, lmbench, CFS defaults); "
	       "see bench/sim/machine.c";
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

unsigned sim_machine_cpus(const struct sim_machine *m)
{
	return m->sockets * m->cores_per_socket * m->threads_per_core;
}

/* Linux's order on such machines: every core once, socket by socket, then
 * the second hyperthreads in the same order (will-it-scale pins this way). */
unsigned sim_machine_core(const struct sim_machine *m, unsigned cpu)
{
	return cpu % (m->sockets * m->cores_per_socket);
}

unsigned sim_machine_socket(const struct sim_machine *m, unsigned cpu)
{
	return sim_machine_core(m, cpu) / m->cores_per_socket;
}

uint64_t sim_machine_xfer_ns(const struct sim_machine *m, unsigned from, unsigned to)
{
	if (sim_machine_socket(m, from) != sim_machine_socket(m, to))
		return m->remote_ns;
	if (sim_machine_core(m, from) != sim_machine_core(m, to))
		return m->same_socket_ns;
	return m->same_core_ns;
}
