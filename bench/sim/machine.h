/* bench/sim/machine.h — the modelled machine of the NUMA cost simulation.
 *
 * Sockets x cores x hardware threads, where software threads are placed,
 * and what moving one cache line between two hardware threads costs.  The
 * costs are an ESTIMATE taken from published figures (see machine.c), not
 * measured on the machine that runs the simulator.
 */
#ifndef SIM_MACHINE_H
#define SIM_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

enum sim_placement {
	SIM_FILL,     /* CPUs in Linux's order: socket 0's cores, socket 1's, ...,
	               * then the second hyperthreads (will-it-scale's pinning) */
	SIM_SPREAD,   /* thread i on socket i mod S (the scheduler balancing sockets) */
};

struct sim_machine {
	const char *name;
	unsigned sockets;
	unsigned cores_per_socket;
	unsigned threads_per_core;    /* hyperthreads */
	/* Cost of one cache-line transfer (a dirty line read or an RFO). */
	uint64_t same_core_ns;        /* between hyperthread siblings (L1/L2) */
	uint64_t same_socket_ns;      /* core to core through the shared L3 */
	uint64_t remote_ns;           /* socket to socket over QPI/UPI */
	enum sim_placement placement;
};

struct sim_place {
	unsigned socket;
	unsigned core;                /* global core index */
};

/* The two presets: "4s" (4 x 18 x 2, like the cover letter's X5-4) and "2s". */
bool sim_machine_preset(const char *name, struct sim_machine *out);
unsigned sim_machine_hw_threads(const struct sim_machine *m);
struct sim_place sim_machine_place(const struct sim_machine *m, unsigned thread);
/* One line transfer from the hardware thread at from to the one at to. */
uint64_t sim_machine_xfer_ns(const struct sim_machine *m, struct sim_place from,
			     struct sim_place to);
/* Where the cost figures come from, for the output. */
const char *sim_machine_sources(void);

#endif
