/* bench/sim/lines.c — cache lines: who holds each, what moving it costs.
 *
 * Every line a simulated access touches (the lock word, queue nodes and
 * records, the critical section's shared lines) has an owner (the CPU that
 * wrote it last) and a set of sharers.  A read by a CPU that holds no copy
 * fetches it from the owner, a write invalidates every other copy; either
 * costs a transfer by distance (machine.c), the farthest one for a write.
 * Transfers of one line are serialised: a line bouncing between many
 * waiters is a queue, which is what makes a contended word slow.
 */
#include "engine.h"

#include <string.h>

#define LINE_SHIFT 6
#define TABLE_BITS 16
#define CPU_WORDS (SIM_MAX_CPUS / 64)

struct line {
	uintptr_t tag;                /* line address + 1; 0: free slot */
	int owner;                    /* -1: nobody has written it */
	uint64_t sharers[CPU_WORDS];
	uint64_t busy_until;          /* the last transfer of it ends then */
	int giver;                    /* the CPU that transfer takes it from */
	bool watched;                 /* a thread spins on it (sim_spin_until_written) */
};

static struct line table[1u << TABLE_BITS];

void sim_lines_reset(void)
{
	memset(table, 0, sizeof table);
}

static struct line *line_of(uintptr_t address)
{
	uintptr_t tag = (address >> LINE_SHIFT) + 1;
	unsigned mask = (1u << TABLE_BITS) - 1;
	unsigned i = (unsigned)((tag * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS));
	for (;; i = (i + 1) & mask) {
		struct line *l = &table[i];
		if (l->tag == tag)
			return l;
		if (!l->tag) {
			l->tag = tag;
			l->owner = -1;
			l->giver = -1;
			return l;
		}
	}
}

static bool shares(const struct line *l, unsigned cpu)
{
	return l->sharers[cpu / 64] >> (cpu % 64) & 1;
}

/* The farthest copy from cpu among the others (0 if there is none). */
static uint64_t invalidate_cost(const struct sim_machine *m, const struct line *l,
				unsigned cpu, unsigned ncpus)
{
	uint64_t worst = 0;
	for (unsigned w = 0; w < CPU_WORDS && w * 64 < ncpus; w++) {
		for (uint64_t bits = l->sharers[w]; bits; bits &= bits - 1) {
			unsigned other = w * 64 + (unsigned)__builtin_ctzll(bits);
			if (other == cpu)
				continue;
			uint64_t c = sim_machine_xfer_ns(m, other, cpu);
			if (c > worst)
				worst = c;
		}
	}
	return worst;
}

void sim_line_watch(const volatile void *address)
{
	line_of((uintptr_t)address)->watched = true;
}

uint64_t sim_line_access(struct sim_thread *t, const volatile void *address, bool write)
{
	const struct sim_machine *m = &sim_active->machine;
	struct line *l = line_of((uintptr_t)address);
	unsigned cpu = t->cpu;
	uint64_t cost;
	bool alone = l->owner == (int)cpu;
	for (unsigned w = 0; alone && w < CPU_WORDS; w++)
		alone = l->sharers[w] == (w == cpu / 64 ? 1ull << (cpu % 64) : 0);
	/* A write by the CPU the line is on its way from: until the transfer
	 * ends the line is still here, so the write is local and the transfer
	 * carries it along (an unlock right after another CPU's CAS was
	 * issued lands before that CAS, as on the hardware: with this, glibc's
	 * protocol at 2 threads changes owner every 34 operations in the 2c
	 * model, 35-40 measured by bench/futexcount; every one before).  Reads
	 * still wait for the transfer: a waiter must see the store that ends
	 * its spin (sim_spin_until_written()). */
	if (write && t->now < l->busy_until && l->giver == (int)cpu) {
		if (l->watched) {
			l->watched = false;
			sim_line_written(t, address);
		}
		return m->hit_ns;
	}

	if (!write && shares(l, cpu)) {
		cost = m->hit_ns;
	} else if (write && alone) {
		cost = m->hit_ns;
	} else {
		if (write)
			cost = invalidate_cost(m, l, cpu, sim_active->ncpus);
		else if (l->owner >= 0)
			cost = sim_machine_xfer_ns(m, (unsigned)l->owner, cpu);
		else
			cost = invalidate_cost(m, l, cpu, sim_active->ncpus);
		if (!cost)
			cost = m->memory_ns;
		l->giver = write ? l->owner : -1;
		uint64_t start = t->now > l->busy_until ? t->now : l->busy_until;
		l->busy_until = start + cost;
		cost = l->busy_until - t->now;
		if (write) {
			memset(l->sharers, 0, sizeof l->sharers);
			l->owner = (int)cpu;
			if (l->watched) {
				l->watched = false;
				sim_line_written(t, address);
			}
		}
		l->sharers[cpu / 64] |= 1ull << (cpu % 64);
	}
	return cost;
}
