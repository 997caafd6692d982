/* interpose/spin_credit.h — how long this thread spins before it sleeps.
 *
 * Spinning pays only while the thread it waits for is running.  With more
 * runnable threads than CPUs the holder is often preempted, every spin runs
 * its whole budget and burns the CPU the holder needs.  So each thread
 * keeps, per kind of wait, a shift applied to the configured budget: a wait
 * that had to sleep halves the next spin (down to 1/2^SPIN_SHIFT_MAX of
 * it), a spin that succeeded doubles it back.
 *
 * Those shifts learn from each kind of wait alone, and short spins that win
 * keep them at the full budget while the long ones that lose still burn a
 * CPU that runnable threads need.  So the thread also looks, every
 * SPIN_LOOK_PERIOD contended acquisitions, at how often the kernel has
 * preempted it (involuntary context switches, getrusage(RUSAGE_THREAD)):
 * preempted since the last look means the CPUs are oversubscribed, and every
 * kind of spin gets the least budget until a look finds no preemption.
 * With spare CPUs a thread is hardly ever preempted and spins in full.
 *
 * Per thread, so nothing shared is written; zero-initialised TLS means "full
 * budget, not crowded".
 */
#ifndef INTERPOSE_SPIN_CREDIT_H
#define INTERPOSE_SPIN_CREDIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#define SPIN_SHIFT_MAX 6
#define SPIN_LOOK_PERIOD 32

enum spin_kind {
	SPIN_BEFORE_QUEUE,     /* a newcomer on the word, before it queues */
	SPIN_IN_QUEUE,         /* a queued waiter on its node, before it parks */
	SPIN_AS_HEAD,          /* the queue head on the word, before it sleeps */
	SPIN_KINDS,
};

struct spin_credit {
	uint8_t shift[SPIN_KINDS];
	bool crowded;              /* preempted between the last two looks */
	uint8_t since_look;        /* contended acquisitions since the last look */
	long preemptions_seen;     /* involuntary context switches at the last look */
};

static inline unsigned spin_credit_budget(const struct spin_credit *c,
					  enum spin_kind kind, unsigned budget)
{
	return budget >> (c->crowded ? SPIN_SHIFT_MAX : c->shift[kind]);
}

/* What a look found: the thread's involuntary context switches so far. */
static inline void spin_credit_observe(struct spin_credit *c, long preemptions)
{
	c->crowded = preemptions != c->preemptions_seen;
	c->preemptions_seen = preemptions;
}

/* On every contended acquisition: every SPIN_LOOK_PERIOD-th one looks.  A
 * failed getrusage (a sandbox may forbid it) leaves the state as it was. */
static inline void spin_credit_count_contended(struct spin_credit *c)
{
	if (++c->since_look < SPIN_LOOK_PERIOD)
		return;
	c->since_look = 0;
	struct rusage usage;
	if (getrusage(RUSAGE_THREAD, &usage) == 0)
		spin_credit_observe(c, usage.ru_nivcsw);
}

/* Record how a wait of this kind ended: won while spinning, or slept. */
static inline void spin_credit_settle(struct spin_credit *c,
				      enum spin_kind kind, bool slept)
{
	if (slept) {
		if (c->shift[kind] < SPIN_SHIFT_MAX)
			c->shift[kind]++;
	} else if (c->shift[kind] > 0) {
		c->shift[kind]--;
	}
}

#endif
