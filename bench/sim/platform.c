/* bench/sim/platform.c — cna/platform.h's hooks for simulated threads.
 *
 * The library's code, built with -DCNA_SIMULATED, calls these instead of
 * the CPU and the OS: a pause or a yield is an event on the modelled CPU,
 * the clock is the simulated thread's, the CPU is the modelled one (CPUs
 * numbered so that CNAMUTEX_TOPOLOGY=nodes=S gives each its socket), and
 * thread_self() is the simulated thread's own library state.  Every atomic
 * access comes through sim_atomic_point() (shadow/stdatomic.h).
 */
#include "engine.h"
#include "platform.h"

#include <stdatomic.h>

/* Simulated time starts here, so that no clock reads as 0 ("never"). */
#define CLOCK_ORIGIN_NS 1000000000ull

_Bool sim_atomic_point(const volatile void *address, enum sim_access kind)
{
	struct sim *s = sim_active;
	struct sim_thread *t = s ? s->current : NULL;
	if (!t)
		return 0;              /* set-up outside any simulated thread */
	if (kind != SIM_LOAD && kind != SIM_STORE)
		sim_drain_stores(t);
	uint64_t cost = sim_line_access(t, address, kind != SIM_LOAD);
	if (kind == SIM_STORE) {
		/* Into the store buffer (engine.h): visible once the line is
		 * here, and after the stores before it. */
		if (t->now + cost > t->stores_done)
			t->stores_done = t->now + cost;
		cost = s->machine.hit_ns;
	} else if (kind != SIM_LOAD) {
		cost += s->machine.atomic_ns;
	}
	t->now += cost;
	sim_point(t);
	return kind == SIM_CAS_WEAK && s->chaos.weak_cas_fail_one_in &&
	       sim_random(&s->rng) % s->chaos.weak_cas_fail_one_in == 0;
}

void cpu_relax(void)
{
	struct sim_thread *t = sim_self();
	t->now += sim_active->machine.pause_ns;
	sim_point(t);
}

/*
 * The round-by-round spin of cna/platform.h, fast-forwarded: one poll,
 * then no events until the line is written (since just before the poll)
 * or the rounds left have passed (or the time slice ends), then the next
 * poll.  Each round costs a pause and a hit on the line, as polling it
 * would; a spin that is preempted counts the time it did not run as
 * rounds, so it ends no later than the real loop would in the same span of
 * time.  Round by round, the queued waiters' long spins (contended.c) made
 * a full scripts/simulate take 46 minutes here.
 */
uint32_t platform_spin_while(_Atomic uint32_t *word, uint32_t value, unsigned rounds)
{
	struct sim_thread *t = sim_self();
	const struct sim_machine *m = &sim_active->machine;
	uint64_t round_ns = m->pause_ns + m->hit_ns;
	if (!round_ns)
		round_ns = 1;
	uint64_t left = rounds;
	while (left) {
		sim_spin_arm(t, word);
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
		if (seen != value) {
			t->watching = 0;
			return seen;
		}
		left--;
		uint64_t before = t->now;
		sim_spin_until_written(t, word, left * round_ns);
		uint64_t passed = (t->now - before) / round_ns;
		left = passed < left ? left - passed : 0;
	}
	return value;
}

void platform_yield(void)
{
	sim_yield(sim_self());
}

uint64_t platform_now_ns(void)
{
	return CLOCK_ORIGIN_NS + sim_self()->now;
}

int platform_current_cpu(void)
{
	const struct sim_machine *m = &sim_active->machine;
	unsigned cpu = sim_self()->cpu;
	unsigned socket = sim_machine_socket(m, cpu);
	unsigned index_in_socket = sim_machine_core(m, cpu) % m->cores_per_socket +
		cpu / (m->sockets * m->cores_per_socket) * m->cores_per_socket;
	return (int)(index_in_socket * m->sockets + socket);
}

pid_t platform_gettid(void)
{
	return (pid_t)(100000 + sim_self()->id);
}

pid_t platform_getpid(void)
{
	return 100000;   /* one process */
}

struct cnamutex_thread *platform_thread_state(void)
{
	return &sim_self()->lib;
}
