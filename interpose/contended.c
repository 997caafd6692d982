/* interpose/contended.c — contended acquisitions.
 *
 * Only the head of a mutex's queue competes for the mutex word; everyone
 * behind it waits on its own node.  Once the head owns the word it passes
 * the headship on and leaves the queue, so the next head is already
 * spinning on the word while the owner runs.  Newcomers may still take a
 * free word on the fast path, so a parked head never leaves the lock idle.
 */
#include "contended.h"

#include "glibc_mutex.h"
#include "profile.h"
#include "queue_table.h"
#include "stats.h"
#include "thread.h"
#include "tunables.h"
#include "word.h"

/* Newcomers spin this fraction of the waiters' budget before queueing. */
#define PRE_QUEUE_SPIN_DIVISOR 8

struct cna_params cnamutex_params = {
	.numa_aware = false,
	.threshold_ns = TUNABLE_THRESHOLD_MS_DEFAULT * 1000000ull,
	.shuffle_bits = TUNABLE_SHUFFLE_BITS_DEFAULT,
	.spin_budget = TUNABLE_SPIN_DEFAULT,
};

static unsigned pre_queue_spin_budget(void)
{
	return cnamutex_params.spin_budget / PRE_QUEUE_SPIN_DIVISOR;
}

static void count_handoff(struct stats_block *s, const struct cna_handoff *h)
{
	if (h->granted)
		stats_add(h->local ? &s->handoffs_local : &s->handoffs_remote, 1);
	if (h->moved)
		stats_add(&s->secondary_moves, h->moved);
	if (h->flushed)
		stats_add(&s->flushes, 1);
}

static void count_wait(struct stats_block *s, uint64_t start_ns)
{
	uint64_t waited = cna_now_ns() - start_ns;
	stats_add(&s->wait_total_ns, waited);
	stats_max(&s->wait_max_ns, waited);
}

static void count_spun(uint64_t start_ns)
{
	if (stats_enabled) {
		struct stats_block *s = stats_self();
		stats_add(&s->acquisitions_spun, 1);
		count_wait(s, start_ns);
	}
}

void contended_lock(pthread_mutex_t *m)
{
	struct cnamutex_thread *self = thread_self();
	_Atomic uint32_t *word = mutex_word(m);
	uint64_t start_ns = instrument_enabled ? cna_now_ns() : 0;

	/* Most contention is a holder about to leave: spin a little on the
	 * word before paying for the queue (like qspinlock's pending waiter). */
	if (word_spin_lock(word, pre_queue_spin_budget())) {
		count_spun(start_ns);
		profile_contended(m, start_ns, NULL);
		return;
	}

	struct queue_record *record = queue_table_acquire(m);
	if (!record) {
		word_lock_sleeping(word);
		if (stats_enabled) {
			struct stats_block *s = stats_self();
			stats_add(&s->queue_fallbacks, 1);
			count_wait(s, start_ns);
		}
		profile_contended(m, start_ns, NULL);
		return;
	}

	thread_prepare_node(self);
	bool parked = cna_wait_for_head(&record->queue, &self->node, &cnamutex_params);
#ifdef CNAMUTEX_BROKEN_FOR_TESTS
	/* Deliberately broken build: the head skips the word, so two threads
	 * can own the mutex at once.  The exclusion tests must catch this. */
	bool slept = false;
#else
	bool slept = word_lock_as_head(word, cnamutex_params.spin_budget);
#endif
	struct cna_handoff handoff;
	cna_pass_head(&record->queue, &self->node, &cnamutex_params, &self->prng, &handoff);
	queue_table_release(record);

	if (stats_enabled) {
		struct stats_block *s = stats_self();
		stats_add(&s->acquisitions_slow, 1);
		stats_add(&s->parks, (uint64_t)parked + (uint64_t)slept);
		count_handoff(s, &handoff);
		count_wait(s, start_ns);
	}
	profile_contended(m, start_ns, &handoff);
}

int contended_lock_until(pthread_mutex_t *m, clockid_t clock,
			 const struct timespec *abstime)
{
	uint64_t start_ns = instrument_enabled ? cna_now_ns() : 0;
	int err = word_lock_until(mutex_word(m), clock, abstime,
				  cnamutex_params.spin_budget);
	if (stats_enabled && err == 0) {
		struct stats_block *s = stats_self();
		stats_add(&s->acquisitions_timed, 1);
		count_wait(s, start_ns);
	}
	if (err == 0)
		profile_contended(m, start_ns, NULL);
	return err;
}
