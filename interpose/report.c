/* interpose/report.c — the schedule of the reports; see report.h. */
#include "report.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "report_sink.h"
#include "stats.h"

uint64_t report_interval_ns;
_Atomic uint64_t report_due_ns;

/* Kernel tid of the guard's holder, 0 when free. */
static _Atomic pid_t guard;
/* Under the guard: the start of the period the next report covers, and
 * whether fork reset the counters since the previous report. */
static uint64_t period_start_ns;
static bool forked;

bool report_guard_try(void)
{
	pid_t none = 0;
	/* Acquire: pairs with the release in report_guard_release(), so the
	 * holder sees what the previous one left (totals, period). */
	return atomic_compare_exchange_strong_explicit(&guard, &none, thread_tid(),
						       memory_order_acquire,
						       memory_order_relaxed);
}

void report_guard_wait(void)
{
	while (!report_guard_try())
		sched_yield();
}

void report_guard_release(void)
{
	/* Release: pairs with the acquire in report_guard_try(). */
	atomic_store_explicit(&guard, 0, memory_order_release);
}

void report_init(unsigned interval_s)
{
	period_start_ns = cna_now_ns();
	if (interval_s == 0 || !instrument_enabled)
		return;
	report_interval_ns = (uint64_t)interval_s * 1000000000u;
	atomic_store_explicit(&report_due_ns, period_start_ns + report_interval_ns,
			      memory_order_relaxed);
}

/* Under the guard. */
static void write_report(uint64_t now_ns, bool final)
{
	if (forked) {
		stats_forget_previous();
		profile_forget_previous();
		forked = false;
	}
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	struct report_stamp stamp = {
		.pid = getpid(),
		.time_s = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9,
		.interval_s = (double)(now_ns - period_start_ns) / 1e9,
		.final = final,
	};
	period_start_ns = now_ns;
	report_sink_begin();
	stats_report(&stamp);
	profile_report(&stamp);
	report_sink_end();
}

__attribute__((noinline, cold)) void report_if_due(uint64_t now_ns)
{
	if (!report_guard_try())
		return;
	/* Again under the guard: another thread may have just written it. */
	if (now_ns >= atomic_load_explicit(&report_due_ns, memory_order_relaxed)) {
		atomic_store_explicit(&report_due_ns, now_ns + report_interval_ns,
				      memory_order_relaxed);
		write_report(now_ns, false);
	}
	report_guard_release();
}

void report_at_exit(void)
{
	if (!instrument_enabled)
		return;
	/* exit() from a signal handler that interrupted this thread's report */
	if (atomic_load_explicit(&guard, memory_order_relaxed) == thread_tid())
		return;
	report_guard_wait();
	write_report(cna_now_ns(), true);
	report_guard_release();
}

/* Only the forking thread is here: a guard holder in the parent is not. */
void report_reset_after_fork(void)
{
	/* Without statistics or profile no report is ever written: touch
	 * nothing, since every page the child writes costs it a fault. */
	if (!instrument_enabled)
		return;
	atomic_store_explicit(&guard, 0, memory_order_relaxed);
	forked = true;
	period_start_ns = cna_now_ns();
	if (report_interval_ns)
		atomic_store_explicit(&report_due_ns, period_start_ns + report_interval_ns,
				      memory_order_relaxed);
}
