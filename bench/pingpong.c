// pingpong: the round trip of one cache line between two CPUs.  Two threads
// pinned to CPUs 0 and 1 take turns writing a shared counter (each waits
// for the other's value, then writes the next); the time per round trip of
// the 10th-percentile batch is printed as "pingpong_ns=N": short batches and
// a low percentile leave out the ones in which either thread was preempted
// (on a shared 2-CPU machine most of them can be).  On
// this VM it swings with the host's placement of its vCPUs, so the
// simulation's 2-CPU model takes its transfer cost from this probe.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "monotonic.h"

#define ROUNDS 1000
#define BATCHES 201

static _Alignas(64) _Atomic uint64_t turn;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Odd values are the partner's to answer; it answers with the next even one.
static void *partner(void *arg)
{
	(void)arg;
	pin(1);
	for (uint64_t want = 1; want < 2ull * ROUNDS * BATCHES; want += 2) {
		// Acquire/release: pairs with the main thread's store and load.
		while (atomic_load_explicit(&turn, memory_order_acquire) != want)
			;
		atomic_store_explicit(&turn, want + 1, memory_order_release);
	}
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	pthread_t t;
	pin(0);
	if (pthread_create(&t, NULL, partner, NULL))
		return 1;
	uint64_t per_batch[BATCHES], value = 0;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < ROUNDS; i++) {
			atomic_store_explicit(&turn, ++value, memory_order_release);
			while (atomic_load_explicit(&turn, memory_order_acquire) != value + 1)
				;
			value++;
		}
		per_batch[b] = (now_ns() - t0) / ROUNDS;
	}
	pthread_join(t, NULL);
	qsort(per_batch, BATCHES, sizeof per_batch[0], by_value);
	printf("pingpong_ns=%llu\n", (unsigned long long)per_batch[BATCHES / 10]);
	return 0;
}
