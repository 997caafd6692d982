/* interpose/locality.h — which node last owned a mutex, kept in the mutex.
 *
 * glibc uses a mutex's __list only to chain robust mutexes on their owner's
 * robust list; the kinds the shim takes over (never robust) leave it zero
 * and untouched, whoever locks them.  Its first 32 bits hold the node of the
 * last owner that took the mutex through the shim's contended path (and,
 * with statistics or the profile on, its fast path), plus one; 0 means not
 * known yet.  It
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

static inline _Atomic uint32_t *mutex_owner_node_slot(pthread_mutex_t *m)
{
	return (_Atomic uint32_t *)(void *)&m->__data.__list;
}

/* The last recorded owner's node, or -1 if not known.  Relaxed: a hint,
 * read by waiters; exclusion never depends on it. */
static inline int mutex_owner_node(pthread_mutex_t *m)
{
	return (int)atomic_load_explicit(mutex_owner_node_slot(m), memory_order_relaxed) - 1;
}

/* The caller now owns m and runs on node: record it, and say what kind of
 * transfer this was.  Only the owner writes the slot (relaxed: ordered for
 * the next owner by the word's release/acquire). */
static inline enum transfer_kind mutex_note_owner_node(pthread_mutex_t *m, int node)
{
	_Atomic uint32_t *slot = mutex_owner_node_slot(m);
	uint32_t mine = (uint32_t)node + 1u;
	uint32_t before = atomic_load_explicit(slot, memory_order_relaxed);
	if (before != mine)
		atomic_store_explicit(slot, mine, memory_order_relaxed);
	if (before == OWNER_NODE_UNKNOWN)
		return TRANSFER_UNKNOWN;
	return before == mine ? TRANSFER_LOCAL : TRANSFER_REMOTE;
}

/* With statistics or the profile on, an owner whose node is not known yet. */
static inline void mutex_forget_owner_node(pthread_mutex_t *m)
{
	atomic_store_explicit(mutex_owner_node_slot(m), OWNER_NODE_UNKNOWN, memory_order_relaxed);
}

#endif
