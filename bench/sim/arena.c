/* bench/sim/arena.c — the simulated objects at the same addresses every run.
 *
 * The library's code hashes mutex addresses (the queue table, and the page
 * notes beside it), and the line model keys cache lines by address: what
 * shares a line, and which table page a record falls on, depend on where
 * the mutexes, the threads' library state and the stacks are.  From malloc
 * they would land where the heap and ASLR put them, so a seed would give
 * other events after other runs, or in another process.  From this arena,
 * mapped at one fixed address and emptied before each run, run N of a
 * process and a lone replay of it touch the same addresses.
 */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Below the 48-bit limit of the queue table's keys, far from the heap and
 * from where the kernel puts mappings and PIE images. */
#define ARENA_BASE ((uintptr_t)0x100000000000ull)
/* 144 threads' 128 KiB stacks are 18 MiB; the rest is small. */
#define ARENA_BYTES ((size_t)1 << 30)

static char *arena;
static size_t used;

void sim_arena_reset(void)
{
	if (!arena) {
		void *p = mmap((void *)ARENA_BASE, ARENA_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
			       -1, 0);
		if (p == MAP_FAILED) {
			perror("cnasim: mmap of the simulation arena");
			exit(2);
		}
		/* A kernel older than 4.17 takes the address as a hint only:
		 * runs then replay within a process, not across processes. */
		arena = p;
	}
	/* Zeroed again, so that nothing of the last run is read. */
	memset(arena, 0, used);
	used = 0;
}

void *sim_arena_alloc(size_t bytes, size_t align)
{
	size_t at = (used + align - 1) & ~(align - 1);
	if (!arena || at + bytes > ARENA_BYTES)
		return NULL;
	used = at + bytes;
	return arena + at;
}
