/* bench/sim/locks.h — the locks the simulation compares, on one mutex type.
 *
 *   glibc     glibc's NORMAL mutex (nptl/lowlevellock.c): CAS 0 -> 1, else
 *             exchange in 2 and futex-wait until the exchange returns 0;
 *             unlock exchanges in 0 and wakes one if it was 2.
 *   adaptive  glibc's ADAPTIVE one: a bounded spin of trylocks with
 *             exponential backoff first (up to __spins * 2 + 10, at most
 *             100, the average adapting by 1/8), then as NORMAL.
 *   mcs       a plain MCS queue lock (spins on its own node, never sleeps),
 *             for reference.
 *   shim      libcnamutex's NORMAL lock and unlock: glibc's CAS, then the
 *             library's own contended_lock() (interpose/contended.c, built
 *             into this program with -DCNA_SIMULATED), word_unlock().
 * The first three are written here from glibc's documented protocol; the
 * shim's decisions are all the library's code.
 */
#ifndef SIM_LOCKS_H
#define SIM_LOCKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct sim_mcs_node {
	_Atomic(struct sim_mcs_node *) next;
	_Atomic uint32_t locked;
} __attribute__((aligned(64)));

struct sim_mutex {
	pthread_mutex_t pm __attribute__((aligned(128)));  /* glibc's and the shim's */
	_Atomic(struct sim_mcs_node *) mcs_tail __attribute__((aligned(128)));
};

enum sim_lock_kind { LOCK_GLIBC, LOCK_ADAPTIVE, LOCK_MCS, LOCK_SHIM, LOCK_KINDS };

extern const char *const sim_lock_names[LOCK_KINDS];

void sim_mutex_init(struct sim_mutex *m);
/* node: the caller's own MCS node (used by LOCK_MCS only). */
void sim_lock(enum sim_lock_kind kind, struct sim_mutex *m, struct sim_mcs_node *node);
void sim_unlock(enum sim_lock_kind kind, struct sim_mutex *m, struct sim_mcs_node *node);
/* The library's state after a run: records in use, for the checks. */
unsigned sim_shim_records_in_use(void);
/* Set the library's parameters as its load-time code would (init.c). */
/* 0 for threshold_ns, SIM_TUNABLE_DEFAULT for spin_budget or shuffle_bits:
 * the tunables' value. */
#define SIM_TUNABLE_DEFAULT 0xffffffffu
void sim_shim_configure(unsigned nodes, unsigned cpus, uint64_t threshold_ns,
			unsigned spin_budget, unsigned shuffle_bits);

#endif
