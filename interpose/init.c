/* interpose/init.c — load-time set-up, fork handling and the exit report. */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "contended.h"
#include "cpu_batch.h"
#include "queue_table.h"
#include "profile.h"
#include "real.h"
#include "report.h"
#include "report_sink.h"
#include "stats.h"
#include "thread.h"
#include "topology.h"
#include "tunables.h"

static struct tunables settings;

/* The CPUs this process may run on; the online count if the mask is unknown. */
static unsigned usable_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1u;
}

static bool numa_aware(enum numa_mode mode)
{
	switch (mode) {
	case NUMA_ON:
		return true;
	case NUMA_OFF:
		return false;
	case NUMA_AUTO:
		break;
	}
	return topology_nodes() >= 2;
}

/*
 * Only the forking thread exists in the child: no other waiter does.  Every
 * page the child touches costs it a fault, code pages too: this handler and
 * the resets it calls are cold, so the linker keeps them together, and each
 * reset touches only the records the parent used.
 */
__attribute__((cold)) static void after_fork_in_child(void)
{
	queue_table_reset_after_fork();
	thread_reset_after_fork();
	stats_reset_after_fork();
	profile_reset_after_fork();
	report_reset_after_fork();
}

__attribute__((constructor)) static void cnamutex_load(void)
{
	real_resolve_all();
	/* First, so that the other tunables' complaints go to the log file. */
	int log_fd = report_sink_load();
	tunable_complaints_to(log_fd);
	queue_table_init();
	tunables_load(&settings);
	topology_load();
	tunable_complaints_to(-1);
	if (log_fd >= 0)
		close(log_fd);
	cnamutex_params.numa_aware = numa_aware(settings.numa);
	cnamutex_params.threshold_ns = (uint64_t)settings.threshold_ms * 1000000u;
	cnamutex_params.shuffle_bits = settings.shuffle_bits;
	cnamutex_params.spin_budget = settings.spin;
	contended_cpu_batch_ns = (uint64_t)settings.cpu_batch_us * 1000u;
	cpu_batch_mode = settings.cpu_batch;
	contended_cpus = usable_cpus();
	stats_init(settings.stats);
	profile_init(settings.profile);
	report_init(settings.report_interval_s);
	/* A lock taken before this (by another library's constructor) gave
	 * this thread a fast path that may not count what is now counted. */
	cnamutex_self.fast_tid = 0;
	pthread_atfork(NULL, NULL, after_fork_in_child);
}

__attribute__((destructor)) static void cnamutex_unload(void)
{
	report_at_exit();
}
