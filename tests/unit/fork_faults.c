/* tests/unit/fork_faults.c — the minor page faults of fork()'s children
 * under the shim, against the same program under glibc (a count, not a time).
 *
 * Usage: fork-faults    (under the shim: runs itself as "count R",
 *                        RUNS times with the shim and RUNS times without)
 *
 * "count R": R mutexes held with queue records in use (queued_waiters.h),
 * then FORKS times: lock a mutex, fork, the child trylocks it (EBUSY) and
 * _exits, the parent waits and unlocks; prints the children's minor faults
 * (getrusage(RUSAGE_CHILDREN)) per child on stderr.  Each count is exact
 * for one run but moves by a fault or two with the address-space layout,
 * so the medians of RUNS runs are compared:
 *  - a parent that never contended: at most 2 more faults per child;
 *  - LIVE records in use: at most LIVE + LIVE_SLACK more -- the child's
 *    work follows the records in use (one page each at most), where
 *    clearing the whole table cost 64 more.
 * Skipped in sanitized builds: there the runtimes' shadow memory makes the
 * counts their own (hundreds per child, varying from child to child).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "child.h"
#include "queued_waiters.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
#define SKIP 77             /* meson's "skipped" exit status */
#define FORKS 20
#define RUNS 3
#define LIVE 8
#define WAITERS 2
#define NEVER_CONTENDED_SLACK 2
/* Page layouts of the parent's threads, which the child's glibc walks. */
#define LIVE_SLACK 8

static pthread_mutex_t forked_over = PTHREAD_MUTEX_INITIALIZER;
static struct queued_set held;

static int count(int live)
{
	if (live && !queued_start(&held, live, WAITERS, queued_create_default))
		return check_report("fork-faults count");
	for (int f = 0; f < FORKS && !check_failures; f++) {
		CHECK_EQ(pthread_mutex_lock(&forked_over), 0);
		pid_t child = fork();
		CHECK(child >= 0);
		if (child == 0)
			_exit(pthread_mutex_trylock(&forked_over) == EBUSY ? 0 : 1);
		int status = 0;
		CHECK_EQ(waitpid(child, &status, 0), child);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		CHECK_EQ(pthread_mutex_unlock(&forked_over), 0);
	}
	struct rusage children;
	CHECK_EQ(getrusage(RUSAGE_CHILDREN, &children), 0);
	fprintf(stderr, "faults_per_child=%.2f\n", (double)children.ru_minflt / FORKS);
	if (live)
		queued_finish(&held);
	return check_failures ? 1 : 0;
}

/* One "count" run's faults per child, or -1. */
static double faults_per_child(const char *live)
{
	char *argv[] = { "fork-faults", "count", (char *)live, NULL };
	static const char *const no_settings[] = { NULL };
	static struct child_result result;
	if (!child_run(argv, no_settings, &result) || result.exit_code != 0) {
		fprintf(stderr, "fork-faults: count %s failed:\n%s", live, result.err);
		return -1;
	}
	const char *at = strstr(result.err, "faults_per_child=");
	return at ? atof(at + strlen("faults_per_child=")) : -1;
}

static double median_of_runs(const char *live)
{
	double v[RUNS];
	for (int i = 0; i < RUNS; i++) {
		v[i] = faults_per_child(live);
		CHECK(v[i] >= 0);
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	}
	return v[RUNS / 2];
}

/* Medians with and without the shim (LD_PRELOAD taken away, then back). */
static void compare(const char *live, double slack)
{
	const char *preload = getenv("LD_PRELOAD");
	char *shim = preload ? strdup(preload) : NULL;
	CHECK(shim != NULL);
	if (!shim)
		return;
	double with_shim = median_of_runs(live);
	unsetenv("LD_PRELOAD");
	double with_glibc = median_of_runs(live);
	setenv("LD_PRELOAD", shim, 1);
	free(shim);
	printf("fork-faults: %s records in use: %.2f faults per child under the shim, %.2f under glibc\n",
	       live, with_shim, with_glibc);
	if (with_shim > with_glibc + slack)
		fprintf(stderr, "fork-faults: %s records in use: %.2f faults per child under the"
			" shim, %.2f under glibc (at most %.0f more)\n",
			live, with_shim, with_glibc, slack);
	CHECK(with_shim <= with_glibc + slack);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "count") == 0)
		return count(atoi(argv[2]));
	check_running_under_shim();
	if (SANITIZED) {
		printf("fork-faults: skipped: a sanitizer's shadow memory owns the fault counts\n");
		return SKIP;
	}
	compare("0", NEVER_CONTENDED_SLACK);
	char live[16];
	snprintf(live, sizeof live, "%d", LIVE);
	compare(live, LIVE + LIVE_SLACK);
	return check_report("fork-faults");
}
