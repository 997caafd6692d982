/* bench/sim/locks.c — glibc's NORMAL and ADAPTIVE mutex, MCS, and the shim. */
#include "locks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contended.h"
#include "engine.h"
#include "futex.h"
#include "glibc_mutex.h"
#include "queue_table.h"
#include "thread.h"
#include "topology.h"
#include "tunables.h"
#include "word.h"
#include "word_handoff.h"

/* glibc.pthread.mutex_spin_count's default, and the backoff cap of
 * sysdeps/x86_64/nptl/pthread_mutex_backoff.h. */
#define ADAPTIVE_MAX_SPINS 100
#define ADAPTIVE_MAX_BACKOFF 16
/* An MCS waiter re-reads its node at least this often. */
#define MCS_POLL_NS 2000

const char *const sim_lock_names[LOCK_KINDS] = { "glibc", "adaptive", "mcs", "shim" };

void sim_mutex_init(struct sim_mutex *m)
{
	memset(m, 0, sizeof *m);
	pthread_mutex_init(&m->pm, NULL);
}

/* __lll_lock_wait: 2 means "held, maybe sleepers"; sleep until we swap out a 0. */
static void glibc_lock_wait(_Atomic uint32_t *word)
{
	if (atomic_load_explicit(word, memory_order_relaxed) == 2)
		futex_wait_private(word, 2);
	while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0)
		futex_wait_private(word, 2);
}

static void glibc_lock(pthread_mutex_t *m)
{
	_Atomic uint32_t *word = mutex_word(m);
	uint32_t expected = 0;
	if (!atomic_compare_exchange_strong_explicit(word, &expected, 1, memory_order_acquire,
						     memory_order_relaxed))
		glibc_lock_wait(word);
}

static bool glibc_trylock(_Atomic uint32_t *word)
{
	uint32_t expected = 0;
	return atomic_compare_exchange_strong_explicit(word, &expected, 1, memory_order_acquire,
						       memory_order_relaxed);
}

/* pthread_mutex_lock.c, PTHREAD_MUTEX_ADAPTIVE_NP on x86-64 (glibc 2.36). */
static void adaptive_lock(pthread_mutex_t *m)
{
	_Atomic uint32_t *word = mutex_word(m);
	if (glibc_trylock(word))
		return;
	int spins = m->__data.__spins;
	int max = spins * 2 + 10 < ADAPTIVE_MAX_SPINS ? spins * 2 + 10 : ADAPTIVE_MAX_SPINS;
	int count = 0, backoff = 1;
	uint32_t jitter = sim_random(&sim_self()->rng);   /* glibc: the TSC's low bits */
	do {
		int round = backoff + (int)(jitter & (uint32_t)(backoff - 1));
		count += round;
		if (count >= max) {
			glibc_lock(m);
			break;
		}
		while (round-- > 0)
			cpu_relax();
		backoff = backoff < ADAPTIVE_MAX_BACKOFF ? backoff << 1 : backoff;
	} while (atomic_load_explicit(word, memory_order_relaxed) != 0 || !glibc_trylock(word));
	m->__data.__spins = (short)(spins + (count - spins) / 8);
}

static void glibc_unlock(pthread_mutex_t *m)
{
	if (atomic_exchange_explicit(mutex_word(m), 0, memory_order_release) > 1)
		futex_wake_private(mutex_word(m), 1);
}

static void mcs_lock(struct sim_mutex *m, struct sim_mcs_node *me)
{
	atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&me->locked, 1, memory_order_relaxed);
	/* Acquire/release: pairs with the same exchange of the next locker. */
	struct sim_mcs_node *prev = atomic_exchange_explicit(&m->mcs_tail, me,
							     memory_order_acq_rel);
	if (!prev)
		return;
	atomic_store_explicit(&prev->next, me, memory_order_release);
	/* Acquire: pairs with the release store in mcs_unlock().  The spin
	 * on our own node is fast-forwarded to the store that ends it. */
	while (atomic_load_explicit(&me->locked, memory_order_acquire))
		sim_spin_until_written(sim_self(), &me->locked, MCS_POLL_NS);
}

static void mcs_unlock(struct sim_mutex *m, struct sim_mcs_node *me)
{
	struct sim_mcs_node *next = atomic_load_explicit(&me->next, memory_order_acquire);
	if (!next) {
		struct sim_mcs_node *expected = me;
		if (atomic_compare_exchange_strong_explicit(&m->mcs_tail, &expected, NULL,
							    memory_order_release,
							    memory_order_relaxed))
			return;
		while (!(next = atomic_load_explicit(&me->next, memory_order_acquire)))
			cpu_relax();
	}
	atomic_store_explicit(&next->locked, 0, memory_order_release);
}

/* interpose/mutex.c's NORMAL lock_normal_slow() and release(), from the
 * same inline helpers (mutex.c itself exports pthread_mutex_lock, so it
 * cannot be linked into this program). */
static void shim_lock(pthread_mutex_t *m)
{
	if (!word_lock_uncontended(mutex_word(m)))
		contended_lock(m);
	thread_self()->acquisitions++;
	mutex_set_owner(m, thread_tid());
	m->__data.__nusers++;
}

static void shim_unlock(pthread_mutex_t *m)
{
	mutex_set_owner(m, 0);
	m->__data.__nusers--;
	word_unlock(mutex_word(m), mutex_handoff_slot(m));
}

/* glibc's pthread_mutex_lock/unlock around the word: the owner and the users. */
static void glibc_normal_lock(struct sim_mutex *m, struct sim_mcs_node *node)
{
	(void)node;
	glibc_lock(&m->pm);
	mutex_set_owner(&m->pm, thread_tid());
	m->pm.__data.__nusers++;
}

static void glibc_adaptive_lock(struct sim_mutex *m, struct sim_mcs_node *node)
{
	(void)node;
	adaptive_lock(&m->pm);
	mutex_set_owner(&m->pm, thread_tid());
	m->pm.__data.__nusers++;
}

static void glibc_release(struct sim_mutex *m, struct sim_mcs_node *node)
{
	(void)node;
	mutex_set_owner(&m->pm, 0);
	m->pm.__data.__nusers--;
	glibc_unlock(&m->pm);
}

static void shim_lock_mutex(struct sim_mutex *m, struct sim_mcs_node *node)
{
	(void)node;
	shim_lock(&m->pm);
}

static void shim_unlock_mutex(struct sim_mutex *m, struct sim_mcs_node *node)
{
	(void)node;
	shim_unlock(&m->pm);
}

static const struct {
	void (*lock)(struct sim_mutex *, struct sim_mcs_node *);
	void (*unlock)(struct sim_mutex *, struct sim_mcs_node *);
} lock_ops[LOCK_KINDS] = {
	[LOCK_GLIBC] = { glibc_normal_lock, glibc_release },
	[LOCK_ADAPTIVE] = { glibc_adaptive_lock, glibc_release },
	[LOCK_MCS] = { mcs_lock, mcs_unlock },
	[LOCK_SHIM] = { shim_lock_mutex, shim_unlock_mutex },
};

void sim_lock(enum sim_lock_kind kind, struct sim_mutex *m, struct sim_mcs_node *node)
{
	lock_ops[kind].lock(m, node);
}

void sim_unlock(enum sim_lock_kind kind, struct sim_mutex *m, struct sim_mcs_node *node)
{
	lock_ops[kind].unlock(m, node);
}

unsigned sim_shim_records_in_use(void)
{
	return queue_table_in_use();
}

void sim_shim_configure(unsigned nodes, unsigned cpus, uint64_t threshold_ns,
			unsigned spin_budget, unsigned shuffle_bits)
{
	char spec[32];
	snprintf(spec, sizeof spec, "nodes=%u", nodes);
	setenv("CNAMUTEX_TOPOLOGY", spec, 1);
	topology_load();
	struct tunables t;
	tunables_load(&t);
	/* init.c with CNAMUTEX_NUMA=auto: CNA order when there are two nodes. */
	cnamutex_params.numa_aware = topology_nodes() >= 2;
	cnamutex_params.threshold_ns = threshold_ns ? threshold_ns
		: (uint64_t)t.threshold_ms * 1000000u;
	cnamutex_params.shuffle_bits = shuffle_bits != SIM_TUNABLE_DEFAULT ? shuffle_bits
								     : t.shuffle_bits;
	cnamutex_params.spin_budget = spin_budget != SIM_TUNABLE_DEFAULT ? spin_budget : t.spin;
	contended_cpu_batch_ns = (uint64_t)t.cpu_batch_us * 1000u;
	cpu_batch_mode = t.cpu_batch;
	contended_cpus = cpus;
	queue_table_reset_after_fork();   /* a failed run may leave records behind */
}
