// kernelprobe: what this machine's kernel charges the operations a lock
// makes, for the simulation's 2-CPU model (scripts/simulate --validate).
// One line of key=value, each the median of many samples, in ns:
//   syscall_ns           a syscall that does nothing (getppid)
//   yield_ns             sched_yield() with nothing else runnable on the CPU
//   switch_ns            what a yield to another runnable thread of the same
//                        CPU costs beyond yield_ns (two threads pinned to CPU 0)
//   wake_call_ns         FUTEX_WAKE that wakes a sleeper, as the waker sees it
//   wake_ns              from the wake call to the sleeper (on the other CPU)
//                        running again
//   futex_read_ns        how long after a FUTEX_WAIT is entered the kernel
//                        reads the word: the earliest time after the entry at
//                        which another CPU's store no longer stops the wait
//                        (the model's syscall entry: where a waiter's and a
//                        waker's calls race)
// On a VM these are what the hypervisor makes of them: here a syscall is
// about 1.2 us, not the 0.1-0.3 us of bare metal, so the model's kernel
// costs come from this probe rather than from published figures.
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "monotonic.h"

#define SAMPLES 2001
#define WAKES 401
#define SWITCH_ROUNDS 20000
#define PAUSE_NS 100000

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, by_value);
	return v[n / 2];
}

static long futex(_Atomic uint32_t *word, int op, uint32_t value)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

// Batches of 16 calls, so that the clock's own cost is a sixteenth.
static uint64_t per_call(long (*call)(void))
{
	static uint64_t v[SAMPLES];
	for (size_t i = 0; i < SAMPLES; i++) {
		uint64_t start = now_ns();
		for (int k = 0; k < 16; k++)
			call();
		v[i] = (now_ns() - start) / 16;
	}
	return median(v, SAMPLES);
}

static long do_getppid(void)
{
	return syscall(SYS_getppid);
}

static long do_yield(void)
{
	return sched_yield();
}

// Two threads of CPU 0 yielding to each other: each yield is a switch.
static _Atomic unsigned yields_done;

static void *yielder(void *arg)
{
	(void)arg;
	pin(0);
	for (int i = 0; i < SWITCH_ROUNDS; i++)
		sched_yield();
	atomic_fetch_add_explicit(&yields_done, 1, memory_order_relaxed);
	return NULL;
}

static uint64_t yield_with_switch(void)
{
	pthread_t a, b;
	uint64_t start = now_ns();
	pthread_create(&a, NULL, yielder, NULL);
	pthread_create(&b, NULL, yielder, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return (now_ns() - start) / (2 * SWITCH_ROUNDS);
}

// The sleeper on CPU 1 waits for word to become nonzero; the waker on
// CPU 0 lets it fall asleep, sets the word, wakes it and times the call.
static _Alignas(64) _Atomic uint32_t word;
static _Alignas(64) _Atomic uint64_t woke_at;   // the sleeper's clock once running
static _Atomic uint32_t asleep;                  // the sleeper is about to wait

static void *sleeper(void *arg)
{
	(void)arg;
	pin(1);
	for (int i = 0; i < WAKES; i++) {
		// Release: pairs with the waker's acquire load of asleep.
		atomic_store_explicit(&asleep, 1, memory_order_release);
		while (atomic_load_explicit(&word, memory_order_acquire) == 0)
			futex(&word, FUTEX_WAIT, 0);
		// Release: pairs with the waker's acquire load of woke_at.
		atomic_store_explicit(&woke_at, now_ns(), memory_order_release);
		while (atomic_load_explicit(&word, memory_order_acquire) != 0)
			;   // the waker resets it for the next round
	}
	return NULL;
}

static void wake_costs(uint64_t *call_ns, uint64_t *latency_ns)
{
	static uint64_t calls[WAKES], latencies[WAKES];
	size_t n = 0;
	pthread_t t;
	pin(0);
	pthread_create(&t, NULL, sleeper, NULL);
	for (int i = 0; i < WAKES; i++) {
		// Acquire: pairs with the sleeper's release store of asleep.
		while (!atomic_load_explicit(&asleep, memory_order_acquire))
			;
		atomic_store_explicit(&asleep, 0, memory_order_relaxed);
		atomic_store_explicit(&woke_at, 0, memory_order_relaxed);
		// Long enough for the sleeper to be in the kernel; busy, so that
		// only the sleeper's CPU goes idle, as in a contended lock.
		uint64_t start = now_ns() + PAUSE_NS;
		while (now_ns() < start)
			;
		start = now_ns();
		// Release: pairs with the sleeper's acquire load of word.
		atomic_store_explicit(&word, 1, memory_order_release);
		long woken = futex(&word, FUTEX_WAKE, 1);
		uint64_t end = now_ns();
		uint64_t at;
		// Acquire: pairs with the sleeper's release store of woke_at.
		while (!(at = atomic_load_explicit(&woke_at, memory_order_acquire)))
			;
		if (woken == 1) {   // it was asleep: a real wake
			calls[n] = end - start;
			latencies[n] = at > start ? at - start : 0;
			n++;
		}
		atomic_store_explicit(&word, 0, memory_order_release);
	}
	pthread_join(t, NULL);
	*call_ns = n ? median(calls, n) : 0;
	*latency_ns = n ? median(latencies, n) : 0;
}

// FUTEX_WAIT on CPU 0 entered at a time agreed in advance; CPU 1 changes the
// word delay ns after it (the clocks are one TSC).  If the kernel read it
// before the store, the wait sleeps (and CPU 1 wakes it); else EAGAIN.
#define READ_TRIALS 60
#define READ_STEP_NS 25
#define READ_MAX_NS 3000
#define READ_LEAD_NS 20000
static _Alignas(64) _Atomic uint32_t read_word;
static _Alignas(64) _Atomic uint64_t read_at;      // when CPU 0 enters the call
static _Alignas(64) _Atomic int64_t read_delay;
static _Atomic unsigned read_round, read_round_done, read_quit;

static void *read_changer(void *arg)
{
	(void)arg;
	pin(1);
	for (unsigned round = 1;; round++) {
		// Acquire: pairs with the release store of read_round in main's loop.
		while (atomic_load_explicit(&read_round, memory_order_acquire) < round)
			;
		if (atomic_load_explicit(&read_quit, memory_order_relaxed))
			return NULL;
		uint64_t at = atomic_load_explicit(&read_at, memory_order_relaxed) +
			(uint64_t)atomic_load_explicit(&read_delay, memory_order_relaxed);
		while (now_ns() < at)
			;
		atomic_store_explicit(&read_word, 0, memory_order_relaxed);
		at = now_ns() + PAUSE_NS / 4;   // let a sleeper fall asleep, then wake it
		while (now_ns() < at)
			;
		futex(&read_word, FUTEX_WAKE, 1);
		// Release: pairs with the acquire load before the next round.
		atomic_store_explicit(&read_round_done, round, memory_order_release);
	}
}

// Returns false if no delay up to READ_MAX_NS let the wait sleep.
static bool futex_read_point(uint64_t *read_ns)
{
	pthread_t t;
	unsigned round = 0;
	bool found = false;
	pin(0);
	pthread_create(&t, NULL, read_changer, NULL);
	for (int64_t delay = 0; delay <= READ_MAX_NS && !found; delay += READ_STEP_NS) {
		unsigned slept = 0;
		for (int i = 0; i < READ_TRIALS; i++) {
			// Acquire: pairs with the changer's release of read_round_done.
			while (atomic_load_explicit(&read_round_done, memory_order_acquire) < round)
				;
			atomic_store_explicit(&read_word, 2, memory_order_relaxed);
			atomic_store_explicit(&read_delay, delay, memory_order_relaxed);
			uint64_t at = now_ns() + READ_LEAD_NS;
			atomic_store_explicit(&read_at, at, memory_order_relaxed);
			// Release: publishes the word, the delay and read_at.
			atomic_store_explicit(&read_round, ++round, memory_order_release);
			while (now_ns() < at)
				;
			slept += futex(&read_word, FUTEX_WAIT, 2) == 0;
		}
		if (2 * slept > READ_TRIALS) {
			*read_ns = (uint64_t)delay;
			found = true;
		}
	}
	while (atomic_load_explicit(&read_round_done, memory_order_acquire) < round)
		;
	atomic_store_explicit(&read_quit, 1, memory_order_relaxed);
	atomic_store_explicit(&read_round, ++round, memory_order_release);
	pthread_join(t, NULL);
	return found;
}

int main(void)
{
	uint64_t syscall_ns = per_call(do_getppid);
	uint64_t yield_ns = per_call(do_yield);
	uint64_t switched = yield_with_switch();
	uint64_t call_ns, latency_ns;
	wake_costs(&call_ns, &latency_ns);
	uint64_t read_ns = 0;
	bool read_found = futex_read_point(&read_ns);
	printf("syscall_ns=%llu yield_ns=%llu switch_ns=%llu wake_call_ns=%llu wake_ns=%llu "
	       "futex_read_ns=%llu\n",
	       (unsigned long long)syscall_ns, (unsigned long long)yield_ns,
	       (unsigned long long)(switched > yield_ns ? switched - yield_ns : 0),
	       (unsigned long long)call_ns, (unsigned long long)latency_ns,
	       (unsigned long long)read_ns);
	return call_ns && latency_ns && read_found ? 0 : 1;
}
