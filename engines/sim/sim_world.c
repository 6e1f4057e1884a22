/* SPDX-License-Identifier: MIT */
/*
 * sim_world.c - a world (its CPUs, threads and event queue) and the event
 * loop that runs it in virtual time, in one host thread.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

#define SIM_STACK_SIZE (256u * 1024u)

/* The world lb_sim_run is running: the thread-side calls find it here.
 * One host thread runs the simulator, so nothing else reads it. */
static struct lb_sim_world *current_world;

struct lb_sim_world *sim_world(void)
{
	return current_world;
}

struct sim_thread *sim_self(void)
{
	return current_world->running;
}

bool lb_sim_inside(void)
{
	return current_world && current_world->running;
}

/* splitmix64: the world's one source of chance, from the seed. */
uint64_t sim_rand(struct lb_sim_world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct lb_sim_world *lb_sim_create(const struct lb_sim_machine *m, uint64_t seed)
{
	struct lb_sim_world *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->m = *m;
	w->ncpus = lb_sim_machine_cpus(m);
	w->cpus = calloc(w->ncpus, sizeof(*w->cpus));
	if (!w->cpus) {
		free(w);
		return NULL;
	}
	for (unsigned i = 0; i < w->ncpus; i++) {
		w->cpus[i].core = i / m->smt;
		w->cpus[i].socket = i / (m->smt * m->cores_per_socket);
	}
	w->rng = seed;
	w->digest = 0xcbf29ce484222325ull;  /* FNV-1a offset basis */
	sim_fiber_main(&w->main_fiber);
	return w;
}

void lb_sim_destroy(struct lb_sim_world *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->nthreads; i++) {
		sim_fiber_free(&w->threads[i]->fiber);
		free(w->threads[i]);
	}
	free(w->threads);
	free(w->cpus);
	sim_heap_free(&w->heap);
	sim_map_free(&w->lines, true);
	sim_map_free(&w->futexes, true);
	free(w);
}

static void thread_exit(struct lb_sim_world *w, struct sim_thread *t)
{
	unsigned cpu = (unsigned)t->cpu;
	sim_account(w, t);
	w->cpus[cpu].curr = NULL;
	t->state = T_DONE;
	t->gen++;
	w->alive--;
	sim_schedule(w, cpu);
}

static void fiber_entry(void)
{
	struct lb_sim_world *w = current_world;
	struct sim_thread *t = w->running;
	sim_fiber_started(&w->main_fiber);
	t->fn(t->arg);
	w = current_world;
	thread_exit(w, t);
	sim_fiber_switch(&t->fiber, &w->main_fiber, true);
	abort();  /* a finished thread is never switched to again */
}

int lb_sim_spawn(struct lb_sim_world *w, lb_sim_fn fn, void *arg)
{
	if (w->nthreads == w->cap_threads) {
		unsigned cap = w->cap_threads ? w->cap_threads * 2 : 16;
		struct sim_thread **v = realloc(w->threads, cap * sizeof(*v));
		if (!v)
			return -1;
		w->threads = v;
		w->cap_threads = cap;
	}
	struct sim_thread *t = calloc(1, sizeof(*t));
	if (!t || sim_fiber_make(&t->fiber, SIM_STACK_SIZE, fiber_entry)) {
		free(t);
		return -1;
	}
	t->id = (int)w->nthreads;
	t->fn = fn;
	t->arg = arg;
	t->cpu = -1;
	t->vr_cpu = -1;
	t->state = T_BLOCKED;
	for (unsigned c = 0; c < w->ncpus; c++)
		t->allowed[c / 64] |= 1ull << (c % 64);
	w->threads[w->nthreads++] = t;
	w->alive++;
	/* Started at a seeded offset under 1 us, placed when it arrives. */
	t->state = T_WAKING;
	t->gen = 1;
	sim_heap_push(w, w->now + sim_rand(w) % 1000, EV_WAKE, t->id, t->gen);
	return t->id;
}

int lb_sim_thread_fifo(struct lb_sim_world *w, int tid, int prio)
{
	if (tid < 0 || (unsigned)tid >= w->nthreads || prio < 1 || prio > 99)
		return -1;
	w->threads[tid]->fifo = true;
	w->threads[tid]->prio = prio;
	return 0;
}

int lb_sim_thread_pin(struct lb_sim_world *w, int tid, unsigned cpu)
{
	if (tid < 0 || (unsigned)tid >= w->nthreads || cpu >= w->ncpus)
		return -1;
	struct sim_thread *t = w->threads[tid];
	memset(t->allowed, 0, sizeof(t->allowed));
	t->allowed[cpu / 64] |= 1ull << (cpu % 64);
	return 0;
}

struct sim_thread *sim_thread_of(struct lb_sim_world *w, int tid)
{
	return tid >= 0 && (unsigned)tid < w->nthreads ? w->threads[tid] : NULL;
}

/* A new thread's first arrival picks its CPU then (after pinning). */
static void arrive(struct lb_sim_world *w, struct sim_thread *t)
{
	if (t->cpu < 0) {
		t->cpu = (int)sim_select_cpu(w, t);
		w->cpus[t->cpu].incoming++;
	}
	sim_arrive(w, t);
}

static void run_thread(struct lb_sim_world *w, struct sim_thread *t)
{
	t->doing = D_NONE;
	w->running = t;
	sim_fiber_switch(&w->main_fiber, &t->fiber, false);
	w->running = NULL;
	if (t->state == T_DONE)
		sim_fiber_free(&t->fiber);
}

static void timeout(struct lb_sim_world *w, struct sim_thread *t)
{
	if (t->state == T_RUNNING && t->doing == D_CONDWAIT) {
		sim_condwait_cancel(t);
		t->wait_result = LB_SIM_TIMEDOUT;
		run_thread(w, t);
	} else if (t->state == T_BLOCKED) {
		if (t->futex_addr)
			sim_futex_timeout(w, t);
		else
			sim_wake(w, t);  /* a sleep ended */
	}
}

static void dispatch(struct lb_sim_world *w, const struct sim_event *e)
{
	struct sim_thread *t = e->kind == EV_TICK ? NULL : w->threads[e->who];
	if (t && t->gen != e->gen)
		return;  /* stale: the thread moved on since */
	switch (e->kind) {
	case EV_RESUME:
		if (t->state == T_RUNNING && t->doing == D_CHARGE)
			run_thread(w, t);
		break;
	case EV_TICK:
		sim_tick(w, (unsigned)e->who);
		break;
	case EV_WAKE:
		if (t->state == T_WAKING)
			arrive(w, t);
		break;
	case EV_TIMEOUT:
		timeout(w, t);
		break;
	}
}

static void digest(struct lb_sim_world *w, const struct sim_event *e)
{
	uint64_t v[3] = {e->time, (uint64_t)e->kind, (uint64_t)(uint32_t)e->who};
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 8; b++) {
			w->digest ^= (v[i] >> (8 * b)) & 0xff;
			w->digest *= 0x100000001b3ull;  /* FNV-1a prime */
		}
}

unsigned lb_sim_run(struct lb_sim_world *w, uint64_t until)
{
	struct lb_sim_world *saved = current_world;
	current_world = w;
	if (!w->stats.events)
		for (unsigned c = 0; c < w->ncpus; c++)
			sim_heap_push(w, w->now + w->m.tick, EV_TICK, (int)c, 0);
	struct sim_event e;
	/* Only ticks left means nothing can change but fair preemptions; stop
	 * there when no thread is queued (all done, or all parked for good). */
	while (w->alive && !w->failed && w->heap.n && w->heap.ev[0].time <= until) {
		bool queued = false;
		for (unsigned c = 0; !w->pending && c < w->ncpus && !queued; c++)
			queued = w->cpus[c].rq != NULL;
		if (!w->pending && !queued)
			break;
		sim_heap_pop(&w->heap, &e);
		if (e.kind != EV_TICK)
			w->pending--;
		w->now = e.time;
		w->stats.events++;
		digest(w, &e);
		dispatch(w, &e);
	}
	current_world = saved;
	return w->alive;
}

uint64_t lb_sim_world_now(const struct lb_sim_world *w)
{
	return w->now;
}

uint64_t lb_sim_digest(const struct lb_sim_world *w)
{
	return w->digest;
}

struct lb_sim_stats lb_sim_stats(const struct lb_sim_world *w)
{
	return w->stats;
}
