/* tests/unit/spin_credit.c — the adaptive spin budgets of spin_credit.h:
 * halving after a sleep, doubling after a win, the floor, and the
 * oversubscription look (preempted since the last look: least budget for
 * every kind).
 */
#include <string.h>
#include <sys/resource.h>

#include "../check.h"
#include "spin_credit.h"

#define BUDGET 1000u
#define FLOOR (BUDGET >> SPIN_SHIFT_MAX)

static void check_budgets(const struct spin_credit *c, unsigned before_queue,
			  unsigned in_queue, unsigned as_head)
{
	CHECK_EQ(spin_credit_budget(c, SPIN_BEFORE_QUEUE, BUDGET), before_queue);
	CHECK_EQ(spin_credit_budget(c, SPIN_IN_QUEUE, BUDGET), in_queue);
	CHECK_EQ(spin_credit_budget(c, SPIN_AS_HEAD, BUDGET), as_head);
}

static void fresh_thread_spins_in_full(void)
{
	struct spin_credit c;
	memset(&c, 0, sizeof c);        /* as zero-initialised TLS */
	check_budgets(&c, BUDGET, BUDGET, BUDGET);
	CHECK(!c.crowded);
}

static void sleeps_halve_and_wins_double_per_kind(void)
{
	struct spin_credit c;
	memset(&c, 0, sizeof c);
	spin_credit_settle(&c, SPIN_AS_HEAD, true);
	check_budgets(&c, BUDGET, BUDGET, BUDGET / 2);
	spin_credit_settle(&c, SPIN_AS_HEAD, true);
	spin_credit_settle(&c, SPIN_IN_QUEUE, true);
	check_budgets(&c, BUDGET, BUDGET / 2, BUDGET / 4);

	for (int i = 0; i < 20; i++)
		spin_credit_settle(&c, SPIN_AS_HEAD, true);
	check_budgets(&c, BUDGET, BUDGET / 2, FLOOR);   /* never below the floor */

	spin_credit_settle(&c, SPIN_AS_HEAD, false);
	check_budgets(&c, BUDGET, BUDGET / 2, BUDGET >> (SPIN_SHIFT_MAX - 1));
	for (int i = 0; i < 20; i++)
		spin_credit_settle(&c, SPIN_AS_HEAD, false);
	check_budgets(&c, BUDGET, BUDGET / 2, BUDGET);  /* never above the budget */
}

static void preemption_gives_every_kind_the_floor(void)
{
	struct spin_credit c;
	memset(&c, 0, sizeof c);
	spin_credit_settle(&c, SPIN_IN_QUEUE, true);

	spin_credit_observe(&c, 0);             /* no preemption yet */
	CHECK(!c.crowded);
	check_budgets(&c, BUDGET, BUDGET / 2, BUDGET);

	spin_credit_observe(&c, 3);             /* preempted since the last look */
	CHECK(c.crowded);
	check_budgets(&c, FLOOR, FLOOR, FLOOR);

	/* Sleeps and wins still count while crowded ... */
	spin_credit_settle(&c, SPIN_IN_QUEUE, false);
	spin_credit_settle(&c, SPIN_AS_HEAD, true);
	check_budgets(&c, FLOOR, FLOOR, FLOOR);

	/* ... and hold once a look finds no new preemption. */
	spin_credit_observe(&c, 3);
	CHECK(!c.crowded);
	check_budgets(&c, BUDGET, BUDGET, BUDGET / 2);
}

static long preemptions_now(void)
{
	struct rusage usage;
	CHECK_EQ(getrusage(RUSAGE_THREAD, &usage), 0);
	return usage.ru_nivcsw;
}

static void looks_once_per_period_at_the_real_count(void)
{
	struct spin_credit c;
	memset(&c, 0, sizeof c);
	/* A count no look can return: the first look must replace it. */
	c.preemptions_seen = -1;
	for (int i = 1; i < SPIN_LOOK_PERIOD; i++)
		spin_credit_count_contended(&c);
	CHECK_EQ(c.preemptions_seen, -1);       /* no look before the period ends */
	CHECK(!c.crowded);

	long before = preemptions_now();
	spin_credit_count_contended(&c);        /* the period's last: looks */
	long after = preemptions_now();
	CHECK(c.preemptions_seen >= before && c.preemptions_seen <= after);
	CHECK(c.crowded);                       /* -1 -> the real count changed */
	CHECK_EQ(c.since_look, 0);

	spin_credit_count_contended(&c);
	CHECK_EQ(c.since_look, 1);
}

int main(void)
{
	fresh_thread_spins_in_full();
	sleeps_halve_and_wins_double_per_kind();
	preemption_gives_every_kind_the_floor();
	looks_once_per_period_at_the_real_count();
	return check_report("spin-credit");
}
