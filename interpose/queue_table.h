/* interpose/queue_table.h — mutex address -> CNA queue, bounded and lock-free.
 *
 * A fixed array of records, each on its own cache line.  A record's one
 * atomic word holds the mutex address (high 48 bits) and the number of
 * threads using its queue (low 16 bits); the address is reset to 0 when the
 * last user leaves, and by then the queue is empty, so a record is recycled
 * without any guard.  A head that hands the headship on leaves its use to be
 * ended by the successor (contended.c), whose own use keeps the record
 * meanwhile: the count is then one above the queue's waiters, never below.
 * Lookup probes a short run of records from the address's hash,
 * exact-address match only: two mutexes never share a queue.  When the run
 * is full the caller waits on the mutex word instead; exclusion never
 * depends on the table.  Two threads claiming free records at the same
 * moment, while a third record of the run is being freed, can rarely give
 * one mutex two records: both queues' heads then compete on the word,
 * which keeps exclusion and costs only ordering.
 */
#ifndef INTERPOSE_QUEUE_TABLE_H
#define INTERPOSE_QUEUE_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "../cna/cna.h"

#define QUEUE_TABLE_RECORDS 4096u
#define QUEUE_TABLE_PROBES 16u

struct queue_record {
	_Atomic uint64_t key_users;
	struct cna_queue queue;
} __attribute__((aligned(64)));

/* At load, before any other call. */
void queue_table_init(void);

/* The record for mutex, counted as used by the caller; NULL if none free. */
struct queue_record *queue_table_acquire(const void *mutex);
void queue_table_release(struct queue_record *record);

/* Records in use now (for tests and the memory report). */
unsigned queue_table_in_use(void);

/* In the child after fork(): the parent's waiters do not exist here, so
 * the records in use are cleared (the work follows those, not the table). */
__attribute__((cold)) void queue_table_reset_after_fork(void);

#ifdef CNA_SIMULATED
/* The simulator: the next run starts from a new process's table, every
 * record and page note cleared, so that a seed replays the same events
 * whatever ran before it. */
void queue_table_forget_all(void);
#endif

#endif
