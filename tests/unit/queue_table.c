/* tests/unit/queue_table.c — the address-keyed queue table on its own:
 * exact-address match, recycling, and bounded memory (NULL when full).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "queue_table.h"

/* Fake mutex addresses: never dereferenced, 8-byte aligned like a mutex. */
static const void *address(uintptr_t i)
{
	return (const void *)(UINT64_C(0x7f0000000000) + i * 40);
}

static void same_address_same_record(void)
{
	struct queue_record *a = queue_table_acquire(address(1));
	struct queue_record *b = queue_table_acquire(address(1));
	CHECK(a != NULL);
	CHECK(a == b);
	CHECK_EQ(queue_table_in_use(), 1);
	queue_table_release(b);
	CHECK_EQ(queue_table_in_use(), 1);   /* still one user */
	struct queue_record *c = queue_table_acquire(address(1));
	CHECK(c == a);
	queue_table_release(c);
	queue_table_release(a);
	CHECK_EQ(queue_table_in_use(), 0);
}

static void different_addresses_different_records(void)
{
	enum { COUNT = 256 };
	struct queue_record *held[COUNT];
	for (unsigned i = 0; i < COUNT; i++) {
		held[i] = queue_table_acquire(address(100 + i));
		CHECK(held[i] != NULL);
		for (unsigned j = 0; j < i; j++)
			CHECK(held[i] != held[j]);
	}
	CHECK_EQ(queue_table_in_use(), COUNT);
	/* Each address finds its own record again while the others are held. */
	for (unsigned i = 0; i < COUNT; i++) {
		struct queue_record *again = queue_table_acquire(address(100 + i));
		CHECK(again == held[i]);
		queue_table_release(again);
	}
	for (unsigned i = 0; i < COUNT; i++)
		queue_table_release(held[i]);
	CHECK_EQ(queue_table_in_use(), 0);
}

/* The record an address gets in an empty table: where its probe run starts. */
static struct queue_record *home_of(uintptr_t i)
{
	struct queue_record *r = queue_table_acquire(address(i));
	if (r)
		queue_table_release(r);
	return r;
}

/*
 * Two addresses whose probe runs start at the same record never share it:
 * the second gets another record of its run, keeps it after the first has
 * left (the hole in front of it is not mistaken for its own), and the
 * first, back again, gets a record of its own.
 */
static void colliding_addresses_stay_apart(void)
{
	const uintptr_t first = 7;
	struct queue_record *home = home_of(first);
	uintptr_t other = 0;
	for (uintptr_t i = first + 1; i < first + 1 + 64 * QUEUE_TABLE_RECORDS; i++) {
		if (home_of(i) == home) {
			other = i;
			break;
		}
	}
	CHECK(other != 0);
	if (!other)
		return;

	struct queue_record *a = queue_table_acquire(address(first));
	struct queue_record *b = queue_table_acquire(address(other));
	CHECK(a == home);
	CHECK(b != NULL && b != a);
	queue_table_release(a);
	CHECK_EQ(queue_table_in_use(), 1);

	struct queue_record *b_again = queue_table_acquire(address(other));
	CHECK(b_again == b);
	struct queue_record *a_again = queue_table_acquire(address(first));
	CHECK(a_again != NULL && a_again != b);
	queue_table_release(a_again);
	queue_table_release(b_again);
	queue_table_release(b);
	CHECK_EQ(queue_table_in_use(), 0);
}

/* The next address after `after` whose probe run starts at home. */
static uintptr_t collider(struct queue_record *home, uintptr_t after)
{
	for (uintptr_t i = after + 1; i < after + 1 + 64 * QUEUE_TABLE_RECORDS; i++)
		if (home_of(i) == home)
			return i;
	return 0;
}

#define SHARERS 3
#define THREADS_PER_ADDRESS 2

static uintptr_t sharer[SHARERS];
static struct queue_record *shared_home;
static _Atomic int users[QUEUE_TABLE_PROBES][SHARERS];  /* by record in the run */
static _Atomic long outside_run, shared_by_two;
static long rounds;

static void *churn(void *arg)
{
	int who = (int)(intptr_t)arg;
	for (long i = 0; i < rounds; i++) {
		struct queue_record *r = queue_table_acquire(address(sharer[who]));
		if (!r)
			continue;
		long at = r - shared_home;
		if (at < 0 || at >= (long)QUEUE_TABLE_PROBES) {
			atomic_fetch_add_explicit(&outside_run, 1, memory_order_relaxed);
			queue_table_release(r);
			continue;
		}
		/* Sequentially consistent increment and loads: of two overlapping
		 * users of one record, at least one sees the other's count. */
		atomic_fetch_add_explicit(&users[at][who], 1, memory_order_seq_cst);
		for (int other = 0; other < SHARERS; other++)
			if (other != who &&
			    atomic_load_explicit(&users[at][other], memory_order_seq_cst) > 0)
				atomic_fetch_add_explicit(&shared_by_two, 1, memory_order_relaxed);
		/* Release: pairs with the other users' seq_cst loads above. */
		atomic_fetch_sub_explicit(&users[at][who], 1, memory_order_release);
		queue_table_release(r);
	}
	return NULL;
}

/* Threads churning on three addresses that share a probe run: a record is
 * never in use for two addresses at once, and all are free afterwards. */
static void concurrent_collisions_never_share(long rounds_per_thread)
{
	sharer[0] = 11;
	shared_home = home_of(sharer[0]);
	for (int i = 1; i < SHARERS; i++) {
		sharer[i] = collider(shared_home, sharer[i - 1]);
		CHECK(sharer[i] != 0);
		if (!sharer[i])
			return;
	}
	rounds = rounds_per_thread;
	pthread_t threads[SHARERS * THREADS_PER_ADDRESS];
	for (int t = 0; t < SHARERS * THREADS_PER_ADDRESS; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, churn,
					(void *)(intptr_t)(t % SHARERS)), 0);
	for (int t = 0; t < SHARERS * THREADS_PER_ADDRESS; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	/* After the joins: relaxed is enough. */
	CHECK_EQ(atomic_load_explicit(&shared_by_two, memory_order_relaxed), 0);
	CHECK_EQ(atomic_load_explicit(&outside_run, memory_order_relaxed), 0);
	CHECK_EQ(queue_table_in_use(), 0);
}

/* Holding ever more addresses runs out of records (no allocation), and
 * releasing them all makes every record free again. */
static void bounded_and_recycled(void)
{
	enum { ATTEMPTS = 4 * QUEUE_TABLE_RECORDS };
	static struct queue_record *held[ATTEMPTS];
	unsigned refused = 0, first_refused = 0;
	for (unsigned i = 0; i < ATTEMPTS; i++) {
		held[i] = queue_table_acquire(address(50000 + i));
		if (!held[i] && !refused++)
			first_refused = i;
	}
	CHECK(refused > 0);
	CHECK(queue_table_in_use() <= QUEUE_TABLE_RECORDS);
	CHECK(queue_table_acquire(address(50000 + first_refused)) == NULL);

	for (unsigned i = 0; i < ATTEMPTS; i++)
		if (held[i])
			queue_table_release(held[i]);
	CHECK_EQ(queue_table_in_use(), 0);

	struct queue_record *r = queue_table_acquire(address(50000 + first_refused));
	CHECK(r != NULL);
	if (r)
		queue_table_release(r);
	CHECK_EQ(queue_table_in_use(), 0);
}

/* An address the record word cannot hold is refused (the caller then
 * waits on the mutex word). */
static void unrepresentable_address_refused(void)
{
	CHECK(queue_table_acquire((const void *)UINT64_C(0xffff800000001000)) == NULL);
	CHECK_EQ(queue_table_in_use(), 0);
}

/*
 * The child of fork() starts with every record free and every queue empty:
 * records in use (here with a queue ending in a node that only the parent
 * had) are cleared, and a free record is left as it is (the child need not
 * write it, so it must already be fit for use).
 */
static void reset_after_fork_frees_all(void)
{
	static struct cna_node parents_waiter;
	struct queue_record *queued = queue_table_acquire(address(3));
	struct queue_record *held = queue_table_acquire(address(4));
	struct queue_record *left = queue_table_acquire(address(5));
	CHECK(queued && held && left);
	if (!queued || !held || !left)
		return;
	atomic_store_explicit(&queued->queue.tail, &parents_waiter, memory_order_relaxed);
	/* A bout of contention that ended: the reorder hint stays behind. */
	atomic_store_explicit(&left->queue.reorder_until_ns, 12345, memory_order_relaxed);
	queue_table_release(left);
	CHECK_EQ(queue_table_in_use(), 2);

	queue_table_reset_after_fork();
	CHECK_EQ(queue_table_in_use(), 0);
	CHECK(cna_queue_is_idle(&queued->queue));
	CHECK(cna_queue_is_idle(&held->queue));
	CHECK_EQ(atomic_load_explicit(&left->queue.reorder_until_ns, memory_order_relaxed),
		 12345);

	/* The same mutex in the child: a record of its own, with an empty queue. */
	struct queue_record *again = queue_table_acquire(address(3));
	CHECK(again != NULL);
	if (again) {
		CHECK(cna_queue_is_idle(&again->queue));
		CHECK_EQ(queue_table_in_use(), 1);
		queue_table_release(again);
	}
	CHECK_EQ(queue_table_in_use(), 0);
}

int main(int argc, char **argv)
{
	long rounds_per_thread = argc > 1 ? atol(argv[1]) : 100000;
	CHECK_EQ(queue_table_in_use(), 0);
	/* First, while only its own records were ever claimed: the reset
	 * visits only the pages claims were noted on. */
	reset_after_fork_frees_all();
	same_address_same_record();
	different_addresses_different_records();
	colliding_addresses_stay_apart();
	bounded_and_recycled();
	concurrent_collisions_never_share(rounds_per_thread);
	unrepresentable_address_refused();
	return check_report("queue-table");
}
