// bench/cpu_time.h — the process's CPU time, for the benchmarks' cpu_use:
// CPU seconds per wall-clock second, so a lock that idles CPUs shows it.
#ifndef BENCH_CPU_TIME_H
#define BENCH_CPU_TIME_H

#include <sys/resource.h>

// User and system CPU time of the whole process so far, in seconds.
static inline double process_cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

#endif
