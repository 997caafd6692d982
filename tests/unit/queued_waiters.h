/* tests/unit/queued_waiters.h — mutexes the main thread holds while other
 * threads wait on them in the shim's queue.
 *
 * On each mutex the first waiter sleeps on the word (queued_start() sees
 * the word go to 2 before it starts the next), so the others find the word
 * waited on and queue: each mutex has a queue record in use.  queued_start()
 * returns once every waiter sleeps, and a waiter sleeps only on the word or
 * in the queue, after taking its record.  Under the shim's statistics each
 * first waiter then counts as acquisitions_word, the others as
 * acquisitions_slow.
 */
#ifndef TESTS_UNIT_QUEUED_WAITERS_H
#define TESTS_UNIT_QUEUED_WAITERS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "thread_state.h"

#define QUEUED_MAX_MUTEXES 32
#define QUEUED_MAX_WAITERS 4
#define QUEUED_PATIENCE_MS 10000

struct queued_mutex {
	pthread_mutex_t mutex;
	long acquired;                 /* by the waiters; changed only under mutex */
};

struct queued_waiter {
	struct queued_mutex *on;
	_Atomic pid_t tid;             /* 0 until the thread runs */
	pthread_t thread;
};

struct queued_set {
	int mutexes, waiters;
	struct queued_mutex mutex[QUEUED_MAX_MUTEXES];
	struct queued_waiter waiter[QUEUED_MAX_MUTEXES][QUEUED_MAX_WAITERS];
};

static void *queued_waiter_main(void *arg)
{
	struct queued_waiter *self = arg;
	/* Release: the main thread reads the tid to watch this thread. */
	atomic_store_explicit(&self->tid, gettid(), memory_order_release);
	CHECK_EQ(pthread_mutex_lock(&self->on->mutex), 0);
	self->on->acquired++;
	CHECK_EQ(pthread_mutex_unlock(&self->on->mutex), 0);
	return NULL;
}

static inline bool queued_asleep(struct queued_waiter *w)
{
	/* Acquire: pairs with the waiter's release store of its tid. */
	pid_t tid = atomic_load_explicit(&w->tid, memory_order_acquire);
	return tid && thread_state(tid) == 'S';
}

/* Polls until done(arg) holds; false after QUEUED_PATIENCE_MS. */
static inline bool queued_wait_until(bool (*done)(void *), void *arg)
{
	for (int waited = 0; waited < QUEUED_PATIENCE_MS; waited += 5) {
		if (done(arg))
			return true;
		struct timespec pause = { 0, 5000000 };
		nanosleep(&pause, NULL);
	}
	return false;
}

/* arg: a struct queued_mutex; its word says a waiter sleeps on it. */
static bool queued_word_waited_on(void *arg)
{
	struct queued_mutex *m = arg;
	return __atomic_load_n(&m->mutex.__data.__lock, __ATOMIC_RELAXED) == 2;
}

static bool queued_all_asleep(void *arg)
{
	struct queued_set *s = arg;
	for (int m = 0; m < s->mutexes; m++)
		for (int w = 0; w < s->waiters; w++)
			if (!queued_asleep(&s->waiter[m][w]))
				return false;
	return true;
}

/* Starts a thread, as pthread_create() does (checking that it did). */
typedef void queued_create_fn(pthread_t *thread, void *(*start)(void *), void *arg);

static inline void queued_create_default(pthread_t *thread, void *(*start)(void *), void *arg)
{
	CHECK_EQ(pthread_create(thread, NULL, start, arg), 0);
}

/* Holds mutexes mutexes (initialised here) with waiters threads asleep on
 * each, started by create; false (and a failed check) if they did not all
 * get there. */
static inline bool queued_start(struct queued_set *s, int mutexes, int waiters,
				queued_create_fn *create)
{
	memset(s, 0, sizeof *s);
	s->mutexes = mutexes;
	s->waiters = waiters;
	for (int m = 0; m < mutexes; m++) {
		CHECK_EQ(pthread_mutex_init(&s->mutex[m].mutex, NULL), 0);
		CHECK_EQ(pthread_mutex_lock(&s->mutex[m].mutex), 0);
	}
	for (int m = 0; m < mutexes; m++)
		for (int w = 0; w < waiters; w++) {
			struct queued_waiter *q = &s->waiter[m][w];
			q->on = &s->mutex[m];
			create(&q->thread, queued_waiter_main, q);
			if (w == 0)
				CHECK(queued_wait_until(queued_word_waited_on, q->on));
		}
	bool asleep = queued_wait_until(queued_all_asleep, s);
	CHECK(asleep);
	return asleep && !check_failures;
}

/* Lets every waiter through and joins them. */
static inline void queued_finish(struct queued_set *s)
{
	for (int m = 0; m < s->mutexes; m++)
		CHECK_EQ(pthread_mutex_unlock(&s->mutex[m].mutex), 0);
	for (int m = 0; m < s->mutexes; m++) {
		for (int w = 0; w < s->waiters; w++)
			CHECK_EQ(pthread_join(s->waiter[m][w].thread, NULL), 0);
		CHECK_EQ(s->mutex[m].acquired, s->waiters);
	}
}

#endif
