/* bench/sim/explore.h — the schedule explorer (cnasim --explore). */
#ifndef SIM_EXPLORE_H
#define SIM_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Run the real code under seeds [first, first + count): each seed picks a
 * lock, a profile, a thread count, the shim's spin budget and NUMA mode,
 * and perturbs the schedule (random delays and preemptions at events,
 * futex wakes in random order, spurious wake-ups, failing weak CASes).
 * Checks: at most one owner, every thread finishes (no lost wake-up), every
 * queue record and node returned, no wait beyond the starvation bound.  The
 * first failing seed is replayed to show it fails the same way.  Returns 0
 * if every seed passed, 1 if one failed and its replay failed identically,
 * 2 if the replay differed (it stops at the first failing seed).
 */
unsigned sim_explore(uint32_t first, unsigned count, bool verbose);

#endif
