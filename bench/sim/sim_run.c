/* SPDX-License-Identifier: MIT */
/*
 * sim_run.c - one `lockbench sim` cell on the engine: a world made from
 * the machine file and the seed; an init thread that initialises the lock
 * (inside the simulation, so a lock's calibration reads virtual time);
 * then one virtual thread per asked thread, each allowed the first `cpus`
 * CPUs, that sets up its lock context, sleeps until the window opens (the
 * start barrier: all arrive together, as bench's threads leave theirs) and
 * loops lock / critical section / unlock / parallel work until the window
 * closes.
 *
 * The critical section checks the lock: a holder mark (two threads inside
 * at once is a violation) and a counter read before the section's work and
 * written after it (a lost update shows when two overlapped).  Both are
 * plain memory of this file, which is compiled natively: they cost no
 * virtual time and are no part of the lock's coherence traffic.
 */
#include "sim_cell.h"
#include "lb_stop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The window opens this long after the workers start: long enough for
 * every thread to set its affinity and context (a few system calls). */
#define SIMB_START_NS 100000u
/* The run stops to look for an interrupt this often (simulated time). */
#define SIMB_SLICE_NS 1000000u

struct simb_state {
	const struct lb_simb_config *cfg;
	const struct lb_lock_ops *ops;
	void *lock;
	unsigned char *tctx;      /* threads x ctx_stride */
	size_t ctx_stride;
	unsigned int threads, cpus;
	uint64_t start, end;      /* the window, virtual ns */
	int holder;               /* the thread inside the lock, -1: none */
	uint64_t counter, violations;
	uint64_t all;             /* acquisitions, in the window or not */
	uint64_t released_at;     /* the last unlock's time */
	uint64_t handover_sum, handovers;
	uint64_t *acquires;       /* per thread, in the window */
	int init_err;
};

static struct simb_state st; /* one cell at a time: one host thread runs it */

static void *tctx_of(unsigned int i)
{
	return st.ctx_stride ? st.tctx + (size_t)i * st.ctx_stride : NULL;
}

static void allow_first_cpus(void);

static void init_thread(void *arg)
{
	(void)arg;
	allow_first_cpus(); /* what the lock sees of the CPUs at init */
	st.init_err = st.ops->init ? st.ops->init(st.lock) : 0;
}

static void allow_first_cpus(void)
{
	unsigned int list[LB_SIM_MAX_CPUS];
	for (unsigned int c = 0; c < st.cpus; c++)
		list[c] = c;
	lb_sim_set_affinity(list, st.cpus);
}

/* One acquisition: the holder mark and the counter (see the header). */
static void critical_section(unsigned int id, uint64_t asked)
{
	uint64_t now = lb_sim_now();
	bool in_window = asked >= st.start && asked < st.end;
	if (st.holder != -1)
		st.violations++;
	st.holder = (int)id;
	if (in_window) {
		st.acquires[id]++;
		if (st.released_at > asked) { /* it waited through a release */
			st.handover_sum += now - st.released_at;
			st.handovers++;
		}
	}
	st.all++;
	uint64_t v = st.counter;
	lb_sim_spend(st.cfg->cs_ns); /* a yield point even at 0 ns */
	st.counter = v + 1;
	if (st.holder == (int)id)
		st.holder = -1;
	st.released_at = lb_sim_now();
}

static void worker(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	void *ctx = tctx_of(id);
	allow_first_cpus();
	if (st.ops->thread_init && st.ops->thread_init(ctx, id))
		return; /* counted as no acquisitions; the report shows 0 */
	if (lb_sim_now() < st.start)
		lb_sim_sleep(st.start - lb_sim_now());
	while (lb_sim_now() < st.end) {
		uint64_t asked = lb_sim_now();
		st.ops->lock(st.lock, ctx);
		critical_section(id, asked);
		st.ops->unlock(st.lock, ctx);
		lb_sim_spend(st.cfg->par_ns);
	}
	if (st.ops->thread_fini)
		st.ops->thread_fini(ctx);
}

static double host_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill_result(struct lb_sim_world *w, struct lb_simb_cell *out)
{
	uint64_t min = UINT64_MAX, max = 0, total = 0;
	for (unsigned int i = 0; i < st.threads; i++) {
		total += st.acquires[i];
		min = st.acquires[i] < min ? st.acquires[i] : min;
		max = st.acquires[i] > max ? st.acquires[i] : max;
	}
	struct lb_sim_stats s = lb_sim_stats(w);
	out->acquires = total;
	out->acquires_per_s = (double)total * 1e9 / (double)st.cfg->duration_ns;
	out->handovers = st.handovers;
	out->handover_ns = st.handovers ? (double)st.handover_sum / (double)st.handovers : 0;
	out->fairness = max ? (double)min / (double)max : 0;
	out->events = s.events;
	out->transfers = s.transfers;
	out->switches = s.switches;
	out->wakeups = s.wakeups;
	out->sim_ns = lb_sim_world_now(w);
	out->violations = st.violations;
	out->digest = lb_sim_digest(w);
}

/* The world's part of a cell; 0, or an errno value. */
static int run_world(struct lb_sim_world *w, struct lb_simb_cell *out)
{
	if (lb_sim_spawn(w, init_thread, NULL) < 0)
		return ENOMEM;
	if (lb_sim_run(w, UINT64_MAX) != 0 || st.init_err)
		return st.init_err ? st.init_err : EIO;
	st.start = lb_sim_world_now(w) + SIMB_START_NS;
	st.end = st.start + st.cfg->duration_ns;
	for (unsigned int i = 0; i < st.threads; i++)
		if (lb_sim_spawn(w, worker, (void *)(uintptr_t)i) < 0)
			return ENOMEM;
	/* Every thread leaves after the window, once its last acquisition
	 * ends; one still alive twice the window later never got the lock. */
	uint64_t limit = st.end + st.cfg->duration_ns, at = lb_sim_world_now(w);
	unsigned int alive = 1;
	while (alive && at < limit) {
		/* In slices of simulated time, so an interrupt ends a long cell. */
		at = limit - at > SIMB_SLICE_NS ? at + SIMB_SLICE_NS : limit;
		alive = lb_sim_run(w, at);
		if (alive && lb_stop_signal())
			return EINTR;
	}
	fill_result(w, out);
	/* Every acquisition added one to the counter: fewer is a lost update. */
	out->counter_ok = st.counter == st.all && st.violations == 0;
	return alive ? EDEADLK : 0;
}

int lb_simb_run_cell(const struct lb_simb_config *cfg, const struct lb_lock_ops *ops,
		     unsigned int threads, unsigned int cpus, struct lb_simb_cell *out)
{
	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	out->lock = ops->name;
	out->nolock = ops->flags & LB_LOCK_F_NOLOCK;
	out->threads = threads;
	out->cpus = cpus;
	st.cfg = cfg;
	st.ops = ops;
	st.threads = threads;
	st.cpus = cpus;
	st.holder = -1;
	size_t align = ops->lock_align > 64 ? ops->lock_align : 64;
	st.ctx_stride = (ops->thread_ctx_size + 63) / 64 * 64;
	st.lock = aligned_alloc(align, (ops->lock_size + align - 1) / align * align);
	st.tctx = st.ctx_stride ? aligned_alloc(64, st.ctx_stride * threads) : NULL;
	st.acquires = calloc(threads, sizeof(*st.acquires));
	struct lb_sim_world *w = lb_sim_create(&cfg->machine, cfg->seed);
	int err = 0;
	if (!st.lock || (st.ctx_stride && !st.tctx) || !st.acquires || !w) {
		err = ENOMEM;
	} else {
		memset(st.lock, 0, ops->lock_size);
		if (st.tctx)
			memset(st.tctx, 0, st.ctx_stride * threads);
		double t0 = host_s(CLOCK_MONOTONIC), c0 = host_s(CLOCK_PROCESS_CPUTIME_ID);
		err = run_world(w, out);
		out->host_s = host_s(CLOCK_MONOTONIC) - t0;
		out->host_cpu_s = host_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		/* Outside the world the interposed loads are plain loads. */
		if (ops->counters)
			out->ncounters = ops->counters(st.lock, out->counters, LB_MAX_COUNTERS);
	}
	if (w)
		lb_sim_destroy(w);
	free(st.lock);
	free(st.tctx);
	free(st.acquires);
	return err;
}
