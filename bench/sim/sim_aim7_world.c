/* SPDX-License-Identifier: MIT */
/*
 * sim_aim7_world.c - one aim7 load point on the simulator, compiled over
 * sim_aim7_interpose.h (doc/sim.md, "aim7 on the simulator").  As
 * bench/aim7/aim7_run.c does with threads: `users` children, each with a
 * helper (the other end of its shell pipelines), all virtual threads of
 * one world on the machine file's CPUs under the engine's fair scheduler.
 * An init thread sets the simulated kernel up inside the world (a lock's
 * spin calibration reads the virtual clock); the children build their
 * images, sleep to a common start and cycle through their shuffled job
 * lists until re-aim's alarm (the window, virtual), which cuts the job in
 * flight as aim7's does (aim_kwork_n reads the virtual clock).  The
 * kernel's work is the cost table's time as lb_sim_spend (aim_kwork_burn
 * below), its journal waits and pipe waits are the engine's sleeps and
 * futexes.  Afterwards, on the host: aim7's invariant check (kern_check.c),
 * the lock's counters, the figures in virtual time.
 */
#include "sim_aim7.h"
#include "task.h"
#include "sim_hooks.h"
#include "lb_futex.h"
#include "lb_stop.h"
#include "lb_registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The children start this long after the kernel is set up: they build
 * their images (an exec and a fork in the kernel) before it. */
#define SIMAIM_START_NS 2000000u
/* The host looks for an interrupt and reports progress this often. */
#define SIMAIM_SLICE_NS 20000000u
/* After the window, a point whose threads acquired no lock and ended no
 * job for this long is stuck (aim7's watchdog judges the same evidence,
 * stall.c; here no thread can be "slow for want of a CPU" for a whole
 * virtual second).  The cleanup after the alarms is a convoy on the
 * directory's i_mutex: 1000 users on opteron-48 end 3.6 s after a 2-s
 * window, progressing all along. */
#define SIMAIM_STALL_NS 1000000000u
/* And a bound on the host's cost whatever happens: the window plus this. */
#define SIMAIM_AFTER_MAX_NS 60000000000u

struct wchild {
	struct aim_task task;
	struct aim_helper helper;
	uint16_t *order;
	unsigned int jobs_done, jobs_cut;
	uint64_t start_ns, end_ns;
	int err;
};

/* What the virtual threads touch lives in line-aligned allocations, never
 * in this file's static data: the engine charges accesses by cache line,
 * so an object's line must not move with the program's layout (a static
 * kernel whose wrappers' counters shared lines with their neighbours gave
 * 80k Jobs/min in one build and 51k in the next, same seed). */
struct wshared {
	struct aim_kernel k;
	_Atomic int stop;
};

static struct {
	const struct lb_simaim_config *cfg;
	struct wshared *sh;
	struct wchild *child;
	unsigned int users, njobs;
	unsigned int counts[AIM_MAX_WORKFILE_TESTS];
	uint64_t start;
	int init_err;
} W; /* one point at a time: one host thread runs the simulator */

/* The cost table's CPU time of a kernel op: virtual CPU, preemptible. */
uint64_t aim_kwork_burn(double ns, double loops_per_ns)
{
	(void)loops_per_ns;
	if (ns >= 1)
		lb_sim_spend((uint64_t)ns);
	return 0;
}

/* aim7_run.c's ctx_setup: per-role lock contexts (roles with one lock
 * type share one), made by the thread itself, so each mutex task record is
 * bound to its virtual thread (sim_hooks.c). */
static int ctx_setup(struct aim_ctx *c, unsigned int index)
{
	memset(c, 0, sizeof(*c));
	c->k = &W.sh->k;
	c->rng = ((uint64_t)index + 1) * 0x9e3779b97f4a7c15ull;
	c->cycles_per_ns = 1.0; /* lb_cycles() is the virtual ns clock here */
	for (int r = 0; r < AIM_NROLES; r++) {
		int same = -1;
		for (int q = 0; q < r; q++)
			if (W.sh->k.ops[q] == W.sh->k.ops[r])
				same = q;
		if (same >= 0) {
			c->tctx[r] = c->tctx[same];
			continue;
		}
		const struct lb_lock_ops *ops = W.sh->k.ops[r];
		if (!ops->thread_ctx_size)
			continue;
		c->tctx[r] = lb_thread_ctx_alloc(ops);
		if (!c->tctx[r])
			return ENOMEM;
		if (ops->thread_init && ops->thread_init(c->tctx[r], index))
			return EINVAL;
	}
	return 0;
}

static void init_thread(void *arg)
{
	(void)arg;
	W.init_err = aim_kernel_init(&W.sh->k, W.cfg->ops, W.users, &W.sh->stop);
	W.sh->k.sizing = &W.cfg->sizing;
}

/* The helper: the reading side of its child's shell pipelines. */
static void helper_main(void *arg)
{
	struct wchild *ch = arg;
	struct aim_helper *h = &ch->helper;
	uint32_t seen = 0;
	if (ctx_setup(&h->ctx, W.users + ch->task.index))
		ch->err = ENOMEM;
	for (;;) {
		/* acquire: pairs with the release in aim_shell_pipeline. */
		uint32_t cmd = atomic_load_explicit(&h->cmd, memory_order_acquire);
		if (cmd == seen) {
			aim_wait_change(&h->cmd, seen);
			continue;
		}
		seen = cmd;
		if (h->bytes == UINT32_MAX)
			break;
		if (!ch->err)
			aim_pipe_read(&h->ctx, h->pipe, h->bytes);
		/* release: the child reads our counters after seeing it. */
		atomic_fetch_add_explicit(&h->done, 1, memory_order_release);
		lb_futex_wake(&h->done, 1);
	}
}

/* The job list until re-aim's alarm (aim7_run.c's child loop, fixed
 * window only). */
static void run_jobs(struct wchild *ch)
{
	struct aim_task *t = &ch->task;
	const struct lb_simaim_config *cfg = W.cfg;
	uint64_t alarm_at = ch->start_ns + cfg->window_ns;
	t->ctx.alarm_ns = alarm_at;
	t->ctx.cut = false;
	for (unsigned int j = 0;; j++) {
		if (lb_now_ns() >= alarm_at)
			break;
		unsigned int slot = ch->order[j % W.njobs];
		/* Only system tests run here (sim_aim7.c refuses the others). */
		const struct aim_test *test = &aim_sys_tests[cfg->wf.test[slot]];
		t->ctx.pad_frac = slot < AIM_SIZING_MAX_TESTS ? cfg->sizing.pad_frac[slot] : 0;
		t->sink += test->fn(t);
		aim_progress(&t->ctx);
		if (t->ctx.cut || lb_now_ns() > alarm_at) {
			ch->jobs_cut = 1; /* its CPU counts, the job does not */
			break;
		}
		ch->jobs_done++;
	}
}

static void child_main(void *arg)
{
	struct wchild *ch = arg;
	struct aim_task *t = &ch->task;
	if ((ch->err = ctx_setup(&t->ctx, t->index)) == 0) {
		aim_mm_exec(&t->ctx, &W.sh->k.mm[t->index]); /* the child's image */
		t->pid = aim_task_fork(&t->ctx, t->tag);
	}
	if (lb_now_ns() < W.start)
		lb_sim_sleep(W.start - lb_now_ns());
	ch->start_ns = lb_now_ns();
	if (!ch->err)
		run_jobs(ch);
	ch->end_ns = lb_now_ns();
	/* Tell the helper to exit (release: it reads `bytes` after the bump). */
	ch->helper.bytes = UINT32_MAX;
	atomic_fetch_add_explicit(&ch->helper.cmd, 1, memory_order_release);
	lb_futex_wake(&ch->helper.cmd, 1);
}

static int init_children(void)
{
	for (unsigned int i = 0; i < W.users; i++) {
		struct wchild *ch = &W.child[i];
		ch->task.k = &W.sh->k;
		ch->task.index = i;
		ch->task.tag = i + 1;
		ch->task.rng = (W.cfg->seed + i) * 0x9e3779b97f4a7c15ull + 1;
		ch->task.helper = &ch->helper;
		ch->helper.pipe = &W.sh->k.pipe[W.users + i];
		atomic_init(&ch->helper.cmd, 0);
		atomic_init(&ch->helper.done, 0);
		ch->order = malloc(W.njobs * sizeof(uint16_t));
		if (!ch->order)
			return ENOMEM;
		aim_shuffle_jobs(&W.cfg->wf, W.counts, ch->task.rng, ch->order, W.njobs);
	}
	return 0;
}

/* The upper edge of the log2 bucket holding the median (gauge.c's rule). */
static double hist_p50(const uint64_t *hist)
{
	uint64_t n = 0, seen = 0;
	for (int b = 0; b < AIM_WAIT_BUCKETS; b++)
		n += hist[b];
	for (int b = 0; b < AIM_WAIT_BUCKETS && n; b++)
		if ((seen += hist[b]) * 2 >= n)
			return (double)(2ull << b);
	return 0;
}

/* The point's figures, after every thread ended (host side). */
static void gather(struct lb_sim_world *w, uint64_t run0, struct lb_simaim_point *out)
{
	uint64_t last_end = W.start, held = 0;
	uint64_t hold_hist[AIM_WAIT_BUCKETS] = { 0 };
	for (unsigned int i = 0; i < W.users; i++) {
		struct wchild *ch = &W.child[i];
		last_end = ch->end_ns > last_end ? ch->end_ns : last_end;
		out->child_s[i] = (double)(ch->end_ns - W.start) / 1e9;
		out->jobs_done += ch->jobs_done;
		out->jobs_cut += ch->jobs_cut;
		struct aim_ctx *cs[2] = { &ch->task.ctx, &ch->helper.ctx };
		for (int c = 0; c < 2; c++) {
			const struct aim_class_acc *a = &cs[c]->cls[AIM_CLASS_ORPHAN];
			out->orphan_acquires += a->acquires;
			held += a->held_cycles;
			for (int b = 0; b < AIM_WAIT_BUCKETS; b++)
				hold_hist[b] += a->hold_hist[b];
			out->orphan_sleeps += cs[c]->orphan_sleeps;
		}
	}
	struct lb_sim_stats s = lb_sim_stats(w);
	double span = (double)(last_end - W.start);
	/* Stuck: threads ran on past the last child's end; busy over all of it. */
	double busy_span = out->stuck ? (double)(lb_sim_world_now(w) - W.start) : span;
	out->users = W.users;
	out->job_list = W.njobs;
	out->parent_s = span / 1e9;
	/* Children and helpers alike: every thread of the world runs aim7's
	 * kernel (re-aim's SysTime; no user-time test runs here). */
	out->sys_cpu_s = (double)(s.run_ns - run0) / 1e9;
	out->cpus_busy = busy_span > 0 ? (double)(s.run_ns - run0) / busy_span : 0;
	out->idle_frac = 1 - out->cpus_busy / lb_sim_machine_cpus(&W.cfg->machine);
	out->orphan_rho = span > 0 ? (double)held / span : 0;
	out->orphan_hold_p50_ns = hist_p50(hold_hist);
	out->ncounters = aim_kernel_class_counters(&W.sh->k, AIM_CLASS_ORPHAN, out->counters,
						   LB_MAX_COUNTERS);
	out->events = s.events;
	out->digest = lb_sim_digest(w);
	out->sim_ns = lb_sim_world_now(w);
}

/* Locks acquired and jobs ended by every child and helper (read on the
 * host between slices: outside the world the loads are plain ones). */
static uint64_t progress(void)
{
	uint64_t sum = 0;
	for (unsigned int i = 0; i < W.users; i++)
		sum += atomic_load_explicit(&W.child[i].task.ctx.progress, memory_order_relaxed) +
		       atomic_load_explicit(&W.child[i].helper.ctx.progress, memory_order_relaxed);
	return sum;
}

/* Spawn and run the children to their end; 0, EINTR, ENOMEM, or EDEADLK
 * when they stopped progressing after the window (stuck). */
static int run_children(struct lb_sim_world *w, uint64_t *run0)
{
	for (unsigned int i = 0; i < W.users; i++)
		if (lb_sim_spawn(w, child_main, &W.child[i]) < 0 ||
		    lb_sim_spawn(w, helper_main, &W.child[i]) < 0)
			return ENOMEM;
	uint64_t window_end = W.start + W.cfg->window_ns;
	uint64_t limit = window_end + SIMAIM_AFTER_MAX_NS, at = lb_sim_world_now(w);
	uint64_t seen = 0, since = window_end;
	unsigned int alive = 1;
	bool armed = false;
	while (alive && at < limit) {
		if (at >= window_end) {
			uint64_t p = progress();
			if (p != seen) {
				seen = p;
				since = at;
			} else if (at - since >= SIMAIM_STALL_NS) {
				break;
			}
		}
		uint64_t next = limit - at > SIMAIM_SLICE_NS ? at + SIMAIM_SLICE_NS : limit;
		if (!armed && next >= W.start) { /* the busy time counts from the start */
			next = W.start;
			armed = true;
		}
		at = next;
		alive = lb_sim_run(w, at);
		if (at == W.start)
			*run0 = lb_sim_stats(w).run_ns;
		if (W.cfg->tick)
			W.cfg->tick(W.cfg->tick_arg, at, W.start + W.cfg->window_ns);
		if (alive && lb_stop_signal())
			return EINTR;
	}
	return alive ? EDEADLK : 0;
}

/* A context's lock contexts, freed on the host after the world ended
 * (thread_fini is not called: outside a virtual thread a lock may not
 * make the system calls it could make there). */
static void ctx_free(struct aim_ctx *c)
{
	for (int r = 0; r < AIM_NROLES; r++) {
		bool first = true;
		for (int q = 0; q < r; q++)
			first &= c->tctx[q] != c->tctx[r];
		if (first && c->tctx[r])
			lb_thread_ctx_free(c->tctx[r]);
	}
}

int lb_simaim_run_point(const struct lb_simaim_config *cfg, unsigned int users,
			struct lb_simaim_point *out)
{
	memset(out, 0, sizeof(*out));
	memset(&W, 0, sizeof(W));
	W.cfg = cfg;
	W.users = users;
	W.njobs = aim_assign_jobs(&cfg->wf, cfg->jobs, W.counts);
	size_t child_bytes = ((size_t)users * sizeof(*W.child) + 63) / 64 * 64;
	W.sh = aligned_alloc(64, (sizeof(*W.sh) + 63) / 64 * 64);
	W.child = aligned_alloc(64, child_bytes);
	struct lb_sim_world *w = lb_sim_create(&cfg->machine, cfg->seed);
	int err = !W.sh || !W.child || !w ? ENOMEM : 0;
	if (!err) {
		memset(W.sh, 0, sizeof(*W.sh));
		atomic_init(&W.sh->stop, 0);
		memset(W.child, 0, child_bytes);
	}
	lb_simi_set_sched_truth(LB_SIMI_TRUTH_SCHED); /* the v3.x spinners ask the engine */
	if (!err && lb_sim_spawn(w, init_thread, NULL) < 0)
		err = ENOMEM;
	if (!err && (lb_sim_run(w, UINT64_MAX) != 0 || W.init_err))
		err = W.init_err ? W.init_err : EIO;
	bool kernel_up = !err;
	if (!err)
		err = init_children();
	uint64_t run0 = 0;
	if (!err) {
		W.start = lb_sim_world_now(w) + SIMAIM_START_NS;
		err = run_children(w, &run0);
	}
	for (unsigned int i = 0; !err && i < users; i++)
		err = W.child[i].err;
	if (!err || err == EDEADLK) {
		out->stuck = err == EDEADLK;
		gather(w, run0, out);
		/* Outside the world the interposed loads are plain loads. */
		out->violations = aim_kernel_check(&W.sh->k, stderr);
		err = 0;
	}
	lb_simi_set_sched_truth(0);
	/* A stuck point's threads may still hold the kernel's memory. */
	if (kernel_up && !out->stuck)
		aim_kernel_destroy(&W.sh->k);
	for (unsigned int i = 0; W.child && i < users; i++) {
		free(W.child[i].order);
		if (!out->stuck) {
			ctx_free(&W.child[i].task.ctx);
			ctx_free(&W.child[i].helper.ctx);
		}
	}
	if (!out->stuck) {
		free(W.sh);
		free(W.child);
		if (w)
			lb_sim_destroy(w);
	}
	return err;
}
