/* SPDX-License-Identifier: MIT */
/* run.c - set-up, the stats/shutdown/watchdog loop, and the verdict. */
#include "run.h"
#include "lb_time.h"
#include "affinity.h"
#include "clock.h"
#include "deadlock.h"
#include "evidence.h"
#include "delay.h"
#include "fatal.h"
#include "out.h"
#include "perturb.h"
#include "prio.h"
#include "procmode.h"
#include "rcu_chains.h"
#include "stats.h"
#include "stutter.h"
#include "tsan_hook.h"
#include "watchdog.h"
#include "workers.h"
#include "lb_cpulist.h"
#include "lb_registry.h"
#include "lb_steal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TICK_NS 10000000ull           /* the monitor's polling period */
#define READY_TIMEOUT_NS (10 * LB_NS_PER_S)
#define DRAIN_TIMEOUT_NS (5 * LB_NS_PER_S)
#define DRAIN_CAP_NS (120 * LB_NS_PER_S)   /* workers leaving, however slowly: at most this */
#define MONITOR_FIFO_PRIO 60          /* above the workers' SCHED_FIFO 50 */
/* How often the monitor looks at an open evidence window for the early
 * all-asleep verdict (verdict.h): a /proc read a worker each time. */
#define ASLEEP_LOOK_NS (250 * 1000000ull)

/* The one global: which signal asked us to stop (0 = none). */
static volatile sig_atomic_t lb_torture_signalled;

static void on_signal(int sig)
{
	lb_torture_signalled = sig;
}

static void *alloc_lines(size_t size)
{
	size = (size + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE;
	void *p = aligned_alloc(LB_CACHELINE, size);
	/* Zeroed memory is the initial state of every atomic we use (lock-free). */
	if (p)
		memset(p, 0, size);
	return p;
}

/* -P: every worker's lock contexts from the shared mapping, before the
 * fork (workers.c takes a context already there instead of allocating). */
static bool proc_contexts(struct lb_torture_run *run)
{
	const struct lb_lock_ops *ops = run->ops;
	if (!ops->thread_ctx_size)
		return true;
	for (int i = 0; i < run->nthreads; i++)
		for (int k = 0; k < 1 + run->cfg.nested_locks; k++) {
			run->threads[i].tctx[k] =
				lb_torture_proc_carve(run, ops->thread_ctx_size, LB_CACHELINE);
			if (!run->threads[i].tctx[k])
				return false;
		}
	return true;
}

static struct lb_torture_run *run_alloc(const struct lb_torture_config *cfg)
{
	size_t threads_size = sizeof(struct lb_torture_thread) *
			      (size_t)(cfg->nwriters_stress + cfg->nreaders_stress);
	struct lb_torture_run *run = cfg->processes ? lb_torture_proc_map(cfg)
						    : alloc_lines(sizeof(*run));
	if (!run)
		return NULL;
	run->cfg = *cfg;
	run->ops = cfg->ops;
	run->delay_model = lb_torture_delay_model_for(cfg->ops);
	run->rcu = cfg->ops->flags & LB_LOCK_F_RCU;
	run->nthreads = cfg->nwriters_stress + cfg->nreaders_stress;
	run->longest_wait_thread = -1;
	run->threads = run->shared_map ? lb_torture_proc_carve(run, threads_size, LB_CACHELINE)
				       : alloc_lines(threads_size);
	if (!run->threads || (run->shared_map && !proc_contexts(run))) {
		if (run->shared_map)
			lb_torture_proc_unmap(run);
		else
			free(run);
		return NULL;
	}
	for (int i = 0; i < run->nthreads; i++) {
		struct lb_torture_thread *t = &run->threads[i];
		t->run = run;
		t->writer = i < cfg->nwriters_stress;
		t->id = t->writer ? i : i - cfg->nwriters_stress;
		t->index = (unsigned int)i;
	}
	return run;
}

/* A lock on its own cache lines; -P: in the shared mapping, by init_shared. */
static int lock_new(struct lb_torture_run *run, void **out)
{
	const struct lb_lock_ops *ops = run->ops;
	void *lock = run->shared_map ? lb_torture_proc_carve(run, ops->lock_size, ops->lock_align)
				     : lb_lock_alloc(ops);
	if (!lock)
		return ENOMEM;
	int err = run->shared_map ? ops->init_shared(lock) : ops->init(lock);
	if (err) {
		if (!run->shared_map)
			lb_lock_free(lock);
		return err;
	}
	*out = lock;
	return 0;
}

static void lock_delete(const struct lb_torture_run *run, void *lock)
{
	if (!lock)
		return;
	if (run->ops->destroy)
		run->ops->destroy(lock);
	if (!run->shared_map) /* -P: unmapped with the rest */
		lb_lock_free(lock);
}

static int locks_init(struct lb_torture_run *run)
{
	int err = lock_new(run, &run->lock);
	for (int k = 0; !err && k < run->cfg.nested_locks; k++)
		err = lock_new(run, &run->nested[k]);
	if (!err)
		err = lb_torture_deadlock_init(run);
	return err;
}

/* Only after every worker was joined: no lock can touch a context any more. */
static void cleanup(struct lb_torture_run *run)
{
	for (int i = 0; i < run->nthreads && !run->shared_map; i++) {
		struct lb_torture_thread *t = &run->threads[i];
		/* thread_fini already ran in the owner (workers.c). */
		for (int k = 0; k < 1 + LB_TORTURE_MAX_NESTED; k++)
			lb_thread_ctx_free(t->tctx[k]);
	}
	lock_delete(run, run->lock);
	for (int k = 0; k < LB_TORTURE_MAX_NESTED; k++)
		lock_delete(run, run->nested[k]);
	lb_torture_deadlock_free(run);
	lb_torture_affinity_free(run);
	if (run->shared_map) {
		lb_perturb_share_tally(NULL);
		lb_torture_proc_unmap(run); /* the run record with it */
		return;
	}
	free(run->threads);
	free(run);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void say(const struct lb_torture_run *run, const char *bang, const char *fmt, ...);

/* "<type>-torture: text", or with bang = "!!!" the error form "<type>-torture:!!! text". */
static void say(const struct lb_torture_run *run, const char *bang, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	lb_torture_printf("%s%s%s %s\n", run->cfg.type, LB_TORTURE_FLAG, bang, text);
}

/* Whether a command-line word needs quoting to be pasted back into a shell. */
static bool needs_quotes(const char *w)
{
	if (!*w)
		return true;
	for (; *w; w++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_=./,:%+@", *w))
			return true;
	return false;
}

/* The command that replays this run: the same options with --seed N (a
 * --seed given before is replaced), as a "!!!" line. */
static void format_replay(const struct lb_torture_config *cfg, char *line, size_t size)
{
	size_t len = (size_t)snprintf(line, size, "%s%s!!! replay (same seed; perturbations %s): ",
				      cfg->type, LB_TORTURE_FLAG, cfg->perturb_ppm ? "on" : "off");
	for (int i = 0; i < cfg->argc && len < size - 64; i++) {
		const char *w = cfg->argv[i];
		if (i > 0 && (!strcmp(w, "--seed") || !strcmp(w, "-seed"))) {
			i++; /* and its value */
			continue;
		}
		if (i > 0 && (!strncmp(w, "--seed=", 7) || !strncmp(w, "-seed=", 6)))
			continue;
		bool q = needs_quotes(w) && !strchr(w, '\'');
		len += (size_t)snprintf(line + len, size - len, "%s%s%s%s", i ? " " : "",
					q ? "'" : "", w, q ? "'" : "");
	}
	if (len >= size - 64)
		len = size - 64;
	snprintf(line + len, size - len, " --seed %llu\n", (unsigned long long)cfg->seed);
}

static void print_replay(const struct lb_torture_run *run)
{
	char line[4096];
	format_replay(&run->cfg, line, sizeof(line));
	lb_torture_printf("%s", line);
}

/* Final statistics, port summary lines and the End banner; the exit status.
 * joined: every worker was joined (the deadlock checks take the locks). */
static int verdict(struct lb_torture_run *run, int errors, bool hard_fail, bool joined)
{
	struct lb_torture_totals w, r;
	if (lb_torture_print_stats(run))
		errors++;
	if (run->cfg.verbose) {
		uint64_t first = atomic_load_explicit(&run->first_fail_ns, memory_order_relaxed);
		lb_torture_collect(run, true, &w);
		lb_torture_collect(run, false, &r);
		if (first)
			say(run, "", "failures: writers=%ld readers=%ld first_at=%.6f s", w.fails,
			    r.fails, (double)(first - 1) / LB_NS_PER_S);
		else
			say(run, "", "failures: writers=%ld readers=%ld", w.fails, r.fails);
		long tw = 0, tr = 0;
		for (int i = 0; i < run->nthreads; i++) {
			long n = atomic_load_explicit(&run->threads[i].n_trylock, memory_order_relaxed);
			if (run->threads[i].writer)
				tw += n;
			else
				tr += n;
		}
		if (run->longest_wait_thread >= 0) {
			const struct lb_torture_thread *t = &run->threads[run->longest_wait_thread];
			say(run, "", "longest wait for a lock: %.2f s (%s %d; other %ss got it %lld "
			    "times meanwhile); --stall_secs %d", (double)run->longest_wait_ns / LB_NS_PER_S,
			    lb_torture_role(t), t->id, lb_torture_role(t), run->longest_wait_others, run->cfg.stall_secs);
		}
		/* vCPUs the hypervisor took: waits and stalls above include them. */
		double steal = lb_steal_seconds(run->steal_start, lb_steal_ticks_now());
		if (steal > 0)
			say(run, "", "steal time: %.2f s over the test (all CPUs): the hypervisor ran "
			    "other work on these vCPUs, and the waits above include it", steal);
		say(run, "", "trylock: %d%% of acquisitions tried, granted writers=%ld readers=%ld%s",
		    run->cfg.trylock_pct, tw, tr,
		    run->ops->trylock ? "" : " (this lock has no trylock)");
		if (run->cfg.onoff_interval && run->affinity) {
			char buf[128];
			lb_torture_onoff_stats(run, buf, sizeof(buf));
			say(run, "", "%s", buf);
		}
		if (run->cfg.call_rcu_chains)
			say(run, "", "call_rcu_chains: %llu callbacks",
			    (unsigned long long)lb_torture_rcu_chains_progress(run));
	}
	/* The deadlock rounds' summary and its own checks, which take every
	 * lock once more: only once the workers were joined. */
	if (!hard_fail && joined)
		errors += lb_torture_deadlock_report(run);
	long tmo = atomic_load_explicit(&run->lock_timeouts, memory_order_relaxed);
	if (run->ops->lock_fallible && !run->deadlock && run->cfg.verbose)
		say(run, "", "fallible lock: %ld timeouts (retried); a reported deadlock here would "
		    "be a failure (deadlock-free schedule)", tmo);
	long races = lb_torture_tsan_reports();
	if (races) {
		say(run, "!!!", "ThreadSanitizer reported %ld data race(s) (see stderr): a lock whose "
		    "acquire/release does not order its critical sections", races);
		errors++;
	}
	if (run->cfg.perturb_ppm && run->cfg.verbose) {
		struct lb_perturb_counts c;
		lb_perturb_read_counts(&c);
		say(run, "", "perturb: %llu points perturbed: %llu spins, %llu yields, %llu sleeps "
		    "(%llu at rarely run sites, %llu right after a publishing atomic, %llu inside "
		    "critical sections of which %llu after a slow-path acquisition, %llu long); "
		    "%llu writer acquisitions polled trylock first",
		    (unsigned long long)c.points, (unsigned long long)c.spins,
		    (unsigned long long)c.yields, (unsigned long long)c.sleeps,
		    (unsigned long long)c.rare, (unsigned long long)c.published,
		    (unsigned long long)c.holds, (unsigned long long)c.contended,
		    (unsigned long long)c.long_ones, (unsigned long long)c.polls);
	}
	bool failed = errors || hard_fail;
	if (failed)
		print_replay(run);
	lb_torture_print_banner(run, failed ? "End of test: FAILURE" : "End of test: SUCCESS");
	return failed ? 1 : 0;
}

/* Blocked workers cannot be joined: report, give the verdict, leave now. */
static void fail_and_leave(struct lb_torture_run *run, int errors)
{
	lb_torture_out_stop();
	lb_torture_dump_threads(run);
	verdict(run, errors, true, false);
	fflush(stdout);
	lb_torture_proc_kill_all(run); /* -P: they would outlive us */
	_exit(1);
}

static bool all_exited(const struct lb_torture_run *run)
{
	for (int i = 0; i < run->nthreads; i++) {
		const struct lb_torture_thread *t = &run->threads[i];
		/* Acquire: pairs with the worker's release; it is done with everything. */
		if (t->created && !atomic_load_explicit(&t->exited, memory_order_acquire))
			return false;
	}
	return true;
}

static int count_exited(const struct lb_torture_run *run)
{
	int n = 0;
	for (int i = 0; i < run->nthreads; i++)
		n += atomic_load_explicit(&run->threads[i].exited, memory_order_relaxed);
	return n;
}

/*
 * Wait for every worker to leave.  False when none left and none got a lock
 * for quiet_ns (a thread stuck for good), or at cap_at (CLOCK_MONOTONIC).  Progress
 * rather than a fixed deadline: on an oversubscribed machine a FIFO spinlock
 * lets one waiter in per scheduler time slice or so, and 64 of them may
 * need many seconds to drain, while they all still move.
 */
static bool wait_all_exited(const struct lb_torture_run *run, uint64_t quiet_ns, uint64_t cap_at,
			    struct lb_evidence_window *ev)
{
	uint64_t moved = lb_torture_now_ns();
	int exited = count_exited(run);
	while (!all_exited(run)) {
		uint64_t now = lb_torture_now_ns();
		int n = count_exited(run);
		if (n != exited || lb_torture_idle_ns(run, lb_torture_coarse_ns()) < 2 * TICK_NS) {
			exited = n;
			moved = now;
		}
		/* The evidence window: the last three quarters of the quiet time. */
		if (now - moved < quiet_ns / 4)
			ev->armed = false;
		else if (!ev->armed && ev->at0)
			lb_evidence_arm(ev, run);
		lb_evidence_tick(ev, run);
		if (now - moved >= quiet_ns || now >= cap_at)
			return false;
		lb_torture_sleep_ns(TICK_NS);
	}
	return true;
}

/* Wait until every created worker finished its set-up; false on failure. */
static bool wait_ready(const struct lb_torture_run *run)
{
	uint64_t deadline = lb_torture_now_ns() + READY_TIMEOUT_NS;
	for (;;) {
		bool all = true, failed = false;
		for (int i = 0; i < run->nthreads; i++) {
			const struct lb_torture_thread *t = &run->threads[i];
			/* Acquire: pairs with the release of ready; init_failed is then visible. */
			if (!atomic_load_explicit(&t->ready, memory_order_acquire))
				all = false;
			else if (atomic_load_explicit(&t->init_failed, memory_order_relaxed))
				failed = true;
		}
		if (failed)
			return false;
		if (all)
			return true;
		if (lb_torture_now_ns() >= deadline)
			return false;
		lb_torture_sleep_ns(1000000);
	}
}

/* Interleaved like the kernel: writer i, then reader i. */
static int spawn_workers(struct lb_torture_run *run)
{
	const struct lb_torture_config *cfg = &run->cfg;
	int nw = cfg->nwriters_stress, nr = cfg->nreaders_stress, err = 0;
	void *(*writer)(void *) = run->deadlock ? lb_torture_deadlock_worker : lb_torture_writer;
	for (int i = 0; !err && i < (nw > nr ? nw : nr); i++) {
		if (i < nw)
			err = lb_torture_spawn(run, &run->threads[i], writer);
		if (!err && i < nr)
			err = lb_torture_spawn(run, &run->threads[nw + i], lb_torture_reader);
	}
	return err;
}

static int start_threads(struct lb_torture_run *run)
{
	int err = lb_torture_affinity_init(run);
	/* -P: fork while main is still its only thread. */
	if (!err && run->shared_map)
		err = spawn_workers(run);
	if (!err)
		err = lb_torture_affinity_start(run);
	if (!err)
		err = lb_torture_stutter_start(run);
	if (!err)
		err = lb_torture_rcu_chains_start(run);
	if (!err && !run->shared_map)
		err = spawn_workers(run);
	if (!err)
		err = lb_torture_deadlock_start(run); /* after every worker exists */
	return err;
}

/*
 * The watchdog's limit passed with an evidence window open: judge it.  A
 * lock failure (or no evidence) ends the test: true, after the "!!!" line.
 * Threads that were not running are said so, and a new window opens.
 */
static bool watchdog_fails(struct lb_torture_run *run, struct lb_evidence_window *ev, uint64_t idle)
{
	char why[768] = "no evidence gathered";
	if (ev->armed) {
		struct lb_verdict_evidence e;
		struct lb_verdict v = lb_evidence_judge(ev, run, &e);
		lb_verdict_format(why, sizeof(why), &e, &v);
		if (!v.failure) {
			say(run, "", "watchdog: no lock progress for %.1f s (limit %d s): %s; watching on",
			    (double)idle / LB_NS_PER_S, run->cfg.watchdog, why);
			lb_evidence_arm(ev, run);
			return false;
		}
	}
	say(run, "!!!", "watchdog: no lock progress for %.1f s (limit %d s): %s; thread states:",
	    (double)idle / LB_NS_PER_S, run->cfg.watchdog, why);
	return true;
}

/*
 * Before the watchdog's limit: every worker asleep in the lock over the open
 * window, nobody holding it (lb_verdict_all_asleep): a lost wake-up that no
 * longer waiting can make any clearer.  True after the "!!!" line; false
 * leaves the window open for the judgment at the limit.
 */
static bool watchdog_asleep_fails(struct lb_torture_run *run, struct lb_evidence_window *ev,
				  uint64_t idle)
{
	struct lb_verdict_evidence e;
	lb_evidence_gather(ev, run, &e);
	if (!lb_verdict_all_asleep(&e, run->nthreads))
		return false;
	struct lb_verdict v = lb_verdict_judge(&e);
	char why[768];
	lb_verdict_format(why, sizeof(why), &e, &v);
	say(run, "!!!", "watchdog: no lock progress for %.1f s (limit %d s; every one of the %d "
	    "workers asleep in the lock, none on a CPU or waiting for one more than %.0f ms of "
	    "%.1f s: conclusive before the limit): %s; thread states:", (double)idle / LB_NS_PER_S,
	    run->cfg.watchdog, run->nthreads, (double)LB_VERDICT_ASLEEP_RAN_NS / 1e6,
	    (double)e.window_ns / LB_NS_PER_S, why);
	return true;
}

/* The stats/shutdown/watchdog loop; returns the stats errors counted. */
static int monitor(struct lb_torture_run *run, struct lb_torture_stall *stall,
		   struct lb_evidence_window *ev)
{
	const struct lb_torture_config *cfg = &run->cfg;
	uint64_t start = run->start_ns;
	uint64_t deadline = cfg->duration ? start + (uint64_t)cfg->duration * LB_NS_PER_S : UINT64_MAX;
	uint64_t stat_ns = (uint64_t)cfg->stat_interval * LB_NS_PER_S;
	uint64_t next_stats = stat_ns ? start + stat_ns : UINT64_MAX;
	uint64_t wd_ns = (uint64_t)cfg->watchdog * LB_NS_PER_S;
	uint64_t stall_ns = (uint64_t)cfg->stall_secs * LB_NS_PER_S;
	uint64_t chains_seen = 0, chains_moved = start, next_asleep_look = 0;
	int errors = 0;
	bool starvation_said = false;

	for (;;) {
		lb_torture_sleep_ns(TICK_NS);
		uint64_t now = lb_torture_now_ns();
		if (lb_torture_signalled) {
			say(run, "", "%s: ending the test early", strsignal(lb_torture_signalled));
			break;
		}
		if (now >= deadline)
			break;
		if (cfg->fail_fast && atomic_load_explicit(&run->first_fail_ns, memory_order_relaxed)) {
			say(run, "", "fail_fast: ending the test at the first failure");
			break;
		}
		if (now >= next_stats) {
			if (lb_torture_print_stats(run))
				errors++;
			next_stats += stat_ns;
		}
		uint64_t idle = lb_torture_idle_ns(run, lb_torture_coarse_ns());
		uint64_t waited;
		long long others;
		const struct lb_torture_thread *t = lb_torture_stall_check(
			stall, run, lb_torture_coarse_ns(), stall_ns, &waited, &others);
		if (t && (run->ops->flags & LB_LOCK_F_NO_TURN)) {
			/* The lock's contract: a waiter may be passed over without
			 * bound.  Said once; the watchdog still sees a lock that
			 * nobody gets. */
			if (!starvation_said)
				say(run, "", "starvation: %s %d waiting for the lock for %.1f s while "
				    "other %ss got it %lld times: %s promises a waiter no turn, so "
				    "this is its policy, not a failure", lb_torture_role(t), t->id,
				    (double)waited / LB_NS_PER_S, lb_torture_role(t), others,
				    run->ops->name);
			starvation_said = true;
		} else if (t) {
			say(run, "!!!", "stall: %s %d waiting for the lock for %.1f s while other %ss "
			    "got it %lld times (limit --stall_secs %d s): a lost wake-up or "
			    "starvation; thread states:", lb_torture_role(t), t->id,
			    (double)waited / LB_NS_PER_S, lb_torture_role(t), others, cfg->stall_secs);
			fail_and_leave(run, errors);
		}
		if (!wd_ns)
			continue;
		/* The evidence window opens once progress stopped for a quarter
		 * of the limit and is judged at the limit (three quarters of it
		 * later), or, after threads were found not running, a window on. */
		if (idle < wd_ns / 4)
			ev->armed = false;
		else if (!ev->armed && ev->at0)
			lb_evidence_arm(ev, run);
		lb_evidence_tick(ev, run);
		/* A window open for LB_VERDICT_ASLEEP_WINDOW_NS: may it already
		 * prove a lost wake-up (every worker asleep)? */
		if (ev->armed && now - ev->t0 >= LB_VERDICT_ASLEEP_WINDOW_NS &&
		    now >= next_asleep_look) {
			next_asleep_look = now + ASLEEP_LOOK_NS;
			if (watchdog_asleep_fails(run, ev, idle))
				fail_and_leave(run, errors);
		}
		if (idle >= wd_ns && (!ev->at0 || (ev->armed && now - ev->t0 >= wd_ns * 3 / 4)) &&
		    watchdog_fails(run, ev, idle))
			fail_and_leave(run, errors);
		if (cfg->call_rcu_chains) {
			uint64_t p = lb_torture_rcu_chains_progress(run);
			if (p != chains_seen) {
				chains_seen = p;
				chains_moved = now;
			} else if (now - chains_moved >= wd_ns) {
				say(run, "!!!", "watchdog: call_rcu chains made no progress for %d s",
				    cfg->watchdog);
				fail_and_leave(run, errors);
			}
		}
	}
	return errors;
}

/*
 * Wait for the workers to leave after the end.  The watchdog and the stall
 * check go on past it: workers that do not leave are judged from the
 * evidence over the last three quarters of the quiet time (evidence.h): a
 * lock failure ends in FAILURE with the thread dump; threads that were not
 * running (preempted) are said so, and the test ends without them.  At most
 * DRAIN_CAP_NS in all.
 */
static void drain(struct lb_torture_run *run, int errors)
{
	const struct lb_torture_config *cfg = &run->cfg;
	unsigned int hold_ms = lb_torture_delay_max_hold_ms(run->delay_model, cfg->long_hold);
	uint64_t exit_ns = 5 * LB_NS_PER_S + 2 * (uint64_t)hold_ms * 1000000u;
	uint64_t end_coarse = lb_torture_coarse_ns();
	uint64_t *cpu_at_end = calloc((size_t)run->nthreads, sizeof(*cpu_at_end));
	for (int i = 0; cpu_at_end && i < run->nthreads; i++)
		cpu_at_end[i] = lb_torture_thread_cpu_ns(&run->threads[i]);
	struct lb_evidence_window ev;
	if (lb_evidence_init(&ev, run->nthreads))
		lb_evidence_free(&ev); /* no evidence: the classification alone */
	uint64_t cap_at = lb_torture_now_ns() + DRAIN_CAP_NS;
	while (!wait_all_exited(run, exit_ns, cap_at, &ev)) {
		struct lb_verdict v = { LB_VERDICT_UNKNOWN, -1, LB_RAN_UNKNOWN, true };
		struct lb_verdict_evidence e;
		char why[768] = "";
		bool judged = ev.armed;
		if (judged) {
			v = lb_evidence_judge(&ev, run, &e);
			lb_verdict_format(why, sizeof(why), &e, &v);
		}
		/* The lock moved after all (a holder let go): wait on, to the cap. */
		if ((v.kind == LB_VERDICT_PROGRESS || v.kind == LB_VERDICT_RELEASED) &&
		    lb_torture_now_ns() < cap_at)
			continue;
		if (!v.failure) {
			lb_torture_out_stop();
			say(run, "", "watchdog: workers still in %s %.1f s after the end of the test: "
			    "%s; the test ends without them", cfg->type,
			    (double)(lb_torture_coarse_ns() - end_coarse) / LB_NS_PER_S, why);
			int status = verdict(run, errors, false, false);
			fflush(stdout);
			lb_torture_proc_kill_all(run); /* -P: they would outlive us */
			_exit(status); /* blocked workers cannot be joined */
		}
		lb_torture_report_end_hang(run, end_coarse, cpu_at_end, judged ? why : NULL);
		fail_and_leave(run, errors);
	}
	free(cpu_at_end);
	lb_evidence_free(&ev);
}

static void raise_monitor(void)
{
	/* Best effort: SCHED_FIFO spinners must not starve the verdict. */
	struct sched_param sp = { .sched_priority = MONITOR_FIFO_PRIO };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

int lb_torture_run(const struct lb_torture_config *cfg)
{
	struct lb_torture_run *run = run_alloc(cfg);
	sigset_t sigs, old;
	bool setup_failed = false;
	int errors = 0, err;

	if (!run) {
		fprintf(stderr, "locktorture: out of memory\n");
		return 1;
	}
	err = locks_init(run);
	lb_torture_print_banner(run, "Start of test");
	/* From here to the verdict: set-up, the test and the drain. */
	char what[128];
	snprintf(what, sizeof(what), "%s, %d writers, %d readers", cfg->type, cfg->nwriters_stress,
		 cfg->nreaders_stress);
	lb_torture_out_begin(what, (uint64_t)cfg->duration * LB_NS_PER_S);
	if (cfg->verbose) {
		char cpus[256];
		lb_cpulist_format(&cfg->allowed, cpus, sizeof(cpus));
		say(run, "", "port jiffy = %llu us, delay model %s, watchdog %d s, CPUs %s",
		    (unsigned long long)(cfg->jiffy_ns / 1000), lb_torture_delay_model_name(run->delay_model),
		    cfg->watchdog, cpus);
		say(run, "", "threads: %d writers, %d readers on %d CPUs (%s)",
		    cfg->nwriters_stress, cfg->nreaders_stress, cfg->ncpus,
		    cfg->kernel_defaults ? "--kernel_defaults: -1 = 2 x CPUs writers, or CPUs "
					   "writers + CPUs readers"
					 : "oversubscribed: -1 = 4 x CPUs writers, or 2 x CPUs + 1 "
					   "of each side; --kernel_defaults for the kernel's mix");
		if (cfg->processes)
			say(run, "", "-P: every worker is a process of its own on one MAP_SHARED "
			    "lock (%s's init_shared); %zu bytes shared", run->ops->name,
			    run->shared_used);
		if (cfg->perturb_ppm)
			say(run, "", "perturb: %.4g%% of the lock's atomics and futex calls delayed, "
			    "yielded or slept around; seed %llu", cfg->perturb_ppm / 1e4,
			    (unsigned long long)cfg->seed);
		else
			say(run, "", "perturb: off (--perturb to turn it on); seed %llu",
			    (unsigned long long)cfg->seed);
		if (!err && run->ops->describe) {
			char how[160];
			run->ops->describe(run->lock, how, sizeof(how));
			say(run, "", "%s", how);
		}
	}
	if ((cfg->rt_boost == 2 || cfg->writer_fifo) && !lb_torture_fifo_allowed(run))
		say(run, "", "rt_boost/writer_fifo: SCHED_FIFO skipped for a spinning lock (a FIFO "
		    "waiter can livelock a preempted holder; --rt_spinners 1 forces it)");
	if (err) {
		lb_torture_out_stop();
		say(run, "!!!", "lock init failed: %s", strerror(err));
		err = verdict(run, 1, true, false);
		cleanup(run);
		return err;
	}

	/* Before any worker starts: the hooks read it without synchronisation. */
	lb_perturb_configure(cfg->perturb_ppm, cfg->seed);
	char replay[4096];
	format_replay(cfg, replay, sizeof(replay));
	lb_torture_fatal_install(run, replay);
	/* Workers inherit a mask with SIGINT/SIGTERM blocked: main takes them. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	err = start_threads(run);
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	if (err) {
		say(run, "!!!", "thread start failed: %s", strerror(err));
		setup_failed = true;
	} else if (!wait_ready(run)) {
		say(run, "!!!", "worker set-up failed or timed out");
		setup_failed = true;
	}
	raise_monitor();
	/* The watchdog's normal spin rate, before the workers start spinning. */
	run->normal_spins_per_s = lb_evidence_calibrate_spins();
	run->start_ns = lb_torture_now_ns();
	run->steal_start = lb_steal_ticks_now();
	if (setup_failed)
		atomic_store_explicit(&run->stop, true, memory_order_relaxed);
	/* Release: workers that see go also see start_ns. */
	atomic_store_explicit(&run->go, true, memory_order_release);

	struct lb_torture_stall stall;
	if (lb_torture_stall_init(&stall, run->nthreads))
		say(run, "", "stall check off: out of memory");
	struct lb_evidence_window ev;
	if (lb_evidence_init(&ev, run->nthreads))
		lb_evidence_free(&ev); /* no evidence: the watchdog fails as it did */
	if (!setup_failed)
		errors = monitor(run, &stall, &ev);
	lb_evidence_free(&ev);
	run->longest_wait_ns = stall.longest_ns;
	run->longest_wait_others = stall.longest_others;
	run->longest_wait_thread = stall.longest_thread;
	lb_torture_stall_free(&stall);

	/* Stop: background threads first (they touch worker handles), then workers. */
	atomic_store_explicit(&run->stop, true, memory_order_relaxed);
	lb_torture_stutter_stop(run);
	lb_torture_affinity_stop(run);
	lb_torture_deadlock_stop(run);
	drain(run, errors);
	for (int i = 0; i < run->nthreads && !run->shared_map; i++)
		if (run->threads[i].created)
			pthread_join(run->threads[i].handle, NULL);
	if (run->shared_map)
		errors += lb_torture_proc_reap(run);
	if (lb_torture_rcu_chains_stop(run, DRAIN_TIMEOUT_NS)) {
		say(run, "!!!", "call_rcu chains did not drain within %llu s",
		    (unsigned long long)(DRAIN_TIMEOUT_NS / LB_NS_PER_S));
		setup_failed = true;
	}
	lb_torture_out_stop();
	int status = verdict(run, errors, setup_failed, true);
	if (run->chains)
		_exit(status); /* a late callback may still touch the chains */
	cleanup(run);
	return status;
}
