/* tests/unit/spin_credit.c — the adaptive spin budgets of spin_credit.h:
 * halving after a sleep, doubling after a win, per kind, between the floor
 * and the full budget.
 */
#include <string.h>

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

int main(void)
{
	fresh_thread_spins_in_full();
	sleeps_halve_and_wins_double_per_kind();
	return check_report("spin-credit");
}
