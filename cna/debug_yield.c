/* cna/debug_yield.c — random delays at the queue's race windows (testing only).
 *
 * Built with -Ddebug_yield=true: every CNA_INJECT() in cna.c and the shim
 * calls cna_debug_yield(), which now and then yields the CPU, sleeps a few
 * microseconds or spins, so that the interleavings a fast path almost never
 * shows (a node published but not linked, a grant between the exchange and
 * the wake, a head about to park) happen thousands of times per second.
 * The number of delays injected is printed at exit.
 */
#include "cna.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "futex.h"

/* One call in this many does nothing, keeping throughput tolerable. */
#define SKIP_ONE_IN 2u
#define SPIN_ROUNDS_MAX 512u
#define SLEEP_NS_MAX 20000u

static _Atomic unsigned long injected;
static __thread uint32_t yield_prng;

static uint32_t next_random(void)
{
	uint32_t x = yield_prng;
	if (!x)
		x = (uint32_t)(uintptr_t)&yield_prng * 2654435761u | 1u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	yield_prng = x;
	return x;
}

void cna_debug_yield(void)
{
	uint32_t r = next_random();
	if (r % SKIP_ONE_IN == 0)
		return;
	atomic_fetch_add_explicit(&injected, 1, memory_order_relaxed);
	switch ((r >> 8) % 3) {
	case 0:
		sched_yield();
		break;
	case 1: {
		struct timespec ts = { 0, (long)((r >> 12) % SLEEP_NS_MAX) };
		nanosleep(&ts, NULL);
		break;
	}
	default:
		for (unsigned i = (r >> 12) % SPIN_ROUNDS_MAX; i > 0; i--)
			cpu_relax();
		break;
	}
}

__attribute__((destructor)) static void report_injected(void)
{
	unsigned long n = atomic_load_explicit(&injected, memory_order_relaxed);
	if (!n)
		return;
	char line[80];
	int len = snprintf(line, sizeof line, "cnamutex: debug_yield injected=%lu\n", n);
	if (len > 0) {
		ssize_t ignored = write(STDERR_FILENO, line, (size_t)len);
		(void)ignored;
	}
}
