/* tests/unit/stats.c — the CNAMUTEX_STATS=1 exit line: one line, key=value
 * pairs, every documented key, and counts that match what a known program
 * did.  Without CNAMUTEX_STATS (or with 0) nothing is printed.
 *
 *   unit-stats                    runs the children below and checks
 *   unit-stats count              one thread: known fast acquisitions only
 *   unit-stats contended          threads queueing on one mutex
 *   unit-stats routing            one waiter on the word, the next one queued
 *   unit-stats requeue            ... and a third queued behind that one
 *   unit-stats relay              the mutex passed along a known chain of
 *                                 owners on two virtual nodes
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "child.h"
#include "stats_line.h"
#include "thread_state.h"

#define LOCKS 1000
#define TRYLOCKS 300
#define FAILED_TRYLOCKS 100
#define TIMEDLOCKS 50
/* the lock held while the trylocks fail counts too */
#define FAST_ACQUISITIONS (LOCKS + TRYLOCKS + 1 + TIMEDLOCKS)

#define CONTENDED_THREADS 4
#define CONTENDED_ROUNDS 5000
#define YIELD_EVERY 8

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter;

/* Only this program's own mutex calls go through the shim (glibc's
 * internal locks do not), so every count here is exact. */
static int count_child(void)
{
	check_running_under_shim();
	for (int i = 0; i < LOCKS; i++) {
		CHECK_EQ(pthread_mutex_lock(&mutex), 0);
		CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	}
	for (int i = 0; i < TRYLOCKS; i++) {
		CHECK_EQ(pthread_mutex_trylock(&mutex), 0);
		CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	}
	CHECK_EQ(pthread_mutex_lock(&mutex), 0);
	for (int i = 0; i < FAILED_TRYLOCKS; i++)
		CHECK_EQ(pthread_mutex_trylock(&mutex), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 60;
	for (int i = 0; i < TIMEDLOCKS; i++) {
		CHECK_EQ(pthread_mutex_timedlock(&mutex, &deadline), 0);
		CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	}
	return check_report("stats count child");
}

static void *contend(void *arg)
{
	(void)arg;
	for (int i = 0; i < CONTENDED_ROUNDS; i++) {
		CHECK_EQ(pthread_mutex_lock(&mutex), 0);
		counter++;
		if (i % YIELD_EVERY == 0)
			sched_yield();   /* preempted owner: the others queue */
		CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
	}
	return NULL;
}

static int contended_child(void)
{
	check_running_under_shim();
	pthread_t threads[CONTENDED_THREADS];
	for (int i = 0; i < CONTENDED_THREADS; i++)
		CHECK_EQ(pthread_create(&threads[i], NULL, contend, NULL), 0);
	for (int i = 0; i < CONTENDED_THREADS; i++)
		CHECK_EQ(pthread_join(threads[i], NULL), 0);
	CHECK_EQ(counter, (unsigned long)CONTENDED_THREADS * CONTENDED_ROUNDS);
	return check_report("stats contended child");
}

static const char *const documented_keys[] = {
	"acquisitions_fast", "acquisitions_slow", "handoffs_local", "handoffs_remote",
	"secondary_moves", "flushes", "parks", "requeues", "wait_max_us", "wait_mean_us",
	"secondary_wait_max_us", "transfers_local", "transfers_remote", "transfers_unknown",
};

static struct child_result result;

static bool run(const char *mode, const char *const set[])
{
	static char self[] = "/proc/self/exe";
	char mode_arg[32];
	snprintf(mode_arg, sizeof mode_arg, "%s", mode);
	char *argv[] = { self, mode_arg, NULL };
	bool ran = child_run(argv, set, &result);
	CHECK(ran);
	CHECK_EQ(result.exit_code, 0);
	return ran && result.exit_code == 0;
}

/* The line holds every documented key, and its stderr nothing else. */
static bool parse(struct stats_line *stats)
{
	bool found = stats_line_find(result.err, stats);
	CHECK(found);
	CHECK_EQ(child_line_count(result.err), 1);
	if (!found) {
		fprintf(stderr, "child stderr:\n%s\n", result.err);
		return false;
	}
	for (size_t i = 0; i < sizeof documented_keys / sizeof documented_keys[0]; i++)
		CHECK(stats_get(stats, documented_keys[i]) >= 0);
	return true;
}

/* run(), then parse(), and show the line; false if either failed. */
static bool run_parsed(const char *mode, const char *const set[], struct stats_line *stats)
{
	if (!run(mode, set) || !parse(stats))
		return false;
	fputs(result.err, stdout);
	return true;
}

/* Every contended acquisition is one lock transfer of one of three kinds. */
static void check_transfers_add_up(const struct stats_line *s)
{
	CHECK_EQ(stats_get(s, "transfers_local") + stats_get(s, "transfers_remote") +
		 stats_get(s, "transfers_unknown"),
		 stats_acquisitions(s) - stats_get(s, "acquisitions_fast"));
}

/* Where each waiter goes.  The owner holds the mutex; the first waiter
 * finds nobody waiting and waits on the mutex word itself (word 1 -> 2);
 * the second finds the word at 2 and queues.  Each step waits until the
 * waiter sleeps in the kernel, so the counts are exact. */
#define MAX_ROUTED_WAITERS 3
static pthread_mutex_t routed = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t waiter_tid[MAX_ROUTED_WAITERS];

static void *routed_waiter(void *arg)
{
	_Atomic pid_t *tid = arg;
	atomic_store(tid, gettid());
	CHECK_EQ(pthread_mutex_lock(&routed), 0);
	CHECK_EQ(pthread_mutex_unlock(&routed), 0);
	return NULL;
}

static bool wait_until_asleep(_Atomic pid_t *tid)
{
	for (int i = 0; i < 20000; i++) {   /* 20 s at most */
		pid_t t = atomic_load(tid);
		if (t && thread_state(t) == 'S')
			return true;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return false;
}

/*
 * The relay: under CNAMUTEX_TOPOLOGY=threads=2 three workers take their
 * virtual nodes in the order they first contend (0, 1, 0), and the mutex
 * goes main -> w0 -> w1 -> w2 -> w0 -> w1, each new owner waiting asleep
 * while the previous one holds it.  main took it on the fast path before it
 * had a node, so the first transfer is of unknown kind; then remote,
 * remote, local (w2 and w0 share node 0), remote.
 */
#define RELAY_WORKERS 3
#define RELAY_ROUNDS 2
static pthread_mutex_t relayed = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t relay_tid[RELAY_WORKERS];
static _Atomic int relay_may_lock[RELAY_WORKERS], relay_holds[RELAY_WORKERS];
static _Atomic int relay_may_unlock[RELAY_WORKERS];

static void await_at_least(_Atomic int *flag, int value)
{
	while (atomic_load(flag) < value)
		sched_yield();   /* runnable, never asleep: only the lock sleeps */
}

static void *relay_worker(void *arg)
{
	int i = (int)(long)arg;
	atomic_store(&relay_tid[i], gettid());
	for (int round = 1; round <= RELAY_ROUNDS; round++) {
		await_at_least(&relay_may_lock[i], round);
		CHECK_EQ(pthread_mutex_lock(&relayed), 0);
		atomic_store(&relay_holds[i], round);
		await_at_least(&relay_may_unlock[i], round);
		CHECK_EQ(pthread_mutex_unlock(&relayed), 0);
	}
	return NULL;
}

static bool wait_until_asleep(_Atomic pid_t *tid);

/* Worker next takes the mutex (its round-th time) from previous (-1: main). */
static void relay_pass(int previous, int next, int round)
{
	atomic_store(&relay_may_lock[next], round);
	CHECK(wait_until_asleep(&relay_tid[next]));
	if (previous < 0)
		CHECK_EQ(pthread_mutex_unlock(&relayed), 0);
	else
		atomic_fetch_add(&relay_may_unlock[previous], 1);
	await_at_least(&relay_holds[next], round);
}

static int relay_child(void)
{
	check_running_under_shim();
	pthread_t threads[RELAY_WORKERS];
	CHECK_EQ(pthread_mutex_lock(&relayed), 0);
	for (long i = 0; i < RELAY_WORKERS; i++)
		CHECK_EQ(pthread_create(&threads[i], NULL, relay_worker, (void *)i), 0);
	relay_pass(-1, 0, 1);
	relay_pass(0, 1, 1);
	relay_pass(1, 2, 1);
	relay_pass(2, 0, 2);
	relay_pass(0, 1, 2);
	atomic_fetch_add(&relay_may_unlock[1], 1);
	CHECK_EQ(pthread_join(threads[1], NULL), 0);
	CHECK_EQ(pthread_join(threads[0], NULL), 0);
	atomic_store(&relay_may_lock[2], RELAY_ROUNDS);   /* w2's second round: uncontended */
	atomic_store(&relay_may_unlock[2], RELAY_ROUNDS);
	CHECK_EQ(pthread_join(threads[2], NULL), 0);
	return check_report("stats relay child");
}

/* We hold the mutex while waiters arrive one by one and fall asleep: the
 * first on the word, the second as queue head on the word, the third on
 * its queue node behind it. */
static int routing_child(int waiters)
{
	check_running_under_shim();
	pthread_t threads[MAX_ROUTED_WAITERS];
	CHECK_EQ(pthread_mutex_lock(&routed), 0);
	for (int i = 0; i < waiters; i++) {
		CHECK_EQ(pthread_create(&threads[i], NULL, routed_waiter, &waiter_tid[i]), 0);
		CHECK(wait_until_asleep(&waiter_tid[i]));
		/* glibc's word: 2 = held with a waiter sleeping on it */
		CHECK_EQ(__atomic_load_n(&routed.__data.__lock, __ATOMIC_RELAXED), 2);
	}
	CHECK_EQ(pthread_mutex_unlock(&routed), 0);
	for (int i = 0; i < waiters; i++)
		CHECK_EQ(pthread_join(threads[i], NULL), 0);
	return check_report("stats routing child");
}

static void routing_counts(void)
{
	const char *set[] = { "CNAMUTEX_STATS=1", NULL };
	struct stats_line s;
	if (!run_parsed("routing", set, &s))
		return;
	CHECK_EQ(stats_acquisitions(&s), 3);
	CHECK_EQ(stats_get(&s, "acquisitions_fast"), 1);
	CHECK_EQ(stats_get(&s, "acquisitions_word"), 1);
	CHECK_EQ(stats_get(&s, "acquisitions_slow"), 1);
	check_transfers_add_up(&s);
	/* the queued one found the queue empty: head at once, nobody to pass to */
	CHECK_EQ(stats_get(&s, "handoffs_local") + stats_get(&s, "handoffs_remote"), 0);
	/* ... and slept on the word behind the first waiter */
	CHECK_EQ(stats_get(&s, "parks"), 1);
}

/*
 * The third waiter parks on its node while the head sleeps on the word.
 * With no spin at all it parks DORMANT, and when the head gets the word
 * and grants it the headship it is moved, still asleep, onto the word
 * (one requeue) instead of being woken to sleep there again; with the
 * default spin it has not yet seen its head spins fail, parks to be
 * woken, and nothing is requeued.
 */
static void requeue_counts(void)
{
	const char *no_spin[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_SPIN=0", NULL };
	const char *default_spin[] = { "CNAMUTEX_STATS=1", NULL };
	const char *const *sets[] = { no_spin, default_spin };
	for (int i = 0; i < 2; i++) {
		struct stats_line s;
		if (!run("requeue", sets[i]) || !parse(&s))
			continue;
		fputs(result.err, stdout);
		CHECK_EQ(stats_acquisitions(&s), 4);
		CHECK_EQ(stats_get(&s, "acquisitions_word"), 1);
		CHECK_EQ(stats_get(&s, "acquisitions_slow"), 2);
		CHECK_EQ(stats_get(&s, "handoffs_local") + stats_get(&s, "handoffs_remote"), 1);
		CHECK_EQ(stats_get(&s, "requeues"), sets[i] == no_spin ? 1 : 0);
		check_transfers_add_up(&s);
	}
}

static void known_counts(void)
{
	const char *set[] = { "CNAMUTEX_STATS=1", NULL };
	struct stats_line s;
	if (!run_parsed("count", set, &s))
		return;
	CHECK_EQ(stats_get(&s, "acquisitions_fast"), FAST_ACQUISITIONS);
	CHECK_EQ(stats_acquisitions(&s), FAST_ACQUISITIONS);
	CHECK_EQ(stats_get(&s, "acquisitions_slow"), 0);
	CHECK_EQ(stats_get(&s, "handoffs_local") + stats_get(&s, "handoffs_remote"), 0);
	CHECK_EQ(stats_get(&s, "secondary_moves") + stats_get(&s, "flushes"), 0);
	CHECK_EQ(stats_get(&s, "parks"), 0);
	CHECK_EQ(stats_get(&s, "wait_max_us"), 0);
	CHECK_EQ(stats_get(&s, "wait_mean_us"), 0);
	CHECK_EQ(stats_get(&s, "secondary_wait_max_us"), 0);
	check_transfers_add_up(&s);
	CHECK_EQ(stats_get(&s, "transfers_local") + stats_get(&s, "transfers_remote"), 0);
}

static void contended_counts(void)
{
	/* One virtual node, so the default (auto) is NUMA-blind on any host. */
	const char *set[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_TOPOLOGY=nodes=1", NULL };
	struct stats_line s;
	if (!run_parsed("contended", set, &s))
		return;
	CHECK_EQ(stats_acquisitions(&s), CONTENDED_THREADS * CONTENDED_ROUNDS);
	/* Some acquisitions waited; whether any went through the queue rather
	 * than the spin or the word is the scheduler's choice (routing_counts
	 * and requeue_counts prove each path on purpose). */
	CHECK(stats_get(&s, "acquisitions_spun") + stats_get(&s, "acquisitions_word") +
	      stats_get(&s, "acquisitions_slow") > 0);
	/* one pass of the headship per acquisition through the queue */
	CHECK(stats_get(&s, "handoffs_local") + stats_get(&s, "handoffs_remote") <=
	      stats_get(&s, "acquisitions_slow"));
	/* one node: no reordering */
	CHECK_EQ(stats_get(&s, "secondary_moves") + stats_get(&s, "flushes"), 0);
	CHECK_EQ(stats_get(&s, "handoffs_remote"), 0);
	CHECK_EQ(stats_get(&s, "secondary_wait_max_us"), 0);
	CHECK(stats_get(&s, "wait_mean_us") <= stats_get(&s, "wait_max_us") + 1);
	/* every owner recorded its node (the fast path too), all of it node 0 */
	check_transfers_add_up(&s);
	CHECK_EQ(stats_get(&s, "transfers_remote") + stats_get(&s, "transfers_unknown"), 0);
}

/* The relay's five transfers, each of the kind its owners' nodes make. */
static void relay_counts(void)
{
	const char *set[] = { "CNAMUTEX_STATS=1", "CNAMUTEX_TOPOLOGY=threads=2", NULL };
	struct stats_line s;
	if (!run_parsed("relay", set, &s))
		return;
	check_transfers_add_up(&s);
	CHECK_EQ(stats_get(&s, "transfers_unknown"), 1);
	CHECK_EQ(stats_get(&s, "transfers_remote"), 3);
	CHECK_EQ(stats_get(&s, "transfers_local"), 1);
}

static void silent_without_stats(void)
{
	const char *unset[] = { NULL };
	if (run("contended", unset))
		CHECK_EQ(strlen(result.err), 0);
	const char *off[] = { "CNAMUTEX_STATS=0", NULL };
	if (run("count", off))
		CHECK_EQ(strlen(result.err), 0);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "count"))
		return count_child();
	if (argc == 2 && !strcmp(argv[1], "contended"))
		return contended_child();
	if (argc == 2 && !strcmp(argv[1], "routing"))
		return routing_child(2);
	if (argc == 2 && !strcmp(argv[1], "requeue"))
		return routing_child(3);
	if (argc == 2 && !strcmp(argv[1], "relay"))
		return relay_child();
	check_running_under_shim();
	known_counts();
	contended_counts();
	routing_counts();
	requeue_counts();
	relay_counts();
	silent_without_stats();
	return check_report("stats");
}
