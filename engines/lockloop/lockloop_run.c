/* SPDX-License-Identifier: MIT */
/*
 * lockloop_run.c - the timed lock loop: one fixed-time measurement of one lock at one thread count.
 *
 * Data path: worker loop -> ops->lock (vtable) -> the lock's own code; then
 * the critical section writes cs_lines shared cache lines (so data really
 * moves between CPUs), runs the calibrated CS work, ops->unlock, then the
 * private parallel work.  Every 2^sample_shift ops the time spent inside
 * ops->lock is read with the ordered cycle counter (lb_cycles_ordered, less
 * its floor) into a per-thread histogram.
 *
 * Read/write mix (--read-pct): a per-thread xorshift picks the side per op.
 * Writers increment every shared line (so all lines always hold the same
 * value); readers load them all and count any disagreement as a torn read:
 * a reader that ran concurrently with a writer.
 */
#include "lockloop.h"
#include "lb_atomic.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_outfile.h"
#include "lb_registry.h"
#include "lb_stop.h"
#include "lb_thread.h"
#include "lb_stats.h"
#include "lb_time.h"
#include "lb_work.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One shared cache line written inside the critical section. */
struct shared_line {
	_Atomic uint64_t value;
	char pad[LB_CACHELINE - sizeof(uint64_t)];
};

struct run_ctx {
	const struct lb_loop_params *cfg;
	const struct lb_lock_ops *ops;
	void *lock;
	struct shared_line *data;     /* RCU locks: two versions of cs_lines lines */
	_Atomic unsigned int current; /* RCU locks: the published version (0/1) */
	struct lb_barrier start, done;
	unsigned int nthreads;
	uint64_t late_start_ns; /* LOCKBENCH_TEST_LATE_START_NS: thread 0 starts late */
	double data_ns_per_op;  /* one cs_write of cs_lines private lines, uncontended */
	/* The stop flag on a line of its own: every worker reads it every op. */
	_Alignas(LB_CACHELINE) _Atomic int stop;
	/* Set by the last worker to start running (after `started` reached
	 * nthreads): per-thread counts for fairness are taken from here on, the
	 * window in which every thread ran.  On the stop flag's line: read
	 * beside it until a worker has seen it once. */
	_Atomic int all_running;
	_Atomic unsigned int started;
	char pad[LB_CACHELINE - 2 * sizeof(int) - sizeof(unsigned int)];
};

struct worker {
	struct run_ctx *ctx;
	unsigned int index;
	int cpu;
	int err;           /* thread_init failure, reported by main */
	uint64_t window_start_ops; /* ops done before every thread was running */
	void *tctx;
	uint64_t torn;
	uint64_t sink;     /* keeps the busy work observable */
	struct lb_thread_result res;
	struct lb_hist hist[LB_SIDES];
};

/* Writers bump every line; plain load+store is enough under the lock. */
static inline void cs_write(struct shared_line *data, unsigned int lines)
{
	for (unsigned int i = 0; i < lines; i++) {
		uint64_t v = atomic_load_explicit(&data[i].value, memory_order_relaxed);
		atomic_store_explicit(&data[i].value, v + 1, memory_order_relaxed);
	}
}

/* Readers check the writers' invariant: every line holds the same value. */
static inline uint64_t cs_read(struct shared_line *data, unsigned int lines)
{
	uint64_t first = atomic_load_explicit(&data[0].value, memory_order_relaxed), torn = 0;
	for (unsigned int i = 1; i < lines; i++)
		torn |= atomic_load_explicit(&data[i].value, memory_order_relaxed) != first;
	return torn;
}

/*
 * RCU-style update for LB_LOCK_F_RCU locks, whose readers run alongside the
 * writer: write the next version into the other copy, then publish it with
 * a release store (pairs with the readers' acquire load).  The lock's
 * unlock waits for a grace period, so no reader still looks at the copy the
 * next writer overwrites.
 */
static inline void cs_write_rcu(struct run_ctx *ctx, unsigned int lines)
{
	unsigned int cur = atomic_load_explicit(&ctx->current, memory_order_relaxed);
	struct shared_line *from = ctx->data + cur * lines, *to = ctx->data + (1 - cur) * lines;
	for (unsigned int i = 0; i < lines; i++)
		atomic_store_explicit(&to[i].value,
				      atomic_load_explicit(&from[i].value, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	atomic_store_explicit(&ctx->current, 1 - cur, memory_order_release);
}

static inline uint64_t cs_read_rcu(struct run_ctx *ctx, unsigned int lines)
{
	/* acquire: pairs with the release in cs_write_rcu. */
	unsigned int cur = atomic_load_explicit(&ctx->current, memory_order_acquire);
	return cs_read(ctx->data + cur * lines, lines);
}

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Forced inline: each loop below gets its own copy, `fallible` folded. */
#define LOOP_BODY static inline __attribute__((always_inline))

/* The exclusive loop: kept separate from the mixed one so that the hot
 * path carries no per-op side choice.  fallible (a constant): take the lock
 * with lock_fallible and count a failed acquisition (no critical section,
 * no op) instead of calling lock(); false compiles to the plain loop. */
LOOP_BODY uint64_t exclusive_body(struct worker *w, const bool fallible)
{
	struct run_ctx *ctx = w->ctx;
	void (*lock)(void *, void *) = ctx->ops->lock;
	int (*lock_fallible)(void *, void *) = ctx->ops->lock_fallible;
	void (*unlock)(void *, void *) = ctx->ops->unlock;
	void *l = ctx->lock, *tctx = w->tctx;
	struct shared_line *data = ctx->data;
	const unsigned int lines = ctx->cfg->cs_lines;
	const uint64_t cs_iters = ctx->cfg->cs.iters, par_iters = ctx->cfg->par.iters;
	const uint64_t mask = (UINT64_C(1) << ctx->cfg->sample_shift) - 1;
	struct lb_hist *hist = &w->hist[LB_SIDE_WRITE];
	/* Ordered reads (lb_cycles_ordered), less no more than their floor. */
	const uint64_t timer_cost = lb_cycles_ordered_floor();
	uint64_t n = 0, sink = 0, failures = 0;

	bool in_window = false;
	/* Relaxed: the flags only end the run and open the fairness window;
	 * nothing is published with them. */
	while (!atomic_load_explicit(&ctx->stop, memory_order_relaxed)) {
		if (LB_UNLIKELY(!in_window) &&
		    atomic_load_explicit(&ctx->all_running, memory_order_relaxed)) {
			in_window = true;
			w->window_start_ops = n;
		}
		int failed = 0;
		if (LB_UNLIKELY((n & mask) == 0)) {
			uint64_t t0 = lb_cycles_ordered();
			if (fallible)
				failed = lock_fallible(l, tctx);
			else
				lock(l, tctx);
			uint64_t dt = lb_cycles_ordered() - t0;
			if (!failed)
				lb_hist_record(hist, dt > timer_cost ? dt - timer_cost : 0);
		} else if (fallible) {
			failed = lock_fallible(l, tctx);
		} else {
			lock(l, tctx);
		}
		if (fallible && LB_UNLIKELY(failed)) {
			failures++; /* not held: no critical section, no op */
			continue;
		}
		cs_write(data, lines);
		if (cs_iters)
			sink += lb_work(cs_iters);
		unlock(l, tctx);
		if (par_iters)
			sink += lb_work(par_iters);
		n++;
	}
	w->sink = sink;
	w->res.lock_failures = failures;
	if (!in_window)
		w->window_start_ops = n; /* the window never opened: nothing in it */
	return n;
}

LB_NOINLINE static uint64_t loop_exclusive(struct worker *w)
{
	return exclusive_body(w, false);
}

/* A lock whose acquisition can fail (LB_LOCK_F_FALLIBLE): failures counted. */
LB_NOINLINE static uint64_t loop_exclusive_fallible(struct worker *w)
{
	return exclusive_body(w, true);
}

static void loop_mixed(struct worker *w)
{
	struct run_ctx *ctx = w->ctx;
	const struct lb_lock_ops *ops = ctx->ops;
	void *l = ctx->lock, *tctx = w->tctx;
	struct shared_line *data = ctx->data;
	const unsigned int lines = ctx->cfg->cs_lines;
	const uint64_t cs_iters = ctx->cfg->cs.iters, par_iters = ctx->cfg->par.iters;
	const uint64_t mask = (UINT64_C(1) << ctx->cfg->sample_shift) - 1;
	/* P(read) = read_pct/100 as a threshold on 32 random bits. */
	const uint64_t threshold = (uint64_t)ctx->cfg->read_pct * (UINT64_C(1) << 32) / 100;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1), n = 0, sink = 0, torn = 0;
	uint64_t count[LB_SIDES] = { 0, 0 };
	const uint64_t timer_cost = lb_cycles_ordered_floor();
	const bool rcu = ops->flags & LB_LOCK_F_RCU;

	bool in_window = false;
	/* Relaxed, as in loop_exclusive. */
	while (!atomic_load_explicit(&ctx->stop, memory_order_relaxed)) {
		if (LB_UNLIKELY(!in_window) &&
		    atomic_load_explicit(&ctx->all_running, memory_order_relaxed)) {
			in_window = true;
			w->window_start_ops = n;
		}
		int side = (xorshift64(&rng) >> 32) < threshold ? LB_SIDE_READ : LB_SIDE_WRITE;
		bool sample = (n & mask) == 0;
		uint64_t t0 = sample ? lb_cycles_ordered() : 0;
		if (side == LB_SIDE_READ)
			ops->read_lock(l, tctx);
		else
			ops->lock(l, tctx);
		if (sample) {
			uint64_t dt = lb_cycles_ordered() - t0;
			lb_hist_record(&w->hist[side], dt > timer_cost ? dt - timer_cost : 0);
		}
		if (rcu)
			side == LB_SIDE_READ ? (void)(torn += cs_read_rcu(ctx, lines))
					     : cs_write_rcu(ctx, lines);
		else if (side == LB_SIDE_READ)
			torn += cs_read(data, lines);
		else
			cs_write(data, lines);
		if (cs_iters)
			sink += lb_work(cs_iters);
		if (side == LB_SIDE_READ)
			ops->read_unlock(l, tctx);
		else
			ops->unlock(l, tctx);
		if (par_iters)
			sink += lb_work(par_iters);
		count[side]++;
		n++;
	}
	w->sink = sink;
	if (!in_window)
		w->window_start_ops = n;
	w->torn = torn;
	w->res.ops[LB_SIDE_WRITE] = count[LB_SIDE_WRITE];
	w->res.ops[LB_SIDE_READ] = count[LB_SIDE_READ];
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run_ctx *ctx = w->ctx;

	lb_pin_self(w->cpu);
	for (int s = 0; s < LB_SIDES; s++)
		lb_hist_init(&w->hist[s]);
	/* First touch of the context happens on the worker's own CPU. */
	w->tctx = lb_thread_ctx_alloc(ctx->ops);
	/* Where it landed (a fact for the record: malloc may reuse a page
	 * another node's thread touched first). */
	w->res.ctx_node = lb_mem_node_of(w->tctx);
	if (ctx->ops->thread_ctx_size && !w->tctx)
		w->err = ENOMEM;
	else if (ctx->ops->thread_init)
		w->err = ctx->ops->thread_init(w->tctx, w->index);
	if (w->err)
		atomic_store_explicit(&ctx->stop, 1, memory_order_relaxed);

	lb_barrier_wait(&ctx->start);
	if (w->index == 0 && ctx->late_start_ns)
		lb_spin_ns(ctx->late_start_ns); /* the test hook below: a late starter */
	w->res.start_ns = lb_now_ns();
	/* Relaxed counter; the last one to arrive opens the window (relaxed
	 * too: the flag orders nothing, it only marks a point in time). */
	if (atomic_fetch_add_explicit(&ctx->started, 1, memory_order_relaxed) + 1 == ctx->nthreads)
		atomic_store_explicit(&ctx->all_running, 1, memory_order_relaxed);
	uint64_t cpu0 = lb_thread_cpu_ns();
	if (!w->err) {
		if (ctx->cfg->read_pct < 0 && ctx->ops->lock_fallible)
			w->res.ops[LB_SIDE_WRITE] = loop_exclusive_fallible(w);
		else if (ctx->cfg->read_pct < 0)
			w->res.ops[LB_SIDE_WRITE] = loop_exclusive(w);
		else
			loop_mixed(w);
	}
	w->res.cpu_ns = lb_thread_cpu_ns() - cpu0;
	w->res.window_ops = w->res.ops[LB_SIDE_WRITE] + w->res.ops[LB_SIDE_READ] - w->window_start_ops;
	w->res.end_ns = lb_now_ns();
	/* Nobody may still be inside the lock when contexts are torn down. */
	lb_barrier_wait(&ctx->done);
	if (!w->err && ctx->ops->thread_fini)
		ctx->ops->thread_fini(w->tctx);
	return NULL;
}

/*
 * Sleep the run's length; a stop request ends it early.  The handler's
 * EINTR normally cuts the sleep at once; the sleep is also taken in slices
 * of at most 100 ms with the flag checked between them, because a runtime
 * that defers signal handlers (ThreadSanitizer does, until the thread next
 * enters a function it wraps) would otherwise stop the run only at its end.
 */
static void sleep_ns(uint64_t ns)
{
	const uint64_t slice = 100000000u;
	while (ns && !lb_stop_signal()) {
		uint64_t step = ns < slice ? ns : slice;
		struct timespec ts = { .tv_sec = (time_t)(step / LB_NS_PER_S),
				       .tv_nsec = (long)(step % LB_NS_PER_S) };
		/* nanosleep (Linux measures it on CLOCK_MONOTONIC): the sleep call
		 * ThreadSanitizer wraps, so it runs a deferred handler after it. */
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			if (lb_stop_signal())
				return;
		ns -= step;
	}
}

static void summarize_run(const struct run_ctx *ctx, struct worker *w, unsigned int n,
			  struct lb_run_result *out)
{
	const struct lb_loop_params *cfg = ctx->cfg;
	uint64_t first_start = UINT64_MAX, last_start = 0, first_end = UINT64_MAX, last_end = 0;
	uint64_t cpu_ns = 0, side_ops[LB_SIDES] = { 0, 0 };
	double *per_thread = calloc(n, sizeof(double));
	struct lb_hist *merged = malloc(sizeof(*merged));

	out->threads = calloc(n, sizeof(*out->threads));
	for (unsigned int i = 0; i < n; i++) {
		struct lb_thread_result *t = &w[i].res;
		first_start = t->start_ns < first_start ? t->start_ns : first_start;
		last_start = t->start_ns > last_start ? t->start_ns : last_start;
		first_end = t->end_ns < first_end ? t->end_ns : first_end;
		last_end = t->end_ns > last_end ? t->end_ns : last_end;
		cpu_ns += t->cpu_ns;
		for (int s = 0; s < LB_SIDES; s++)
			side_ops[s] += t->ops[s];
		if (per_thread)
			per_thread[i] = (double)t->window_ops;
		out->torn_reads += w[i].torn;
		out->lock_failures += t->lock_failures;
		if (out->threads)
			out->threads[i] = *t;
	}
	out->total_ops = side_ops[0] + side_ops[1];
	out->elapsed_ns = last_end > first_start ? last_end - first_start : 1;
	double secs = (double)out->elapsed_ns / LB_NS_PER_S;
	double ops = out->total_ops ? (double)out->total_ops : 1.0;
	out->ops_per_sec = (double)out->total_ops / secs;
	out->ns_per_op = (double)out->elapsed_ns / ops;
	out->cycles_per_op = out->ns_per_op * lb_cycles_per_ns();
	out->cpu_ns_per_op = (double)cpu_ns / ops;
	double ns_per_iter = lb_work_ns_per_iter();
	/* The lock's overhead: CPU per op less the calibrated work and less the
	 * critical section's writes of the shared lines (their uncontended
	 * cost, measured before the run). */
	out->overhead_ns = lb_work_overhead_ns(out->cpu_ns_per_op,
					       (double)(cfg->cs.iters + cfg->par.iters) * ns_per_iter +
						       ctx->data_ns_per_op,
					       &out->overhead_clamped);
	if (per_thread) {
		struct lb_summary s;
		lb_summarize(per_thread, n, &s);
		out->fairness_cov = s.cov;
		out->min_max_ratio = lb_min_max_ratio(per_thread, n);
	}
	out->overlap = first_end > last_start
			       ? (double)(first_end - last_start) / (double)(last_end - first_start)
			       : 0.0;
	/* Each thread's own p99 (both sides): a thread that got few turns has
	 * few samples and barely moves the merged quantiles, but it is the one
	 * that waited. */
	out->lat_p99_worst_thread_ns = 0;
	for (unsigned int i = 0; i < n && merged; i++) {
		lb_hist_init(merged);
		for (int s = 0; s < LB_SIDES; s++)
			lb_hist_merge(merged, &w[i].hist[s]);
		double p99 = merged->count ? lb_cycles_to_ns(lb_hist_quantile(merged, 0.99)) : 0;
		out->lat_p99_worst_thread_ns = p99 > out->lat_p99_worst_thread_ns
						       ? p99 : out->lat_p99_worst_thread_ns;
	}
	for (int s = 0; s < LB_SIDES && merged; s++) {
		struct lb_side_result *sr = &out->side[s];
		lb_hist_init(merged);
		for (unsigned int i = 0; i < n; i++)
			lb_hist_merge(merged, &w[i].hist[s]);
		sr->ops = side_ops[s];
		sr->ops_per_sec = (double)side_ops[s] / secs;
		sr->lat_samples = merged->count;
		sr->lat_p50_ns = lb_cycles_to_ns(lb_hist_quantile(merged, 0.50));
		sr->lat_p99_ns = lb_cycles_to_ns(lb_hist_quantile(merged, 0.99));
		sr->lat_p999_ns = lb_cycles_to_ns(lb_hist_quantile(merged, 0.999));
		sr->lat_max_ns = lb_cycles_to_ns(lb_hist_quantile(merged, 1.0));
	}
	/* Exclusive locks must not lose increments of the shared data. */
	unsigned int cur = atomic_load_explicit(&ctx->current, memory_order_relaxed);
	uint64_t seen = atomic_load_explicit(&ctx->data[cur * cfg->cs_lines].value,
					     memory_order_relaxed);
	out->lost_updates = side_ops[LB_SIDE_WRITE] > seen && cfg->cs_lines
				    ? side_ops[LB_SIDE_WRITE] - seen
				    : 0;
	free(per_thread);
	free(merged);
}

/*
 * What one critical section's writes cost without any lock or contention:
 * cs_write over cs_lines lines of a private copy, the median of 5 timed
 * batches (not the fastest: the run's own ops are an average over a
 * machine that also runs other work).  Subtracted from the overhead so
 * that ovh_ns is the lock's.
 */
#define DATA_CAL_ROUNDS 8192
#define DATA_CAL_BATCHES 5
static double data_write_ns(unsigned int lines)
{
	if (!lines)
		return 0;
	struct shared_line *priv = aligned_alloc(LB_CACHELINE, sizeof(*priv) * lines);
	if (!priv)
		return 0;
	memset(priv, 0, sizeof(*priv) * lines);
	double ns[DATA_CAL_BATCHES];
	for (int batch = 0; batch < DATA_CAL_BATCHES; batch++) {
		uint64_t t0 = lb_thread_cpu_ns();
		for (unsigned int i = 0; i < DATA_CAL_ROUNDS; i++) {
			cs_write(priv, lines);
			/* A compiler barrier: every round's writes happen. */
			__asm__ __volatile__("" : : "r"(priv) : "memory");
		}
		ns[batch] = (double)(lb_thread_cpu_ns() - t0) / DATA_CAL_ROUNDS;
	}
	free(priv);
	return lb_median(ns, DATA_CAL_BATCHES);
}

/* cs_lines lines (at least one), twice over for an RCU lock's two versions. */
static size_t data_size_or_line(const struct lb_loop_params *cfg)
{
	return 2 * sizeof(struct shared_line) * (cfg->cs_lines ? cfg->cs_lines : 1);
}

int lb_loop_run_one(const struct lb_loop_params *cfg, const struct lb_lock_ops *ops,
		     unsigned int nthreads, struct lb_run_result *out)
{
	int err = 0;
	int *cpus = calloc(nthreads, sizeof(int));
	struct worker *w = aligned_alloc(LB_CACHELINE, (sizeof(*w) * nthreads + LB_CACHELINE - 1) /
							       LB_CACHELINE * LB_CACHELINE);
	struct run_ctx *ctx = aligned_alloc(LB_CACHELINE, sizeof(*ctx));
	struct lb_threads threads = { 0 };
	void *lock = NULL;
	int node = -1;

	memset(out, 0, sizeof(*out));
	out->lock_node = out->data_node = -1;
	out->c2c_before_ns = out->c2c_after_ns = -1;
	out->ops = ops;
	out->nthreads = nthreads;
	out->exclusive = cfg->read_pct < 0;
	out->lock_ns_per_op = NAN; /* set by the caller from the same run's `none` */
	if (!cpus || !w || !ctx) {
		err = ENOMEM;
		goto out;
	}
	memset(w, 0, sizeof(*w) * nthreads);
	memset(ctx, 0, sizeof(*ctx));
	if (lb_pin_plan(&cfg->pin, nthreads, cpus)) {
		err = EINVAL;
		goto out;
	}
	if (cpus[0] >= 0)
		node = lb_numa_node_of_cpu(cpus[0]);
	lock = lb_mem_alloc(ops->lock_size, ops->lock_align, node);
	ctx->data = lb_mem_alloc(data_size_or_line(cfg), LB_CACHELINE, node);
	if (!lock || !ctx->data) {
		err = ENOMEM;
		goto out;
	}
	err = ops->init(lock);
	if (err)
		goto out;
	out->lock_node = lb_mem_node_of(lock);
	out->data_node = lb_mem_node_of(ctx->data);
	ctx->cfg = cfg;
	ctx->ops = ops;
	ctx->lock = lock;
	atomic_init(&ctx->stop, 0);
	atomic_init(&ctx->all_running, 0);
	atomic_init(&ctx->started, 0);
	ctx->nthreads = nthreads;
	ctx->data_ns_per_op = data_write_ns(cfg->cs_lines);
	/* Test hook (tests/test_bench_measure.py): worker 0 busy-waits this long
	 * after the start barrier, so that the fairness window can be checked
	 * against a thread that provably started late.  A number, nothing else. */
	const char *late = getenv("LOCKBENCH_TEST_LATE_START_NS");
	ctx->late_start_ns = late ? strtoull(late, NULL, 10) : 0;
	lb_barrier_init(&ctx->start, nthreads + 1);
	lb_barrier_init(&ctx->done, nthreads);
	for (unsigned int i = 0; i < nthreads; i++) {
		w[i].ctx = ctx;
		w[i].index = i;
		w[i].cpu = cpus[i];
		w[i].res.index = i;
		w[i].res.cpu = cpus[i];
	}

	/* The machine's cache-line round trip just before the run (lb_c2c.h);
	 * measured again after it, below.  Done while no worker exists, and
	 * with this thread's affinity restored before the workers inherit it. */
	out->c2c_before_ns = lb_c2c_round_trip_ns(cfg->c2c_cpu[0], cfg->c2c_cpu[1], LB_C2C_ROUNDS,
						  LB_C2C_BUDGET_NS);

	/* Workers block the stop signals, so they reach this thread and cut its
	 * sleep short; the mask is inherited at creation. */
	sigset_t stop_sigs, old_mask;
	lb_stop_signal_set(&stop_sigs);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_mask);
	err = lb_threads_create(&threads, nthreads, worker_main, w, sizeof(*w));
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (err) {
		/* Stand in for the threads that never started, so the ones that
		 * did get through both barriers and stop at once. */
		atomic_store_explicit(&ctx->stop, 1, memory_order_relaxed);
		for (unsigned int i = threads.n; i < nthreads; i++) {
			lb_barrier_arrive(&ctx->start);
			lb_barrier_arrive(&ctx->done);
		}
	}
	lb_barrier_wait(&ctx->start);
	if (!err)
		sleep_ns(cfg->duration_ns);
	atomic_store_explicit(&ctx->stop, 1, memory_order_relaxed);
	/* Never hang on a broken lock: threads still inside it long after the
	 * stop mean a deadlock or a lost wake-up.  Their memory stays in use,
	 * so nothing is freed on that path; the caller exits. */
	uint64_t grace = cfg->duration_ns > LB_LOOP_STOP_GRACE_NS ? cfg->duration_ns
								 : LB_LOOP_STOP_GRACE_NS;
	if (lb_threads_join_timeout(&threads, grace) == ETIMEDOUT) {
		fprintf(stderr, "\n%s: lock '%s' at %u threads: %u thread(s) still running %.0f s "
			"after the stop (deadlock or lost wake-up?)\n", lb_cli_prog(), ops->name,
			nthreads, threads.n, (double)grace / LB_NS_PER_S);
		return ETIMEDOUT;
	}
	out->c2c_after_ns = lb_c2c_round_trip_ns(cfg->c2c_cpu[0], cfg->c2c_cpu[1], LB_C2C_ROUNDS,
						 LB_C2C_BUDGET_NS);
	for (unsigned int i = 0; i < nthreads && !err; i++)
		err = w[i].err;
	if (!err && lb_stop_signal())
		err = EINTR; /* cut short: not a measurement, the caller drops it */
	if (!err) {
		summarize_run(ctx, w, nthreads, out);
		if (ops->counters)
			out->ncounters = ops->counters(lock, out->counters, LB_MAX_COUNTERS);
		if (ops->describe)
			ops->describe(lock, out->describe, sizeof(out->describe));
	}
	for (unsigned int i = 0; i < nthreads; i++)
		lb_thread_ctx_free(w[i].tctx);
	if (ops->destroy)
		ops->destroy(lock);
out:
	if (ctx)
		lb_mem_free(ctx->data, data_size_or_line(cfg), node);
	lb_mem_free(lock, ops->lock_size, node);
	free(ctx);
	free(w);
	free(cpus);
	return err;
}

void lb_run_result_free(struct lb_run_result *r)
{
	free(r->threads);
	r->threads = NULL;
}

void lb_loop_params_default(struct lb_loop_params *p)
{
	memset(p, 0, sizeof(*p));
	p->duration_ns = LB_NS_PER_S;
	p->cs_lines = 1;
	lb_pin_parse("none", &p->pin);
	p->read_pct = -1;
	p->sample_shift = 6; /* every 64th op */
	lb_c2c_default_pair(&p->c2c_cpu[0], &p->c2c_cpu[1]);
}
