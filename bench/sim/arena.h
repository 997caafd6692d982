/* bench/sim/arena.h — memory at fixed addresses for one simulated run. */
#ifndef SIM_ARENA_H
#define SIM_ARENA_H

#include <stddef.h>

/* Maps the arena the first time; then frees (and zeroes) all of it. */
void sim_arena_reset(void);
/* Zeroed memory until the next reset; NULL when the arena is full.
 * align is a power of two. */
void *sim_arena_alloc(size_t bytes, size_t align);

#endif
