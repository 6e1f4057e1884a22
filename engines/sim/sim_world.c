/* SPDX-License-Identifier: MIT */
/*
 * sim_world.c - a world (its CPUs, threads and event queue) and the event
 * loop that runs it in virtual time, in one host thread.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

#define SIM_STACK_SIZE (256u * 1024u)

struct lb_sim_world *sim_current_world;  /* sim_internal.h */

bool lb_sim_inside(void)
{
	return sim_current_world && sim_current_world->running;
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
	w->mask_words = (w->ncpus + 63) / 64;
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

/* A thread's first run starts here, switched to from the host's context
 * (run_thread), so the address sanitizer learns that context's stack. */
static void fiber_entry(void)
{
	struct lb_sim_world *w = sim_current_world;
	struct sim_thread *t = w->running;
	sim_fiber_started(&w->main_fiber);
	t->fn(t->arg);
	w = sim_current_world;
	thread_exit(w, t);
	/* The host's context frees this stack: nothing may run on it now. */
	w->finished = t;
	w->handoff = NULL;
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

/* t is about to run its own code: the event loop's hand-over to it. */
static void enter(struct lb_sim_world *w, struct sim_thread *t)
{
	t->doing = D_NONE;
	w->running = t;
}

/* From the host's context: run t until a thread switches back here (one
 * whose next event is one the host's context must run, or that ended). */
static void run_thread(struct lb_sim_world *w, struct sim_thread *t)
{
	t->started = true;
	enter(w, t);
	sim_fiber_switch(&w->main_fiber, &t->fiber, false);
	w->running = NULL;
	if (w->finished) {
		sim_fiber_free(&w->finished->fiber);
		w->finished = NULL;
	}
}

/* An event whose thread is to run now: that thread, else NULL. */
static struct sim_thread *timeout(struct lb_sim_world *w, struct sim_thread *t)
{
	if (t->state == T_RUNNING && t->doing == D_CONDWAIT) {
		sim_condwait_cancel(t);
		t->wait_result = LB_SIM_TIMEDOUT;
		return t;
	}
	if (t->state == T_BLOCKED) {
		if (t->futex_addr)
			sim_futex_timeout(w, t);
		else
			sim_wake(w, t);  /* a sleep ended */
	}
	return NULL;
}

/* Run one event; the thread it resumes, or NULL when it resumes none. */
static struct sim_thread *dispatch(struct lb_sim_world *w, const struct sim_event *e)
{
	struct sim_thread *t = e->kind == EV_TICK ? NULL : w->threads[e->who];
	if (t && t->gen != e->gen)
		return NULL;  /* stale: the thread moved on since */
	switch (e->kind) {
	case EV_RESUME:
		if (t->state == T_RUNNING && t->doing == D_CHARGE)
			return t;
		break;
	case EV_TICK:
		sim_tick(w, (unsigned)e->who);
		break;
	case EV_WAKE:
		if (t->state == T_WAKING)
			arrive(w, t);
		break;
	case EV_TIMEOUT:
		return timeout(w, t);
	}
	return NULL;
}

#define SIM_FNV_PRIME 0x100000001b3ull

/* FNV-1a over the low n bytes of v, lowest first. */
static inline uint64_t fnv1a_bytes(uint64_t d, uint64_t v, unsigned n)
{
	for (unsigned b = 0; b < n; b++)
		d = (d ^ ((v >> (8 * b)) & 0xff)) * SIM_FNV_PRIME;
	return d;
}

/* FNV-1a over all 8 bytes of v when only its low n can be set: a zero byte
 * only multiplies by the prime, so the 8 - n above are one multiply by
 * the prime's power (pow, SIM_FNV_PRIME^(8 - n) mod 2^64). */
static inline uint64_t fnv1a_low(uint64_t d, uint64_t v, unsigned n, uint64_t pow)
{
	return fnv1a_bytes(d, v, n) * pow;
}

#define SIM_FNV_PRIME_3 0x08a97b0004e7feabull  /* SIM_FNV_PRIME^3 */
#define SIM_FNV_PRIME_4 0x9ffaac085635bc91ull
#define SIM_FNV_PRIME_6 0xdc966432edf1c639ull
#define SIM_FNV_PRIME_7 0xc5527b8a51d3d2dbull

/*
 * The digest of every event run: FNV-1a over its time, kind and id as
 * 8-byte little-endian values (offset basis in lb_sim_create).  The
 * bytes above a value's set ones (a time under 2^32 or 2^40 ns, a kind
 * under 256, an id under 256 or 2^16: branches that go one way for a
 * whole run) are folded in one multiply: the same value in 6 dependent
 * steps instead of 24, which were most of the event loop's instructions.
 */
static inline void digest(struct lb_sim_world *w, const struct sim_event *e)
{
	uint64_t d = w->digest, t = e->time, k = (uint64_t)e->kind;
	uint64_t who = (uint64_t)(uint32_t)e->who;
	if ((t >> 32) == 0)
		d = fnv1a_low(d, t, 4, SIM_FNV_PRIME_4);
	else if ((t >> 40) == 0)
		d = fnv1a_low(d, t, 5, SIM_FNV_PRIME_3);
	else
		d = fnv1a_bytes(d, t, 8);
	d = k < 256 ? fnv1a_low(d, k, 1, SIM_FNV_PRIME_7) : fnv1a_bytes(d, k, 8);
	if (who < 256)
		d = fnv1a_low(d, who, 1, SIM_FNV_PRIME_7);
	else if (who < 65536)
		d = fnv1a_low(d, who, 2, SIM_FNV_PRIME_6);
	else
		d = fnv1a_bytes(d, who, 8);
	w->digest = d;
}

/* Whether the loop goes on: a thread alive, an event due by `until`, and
 * more than ticks to come (a tick alone changes nothing unless a thread
 * is queued: all done, or all parked for good, the run stops there). */
static bool may_continue(const struct lb_sim_world *w)
{
	const struct sim_event *top = sim_heap_top(&w->heap);
	if (!w->alive || w->failed || !top || top->time > w->until)
		return false;
	if (w->pending)
		return true;
	for (unsigned c = 0; c < w->ncpus; c++)
		if (w->cpus[c].rq)
			return true;
	return false;
}

static inline void count_event(struct lb_sim_world *w, const struct sim_event *e)
{
	w->now = e->time;
	w->stats.events++;
	digest(w, e);
}

/* Run events in order until one resumes a thread (returned: its turn to
 * run) or the run must stop (NULL).  Called from the host's context and
 * from a switching-out thread's alike: nothing here switches. */
static struct sim_thread *next_thread(struct lb_sim_world *w)
{
	struct sim_event e;
	while (may_continue(w)) {
		sim_heap_pop(&w->heap, &e);
		if (e.kind != EV_TICK)
			w->pending--;
		count_event(w, &e);
		struct sim_thread *t = dispatch(w, &e);
		if (t)
			return t;
	}
	return NULL;
}

/*
 * The running thread t stops until its next event (sim_charge, a wait or
 * a block pushed it, or its CPU was taken).  The events before it run
 * here, on t's stack, exactly as the host's loop would run them; then the
 * thread they resume runs: t itself without any switch, another started
 * thread by one switch straight to it (not two through the host's
 * context), and a thread's first run, or the run's end, through the host's
 * context (run_thread, lb_sim_run).
 */
void sim_switch_out(struct sim_thread *t)
{
	struct lb_sim_world *w = sim_current_world;
	w->running = NULL;
	struct sim_thread *n = next_thread(w);
	if (n == t) {
		enter(w, t);
		return;
	}
	if (n && n->started) {
		enter(w, n);
		sim_fiber_switch(&t->fiber, &n->fiber, false);
	} else {
		w->handoff = n;
		sim_fiber_switch(&t->fiber, &w->main_fiber, false);
	}
	/* Resumed: whoever switched here ran enter(w, t). */
}

/*
 * sim_charge's event, when it is certain to be the next one run: earlier
 * than every queued event (an equal time runs after them: it would be the
 * newest), due by `until`, no failure.  Then it runs here, as the loop would
 * (its insertion number taken, counted, digested), with no heap traffic
 * and no switch; true.  Else false: push it and switch out.
 */
static bool resume_now(struct lb_sim_world *w, struct sim_thread *t)
{
	const struct sim_event *top = sim_heap_top(&w->heap);
	if (w->failed || t->resume_at > w->until || (top && top->time <= t->resume_at))
		return false;
	struct sim_event e = {.time = t->resume_at, .seq = w->heap.seq++, .gen = t->gen,
			      .who = t->id, .kind = EV_RESUME};
	count_event(w, &e);
	enter(w, t);
	return true;
}

/* A yield point: first a reschedule marked while the thread ran, then the
 * cost, paid by resuming at now + cost (preemptible meanwhile). */
void sim_charge(struct sim_thread *t, uint64_t cost)
{
	struct lb_sim_world *w = sim_current_world;
	if (t->need_resched && t->preempt_count == 0) {
		t->need_resched = false;
		struct sim_cpu *c = &w->cpus[t->cpu];
		if (c->rq) {
			sim_preempt(w, (unsigned)t->cpu);
			sim_switch_out(t);
		}
	}
	t->gen++;
	t->doing = D_CHARGE;
	t->resume_at = w->now + cost;
	if (resume_now(w, t))
		return;
	sim_heap_push(w, t->resume_at, EV_RESUME, t->id, t->gen);
	sim_switch_out(t);
}

unsigned lb_sim_run(struct lb_sim_world *w, uint64_t until)
{
	struct lb_sim_world *saved = sim_current_world;
	sim_current_world = w;
	w->until = until;
	if (!w->stats.events)
		for (unsigned c = 0; c < w->ncpus; c++)
			sim_heap_push(w, w->now + w->m.tick, EV_TICK, (int)c, 0);
	for (;;) {
		/* A thread that switched here has run the loop as far as
		 * handoff: a thread's first run, or NULL (the end or a
		 * finished thread: the loop goes on here if it may). */
		struct sim_thread *t = w->handoff ? w->handoff : next_thread(w);
		w->handoff = NULL;
		if (!t)
			break;
		run_thread(w, t);
	}
	sim_current_world = saved;
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
	struct lb_sim_stats s = w->stats;
	for (unsigned i = 0; i < w->ncpus; i++)
		if (w->cpus[i].busy)
			s.busy_ns += w->now - w->cpus[i].busy_since;  /* busy until now */
	return s;
}
