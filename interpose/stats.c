/* interpose/stats.c — registry of per-thread counter blocks and the exit line. */
#include "stats.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static void thread_exit(void *arg)
{
	struct stats_block *block = arg;
	fold(&retired, block);
	unregister(block);
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

void stats_report(void)
{
	if (!stats_enabled)
		return;
	struct stats_block total;
	memset(&total, 0, sizeof total);
	fold(&total, &retired);
	for (unsigned i = 0, high = registry_high(); i < high; i++) {
		struct stats_block *b = atomic_load_explicit(&registry[i], memory_order_relaxed);
		if (b)
			fold(&total, b);
	}
	uint64_t slow = total.acquisitions_slow;
	uint64_t waits = total.acquisitions_spun + slow + total.acquisitions_timed +
			 total.acquisitions_word + total.queue_fallbacks;
	char line[1024];
	int n = snprintf(line, sizeof line,
			 "cnamutex: stats acquisitions_fast=%llu acquisitions_spun=%llu acquisitions_slow=%llu"
			 " acquisitions_timed=%llu acquisitions_word=%llu queue_fallbacks=%llu"
			 " transfers_local=%llu transfers_remote=%llu transfers_unknown=%llu"
			 " handoffs_local=%llu handoffs_remote=%llu secondary_moves=%llu"
			 " flushes=%llu parks=%llu requeues=%llu wait_max_us=%llu wait_mean_us=%.1f"
			 " secondary_wait_max_us=%llu\n",
			 (unsigned long long)total.acquisitions_fast,
			 (unsigned long long)total.acquisitions_spun,
			 (unsigned long long)slow,
			 (unsigned long long)total.acquisitions_timed,
			 (unsigned long long)total.acquisitions_word,
			 (unsigned long long)total.queue_fallbacks,
			 (unsigned long long)total.transfers_local,
			 (unsigned long long)total.transfers_remote,
			 (unsigned long long)total.transfers_unknown,
			 (unsigned long long)total.handoffs_local,
			 (unsigned long long)total.handoffs_remote,
			 (unsigned long long)total.secondary_moves,
			 (unsigned long long)total.flushes,
			 (unsigned long long)total.parks,
			 (unsigned long long)total.requeues,
			 (unsigned long long)(total.wait_max_ns / 1000),
			 waits ? (double)total.wait_total_ns / 1000.0 / (double)waits : 0.0,
			 (unsigned long long)(total.secondary_wait_max_ns / 1000));
	if (n > 0) {
		ssize_t ignored = write(STDERR_FILENO, line,
					(size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
		(void)ignored;
	}
}
