/* tests/unit/cpu_batch_policy.c — the measured CPU gate's decisions
 * (interpose/cpu_batch.c, compiled in), on a made-up clock.
 *
 * Simulated waiters call cpu_batch_applies() every step of the clock, and
 * between calls acquire at the rate of the setting the last call gave them:
 * the trials must give on, off, off, on; the decision must follow the
 * faster setting, keep the current one inside the margin and without
 * enough samples, and count itself on the stats line's counters.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "../../interpose/cpu_batch.c"

/* The statistics, as stats.c has them, for the decision counters. */
bool stats_enabled = true;
static struct stats_block block;
struct stats_block *stats_self(void)
{
	return &block;
}
void stats_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

#define PERIOD_NS (CPU_BATCH_SLOT_NS * CPU_BATCH_SLOTS_PER_PERIOD)
#define STEP_NS 100000ull   /* a contended acquisition every 100 us */
#define WAITERS 4

struct waiter {
	struct cpu_batch_sampler sampler;
	uint32_t acquisitions;
	bool gated;
};

static struct waiter waiters[WAITERS];

/*
 * Run the waiters from from_ns to to_ns: per step each acquires per_step_on
 * or per_step_off times, by the setting it was given.  Returns how many
 * of the calls in slots past the decision slot gave the gate.
 */
static unsigned run(uint64_t from_ns, uint64_t to_ns, uint32_t per_step_on, uint32_t per_step_off,
		    unsigned *decided_calls)
{
	unsigned gated = 0;
	*decided_calls = 0;
	for (uint64_t t = from_ns; t < to_ns; t += STEP_NS) {
		for (int w = 0; w < WAITERS; w++) {
			struct waiter *x = &waiters[w];
			/* The waiters' calls interleave a little. */
			uint64_t now = t + (uint64_t)w * 1000u;
			x->acquisitions += x->gated ? per_step_on : per_step_off;
			x->gated = cpu_batch_applies(&x->sampler, x->acquisitions, now);
			unsigned k = (unsigned)((now >> CPU_BATCH_SLOT_SHIFT) %
						CPU_BATCH_SLOTS_PER_PERIOD);
			if (k > CPU_BATCH_DECIDE_SLOT) {
				++*decided_calls;
				gated += x->gated;
			}
		}
	}
	return gated;
}

static void forget(void)
{
	cpu_batch_forget_all();
	memset(waiters, 0, sizeof waiters);
	memset(&block, 0, sizeof block);
	cpu_batch_mode = CPU_BATCH_AUTO;
}

static uint64_t stat(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* Some period well past 0, as CLOCK_MONOTONIC gives. */
static const uint64_t base = 1000 * PERIOD_NS;

static void trials_alternate(void)
{
	forget();
	struct cpu_batch_sampler s = { 0 };
	bool expect[CPU_BATCH_TRIAL_SLOTS] = { true, false, false, true };
	for (unsigned k = 0; k < CPU_BATCH_TRIAL_SLOTS; k++)
		CHECK_EQ(cpu_batch_applies(&s, k, base + k * CPU_BATCH_SLOT_NS + 5), expect[k]);
	/* Before any decision, the gate is on. */
	CHECK(cpu_batch_applies(&s, 9, base + 10 * CPU_BATCH_SLOT_NS));
}

static void follows_the_faster(void)
{
	unsigned calls, gated;
	/* Off 40% faster: the gate is off after the first period's trials. */
	forget();
	gated = run(base, base + PERIOD_NS, 10, 14, &calls);
	CHECK(calls > 0);
	CHECK_EQ(gated, 0u);
	CHECK_EQ(stat(&block.cpu_batch_off), 1u);
	CHECK_EQ(stat(&block.cpu_batch_on), 0u);

	/* Then on becomes twice as fast: back on in the next period (a
	 * change is tried again at once). */
	gated = run(base + PERIOD_NS, base + 2 * PERIOD_NS, 20, 10, &calls);
	CHECK_EQ(gated, calls);
	CHECK_EQ(stat(&block.cpu_batch_on), 1u);

	/* On twice as fast from the start: it stays on, and is tried again
	 * after 2, 4, then every 8 periods: decisions in periods 0, 2, 6, 14
	 * and 22 of 24. */
	forget();
	gated = run(base, base + 24 * PERIOD_NS, 20, 10, &calls);
	CHECK_EQ(gated, calls);
	CHECK_EQ(stat(&block.cpu_batch_on), 5u);
	CHECK_EQ(stat(&block.cpu_batch_off), 0u);
	/* A period without trials keeps the setting in its trial slots too. */
	struct cpu_batch_sampler s = { 0 };
	CHECK(cpu_batch_applies(&s, 1, base + 24 * PERIOD_NS + CPU_BATCH_SLOT_NS + 5));
}

static void margin_keeps_the_setting(void)
{
	unsigned calls, gated;
	/* Off 2% faster (margin 4%): stays on. */
	forget();
	gated = run(base, base + 2 * PERIOD_NS, 100, 102, &calls);
	CHECK_EQ(gated, calls);
	/* Off 10% faster: off; then on 2% faster: stays off. */
	forget();
	run(base, base + PERIOD_NS, 100, 110, &calls);
	gated = run(base + PERIOD_NS, base + 2 * PERIOD_NS, 102, 100, &calls);
	CHECK_EQ(gated, 0u);
	CHECK_EQ(stat(&block.cpu_batch_off), 2u);
}

/* No decision was made: the gate stayed on at every call. */
static void expect_undecided(unsigned gated, unsigned calls)
{
	CHECK_EQ(gated, calls);
	CHECK_EQ(stat(&block.cpu_batch_on) + stat(&block.cpu_batch_off), 0u);
}

static void too_few_samples_decide_nothing(void)
{
	unsigned calls, gated;
	/* Off far faster, but too few acquisitions to count. */
	forget();
	gated = run(base, base + 2 * PERIOD_NS, 0, 1, &calls);
	expect_undecided(gated, calls);
}

static void late_start_is_not_stale(void)
{
	/* The waiters first contend after the period's trials: no counts of
	 * this period, no decision; the next period's trials decide. */
	unsigned calls, gated;
	forget();
	gated = run(base + 6 * CPU_BATCH_SLOT_NS, base + PERIOD_NS, 10, 20, &calls);
	expect_undecided(gated, calls);
	gated = run(base + PERIOD_NS, base + 2 * PERIOD_NS, 10, 20, &calls);
	CHECK_EQ(gated, 0u);
	CHECK_EQ(stat(&block.cpu_batch_off), 1u);
}

static void fixed_modes(void)
{
	unsigned calls, gated;
	forget();
	cpu_batch_mode = CPU_BATCH_ON;
	gated = run(base, base + PERIOD_NS, 10, 20, &calls);
	CHECK_EQ(gated, calls);
	forget();
	cpu_batch_mode = CPU_BATCH_OFF;
	CHECK(!cpu_batch_applies(&waiters[0].sampler, 1, base));   /* a trial slot for on */
	gated = run(base, base + PERIOD_NS, 20, 10, &calls);
	CHECK_EQ(gated, 0u);
	CHECK_EQ(stat(&block.cpu_batch_on) + stat(&block.cpu_batch_off), 0u);
}

int main(void)
{
	trials_alternate();
	follows_the_faster();
	margin_keeps_the_setting();
	too_few_samples_decide_nothing();
	late_start_is_not_stale();
	fixed_modes();
	return check_report("cpu-batch-policy");
}
