/* SPDX-License-Identifier: MIT */
/* deadlock.c - --deadlock: injected AA/ABBA/ABBCCA deadlocks (deadlock.h). */
#include "deadlock.h"
#include "deadlock_verdict.h"
#include "out.h"
#include "affinity.h"
#include "clock.h"
#include "delay.h"
#include "lb_cli.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "state.h"
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DL_MAX_GROUP 3
#define DL_NMI_PERIOD_NS 1000000u /* one "NMI" per millisecond */
/* An ordered round's mean hold of each lock (uniform in 0..2x): about a
 * detection period, so a member waiting behind it rechecks meanwhile. */
#define DL_ORDERED_HOLD_NS LB_NS_PER_MS

/* Wait-time histogram buckets: upper bounds in ms; the last is open. */
static const unsigned int dl_bucket_ms[] = { 1, 2, 5, 10, 50, 100, 250, 500 };
#define DL_NBUCKETS (sizeof(dl_bucket_ms) / sizeof(dl_bucket_ms[0]) + 1)

enum dl_ctx { DL_TASK, DL_HANDLER, DL_NCTX };

/* One group's locks and meeting point. */
struct dl_group {
	_Alignas(LB_CACHELINE) _Atomic uint32_t arrived;
	_Atomic uint32_t generation;
	void *locks[DL_MAX_GROUP];
	int ret[DL_MAX_GROUP];  /* the round's second acquisition, per member */
	/* Set by a member right before it asks for its second lock; cleared
	 * before the round's first meeting. */
	_Atomic bool asked[DL_MAX_GROUP];
	/* Per member whose second acquisition timed out: how many other
	 * members had not asked yet when it returned (the cycle had not
	 * formed: no detector could have seen it). */
	int unasked[DL_MAX_GROUP];
	uint64_t round;         /* member 0's count, read by all after a meeting */
};

/* Per worker: written by the thread and its signal handler only. */
struct dl_worker {
	_Alignas(LB_CACHELINE) _Atomic(void *) held; /* innermost lock held, for the handler */
	_Atomic uint64_t hist[DL_NCTX][DL_NBUCKETS];
	struct lb_torture_thread *t;
};

/* The run-wide counts (relaxed adds: the handler may add too). */
struct dl_counts {
	_Atomic long injected, detected, timed_out_only, unbroken, missed_aa;
	_Atomic long ordered, false_deadlock, timeouts;
	_Atomic long nmi_injected, nmi_detected, nmi_missed, nmi_granted, nmi_outside;
};

struct lb_torture_deadlock {
	int mode, group_size, ngroups;
	struct dl_group *groups;
	struct dl_worker *workers; /* one per writer */
	struct dl_counts n;
	_Atomic bool warned_unbroken, warned_missed, warned_false, warned_nmi;
	pthread_t nmi_thread;
	bool nmi_started;
};

static const char *const dl_mode_names[] = { "none", "aa", "abba", "abbcca" };

/* The handler's way to its worker record (set by the worker itself). */
static _Thread_local struct dl_worker *dl_self;
/* The ops for the handler, set before any worker starts. */
static const struct lb_lock_ops *dl_ops;

int lb_torture_deadlock_mode_parse(const char *arg)
{
	for (int m = 0; m < (int)(sizeof(dl_mode_names) / sizeof(dl_mode_names[0])); m++)
		if (!strcmp(arg, dl_mode_names[m]))
			return m;
	return -1;
}

static int group_size_of(int mode)
{
	return mode == LB_TORTURE_DEADLOCK_ABBCCA ? 3 : 2;
}

void lb_torture_deadlock_check_options(const struct lb_torture_config *cfg)
{
	if (cfg->deadlock == LB_TORTURE_DEADLOCK_NONE)
		return;
	const char *mode = dl_mode_names[cfg->deadlock];
	if (!(cfg->ops->flags & LB_LOCK_F_FALLIBLE)) {
		lb_torture_printf("%s%s --deadlock %s skipped: %s cannot fail a lock (no deadlock detection): "
				  "it would hang by design\n", cfg->type, LB_TORTURE_FLAG, mode, cfg->type);
		fflush(stdout);
		exit(77);
	}
	if (cfg->nwriters_stress < group_size_of(cfg->deadlock))
		lb_usage_error("--nwriters_stress: %d writers for --deadlock %s (accepted: %d or "
			       "more, or -1)", cfg->nwriters_stress, mode,
			       group_size_of(cfg->deadlock));
	if (cfg->nreaders_stress || cfg->nested_locks || cfg->inject_hang >= 0)
		lb_usage_error("--deadlock %s: runs writers only (accepted with --nreaders_stress 0, "
			       "--nested_locks 0 and no --inject_hang)", mode);
}

int lb_torture_deadlock_init(struct lb_torture_run *run)
{
	const struct lb_torture_config *cfg = &run->cfg;
	if (cfg->deadlock == LB_TORTURE_DEADLOCK_NONE)
		return 0;
	struct lb_torture_deadlock *dl = calloc(1, sizeof(*dl));
	if (!dl)
		return ENOMEM;
	run->deadlock = dl;
	dl->mode = cfg->deadlock;
	dl->group_size = group_size_of(dl->mode);
	dl->ngroups = cfg->nwriters_stress / dl->group_size;
	dl->groups = aligned_alloc(LB_CACHELINE, sizeof(*dl->groups) * (size_t)dl->ngroups);
	dl->workers = aligned_alloc(LB_CACHELINE, sizeof(*dl->workers) *
						  (size_t)cfg->nwriters_stress);
	if (!dl->groups || !dl->workers)
		return ENOMEM;
	memset(dl->groups, 0, sizeof(*dl->groups) * (size_t)dl->ngroups);
	memset(dl->workers, 0, sizeof(*dl->workers) * (size_t)cfg->nwriters_stress);
	dl_ops = run->ops;
	for (int g = 0; g < dl->ngroups; g++)
		for (int m = 0; m < dl->group_size; m++) {
			void *lock = lb_lock_alloc(run->ops);
			if (!lock)
				return ENOMEM;
			int err = run->ops->init(lock);
			if (err) {
				lb_lock_free(lock);
				return err;
			}
			dl->groups[g].locks[m] = lock;
		}
	return 0;
}

void lb_torture_deadlock_free(struct lb_torture_run *run)
{
	struct lb_torture_deadlock *dl = run->deadlock;
	if (!dl)
		return;
	for (int g = 0; dl->groups && g < dl->ngroups; g++)
		for (int m = 0; m < dl->group_size; m++) {
			void *lock = dl->groups[g].locks[m];
			if (lock && run->ops->destroy)
				run->ops->destroy(lock);
			lb_lock_free(lock);
		}
	free(dl->groups);
	free(dl->workers);
	free(dl);
	run->deadlock = NULL;
}

/* ---- the rounds --------------------------------------------------------- */

static void hist_record(struct dl_worker *w, enum dl_ctx ctx, uint64_t ns)
{
	size_t b = 0;
	while (b < DL_NBUCKETS - 1 && ns >= (uint64_t)dl_bucket_ms[b] * LB_NS_PER_MS)
		b++;
	/* One writer per array (the thread, or its handler): load + store. */
	uint64_t n = atomic_load_explicit(&w->hist[ctx][b], memory_order_relaxed);
	atomic_store_explicit(&w->hist[ctx][b], n + 1, memory_order_relaxed);
}

/* lock_fallible, timed into the task histogram, published for the handler. */
static int take(struct dl_worker *w, void *lock)
{
	struct lb_torture_thread *t = w->t;
	lb_torture_set_state(t, LB_TORTURE_WAITING, LB_TORTURE_MAIN_LOCK);
	uint64_t t0 = lb_torture_now_ns();
	int ret = t->run->ops->lock_fallible(lock, t->tctx[0]);
	hist_record(w, DL_TASK, lb_torture_now_ns() - t0);
	if (ret == 0) {
		long n = atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed);
		atomic_store_explicit(&t->n_lock_acquired, n + 1, memory_order_relaxed);
		lb_torture_note_progress(t);
		atomic_store_explicit(&w->held, lock, memory_order_relaxed);
		/* Compiler-only: the handler sees `held` only once we hold it. */
		atomic_signal_fence(memory_order_seq_cst);
	}
	lb_torture_set_state(t, ret ? LB_TORTURE_OUTSIDE : LB_TORTURE_HOLDING,
			     LB_TORTURE_MAIN_LOCK);
	return ret;
}

/* Unlock `lock`; `still` is what remains held (NULL: nothing). */
static void drop(struct dl_worker *w, void *lock, void *still)
{
	atomic_store_explicit(&w->held, still, memory_order_relaxed);
	/* Compiler-only: the handler stops using `lock` before we release it. */
	atomic_signal_fence(memory_order_seq_cst);
	w->t->run->ops->unlock(lock, w->t->tctx[0]);
}

/*
 * Meet the other members of the group (generation barrier).  false when
 * the run stops while waiting.
 */
static bool meet(struct lb_torture_run *run, struct dl_group *g, int n)
{
	/* Acquire/release: everything a member wrote before it arrived is seen
	 * by every member after the meeting (the round's results). */
	uint32_t gen = atomic_load_explicit(&g->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&g->arrived, 1, memory_order_acq_rel) + 1 == (uint32_t)n) {
		atomic_store_explicit(&g->arrived, 0, memory_order_relaxed);
		atomic_store_explicit(&g->generation, gen + 1, memory_order_release);
		return true;
	}
	/* Wait for the last member; yield: threads outnumber CPUs. */
	while (atomic_load_explicit(&g->generation, memory_order_acquire) == gen) {
		if (lb_torture_must_stop(run))
			return false;
		sched_yield();
	}
	return true;
}

/* A failure of the verdict: counted on the thread, the first one printed. */
static void fail(struct dl_worker *w, _Atomic long *count, _Atomic bool *once, const char *what)
{
	atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
	lb_torture_record_fail(w->t, once, what);
}

/* A first acquisition in a deadlock-free position: only a timeout may fail it. */
static int take_free(struct lb_torture_deadlock *dl, struct dl_worker *w, void *lock)
{
	int ret;
	/* Retry timeouts: each attempt is bounded by the lock's own timeout. */
	while ((ret = take(w, lock))) {
		if (ret == EDEADLK) {
			fail(w, &dl->n.false_deadlock, &dl->warned_false,
			     "EDEADLK without a deadlock (false detection)");
			return ret;
		}
		atomic_fetch_add_explicit(&dl->n.timeouts, 1, memory_order_relaxed);
	}
	return 0;
}

/* aa: take the group lock, retake it (must be EDEADLK), release. */
static void round_aa(struct lb_torture_deadlock *dl, struct dl_worker *w, struct dl_group *g)
{
	void *lock = g->locks[0];
	if (take_free(dl, w, lock))
		return;
	atomic_fetch_add_explicit(&dl->n.injected, 1, memory_order_relaxed);
	int ret = take(w, lock);
	if (ret == EDEADLK) {
		atomic_fetch_add_explicit(&dl->n.detected, 1, memory_order_relaxed);
	} else if (ret == 0) {
		fail(w, &dl->n.unbroken, &dl->warned_unbroken,
		     "AA: a held lock was granted again (no exclusion)");
		drop(w, lock, lock);
	} else {
		fail(w, &dl->n.missed_aa, &dl->warned_missed,
		     "AA: broken by the timeout only (not detected)");
	}
	lb_torture_write_delay(w->t->run, &w->t->rng);
	drop(w, lock, NULL);
}

/*
 * Whether this round of group g is ordered (deadlock-free): drawn from the
 * seed, the same for every member: one round in two, in abba and abbcca.
 * The ordered rounds are what tests for false detections.
 */
static bool round_is_ordered(const struct lb_torture_run *run,
			     int g, uint64_t round)
{
	uint64_t x = (run->cfg.seed ^ ((uint64_t)g << 48) ^ round) * 0x9e3779b97f4a7c15ull;
	return (x >> 63) != 0;
}

/* abba/abbcca, injected: first lock m, meet, then lock m+1.  The result of
 * the second attempt goes into g->ret[m]; false when the run stopped. */
static bool round_cycle(struct lb_torture_deadlock *dl, struct dl_worker *w, struct dl_group *g,
			int m)
{
	struct lb_torture_run *run = w->t->run;
	void *first = g->locks[m], *second = g->locks[(m + 1) % dl->group_size];
	/* Relaxed: the meeting below (acq_rel) orders it before the others'
	 * reads in this round. */
	atomic_store_explicit(&g->asked[m], false, memory_order_relaxed);
	int first_err = take_free(dl, w, first);
	if (!meet(run, g, dl->group_size)) {
		if (!first_err)
			drop(w, first, NULL);
		return false;
	}
	/* seq_cst, with the loads below: a member whose timeout returns and
	 * then reads false here read it before this store, so we had not
	 * asked (had not entered the lock's wait) at its timeout. */
	atomic_store_explicit(&g->asked[m], true, memory_order_seq_cst);
	int ret = first_err ? first_err : take(w, second);
	g->unasked[m] = 0;
	if (ret == ETIMEDOUT)
		for (int k = 0; k < dl->group_size; k++)
			g->unasked[m] += !atomic_load_explicit(&g->asked[k], memory_order_seq_cst);
	g->ret[m] = ret;
	if (!first_err && ret == 0) {
		lb_torture_write_delay(run, &w->t->rng);
		drop(w, second, first);
	}
	if (!first_err)
		drop(w, first, NULL);
	return true;
}

/*
 * abba/abbcca, ordered: hand over hand through the locks in index order
 * (take k + 1, then drop k).  Deadlock-free, yet with three members one
 * waits for a lock while holding one that another waiter wants: the shape
 * an over-eager ABBA check mistakes for a cycle.
 */
static void round_ordered(struct lb_torture_deadlock *dl, struct dl_worker *w, struct dl_group *g)
{
	int n = dl->group_size;
	atomic_fetch_add_explicit(&dl->n.ordered, 1, memory_order_relaxed);
	if (take_free(dl, w, g->locks[0]))
		return;
	for (int k = 1; k < n; k++) {
		/* Hold a while, longer or shorter: the members behind line up,
		 * each holding one lock and waiting for the next. */
		lb_torture_spin_ns(lb_torture_random(&w->t->rng) % (2 * DL_ORDERED_HOLD_NS));
		lb_torture_write_delay(w->t->run, &w->t->rng);
		if (take_free(dl, w, g->locks[k])) {
			drop(w, g->locks[k - 1], NULL);
			return;
		}
		drop(w, g->locks[k - 1], g->locks[k]);
	}
	lb_torture_spin_ns(lb_torture_random(&w->t->rng) % (2 * DL_ORDERED_HOLD_NS));
	lb_torture_write_delay(w->t->run, &w->t->rng);
	drop(w, g->locks[n - 1], NULL);
}

/* Member 0, after the closing meeting: did some member break the cycle? */
static void judge_cycle(struct lb_torture_deadlock *dl, struct dl_worker *w, struct dl_group *g)
{
	atomic_fetch_add_explicit(&dl->n.injected, 1, memory_order_relaxed);
	switch (lb_dl_judge_round(g->ret, g->unasked, dl->group_size)) {
	case LB_DL_UNBROKEN:
		fail(w, &dl->n.unbroken, &dl->warned_unbroken,
		     "cycle: every member got its second lock (no exclusion)");
		break;
	case LB_DL_DETECTED:
		atomic_fetch_add_explicit(&dl->n.detected, 1, memory_order_relaxed);
		break;
	case LB_DL_MISSED:
		fail(w, &dl->n.missed_aa, &dl->warned_missed,
		     "cycle: broken by the timeout only while every member waited (not detected)");
		break;
	case LB_DL_TIMEOUT_ONLY:
		/* A member timed out before another had asked: the cycle never
		 * existed while anyone could detect it (a preempted member). */
		atomic_fetch_add_explicit(&dl->n.timed_out_only, 1, memory_order_relaxed);
		break;
	}
}

/* One round of the group; false when the run stopped. */
static bool one_round(struct lb_torture_deadlock *dl, struct dl_worker *w, struct dl_group *g,
		      int gi, int m)
{
	struct lb_torture_run *run = w->t->run;
	if (!meet(run, g, dl->group_size))
		return false;
	uint64_t round = g->round;
	if (dl->mode == LB_TORTURE_DEADLOCK_AA) {
		round_aa(dl, w, g);
	} else if (round_is_ordered(run, gi, round)) {
		round_ordered(dl, w, g);
	} else {
		/* Each member writes its own ret[m]; member 0 reads them all
		 * after the next meeting. */
		if (!round_cycle(dl, w, g, m))
			return false;
		if (!meet(run, g, dl->group_size))
			return false;
		if (m == 0)
			judge_cycle(dl, w, g);
	}
	/* The next round's number: read by all after its opening meeting. */
	if (!meet(run, g, dl->group_size))
		return false;
	if (m == 0)
		g->round = round + 1;
	return true;
}

/* ---- "NMI" contenders ------------------------------------------------------ */

static void on_nmi(int sig)
{
	(void)sig;
	struct dl_worker *w = dl_self;
	struct lb_torture_deadlock *dl;
	if (!w)
		return;
	dl = w->t->run->deadlock;
	int saved = errno;
	void *lock = atomic_load_explicit(&w->held, memory_order_relaxed);
	if (!lock) {
		atomic_fetch_add_explicit(&dl->n.nmi_outside, 1, memory_order_relaxed);
		errno = saved;
		return;
	}
	/* The thread holds `lock` and cannot run until we return: AA. */
	atomic_fetch_add_explicit(&dl->n.nmi_injected, 1, memory_order_relaxed);
	uint64_t t0 = lb_torture_now_ns();
	int ret = dl_ops->lock_fallible(lock, w->t->tctx[0]);
	hist_record(w, DL_HANDLER, lb_torture_now_ns() - t0);
	if (ret == EDEADLK) {
		atomic_fetch_add_explicit(&dl->n.nmi_detected, 1, memory_order_relaxed);
	} else if (ret == 0) {
		atomic_fetch_add_explicit(&dl->n.nmi_granted, 1, memory_order_relaxed);
		dl_ops->unlock(lock, w->t->tctx[0]);
	} else {
		atomic_fetch_add_explicit(&dl->n.nmi_missed, 1, memory_order_relaxed);
	}
	errno = saved;
}

static void *nmi_sender(void *arg)
{
	struct lb_torture_run *run = arg;
	struct lb_torture_deadlock *dl = run->deadlock;
	int n = dl->ngroups * dl->group_size;
	uint64_t x = run->cfg.seed | 1;
	/* Until the run stops: one signal per period to a random worker. */
	while (!lb_torture_must_stop(run)) {
		lb_torture_sleep_ns(DL_NMI_PERIOD_NS);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		struct lb_torture_thread *t = &run->threads[x % (uint64_t)n];
		if (t->created && !atomic_load_explicit(&t->exited, memory_order_acquire))
			pthread_kill(t->handle, SIGUSR2);
	}
	return NULL;
}

int lb_torture_deadlock_start(struct lb_torture_run *run)
{
	struct lb_torture_deadlock *dl = run->deadlock;
	if (!dl || !run->cfg.deadlock_nmi)
		return 0;
	/* Installed before the first signal; a thread without a worker
	 * record (dl_self NULL) ignores it. */
	struct sigaction sa = { .sa_handler = on_nmi, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	int err = pthread_create(&dl->nmi_thread, NULL, nmi_sender, run);
	dl->nmi_started = !err;
	return err;
}

void lb_torture_deadlock_stop(struct lb_torture_run *run)
{
	struct lb_torture_deadlock *dl = run->deadlock;
	if (dl && dl->nmi_started)
		pthread_join(dl->nmi_thread, NULL);
	if (dl)
		dl->nmi_started = false;
}

/* ---- the worker ------------------------------------------------------------ */

void *lb_torture_deadlock_worker(void *arg)
{
	struct lb_torture_thread *t = arg;
	struct lb_torture_run *run = t->run;
	struct lb_torture_deadlock *dl = run->deadlock;
	int gi = t->id / dl->group_size, m = t->id % dl->group_size;

	/* One context for every lock: one held-locks table per thread. */
	if (lb_torture_thread_setup(t, 0))
		return NULL;
	if (run->cfg.verbose)
		lb_torture_printf("%s%s lock_torture_deadlock task started\n", run->cfg.type, LB_TORTURE_FLAG);
	struct dl_worker *w = &dl->workers[t->id];
	w->t = t;
	dl_self = w;
	if (!lb_torture_wait_for_go(t) || gi >= dl->ngroups)
		goto out; /* a writer left over when groups were formed: sits out */
	while (!lb_torture_must_stop(run) && one_round(dl, w, &dl->groups[gi], gi, m))
		lb_torture_note_progress(t);
out:
	atomic_store_explicit(&w->held, NULL, memory_order_relaxed);
	dl_self = NULL;
	lb_torture_finish(t);
	return NULL;
}

/* ---- the report ------------------------------------------------------------ */

static long get(_Atomic long *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static void print_histograms(const struct lb_torture_run *run)
{
	const struct lb_torture_deadlock *dl = run->deadlock;
	static const char *const names[DL_NCTX] = { "task", "handler" };
	char line[512];
	for (int i = 0; i < dl->ngroups * dl->group_size; i++)
		for (int c = 0; c < DL_NCTX; c++) {
			int used = snprintf(line, sizeof(line), "%s%s deadlock wait histogram: writer "
					    "%d %-7s", run->cfg.type, LB_TORTURE_FLAG, i, names[c]);
			for (size_t b = 0; b < DL_NBUCKETS && used < (int)sizeof(line) - 32; b++) {
				uint64_t v = atomic_load_explicit(&dl->workers[i].hist[c][b],
								  memory_order_relaxed);
				if (b < DL_NBUCKETS - 1)
					used += snprintf(line + used, sizeof(line) - (size_t)used,
							 " <%ums=%llu", dl_bucket_ms[b],
							 (unsigned long long)v);
				else
					used += snprintf(line + used, sizeof(line) - (size_t)used,
							 " >=%ums=%llu", dl_bucket_ms[b - 1],
							 (unsigned long long)v);
			}
			lb_torture_printf("%s\n", line);
		}
}

/* After the joins: every lock of every group must still lock and unlock. */
static int check_usable(const struct lb_torture_run *run, int *usable)
{
	const struct lb_torture_deadlock *dl = run->deadlock;
	void *tctx = lb_thread_ctx_alloc(run->ops);
	int total = 0;
	*usable = 0;
	if ((run->ops->thread_ctx_size && !tctx) ||
	    (run->ops->thread_init && run->ops->thread_init(tctx, 0)))
		return dl->ngroups * dl->group_size;
	for (int g = 0; g < dl->ngroups; g++)
		for (int m = 0; m < dl->group_size; m++, total++)
			if (run->ops->lock_fallible(dl->groups[g].locks[m], tctx) == 0) {
				run->ops->unlock(dl->groups[g].locks[m], tctx);
				(*usable)++;
			}
	if (run->ops->thread_fini)
		run->ops->thread_fini(tctx);
	lb_thread_ctx_free(tctx);
	return total;
}

int lb_torture_deadlock_report(struct lb_torture_run *run)
{
	struct lb_torture_deadlock *dl = run->deadlock;
	const char *ty = run->cfg.type;
	if (!dl)
		return 0;
	struct dl_counts *n = &dl->n;
	int errors = 0, usable, total = check_usable(run, &usable);
	lb_torture_printf("%s%s deadlock %s: %d groups of %d; injected=%ld detected(EDEADLK)=%ld "
			  "timeout-only=%ld missed=%ld unbroken=%ld\n", ty, LB_TORTURE_FLAG,
			  dl_mode_names[dl->mode], dl->ngroups, dl->group_size, get(&n->injected),
			  get(&n->detected), get(&n->timed_out_only), get(&n->missed_aa), get(&n->unbroken));
	if (get(&n->timed_out_only))
		lb_torture_printf("%s%s deadlock timeout-only: %ld round(s) broken by a timeout that "
				  "returned before another member had asked for its second lock: the "
				  "cycle never formed (not a missed detection)\n", ty, LB_TORTURE_FLAG,
				  get(&n->timed_out_only));
	lb_torture_printf("%s%s deadlock-free: ordered rounds=%ld false EDEADLK=%ld timeouts (retried)=%ld\n",
			  ty, LB_TORTURE_FLAG, get(&n->ordered), get(&n->false_deadlock), get(&n->timeouts));
	if (run->cfg.deadlock_nmi)
		lb_torture_printf("%s%s deadlock nmi: injected=%ld detected(EDEADLK)=%ld missed=%ld "
				  "granted=%ld (outside any lock: %ld)\n", ty, LB_TORTURE_FLAG,
				  get(&n->nmi_injected), get(&n->nmi_detected), get(&n->nmi_missed),
				  get(&n->nmi_granted), get(&n->nmi_outside));
	print_histograms(run);
	lb_torture_printf("%s%s deadlock locks usable after the run: %d of %d\n", ty, LB_TORTURE_FLAG, usable,
			  total);
	errors += usable != total;
	errors += get(&n->injected) == 0; /* nothing injected: the check proved nothing */
	errors += get(&n->nmi_missed) != 0 || get(&n->nmi_granted) != 0;
	if (get(&n->injected) == 0)
		lb_torture_printf("%s%s!!! deadlock: no deadlock was injected (run longer)\n", ty,
				  LB_TORTURE_FLAG);
	if (get(&n->nmi_missed) || get(&n->nmi_granted))
		lb_torture_printf("%s%s!!! deadlock nmi: a handler retaking its thread's lock was not refused "
				  "with EDEADLK\n", ty, LB_TORTURE_FLAG);
	return errors; /* the round failures were counted as lock failures already */
}
