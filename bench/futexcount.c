// futexcount: glibc's NORMAL mutex protocol, rebuilt with counters, for
// checking the simulator's glibc (bench/sim/locks.c) against this machine.
// The lock is glibc's: CAS 0 -> 1; else exchange 2 and FUTEX_WAIT(2) until
// the exchange returns 0; unlock: exchange 0 and FUTEX_WAKE(1) if it was 2.
// Two threads (or --threads N) take it in a loop around one shared line,
// as mutexbench --cs-work 0 --noncs-work 0 does, for --duration seconds.
// One line of key=value: operations, changes of owner, how each acquisition
// was won, futex calls and what they returned.  With --timed also the mean
// time of a wake made while another thread was inside FUTEX_WAIT, of other
// wakes, and of a wait that returned EAGAIN; the clock reads and the flags
// that takes change what they measure (ops_per_sec falls), so the counts
// are to be read from a run without it.
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "monotonic.h"

#define MAX_THREADS 64

static _Alignas(64) _Atomic uint32_t word;
static _Alignas(64) uint64_t shared_line;
static _Alignas(64) _Atomic int last_owner = -1;
static _Alignas(64) _Atomic int stop;

struct counts {
	uint64_t ops, by_cas, by_exchange, owner_changes;
	uint64_t waits, waits_eagain, waits_slept, wakes;
	uint64_t wake_in_wait_ns, wakes_in_wait, wake_other_ns, eagain_ns;
} __attribute__((aligned(64)));

static struct counts counts[MAX_THREADS];
/* --timed: each thread's "inside FUTEX_WAIT" flag, on its own line. */
static struct { _Alignas(64) _Atomic int in_wait; } waiting[MAX_THREADS];
static bool timed;
static int nthreads = 2;

static bool another_in_wait(int self)
{
	for (int i = 0; i < nthreads; i++)
		if (i != self && atomic_load_explicit(&waiting[i].in_wait, memory_order_relaxed))
			return true;
	return false;
}

static long futex(int op, uint32_t value)
{
	return syscall(SYS_futex, &word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

static void wait_for_word(struct counts *c, int self)
{
	c->waits++;
	uint64_t start = 0;
	if (timed) {
		atomic_store_explicit(&waiting[self].in_wait, 1, memory_order_relaxed);
		start = now_ns();
	}
	long rc = futex(FUTEX_WAIT, 2);
	uint64_t took = timed ? now_ns() - start : 0;
	if (timed)
		atomic_store_explicit(&waiting[self].in_wait, 0, memory_order_relaxed);
	if (rc == 0) {
		c->waits_slept++;
	} else if (errno == EAGAIN) {
		c->waits_eagain++;
		c->eagain_ns += took;
	}
}

static void lock(struct counts *c, int self)
{
	uint32_t expected = 0;
	// Acquire: pairs with the release exchange in unlock().
	if (atomic_compare_exchange_strong_explicit(&word, &expected, 1, memory_order_acquire,
						    memory_order_relaxed)) {
		c->by_cas++;
		return;
	}
	if (atomic_load_explicit(&word, memory_order_relaxed) == 2)
		wait_for_word(c, self);
	// Acquire: pairs with the release exchange in unlock().
	while (atomic_exchange_explicit(&word, 2, memory_order_acquire) != 0)
		wait_for_word(c, self);
	c->by_exchange++;
}

static void unlock(struct counts *c, int self)
{
	// Release: pairs with the acquire CAS/exchange in lock().
	if (atomic_exchange_explicit(&word, 0, memory_order_release) < 2)
		return;
	c->wakes++;
	if (!timed) {
		futex(FUTEX_WAKE, 1);
		return;
	}
	bool other_in_wait = another_in_wait(self);
	uint64_t start = now_ns();
	futex(FUTEX_WAKE, 1);
	uint64_t took = now_ns() - start;
	if (other_in_wait) {
		c->wakes_in_wait++;
		c->wake_in_wait_ns += took;
	} else {
		c->wake_other_ns += took;
	}
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct counts *c = &counts[id];
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		lock(c, id);
		shared_line++;
		if (atomic_load_explicit(&last_owner, memory_order_relaxed) != id) {
			c->owner_changes++;
			atomic_store_explicit(&last_owner, id, memory_order_relaxed);
		}
		unlock(c, id);
		c->ops++;
	}
	return NULL;
}

static double mean(uint64_t total, uint64_t n)
{
	return n ? (double)total / (double)n : 0;
}

int main(int argc, char **argv)
{
	int threads = 2;
	double seconds = 1.0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timed"))
			timed = true;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else
			threads = 0;
	}
	if (threads < 1 || threads > MAX_THREADS || !(seconds > 0)) {
		fprintf(stderr, "usage: futexcount [--threads 1-%d] [--duration S] [--timed]\n",
			MAX_THREADS);
		return 2;
	}
	nthreads = threads;
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	struct counts sum = { 0 };
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		const struct counts *c = &counts[i];
		sum.ops += c->ops, sum.by_cas += c->by_cas, sum.by_exchange += c->by_exchange;
		sum.owner_changes += c->owner_changes, sum.waits += c->waits;
		sum.waits_eagain += c->waits_eagain, sum.waits_slept += c->waits_slept;
		sum.wakes += c->wakes, sum.wakes_in_wait += c->wakes_in_wait;
		sum.wake_in_wait_ns += c->wake_in_wait_ns, sum.wake_other_ns += c->wake_other_ns;
		sum.eagain_ns += c->eagain_ns;
	}
	printf("threads=%d seconds=%.3f ops=%llu ops_per_sec=%.0f owner_changes=%llu "
	       "ops_per_owner_change=%.1f by_cas=%llu by_exchange=%llu waits=%llu "
	       "waits_eagain=%llu waits_slept=%llu wakes=%llu wake_in_wait_ns=%.0f "
	       "wake_other_ns=%.0f wait_eagain_ns=%.0f timed=%d\n",
	       threads, seconds, (unsigned long long)sum.ops, (double)sum.ops / seconds,
	       (unsigned long long)sum.owner_changes, mean(sum.ops, sum.owner_changes),
	       (unsigned long long)sum.by_cas, (unsigned long long)sum.by_exchange,
	       (unsigned long long)sum.waits, (unsigned long long)sum.waits_eagain,
	       (unsigned long long)sum.waits_slept, (unsigned long long)sum.wakes,
	       mean(sum.wake_in_wait_ns, sum.wakes_in_wait),
	       mean(sum.wake_other_ns, sum.wakes - sum.wakes_in_wait),
	       mean(sum.eagain_ns, sum.waits_eagain), timed);
	return 0;
}
