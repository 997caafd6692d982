/* interpose/spin_credit.h — how long this thread spins before it sleeps.
 *
 * Spinning pays only while the thread it waits for is running.  With more
 * runnable threads than CPUs the holder is often preempted, every spin runs
 * its whole budget and burns the CPU the holder needs.  So each thread
 * keeps, per kind of wait, a shift applied to the configured budget: a wait
 * that had to sleep halves the next spin (down to 1/2^SPIN_SHIFT_MAX of
 * it), a spin that succeeded doubles it back.  Per thread, so nothing
 * shared is written; zero-initialised TLS means "full budget".
 */
#ifndef INTERPOSE_SPIN_CREDIT_H
#define INTERPOSE_SPIN_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

#define SPIN_SHIFT_MAX 6

enum spin_kind {
	SPIN_BEFORE_QUEUE,     /* a newcomer on the word, before it queues */
	SPIN_IN_QUEUE,         /* a queued waiter on its node, before it parks */
	SPIN_AS_HEAD,          /* the queue head on the word, before it sleeps */
	SPIN_KINDS,
};

struct spin_credit {
	uint8_t shift[SPIN_KINDS];
};

static inline unsigned spin_credit_budget(const struct spin_credit *c,
					  enum spin_kind kind, unsigned budget)
{
	return budget >> c->shift[kind];
}

/* Waits of this kind have slept so often that the spin is at its floor. */
static inline bool spin_credit_exhausted(const struct spin_credit *c, enum spin_kind kind)
{
	return c->shift[kind] == SPIN_SHIFT_MAX;
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
