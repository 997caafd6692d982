/* tests/unit/fork_queued.c — fork() while parent threads are queued.
 *
 * Usage: fork-queued        (runs itself as "run" with CNAMUTEX_STATS=1)
 *
 * The main thread holds MUTEXES mutexes with WAITERS threads asleep on each,
 * queued_waiters.h's way: every mutex has a queue record in use, holding
 * nodes of threads the child will not have.  Then it forks.  The child
 * unlocks what it inherited held and does the same with threads of its
 * own: their queue must be a new one, or they queue behind a node that is
 * never granted (the child hangs and dies of SIGALRM).  Then its threads
 * contend on every mutex, and exclusion must hold.  The statistics line proves the parent's waiters were
 * queued: every one but the first on each mutex won it through the queue,
 * and none fell back to the word.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>

#include "../fork_child.h"
#include "child.h"
#include "queued_waiters.h"
#include "stats_line.h"

#define MUTEXES 8
#define WAITERS 3
#define CHILD_THREADS 4
#define CHILD_DEADLINE_S 20
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHILD_ROUNDS 300
#else
#define CHILD_ROUNDS 3000
#endif

static struct queued_set held;

/* --- in the child of fork() --- */

static long child_count[MUTEXES];        /* changed only under the mutex */
static _Atomic int occupancy[MUTEXES];
static _Atomic long overlaps;

static void *child_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILD_ROUNDS; i++) {
		int m = i % MUTEXES;
		CHECK_EQ(pthread_mutex_lock(&held.mutex[m].mutex), 0);
		if (atomic_fetch_add_explicit(&occupancy[m], 1, memory_order_relaxed) != 0)
			atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
		long seen = child_count[m];
		sched_yield();            /* hold it long enough for others to queue */
		child_count[m] = seen + 1;
		atomic_fetch_sub_explicit(&occupancy[m], 1, memory_order_relaxed);
		CHECK_EQ(pthread_mutex_unlock(&held.mutex[m].mutex), 0);
	}
	return NULL;
}

static void child_main(void)
{
	alarm(CHILD_DEADLINE_S);   /* a child stuck behind a stale queue dies */
	for (int m = 0; m < MUTEXES; m++) {
		/* Inherited held, with sleepers the child does not have. */
		CHECK_EQ(held.mutex[m].mutex.__data.__lock, 2);
		CHECK_EQ(pthread_mutex_unlock(&held.mutex[m].mutex), 0);
	}
	/* The same mutexes, so the same records: queue on each for sure. */
	if (queued_start(&held, MUTEXES, WAITERS, fork_child_thread_create))
		queued_finish(&held);
	pthread_t threads[CHILD_THREADS];
	for (int t = 0; t < CHILD_THREADS; t++)
		fork_child_thread_create(&threads[t], child_worker, NULL);
	long total = 0;
	for (int t = 0; t < CHILD_THREADS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	for (int m = 0; m < MUTEXES; m++) {
		total += child_count[m];
		CHECK_EQ(held.mutex[m].mutex.__data.__lock, 0);
	}
	CHECK_EQ(total, (long)CHILD_THREADS * CHILD_ROUNDS);
	/* Relaxed: the joins order every thread's updates before this. */
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);
	fflush(stderr);
	/* _exit: the parent's statistics line is the one this test reads. */
	_exit(check_failures ? 1 : 0);
}

/* --- in the parent --- */

static int run(void)
{
	check_running_under_shim();
	if (!queued_start(&held, MUTEXES, WAITERS, queued_create_default))
		return check_report("fork-queued run");
	fflush(stdout);
	fflush(stderr);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0)
		child_main();
	int status = 0;
	CHECK_EQ(waitpid(child, &status, 0), child);
	if (WIFSIGNALED(status))
		fprintf(stderr, "fork-queued: the child died of signal %d%s\n", WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	queued_finish(&held);
	return check_report("fork-queued run");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return run();

	char *run_argv[] = { argv[0], "run", NULL };
	static struct child_result result;
	CHECK(child_run_with_stats(run_argv, &result));
	if (result.err[0])
		fputs(result.err, stderr);
	CHECK_EQ(result.exit_code, 0);
	struct stats_line stats;
	CHECK(stats_line_find(result.err, &stats));
	if (!check_failures) {
		CHECK_EQ(stats_get(&stats, "acquisitions_word"), MUTEXES);
		CHECK_EQ(stats_get(&stats, "acquisitions_slow"), MUTEXES * (WAITERS - 1));
		CHECK_EQ(stats_get(&stats, "queue_fallbacks"), 0);
	}
	return check_report("fork-queued");
}
