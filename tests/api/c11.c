/* tests/api/c11.c — C11 <threads.h> mutexes and condition variables.
 *
 * glibc's mtx_lock and friends call its internal mutex functions, so the
 * shim defines them itself: check they resolve to it, then their results
 * (thrd_busy, thrd_timedout, recursion), cnd_* waits on such mutexes, and
 * mutual exclusion with 8 threads.  (Threads come from pthread_create:
 * ThreadSanitizer does not follow thrd_create.)
 */
#include <stdatomic.h>
#include <threads.h>

#include "api.h"

static pthread_mutex_t *as_pthread(mtx_t *m)
{
	return (pthread_mutex_t *)m;
}

static void expect_bound_to_shim(const char *symbol)
{
	const char *where = check_defining_object(symbol);
	bool in_shim = strstr(where, "libcnamutex") != NULL;
	CHECK(in_shim != api_reference_run);
	if (in_shim == api_reference_run)
		printf("%-14s -> %s\n", symbol, where);
	else
		fprintf(stderr, "%s resolves to %s\n", symbol, where);
}

static int mtx_trylock_op(pthread_mutex_t *m) { return mtx_trylock((mtx_t *)m); }

static void expect_owned_by_me(mtx_t *m)
{
	CHECK_EQ(api_owner(as_pthread(m)), gettid());
	CHECK_EQ(api_on_other_thread(mtx_trylock_op, as_pthread(m)), thrd_busy);
}

static void plain_and_timed(int type)
{
	mtx_t m;
	CHECK_EQ(mtx_init(&m, type), thrd_success);
	CHECK_EQ(mtx_lock(&m), thrd_success);
	expect_owned_by_me(&m);
	CHECK_EQ(mtx_trylock(&m), thrd_busy);        /* not recursive */
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	CHECK_EQ(api_word(as_pthread(&m)), 0);
	CHECK_EQ(mtx_trylock(&m), thrd_success);
	expect_owned_by_me(&m);
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
}

static void recursive(int type)
{
	mtx_t m;
	CHECK_EQ(mtx_init(&m, type | mtx_recursive), thrd_success);
	CHECK_EQ(mtx_lock(&m), thrd_success);
	CHECK_EQ(mtx_lock(&m), thrd_success);
	CHECK_EQ(mtx_trylock(&m), thrd_success);
	CHECK_EQ(as_pthread(&m)->__data.__count, 3);
	expect_owned_by_me(&m);
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	expect_owned_by_me(&m);
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	CHECK_EQ(api_word(as_pthread(&m)), 0);
	CHECK_EQ(api_on_other_thread(mtx_trylock_op, as_pthread(&m)), thrd_success);
	/* ... left locked by a thread that is gone: not ours to unlock. */
	CHECK_EQ(mtx_unlock(&m), thrd_error);
	as_pthread(&m)->__data.__owner = gettid();
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
}

static void timed_lock(int type)
{
	mtx_t m;
	CHECK_EQ(mtx_init(&m, type), thrd_success);
	struct api_holder holder;
	api_holder_start(&holder, as_pthread(&m), 0);
	struct timespec deadline;
	CHECK_EQ(timespec_get(&deadline, TIME_UTC), TIME_UTC);
	deadline = api_ts_add_ms(deadline, 30);
	CHECK_EQ(mtx_timedlock(&m, &deadline), thrd_timedout);
	CHECK(api_reached(CLOCK_REALTIME, deadline));
	CHECK_EQ(mtx_trylock(&m), thrd_busy);
	api_holder_stop(&holder);

	/* Released before the deadline. */
	api_holder_start(&holder, as_pthread(&m), 20);
	deadline = api_deadline_ms(CLOCK_REALTIME, 10000);
	CHECK_EQ(mtx_timedlock(&m, &deadline), thrd_success);
	expect_owned_by_me(&m);
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	api_holder_stop(&holder);

	deadline = api_deadline_ms(CLOCK_REALTIME, 0);
	deadline.tv_sec -= 1;
	CHECK_EQ(mtx_timedlock(&m, &deadline), thrd_success);   /* free: past is fine */
	CHECK_EQ(mtx_unlock(&m), thrd_success);
	mtx_destroy(&m);
}

/* --- cnd_* on shim-locked mutexes --- */
#define WAITERS 4

static mtx_t gate_mutex;
static cnd_t gate;
static int waiting, woken, tokens;
static bool opened;

static int wait_on(cnd_t *c, mtx_t *m)
{
	api_wait_releases(m);
	int result = cnd_wait(c, m);
	api_wait_reacquired(m);
	return result;
}

static void *broadcast_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
	waiting++;
	while (!opened)
		CHECK_EQ(wait_on(&gate, &gate_mutex), thrd_success);
	CHECK_EQ(api_owner(as_pthread(&gate_mutex)), gettid());
	woken++;
	CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);
	return NULL;
}

static void *token_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
	waiting++;
	while (tokens == 0)
		CHECK_EQ(wait_on(&gate, &gate_mutex), thrd_success);
	CHECK_EQ(api_owner(as_pthread(&gate_mutex)), gettid());
	tokens--;
	woken++;
	CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);
	return NULL;
}

static void await_waiters(int n)
{
	for (;;) {
		CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
		int seen = waiting;
		CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);
		if (seen == n)
			return;
		struct timespec pause = { 0, 1000000 };
		nanosleep(&pause, NULL);
	}
}

static void join_all(pthread_t *threads, int n)
{
	struct timespec limit = api_deadline_ms(CLOCK_REALTIME, 10000);
	for (int t = 0; t < n; t++) {
		if (pthread_timedjoin_np(threads[t], NULL, &limit) != 0) {
			fprintf(stderr, "waiter %d never woke\n", t);
			exit(1);
		}
	}
}

static void condition_variables(void)
{
	CHECK_EQ(mtx_init(&gate_mutex, mtx_plain), thrd_success);
	CHECK_EQ(cnd_init(&gate), thrd_success);

	/* cnd_timedwait times out holding the mutex again. */
	CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
	struct timespec deadline = api_deadline_ms(CLOCK_REALTIME, 30);
	api_wait_releases(&gate_mutex);
	CHECK_EQ(cnd_timedwait(&gate, &gate_mutex, &deadline), thrd_timedout);
	api_wait_reacquired(&gate_mutex);
	CHECK(api_reached(CLOCK_REALTIME, deadline));
	expect_owned_by_me(&gate_mutex);
	CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);

	pthread_t threads[WAITERS];
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, broadcast_waiter, NULL), 0);
	await_waiters(WAITERS);
	CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
	opened = true;
	CHECK_EQ(cnd_broadcast(&gate), thrd_success);
	CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);
	join_all(threads, WAITERS);
	CHECK_EQ(woken, WAITERS);

	waiting = woken = 0;
	for (int t = 0; t < WAITERS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, token_waiter, NULL), 0);
	await_waiters(WAITERS);
	for (int t = 0; t < WAITERS; t++) {
		CHECK_EQ(mtx_lock(&gate_mutex), thrd_success);
		tokens++;
		CHECK_EQ(cnd_signal(&gate), thrd_success);
		CHECK_EQ(mtx_unlock(&gate_mutex), thrd_success);
	}
	join_all(threads, WAITERS);
	CHECK_EQ(woken, WAITERS);
	CHECK_EQ(tokens, 0);
	cnd_destroy(&gate);
	mtx_destroy(&gate_mutex);
}

/* --- mutual exclusion, 8 threads --- */
#define THREADS 8

static mtx_t counter_mutex;
static long counter;
static _Atomic int occupancy;
static _Atomic long overlaps;

static void *counter_worker(void *arg)
{
	long iterations = (long)arg;
	for (long i = 0; i < iterations; i++) {
		CHECK_EQ(mtx_lock(&counter_mutex), thrd_success);
		if (atomic_fetch_add_explicit(&occupancy, 1, memory_order_relaxed) != 0)
			atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
		long seen = counter;
		if ((i & 63) == 0)
			thrd_yield();
		counter = seen + 1;
		atomic_fetch_sub_explicit(&occupancy, 1, memory_order_relaxed);
		CHECK_EQ(mtx_unlock(&counter_mutex), thrd_success);
	}
	return NULL;
}

static void mutual_exclusion(void)
{
	long iterations = 20000 / API_SCALE;
	CHECK_EQ(mtx_init(&counter_mutex, mtx_plain), thrd_success);
	pthread_t threads[THREADS];
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, counter_worker, (void *)iterations), 0);
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	CHECK_EQ(counter, THREADS * iterations);
	/* Relaxed: the joins above order every thread's updates before this. */
	CHECK_EQ(atomic_load_explicit(&overlaps, memory_order_relaxed), 0);
	CHECK_EQ(api_word(as_pthread(&counter_mutex)), 0);
	mtx_destroy(&counter_mutex);
}

int main(void)
{
	api_start("c11");
	expect_bound_to_shim("mtx_lock");
	expect_bound_to_shim("mtx_trylock");
	expect_bound_to_shim("mtx_timedlock");
	expect_bound_to_shim("mtx_unlock");
	/* Taken through this program's own references too. */
	Dl_info info;
	CHECK(dladdr((void *)mtx_lock, &info) && info.dli_fname &&
	      (strstr(info.dli_fname, "libcnamutex") != NULL) != api_reference_run);

	plain_and_timed(mtx_plain);
	plain_and_timed(mtx_timed);
	recursive(mtx_plain);
	recursive(mtx_timed);
	timed_lock(mtx_timed);
	condition_variables();
	mutual_exclusion();
	return check_report("c11");
}
