/* SPDX-License-Identifier: MIT */
/* evidence.c - the watchdog's evidence over a window (see evidence.h). */
#include "evidence.h"
#include "clock.h"
#include "lb_atomic.h"
#include "lb_steal.h"
#include "lb_tasksched.h"
#include "lb_time.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int lb_evidence_init(struct lb_evidence_window *w, int nthreads)
{
	*w = (struct lb_evidence_window){ .nthreads = nthreads, .steal0 = -1 };
	w->at0 = calloc((size_t)nthreads, sizeof(*w->at0));
	w->at1 = calloc((size_t)nthreads, sizeof(*w->at1));
	w->threads = calloc((size_t)nthreads, sizeof(*w->threads));
	w->seen_spins = calloc((size_t)nthreads, sizeof(*w->seen_spins));
	w->moved_at = calloc((size_t)nthreads, sizeof(*w->moved_at));
	return w->at0 && w->at1 && w->threads && w->seen_spins && w->moved_at ? 0 : -1;
}

void lb_evidence_free(struct lb_evidence_window *w)
{
	free(w->at0);
	free(w->at1);
	free(w->threads);
	free(w->seen_spins);
	free(w->moved_at);
	w->at0 = w->at1 = NULL;
	w->threads = NULL;
	w->seen_spins = w->moved_at = NULL;
}

static void snap_thread(const struct lb_torture_thread *t, struct lb_evidence_snap *s)
{
	/* Racy snapshot, as the dump's: each field may be from a slightly
	 * different moment, which the window's length makes immaterial. */
	s->state = atomic_load_explicit(&t->state, memory_order_relaxed);
	s->since = atomic_load_explicit(&t->state_since_ns, memory_order_relaxed);
	s->spins = atomic_load_explicit(&t->spins, memory_order_relaxed);
	s->run_state = '?';
	s->sched_known = false;
	int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
	if (!tid || !t->created)
		return;
	/* /proc/TID/task/TID: a thread of ours, or (-P) a worker process. */
	struct lb_tasksched ts;
	lb_tasksched_read(tid, tid, &ts);
	s->run_state = ts.run_state;
	s->sched_known = ts.known;
	s->cpu_ns = ts.cpu_ns;
	s->delay_ns = ts.delay_ns;
}

static long long total_acquisitions(const struct lb_torture_run *run)
{
	long long sum = 0;
	for (int i = 0; i < run->nthreads; i++)
		sum += atomic_load_explicit(&run->threads[i].n_lock_acquired, memory_order_relaxed);
	return sum;
}

void lb_evidence_arm(struct lb_evidence_window *w, const struct lb_torture_run *run)
{
	w->t0 = lb_torture_now_ns();
	w->acq0 = total_acquisitions(run);
	w->steal0 = lb_steal_ticks_now();
	for (int i = 0; i < run->nthreads && i < w->nthreads; i++) {
		snap_thread(&run->threads[i], &w->at0[i]);
		w->seen_spins[i] = w->at0[i].spins;
		w->moved_at[i] = 0; /* not since the window opened */
	}
	w->armed = true;
}

void lb_evidence_tick(struct lb_evidence_window *w, const struct lb_torture_run *run)
{
	if (!w->armed)
		return;
	uint64_t now = lb_torture_now_ns();
	for (int i = 0; i < run->nthreads && i < w->nthreads; i++) {
		/* Racy read of the owner's counter: only whether it moved. */
		uint64_t n = atomic_load_explicit(&run->threads[i].spins, memory_order_relaxed);
		if (n != w->seen_spins[i]) {
			w->seen_spins[i] = n;
			w->moved_at[i] = now;
		}
	}
}

static bool in_lock(int state)
{
	return state == LB_TORTURE_WAITING || state == LB_TORTURE_HOLDING || state == LB_TORTURE_HUNG;
}

static uint64_t grown(uint64_t before, uint64_t after)
{
	return after > before ? after - before : 0;
}

void lb_evidence_gather(struct lb_evidence_window *w, const struct lb_torture_run *run,
			struct lb_verdict_evidence *e)
{
	lb_evidence_tick(w, run);
	uint64_t now = lb_torture_now_ns();
	int n = 0, released = 0;
	for (int i = 0; i < run->nthreads && i < w->nthreads; i++) {
		const struct lb_torture_thread *t = &run->threads[i];
		struct lb_evidence_snap *a = &w->at0[i], *b = &w->at1[i];
		snap_thread(t, b);
		bool same = a->state == b->state && a->since == b->since;
		/* A holder that let go: the lock's state changed meanwhile. */
		if (!same && (a->state == LB_TORTURE_HOLDING || a->state == LB_TORTURE_HUNG))
			released++;
		/* Only a wait or hold that spans the whole window. */
		if (!in_lock(b->state) || !same)
			continue;
		w->threads[n++] = (struct lb_verdict_thread){
			.writer = t->writer, .id = t->id,
			.holding = b->state != LB_TORTURE_WAITING,
			.hung = b->state == LB_TORTURE_HUNG,
			.run_state = b->run_state,
			.run_state0 = a->run_state,
			.sched_known = a->sched_known && b->sched_known,
			.cpu_ns = grown(a->cpu_ns, b->cpu_ns),
			.delay_ns = grown(a->delay_ns, b->delay_ns),
			.spins = grown(a->spins, b->spins),
			.still_ns = now - (w->moved_at[i] ? w->moved_at[i] : w->t0),
		};
	}
	*e = (struct lb_verdict_evidence){
		.window_ns = now > w->t0 ? now - w->t0 : 0,
		.acquisitions = total_acquisitions(run) - w->acq0,
		.released = released,
		.steal_s = lb_steal_seconds(w->steal0, lb_steal_ticks_now()),
		.ncpus = run->cfg.ncpus,
		.normal_spins_per_s = run->normal_spins_per_s,
		.nthreads = n,
		.threads = w->threads,
	};
}

struct lb_verdict lb_evidence_judge(struct lb_evidence_window *w, const struct lb_torture_run *run,
				    struct lb_verdict_evidence *e)
{
	lb_evidence_gather(w, run, e);
	w->armed = false;
	return lb_verdict_judge(e);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * LB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

#define CALIBRATE_CPU_NS (20 * 1000000ull)
#define CALIBRATE_WALL_NS (200 * 1000000ull)

double lb_evidence_calibrate_spins(void)
{
	_Atomic uint64_t count = 0;
	uint64_t c0 = thread_cpu_ns(), c1 = c0, wall = lb_torture_now_ns();
	if (!c0)
		return 0;
	do {
		/* The locks' spin as locktorture compiles it: the count's load
		 * and store (relaxed: nobody reads it), then the pause hint;
		 * bounded by the CPU and the wall time it may take. */
		for (int i = 0; i < 1024; i++) {
			atomic_store_explicit(&count,
					      atomic_load_explicit(&count, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			lb_cpu_relax();
		}
		c1 = thread_cpu_ns();
	} while (c1 >= c0 && c1 - c0 < CALIBRATE_CPU_NS &&
		 lb_torture_now_ns() - wall < CALIBRATE_WALL_NS);
	if (c1 <= c0)
		return 0;
	return (double)atomic_load_explicit(&count, memory_order_relaxed) / ((double)(c1 - c0) / 1e9);
}
