/* interpose/cpu_batch.c — the measured CPU gate (cpu_batch.h says how). */
#include "cpu_batch.h"

#include <stdatomic.h>

#include "stats.h"

enum cpu_batch_mode cpu_batch_mode = CPU_BATCH_AUTO;

/*
 * The process's acquisitions in the trials of one period, and the
 * decision.  Every field is a hint, relaxed: a count lost to a race with
 * the period's reset costs one decision its accuracy, never a lock.
 * Written a few times per period, by waiters only.
 */
static struct {
	_Alignas(64) _Atomic uint64_t period;     /* the period counted, plus one */
	_Atomic uint64_t count[2];                /* [0]: gate on, [1]: off */
	_Atomic uint64_t decided;                 /* last period decided, plus one */
	_Atomic bool gate_off;                    /* the decision */
	_Atomic uint64_t next_trials;             /* the next period with trials */
	_Atomic unsigned kept;                    /* decisions in a row that kept it */
} shared;

/* Trial k's setting, 0 (on) or 1 (off): on, off, off, on, so that both
 * settings sit equally early in the period on average (a count handed in
 * late is lost). */
static unsigned trial_setting(unsigned k)
{
	return k == 1 || k == 2;
}

/* A new period's first waiter clears the counts, once. */
static void start_period(uint64_t period)
{
	uint64_t seen = atomic_load_explicit(&shared.period, memory_order_relaxed);
	if (seen >= period + 1 ||
	    !atomic_compare_exchange_strong_explicit(&shared.period, &seen, period + 1,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	for (int i = 0; i < 2; i++)
		atomic_store_explicit(&shared.count[i], 0, memory_order_relaxed);
}

/*
 * Our acquisitions between from_ns and to_ns, spread evenly over that
 * time, go to the trial slots of the period it overlaps (the one of to_ns:
 * what fell in an earlier period's trials comes too late).
 */
static void spread(struct cpu_batch_sampler *s, uint64_t from_ns, uint64_t to_ns,
		   uint32_t acquisitions, uint64_t period)
{
	uint64_t span = to_ns - from_ns;
	if (!span || !acquisitions)
		return;
	uint64_t first = period * CPU_BATCH_SLOTS_PER_PERIOD;
	for (unsigned k = 0; k < CPU_BATCH_TRIAL_SLOTS; k++) {
		uint64_t lo = (first + k) << CPU_BATCH_SLOT_SHIFT, hi = lo + CPU_BATCH_SLOT_NS;
		uint64_t a = from_ns > lo ? from_ns : lo, b = to_ns < hi ? to_ns : hi;
		if (a < b)
			s->pending[trial_setting(k)] +=
				(uint64_t)((__uint128_t)acquisitions * (b - a) / span);
	}
}

/* Compare the trials of period, once per period. */
static void decide(uint64_t period)
{
	uint64_t seen = atomic_load_explicit(&shared.decided, memory_order_relaxed);
	if (seen > period ||
	    !atomic_compare_exchange_strong_explicit(&shared.decided, &seen, period + 1,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	if (atomic_load_explicit(&shared.period, memory_order_relaxed) != period + 1)
		return;   /* nobody cleared the counts for this period: they are stale */
	/* Both settings had the same time: compare the counts. */
	uint64_t on = atomic_load_explicit(&shared.count[0], memory_order_relaxed);
	uint64_t off = atomic_load_explicit(&shared.count[1], memory_order_relaxed);
	if (on < CPU_BATCH_MIN_ACQUISITIONS || off < CPU_BATCH_MIN_ACQUISITIONS)
		return;   /* too few: keep what we have */
	bool was_off = atomic_load_explicit(&shared.gate_off, memory_order_relaxed);
	bool gate_off = was_off;
	__uint128_t margin = 100 + CPU_BATCH_MARGIN_PERCENT;
	if (!gate_off && (__uint128_t)off * 100 > (__uint128_t)on * margin)
		gate_off = true;
	else if (gate_off && (__uint128_t)on * 100 > (__uint128_t)off * margin)
		gate_off = false;
	atomic_store_explicit(&shared.gate_off, gate_off, memory_order_relaxed);
	/* A setting kept again is tried less often: every 2, 4, then 8 periods. */
	unsigned kept = atomic_load_explicit(&shared.kept, memory_order_relaxed);
	kept = gate_off == was_off ? (kept < CPU_BATCH_MAX_BACKOFF ? kept + 1 : kept) : 0;
	atomic_store_explicit(&shared.kept, kept, memory_order_relaxed);
	atomic_store_explicit(&shared.next_trials, period + (1ull << kept), memory_order_relaxed);
	if (stats_enabled) {
		struct stats_block *b = stats_self();
		stats_add(gate_off ? &b->cpu_batch_off : &b->cpu_batch_on, 1);
	}
}

bool cpu_batch_applies(struct cpu_batch_sampler *s, uint32_t acquisitions, uint64_t now_ns)
{
	if (cpu_batch_mode != CPU_BATCH_AUTO)
		return cpu_batch_mode == CPU_BATCH_ON;
	uint64_t slot = now_ns >> CPU_BATCH_SLOT_SHIFT;
	uint64_t period = slot / CPU_BATCH_SLOTS_PER_PERIOD;
	unsigned k = (unsigned)(slot % CPU_BATCH_SLOTS_PER_PERIOD);
	if (!s->last_ns || s->period != period) {
		/* A new period: what we had not handed in of the last is lost. */
		s->period = period;
		s->pending[0] = s->pending[1] = 0;
		s->handed_in = false;
		start_period(period);
	}
	/* A period without trials (the back-off) is not counted at all. */
	bool trials = period >= atomic_load_explicit(&shared.next_trials, memory_order_relaxed);
	if (trials && s->last_ns && now_ns > s->last_ns && !s->handed_in)
		spread(s, s->last_ns, now_ns, acquisitions - s->last_count, period);
	s->last_ns = now_ns;
	s->last_count = acquisitions;
	if (k < CPU_BATCH_TRIAL_SLOTS && trials)
		return trial_setting(k) == 0;
	if (trials && !s->handed_in) {
		s->handed_in = true;
		if (atomic_load_explicit(&shared.period, memory_order_relaxed) == period + 1)
			for (int i = 0; i < 2; i++)
				if (s->pending[i])
					atomic_fetch_add_explicit(&shared.count[i], s->pending[i],
								  memory_order_relaxed);
	}
	if (k >= CPU_BATCH_DECIDE_SLOT && trials)
		decide(period);
	return !atomic_load_explicit(&shared.gate_off, memory_order_relaxed);
}

void cpu_batch_forget_all(void)
{
	atomic_store_explicit(&shared.period, 0, memory_order_relaxed);
	atomic_store_explicit(&shared.decided, 0, memory_order_relaxed);
	atomic_store_explicit(&shared.gate_off, false, memory_order_relaxed);
	atomic_store_explicit(&shared.next_trials, 0, memory_order_relaxed);
	atomic_store_explicit(&shared.kept, 0, memory_order_relaxed);
	for (int i = 0; i < 2; i++)
		atomic_store_explicit(&shared.count[i], 0, memory_order_relaxed);
}
