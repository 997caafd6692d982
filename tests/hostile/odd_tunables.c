/* tests/hostile/odd_tunables.c — the values tests/unit/bad_tunables.c does
 * not try, for every CNAMUTEX_* variable: inner blanks, tabs, newlines,
 * 10 KB strings, numbers of hundreds of digits, a sign, hex and exponent
 * forms.  Each child under the shim must print exactly one line starting
 * "cnamutex: ignoring NAME=", nothing else from the shim, and exit 0 with
 * its mutex working.
 *
 *   hostile-odd-tunables          the table, one child per case
 *   hostile-odd-tunables child    two threads on one mutex
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "../check.h"
#include "../unit/child.h"

#define LONG_VALUE 10240

static int child(void)
{
	return child_mutex_workout("odd-tunables child");
}

static const char *const names[] = {
	"CNAMUTEX_NUMA", "CNAMUTEX_THRESHOLD_MS", "CNAMUTEX_SHUFFLE_BITS", "CNAMUTEX_SPIN",
	"CNAMUTEX_STATS", "CNAMUTEX_PROFILE", "CNAMUTEX_REPORT_INTERVAL_S",
	"CNAMUTEX_CPU_BATCH_US", "CNAMUTEX_CPU_BATCH",
};

/* Refused by every scalar tunable; %s is replaced by nothing. */
static const char *const odd_values[] = {
	"1 0", "\t5", "5\t", "5\n", "\n", "o n", "+1", "+0", "0x10", "0X1", "1e3",
	"1E1", "-0", "1,5", "١", "5\r",
};

static const char *const odd_topologies[] = {
	"nodes=+2", "nodes=0x2", "nodes=1e1", "nodes=\t2", "nodes=2\n", "nodes=2 2",
	"threads= 2", "threads=-1", "cpus=+0/1", "NODES=2", "nodes=2,threads=2",
};

static struct child_result result;
static int cases;

static void check_refused(const char *name, const char *assignment)
{
	static char self[] = "/proc/self/exe";
	static char mode[] = "child";
	char *argv[] = { self, mode, NULL };
	const char *set[] = { assignment, NULL };
	cases++;
	bool ran = child_run(argv, set, &result);
	CHECK(ran);
	if (!ran)
		return;
	CHECK_EQ(result.exit_code, 0);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "cnamutex: ignoring %s=", name);
	int complaints = child_lines_starting(result.err, prefix, NULL);
	int shim_lines = child_lines_starting(result.err, "cnamutex:", NULL);
	if (complaints != 1 || shim_lines != 1 || result.exit_code != 0)
		fprintf(stderr, "%.60s: unexpected stderr:\n%.400s\n", assignment, result.err);
	CHECK_EQ(complaints, 1);
	CHECK_EQ(shim_lines, 1);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "child"))
		return child();
	check_running_under_shim();

	static char assignment[LONG_VALUE + 64];
	for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
		for (size_t v = 0; v < sizeof odd_values / sizeof odd_values[0]; v++) {
			snprintf(assignment, sizeof assignment, "%s=%s", names[n], odd_values[v]);
			check_refused(names[n], assignment);
		}
		/* 10 KB of digits, then of letters: far past any field width. */
		int len = snprintf(assignment, sizeof assignment, "%s=", names[n]);
		memset(assignment + len, '9', LONG_VALUE);
		assignment[len + LONG_VALUE] = '\0';
		check_refused(names[n], assignment);
		memset(assignment + len, 'x', LONG_VALUE);
		check_refused(names[n], assignment);
		/* Leading zeros then a digit: a long number that is small. */
		memset(assignment + len, '0', 300);
		strcpy(assignment + len + 300, "1x");
		check_refused(names[n], assignment);
	}
	for (size_t t = 0; t < sizeof odd_topologies / sizeof odd_topologies[0]; t++) {
		snprintf(assignment, sizeof assignment, "CNAMUTEX_TOPOLOGY=%s", odd_topologies[t]);
		check_refused("CNAMUTEX_TOPOLOGY", assignment);
	}
	int len = snprintf(assignment, sizeof assignment, "CNAMUTEX_TOPOLOGY=nodes=");
	memset(assignment + len, '9', LONG_VALUE);
	assignment[len + LONG_VALUE] = '\0';
	check_refused("CNAMUTEX_TOPOLOGY", assignment);
	len = snprintf(assignment, sizeof assignment, "CNAMUTEX_TOPOLOGY=cpus=");
	for (int i = 0; len < LONG_VALUE; i++)
		len += snprintf(assignment + len, sizeof assignment - (size_t)len, "%d,", i);
	check_refused("CNAMUTEX_TOPOLOGY", assignment);

	printf("%d cases\n", cases);
	return check_report("odd-tunables");
}
