/* interpose/claimed_pages.h — which pages of a record table ever held a claim.
 *
 * After fork() the child must forget the parent's records, but every page
 * of a table it touches costs it a page fault: a copy-on-write one for a
 * page it writes, a zero-page one for a page the parent never used, even
 * to read it.  Clearing a whole 256 KiB table cost each child 64 faults, a
 * parent that never contended included.  So a table notes, before a record
 * goes free -> claimed (rare: once per bout of contention on a mutex), the
 * page the record is on, and the child visits only noted pages.  The note
 * is a relaxed load of a read-mostly word, and an RMW only the first time
 * a page is claimed in the process's life: nothing on any lock path that
 * does not claim a record, and nothing at all on the uncontended one.
 *
 * A note is never taken back, so a noted page may hold no claimed record
 * by now; the child then only reads it.  A table has at most
 * CLAIMED_PAGES_MAX pages, is page-aligned (so that a noted page is one
 * page), and its records divide a page.
 */
#ifndef INTERPOSE_CLAIMED_PAGES_H
#define INTERPOSE_CLAIMED_PAGES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CLAIMED_PAGE_BYTES 4096u
#define CLAIMED_PAGES_MAX 128u
#define CLAIMED_PAGES_WORDS (CLAIMED_PAGES_MAX / 64u)

struct claimed_pages {
	/* bit i % 64 of word i / 64: page i of the table was claimed on */
	_Atomic uint64_t bits[CLAIMED_PAGES_WORDS];
};

/*
 * Before claiming the record at byte offset in its table.  The claim that
 * follows must be a release (or stronger) operation, so that the note is
 * visible before the claim: a fork between the two then finds the page
 * noted, and at worst the record still free.
 */
static inline void claimed_pages_note(struct claimed_pages *p, size_t offset)
{
	size_t page = offset / CLAIMED_PAGE_BYTES;
	_Atomic uint64_t *word = &p->bits[page / 64];
	uint64_t bit = UINT64_C(1) << (page % 64);
	if (!(atomic_load_explicit(word, memory_order_relaxed) & bit))
		atomic_fetch_or_explicit(word, bit, memory_order_relaxed);
}

/* In the child after fork (the only thread there): calls visit() on each
 * record of each noted page of table, whose records are record_size bytes. */
static inline void claimed_pages_visit(const struct claimed_pages *p, void *table,
				       size_t record_size, void (*visit)(void *record))
{
	for (size_t w = 0; w < CLAIMED_PAGES_WORDS; w++) {
		uint64_t pending = atomic_load_explicit(&p->bits[w], memory_order_relaxed);
		for (; pending; pending &= pending - 1) {
			size_t index = w * 64 + (size_t)__builtin_ctzll(pending);
			char *page = (char *)table + index * CLAIMED_PAGE_BYTES;
			for (size_t at = 0; at + record_size <= CLAIMED_PAGE_BYTES; at += record_size)
				visit(page + at);
		}
	}
}

#endif
