/* cna/platform.h — the lock's few calls to the CPU and the OS, in one place.
 *
 * Normally each is the real call.  Built with -DCNA_SIMULATED (bench/sim)
 * each is a hook of the simulator, which runs the library's own contended
 * code in simulated threads: then a pause, a yield, the clock, the CPU
 * query and the tid are the simulated thread's.  Library code calls these
 * (and the futex wrappers of futex.h), never sched_yield(), clock_gettime(),
 * sched_getcpu(), gettid() or a pause instruction directly, so that every
 * decision it makes in the simulation is still its own.
 */
#ifndef CNA_PLATFORM_H
#define CNA_PLATFORM_H

#include <stdint.h>
#include <sys/types.h>

#ifdef CNA_SIMULATED

#include <stdatomic.h>

void cpu_relax(void);
void platform_yield(void);
uint64_t platform_now_ns(void);
int platform_current_cpu(void);
pid_t platform_gettid(void);
pid_t platform_getpid(void);
uint32_t platform_spin_while(_Atomic uint32_t *word, uint32_t value, unsigned rounds);

#else

#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* One pause in a spin loop: lets the sibling hyperthread run, saves power. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/*
 * Poll *word, with a pause between polls, while it reads value, for at
 * most rounds polls; return the value last read.  Acquire: the caller's
 * store that ends the spin publishes what the spinner reads next.  (The
 * simulator fast-forwards this spin to the write that ends it.)
 */
static inline uint32_t platform_spin_while(_Atomic uint32_t *word, uint32_t value,
					   unsigned rounds)
{
	for (unsigned i = 0; i < rounds; i++) {
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
		if (seen != value)
			return seen;
		cpu_relax();
	}
	return value;
}

/* Give the CPU to another runnable thread, if any. */
static inline void platform_yield(void)
{
	sched_yield();
}

/* Monotonic clock in nanoseconds. */
static inline uint64_t platform_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int platform_current_cpu(void)
{
	return sched_getcpu();
}

static inline pid_t platform_gettid(void)
{
	return gettid();
}

static inline pid_t platform_getpid(void)
{
	return getpid();
}

#endif
#endif
