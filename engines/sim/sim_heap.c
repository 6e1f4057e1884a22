/* SPDX-License-Identifier: MIT */
/*
 * sim_heap.c - the event queue: a binary min-heap ordered by virtual time,
 * then by insertion number, so two events at one time always run in the
 * order they were made (the simulator's determinism rests on it).  One
 * event waits outside the heap, in a stage: most pushes are a thread's
 * next event, popped soon after, and then the pair costs one sift down
 * from the root instead of a sift up and a sift down.
 */
#include "sim_internal.h"

#include <stdlib.h>

static bool before(const struct sim_event *a, const struct sim_event *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

/* Into the heap proper: sift up from the end. */
static int heap_insert(struct lb_sim_world *w, const struct sim_event *e)
{
	struct sim_heap *h = &w->heap;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct sim_event *ev = realloc(h->ev, cap * sizeof(*ev));
		if (!ev) {
			w->failed = true;
			return -1;
		}
		h->ev = ev;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i > 0 && before(e, &h->ev[(i - 1) / 2])) {
		h->ev[i] = h->ev[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->ev[i] = *e;
	return 0;
}

/* Put e at the root in place of the event there, and sift it down. */
static void replace_root(struct sim_heap *h, const struct sim_event *e)
{
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->ev[c + 1], &h->ev[c]))
			c++;
		if (!before(&h->ev[c], e))
			break;
		h->ev[i] = h->ev[c];
		i = c;
	}
	h->ev[i] = *e;
}

int sim_heap_push(struct lb_sim_world *w, uint64_t time, enum sim_event_kind kind, int who,
		  uint64_t gen)
{
	struct sim_heap *h = &w->heap;
	struct sim_event e = {.time = time, .seq = h->seq++, .gen = gen, .who = who,
			      .kind = kind};
	if (!h->staged) {
		h->stage = e;
		h->staged = true;
	} else if (heap_insert(w, &e)) {
		return -1;
	}
	if (kind != EV_TICK)
		w->pending++;
	return 0;
}

/* The order is (time, insertion number) whichever of the stage and the
 * heap an event waited in, so events pop as from one heap. */
bool sim_heap_pop(struct sim_heap *h, struct sim_event *out)
{
	if (h->staged) {
		h->staged = false;
		if (!h->n || before(&h->stage, &h->ev[0])) {
			*out = h->stage;
			return true;
		}
		*out = h->ev[0];
		replace_root(h, &h->stage);
		return true;
	}
	if (!h->n)
		return false;
	*out = h->ev[0];
	struct sim_event last = h->ev[--h->n];
	if (h->n)
		replace_root(h, &last);
	return true;
}

void sim_heap_free(struct sim_heap *h)
{
	free(h->ev);
	h->ev = NULL;
	h->n = h->cap = 0;
	h->staged = false;
}
