/* bench/sim/events.c — binary min-heap of events. */
#include "events.h"

#include <stdlib.h>

bool event_heap_init(struct event_heap *h, size_t capacity)
{
	h->items = calloc(capacity, sizeof *h->items);
	h->count = 0;
	h->capacity = capacity;
	h->next_seq = 0;
	return h->items != NULL;
}

void event_heap_free(struct event_heap *h)
{
	free(h->items);
	h->items = NULL;
	h->count = h->capacity = 0;
}

static bool earlier(const struct event *a, const struct event *b)
{
	return a->time_ns != b->time_ns ? a->time_ns < b->time_ns : a->seq < b->seq;
}

static void swap(struct event *a, struct event *b)
{
	struct event t = *a;
	*a = *b;
	*b = t;
}

bool event_push(struct event_heap *h, uint64_t time_ns, int thread, enum event_kind kind)
{
	if (h->count == h->capacity)
		return false;
	size_t i = h->count++;
	h->items[i] = (struct event){ .time_ns = time_ns, .seq = h->next_seq++,
				      .thread = thread, .kind = kind };
	while (i > 0 && earlier(&h->items[i], &h->items[(i - 1) / 2])) {
		swap(&h->items[i], &h->items[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return true;
}

bool event_pop(struct event_heap *h, struct event *out)
{
	if (h->count == 0)
		return false;
	*out = h->items[0];
	h->items[0] = h->items[--h->count];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		if (l < h->count && earlier(&h->items[l], &h->items[min]))
			min = l;
		if (r < h->count && earlier(&h->items[r], &h->items[min]))
			min = r;
		if (min == i)
			return true;
		swap(&h->items[i], &h->items[min]);
		i = min;
	}
}
