/* interpose/profile.c — the per-mutex records and their capture; see profile.h.
 *
 * Records are claimed, never given back (until fork): a probe run ends at
 * the mutex's record or at a free one.  Every field is its own relaxed
 * atomic and no field's meaning depends on another's, so nothing needs
 * ordering; a report reads whatever is there.  Counters are
 * updated by threads that own the mutex, so they hardly ever contend.
 */
#include "profile.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "../cna/platform.h"
#include "claimed_pages.h"
#include "profile_table.h"
#include "report.h"
#include "stats.h"
#include "thread.h"
#include "topology.h"

#define PROFILE_PROBES 32u
#define CAPTURE_FRAMES 32

_Static_assert((PROFILE_RECORDS & (PROFILE_RECORDS - 1)) == 0,
	       "record count is a power of two");
_Static_assert(PROFILE_RECORDS * sizeof(struct profile_record) <=
	       CLAIMED_PAGES_MAX * CLAIMED_PAGE_BYTES, "every page of the table can be noted");
_Static_assert(CLAIMED_PAGE_BYTES % sizeof(struct profile_record) == 0, "records divide a page");

bool instrument_enabled;
bool profile_enabled;
enum profile_mode profile_output;
struct profile_record profile_table[PROFILE_RECORDS]
	__attribute__((aligned(CLAIMED_PAGE_BYTES)));
_Atomic uint64_t profile_untracked;
/* Pages of the table that ever held a claimed record, for the fork child. */
static struct claimed_pages claimed;

/* This library's mapped range: frames in it are not the call site. */
static uintptr_t self_low, self_high;
/* The unwinder may lock a mutex of its own: do not capture from inside it. */
static __thread bool capturing __attribute__((tls_model("initial-exec")));

static unsigned slot_of(uintptr_t address)
{
	/* Fibonacci hashing of the address without its alignment bits. */
	return (unsigned)(((uint64_t)(address >> 3) * UINT64_C(0x9e3779b97f4a7c15)) >> 40);
}

static struct profile_record *find(uintptr_t mutex, bool claim)
{
	unsigned start = slot_of(mutex);
	for (unsigned i = 0; i < PROFILE_PROBES; i++) {
		struct profile_record *r = &profile_table[(start + i) & (PROFILE_RECORDS - 1)];
		uintptr_t seen = atomic_load_explicit(&r->mutex, memory_order_relaxed);
		if (seen == mutex)
			return r;
		if (seen != 0)
			continue;
		if (!claim)
			return NULL;
		claimed_pages_note(&claimed, (size_t)(r - profile_table) * sizeof *r);
		/* Release: the page's note is visible before the claim, to a
		 * fork at any moment (read by profile_reset_after_fork()). */
		if (atomic_compare_exchange_strong_explicit(&r->mutex, &seen, mutex,
							    memory_order_release,
							    memory_order_relaxed) ||
		    seen == mutex)
			return r;
	}
	return NULL;
}

static void add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static void raise_to(_Atomic uint64_t *counter, uint64_t value)
{
	uint64_t cur = atomic_load_explicit(counter, memory_order_relaxed);
	while (value > cur && !atomic_compare_exchange_weak_explicit(
				      counter, &cur, value, memory_order_relaxed,
				      memory_order_relaxed))
		;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t probe = (uintptr_t)data, low = UINTPTR_MAX, high = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t begin = info->dlpi_addr + ph->p_vaddr;
		if (begin < low)
			low = begin;
		if (begin + ph->p_memsz > high)
			high = begin + ph->p_memsz;
	}
	if (probe < low || probe >= high)
		return 0;
	self_low = low;
	self_high = high;
	return 1;
}

static bool in_self(uintptr_t pc)
{
	return pc >= self_low && pc < self_high;
}

/* Return address into the first caller outside this library, or 0.  The
 * first frames may belong to a sanitizer's backtrace() wrapper: skip to
 * our own frames, then past them. */
static uintptr_t capture_call_site(void)
{
	void *frames[CAPTURE_FRAMES];
	int n = backtrace(frames, CAPTURE_FRAMES);
	int i = 0;
	while (i < n && !in_self((uintptr_t)frames[i]))
		i++;
	while (i < n && in_self((uintptr_t)frames[i]))
		i++;
	return i < n ? (uintptr_t)frames[i] : 0;
}

void profile_init(enum profile_mode mode)
{
	profile_output = mode;
	profile_enabled = mode != PROFILE_OFF;
	instrument_enabled = stats_enabled || profile_enabled;
	if (!profile_enabled)
		return;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&profile_init);
	/* The first backtrace() loads the unwinder: do it here, not on a lock path. */
	void *warm[2];
	backtrace(warm, 2);
}

void instrument_fast_acquisition(pthread_mutex_t *mutex)
{
	struct cnamutex_thread *self = thread_self();
	if (stats_enabled)
		stats_add(&stats_self()->acquisitions_fast, 1);
	/* A thread's virtual node is known from its first contention on;
	 * before that its owning makes the next transfer's kind unknown. */
	if (self->index_assigned || !topology_is_per_thread()) {
		int cpu = platform_current_cpu();
		mutex_note_owner(mutex, topology_node_at(self->index, cpu), cpu, false);
	} else {
		mutex_forget_owner_node(mutex);
	}
	if (profile_enabled) {
		struct profile_record *r = find((uintptr_t)mutex, false);
		if (r)
			add(&r->acquisitions, 1);
	}
	report_tick_fast(self);
}

void profile_record_contended(const void *mutex, uint64_t start_ns,
			      const struct cna_handoff *handoff,
			      enum transfer_kind transfer)
{
	uint64_t waited = cna_now_ns() - start_ns;
	struct profile_record *r = find((uintptr_t)mutex, true);
	if (!r) {
		add(&profile_untracked, 1);
		return;
	}
	add(&r->acquisitions, 1);
	add(&r->contended, 1);
	add(&r->wait_total_ns, waited);
	raise_to(&r->wait_max_ns, waited);
	if (handoff && handoff->granted)
		add(handoff->local ? &r->handoffs_local : &r->handoffs_remote, 1);
	if (transfer != TRANSFER_UNKNOWN)
		add(transfer == TRANSFER_LOCAL ? &r->transfers_local : &r->transfers_remote, 1);

	if (atomic_load_explicit(&r->call_site, memory_order_relaxed) == 0 && !capturing) {
		capturing = true;
		uintptr_t site = capture_call_site();
		capturing = false;
		uintptr_t none = 0;
		atomic_compare_exchange_strong_explicit(&r->call_site, &none, site,
							memory_order_relaxed,
							memory_order_relaxed);
	}
}

/* A record's counters change only once it is claimed, so an unclaimed one
 * is all zero already. */
static void clear_if_claimed(void *record)
{
	struct profile_record *r = record;
	if (!atomic_load_explicit(&r->mutex, memory_order_relaxed))
		return;
	atomic_store_explicit(&r->mutex, 0, memory_order_relaxed);
	atomic_store_explicit(&r->call_site, 0, memory_order_relaxed);
	atomic_store_explicit(&r->acquisitions, 0, memory_order_relaxed);
	atomic_store_explicit(&r->contended, 0, memory_order_relaxed);
	atomic_store_explicit(&r->handoffs_local, 0, memory_order_relaxed);
	atomic_store_explicit(&r->handoffs_remote, 0, memory_order_relaxed);
	atomic_store_explicit(&r->transfers_local, 0, memory_order_relaxed);
	atomic_store_explicit(&r->transfers_remote, 0, memory_order_relaxed);
	atomic_store_explicit(&r->wait_total_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&r->wait_max_ns, 0, memory_order_relaxed);
}

void profile_reset_after_fork(void)
{
	if (!profile_enabled)
		return;
	claimed_pages_visit(&claimed, profile_table, sizeof profile_table[0], clear_if_claimed);
	atomic_store_explicit(&profile_untracked, 0, memory_order_relaxed);
}
