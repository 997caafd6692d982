/* bench/sim/calibrate.h — the measured part of the estimate. */
#ifndef SIM_CALIBRATE_H
#define SIM_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Mean wall time of one real cna_pass_head() on this machine, on a warm
 * single core with a full queue of 16 waiters: the software cost of a
 * handoff without its cache misses (the model adds those).  numa_aware
 * picks CNA or FIFO order; the waiters are on one node, or spread over
 * four (then CNA keeps a secondary queue and reads the clock each pass).
 */
uint64_t sim_measure_pass_ns(bool numa_aware, unsigned nodes, unsigned passes);

#endif
