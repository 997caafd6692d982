/* interpose/thread.c — per-thread state and the waiter's node identity. */
#include "thread.h"

#include <sched.h>
#include <stdatomic.h>

#include "../cna/platform.h"
#include "topology.h"

__thread struct cnamutex_thread cnamutex_self __attribute__((tls_model("initial-exec")));

/* Bumped whenever the process changes a scheduling policy through us. */
static _Atomic unsigned sched_epoch = 1;
static _Atomic unsigned next_thread_index;

pid_t thread_fetch_tid(void)
{
	struct cnamutex_thread *self = thread_self();
	self->tid = platform_gettid();
	self->prng = (uint32_t)self->tid * 2654435761u | 1u;
	return self->tid;
}

void thread_sched_changed(void)
{
	atomic_fetch_add_explicit(&sched_epoch, 1, memory_order_relaxed);
}

/* SCHED_FIFO/SCHED_RR waiters are priority waiters: never moved aside.
 * One syscall per policy change, not per acquisition. */
static bool thread_is_priority(struct cnamutex_thread *self)
{
	unsigned epoch = atomic_load_explicit(&sched_epoch, memory_order_relaxed);
	if (self->sched_epoch_seen != epoch) {
		int policy = sched_getscheduler(0);
		self->priority = policy == SCHED_FIFO || policy == SCHED_RR;
		self->sched_epoch_seen = epoch;
	}
	return self->priority;
}

void thread_note_contended(struct cnamutex_thread *self)
{
	if (!self->index_assigned) {
		self->index = atomic_fetch_add_explicit(&next_thread_index, 1,
							memory_order_relaxed);
		self->index_assigned = true;
	}
}

unsigned thread_contenders(void)
{
	return atomic_load_explicit(&next_thread_index, memory_order_relaxed);
}

void thread_prepare_node_on(struct cnamutex_thread *self, int cpu)
{
	self->node.real_node = topology_node_at(self->index, cpu);
	self->node.priority = thread_is_priority(self);
}

void thread_prepare_node(struct cnamutex_thread *self)
{
	self->node.real_node = topology_current_node(self->index);
	self->node.priority = thread_is_priority(self);
}

#ifdef CNA_SIMULATED
void thread_forget_all(void)
{
	atomic_store_explicit(&sched_epoch, 1, memory_order_relaxed);
	atomic_store_explicit(&next_thread_index, 0, memory_order_relaxed);
}
#endif

void thread_reset_after_fork(void)
{
	struct cnamutex_thread *self = thread_self();
	self->tid = 0;
	self->fast_tid = 0;
	self->sched_epoch_seen = 0;
	/* What the parent's waits taught about spinning says nothing of the
	 * child's threads: start again from the full budgets. */
	self->spin = (struct spin_credit){ 0 };
	self->gate_grace = 0;
}
