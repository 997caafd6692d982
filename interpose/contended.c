/* interpose/contended.c — contended acquisitions.
 *
 * Only the head of a mutex's queue competes for the mutex word; everyone
 * behind it waits on its own node.  Once the head owns the word it passes
 * the headship on and leaves the queue, so the next head is already
 * spinning on the word while the owner runs.  Newcomers may still take a
 * free word on the fast path, so a parked head never leaves the lock idle.
 */
#include "contended.h"

#include <limits.h>
#include <stddef.h>

#include "cpu_batch.h"
#include "glibc_mutex.h"
#include "locality.h"
#include "profile.h"
#include "queue_table.h"
#include "report.h"
#include "stats.h"
#include "thread.h"
#include "topology.h"
#include "tunables.h"
#include "word.h"
#include "word_handoff.h"
#include "word_spinner.h"

/* Newcomers spin this fraction of the waiters' budget before queueing. */
#define PRE_QUEUE_SPIN_DIVISOR 8

/*
 * While no more threads have contended than the process has CPUs (the
 * CPUs to spare below), each waiter can have a CPU while it spins, so
 * parking saves no CPU another thread of ours needs; it only adds a futex
 * wake to every grant, while those behind wait too, and their spin credit
 * then sends them all to sleep (a convoy).  So a queued waiter then spins this many times its budget
 * before it parks.  Simulated 4-socket leveldb-like profile with one
 * newcomer spinning (word_spinner.h), 8/16/72/142 threads, 50 ms runs:
 * 0.45/0.44/0.97/0.96 of glibc with the plain budget, 0.75/0.70/1.25/0.96
 * with 8 times, 0.75/0.70/1.53/1.52 with 64 times.  The head's spin on the
 * word keeps the plain budget: longer, it only takes the word's line from
 * an owner that re-takes it (the tiny critical section at 16 threads 3.40
 * -> 0.85 of glibc).
 */
#define QUEUE_SPIN_FACTOR_WITH_CPUS 64u

struct cna_params cnamutex_params = {
	.numa_aware = false,
	.threshold_ns = TUNABLE_THRESHOLD_MS_DEFAULT * 1000000ull,
	.shuffle_bits = TUNABLE_SHUFFLE_BITS_DEFAULT,
	.spin_budget = TUNABLE_SPIN_DEFAULT,
};

uint64_t contended_cpu_batch_ns = TUNABLE_CPU_BATCH_US_DEFAULT * 1000ull;
unsigned contended_cpus = 1;

static unsigned spin_budget(struct cnamutex_thread *self, enum spin_kind kind)
{
	unsigned budget = cnamutex_params.spin_budget;
	if (kind == SPIN_BEFORE_QUEUE)
		budget /= PRE_QUEUE_SPIN_DIVISOR;
	return spin_credit_budget(&self->spin, kind, budget);
}

static unsigned queue_spin_with_cpus(unsigned budget)
{
	return budget > UINT_MAX / QUEUE_SPIN_FACTOR_WITH_CPUS
		? UINT_MAX : budget * QUEUE_SPIN_FACTOR_WITH_CPUS;
}

static void count_handoff(struct stats_block *s, const struct cna_handoff *h)
{
	if (h->granted)
		stats_add(h->local ? &s->handoffs_local : &s->handoffs_remote, 1);
	if (h->moved)
		stats_add(&s->secondary_moves, h->moved);
	if (h->flushed)
		stats_add(&s->flushes, 1);
	if (h->requeued)
		stats_add(&s->requeues, 1);
}

static uint64_t count_wait(struct stats_block *s, uint64_t start_ns)
{
	uint64_t waited = cna_now_ns() - start_ns;
	stats_add(&s->wait_total_ns, waited);
	stats_max(&s->wait_max_ns, waited);
	return waited;
}

/* The start of a contended acquisition: the clock, when instrumented, for
 * the wait's length and for the interval report (written before this
 * thread owns the mutex it waits for). */
static uint64_t instrument_start(void)
{
	if (!instrument_enabled)
		return 0;
	uint64_t now = cna_now_ns();
	report_tick(now);
	return now;
}

/* The acquisitions_* counter of one way of winning, as an offset. */
#define WON_BY(counter) offsetof(struct stats_block, counter)

/*
 * Every contended acquisition ends here, however it was won: the new owner
 * records its node in the mutex and counts the lock transfer, its way of
 * winning and its wait.  Returns the statistics block (NULL with
 * statistics off) for the caller's own counters, and the wait it counted
 * in *waited.
 */
static struct stats_block *contended_acquired(pthread_mutex_t *m, struct cnamutex_thread *self,
					      size_t won_by, uint64_t start_ns,
					      const struct cna_handoff *handoff,
					      const struct word_gate *gate,
					      const struct word_starving *starving, uint64_t *waited)
{
	int cpu = platform_current_cpu();
	enum transfer_kind transfer = mutex_note_owner(
		m, topology_node_at(self->index, cpu), cpu,
		gate && gate->node.mask && gate->node.expired);
	profile_contended(m, start_ns, handoff, transfer);
	if (gate)
		self->gate_grace = (uint8_t)(gate->grace + 1u);
	if (!stats_enabled)
		return NULL;
	struct stats_block *s = stats_self();
	stats_add((_Atomic uint64_t *)((char *)s + won_by), 1);
	if (starving && starving->handed)
		stats_add(&s->handovers, 1);
	stats_add(transfer == TRANSFER_LOCAL    ? &s->transfers_local
		  : transfer == TRANSFER_REMOTE ? &s->transfers_remote
						: &s->transfers_unknown,
		  1);
	*waited = count_wait(s, start_ns);
	return s;
}

/*
 * A waiter that is not a priority waiter spins behind a gate (word.h): it
 * leaves a free word to the last owner's CPU for up to cpu_batch_ns, while
 * that is measured to pay (cpu_batch.h), and with NUMA ordering on to its
 * node, until its wait has lasted the threshold.
 */
static struct word_gate *prepare_gate(struct word_gate *gate, pthread_mutex_t *m,
				      struct cnamutex_thread *self, uint64_t now_ns)
{
	bool numa = cnamutex_params.numa_aware;
	if (!numa && !contended_cpu_batch_ns)
		return NULL;
	/* The threshold bounds every wait a preference causes: the CPU's too. */
	uint64_t cpu_batch_ns = contended_cpu_batch_ns < cnamutex_params.threshold_ns
		? contended_cpu_batch_ns : cnamutex_params.threshold_ns;
	uint64_t now = now_ns ? now_ns : cna_now_ns();
	/* Whether batches pay is measured only while every contender can
	 * have a CPU.  With more, the gate also bounds waits: a waiter that
	 * defers to the owner's CPU polls with yields instead of sleeping on
	 * the word, where a convoy forms.  mutexbench at 8 threads on 2 CPUs,
	 * gate off: longest wait 33-45 ms (glibc 20-24 ms), Jain 0.80, 1.47
	 * of 2 CPUs busy; gate on: 2-4 ms, 0.997, 1.99. */
	if (cpu_batch_ns && thread_contenders() <= contended_cpus &&
	    !cpu_batch_applies(&self->batch, self->acquisitions, now))
		cpu_batch_ns = 0;
	if (!numa && !cpu_batch_ns)
		return NULL;
	/* With a CPU level, one CPU query serves both levels. */
	int cpu = cpu_batch_ns ? platform_current_cpu() : -1;
	if (cpu >= 0)
		thread_prepare_node_on(self, cpu);
	else
		thread_prepare_node(self);
	if (self->node.priority)
		return NULL;
	*gate = (struct word_gate){
		.owner_slot = mutex_owner_slot(m),
		/* 0: no gate yet; else the grace learnt, plus one. */
		.grace = self->gate_grace ? self->gate_grace - 1u : WORD_GATE_GRACE_MAX,
	};
	/* On one node the node level never defers, yet would read the clock
	 * at every free word and every lost attempt: leave it out.  NUMA
	 * ordering on, one node, against it off, median of 5 pairs: mutexbench
	 * 0.941 -> 0.971 at 8 threads, 0.985 -> 1.005 at 16; the tiny critical
	 * section 0.980 -> 1.007 and 0.867 -> 0.971. */
	if (numa && topology_nodes() > 1)
		gate->node = (struct gate_level){
			.mask = OWNER_NODE_MASK,
			.mine = (uint32_t)self->node.real_node + 1u,
			.until_ns = now + cnamutex_params.threshold_ns,
		};
	if (cpu_batch_ns)
		gate->cpu = (struct gate_level){
			.mask = OWNER_CPU_MASK,
			.mine = owner_cpu_bits(cpu),
			.until_ns = now + cpu_batch_ns,
		};
	return gate;
}

void contended_lock(pthread_mutex_t *m)
{
	struct cnamutex_thread *self = thread_self();
	_Atomic uint32_t *word = mutex_word(m);
	uint64_t start_ns = instrument_start();
	uint64_t waited;
	thread_note_contended(self);

	/* Most contention is a holder about to leave: spin a little on the
	 * word if no other newcomer does (like qspinlock's pending waiter),
	 * then wait on the word itself if nobody does yet; queue if somebody
	 * does. */
	bool cpus_to_spare = thread_contenders() <= contended_cpus;
	/* One clock read serves the claim, the gate and the starving deadline. */
	uint64_t now_ns = start_ns ? start_ns : cna_now_ns();
	struct word_starving starving = {
		.slot = mutex_handoff_slot(m),
		.deadline_ns = now_ns + cnamutex_params.threshold_ns,
	};
	struct word_gate gate_space;
	struct word_gate *gate = prepare_gate(&gate_space, m, self, now_ns);
	int spin = WORD_SPIN_SPENT;
	if (!cpus_to_spare || word_spinner_try_claim(m, now_ns)) {
		spin = word_spin_unwaited(word, spin_budget(self, SPIN_BEFORE_QUEUE), gate);
		if (cpus_to_spare)
			word_spinner_release(m);
		if (spin != WORD_SPIN_WAITED_ON)
			spin_credit_settle(&self->spin, SPIN_BEFORE_QUEUE,
					   spin == WORD_SPIN_SPENT);
	}
	if (spin == WORD_SPIN_ACQUIRED) {
		contended_acquired(m, self, WON_BY(acquisitions_spun), start_ns, NULL, gate, NULL,
				   &waited);
		return;
	}
	if (spin == WORD_SPIN_SPENT && word_lock_as_first_waiter(word, gate, &starving)) {
		contended_acquired(m, self, WON_BY(acquisitions_word), start_ns, NULL, gate,
				   &starving, &waited);
		return;
	}

	struct queue_record *record = queue_table_acquire(m);
	if (!record) {
		word_lock_sleeping(word, gate, &starving);
		contended_acquired(m, self, WON_BY(queue_fallbacks), start_ns, NULL, gate,
				   &starving, &waited);
		return;
	}

	thread_prepare_node(self);
	struct cna_params params = cnamutex_params;
	params.spin_budget = cpus_to_spare
		? queue_spin_with_cpus(cnamutex_params.spin_budget)
		: spin_budget(self, SPIN_IN_QUEUE);
#ifndef CNAMUTEX_BROKEN_FOR_TESTS
	/* A waiter that will not spin as head, or whose head spins keep
	 * failing, parks DORMANT: at the grant it moves, asleep, onto the word
	 * (which the granter owns until cna_pass_head() returns). */
	unsigned head_spin = spin_budget(self, SPIN_AS_HEAD);
	params.park_dormant = head_spin == 0 ||
			      spin_credit_exhausted(&self->spin, SPIN_AS_HEAD);
	params.release_futex = word;
	params.release_mark = WORD_HELD_SLEEPERS;
#endif
	params.mark_moved = stats_enabled;
	bool parked = false;
	if (!cna_enqueue(&record->queue, &self->node)) {
		parked = cna_wait_granted(&self->node, &params);
		spin_credit_settle(&self->spin, SPIN_IN_QUEUE, parked);
		/* The granter left its use of the record to us (below): our own
		 * use keeps the record, and we wait for the word anyway. */
		queue_table_release(record);
	}
#ifdef CNAMUTEX_BROKEN_FOR_TESTS
	/* Deliberately broken build: the head skips the word, so two threads
	 * can own the mutex at once.  The exclusion tests must catch this. */
	bool slept = false;
#else
	/* A DORMANT head may have been moved onto the word's futex and woken
	 * from there: it takes the word glibc's way. */
	bool slept = params.park_dormant && parked
		? word_lock_sleeping(word, gate, &starving)
		: word_lock_as_head(word, head_spin, gate, &starving);
#endif
	spin_credit_settle(&self->spin, SPIN_AS_HEAD, slept);
	struct cna_handoff handoff;
	cna_pass_head(&record->queue, &self->node, &params, &self->prng, &handoff);
	/* A new owner leaves the record alone when it granted the headship:
	 * the successor ends this use of the record for it, while the
	 * successor waits for the word, not while we hold it (the record's
	 * line is every joiner's, so a CAS on it here lengthens every queue
	 * transfer: in the simulated 4-socket leveldb-like profile at 8
	 * threads it took 71 of the 224 ns from the head's win to its
	 * return).  The last head, which empties the queue, ends its own. */
	if (!handoff.granted)
		queue_table_release(record);

	struct stats_block *s = contended_acquired(m, self, WON_BY(acquisitions_slow),
						   start_ns, &handoff, gate, &starving, &waited);
	if (s) {
		stats_add(&s->parks, (uint64_t)parked + (uint64_t)slept);
		count_handoff(s, &handoff);
		if (self->node.was_moved)
			stats_max(&s->secondary_wait_max_ns, waited);
	}
}

int contended_lock_until(pthread_mutex_t *m, clockid_t clock,
			 const struct timespec *abstime)
{
	struct cnamutex_thread *self = thread_self();
	uint64_t start_ns = instrument_start();
	uint64_t waited;
	thread_note_contended(self);
	struct word_gate gate_space;
	struct word_gate *gate = prepare_gate(&gate_space, m, self, start_ns);
	int err = word_lock_until(mutex_word(m), clock, abstime,
				  cnamutex_params.spin_budget, gate);
	if (err == 0)
		contended_acquired(m, self, WON_BY(acquisitions_timed), start_ns, NULL, gate, NULL,
				   &waited);
	return err;
}
