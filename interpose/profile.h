/* interpose/profile.h — per-mutex contention profile (CNAMUTEX_PROFILE).
 *
 * A fixed table of records keyed by mutex address.  A mutex gets a record
 * on its first contended acquisition, together with the call site that made
 * it (the first frame outside this library); from then on every acquisition
 * of it is counted.  Each report (at exit, and at every interval) lists the
 * mutexes most contended since the previous one, as a table or as one line
 * of JSON.
 *
 * The fast path pays for all of this (and for the statistics) with one
 * predictable branch on instrument_enabled; with both off nothing else runs.
 */
#ifndef INTERPOSE_PROFILE_H
#define INTERPOSE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>

#include "../cna/cna.h"
#include "locality.h"
#include "tunables.h"

/* CNAMUTEX_STATS or CNAMUTEX_PROFILE is on: the fast path's one flag. */
extern bool instrument_enabled;
extern bool profile_enabled;

/* After stats_init(): sets both flags, prepares the call-site capture. */
void profile_init(enum profile_mode mode);

/* Out of line, called only when instrument_enabled: the uncontended
 * acquisition of mutex, for the statistics and the profile.  It also
 * records the owner's node, so that the next contended acquisition's
 * transfer is counted against the right node. */
void instrument_fast_acquisition(pthread_mutex_t *mutex);

/* A contended acquisition of mutex that started at start_ns, and the lock
 * transfer it made; handoff is NULL when the waiter never queued. */
void profile_record_contended(const void *mutex, uint64_t start_ns,
			      const struct cna_handoff *handoff,
			      enum transfer_kind transfer);

static inline void profile_contended(const void *mutex, uint64_t start_ns,
				     const struct cna_handoff *handoff,
				     enum transfer_kind transfer)
{
	if (__builtin_expect(profile_enabled, 0))
		profile_record_contended(mutex, start_ns, handoff, transfer);
}

__attribute__((cold)) void profile_reset_after_fork(void);

struct report_stamp;
/* Under the report guard: counts since the previous report. */
void profile_report(const struct report_stamp *stamp);
/* fork() reset the records: the next report counts from 0. */
void profile_forget_previous(void);

#endif
