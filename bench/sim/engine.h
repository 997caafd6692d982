/* bench/sim/engine.h — simulated threads on a modelled machine.
 *
 * Each simulated thread runs real code on its own stack and has its own
 * clock.  It gives control back to the engine at every event (an atomic
 * access, a futex call, a pause, a yield, a stretch of modelled work); the
 * engine always resumes the running thread with the earliest clock, so
 * events happen in simulated-time order and a run is a pure function of
 * its configuration and seed.  CPUs have run queues and time slices (a
 * simplified EEVDF: the least-served runnable thread runs next, for one base
 * slice), so more threads than CPUs is modelled, not assumed away.  Cache lines are modelled in lines.c, futexes
 * in futex.c.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "machine.h"
#include "thread.h"          /* the library's per-thread state */

enum sim_thread_state { SIM_RUNNING, SIM_READY, SIM_BLOCKED, SIM_DONE };

/* Schedule perturbations of the explorer (all zero: the plain model). */
struct sim_chaos {
	unsigned delay_one_in;        /* a random delay at 1 in N events */
	uint64_t delay_max_ns;
	unsigned preempt_one_in;      /* a long delay (a preemption) at 1 in N */
	uint64_t preempt_max_ns;
	unsigned spurious_one_in;     /* a futex wait returns at once, 1 in N */
	unsigned weak_cas_fail_one_in;
	bool random_wake_order;       /* FUTEX_WAKE picks any waiter, not the oldest */
};

struct sim_thread {
	struct cnamutex_thread lib;   /* thread_self() of the library's code */
	unsigned id;
	uint64_t now;                 /* this thread's clock, ns */
	uint64_t stores_done;         /* its plain stores are all visible then */
	unsigned cpu;
	enum sim_thread_state state;
	uint64_t ready_at;            /* READY: runnable from then on */
	uint64_t vruntime, ran_since;
	unsigned heap_slot;
	/* futex.c: the word slept on and the next sleeper of it */
	const void *futex_word;
	struct sim_thread *futex_next;
	void *stack;
	void *sp;                     /* saved stack pointer (fiber.c) */
	void (*body)(struct sim_thread *, void *);
	void *arg;
	uint32_t rng;
	uint64_t events;
	uintptr_t watching;           /* the line sim_spin_until_written() waits on */
	bool written;                 /* ... was written since sim_spin_arm() */
};

/*
 * x86-TSO's store buffer: a plain store (any order but seq_cst, which
 * compiles to a locked exchange) retires into the buffer, and the CPU runs
 * on while its line is fetched; the store becomes visible when the line
 * arrives (lines.c), in program order.  A locked instruction, a system
 * call or a yield waits for the buffer to drain (Intel SDM vol. 3A,
 * "Memory Ordering in P6 and More Recent Processor Families" and "Store
 * Buffer").  Without it a store stalled its thread for the whole transfer,
 * as if it were a locked instruction.
 */
static inline void sim_drain_stores(struct sim_thread *t)
{
	if (t->stores_done > t->now)
		t->now = t->stores_done;
}

struct sim_cpu {
	struct sim_thread *current;   /* NULL: idle */
	struct sim_thread **rq;       /* READY threads */
	unsigned rq_len;
	uint64_t idle_since;
};

struct sim {
	struct sim_machine machine;
	struct sim_chaos chaos;
	uint64_t lag_ns;              /* a hit may run this far ahead without a switch */
	unsigned nthreads, ncpus;
	struct sim_thread *threads;
	struct sim_cpu *cpus;
	struct sim_thread **heap;     /* RUNNING threads but the current one */
	unsigned heap_len;
	struct sim_thread *current;
	uint32_t rng;
	uint64_t events;
	uint64_t trace_hash;          /* of every event's thread and time: replay check */
	uint64_t time_limit_ns;       /* a run longer than this is a livelock */
	const char *failure;          /* set by a check; stops the run */
	/* called after every event with the engine's own state checked */
	void (*check)(struct sim *, void *);
	void *check_arg;
};

/* The engine of the running simulation (one at a time per process). */
extern struct sim *sim_active;

bool sim_create(struct sim *s, const struct sim_machine *m, unsigned threads,
		uint32_t seed);
void sim_destroy(struct sim *s);
/* Thread i runs body(thread, arg), starting on CPU cpu at time 0. */
void sim_spawn(struct sim *s, unsigned i, unsigned cpu,
	       void (*body)(struct sim_thread *, void *), void *arg);
/* Run until every thread returned; false (with s->failure) if one could not. */
bool sim_run(struct sim *s);

/* For simulated threads. */
static inline struct sim_thread *sim_self(void) { return sim_active->current; }
/* An event: give the CPU to an earlier thread if there is one. */
void sim_point(struct sim_thread *t);
/* Modelled work of ns on the current CPU (preemptible). */
void sim_work(struct sim_thread *t, uint64_t ns);
/* The kernel side: block until sim_wake(); wake; sched_yield(). */
void sim_block(struct sim_thread *t);
void sim_wake(struct sim_thread *waker, struct sim_thread *t);
void sim_yield(struct sim_thread *t);
void sim_spin_until_written(struct sim_thread *t, const volatile void *address,
			    uint64_t max_ns);
/* Watch address's line from now on, before the poll that precedes
 * sim_spin_until_written(), so that a write between the two is not lost. */
void sim_spin_arm(struct sim_thread *t, const volatile void *address);
/* lines.c calls this on every write that moves a line. */
void sim_line_written(struct sim_thread *writer, const volatile void *address);
uint32_t sim_random(uint32_t *state);
/* A kernel cost of ns for thread t, varied by the machine's kernel jitter. */
uint64_t sim_kernel_ns(struct sim_thread *t, uint64_t ns);
/* The current thread's socket. */
unsigned sim_thread_socket(const struct sim_thread *t);

/* lines.c: charge an access of kind to the line of address. */
void sim_lines_reset(void);
uint64_t sim_line_access(struct sim_thread *t, const volatile void *address, bool write);
void sim_line_watch(const volatile void *address);

/* futex.c: the run's futex calls, for --stats (perf stat counts the same
 * on a real run: syscalls:sys_enter_futex). */
struct sim_futex_counts {
	uint64_t waits, waits_changed, wakes, woken, requeues;
};
extern struct sim_futex_counts sim_futex_counts;

/* fiber.c */
void sim_fiber_init(struct sim_thread *t, void (*entry)(void));
void sim_fiber_switch(void **save_sp, void *next_sp);

#endif
