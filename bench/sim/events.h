/* bench/sim/events.h — the simulator's pending events, earliest first. */
#ifndef SIM_EVENTS_H
#define SIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum event_kind {
	EVENT_ARRIVE,                 /* non-critical work done: join the queue */
	EVENT_RELEASE,                /* critical section done: unlock */
};

struct event {
	uint64_t time_ns;
	uint64_t seq;                 /* ties go to the earlier push: deterministic */
	int thread;
	enum event_kind kind;
};

/* A binary min-heap on (time_ns, seq) with a fixed capacity. */
struct event_heap {
	struct event *items;
	size_t count, capacity;
	uint64_t next_seq;
};

bool event_heap_init(struct event_heap *h, size_t capacity);
void event_heap_free(struct event_heap *h);
/* Returns false if the heap is full (a model error: one event per thread). */
bool event_push(struct event_heap *h, uint64_t time_ns, int thread, enum event_kind kind);
bool event_pop(struct event_heap *h, struct event *out);

#endif
