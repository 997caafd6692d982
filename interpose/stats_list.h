/* interpose/stats_list.h — every counter the shim keeps, one line each.
 * STAT(name, how): how is SUM (added up over threads) or MAX.
 * Included with STAT defined by the user of the list.
 */
STAT(acquisitions_fast, SUM)  /* lock/trylock/timedlock won on the first CAS */
STAT(acquisitions_spun, SUM)  /* contended, won by spinning before queueing */
STAT(acquisitions_slow, SUM)  /* acquisitions that went through the queue */
STAT(acquisitions_timed, SUM) /* timed acquisitions that waited on the word */
STAT(acquisitions_word, SUM)  /* contended, first waiter: waited on the word, not queued */
STAT(queue_fallbacks, SUM)    /* contended acquisitions with no queue record free */
STAT(handovers, SUM)          /* of those, handed the word by its owner past the threshold */
STAT(transfers_local, SUM)    /* contended acquisitions: previous owner on the new owner's node */
STAT(transfers_remote, SUM)   /* ... previous owner on another node */
STAT(transfers_unknown, SUM)  /* ... previous owner's node not known (locality.h says when) */
STAT(handoffs_local, SUM)     /* headship passed to a waiter on the granter's node */
STAT(handoffs_remote, SUM)    /* headship passed to a waiter on another node */
STAT(secondary_moves, SUM)    /* waiters moved to the secondary queue */
STAT(flushes, SUM)            /* secondary queue spliced back in front */
STAT(parks, SUM)              /* futex sleeps of queued waiters and heads */
STAT(requeues, SUM)           /* new heads moved, asleep, onto the mutex word */
STAT(cpu_batch_on, SUM)       /* decisions of the measured CPU gate: on (cpu_batch.h) */
STAT(cpu_batch_off, SUM)      /* ... off */
STAT(wait_total_ns, SUM)      /* time from slow-path entry to acquisition */
STAT(wait_max_ns, MAX)        /* longest such wait */
STAT(secondary_wait_max_ns, MAX) /* longest wait of a waiter moved to the secondary queue */
