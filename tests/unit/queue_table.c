/* tests/unit/queue_table.c — the address-keyed queue table on its own:
 * exact-address match, recycling, and bounded memory (NULL when full).
 */
#include <stdbool.h>
#include <stdint.h>

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

/* The child of fork() starts with every record free. */
static void reset_after_fork_frees_all(void)
{
	CHECK(queue_table_acquire(address(3)) != NULL);
	CHECK(queue_table_acquire(address(4)) != NULL);
	CHECK_EQ(queue_table_in_use(), 2);
	queue_table_reset_after_fork();
	CHECK_EQ(queue_table_in_use(), 0);
}

int main(void)
{
	CHECK_EQ(queue_table_in_use(), 0);
	same_address_same_record();
	different_addresses_different_records();
	colliding_addresses_stay_apart();
	bounded_and_recycled();
	unrepresentable_address_refused();
	reset_after_fork_frees_all();
	return check_report("queue-table");
}
