/* tests/api/timed.c — pthread_mutex_timedlock and _clocklock, as glibc.
 *
 * Usage: timed KIND    (default normal adaptive errorcheck recursive)
 * On a mutex held by another thread: ETIMEDOUT, and never before the
 * deadline on the clock asked for; a past deadline times out at once; a bad
 * tv_nsec is EINVAL only when the call would have to wait; an unsupported
 * clock is EINVAL; a release before the deadline lets the call succeed.
 * Then many threads mix plain and timed locks (most timing out) and the
 * mutex must still exclude and end free: giving up never corrupts the queue.
 */
#include <sched.h>
#include <stdatomic.h>

#include "api.h"

enum { VIA_TIMEDLOCK, VIA_CLOCK_REALTIME, VIA_CLOCK_MONOTONIC, VIA_COUNT };
static const char *const via_name[VIA_COUNT] = { "timedlock", "clocklock(REALTIME)",
						 "clocklock(MONOTONIC)" };

static clockid_t via_clock(int via)
{
	return via == VIA_CLOCK_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static int timed_lock(pthread_mutex_t *m, int via, const struct timespec *deadline)
{
	if (via == VIA_TIMEDLOCK)
		return pthread_mutex_timedlock(m, deadline);
	return pthread_mutex_clocklock(m, via_clock(via), deadline);
}

static void report_via(int via, int failures_before)
{
	if (check_failures != failures_before)
		fprintf(stderr, "  (in %s)\n", via_name[via]);
}

static void held_by_other(pthread_mutex_t *m, int via)
{
	int failures_before = check_failures;
	clockid_t clock = via_clock(via);
	struct api_holder holder;
	api_holder_start(&holder, m, 0);
	int holder_tid = api_owner(m);

	struct timespec deadline = api_deadline_ms(clock, 30);
	CHECK_EQ(timed_lock(m, via, &deadline), ETIMEDOUT);
	CHECK(api_reached(clock, deadline));
	CHECK_EQ(api_owner(m), holder_tid);

	struct timespec past = api_deadline_ms(clock, 0);
	past.tv_sec -= 1;
	CHECK_EQ(timed_lock(m, via, &past), ETIMEDOUT);
	struct timespec epoch = { 0, 0 };
	CHECK_EQ(timed_lock(m, via, &epoch), ETIMEDOUT);

	struct timespec bad = api_deadline_ms(clock, 1000);
	bad.tv_nsec = -1;
	CHECK_EQ(timed_lock(m, via, &bad), EINVAL);
	bad.tv_nsec = 1000000000L;
	CHECK_EQ(timed_lock(m, via, &bad), EINVAL);

	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &deadline), EINVAL);
	CHECK_EQ(api_owner(m), holder_tid);
	api_holder_stop(&holder);

	/* Released before the deadline: the call gets the mutex. */
	api_holder_start(&holder, m, 30);
	struct timespec far = api_deadline_ms(clock, 10000);
	CHECK_EQ(timed_lock(m, via, &far), 0);
	CHECK_EQ(api_owner(m), gettid());
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	api_holder_stop(&holder);
	report_via(via, failures_before);
}

static void free_mutex(pthread_mutex_t *m, int via)
{
	int failures_before = check_failures;
	clockid_t clock = via_clock(via);
	struct timespec past = api_deadline_ms(clock, 0);
	past.tv_sec -= 1;
	CHECK_EQ(timed_lock(m, via, &past), 0);
	CHECK_EQ(api_owner(m), gettid());
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	/* No wait, so no complaint about the timespec (glibc checks it late). */
	struct timespec bad = { past.tv_sec, -1 };
	CHECK_EQ(timed_lock(m, via, &bad), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	bad.tv_nsec = 1000000000L;
	CHECK_EQ(timed_lock(m, via, &bad), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	/* The clock is checked first, even on a free mutex. */
	struct timespec later = api_deadline_ms(CLOCK_REALTIME, 1000);
	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &later), EINVAL);
	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_THREAD_CPUTIME_ID, &later), EINVAL);
	CHECK_EQ(api_word(m), 0);
	report_via(via, failures_before);
}

/* The owner calls again: EDEADLK or one more level, before any timespec check. */
static void by_owner(pthread_mutex_t *m, int type, int via)
{
	int failures_before = check_failures;
	clockid_t clock = via_clock(via);
	struct timespec soon = api_deadline_ms(clock, 20);
	struct timespec bad = { soon.tv_sec, -1 };
	CHECK_EQ(pthread_mutex_lock(m), 0);
	if (type == PTHREAD_MUTEX_ERRORCHECK) {
		CHECK_EQ(timed_lock(m, via, &soon), EDEADLK);
		CHECK_EQ(timed_lock(m, via, &bad), EDEADLK);
	} else if (type == PTHREAD_MUTEX_RECURSIVE) {
		CHECK_EQ(timed_lock(m, via, &soon), 0);
		CHECK_EQ(timed_lock(m, via, &bad), 0);
		CHECK_EQ(m->__data.__count, 3);
		CHECK_EQ(pthread_mutex_unlock(m), 0);
		CHECK_EQ(pthread_mutex_unlock(m), 0);
	}
	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_PROCESS_CPUTIME_ID, &soon), EINVAL);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(api_word(m), 0);
	report_via(via, failures_before);
}

/* Plain lockers and timed lockers that mostly give up, on one mutex. */
#define PLAIN_THREADS 4
#define TIMED_THREADS 4

static pthread_mutex_t *stress_mutex;
static _Atomic int occupancy;
static _Atomic long overlaps, timed_successes, timeouts, invalids;
static long counter;

static void critical_section(void)
{
	if (atomic_fetch_add_explicit(&occupancy, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
	long seen = counter;
	for (int k = 0; k < 2000; k++)     /* hold long enough to make waiters give up */
		__asm__ volatile("" ::: "memory");
	if ((seen & 31) == 0)
		sched_yield();
	counter = seen + 1;
	atomic_fetch_sub_explicit(&occupancy, 1, memory_order_relaxed);
}

static void *plain_locker(void *arg)
{
	long iterations = (long)arg;
	for (long i = 0; i < iterations; i++) {
		CHECK_EQ(pthread_mutex_lock(stress_mutex), 0);
		critical_section();
		CHECK_EQ(pthread_mutex_unlock(stress_mutex), 0);
	}
	return NULL;
}

static void *timed_locker(void *arg)
{
	long iterations = (long)arg;
	for (long i = 0; i < iterations; i++) {
		int via = (int)(i % VIA_COUNT);
		struct timespec deadline;
		clock_gettime(via_clock(via), &deadline);
		deadline.tv_nsec += (i % 4) * 100000L;       /* 0..300 us */
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		bool bad = i % 16 == 15;
		if (bad)
			deadline.tv_nsec = -1;
		int err = timed_lock(stress_mutex, via, &deadline);
		if (err == 0) {
			critical_section();
			atomic_fetch_add_explicit(&timed_successes, 1, memory_order_relaxed);
			CHECK_EQ(pthread_mutex_unlock(stress_mutex), 0);
		} else {
			CHECK(err == (bad ? EINVAL : ETIMEDOUT));
			atomic_fetch_add_explicit(bad ? &invalids : &timeouts, 1,
						  memory_order_relaxed);
		}
	}
	return NULL;
}

static void stress(pthread_mutex_t *m)
{
	long plain_iterations = 10000 / API_SCALE, timed_iterations = 3000 / API_SCALE;
	stress_mutex = m;
	pthread_t threads[PLAIN_THREADS + TIMED_THREADS];
	for (int t = 0; t < PLAIN_THREADS + TIMED_THREADS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL,
					t < PLAIN_THREADS ? plain_locker : timed_locker,
					(void *)(t < PLAIN_THREADS ? plain_iterations
								    : timed_iterations)),
			 0);
	for (int t = 0; t < PLAIN_THREADS + TIMED_THREADS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	/* Relaxed: the joins above order every thread's updates before this. */
	long timed = atomic_load_explicit(&timed_successes, memory_order_relaxed);
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);
	CHECK_EQ(counter, PLAIN_THREADS * plain_iterations + timed);
	printf("stress: %ld timed acquisitions, %ld timeouts, %ld EINVAL\n", timed,
	       atomic_load_explicit(&timeouts, memory_order_relaxed),
	       atomic_load_explicit(&invalids, memory_order_relaxed));

	/* The mutex ends free and usable. */
	CHECK_EQ(api_word(m), 0);
	CHECK_EQ(api_owner(m), 0);
	CHECK_EQ(m->__data.__nusers, 0);
	CHECK_EQ(pthread_mutex_trylock(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	struct timespec soon = api_deadline_ms(CLOCK_MONOTONIC, 10);
	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &soon), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
}

int main(int argc, char **argv)
{
	api_start("timed");
	pthread_mutex_t m;
	int type = api_init_kind(&m, argc > 1 ? argv[1] : "");
	if (type < 0) {
		fprintf(stderr, "usage: timed default|normal|adaptive|errorcheck|recursive\n");
		return 2;
	}

	for (int via = 0; via < VIA_COUNT; via++) {
		held_by_other(&m, via);
		free_mutex(&m, via);
		by_owner(&m, type, via);
	}
	stress(&m);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return check_report("timed");
}
