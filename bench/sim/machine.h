/* bench/sim/machine.h — the modelled machine: CPUs, cache-line and OS costs.
 *
 * Sockets x cores x hardware threads, where software threads start, what
 * moving one cache line between two hardware threads costs, and what the
 * kernel charges for a syscall, a futex wake, a context switch and how it
 * slices CPU time.  Every figure is an ESTIMATE with its source in
 * machine.c; the 2c model's line transfer is measured here (--xfer-ns).
 */
#ifndef SIM_MACHINE_H
#define SIM_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_MAX_CPUS 256

struct sim_machine {
	const char *name;
	unsigned sockets;
	unsigned cores_per_socket;
	unsigned threads_per_core;    /* hyperthreads */
	/* One cache-line transfer (a dirty line read or an RFO). */
	uint64_t same_core_ns;        /* between hyperthread siblings (L1/L2) */
	uint64_t same_socket_ns;      /* core to core through the shared L3 */
	uint64_t remote_ns;           /* socket to socket over QPI/UPI */
	uint64_t memory_ns;           /* a line nobody caches, from DRAM */
	uint64_t hit_ns;              /* an access to a line this CPU holds */
	uint64_t atomic_ns;           /* a locked read-modify-write on top of that */
	uint64_t pause_ns;            /* one round of a spin loop with PAUSE */
	/* The kernel. */
	uint64_t syscall_ns;          /* a futex call, no wake */
	uint64_t syscall_entry_ns;    /* of that, before the kernel reads the word
				       * (0: half of it) */
	uint64_t yield_ns;            /* sched_yield() (0: syscall_ns) */
	uint64_t wake_call_ns;        /* a FUTEX_WAKE that wakes somebody */
	uint64_t wake_ns;             /* from the wake until the sleeper runs (idle CPU) */
	uint64_t switch_ns;           /* a context switch on one CPU */
	uint64_t slice_ns;            /* EEVDF base slice: a thread runs this long */
	/* Each kernel cost above varies by up to this many per cent either way
	 * (sim_kernel_ns()): a race between two threads' syscalls then goes
	 * either way, as on a real machine, not always the same way. */
	unsigned kernel_jitter_pct;
};

/* Presets: "4s" (4 x 18 x 2, like the cover letter's X5-4), "2s", and
 * "2c" (this VM: 2 CPUs, one node; its line transfer set by the caller). */
bool sim_machine_preset(const char *name, struct sim_machine *out);
unsigned sim_machine_cpus(const struct sim_machine *m);
/* CPU i's socket and core (CPUs numbered cores first, then second hyperthreads). */
unsigned sim_machine_socket(const struct sim_machine *m, unsigned cpu);
unsigned sim_machine_core(const struct sim_machine *m, unsigned cpu);
/* One line transfer between two CPUs. */
uint64_t sim_machine_xfer_ns(const struct sim_machine *m, unsigned from, unsigned to);
/* Where the figures come from, for the output. */
const char *sim_machine_sources(void);

#endif
