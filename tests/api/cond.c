/* tests/api/cond.c — condition variables on interposed mutexes.
 *
 * Usage: cond KIND    (default normal adaptive errorcheck recursive)
 * pthread_cond_*wait unlock and relock the mutex through glibc's internal
 * functions, on the word the shim keeps in glibc's protocol.  After every
 * wait the caller must own the mutex again (owner field, EBUSY for others,
 * and for ERRORCHECK/RECURSIVE an unlock that succeeds exactly once).
 */
#include <stdatomic.h>

#include "api.h"

static pthread_mutex_t m;
static int mutex_type;

static int op_trylock(pthread_mutex_t *mutex) { return pthread_mutex_trylock(mutex); }

static int wait_on(pthread_cond_t *c)
{
	api_wait_releases(&m);
	int err = pthread_cond_wait(c, &m);
	api_wait_reacquired(&m);
	return err;
}

/* After a wait returned: this thread owns m, as glibc leaves it.  (glibc
 * keeps __nusers counting a waiter through its wait, so it is checked only
 * where nobody else waits.) */
static void expect_reowned(void)
{
	CHECK_EQ(api_owner(&m), gettid());
	CHECK(api_word(&m) != 0);
	if (mutex_type == PTHREAD_MUTEX_RECURSIVE)
		CHECK_EQ(m.__data.__count, 1);
}

/* Unlock after a wait: for the owner-checking kinds, exactly once. */
static void unlock_after_wait(void)
{
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	if (mutex_type == PTHREAD_MUTEX_ERRORCHECK || mutex_type == PTHREAD_MUTEX_RECURSIVE)
		CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
}

/* --- producers and consumers through a small ring --- */
#define RING 4
#define PRODUCERS 3
#define CONSUMERS 3

static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long ring[RING];
static int ring_head, ring_used;
static long items_per_producer, consumed, consumed_sum;
static _Atomic int occupancy;
static _Atomic long overlaps;

static void enter(void)
{
	expect_reowned();
	if (atomic_fetch_add_explicit(&occupancy, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
}

static void leave(void)
{
	atomic_fetch_sub_explicit(&occupancy, 1, memory_order_relaxed);
}

static void *producer(void *arg)
{
	long first = (long)arg * items_per_producer;
	for (long i = 0; i < items_per_producer; i++) {
		CHECK_EQ(pthread_mutex_lock(&m), 0);
		while (ring_used == RING)
			CHECK_EQ(wait_on(&not_full), 0);
		enter();
		ring[(ring_head + ring_used) % RING] = first + i;
		ring_used++;
		leave();
		CHECK_EQ(pthread_cond_signal(&not_empty), 0);
		CHECK_EQ(pthread_mutex_unlock(&m), 0);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long total = (long)arg;
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	for (;;) {
		while (ring_used == 0 && consumed < total)
			CHECK_EQ(wait_on(&not_empty), 0);
		if (consumed == total)
			break;
		enter();
		consumed_sum += ring[ring_head];
		ring_head = (ring_head + 1) % RING;
		ring_used--;
		consumed++;
		leave();
		if (consumed == total)   /* wake the other consumers to finish */
			CHECK_EQ(pthread_cond_broadcast(&not_empty), 0);
		CHECK_EQ(pthread_cond_signal(&not_full), 0);
	}
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	return NULL;
}

static void producers_and_consumers(void)
{
	items_per_producer = 8000 / API_SCALE;
	long total = PRODUCERS * items_per_producer;
	pthread_t threads[PRODUCERS + CONSUMERS];
	for (long t = 0; t < PRODUCERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, producer, (void *)t), 0);
	for (long t = 0; t < CONSUMERS; t++)
		CHECK_EQ(pthread_create(&threads[PRODUCERS + t], NULL, consumer, (void *)total), 0);
	for (int t = 0; t < PRODUCERS + CONSUMERS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	CHECK_EQ(consumed, total);
	CHECK_EQ(consumed_sum, total * (total - 1) / 2);
	/* Relaxed: the joins above order every thread's updates before this. */
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);
	CHECK_EQ(api_word(&m), 0);
	CHECK_EQ(m.__data.__nusers, 0);
}

/* --- a timed wait that times out holds the mutex again --- */
static void expect_timed_out_and_reowned(int err, clockid_t clock, struct timespec deadline)
{
	CHECK_EQ(err, ETIMEDOUT);
	CHECK(api_reached(clock, deadline));
	expect_reowned();
	CHECK_EQ(m.__data.__nusers, 1);
	CHECK_EQ(api_on_other_thread(op_trylock, &m), EBUSY);
	unlock_after_wait();
	CHECK_EQ(api_word(&m), 0);
}

static void timed_waits(void)
{
	pthread_cond_t realtime_cond = PTHREAD_COND_INITIALIZER, monotonic_cond;
	pthread_condattr_t attr;
	CHECK_EQ(pthread_condattr_init(&attr), 0);
	CHECK_EQ(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC), 0);
	CHECK_EQ(pthread_cond_init(&monotonic_cond, &attr), 0);
	pthread_condattr_destroy(&attr);

	struct timespec deadline;
	int err;
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	deadline = api_deadline_ms(CLOCK_REALTIME, 30);
	api_wait_releases(&m);
	err = pthread_cond_timedwait(&realtime_cond, &m, &deadline);
	api_wait_reacquired(&m);
	expect_timed_out_and_reowned(err, CLOCK_REALTIME, deadline);

	CHECK_EQ(pthread_mutex_lock(&m), 0);
	deadline = api_deadline_ms(CLOCK_MONOTONIC, 30);
	api_wait_releases(&m);
	err = pthread_cond_timedwait(&monotonic_cond, &m, &deadline);
	api_wait_reacquired(&m);
	expect_timed_out_and_reowned(err, CLOCK_MONOTONIC, deadline);

	CHECK_EQ(pthread_mutex_lock(&m), 0);
	deadline = api_deadline_ms(CLOCK_MONOTONIC, 30);
	api_wait_releases(&m);
	err = pthread_cond_clockwait(&realtime_cond, &m, CLOCK_MONOTONIC, &deadline);
	api_wait_reacquired(&m);
	expect_timed_out_and_reowned(err, CLOCK_MONOTONIC, deadline);

	/* A deadline already past: times out at once, mutex still held. */
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	deadline = api_deadline_ms(CLOCK_REALTIME, 0);
	deadline.tv_sec -= 1;
	api_wait_releases(&m);
	err = pthread_cond_timedwait(&realtime_cond, &m, &deadline);
	api_wait_reacquired(&m);
	expect_timed_out_and_reowned(err, CLOCK_REALTIME, deadline);

	CHECK_EQ(pthread_cond_destroy(&monotonic_cond), 0);
	CHECK_EQ(pthread_cond_destroy(&realtime_cond), 0);
}

/* --- broadcast wakes every waiter; each signal wakes one --- */
#define WAITERS 6

static pthread_cond_t gate = PTHREAD_COND_INITIALIZER;
static int waiting, tokens, woken;
static bool opened;

static void *broadcast_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	waiting++;
	while (!opened)
		CHECK_EQ(wait_on(&gate), 0);
	expect_reowned();
	woken++;
	unlock_after_wait();
	return NULL;
}

static void *token_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	waiting++;
	while (tokens == 0)
		CHECK_EQ(wait_on(&gate), 0);
	expect_reowned();
	tokens--;
	woken++;
	unlock_after_wait();
	return NULL;
}

/* Waiters register and wait under m, so once all are counted all are waiting. */
static void await_waiters(int n)
{
	for (;;) {
		CHECK_EQ(pthread_mutex_lock(&m), 0);
		int seen = waiting;
		CHECK_EQ(pthread_mutex_unlock(&m), 0);
		if (seen == n)
			return;
		struct timespec pause = { 0, 1000000 };
		nanosleep(&pause, NULL);
	}
}

/* Every waiter must finish; a lost wakeup shows as a join that times out. */
static void join_all(pthread_t *threads, int n)
{
	struct timespec limit = api_deadline_ms(CLOCK_REALTIME, 10000);
	for (int t = 0; t < n; t++) {
		int err = pthread_timedjoin_np(threads[t], NULL, &limit);
		CHECK_EQ(err, 0);
		if (err) {
			fprintf(stderr, "waiter %d never woke; giving up\n", t);
			exit(1);
		}
	}
}

static void wakeups(void)
{
	pthread_t threads[WAITERS];
	waiting = woken = 0;
	opened = false;
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, broadcast_waiter, NULL), 0);
	await_waiters(WAITERS);
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	opened = true;
	CHECK_EQ(pthread_cond_broadcast(&gate), 0);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	join_all(threads, WAITERS);
	CHECK_EQ(woken, WAITERS);

	waiting = woken = 0;
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, token_waiter, NULL), 0);
	await_waiters(WAITERS);
	for (int t = 0; t < WAITERS; t++) {
		CHECK_EQ(pthread_mutex_lock(&m), 0);
		tokens++;
		CHECK_EQ(pthread_cond_signal(&gate), 0);
		CHECK_EQ(pthread_mutex_unlock(&m), 0);
	}
	join_all(threads, WAITERS);
	CHECK_EQ(woken, WAITERS);
	CHECK_EQ(tokens, 0);
	CHECK_EQ(api_word(&m), 0);
}

int main(int argc, char **argv)
{
	api_start("cond");
	mutex_type = api_init_kind(&m, argc > 1 ? argv[1] : "");
	if (mutex_type < 0) {
		fprintf(stderr, "usage: cond default|normal|adaptive|errorcheck|recursive\n");
		return 2;
	}

	timed_waits();
	wakeups();
	producers_and_consumers();
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return check_report("cond");
}
