/* interpose/stats.c — registry of per-thread counter blocks and the stats line. */
#include "stats.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "report_sink.h"
#include "thread.h"

#define STATS_REGISTRY_SLOTS 4096

bool stats_enabled;
static pthread_key_t stats_key;
static _Atomic(struct stats_block *) registry[STATS_REGISTRY_SLOTS];
/* One past the highest slot ever claimed: slots are claimed lowest first,
 * so the slots in use, and the pages of the registry ever written, are
 * below it.  Raised before the claim, which a fork may catch in between. */
static _Atomic unsigned slots_high;
static struct stats_block retired;   /* blocks of threads that have exited */

/* The counters as a report reads them. */
struct stats_totals {
#define STAT(name, how) uint64_t name;
#include "stats_list.h"
#undef STAT
};

/* The SUM counters at the previous report (under the report guard). */
static struct stats_totals previous;

void stats_add(_Atomic uint64_t *counter, uint64_t n)
{
	uint64_t v = atomic_load_explicit(counter, memory_order_relaxed);
	atomic_store_explicit(counter, v + n, memory_order_relaxed);
}

void stats_max(_Atomic uint64_t *counter, uint64_t value)
{
	if (value > atomic_load_explicit(counter, memory_order_relaxed))
		atomic_store_explicit(counter, value, memory_order_relaxed);
}

/* Fold src into dst with atomic RMWs: dst may be shared by exiting threads. */
static void fold(struct stats_block *dst, struct stats_block *src)
{
#define SUM(d, s) atomic_fetch_add_explicit(d, s, memory_order_relaxed)
#define MAX(d, s)                                                              \
	do {                                                                   \
		uint64_t cur = atomic_load_explicit(d, memory_order_relaxed);  \
		while (s > cur && !atomic_compare_exchange_weak_explicit(      \
			       d, &cur, s, memory_order_relaxed,               \
			       memory_order_relaxed))                          \
			;                                                      \
	} while (0)
#define STAT(name, how)                                                        \
	{                                                                      \
		uint64_t v = atomic_load_explicit(&src->name, memory_order_relaxed); \
		how(&dst->name, v);                                            \
	}
#include "stats_list.h"
#undef STAT
#undef SUM
#undef MAX
}

static unsigned registry_high(void)
{
	return atomic_load_explicit(&slots_high, memory_order_relaxed);
}

static void unregister(struct stats_block *block)
{
	for (unsigned i = 0, high = registry_high(); i < high; i++) {
		struct stats_block *expected = block;
		if (atomic_compare_exchange_strong_explicit(&registry[i], &expected, NULL,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return;
	}
}

/* Under the guard, so that a report sees the block either in the
 * registry or in retired, and never reads it once its thread is gone. */
static void thread_exit(void *arg)
{
	struct stats_block *block = arg;
	report_guard_wait();
	fold(&retired, block);
	unregister(block);
	report_guard_release();
}

void stats_init(bool enabled)
{
	stats_enabled = enabled;
	if (enabled)
		pthread_key_create(&stats_key, thread_exit);
}

static void raise_high(unsigned high)
{
	unsigned seen = registry_high();
	while (seen < high && !atomic_compare_exchange_weak_explicit(
				      &slots_high, &seen, high, memory_order_relaxed,
				      memory_order_relaxed))
		;
}

struct stats_block *stats_self(void)
{
	struct cnamutex_thread *self = thread_self();
	if (__builtin_expect(!self->stats_registered, 0)) {
		self->stats_registered = true;
		pthread_setspecific(stats_key, &self->stats);
		for (unsigned i = 0; i < STATS_REGISTRY_SLOTS; i++) {
			if (atomic_load_explicit(&registry[i], memory_order_relaxed))
				continue;
			raise_high(i + 1);
			struct stats_block *expected = NULL;
			/* Release: the raised mark is visible before the claim, to
			 * a fork at any moment (read by stats_reset_after_fork()). */
			if (atomic_compare_exchange_strong_explicit(
				    &registry[i], &expected, &self->stats,
				    memory_order_release, memory_order_relaxed))
				break;
		}
		/* No free slot: the block is still folded in when the thread exits. */
	}
	return &self->stats;
}

void stats_reset_after_fork(void)
{
	if (!stats_enabled)
		return;
	struct cnamutex_thread *self = thread_self();
	/* Only the slots below the mark were ever used, and only those in use
	 * are written: the child does not fault in the whole registry. */
	for (unsigned i = 0, high = registry_high(); i < high; i++)
		if (atomic_load_explicit(&registry[i], memory_order_relaxed))
			atomic_store_explicit(&registry[i], NULL, memory_order_relaxed);
	atomic_store_explicit(&slots_high, 0, memory_order_relaxed);
	memset(&retired, 0, sizeof retired);
	memset(&self->stats, 0, sizeof self->stats);
	self->stats_registered = false;
}

/* Add src into t; its MAX counters are taken (swapped to 0). */
static void collect(struct stats_totals *t, struct stats_block *src)
{
#define COLLECT_SUM(name) t->name += atomic_load_explicit(&src->name, memory_order_relaxed)
#define COLLECT_MAX(name)                                                      \
	do {                                                                   \
		uint64_t v = atomic_exchange_explicit(&src->name, 0, memory_order_relaxed); \
		if (v > t->name)                                               \
			t->name = v;                                           \
	} while (0)
#define STAT(name, how) COLLECT_##how(name);
#include "stats_list.h"
#undef STAT
#undef COLLECT_SUM
#undef COLLECT_MAX
}

/* now less the previous report's SUM counters, which become now's.  The
 * totals only grow (the guard keeps exiting threads' blocks from being
 * counted twice); the clamp keeps a surprise from printing 2^64. */
static struct stats_totals since_previous(const struct stats_totals *now)
{
	struct stats_totals d;
#define SINCE_SUM(name)                                                        \
	d.name = now->name >= previous.name ? now->name - previous.name : 0;  \
	previous.name = now->name
#define SINCE_MAX(name) d.name = now->name
#define STAT(name, how) SINCE_##how(name);
#include "stats_list.h"
#undef STAT
#undef SINCE_SUM
#undef SINCE_MAX
	return d;
}

void stats_forget_previous(void)
{
	memset(&previous, 0, sizeof previous);
}

void stats_report(const struct report_stamp *stamp)
{
	if (!stats_enabled)
		return;
	struct stats_totals all;
	memset(&all, 0, sizeof all);
	collect(&all, &retired);
	for (unsigned i = 0, high = registry_high(); i < high; i++) {
		struct stats_block *b = atomic_load_explicit(&registry[i], memory_order_relaxed);
		if (b)
			collect(&all, b);
	}
	struct stats_totals total = since_previous(&all);
	uint64_t slow = total.acquisitions_slow;
	uint64_t waits = total.acquisitions_spun + slow + total.acquisitions_timed +
			 total.acquisitions_word + total.queue_fallbacks;
	char line[1024];
	int n = snprintf(line, sizeof line,
			 "cnamutex: stats acquisitions_fast=%llu acquisitions_spun=%llu acquisitions_slow=%llu"
			 " acquisitions_timed=%llu acquisitions_word=%llu queue_fallbacks=%llu"
			 " handovers=%llu transfers_local=%llu transfers_remote=%llu transfers_unknown=%llu"
			 " handoffs_local=%llu handoffs_remote=%llu secondary_moves=%llu"
			 " flushes=%llu parks=%llu requeues=%llu cpu_batch_on=%llu cpu_batch_off=%llu"
			 " wait_max_us=%llu wait_mean_us=%.1f"
			 " secondary_wait_max_us=%llu pid=%ld time=%.3f interval_s=%.3f final=%d\n",
			 (unsigned long long)total.acquisitions_fast,
			 (unsigned long long)total.acquisitions_spun,
			 (unsigned long long)slow,
			 (unsigned long long)total.acquisitions_timed,
			 (unsigned long long)total.acquisitions_word,
			 (unsigned long long)total.queue_fallbacks,
			 (unsigned long long)total.handovers,
			 (unsigned long long)total.transfers_local,
			 (unsigned long long)total.transfers_remote,
			 (unsigned long long)total.transfers_unknown,
			 (unsigned long long)total.handoffs_local,
			 (unsigned long long)total.handoffs_remote,
			 (unsigned long long)total.secondary_moves,
			 (unsigned long long)total.flushes,
			 (unsigned long long)total.parks,
			 (unsigned long long)total.requeues,
			 (unsigned long long)total.cpu_batch_on,
			 (unsigned long long)total.cpu_batch_off,
			 (unsigned long long)(total.wait_max_ns / 1000),
			 waits ? (double)total.wait_total_ns / 1000.0 / (double)waits : 0.0,
			 (unsigned long long)(total.secondary_wait_max_ns / 1000),
			 (long)stamp->pid, stamp->time_s, stamp->interval_s, (int)stamp->final);
	if (n > 0)
		report_sink_write(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
