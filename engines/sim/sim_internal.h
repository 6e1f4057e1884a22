/* SPDX-License-Identifier: MIT */
/*
 * sim_internal.h - the simulator's state, shared by its files only (the
 * public calls are in sim.h).  One host thread owns a world; nothing here
 * is touched concurrently, so no field is atomic.
 */
#ifndef LB_SIM_INTERNAL_H
#define LB_SIM_INTERNAL_H

#include "sim.h"
#include "sim_fiber.h"

#define SIM_MASK_WORDS (LB_SIM_MAX_CPUS / 64)

enum sim_thread_state {
	T_RUNNING,   /* current on its CPU */
	T_RUNNABLE,  /* on its CPU's run queue */
	T_BLOCKED,   /* on a futex queue or asleep */
	T_WAKING,    /* woken; arrives on its CPU after the wake-up latency */
	T_DONE,
};

/* What a current thread is doing until its next event. */
enum sim_doing {
	D_CHARGE,    /* paying a cost: resumes at resume_at */
	D_CONDWAIT,  /* parked on a line's waiter list */
	D_NONE,      /* running its own code (inside a call) */
};

struct sim_line;

struct sim_thread {
	int id;
	lb_sim_fn fn;
	void *arg;
	struct sim_fiber fiber;
	enum sim_thread_state state;
	enum sim_doing doing;
	int cpu;                 /* current, queued-on, or last CPU */
	uint64_t allowed[SIM_MASK_WORDS];
	bool fifo;               /* own class: FIFO, else fair */
	int prio;                /* own FIFO priority (1..99) */
	int boost;               /* PI boost: FIFO priority, 0 for none */
	int pi_prio;             /* PI futexes' boost: their top waiters' (sim_pi.c) */
	struct sim_futex *pi_owned;    /* the PI futexes it owns that have waiters */
	struct sim_futex *pi_blocked;  /* the PI futex it waits on, or NULL */
	uint64_t vruntime;       /* fair class; in vr_cpu's frame */
	int vr_cpu;
	uint64_t exec_start;     /* when its running time was last accounted */
	uint64_t run_ns;         /* its CPU time up to exec_start */
	uint64_t slice_start;    /* when it was last switched in */
	uint64_t gen;            /* events carrying another gen are stale */
	uint64_t resume_at;      /* D_CHARGE: when the cost is paid */
	uint64_t remaining;      /* a cost left when it was preempted */
	enum lb_sim_wait_result wait_result;
	struct sim_line *wait_line;
	const uint32_t *futex_addr;
	int futex_result;
	int preempt_count;
	bool need_resched;
	bool started;            /* its fiber has run (entered from the host's context) */
	struct sim_thread *rq_next;  /* run queue */
	struct sim_thread *q_next;   /* a futex queue or a line's waiters */
};

struct sim_cpu {
	unsigned socket, core;       /* core: global core number (SMT siblings share it) */
	struct sim_thread *curr;
	struct sim_thread *last;     /* the last thread it ran (no switch cost to it) */
	struct sim_thread *rq;       /* FIFO by priority first, then fair by vruntime */
	unsigned nr_queued, incoming;
	uint64_t min_vruntime;
	bool busy;                   /* it has a current thread (since busy_since) */
	uint64_t busy_since;
};

struct sim_line {
	uintptr_t tag;               /* address / LB_SIM_LINE + 1 */
	int owner;                   /* CPU holding it exclusive, -1 for none */
	uint64_t sharers[SIM_MASK_WORDS];
	uint64_t busy_until;
	struct sim_thread *waiters;
};

struct sim_futex {
	uintptr_t addr;
	struct sim_thread *queue;    /* priority order, FIFO within one priority */
	/* A PI futex with waiters (sim_pi.c): the owner the kernel knows
	 * (the TID in the word when a waiter arrived, or the thread it was
	 * handed to), and the next futex that owner owns. */
	struct sim_thread *pi_owner;
	struct sim_futex *pi_next;
};

/* An open-addressing map from a key to an object (lines, futex queues). */
struct sim_map {
	uintptr_t *keys;
	void **vals;
	size_t cap, used;
};

enum sim_event_kind { EV_RESUME, EV_TICK, EV_WAKE, EV_TIMEOUT };

struct sim_event {
	uint64_t time, seq, gen;
	int who;                     /* a thread id, or a CPU for EV_TICK */
	enum sim_event_kind kind;
};

/* The event queue: a binary heap, plus one event staged outside it (the
 * newest push, while the slot is free), so that a push followed by a pop
 * is one sift at most (sim_heap.c). */
struct sim_heap {
	struct sim_event *ev;
	size_t n, cap;
	uint64_t seq;
	bool staged;                 /* `stage` holds an event */
	struct sim_event stage;
};

/* A slot of the lines' lookup cache: a tag (0: empty) and its line. */
struct sim_line_slot {
	uintptr_t tag;
	struct sim_line *line;
};

#define SIM_LINE_CACHE 64            /* slots, a power of two */

struct lb_sim_world {
	struct lb_sim_machine m;
	unsigned ncpus;
	unsigned mask_words;         /* the words of a CPU mask that can have a bit set */
	struct sim_cpu *cpus;
	struct sim_thread **threads;
	unsigned nthreads, cap_threads, alive;
	struct sim_heap heap;
	uint64_t pending;            /* events other than ticks in the heap */
	struct sim_map lines, futexes;
	/* Direct-mapped in front of `lines` (a line lives as long as its
	 * world, so a slot never points at a freed one). */
	struct sim_line_slot line_cache[SIM_LINE_CACHE];
	uint64_t now, rng, digest;
	struct lb_sim_stats stats;
	struct sim_fiber main_fiber;
	struct sim_thread *running;  /* the coroutine now executing, or NULL */
	struct sim_thread *handoff;  /* a thread's first run, for the host's context */
	struct sim_thread *finished; /* ended: its stack to free from the host's context */
	uint64_t until;              /* lb_sim_run's end */
	_Atomic(unsigned int) spin_relax_ps; /* lb_sim_spin_cache's word */
	bool failed;                 /* allocation failure: the run stops */
};

/* sim_world.c */
/* The world lb_sim_run is running: the thread-side calls find it here.
 * One host thread runs the simulator, so nothing else reads it. */
extern struct lb_sim_world *sim_current_world;
static inline struct lb_sim_world *sim_world(void)  /* the world now running (thread side) */
{
	return sim_current_world;
}
static inline struct sim_thread *sim_self(void)
{
	return sim_current_world->running;
}
struct sim_thread *sim_thread_of(struct lb_sim_world *w, int tid);  /* NULL: unknown */
void sim_charge(struct sim_thread *t, uint64_t cost);
void sim_switch_out(struct sim_thread *t);
uint64_t sim_rand(struct lb_sim_world *w);

/* sim_heap.c */
/* The next event to pop, or NULL for none. */
static inline const struct sim_event *sim_heap_top(const struct sim_heap *h)
{
	if (!h->staged)
		return h->n ? &h->ev[0] : NULL;
	if (!h->n)
		return &h->stage;
	const struct sim_event *a = &h->stage, *b = &h->ev[0];
	bool staged_first = a->time != b->time ? a->time < b->time : a->seq < b->seq;
	return staged_first ? a : b;
}
int sim_heap_push(struct lb_sim_world *w, uint64_t time, enum sim_event_kind kind, int who,
		  uint64_t gen);
bool sim_heap_pop(struct sim_heap *h, struct sim_event *out);
void sim_heap_free(struct sim_heap *h);

/* sim_map.c */
void *sim_map_get(const struct sim_map *mp, uintptr_t key);
int sim_map_put(struct sim_map *mp, uintptr_t key, void *val);
void sim_map_free(struct sim_map *mp, bool free_vals);

/* sim_coherence.c */
/* The transfer latency between two CPUs' caches (0: the same CPU). */
static inline uint64_t sim_distance(const struct lb_sim_world *w, unsigned a, unsigned b)
{
	const struct sim_cpu *x = &w->cpus[a], *y = &w->cpus[b];
	if (a == b)
		return 0;
	if (x->core == y->core)
		return w->m.same_core;
	return x->socket == y->socket ? w->m.same_socket : w->m.cross_socket;
}
struct sim_line *sim_line_lookup(struct lb_sim_world *w, uintptr_t tag);
/* The directory entry of addr's line, made on first use; NULL (and the
 * world failed) without memory.  Inline: one per simulated access. */
static inline struct sim_line *sim_line_of(struct lb_sim_world *w, const void *addr)
{
	uintptr_t tag = (uintptr_t)addr / LB_SIM_LINE + 1;  /* + 1: 0 marks a free slot */
	struct sim_line_slot *s = &w->line_cache[tag % SIM_LINE_CACHE];
	return s->tag == tag ? s->line : sim_line_lookup(w, tag);
}

/* sim_sched.c */
static inline bool sim_mask_has(const uint64_t *mask, unsigned cpu)
{
	return (mask[cpu / 64] >> (cpu % 64)) & 1;
}
int sim_eff_prio(const struct sim_thread *t);
void sim_account(struct lb_sim_world *w, struct sim_thread *t);
void sim_schedule(struct lb_sim_world *w, unsigned cpu);
void sim_enqueue(struct lb_sim_world *w, struct sim_thread *t, unsigned cpu);
void sim_dequeue(struct lb_sim_world *w, struct sim_thread *t);
void sim_preempt(struct lb_sim_world *w, unsigned cpu);
void sim_check_preempt(struct lb_sim_world *w, unsigned cpu, struct sim_thread *t);
void sim_tick(struct lb_sim_world *w, unsigned cpu);
void sim_wake(struct lb_sim_world *w, struct sim_thread *t);
void sim_arrive(struct lb_sim_world *w, struct sim_thread *t);
void sim_block(struct lb_sim_world *w, struct sim_thread *t);
unsigned sim_select_cpu(struct lb_sim_world *w, struct sim_thread *t);
void sim_reprioritise(struct lb_sim_world *w, struct sim_thread *t);

void sim_condwait_cancel(struct sim_thread *t);

/* sim_futex.c */
void sim_futex_timeout(struct lb_sim_world *w, struct sim_thread *t);
void sim_futex_requeue(struct lb_sim_world *w, struct sim_thread *t);
/* The queue of a futex address (made on first use when make; NULL and the
 * world failed without memory), and a waiter's place in one. */
struct sim_futex *sim_futex_queue(struct lb_sim_world *w, const uint32_t *addr, bool make);
void sim_futex_insert(struct sim_futex *q, struct sim_thread *t);
void sim_futex_unlink(struct sim_futex *q, struct sim_thread *t);

/* sim_pi.c */
/* t's PI futexes' top waiters changed: recompute its boost and follow the
 * chain of owners it is blocked on. */
void sim_pi_update(struct lb_sim_world *w, struct sim_thread *t);

#endif /* LB_SIM_INTERNAL_H */
