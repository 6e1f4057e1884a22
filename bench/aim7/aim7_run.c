/* SPDX-License-Identifier: MIT */
/*
 * aim7_run.c - one load point: `users` children, each a thread with its own
 * helper thread (the other end of its shell pipelines), started together
 * after a barrier, each running its shuffled job list.  A watchdog bounds
 * the whole point: a lock that deadlocks or loses a wake-up ends the run
 * with a message and exit status 1, never a hang.
 */
#include "task.h"
#include "stall.h"
#include "lb_cli.h"
#include "lb_futex.h"
#include "lb_registry.h"
#include "lb_tasksched.h"
#include "lb_thread.h"
#include "lb_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct point;

struct child {
	struct aim_task task;
	struct aim_helper helper;
	struct point *pt;
	uint16_t *order;
	unsigned int njobs;
	unsigned int jobs_done;    /* jobs run to the end (before the alarm) */
	unsigned int jobs_cut;     /* 0, or 1: the job in flight at the alarm */
	uint64_t start_ns, end_ns;
	double user_s, sys_s, helper_user_s, helper_sys_s;
	long vcsw, ivcsw;          /* context switches: child + helper */
	int err;
	double slot_ns[AIM_MAX_WORKFILE_TESTS], slot_runs[AIM_MAX_WORKFILE_TESTS];
	double *slot_kops;         /* [slot * AIM_NKOPS + op], or NULL */
};

struct point {
	const struct aim_config *cfg;
	const struct aim_sizing *sizing;
	struct aim_kernel k;
	struct child *child;
	unsigned int users;
	struct lb_barrier ready, done;
	_Atomic int stop;
	_Atomic uint32_t finished;  /* children done with their jobs; futex word */
	_Atomic uint32_t pause;     /* --check: park between jobs; futex word */
	_Atomic uint32_t parked;
	uint64_t start_ns;
	uint64_t window_ns;         /* 0, or each child's alarm after its start */
	unsigned int counts[AIM_MAX_WORKFILE_TESTS]; /* each workfile slot's jobs per child */
};

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* This thread's CPU times and context switches: voluntary ones are its
 * sleeps (lock and pipe waits), involuntary ones its preemptions. */
static void thread_times(double *user, double *sys, long *vcsw, long *ivcsw)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		*user = tv_s(ru.ru_utime);
		*sys = tv_s(ru.ru_stime);
		*vcsw = ru.ru_nvcsw;
		*ivcsw = ru.ru_nivcsw;
	} else {
		*user = *sys = 0;
		*vcsw = *ivcsw = 0;
	}
}

/* Per-role lock contexts for one thread; roles with the same lock type
 * share one context, as the vtable contract asks. */
static int ctx_setup(struct aim_ctx *c, struct aim_kernel *k, unsigned int index)
{
	memset(c, 0, sizeof(*c));
	atomic_store_explicit(&c->tid, (int)gettid(), memory_order_relaxed); /* for the watchdog */
	c->k = k;
	c->rng = ((uint64_t)index + 1) * 0x9e3779b97f4a7c15ull;
	c->cycles_per_ns = lb_cycles_per_ns();
	for (int r = 0; r < AIM_NROLES; r++) {
		int same = -1;
		for (int q = 0; q < r; q++)
			if (k->ops[q] == k->ops[r])
				same = q;
		if (same >= 0) {
			c->tctx[r] = c->tctx[same];
			continue;
		}
		const struct lb_lock_ops *ops = k->ops[r];
		if (!ops->thread_ctx_size)
			continue;
		c->tctx[r] = lb_thread_ctx_alloc(ops);
		if (!c->tctx[r])
			return ENOMEM;
		if (ops->thread_init) {
			int e = ops->thread_init(c->tctx[r], index);
			if (e)
				return e;
		}
	}
	return 0;
}

static void ctx_teardown(struct aim_ctx *c)
{
	for (int r = 0; r < AIM_NROLES; r++) {
		bool first = true;
		for (int q = 0; q < r; q++)
			first &= c->k->ops[q] != c->k->ops[r];
		if (!first || !c->tctx[r])
			continue;
		if (c->k->ops[r]->thread_fini)
			c->k->ops[r]->thread_fini(c->tctx[r]);
		lb_thread_ctx_free(c->tctx[r]);
	}
}

/* This thread's CPU time in ns: a test's cost without the time other
 * threads and processes ran on its CPU (the machine may be loaded). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool stopping(struct point *pt)
{
	/* Relaxed: the flag only ends the run early; it publishes nothing. */
	return atomic_load_explicit(&pt->stop, memory_order_relaxed) != 0;
}

/* The helper: the reading side of its child's shell pipelines. */
static void *helper_main(void *arg)
{
	struct child *ch = arg;
	struct aim_helper *h = &ch->helper;
	struct point *pt = ch->pt;
	uint32_t seen = 0;
	h->pipe = &pt->k.pipe[pt->users + ch->task.index];
	int err = ctx_setup(&h->ctx, &pt->k, pt->users + ch->task.index);
	if (err)
		ch->err = err;
	lb_barrier_wait(&pt->ready);
	long v0, iv0, v1, iv1;
	double u0, s0;
	thread_times(&u0, &s0, &v0, &iv0);
	for (;;) {
		/* acquire: pairs with the release in aim_shell_pipeline, so
		 * `bytes` is the posted request's. */
		uint32_t cmd = atomic_load_explicit(&h->cmd, memory_order_acquire);
		if (cmd == seen) {
			if (stopping(pt) && err)
				break;
			aim_wait_change(&h->cmd, seen);
			continue;
		}
		seen = cmd;
		if (h->bytes == UINT32_MAX)
			break;
		if (!err)
			aim_pipe_read(&h->ctx, h->pipe, h->bytes);
		/* release: the child may read our counters after seeing it. */
		atomic_fetch_add_explicit(&h->done, 1, memory_order_release);
		lb_futex_wake(&h->done, 1);
	}
	thread_times(&ch->helper_user_s, &ch->helper_sys_s, &v1, &iv1);
	ch->helper_user_s -= u0;
	ch->helper_sys_s -= s0;
	/* Added to the child's (written after the child's own, which ends
	 * before it posts our exit). */
	ch->vcsw += v1 - v0;
	ch->ivcsw += iv1 - iv0;
	lb_barrier_wait(&pt->done);
	if (!err)
		ctx_teardown(&h->ctx);
	return NULL;
}

static void park_if_paused(struct point *pt)
{
	/* acquire: pairs with the main thread's release when it unpauses after
	 * the check, so kernel data it read or wrote is ordered with ours. */
	if (!atomic_load_explicit(&pt->pause, memory_order_acquire))
		return;
	atomic_fetch_add_explicit(&pt->parked, 1, memory_order_acq_rel);
	lb_futex_wake(&pt->parked, 1);
	uint32_t p;
	while ((p = atomic_load_explicit(&pt->pause, memory_order_acquire)) != 0 && !stopping(pt))
		aim_wait_change(&pt->pause, p);
	atomic_fetch_sub_explicit(&pt->parked, 1, memory_order_acq_rel);
}

static void *child_main(void *arg)
{
	struct child *ch = arg;
	struct point *pt = ch->pt;
	struct aim_task *t = &ch->task;
	int err = ctx_setup(&t->ctx, &pt->k, t->index);
	if (!err) {
		aim_mm_exec(&t->ctx, &pt->k.mm[t->index]); /* the child's image */
		t->pid = aim_task_fork(&t->ctx, t->tag);
	} else {
		ch->err = err;
		atomic_store_explicit(&pt->stop, 1, memory_order_relaxed);
	}
	lb_barrier_wait(&pt->ready);
	double u0, s0;
	long v0, iv0, v1, iv1;
	thread_times(&u0, &s0, &v0, &iv0);
	ch->start_ns = lb_now_ns();
	/* re-aim's alarm, per child from its own start.  Until it rings the
	 * child cycles through its job list.  re-aim's SIGALRM ends a child
	 * inside its job; here the job in flight is cut (aim_kwork_n stops
	 * its burn at the next slice, and the job leaves its loops at the
	 * next iteration and cleans up: aim_job_ending) and a job that ends
	 * after the alarm is not counted. */
	uint64_t alarm_at = pt->window_ns ? ch->start_ns + pt->window_ns : 0;
	t->ctx.alarm_ns = alarm_at;
	t->ctx.cut = false;
	for (unsigned int j = 0; (alarm_at || j < ch->njobs) && !err && !stopping(pt); j++) {
		if (alarm_at && lb_now_ns() >= alarm_at)
			break;
		if (pt->cfg->check_ns)
			park_if_paused(pt);
		unsigned int slot = ch->order[j % ch->njobs];
		const struct aim_test *test = aim_test_at((size_t)pt->cfg->wf.test[slot]);
		t->ctx.pad_frac = pt->sizing && slot < AIM_SIZING_MAX_TESTS
					  ? pt->sizing->pad_frac[slot] : 0;
		double kops0[AIM_NKOPS];
		if (ch->slot_kops)
			memcpy(kops0, t->ctx.kop_count, sizeof(kops0));
		uint64_t j0 = thread_cpu_ns();
		t->sink += test->fn(t);
		ch->slot_ns[slot] += (double)(thread_cpu_ns() - j0);
		aim_progress(&t->ctx);
		if (alarm_at && (t->ctx.cut || lb_now_ns() > alarm_at)) {
			ch->jobs_cut = 1; /* its CPU counts, the job does not */
			break;
		}
		ch->slot_runs[slot] += 1;
		ch->jobs_done++;
		if (ch->slot_kops)
			for (int op = 0; op < AIM_NKOPS; op++)
				ch->slot_kops[slot * AIM_NKOPS + op] += t->ctx.kop_count[op] - kops0[op];
	}
	ch->end_ns = lb_now_ns();
	double u1, s1;
	thread_times(&u1, &s1, &v1, &iv1);
	ch->user_s = u1 - u0;
	ch->sys_s = s1 - s0;
	ch->vcsw += v1 - v0;
	ch->ivcsw += iv1 - iv0;
	/* release: the main thread reads our figures after seeing the count. */
	atomic_fetch_add_explicit(&pt->finished, 1, memory_order_release);
	lb_futex_wake(&pt->finished, 1);
	/* Tell the helper to exit. */
	ch->helper.bytes = UINT32_MAX;
	atomic_fetch_add_explicit(&ch->helper.cmd, 1, memory_order_release);
	lb_futex_wake(&ch->helper.cmd, 1);
	/* Nobody may still be inside a lock when contexts are torn down. */
	lb_barrier_wait(&pt->done);
	if (!err)
		ctx_teardown(&t->ctx);
	return NULL;
}

static void sum_stats(struct point *pt, struct aim_point *out)
{
	double cps = lb_cycles_per_ns();
	for (unsigned int i = 0; i < pt->users; i++) {
		struct aim_ctx *cs[2] = { &pt->child[i].task.ctx, &pt->child[i].helper.ctx };
		for (int c = 0; c < 2; c++)
			for (int r = 0; r < AIM_NROLES; r++) {
				out->role[r].acquires += cs[c]->acquires[r];
				out->role[r].wait_ns += (uint64_t)((double)cs[c]->wait_cycles[r] / cps);
			}
		for (int c = 0; c < 2; c++)
			for (int k = 0; k < AIM_NCLASSES; k++) {
				const struct aim_class_acc *a = &cs[c]->cls[k];
				struct aim_class_stats *o = &out->cls[k];
				o->acquires += a->acquires;
				o->wait_ns += (uint64_t)((double)a->wait_cycles / cps);
				o->held_ns += (uint64_t)((double)a->held_cycles / cps);
				o->slow += a->slow;
				for (int b = 0; b < AIM_WAIT_BUCKETS; b++) {
					o->wait_hist[b] += a->wait_hist[b];
					o->hold_hist[b] += a->hold_hist[b];
				}
				for (int b = 0; b < AIM_WAITERS_BINS; b++)
					o->waiters_hist[b] += a->waiters_hist[b];
			}
	}
	for (int k = 0; k < AIM_NCLASSES; k++)
		out->cls[k].ncounters = aim_kernel_class_counters(&pt->k, k, out->cls[k].counters,
								   LB_MAX_COUNTERS);
	for (int r = 0; r < AIM_NROLES; r++)
		out->role[r].ncounters = aim_kernel_counters(&pt->k, r, out->role[r].counters,
							      LB_MAX_COUNTERS);
}

/*
 * The watchdog (stall.h): once the children's and helpers' progress (locks
 * acquired, jobs ended) has not moved for a quarter of AIM_STALL_WINDOW_NS
 * it reads every thread's scheduler state, and when it has not moved for
 * the whole window it reads them again and judges the unfinished ones over
 * the time between.  Slow (they were not given a CPU, or ran outside the
 * locks): said once, and a new window.  Stuck: false.
 */
struct stall_watch {
	uint64_t progress, since;       /* the last progress seen, and when */
	uint64_t armed_at;              /* when at0 was read; 0: not yet */
	struct lb_tasksched *at0;       /* each thread then (NULL: no memory) */
	struct aim_stall_thread *threads;
	unsigned int slow_windows;      /* consecutive ones called slow */
	bool said_slow;
};

static struct aim_ctx *watch_ctx(struct point *pt, unsigned int i)
{
	struct child *ch = &pt->child[i / 2];
	return i % 2 ? &ch->helper.ctx : &ch->task.ctx;
}

static int watch_tid(struct point *pt, unsigned int i)
{
	return atomic_load_explicit(&watch_ctx(pt, i)->tid, memory_order_relaxed);
}

static uint64_t watch_progress(struct point *pt)
{
	uint64_t sum = 0;
	/* Relaxed: each counter is its thread's own; only whether it moved. */
	for (unsigned int i = 0; i < 2 * pt->users; i++)
		sum += atomic_load_explicit(&watch_ctx(pt, i)->progress, memory_order_relaxed);
	return sum;
}

/* The verdict over [w->armed_at, now]; prints it when stuck or the first
 * time it is slow. */
static bool watch_judge(struct point *pt, struct stall_watch *w, uint64_t now)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < 2 * pt->users; i++) {
		struct lb_tasksched b;
		lb_tasksched_read(getpid(), watch_tid(pt, i), &b);
		const struct lb_tasksched *a = &w->at0[i];
		if (b.run_state == '?')
			continue; /* exited: a finished child or helper */
		w->threads[n++] = (struct aim_stall_thread){
			/* Progress did not move, so a thread in lock() at
			 * both ends was in the same wait throughout. */
			.in_lock = atomic_load_explicit(&watch_ctx(pt, i)->in_lock,
							memory_order_relaxed) != 0,
			.known = a->known && b.known,
			.run_state = b.run_state,
			.cpu_ns = b.cpu_ns > a->cpu_ns ? b.cpu_ns - a->cpu_ns : 0,
			.delay_ns = b.delay_ns > a->delay_ns ? b.delay_ns - a->delay_ns : 0,
		};
	}
	uint64_t window = now - w->armed_at;
	struct aim_stall_verdict v = aim_stall_judge(w->threads, n, window);
	char line[512];
	aim_stall_describe(&v, w->threads, now - w->since, line, sizeof(line));
	/* Slow for AIM_STALL_MAX_SLOW windows in a row without one acquisition
	 * is stuck all the same (oversubscribed spinners livelocking look
	 * like threads waiting for a CPU). */
	bool stuck = v.stuck || ++w->slow_windows >= AIM_STALL_MAX_SLOW;
	if (stuck)
		fprintf(stderr, "aim7: watchdog: load point of %u users: %s%s\n", pt->users, line,
			v.stuck ? "" : "; the same for too long: stuck");
	else if (!w->said_slow)
		fprintf(stderr, "aim7: watchdog: load point of %u users: %s; watching on\n",
			pt->users, line);
	w->said_slow = true;
	return !stuck;
}

/* False when the threads are stuck (said on stderr); true otherwise. */
static bool watch_tick(struct point *pt, struct stall_watch *w)
{
	uint64_t now = lb_now_ns(), p = watch_progress(pt);
	if (p != w->progress) {
		w->progress = p;
		w->since = now;
		w->armed_at = 0;
		w->slow_windows = 0;
		return true;
	}
	if (!w->at0 && now - w->since >= AIM_STALL_WINDOW_NS) {
		fprintf(stderr, "aim7: watchdog: load point of %u users: no progress for %.1f s "
			"(no memory for the evidence): stuck\n", pt->users,
			(double)(now - w->since) / 1e9);
		return false;
	}
	if (!w->at0 || now - w->since < AIM_STALL_WINDOW_NS / 4)
		return true;
	if (!w->armed_at) {
		for (unsigned int i = 0; i < 2 * pt->users; i++)
			lb_tasksched_read(getpid(), watch_tid(pt, i), &w->at0[i]);
		w->armed_at = now;
		return true;
	}
	if (now - w->since < AIM_STALL_WINDOW_NS)
		return true;
	if (!watch_judge(pt, w, now))
		return false;
	w->since = now; /* slow: a new window (slow_windows counts them) */
	w->armed_at = 0;
	return true;
}

/* Wait until every child finished, running --check pauses on the way;
 * false when the watchdog found the threads stuck first. */
static bool supervise(struct point *pt, unsigned long *violations)
{
	uint64_t next_check = pt->cfg->check_ns ? lb_now_ns() + pt->cfg->check_ns : UINT64_MAX;
	struct stall_watch w = { .since = lb_now_ns(), .progress = watch_progress(pt) };
	w.at0 = calloc(2 * (size_t)pt->users, sizeof(*w.at0));
	w.threads = calloc(2 * (size_t)pt->users, sizeof(*w.threads));
	if (!w.at0 || !w.threads) {
		free(w.at0);
		w.at0 = NULL; /* no memory for evidence: never called stuck */
	}
	bool alive = true;
	for (;;) {
		uint32_t f = atomic_load_explicit(&pt->finished, memory_order_acquire);
		if (f >= pt->users)
			break;
		if (!(alive = watch_tick(pt, &w)))
			break;
		if (lb_now_ns() >= next_check) {
			atomic_store_explicit(&pt->pause, 1, memory_order_release);
			/* Children park between jobs; finished ones count too. */
			while (!stopping(pt) && (alive = watch_tick(pt, &w))) {
				uint32_t parked = atomic_load_explicit(&pt->parked, memory_order_acquire);
				f = atomic_load_explicit(&pt->finished, memory_order_acquire);
				if (parked + f >= pt->users)
					break;
				aim_wait_change(&pt->parked, parked);
			}
			if (!alive)
				break;
			*violations += aim_kernel_check(&pt->k, stderr);
			if (*violations)
				atomic_store_explicit(&pt->stop, 1, memory_order_relaxed);
			/* release: pairs with the parked children's acquire. */
			atomic_store_explicit(&pt->pause, 0, memory_order_release);
			lb_futex_wake(&pt->pause, INT32_MAX);
			next_check = lb_now_ns() + pt->cfg->check_ns;
			continue;
		}
		aim_wait_change(&pt->finished, f);
	}
	free(w.at0);
	free(w.threads);
	return alive;
}

/* Each child's task, helper and shuffled job list; the job lists and, with
 * kop_count, the per-slot kernel-operation counts are allocated here. */
static int init_children(struct point *pt, unsigned int njobs, uint64_t seed, bool count_kops)
{
	unsigned int users = pt->users;
	memset(pt->child, 0, (size_t)users * sizeof(struct child));
	for (unsigned int i = 0; i < users; i++) {
		struct child *ch = &pt->child[i];
		ch->pt = pt;
		ch->task.k = &pt->k;
		ch->task.index = i;
		ch->task.tag = i + 1;
		ch->task.rng = (seed + i) * 0x9e3779b97f4a7c15ull + 1;
		ch->task.helper = &ch->helper;
		ch->helper.pipe = &pt->k.pipe[users + i];
		atomic_init(&ch->helper.cmd, 0);
		atomic_init(&ch->helper.done, 0);
		ch->njobs = njobs;
		ch->order = malloc(njobs * sizeof(uint16_t));
		if (count_kops)
			ch->slot_kops = calloc((size_t)AIM_MAX_WORKFILE_TESTS * AIM_NKOPS,
					       sizeof(double));
		if (!ch->order || (count_kops && !ch->slot_kops))
			return ENOMEM;
		/* re-aim seeds each child's order from its pid; ours from the
		 * run's seed and the child number. */
		aim_shuffle_jobs(&pt->cfg->wf, pt->counts, ch->task.rng, ch->order, njobs);
	}
	return 0;
}

/* Start the helpers, then the children; on a failure, say so and stand in
 * for the threads that never started so that the others run through. */
static int start_children(struct point *pt, struct lb_threads *threads,
			  struct lb_threads *helpers)
{
	unsigned int users = pt->users;
	lb_barrier_init(&pt->ready, 2 * users + 1);
	lb_barrier_init(&pt->done, 2 * users);
	int err = lb_threads_create(helpers, users, helper_main, pt->child, sizeof(struct child));
	if (!err)
		err = lb_threads_create(threads, users, child_main, pt->child,
					sizeof(struct child));
	if (err) {
		fprintf(stderr, "aim7: cannot start %u children: %s\n", users, strerror(err));
		/* Stand in for the threads that never started and let the
		 * others run through: stop at once. */
		atomic_store_explicit(&pt->stop, 1, memory_order_relaxed);
		for (unsigned int i = helpers->n + threads->n; i < 2 * users; i++) {
			lb_barrier_arrive(&pt->ready);
			lb_barrier_arrive(&pt->done);
		}
		for (unsigned int i = threads->n; i < users; i++) {
			atomic_fetch_add_explicit(&pt->finished, 1, memory_order_relaxed);
			pt->child[i].helper.bytes = UINT32_MAX;
			atomic_fetch_add_explicit(&pt->child[i].helper.cmd, 1, memory_order_release);
			lb_futex_wake(&pt->child[i].helper.cmd, 1);
		}
	}
	return err;
}

/* Wait for the children under the watchdog and join them with their
 * helpers; false when it found them stuck (said on stderr).  Threads
 * that do not stop even then are stuck in a lock: exit 1, nothing freed. */
static bool await_children(struct point *pt, struct lb_threads *threads,
			   struct lb_threads *helpers, unsigned long *violations,
			   struct aim_point *out)
{
	struct aim_cpu_sample cpu0, cpu1;
	aim_cpu_sample(&cpu0);
	lb_barrier_wait(&pt->ready);
	pt->start_ns = lb_now_ns();
	bool in_time = supervise(pt, violations);
	aim_cpu_sample(&cpu1);
	out->idle_frac = aim_idle_fraction(&cpu0, &cpu1);
	if (!in_time) {
		atomic_store_explicit(&pt->stop, 1, memory_order_relaxed);
		fprintf(stderr, "aim7: watchdog: load point of %u users stopped %.0f s after its "
			"start\n", pt->users, (double)(lb_now_ns() - pt->start_ns) / LB_NS_PER_S);
	}
	if (lb_threads_join_timeout(threads, UINT64_C(5000000000)) == ETIMEDOUT ||
	    lb_threads_join_timeout(helpers, UINT64_C(5000000000)) == ETIMEDOUT) {
		fprintf(stderr, "aim7: %u thread(s) did not stop (stuck in a lock); giving up\n",
			threads->n + helpers->n);
		fflush(NULL);
		_Exit(1); /* their memory is still in use: nothing can be freed */
	}
	return in_time;
}

/* The children's times, test counts and kernel-operation counts added
 * into out, and the point's figures from their finishing times. */
static void gather_children(struct point *pt, unsigned int njobs, double *kop_count,
			    struct aim_point *out)
{
	unsigned int users = pt->users;
	/* The common start: the first child out of the barrier (the main
	 * thread may be scheduled after a short child has already finished). */
	uint64_t t0 = pt->start_ns;
	for (unsigned int i = 0; i < users; i++)
		t0 = pt->child[i].start_ns < t0 ? pt->child[i].start_ns : t0;
	uint64_t last_end = t0;
	double *child_s = calloc(users, sizeof(double)), user = 0, sys = 0;
	for (unsigned int i = 0; i < users; i++) {
		struct child *ch = &pt->child[i];
		last_end = ch->end_ns > last_end ? ch->end_ns : last_end;
		if (child_s)
			child_s[i] = (double)(ch->end_ns - t0) / LB_NS_PER_S;
		user += ch->user_s + ch->helper_user_s;
		sys += ch->sys_s + ch->helper_sys_s;
		out->jobs_done += ch->jobs_done;
		out->jobs_cut += ch->jobs_cut;
		for (size_t s = 0; s < pt->cfg->wf.ntests && s < AIM_MAX_WORKFILE_TESTS; s++) {
			out->test_ns[s] += ch->slot_ns[s];
			out->test_runs[s] += ch->slot_runs[s];
			bool sys_test = aim_test_at((size_t)pt->cfg->wf.test[s])->system;
			*(sys_test ? &out->sys_tests_cpu_s : &out->user_tests_cpu_s) +=
				ch->slot_ns[s] / LB_NS_PER_S;
		}
		if (kop_count)
			for (size_t x = 0; x < (size_t)AIM_MAX_WORKFILE_TESTS * AIM_NKOPS; x++)
				kop_count[x] += ch->slot_kops[x];
		out->dcache_retries += ch->task.ctx.dcache_retries + ch->helper.ctx.dcache_retries;
		out->dcache_locked += ch->task.ctx.dcache_locked + ch->helper.ctx.dcache_locked;
		out->orphan_sleeps += ch->task.ctx.orphan_sleeps + ch->helper.ctx.orphan_sleeps;
		out->vol_csw += (uint64_t)(ch->vcsw > 0 ? ch->vcsw : 0);
		out->invol_csw += (uint64_t)(ch->ivcsw > 0 ? ch->ivcsw : 0);
	}
	out->users = users;
	out->jobs_per_child = njobs;
	out->window_s = (double)pt->window_ns / LB_NS_PER_S;
	/* re-aim's figures count the jobs per child: in a window the jobs
	 * completed in it (re-aim's own alarm-cut figure counts the nominal
	 * list, which the window and the list length alone decide). */
	double per_child = pt->window_ns ? (double)out->jobs_done / users : njobs;
	if (child_s)
		aim_figures_compute(users, per_child, (double)(last_end - t0) / LB_NS_PER_S, child_s,
				    user, sys, &out->fig);
	free(child_s);
	out->child_cpu_s = user + sys;
}

int aim_run_point(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
		  unsigned int users, unsigned int jobs, uint64_t seed, struct aim_point *out)
{
	return aim_run_point_sized(cfg, role_ops, users, jobs, seed,
				   cfg->sizing.on ? &cfg->sizing : NULL, NULL, out);
}

static int run_point(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
		     unsigned int users, unsigned int jobs, uint64_t seed,
		     const struct aim_sizing *sizing, double *kop_count, uint64_t window_ns,
		     struct aim_point *out);

int aim_run_point_sized(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
			unsigned int users, unsigned int jobs, uint64_t seed,
			const struct aim_sizing *sizing, double *kop_count, struct aim_point *out)
{
	return run_point(cfg, role_ops, users, jobs, seed, sizing, kop_count, 0, out);
}

int aim_run_point_window(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
			 unsigned int users, unsigned int jobs, uint64_t seed, uint64_t window_ns,
			 struct aim_point *out)
{
	return run_point(cfg, role_ops, users, jobs, seed, cfg->sizing.on ? &cfg->sizing : NULL,
			 NULL, window_ns, out);
}

static int run_point(const struct aim_config *cfg, const struct lb_lock_ops *const *role_ops,
		     unsigned int users, unsigned int jobs, uint64_t seed,
		     const struct aim_sizing *sizing, double *kop_count, uint64_t window_ns,
		     struct aim_point *out)
{
	struct point *pt = calloc(1, sizeof(*pt));
	struct lb_threads threads = { 0 }, helpers = { 0 };
	int err = 0;
	memset(out, 0, sizeof(*out));
	if (!pt)
		return ENOMEM;
	pt->cfg = cfg;
	pt->sizing = sizing;
	pt->users = users;
	pt->window_ns = window_ns;
	atomic_init(&pt->stop, 0);
	atomic_init(&pt->finished, 0);
	atomic_init(&pt->pause, 0);
	atomic_init(&pt->parked, 0);
	unsigned int njobs = aim_assign_jobs(&cfg->wf, jobs, pt->counts);
	pt->child = aligned_alloc(64, ((size_t)users * sizeof(struct child) + 63) / 64 * 64);
	if (!pt->child || (err = aim_kernel_init(&pt->k, role_ops, users, &pt->stop)))
		goto out_free;
	pt->k.sizing = sizing;
	err = init_children(pt, njobs, seed, kop_count != NULL);
	if (err)
		goto out_free;
	err = start_children(pt, &threads, &helpers);
	unsigned long violations = 0;
	if (!await_children(pt, &threads, &helpers, &violations, out)) {
		err = 1;
		goto out_free;
	}
	for (unsigned int i = 0; i < users && !err; i++)
		if (pt->child[i].err)
			err = pt->child[i].err;
	if (err)
		goto out_free;

	gather_children(pt, njobs, kop_count, out);
	sum_stats(pt, out);
	violations += aim_kernel_check(&pt->k, stderr);
	out->invariant_errors = violations;
	if (violations) {
		fprintf(stderr, "aim7: invariant check FAILED at %u users (%lu violation(s)); locks: "
			"mutex=%s spinlock=%s rwlock=%s\n", users, violations, role_ops[0]->name,
			role_ops[1]->name, role_ops[2]->name);
		err = 1;
	}
out_free:
	if (pt->k.ops[0])
		aim_kernel_destroy(&pt->k);
	for (unsigned int i = 0; pt->child && i < users; i++) {
		free(pt->child[i].order);
		free(pt->child[i].slot_kops);
	}
	free(pt->child);
	free(pt);
	return err;
}
