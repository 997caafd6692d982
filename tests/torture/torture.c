/* tests/torture/torture.c — many threads, many mutexes, every operation at once.
 *
 * Usage: torture [SECONDS [THREADS [MUTEXES]]]   (defaults 3, 12, 64)
 *        torture --expect STAT [SECONDS [THREADS [MUTEXES]]]
 *        torture --expect-violation [SECONDS [THREADS [MUTEXES]]]
 * The second form runs the first as a child with statistics on and also
 * checks the shim's statistics line, so that a variant proves the path it
 * exists for ran: STAT is a counter that must be positive, or NAME/OTHER>=R,
 * a ratio of two counters that must reach R (requeues/acquisitions_slow>=0.25
 * tells a run where most queued waiters parked dormant from one where a few
 * did).  The third, for a deliberately broken shim, passes only if the run
 * reported a violation of the mutexes' semantics (two threads inside, a
 * wrong __owner, a refused unlock, ...) and nothing else failed, or if
 * glibc's own assertions on a mutex the broken lock corrupted aborted it
 * (this program never calls abort() or assert(), so SIGABRT is glibc's
 * catch, sometimes before the harness's).  A crash, a setup error or a
 * thread that did not start is no catch.
 *
 * More threads than cores run a random mix over an array of adjacent
 * mutexes of every CNA kind (static NORMAL, NORMAL, ERRORCHECK, RECURSIVE,
 * ADAPTIVE): lock, trylock, timedlock (CLOCK_REALTIME) and clocklock
 * (CLOCK_MONOTONIC) with short deadlines, two mutexes at once, recursion,
 * error-checking probes, condition waits (untimed, timed, clocked) with
 * signals and broadcasts, while a spawner creates short-lived threads that
 * exit mid-run.  Every critical section checks an occupancy flag, the
 * __owner field against gettid() and, for RECURSIVE, __count against the
 * depth; each mutex's counter must equal the sum of the threads' tallies.
 * The first violation stops the run.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "../unit/child.h"
#include "../unit/stats_line.h"
#include "tsan_glibc.h"

#define MAX_MUTEXES 256
#define MAX_THREADS 64
#define COND_MUTEXES 8              /* mutexes 0..7 each have a condition variable */
#define SPAWN_BATCH 2
#define TICK_NS 500000L             /* the ticker broadcasts every 0.5 ms */
#define DEADLINE_NS_MAX 200000u     /* timed locks wait at most 0.2 ms */
#define COND_TIMEOUT_NS_MAX 2000000u

enum op_kind { OP_LOCK, OP_TRYLOCK, OP_TIMED, OP_CLOCKED, OP_KINDS };

struct guarded {                    /* protected by mutexes[i] */
	_Atomic int occupancy;      /* threads inside: never more than one */
	int depth;                  /* RECURSIVE: levels the owner holds */
	long counter;
	long generation;            /* bumped by signalers of conds[i] */
	char pad[64 - sizeof(int) * 2 - sizeof(long) * 2];
};

static pthread_mutex_t mutexes[MAX_MUTEXES];   /* adjacent on purpose */
static pthread_cond_t conds[COND_MUTEXES];
static struct guarded guarded[MAX_MUTEXES];
static int kinds[MAX_MUTEXES];
static _Atomic long totals[MAX_MUTEXES];       /* tallies of finished threads */
static int mutex_count = 64;

static _Atomic bool stopping;
static _Atomic bool ticker_stopping;
static _Atomic long violations;
static _Atomic long setup_failures; /* violations that are not the lock's */
static _Atomic long op_ok[OP_KINDS], op_refused[OP_KINDS];
static _Atomic long cond_waits, cond_timeouts, signals_sent, recursions,
	errorcheck_probes, threads_spawned;

struct worker {
	pid_t tid;
	uint32_t prng;
	long iterations;            /* 0: until stopping */
	long tally[MAX_MUTEXES];
};

static void violation(const char *what, int index, long a, long b)
{
	if (atomic_fetch_add_explicit(&violations, 1, memory_order_relaxed) < 10)
		fprintf(stderr, "torture: violation on mutex %d: %s (%ld vs %ld)\n",
			index, what, a, b);
	atomic_store_explicit(&stopping, true, memory_order_relaxed);
}

static uint32_t next_random(struct worker *w)
{
	uint32_t x = w->prng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return w->prng = x;
}

static int owner_field(int i)
{
	return __atomic_load_n(&mutexes[i].__data.__owner, __ATOMIC_RELAXED);
}

static int count_field(int i)
{
	return __atomic_load_n(&mutexes[i].__data.__count, __ATOMIC_RELAXED);
}

/* We hold mutexes[i] at depth levels: claim the section and check the fields. */
static void enter(struct worker *w, int i, int depth)
{
	struct guarded *g = &guarded[i];
	int inside = atomic_fetch_add_explicit(&g->occupancy, 1, memory_order_relaxed);
	if (inside != 0)
		violation("two threads inside", i, inside + 1, 1);
	if (owner_field(i) != w->tid)
		violation("__owner is not the holder", i, owner_field(i), w->tid);
	if (kinds[i] == PTHREAD_MUTEX_RECURSIVE && count_field(i) != depth)
		violation("__count is not the depth", i, count_field(i), depth);
	g->depth = depth;
	long seen = *(volatile long *)&g->counter;
	if ((next_random(w) & 31) == 0)
		sched_yield();      /* be preempted inside now and then */
	*(volatile long *)&g->counter = seen + 1;
	w->tally[i]++;
}

static void leave(int i)
{
	atomic_fetch_sub_explicit(&guarded[i].occupancy, 1, memory_order_relaxed);
}

static struct timespec deadline(clockid_t clock, uint32_t ns)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_nsec += ns;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_nsec -= 1000000000L;
		ts.tv_sec++;
	}
	return ts;
}

/* One acquisition of mutexes[i] by op; true if it is now held. */
static bool acquire(struct worker *w, int i, enum op_kind op)
{
	pthread_mutex_t *m = &mutexes[i];
	int err = 0;
	struct timespec ts;
	switch (op) {
	case OP_LOCK:
		err = pthread_mutex_lock(m);
		break;
	case OP_TRYLOCK:
		err = pthread_mutex_trylock(m);
		break;
	case OP_TIMED:
		ts = deadline(CLOCK_REALTIME, next_random(w) % DEADLINE_NS_MAX);
		err = pthread_mutex_timedlock(m, &ts);
		break;
	case OP_CLOCKED:
		ts = deadline(CLOCK_MONOTONIC, next_random(w) % DEADLINE_NS_MAX);
		err = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
		break;
	case OP_KINDS:
		break;
	}
	if (err == 0) {
		atomic_fetch_add_explicit(&op_ok[op], 1, memory_order_relaxed);
		return true;
	}
	int refusal = op == OP_TRYLOCK ? EBUSY : op == OP_LOCK ? -1 : ETIMEDOUT;
	if (err != refusal)
		violation("unexpected error from an acquisition", i, err, refusal);
	else if (owner_field(i) == w->tid)
		violation("refused but owned", i, owner_field(i), w->tid);
	atomic_fetch_add_explicit(&op_refused[op], 1, memory_order_relaxed);
	return false;
}

static void release(int i)
{
	int err = pthread_mutex_unlock(&mutexes[i]);
	if (err)
		violation("unlock failed", i, err, 0);
}

/* RECURSIVE: take one to two more levels by any operation, check, unwind. */
static void recurse(struct worker *w, int i)
{
	int extra = 1 + (int)(next_random(w) % 2);
	for (int level = 2; level <= extra + 1; level++) {
		if (!acquire(w, i, (enum op_kind)(next_random(w) % OP_KINDS)))
			violation("recursive relock refused", i, level, 0);
		leave(i);
		enter(w, i, level);
	}
	for (int level = extra + 1; level >= 2; level--) {
		leave(i);
		release(i);
		enter(w, i, level - 1);
	}
	atomic_fetch_add_explicit(&recursions, 1, memory_order_relaxed);
}

/* ERRORCHECK, held by us: relocking deadlocks, trylock is busy. */
static void probe_errorcheck(int i)
{
	int err = pthread_mutex_lock(&mutexes[i]);
	if (err != EDEADLK)
		violation("ERRORCHECK relock is not EDEADLK", i, err, EDEADLK);
	err = pthread_mutex_trylock(&mutexes[i]);
	if (err != EBUSY)
		violation("ERRORCHECK trylock by owner is not EBUSY", i, err, EBUSY);
	atomic_fetch_add_explicit(&errorcheck_probes, 1, memory_order_relaxed);
}

/* ERRORCHECK, not held by us: unlocking is EPERM. */
static void probe_foreign_unlock(int i)
{
	int err = pthread_mutex_unlock(&mutexes[i]);
	if (err != EPERM)
		violation("ERRORCHECK unlock by non-owner is not EPERM", i, err, EPERM);
	atomic_fetch_add_explicit(&errorcheck_probes, 1, memory_order_relaxed);
}

static void single(struct worker *w, int i, enum op_kind op)
{
	if (!acquire(w, i, op))
		return;
	enter(w, i, 1);
	if (kinds[i] == PTHREAD_MUTEX_RECURSIVE && (next_random(w) & 3) == 0)
		recurse(w, i);
	else if (kinds[i] == PTHREAD_MUTEX_ERRORCHECK && (next_random(w) & 7) == 0)
		probe_errorcheck(i);
	leave(i);
	release(i);
}

/* Two mutexes in index order (so no deadlock), possibly sharing a bucket run. */
static void pair(struct worker *w, int a, int b)
{
	if (a == b)
		b = (a + 1) % mutex_count;
	if (a > b) {
		int t = a;
		a = b;
		b = t;
	}
	acquire(w, a, OP_LOCK);
	enter(w, a, 1);
	if (acquire(w, b, (next_random(w) & 1) ? OP_LOCK : OP_TRYLOCK)) {
		enter(w, b, 1);
		leave(b);
		release(b);
	}
	leave(a);
	release(a);
}

/* Wait on conds[i]; the ticker's broadcasts bound every untimed wait. */
static void cond_wait_once(struct worker *w, int i)
{
	acquire(w, i, OP_LOCK);
	enter(w, i, 1);
	leave(i);                   /* the wait releases the mutex */
	int err;
	uint32_t kind = next_random(w) % 3;
	glibc_will_unlock(&mutexes[i]);
	if (kind == 0) {
		err = pthread_cond_wait(&conds[i], &mutexes[i]);
	} else if (kind == 1) {
		struct timespec ts = deadline(CLOCK_REALTIME,
					      next_random(w) % COND_TIMEOUT_NS_MAX);
		err = pthread_cond_timedwait(&conds[i], &mutexes[i], &ts);
	} else {
		struct timespec ts = deadline(CLOCK_MONOTONIC,
					      next_random(w) % COND_TIMEOUT_NS_MAX);
		err = pthread_cond_clockwait(&conds[i], &mutexes[i], CLOCK_MONOTONIC, &ts);
	}
	glibc_relocked(&mutexes[i]);
	if (err != 0 && err != ETIMEDOUT)
		violation("condition wait failed", i, err, 0);
	atomic_fetch_add_explicit(err ? &cond_timeouts : &cond_waits, 1,
				  memory_order_relaxed);
	enter(w, i, 1);             /* re-acquired, as POSIX requires */
	leave(i);
	release(i);
}

static void cond_notify(struct worker *w, int i, bool all)
{
	acquire(w, i, OP_LOCK);
	enter(w, i, 1);
	guarded[i].generation++;
	if (all)
		pthread_cond_broadcast(&conds[i]);
	else
		pthread_cond_signal(&conds[i]);
	leave(i);
	release(i);
	atomic_fetch_add_explicit(&signals_sent, 1, memory_order_relaxed);
}

static void one_step(struct worker *w)
{
	uint32_t r = next_random(w);
	int i = (int)((r >> 8) % (unsigned)mutex_count);
	int c = (int)((r >> 20) % COND_MUTEXES);
	switch (r % 100) {
	case 0 ... 39:
		single(w, i, OP_LOCK);
		break;
	case 40 ... 54:
		single(w, i, OP_TRYLOCK);
		break;
	case 55 ... 64:
		single(w, i, OP_TIMED);
		break;
	case 65 ... 72:
		single(w, i, OP_CLOCKED);
		break;
	case 73 ... 80:
		pair(w, i, (int)(next_random(w) % (unsigned)mutex_count));
		break;
	case 81 ... 86:
		cond_wait_once(w, c);
		break;
	case 87 ... 92:
		cond_notify(w, c, r & 1);
		break;
	default:
		if (kinds[i] == PTHREAD_MUTEX_ERRORCHECK)
			probe_foreign_unlock(i);
		else
			single(w, i, OP_LOCK);
		break;
	}
}

static void publish_tallies(struct worker *w)
{
	for (int i = 0; i < mutex_count; i++)
		if (w->tally[i])
			atomic_fetch_add_explicit(&totals[i], w->tally[i],
						  memory_order_relaxed);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	w->tid = gettid();
	w->prng = (uint32_t)w->tid * 2654435761u | 1u;
	for (long n = 0; w->iterations == 0 || n < w->iterations; n++) {
		if (atomic_load_explicit(&stopping, memory_order_relaxed))
			break;
		one_step(w);
	}
	publish_tallies(w);
	return NULL;
}

/* Threads that come and go while the others run. */
static void *spawn(void *arg)
{
	struct worker *batch = arg;
	uint32_t seed = 12345;
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		pthread_t tids[SPAWN_BATCH];
		for (int k = 0; k < SPAWN_BATCH; k++) {
			seed = seed * 1103515245u + 12345u;
			memset(&batch[k], 0, sizeof batch[k]);
			batch[k].iterations = 200 + (long)(seed >> 16) % 2000;
			if (pthread_create(&tids[k], NULL, work, &batch[k]) != 0) {
				atomic_fetch_add_explicit(&setup_failures, 1,
							  memory_order_relaxed);
				violation("pthread_create failed", -1, k, 0);
			}
		}
		for (int k = 0; k < SPAWN_BATCH; k++)
			pthread_join(tids[k], NULL);
		atomic_fetch_add_explicit(&threads_spawned, SPAWN_BATCH, memory_order_relaxed);
	}
	return NULL;
}

/* Broadcast every condition now and then, so no untimed wait lasts. */
static void *tick(void *arg)
{
	struct worker *w = arg;
	w->tid = gettid();
	w->prng = 99;
	while (!atomic_load_explicit(&ticker_stopping, memory_order_relaxed)) {
		for (int c = 0; c < COND_MUTEXES; c++)
			cond_notify(w, c, true);
		struct timespec ts = { 0, TICK_NS };
		nanosleep(&ts, NULL);
	}
	publish_tallies(w);
	return NULL;
}

static int kind_for(int i)
{
	static const int cycle[] = { -1, PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK,
				     PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ADAPTIVE_NP };
	return cycle[i % 5];        /* -1: static initializer, a NORMAL mutex */
}

static void init_mutexes(void)
{
	for (int i = 0; i < mutex_count; i++) {
		int kind = kind_for(i);
		kinds[i] = kind < 0 ? PTHREAD_MUTEX_NORMAL : kind;
		if (kind < 0) {
			mutexes[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
			continue;
		}
		pthread_mutexattr_t attr;
		pthread_mutexattr_init(&attr);
		pthread_mutexattr_settype(&attr, kind);
		CHECK_EQ(pthread_mutex_init(&mutexes[i], &attr), 0);
		pthread_mutexattr_destroy(&attr);
	}
	for (int c = 0; c < COND_MUTEXES; c++)
		pthread_cond_init(&conds[c], NULL);
}

/* Violations of the mutexes' semantics reported so far. */
static long lock_violations(void)
{
	return atomic_load(&violations) - atomic_load(&setup_failures);
}

/* --expect-violation: glibc asserts on some mutexes the broken lock left
 * inconsistent (__pthread_mutex_cond_lock wants __owner == 0) and aborts,
 * at times before the harness's own checks have counted anything (in
 * about 1 run in 150). */
static void abort_on_corrupted_mutex(int sig)
{
	(void)sig;
	static const char caught[] =
		"torture: the broken lock was caught: glibc aborted on a corrupted mutex\n";
	ssize_t ignored = write(STDOUT_FILENO, caught, sizeof caught - 1);
	(void)ignored;
	_exit(0);
}

/* "NAME": the counter is positive; "NAME/OTHER>=R": NAME >= R * OTHER, OTHER > 0. */
static bool expectation_met(const struct stats_line *stats, const char *expect)
{
	char name[48], other[48];
	double ratio;
	if (sscanf(expect, "%47[a-z_]/%47[a-z_]>=%lf", name, other, &ratio) == 3) {
		double a = stats_get(stats, name), b = stats_get(stats, other);
		printf("torture --expect: %s=%.0f %s=%.0f, ratio %.3f against %.3f\n",
		       name, a, other, b, b > 0 ? a / b : 0.0, ratio);
		return b > 0 && a >= ratio * b;
	}
	double value = stats_get(stats, expect);
	printf("torture --expect: %s=%.0f\n", expect, value);
	return value > 0;
}

/* The torture run as a child, with this process's CNAMUTEX_* settings and
 * CNAMUTEX_STATS=1; it must pass, and its statistics meet the expectation. */
static int run_expecting(const char *expect, char **torture_argv)
{
	static struct child_result child;
	CHECK(child_run_with_stats(torture_argv, &child));
	fputs(child.err, stderr);
	CHECK_EQ(child.exit_code, 0);
	struct stats_line stats;
	bool found = stats_line_find(child.err, &stats);
	CHECK(found);
	if (found)
		CHECK(expectation_met(&stats, expect));
	return check_report("torture --expect");
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	if (argc > 2 && !strcmp(argv[1], "--expect")) {
		char *expect = argv[2];
		argv[2] = argv[0];              /* the child: torture [SECONDS ...] */
		return run_expecting(expect, argv + 2);
	}
	bool expect_violation = argc > 1 && !strcmp(argv[1], "--expect-violation");
	if (expect_violation) {
		signal(SIGABRT, abort_on_corrupted_mutex);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	int threads = argc > 2 ? atoi(argv[2]) : 12;
	if (argc > 3)
		mutex_count = atoi(argv[3]);
	if (threads < 1 || threads > MAX_THREADS || mutex_count < COND_MUTEXES ||
	    mutex_count > MAX_MUTEXES || !(seconds > 0)) {
		fprintf(stderr, "usage: torture [SECONDS [THREADS<=%d [MUTEXES %d..%d]]]\n",
			MAX_THREADS, COND_MUTEXES, MAX_MUTEXES);
		return 2;
	}
	init_mutexes();

	static struct worker workers[MAX_THREADS], spawned[SPAWN_BATCH], ticker;
	pthread_t tids[MAX_THREADS], spawner, ticker_tid;
	CHECK_EQ(pthread_create(&ticker_tid, NULL, tick, &ticker), 0);
	for (int t = 0; t < threads; t++)
		CHECK_EQ(pthread_create(&tids[t], NULL, work, &workers[t]), 0);
	CHECK_EQ(pthread_create(&spawner, NULL, spawn, spawned), 0);

	struct timespec began, ended;
	clock_gettime(CLOCK_MONOTONIC, &began);
	/* Run for the duration, or until the first violation stops it. */
	for (long slice = 0; slice < (long)(seconds * 100) &&
	     !atomic_load_explicit(&stopping, memory_order_relaxed); slice++) {
		struct timespec nap = { 0, 10000000L };
		nanosleep(&nap, NULL);
	}
	atomic_store_explicit(&stopping, true, memory_order_relaxed);
	for (int t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	pthread_join(spawner, NULL);
	atomic_store_explicit(&ticker_stopping, true, memory_order_relaxed);
	pthread_join(ticker_tid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ended);
	double elapsed = (double)(ended.tv_sec - began.tv_sec) +
			 (double)(ended.tv_nsec - began.tv_nsec) / 1e9;

	if (expect_violation) {
		long caught = lock_violations();
		if (caught && !check_failures)
			printf("torture: the broken lock was caught (%ld violations)\n", caught);
		else if (!caught)
			fprintf(stderr, "torture: a broken lock went unnoticed\n");
		return caught && !check_failures ? 0 : 1;
	}
	long acquisitions = 0;
	for (int i = 0; i < mutex_count; i++) {
		CHECK_EQ(guarded[i].counter, atomic_load(&totals[i]));
		CHECK_EQ(atomic_load(&guarded[i].occupancy), 0);
		CHECK_EQ(pthread_mutex_trylock(&mutexes[i]), 0);   /* nobody holds it */
		CHECK_EQ(pthread_mutex_unlock(&mutexes[i]), 0);
		CHECK_EQ(pthread_mutex_destroy(&mutexes[i]), 0);
		acquisitions += guarded[i].counter;
	}
	for (int c = 0; c < COND_MUTEXES; c++)
		CHECK_EQ(pthread_cond_destroy(&conds[c]), 0);
	CHECK_EQ(atomic_load(&violations), 0);

	printf("torture: %.1f s, %d threads + %ld spawned, %d mutexes: "
	       "critical sections %ld (lock %ld, trylock %ld ok/%ld busy, "
	       "timedlock %ld ok/%ld timed out, clocklock %ld ok/%ld timed out), "
	       "recursions %ld, errorcheck probes %ld, cond waits %ld woken/%ld timed out, "
	       "notifies %ld, violations %ld\n",
	       elapsed, threads, atomic_load(&threads_spawned), mutex_count, acquisitions,
	       atomic_load(&op_ok[OP_LOCK]), atomic_load(&op_ok[OP_TRYLOCK]),
	       atomic_load(&op_refused[OP_TRYLOCK]), atomic_load(&op_ok[OP_TIMED]),
	       atomic_load(&op_refused[OP_TIMED]), atomic_load(&op_ok[OP_CLOCKED]),
	       atomic_load(&op_refused[OP_CLOCKED]), atomic_load(&recursions),
	       atomic_load(&errorcheck_probes), atomic_load(&cond_waits),
	       atomic_load(&cond_timeouts), atomic_load(&signals_sent),
	       atomic_load(&violations));
	return check_report("torture");
}
