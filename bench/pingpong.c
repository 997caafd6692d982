// pingpong: the cost of moving one cache line between two CPUs, the probe
// recorded beside every benchmark.  Two threads, pinned to two CPUs, pass a
// token back and forth through one line; a round trip is two transfers of
// it.  On a VM whose host moves its virtual CPUs this changes within
// minutes (here about 110 ns at times, 420-550 ns at others), and which
// lock wins changes with it.
//
// Prints: pingpong cpus=A,B round_trip_ns=N (the median of 9 batches).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUND_TRIPS 20000
#define BATCHES 9

static _Alignas(64) _Atomic uint64_t token;
static int cpus[2] = { 0, 1 };

static int pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// The responder: turns every odd value into the next even one.  Acquire
// pairs with the pinger's release store, and its release with the pinger's
// acquire load: each hop carries the line across.
static void *responder(void *arg)
{
	(void)arg;
	pin(cpus[1]);
	uint64_t last = (uint64_t)ROUND_TRIPS * BATCHES * 2;
	for (uint64_t want = 1; want < last; want += 2) {
		while (atomic_load_explicit(&token, memory_order_acquire) != want)
			;
		atomic_store_explicit(&token, want + 1, memory_order_release);
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		cpus[0] = atoi(argv[1]);
		cpus[1] = atoi(argv[2]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: pingpong [CPU_A CPU_B]\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("pingpong cpus=%d,%d round_trip_ns=nan\n", cpus[0], cpus[1]);
		return 0;
	}
	int err = pin(cpus[0]);
	if (err) {
		fprintf(stderr, "pingpong: cannot run on CPU %d: %s\n", cpus[0], strerror(err));
		return 2;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, responder, NULL) != 0)
		return 2;
	double batch_ns[BATCHES];
	uint64_t next = 0;
	for (int b = 0; b < BATCHES; b++) {
		uint64_t start = now_ns();
		for (int i = 0; i < ROUND_TRIPS; i++, next += 2) {
			atomic_store_explicit(&token, next + 1, memory_order_release);
			while (atomic_load_explicit(&token, memory_order_acquire) != next + 2)
				;
		}
		batch_ns[b] = (double)(now_ns() - start) / ROUND_TRIPS;
	}
	pthread_join(t, NULL);
	qsort(batch_ns, BATCHES, sizeof batch_ns[0], compare);
	printf("pingpong cpus=%d,%d round_trip_ns=%.0f\n", cpus[0], cpus[1], batch_ns[BATCHES / 2]);
	return 0;
}
