/* tests/torture/signals.c — signal storms and cancellation on interposed mutexes.
 *
 * Usage: signals storm restart|norestart ITERATIONS
 *        signals cancel ROUNDS
 *
 * storm: threads hammer a few mutexes (lock, timedlock, condition waits)
 * while an interval timer and a storm thread rain SIGALRM on them, with or
 * without SA_RESTART, so futex waits keep returning EINTR.  Nothing may be
 * lost: no overlap, every counter equals the threads' tallies, every thread
 * finishes its quota.
 *
 * cancel: a thread blocked in pthread_cond_wait is cancelled while another
 * holds the mutex and a third is queued on it.  POSIX: the cancelled thread
 * re-acquires the mutex before its cleanup handler runs; the handler
 * unlocks it; afterwards the mutex works for everybody.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "tsan_glibc.h"

#define STORM_THREADS 8
#define STORM_MUTEXES 3
#define STORM_PERIOD_US 200          /* interval timer */
#define STORM_KILL_GAP_NS 20000L     /* storm thread: one signal per 20 us */

static _Atomic long signals_caught;

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals_caught, 1, memory_order_relaxed);
}

/* ---- storm ---- */

static pthread_mutex_t storm_mutexes[STORM_MUTEXES] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
};
static pthread_cond_t storm_cond = PTHREAD_COND_INITIALIZER;
static long storm_counters[STORM_MUTEXES];
static _Atomic int storm_occupancy[STORM_MUTEXES];
static _Atomic long storm_totals[STORM_MUTEXES];
static _Atomic long storm_overlaps, storm_errors, storm_finished, storm_timeouts;
static _Atomic bool storm_over;
static long storm_iterations;
static pthread_t storm_tids[STORM_THREADS];

static void storm_section(int i, long *tally)
{
	if (atomic_fetch_add_explicit(&storm_occupancy[i], 1, memory_order_relaxed))
		atomic_fetch_add_explicit(&storm_overlaps, 1, memory_order_relaxed);
	long seen = *(volatile long *)&storm_counters[i];
	*(volatile long *)&storm_counters[i] = seen + 1;
	tally[i]++;
	atomic_fetch_sub_explicit(&storm_occupancy[i], 1, memory_order_relaxed);
}

static void *storm_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	long tally[STORM_MUTEXES] = { 0 };
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	for (long n = 0; n < storm_iterations; n++) {
		seed = seed * 1103515245u + 12345u;
		int i = (int)((seed >> 16) % STORM_MUTEXES);
		pthread_mutex_t *m = &storm_mutexes[i];
		int err = 0;
		switch ((seed >> 24) % 4) {
		case 0: {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 100000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			err = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
			if (err == ETIMEDOUT) {
				atomic_fetch_add_explicit(&storm_timeouts, 1, memory_order_relaxed);
				n--;        /* the quota counts acquisitions */
				continue;
			}
			break;
		}
		case 1:
			err = pthread_mutex_lock(&storm_mutexes[0]);
			i = 0;
			if (err)
				break;
			storm_section(0, tally);
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			glibc_will_unlock(&storm_mutexes[0]);
			int werr = pthread_cond_timedwait(&storm_cond, &storm_mutexes[0], &ts);
			glibc_relocked(&storm_mutexes[0]);
			if (werr && werr != ETIMEDOUT)
				atomic_fetch_add_explicit(&storm_errors, 1, memory_order_relaxed);
			pthread_cond_signal(&storm_cond);
			break;
		default:
			err = pthread_mutex_lock(m);
			break;
		}
		if (err) {
			atomic_fetch_add_explicit(&storm_errors, 1, memory_order_relaxed);
			continue;
		}
		storm_section(i, tally);
		if ((n & 15) == 0)
			sched_yield();
		if (pthread_mutex_unlock(&storm_mutexes[i]))
			atomic_fetch_add_explicit(&storm_errors, 1, memory_order_relaxed);
	}
	for (int i = 0; i < STORM_MUTEXES; i++)
		atomic_fetch_add_explicit(&storm_totals[i], tally[i], memory_order_relaxed);
	atomic_fetch_add_explicit(&storm_finished, 1, memory_order_relaxed);
	/* Stay alive while the thrower may still aim at us. */
	while (!atomic_load_explicit(&storm_over, memory_order_relaxed)) {
		struct timespec nap = { 0, 1000000L };
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* Signals aimed at the workers themselves, not only at whichever thread
 * the kernel picks for the process-wide timer. */
static void *storm_thrower(void *arg)
{
	(void)arg;
	for (unsigned k = 0; !atomic_load_explicit(&storm_over, memory_order_relaxed); k++) {
		pthread_kill(storm_tids[k % STORM_THREADS], SIGALRM);
		struct timespec gap = { 0, STORM_KILL_GAP_NS };
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static int run_storm(bool restart, long iterations)
{
	storm_iterations = iterations;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);

	/* Only the workers take SIGALRM: the timer's signals land on them. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	for (long t = 0; t < STORM_THREADS; t++)
		CHECK_EQ(pthread_create(&storm_tids[t], NULL, storm_worker, (void *)t), 0);
	pthread_t thrower;
	CHECK_EQ(pthread_create(&thrower, NULL, storm_thrower, NULL), 0);
	struct itimerval storm = { { 0, STORM_PERIOD_US }, { 0, STORM_PERIOD_US } };
	CHECK_EQ(setitimer(ITIMER_REAL, &storm, NULL), 0);

	while (atomic_load_explicit(&storm_finished, memory_order_relaxed) < STORM_THREADS) {
		struct timespec nap = { 0, 1000000L };
		nanosleep(&nap, NULL);
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store_explicit(&storm_over, true, memory_order_relaxed);
	pthread_join(thrower, NULL);
	for (int t = 0; t < STORM_THREADS; t++)
		pthread_join(storm_tids[t], NULL);

	long total = 0;
	for (int i = 0; i < STORM_MUTEXES; i++) {
		CHECK_EQ(storm_counters[i], atomic_load(&storm_totals[i]));
		CHECK_EQ(pthread_mutex_trylock(&storm_mutexes[i]), 0);
		CHECK_EQ(pthread_mutex_unlock(&storm_mutexes[i]), 0);
		total += storm_counters[i];
	}
	CHECK_EQ(atomic_load(&storm_overlaps), 0);
	CHECK_EQ(atomic_load(&storm_errors), 0);
	CHECK_EQ(atomic_load(&storm_finished), STORM_THREADS);
	CHECK(atomic_load(&signals_caught) > 0);
	printf("storm (%s): %d threads, %ld critical sections, %ld timed out, "
	       "%ld signals caught\n", restart ? "SA_RESTART" : "no SA_RESTART",
	       STORM_THREADS, total, atomic_load(&storm_timeouts),
	       atomic_load(&signals_caught));
	return check_report("signals storm");
}

/* ---- cancel ---- */

struct cancel_case {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	bool waiting;               /* set under mutex by the victim */
	_Atomic bool cleanup_ran;
	_Atomic int cleanup_owner;  /* __owner seen by the handler */
	_Atomic int cleanup_unlock; /* what the handler's unlock returned */
	_Atomic pid_t victim_tid;
	_Atomic bool contender_done;
};

static void cleanup_unlock(void *arg)
{
	struct cancel_case *c = arg;
	glibc_relocked(&c->mutex);
	atomic_store(&c->cleanup_owner,
		     __atomic_load_n(&c->mutex.__data.__owner, __ATOMIC_RELAXED));
	atomic_store(&c->cleanup_unlock, pthread_mutex_unlock(&c->mutex));
	atomic_store(&c->cleanup_ran, true);
}

static void *victim(void *arg)
{
	struct cancel_case *c = arg;
	atomic_store(&c->victim_tid, gettid());
	pthread_mutex_lock(&c->mutex);
	pthread_cleanup_push(cleanup_unlock, c);
	c->waiting = true;
	for (;;) {                  /* nobody signals: only cancellation ends this */
		glibc_will_unlock(&c->mutex);
		pthread_cond_wait(&c->cond, &c->mutex);
		glibc_relocked(&c->mutex);
	}
	pthread_cleanup_pop(0);
	return NULL;
}

/* Queues on the mutex (the shim's contended path) while main holds it. */
static void *contender(void *arg)
{
	struct cancel_case *c = arg;
	if (pthread_mutex_lock(&c->mutex) == 0)
		pthread_mutex_unlock(&c->mutex);
	atomic_store(&c->contender_done, true);
	return NULL;
}

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

static void cancel_once(int kind)
{
	static struct cancel_case c;
	memset(&c, 0, sizeof c);
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, kind);
	CHECK_EQ(pthread_mutex_init(&c.mutex, &attr), 0);
	pthread_mutexattr_destroy(&attr);
	pthread_cond_init(&c.cond, NULL);

	pthread_t v, k;
	CHECK_EQ(pthread_create(&v, NULL, victim, &c), 0);
	/* Once we hold the mutex with waiting set, the victim is in the wait. */
	for (;;) {
		pthread_mutex_lock(&c.mutex);
		if (c.waiting)
			break;
		pthread_mutex_unlock(&c.mutex);
		sched_yield();
	}
	CHECK_EQ(pthread_create(&k, NULL, contender, &c), 0);
	CHECK_EQ(pthread_cancel(v), 0);
	nap_us(2000);               /* the victim wakes and blocks on the mutex */
	CHECK(!atomic_load(&c.cleanup_ran));   /* not before it re-acquired */
	CHECK_EQ(pthread_mutex_unlock(&c.mutex), 0);

	void *result;
	CHECK_EQ(pthread_join(v, &result), 0);
	CHECK(result == PTHREAD_CANCELED);
	CHECK_EQ(pthread_join(k, NULL), 0);
	CHECK(atomic_load(&c.cleanup_ran));
	CHECK_EQ(atomic_load(&c.cleanup_owner), atomic_load(&c.victim_tid));
	CHECK_EQ(atomic_load(&c.cleanup_unlock), 0);
	CHECK(atomic_load(&c.contender_done));
	CHECK_EQ(pthread_mutex_trylock(&c.mutex), 0);   /* usable after the join */
	CHECK_EQ(pthread_mutex_unlock(&c.mutex), 0);
	CHECK_EQ(pthread_mutex_destroy(&c.mutex), 0);
	CHECK_EQ(pthread_cond_destroy(&c.cond), 0);
}

static int run_cancel(int rounds)
{
	static const int kinds[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_ERRORCHECK,
				     PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ADAPTIVE_NP };
	for (int r = 0; r < rounds; r++)
		cancel_once(kinds[r % 4]);
	printf("cancel: %d rounds over 4 kinds\n", rounds);
	return check_report("signals cancel");
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	if (argc == 4 && !strcmp(argv[1], "storm"))
		return run_storm(!strcmp(argv[2], "restart"), atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "cancel"))
		return run_cancel(atoi(argv[2]));
	fprintf(stderr, "usage: signals storm restart|norestart N | signals cancel N\n");
	return 2;
}
