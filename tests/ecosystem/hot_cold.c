/* tests/ecosystem/hot_cold.c — one hot mutex and several cold ones, for the profile.
 *
 * Prints "hot <address>" on stdout.  Two threads take turns on the hot
 * mutex from hot_path_worker, HOT_ROUNDS times each; two others take turns
 * on each cold mutex from cold_path_worker, COLD_ROUNDS times each.  Taking
 * turns makes nearly every acquisition contended, so the profile must rank
 * the hot mutex first, name hot_path_worker as its call site, and list the
 * cold ones after it.
 *
 *   hot_cold [hot_rounds]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

#define COLD_MUTEXES 6
#define COLD_ROUNDS 5
#define WAIT_ROUNDS 1000

/* A mutex two threads take turns on.  The atomics are heuristics for the
 * turn-taking only (the mutex orders the data), so relaxed is enough. */
struct duel {
	pthread_mutex_t mutex;
	atomic_int arriving;    /* threads between "about to lock" and owning */
	atomic_int last_owner;
	atomic_int finished;    /* threads done with this mutex */
	unsigned long counter;
};

static struct duel hot = { .mutex = PTHREAD_MUTEX_INITIALIZER, .last_owner = -1 };
static struct duel cold[COLD_MUTEXES];
static unsigned long hot_rounds = 2000;
static pthread_barrier_t start;

static void arrive(struct duel *d)
{
	atomic_fetch_add_explicit(&d->arriving, 1, memory_order_relaxed);
}

/* Yield until the other thread is arriving (want_arrival) or has taken
 * the mutex since me had it; bounded, and over once the other finished. */
static void wait_for_other(struct duel *d, int me, int want_arrival)
{
	for (int round = 0; round < WAIT_ROUNDS; round++) {
		if (atomic_load_explicit(&d->finished, memory_order_relaxed))
			return;
		if (want_arrival ? atomic_load_explicit(&d->arriving, memory_order_relaxed) != 0
				 : atomic_load_explicit(&d->last_owner, memory_order_relaxed) != me)
			return;
		sched_yield();
	}
}

/* Owner's part of a turn: hold on until the other comes, then work. */
static void hold(struct duel *d, int me)
{
	atomic_fetch_sub_explicit(&d->arriving, 1, memory_order_relaxed);
	atomic_store_explicit(&d->last_owner, me, memory_order_relaxed);
	wait_for_other(d, me, 1);
	for (int i = 0; i < 50; i++)
		((volatile unsigned long *)&d->counter)[0]++;
}

/* After unlocking: let the other have it before coming back. */
static void step_back(struct duel *d, int me)
{
	wait_for_other(d, me, 0);
}

void *hot_path_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < hot_rounds; i++) {
		arrive(&hot);
		pthread_mutex_lock(&hot.mutex);
		hold(&hot, me);
		pthread_mutex_unlock(&hot.mutex);
		step_back(&hot, me);
	}
	atomic_fetch_add_explicit(&hot.finished, 1, memory_order_relaxed);
	return NULL;
}

void *cold_path_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	pthread_barrier_wait(&start);
	for (int c = 0; c < COLD_MUTEXES; c++) {
		for (int i = 0; i < COLD_ROUNDS; i++) {
			arrive(&cold[c]);
			pthread_mutex_lock(&cold[c].mutex);
			hold(&cold[c], me);
			pthread_mutex_unlock(&cold[c].mutex);
			step_back(&cold[c], me);
		}
		atomic_fetch_add_explicit(&cold[c].finished, 1, memory_order_relaxed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	check_running_under_shim();
	if (argc > 1)
		hot_rounds = strtoul(argv[1], NULL, 10);
	for (int c = 0; c < COLD_MUTEXES; c++) {
		CHECK_EQ(pthread_mutex_init(&cold[c].mutex, NULL), 0);
		atomic_init(&cold[c].last_owner, -1);
	}
	printf("hot %p\n", (void *)&hot.mutex);
	fflush(stdout);

	pthread_t threads[4];
	CHECK_EQ(pthread_barrier_init(&start, NULL, 4), 0);
	for (int t = 0; t < 4; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, t < 2 ? hot_path_worker : cold_path_worker,
					(void *)(intptr_t)t),
			 0);
	for (int t = 0; t < 4; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	CHECK_EQ(hot.counter, 50ul * 2 * hot_rounds);
	for (int c = 0; c < COLD_MUTEXES; c++)
		CHECK_EQ(cold[c].counter, 50ul * 2 * COLD_ROUNDS);
	return check_report("hot_cold");
}
