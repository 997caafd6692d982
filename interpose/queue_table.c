/* interpose/queue_table.c — see queue_table.h for the record protocol. */
#include "queue_table.h"

#include <stdbool.h>
#include <string.h>

#include "claimed_pages.h"

#define USERS_BITS 16
#define USERS_MASK ((UINT64_C(1) << USERS_BITS) - 1)
#define CLAIM_ROUNDS 4

_Static_assert((QUEUE_TABLE_RECORDS & (QUEUE_TABLE_RECORDS - 1)) == 0,
	       "record count is a power of two");
_Static_assert(sizeof(struct queue_record) == 64, "one record per cache line");

_Static_assert(QUEUE_TABLE_RECORDS * sizeof(struct queue_record) <=
	       CLAIMED_PAGES_MAX * CLAIMED_PAGE_BYTES, "every page of the table can be noted");
_Static_assert(CLAIMED_PAGE_BYTES % sizeof(struct queue_record) == 0, "records divide a page");

static struct queue_record table[QUEUE_TABLE_RECORDS]
	__attribute__((aligned(CLAIMED_PAGE_BYTES)));
/* Pages of the table that ever held a claimed record, for the fork child. */
static struct claimed_pages claimed;

void queue_table_init(void)
{
	/* Makes the page of the summary the process's own now (it is in
	 * .bss, and nothing else may write there): every fork child reads the
	 * summary, and a page the parent never touched would cost it a fault. */
	atomic_store_explicit(&claimed.bits[0], 0, memory_order_relaxed);
}

static unsigned hash_address(uintptr_t address)
{
	uint64_t h = (uint64_t)address >> 3;
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	return (unsigned)h;
}

/* users n -> n+1 on a record while it holds key: a failed CAS may show
 * the record freed and claimed for another mutex meanwhile, which we must
 * not join.  Acquire: pairs with the release in queue_table_release(), so
 * the last user's queue writes are seen. */
static bool join(struct queue_record *r, uint64_t key, uint64_t seen)
{
	while ((seen & ~USERS_MASK) == key && (seen & USERS_MASK) != USERS_MASK)
		if (atomic_compare_exchange_weak_explicit(&r->key_users, &seen, seen + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

struct queue_record *queue_table_acquire(const void *mutex)
{
	uintptr_t address = (uintptr_t)mutex;
	if (address >> (64 - USERS_BITS))
		return NULL;            /* not representable: wait on the word */
	uint64_t key = (uint64_t)address << USERS_BITS;
	unsigned start = hash_address(address);

	for (int round = 0; round < CLAIM_ROUNDS; round++) {
		struct queue_record *empty = NULL;
		for (unsigned i = 0; i < QUEUE_TABLE_PROBES; i++) {
			struct queue_record *r = &table[(start + i) & (QUEUE_TABLE_RECORDS - 1)];
			uint64_t seen = atomic_load_explicit(&r->key_users, memory_order_relaxed);
			if ((seen & ~USERS_MASK) == key) {
				if (join(r, key, seen))
					return r;
				seen = atomic_load_explicit(&r->key_users, memory_order_relaxed);
			}
			if (seen == 0 && !empty)
				empty = r;
		}
		if (!empty)
			return NULL;
		/* free -> key with one user.  Acquire: as in join().  Release:
		 * the page's note is visible before the claim, to a fork at any
		 * moment (read by queue_table_reset_after_fork()). */
		claimed_pages_note(&claimed, (size_t)(empty - table) * sizeof *empty);
		uint64_t expected = 0;
		if (atomic_compare_exchange_strong_explicit(&empty->key_users, &expected,
							    key | 1, memory_order_acq_rel,
							    memory_order_relaxed))
			return empty;
	}
	return NULL;
}

void queue_table_release(struct queue_record *r)
{
	uint64_t seen = atomic_load_explicit(&r->key_users, memory_order_relaxed);
	uint64_t next;
	do {
		next = (seen & USERS_MASK) == 1 ? 0 : seen - 1;
		/* Release: our queue writes happen before the next user's join. */
	} while (!atomic_compare_exchange_weak_explicit(&r->key_users, &seen, next,
							memory_order_release,
							memory_order_relaxed));
}

unsigned queue_table_in_use(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < QUEUE_TABLE_RECORDS; i++)
		n += atomic_load_explicit(&table[i].key_users, memory_order_relaxed) != 0;
	return n;
}

/*
 * The parent's users of a record do not exist in the child, so a record in
 * use is stale: its queue may end in a dead thread's node.  A record with
 * no user is already as the child needs it: the last user left after
 * passing the headship on, when the queue's tail was back to NULL (its
 * reorder hint expires on its own, as on any recycling).  So only records
 * in use are cleared, and only noted pages are looked at: the child's work,
 * and its page faults, follow the records the parent used, not the table's
 * size (none at all for a parent that never queued).
 */
static void clear_if_used(void *record)
{
	struct queue_record *r = record;
	if (atomic_load_explicit(&r->key_users, memory_order_relaxed))
		memset(r, 0, sizeof *r);
}

void queue_table_reset_after_fork(void)
{
	claimed_pages_visit(&claimed, table, sizeof table[0], clear_if_used);
}

#ifdef CNA_SIMULATED
void queue_table_forget_all(void)
{
	memset(table, 0, sizeof table);
	memset(&claimed, 0, sizeof claimed);
}
#endif
