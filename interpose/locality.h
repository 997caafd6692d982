/* interpose/locality.h — which node last owned a mutex, kept in the mutex.
 *
 * glibc uses a mutex's __list only to chain robust mutexes on their owner's
 * robust list; the kinds the shim takes over (never robust) leave it zero
 * and untouched, whoever locks them.  Its first 32 bits hold, in the low 16,
 * the node of the last owner that took the mutex through the shim's
 * contended path (and, with statistics or the profile on, its fast path),
 * plus one (0: not known yet); and OWNER_STARVING, set by a waiter whose
 * wait has passed the threshold so that the others leave the word to it
 * (word.h), cleared when such a waiter takes the mutex.  (The next 32
 * bits hold the spinner claim of word_spinner.h.)  It
 * sits on the word's cache line, so waiters that watch the word read it for
 * free and the new owner writes a line it already holds.
 *
 * Every contended acquisition is a lock transfer: the previous owner's node
 * against the new owner's.  A transfer is of unknown kind when no owner has
 * recorded a node yet, or when the previous owner took the
 * mutex on the fast path before its first contention gave it a virtual
 * node under CNAMUTEX_TOPOLOGY=threads=N.  An owner that took the mutex
 * inside glibc (a condition wait's relock) records nothing: the transfer
 * after it is judged against the owner before.
 */
#ifndef INTERPOSE_LOCALITY_H
#define INTERPOSE_LOCALITY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glibc_mutex.h"

#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(offsetof(pthread_mutex_t, __data.__list) == 24, "__list offset");
#endif
_Static_assert(sizeof(((pthread_mutex_t *)0)->__data.__list) >= sizeof(uint32_t),
	       "room for the owner's node");

enum transfer_kind { TRANSFER_UNKNOWN, TRANSFER_LOCAL, TRANSFER_REMOTE };

#define OWNER_NODE_UNKNOWN 0u
#define OWNER_NODE_MASK 0xffffu
#define OWNER_STARVING 0x10000u
/* Bits 17-31: the CPU the last owner ran on, plus one (0: not known). */
#define OWNER_CPU_SHIFT 17
#define OWNER_CPU_LIMIT 0x7fffu
#define OWNER_CPU_MASK (OWNER_CPU_LIMIT << OWNER_CPU_SHIFT)

static inline uint32_t owner_cpu_bits(int cpu)
{
	if (cpu < 0 || (unsigned)cpu >= OWNER_CPU_LIMIT)
		return 0;
	return ((uint32_t)cpu + 1u) << OWNER_CPU_SHIFT;
}

static inline _Atomic uint32_t *mutex_owner_slot(pthread_mutex_t *m)
{
	return (_Atomic uint32_t *)(void *)&m->__data.__list;
}

/*
 * The caller now owns m and runs on node: record it, and say what kind of
 * transfer this was.  A starving waiter's mark stays unless the caller was
 * that waiter (was_starving).  Owners and starving waiters write the slot;
 * a hint, so relaxed: a mark lost to a racing store is set again at the
 * starving waiter's next lost attempt, and exclusion never depends on it.
 */
static inline enum transfer_kind mutex_note_owner(pthread_mutex_t *m, int node, int cpu,
						 bool was_starving)
{
	_Atomic uint32_t *slot = mutex_owner_slot(m);
	uint32_t mine = (uint32_t)node + 1u;
	uint32_t before = atomic_load_explicit(slot, memory_order_relaxed);
	uint32_t after = mine | owner_cpu_bits(cpu) |
			 (was_starving ? 0 : before & OWNER_STARVING);
	if (before != after)
		atomic_store_explicit(slot, after, memory_order_relaxed);
	uint32_t before_node = before & OWNER_NODE_MASK;
	if (before_node == OWNER_NODE_UNKNOWN)
		return TRANSFER_UNKNOWN;
	return before_node == mine ? TRANSFER_LOCAL : TRANSFER_REMOTE;
}

/* With statistics or the profile on, an owner whose node is not known yet. */
static inline void mutex_forget_owner_node(pthread_mutex_t *m)
{
	_Atomic uint32_t *slot = mutex_owner_slot(m);
	uint32_t before = atomic_load_explicit(slot, memory_order_relaxed);
	if (before & (OWNER_NODE_MASK | OWNER_CPU_MASK))
		atomic_store_explicit(slot, before & OWNER_STARVING, memory_order_relaxed);
}

#endif
