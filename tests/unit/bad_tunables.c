/* tests/unit/bad_tunables.c — every CNAMUTEX_* variable given garbage, empty,
 * negative, out-of-range, overflowing, blank-padded and suffixed values,
 * and good ones.  Each runs a child under the shim: a bad value gets exactly
 * one line "cnamutex: ignoring NAME=VALUE: reason; using DEFAULT" on
 * stderr, a good one none, and either way the child's mutex works and it
 * exits 0.
 *
 *   unit-bad-tunables          the table, one child per case
 *   unit-bad-tunables child    two threads on one mutex (the child's job)
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "../check.h"
#include "child.h"


static int child(void)
{
	return child_mutex_workout("bad-tunables child");
}

struct tunable {
	const char *name;
	const char *fallback;        /* the "using ..." text */
	const char *bad[8];          /* beyond the values every tunable refuses */
	const char *good[4];
};

/* Refused by every tunable. */
static const char *const bad_everywhere[] = {
	"abc", "", "-5", "99999999999999999999", " 5", "5 ", "10ms",
};

static const struct tunable tunables[] = {
	{ "CNAMUTEX_NUMA", "auto", { "ON", " on", "on ", "yes", "1" }, { "on", "off", "auto" } },
	{ "CNAMUTEX_THRESHOLD_MS", "10", { "0", "101", "+5", "0x10", "1.5" }, { "1", "100", "10" } },
	{ "CNAMUTEX_SHUFFLE_BITS", "7", { "32", "4294967296", "+1" }, { "0", "31", "7" } },
	{ "CNAMUTEX_SPIN", "1000", { "100000001", "4294967296", "1e3" }, { "0", "5", "100000" } },
	{ "CNAMUTEX_TOPOLOGY", "the machine's topology",
	  { "nodes=0", "threads=abc", "nodes=2 ", "threads=", "cpus=3-1", "cpus=0/" },
	  { "nodes=2", "threads=2", "cpus=0/1" } },
	{ "CNAMUTEX_CPU_BATCH_US", "1000", { "1000001", "4294967296", "+5", "1.5", "1e3" },
	  { "0", "1000000", "250" } },
	{ "CNAMUTEX_CPU_BATCH", "auto", { "ON", " on", "on ", "yes", "1" }, { "on", "off", "auto" } },
	{ "CNAMUTEX_STATS", "0", { "2", "yes", " 1", "1 " }, { "0" } },
	{ "CNAMUTEX_PROFILE", "0", { "2", "JSON", "json " }, { "0" } },
	{ "CNAMUTEX_REPORT_INTERVAL_S", "reports only at exit",
	  { "0", "86401", "1000000000", "4294967296", "+5", "1.5", "1e3" }, { "1", "86400", "60" } },
};

static struct child_result result;

static bool run_with(const char *const set[])
{
	static char self[] = "/proc/self/exe";
	static char mode[] = "child";
	char *argv[] = { self, mode, NULL };
	bool ran = child_run(argv, set, &result);
	CHECK(ran);
	CHECK_EQ(result.exit_code, 0);
	return ran && result.exit_code == 0;
}

/* stderr is exactly "cnamutex: ignoring NAME=VALUE: <reason>; using FALLBACK\n". */
static void check_one_complaint(const char *name, const char *value, const char *fallback)
{
	char head[256], tail[128];
	snprintf(head, sizeof head, "cnamutex: ignoring %s=%s: ", name, value);
	snprintf(tail, sizeof tail, "; using %s\n", fallback);
	size_t len = strlen(result.err), hlen = strlen(head), tlen = strlen(tail);
	bool one_line = child_line_count(result.err) == 1;
	bool framed = len > hlen + tlen && !strncmp(result.err, head, hlen) &&
		      !strcmp(result.err + len - tlen, tail);
	bool has_reason = framed && len - hlen - tlen > 0 && result.err[hlen] != ';';
	if (!one_line || !framed || !has_reason)
		fprintf(stderr, "%s=\"%s\": unexpected stderr:\n%s\n", name, value, result.err);
	CHECK(one_line);
	CHECK(framed);
	CHECK(has_reason);
}

static void check_refused(const char *name, const char *value, const char *fallback)
{
	char assignment[256];
	snprintf(assignment, sizeof assignment, "%s=%s", name, value);
	const char *set[] = { assignment, NULL };
	if (run_with(set))
		check_one_complaint(name, value, fallback);
}

static void check_accepted(const char *name, const char *value)
{
	char assignment[256];
	snprintf(assignment, sizeof assignment, "%s=%s", name, value);
	const char *set[] = { assignment, NULL };
	if (!run_with(set))
		return;
	bool quiet = result.err[0] == '\0';
	if (!quiet)
		fprintf(stderr, "%s=\"%s\": unexpected stderr:\n%s\n", name, value, result.err);
	CHECK(quiet);
}

/* Two bad variables: one line for each, nothing else. */
static void check_two_complaints(void)
{
	const char *set[] = { "CNAMUTEX_SPIN=x", "CNAMUTEX_THRESHOLD_MS=0", NULL };
	if (!run_with(set))
		return;
	CHECK_EQ(child_line_count(result.err), 2);
	CHECK_EQ(child_lines_starting(result.err, "cnamutex: ignoring CNAMUTEX_SPIN=x: ", NULL), 1);
	CHECK_EQ(child_lines_starting(result.err, "cnamutex: ignoring CNAMUTEX_THRESHOLD_MS=0: ",
				      NULL), 1);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "child"))
		return child();
	check_running_under_shim();

	int cases = 0;
	for (size_t t = 0; t < sizeof tunables / sizeof tunables[0]; t++) {
		const struct tunable *tn = &tunables[t];
		for (size_t i = 0; i < sizeof bad_everywhere / sizeof bad_everywhere[0]; i++, cases++)
			check_refused(tn->name, bad_everywhere[i], tn->fallback);
		for (size_t i = 0; i < 8 && tn->bad[i]; i++, cases++)
			check_refused(tn->name, tn->bad[i], tn->fallback);
		for (size_t i = 0; i < 4 && tn->good[i]; i++, cases++)
			check_accepted(tn->name, tn->good[i]);
	}
	check_two_complaints();
	const char *none[] = { NULL };
	if (run_with(none))
		CHECK(result.err[0] == '\0');
	printf("%d cases\n", cases + 2);
	return check_report("bad-tunables");
}
