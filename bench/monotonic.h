// bench/monotonic.h — the benchmarks' clock: CLOCK_MONOTONIC in nanoseconds.
#ifndef BENCH_MONOTONIC_H
#define BENCH_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
