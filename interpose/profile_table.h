/* interpose/profile_table.h — the profile's records, shared by capture and report. */
#ifndef INTERPOSE_PROFILE_TABLE_H
#define INTERPOSE_PROFILE_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "tunables.h"

#define PROFILE_RECORDS 4096u
#define PROFILE_TOP 10u

struct profile_record {
	_Atomic uintptr_t mutex;         /* 0 while free; claimed once */
	_Atomic uintptr_t call_site;     /* return address in the first contended caller */
	_Atomic uint64_t acquisitions;   /* all of them, from the first contended one on */
	_Atomic uint64_t contended;      /* acquisitions whose first CAS failed */
	_Atomic uint64_t handoffs_local; /* headship passed on within a node */
	_Atomic uint64_t handoffs_remote;
	_Atomic uint64_t transfers_local; /* contended acquisitions from an owner on the same node */
	_Atomic uint64_t transfers_remote; /* ... from an owner on another node */
	_Atomic uint64_t wait_total_ns;  /* contended waits, slow-path entry to owning */
	_Atomic uint64_t wait_max_ns;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct profile_record) == 128, "two cache lines a record");

extern struct profile_record profile_table[PROFILE_RECORDS];
/* Contended acquisitions of mutexes that found no free record. */
extern _Atomic uint64_t profile_untracked;
extern enum profile_mode profile_output;

#endif
