/* SPDX-License-Identifier: MIT */
/*
 * slab_run.c - the measurements of `lockbench slab`: Table A (empty
 * sections, then alloc+free OPT/NO-OPT in task and handler context) and
 * Table B (fallback against the bulk API per bulk size).  Repeats are
 * interleaved between the rows so slow drift spreads over all of them.
 */
#include "slab.h"
#include "lb_registry.h"
#include "lb_stop.h"
#include "lb_stats.h"
#include "lb_time.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define POOL_BYTES (size_t)(256u << 20) /* reserved, touched as used */
#define BH_SIGNAL SIGUSR1

int lb_slab_stop_requested(void)
{
	return lb_stop_signal();
}

int lb_slab_pin(const struct lb_slab_config *cfg)
{
	if (cfg->cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((unsigned int)cfg->cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}

/* ---- Table A ---------------------------------------------------------- */

/* What the BH handler runs: the same loop, with in_task() false. */
struct bh_job {
	struct lb_stock *task_stock, *irq_stock;
	struct lb_stock_thread *t;
	uint64_t pairs;
};
static _Thread_local struct bh_job *tls_bh_job;

/* kfree(kmalloc(128)) with the kernel's get_obj_stock() choice: the task
 * stock while in_task(), the irq stock otherwise. */
static void allocfree_loop(struct lb_stock *task_stock, struct lb_stock *irq_stock,
			   struct lb_stock_thread *t, uint64_t pairs)
{
	for (uint64_t i = 0; i < pairs; i++) {
		struct lb_stock *s = t->in_handler ? irq_stock : task_stock;
		void *obj = lb_stock_alloc(s, t);
		if (!obj)
			return;
		lb_stock_free(s, t, obj);
	}
}

static void bh_handler(int sig)
{
	(void)sig;
	struct bh_job *job = tls_bh_job;
	if (!job)
		return;
	int saved = errno;
	job->t->in_handler = 1;
	allocfree_loop(job->task_stock, job->irq_stock, job->t, job->pairs);
	job->t->in_handler = 0;
	errno = saved;
}

/* One Table A cell's batch body: the figure's loop over n iterations. */
struct a_job {
	struct lb_stock *task_stock, *irq_stock, *section_stock;
	struct lb_stock_thread *t;
	bool bh;
	uint64_t bh_batch;
};

static void allocfree_body(void *arg, uint64_t pairs)
{
	struct a_job *j = arg;
	if (!j->bh) {
		allocfree_loop(j->task_stock, j->irq_stock, j->t, pairs);
		return;
	}
	struct bh_job job = { j->task_stock, j->irq_stock, j->t, j->bh_batch };
	tls_bh_job = &job;
	for (uint64_t done = 0; done < pairs; done += job.pairs) {
		job.pairs = pairs - done < j->bh_batch ? pairs - done : j->bh_batch;
		raise(BH_SIGNAL); /* delivered before raise() returns */
	}
	tls_bh_job = NULL;
}

static void sections_body(void *arg, uint64_t n)
{
	struct a_job *j = arg;
	lb_stock_sections(j->section_stock, j->t, n);
}

static void syscalls_body(void *arg, uint64_t n)
{
	(void)arg;
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void indexed_body(void *arg, uint64_t n)
{
	struct a_job *j = arg;
	lb_stock_indexed_updates(j->section_stock, n);
}

/* Phase 1, after an untimed warm-up (stocks, pages, the lock's first
 * use): the empty sections, a bare system call and the indexed update, in
 * short batches interleaved across the rows (batch b of every row, then
 * batch b + 1); each repeat's figure is its median batch. */
static void measure_sections(const struct lb_slab_config *cfg, struct lb_stock_thread *t,
			     struct lb_stock *sec, struct lb_slab_protect_result *res)
{
	for (int p = 0; p < LB_PROT_COUNT; p++)
		if (res->supported[p])
			lb_stock_sections(&sec[p], t, cfg->section_iters / 10);
	enum { EXTRA_SYSCALL = LB_PROT_COUNT, EXTRA_INDEXED, A_ROWS };
	const unsigned int nb = LB_SLAB_A_BATCHES;
	uint64_t per_batch = cfg->section_iters / nb ? cfg->section_iters / nb : 1;
	uint64_t sys_per_batch = (cfg->section_iters / 10 + 1) / nb + 1;
	struct a_job sjob[LB_PROT_COUNT];
	for (int p = 0; p < LB_PROT_COUNT; p++)
		sjob[p] = (struct a_job){ .section_stock = &sec[p], .t = t };
	for (unsigned int r = 0; r < cfg->repeat && !lb_slab_stop_requested(); r++) {
		double per[A_ROWS][LB_SLAB_A_BATCHES];
		/* A stop request is checked between batches too (a repeat took
		 * 6-15 s in a sanitizer build on a loaded machine); the
		 * unfinished repeat is not counted. */
		for (unsigned int b = 0; b < nb && !lb_slab_stop_requested(); b++) {
			for (int p = 0; p < LB_PROT_COUNT; p++) {
				if (!res->supported[p])
					continue;
				uint64_t a0 = t->rseq_aborts;
				per[p][b] = lb_slab_time_batch(sections_body, &sjob[p], per_batch,
							       lb_now_ns, &res->probe);
				res->section_restarts[p] += t->rseq_aborts - a0;
			}
			per[EXTRA_SYSCALL][b] = lb_slab_time_batch(syscalls_body, NULL, sys_per_batch,
								   lb_now_ns, &res->probe);
			if (res->supported[LB_PROT_RSEQ])
				per[EXTRA_INDEXED][b] =
					lb_slab_time_batch(indexed_body, &sjob[LB_PROT_RSEQ], per_batch,
							   lb_now_ns, &res->probe);
		}
		if (lb_slab_stop_requested())
			break;
		double iters = (double)cfg->section_iters;
		for (int p = 0; p < LB_PROT_COUNT; p++)
			if (res->supported[p])
				res->section_ns[p][r] = lb_median(per[p], nb) * iters;
		res->syscall_ns[r] = lb_median(per[EXTRA_SYSCALL], nb);
		if (res->supported[LB_PROT_RSEQ])
			res->indexed_ns[r] = lb_median(per[EXTRA_INDEXED], nb) * iters;
		res->done = r + 1;
	}
}

/* OPT's protection: as asked, or the cheapest per-CPU one measured. */
static void choose_opt_prot(const struct lb_slab_config *cfg, struct lb_slab_protect_result *res)
{
	res->opt_prot = cfg->opt_prot;
	if (res->opt_prot < 0 && res->done) {
		double best = 0;
		for (int p = 0; p < LB_PROT_COUNT; p++) {
			if (!res->supported[p] || !lb_prot_per_cpu((enum lb_prot)p))
				continue;
			double m = lb_median_finite(res->section_ns[p], res->done);
			if (res->opt_prot < 0 || m < best) {
				best = m;
				res->opt_prot = p;
			}
		}
	}
	if (res->opt_prot < 0)
		res->opt_prot = LB_PROT_NONE;
	if (!res->supported[res->opt_prot])
		snprintf(res->why[res->opt_prot], sizeof(res->why[0]), "%s",
			 lb_prot_unsupported((enum lb_prot)res->opt_prot, cfg->lock));
}

/* Phase 2: alloc+free, OPT (the task stock and, in the handler, the irq
 * one) and NO-OPT, task and BH, interleaved like phase 1 after an untimed
 * warm-up.  The repeats done. */
static unsigned int measure_allocfree(const struct lb_slab_config *cfg,
				      struct lb_stock_thread *t, struct lb_stock *opt_task,
				      struct lb_stock *opt_irq, struct lb_stock *noopt,
				      struct lb_slab_protect_result *res)
{
	const unsigned int nb = LB_SLAB_A_BATCHES;
	unsigned int done = 0;
	/* [col][bh]: OPT uses the task stock and, in the handler, the irq one */
	struct a_job afjob[LB_COL_COUNT][2];
	for (int bh = 0; bh < 2; bh++) {
		afjob[LB_COL_OPT][bh] = (struct a_job){ opt_task, opt_irq, NULL, t, bh,
							cfg->bh_batch };
		afjob[LB_COL_NOOPT][bh] = (struct a_job){ noopt, noopt, NULL, t, bh, cfg->bh_batch };
		for (int c = 0; c < LB_COL_COUNT; c++) /* warm-up, untimed */
			allocfree_body(&afjob[c][bh], cfg->op_iters / 10);
	}
	/* Task rows: LB_SLAB_A_BATCHES batches; BH rows: as many as keep at
	 * least --bh-batch pairs per batch, so one signal still carries a full
	 * batch of pairs.  Interleaved like phase 1. */
	unsigned int nb_task = cfg->op_iters >= nb ? nb : 1;
	uint64_t bh_n = cfg->op_iters / (cfg->bh_batch ? cfg->bh_batch : 1);
	unsigned int nb_bh = bh_n < 1 ? 1 : bh_n > nb ? nb : (unsigned int)bh_n;
	for (unsigned int r = 0; r < cfg->repeat && !lb_slab_stop_requested(); r++) {
		double per[LB_COL_COUNT][2][LB_SLAB_A_BATCHES];
		for (unsigned int b = 0; b < nb && !lb_slab_stop_requested(); b++) {
			for (int bh = 0; bh < 2; bh++) {
				unsigned int nbx = bh ? nb_bh : nb_task;
				if (b >= nbx)
					continue;
				for (int c = 0; c < LB_COL_COUNT; c++) {
					uint64_t a0 = t->rseq_aborts;
					per[c][bh][b] = lb_slab_time_batch(allocfree_body, &afjob[c][bh],
									   cfg->op_iters / nbx,
									   lb_now_ns, &res->probe);
					res->allocfree_restarts[c][bh] += t->rseq_aborts - a0;
				}
			}
		}
		if (lb_slab_stop_requested())
			break; /* the unfinished repeat is not counted */
		for (int bh = 0; bh < 2; bh++)
			for (int c = 0; c < LB_COL_COUNT; c++)
				res->allocfree_ns[c][bh][r] =
					lb_median(per[c][bh], bh ? nb_bh : nb_task) *
					(double)cfg->op_iters;
		done = r + 1;
	}
	return done;
}

int lb_slab_run_protect(const struct lb_slab_config *cfg, struct lb_slab_protect_result *res)
{
	struct lb_slub_cache cache;
	struct lb_stock_thread t;
	struct lb_stock sec[LB_PROT_COUNT], opt_task, opt_irq, noopt;
	memset(res, 0, sizeof(*res));
	memset(sec, 0, sizeof(sec));
	res->probe.gauge.units_per_ns = 1; /* its batches are timed by lb_now_ns */
	int err = lb_slub_cache_init(&cache, cfg->lock, 128, POOL_BYTES);
	if (err)
		return err;
	err = lb_stock_thread_init(&t, &cache, cfg->lock, 0);
	for (int p = 0; !err && p < LB_PROT_COUNT; p++) {
		const char *why = lb_prot_unsupported((enum lb_prot)p, cfg->lock);
		res->supported[p] = !why;
		snprintf(res->why[p], sizeof(res->why[p]), "%s", why ? why : "");
		if (!why)
			err = lb_stock_init(&sec[p], (enum lb_prot)p, &cache, cfg->lock);
	}
	struct sigaction sa = { 0 }, old_sa;
	sa.sa_handler = bh_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (!err && sigaction(BH_SIGNAL, &sa, &old_sa))
		err = errno;

	if (!err)
		measure_sections(cfg, &t, sec, res);
	choose_opt_prot(cfg, res);
	bool have_stocks = false;
	if (!err && res->supported[res->opt_prot] && res->supported[LB_PROT_SIGMASK]) {
		err = lb_stock_init(&opt_task, (enum lb_prot)res->opt_prot, &cache, cfg->lock);
		if (!err)
			err = lb_stock_init(&opt_irq, LB_PROT_SIGMASK, &cache, cfg->lock);
		if (!err)
			err = lb_stock_init(&noopt, LB_PROT_SIGMASK, &cache, cfg->lock);
		have_stocks = !err;
	}
	if (have_stocks) {
		unsigned int done = measure_allocfree(cfg, &t, &opt_task, &opt_irq, &noopt, res);
		res->done_af = done;
		res->allocfree_done = done > 0;
		lb_stock_drain(&opt_task, &t);
		lb_stock_drain(&opt_irq, &t);
		lb_stock_drain(&noopt, &t);
		lb_stock_destroy(&opt_task);
		lb_stock_destroy(&opt_irq);
		lb_stock_destroy(&noopt);
	}
	if (!err)
		sigaction(BH_SIGNAL, &old_sa, NULL);
	res->rseq_aborts = t.rseq_aborts;
	res->slow_paths = t.slow_allocs + t.slow_frees;
	for (int p = 0; p < LB_PROT_COUNT; p++)
		if (sec[p].slots)
			lb_stock_destroy(&sec[p]);
	lb_stock_thread_fini(&t, cfg->lock);
	if (!err && lb_slub_check(&cache, 0, stderr))
		err = EPROTO; /* the allocator lost or doubled an object */
	lb_slub_cache_destroy(&cache);
	return err;
}

/* ---- Table B ---------------------------------------------------------- */

/* The protection each allocator call (fallback) or each batch (bulk) is
 * wrapped in: the per-CPU lock, the signal mask, or nothing. */
struct call_prot {
	int prot;
	const struct lb_lock_ops *ops;
	void *lock, *tctx;
	sigset_t all, old;
};

static inline void prot_enter(struct call_prot *p)
{
	if (p->prot == LB_PROT_LOCK)
		p->ops->lock(p->lock, p->tctx);
	else if (p->prot == LB_PROT_SIGMASK)
		pthread_sigmask(SIG_BLOCK, &p->all, &p->old);
}

static inline void prot_exit(struct call_prot *p)
{
	if (p->prot == LB_PROT_LOCK)
		p->ops->unlock(p->lock, p->tctx);
	else if (p->prot == LB_PROT_SIGMASK)
		pthread_sigmask(SIG_SETMASK, &p->old, NULL);
}

static void fallback_round(struct lb_slub_cpu *cpu, struct call_prot *p, void **objs, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		prot_enter(p);
		objs[i] = lb_slub_alloc(cpu);
		prot_exit(p);
	}
	for (unsigned int i = 0; i < n; i++) {
		prot_enter(p);
		lb_slub_free(cpu, objs[i]);
		prot_exit(p);
	}
}

static void bulk_round(struct lb_slub_cpu *cpu, struct call_prot *p, void **objs, unsigned int n)
{
	prot_enter(p);
	size_t got = lb_slub_alloc_bulk(cpu, n, objs);
	prot_exit(p);
	prot_enter(p);
	lb_slub_free_bulk(cpu, got, objs);
	prot_exit(p);
}

/* Cycles per object (one alloc and one free) over about `objects` objects:
 * the median of BATCHES batches, so a batch the scheduler cut into (a
 * loaded machine) does not move the figure. */
#define BATCHES 21

/* One Table B batch body: `rounds` rounds of one row (n objects each, or
 * the fast path's single alloc+free when fastpath). */
struct b_job {
	struct lb_slub_cpu *cpu;
	struct call_prot *p;
	void **objs;
	unsigned int n;
	bool bulk, fastpath;
};

static void rounds_body(void *arg, uint64_t rounds)
{
	struct b_job *j = arg;
	if (j->fastpath) {
		for (uint64_t i = 0; i < rounds; i++) {
			prot_enter(j->p);
			void *obj = lb_slub_alloc(j->cpu);
			prot_exit(j->p);
			prot_enter(j->p);
			lb_slub_free(j->cpu, obj);
			prot_exit(j->p);
		}
		return;
	}
	for (uint64_t r = 0; r < rounds; r++)
		(j->bulk ? bulk_round : fallback_round)(j->cpu, j->p, j->objs, j->n);
}

static double time_rounds(struct b_job *job, uint64_t objects, struct lb_slab_batch_stats *st)
{
	unsigned int n = job->fastpath ? 1 : job->n;
	uint64_t rounds = objects / n / BATCHES ? objects / n / BATCHES : 1;
	double per_batch[BATCHES];
	rounds_body(job, 1); /* warm: pages and lists settle */
	for (int b = 0; b < BATCHES; b++)
		per_batch[b] = lb_slab_time_batch(rounds_body, job, rounds, lb_cycles, st) / n;
	return lb_median(per_batch, BATCHES);
}

int lb_slab_run_bulk(const struct lb_slab_config *cfg, struct lb_slab_bulk_result *res)
{
	struct lb_slub_cache cache;
	struct lb_slub_cpu cpu;
	struct call_prot prot = { .prot = cfg->bulk_prot, .ops = cfg->lock };
	void **objs = calloc(LB_SLAB_BULK_MAX_N, sizeof(*objs));
	memset(res, 0, sizeof(*res));
	if (!objs)
		return ENOMEM;
	struct lb_slub_tuning tune = lb_slub_tuning_default();
	tune.min_objects = cfg->min_objects;
	tune.min_partial = cfg->min_partial;
	tune.cpu_partial = cfg->cpu_partial;
	tune.recarve_empty = true; /* an empty page goes back to the "page allocator" */
	int err = lb_slub_cache_init_tuned(&cache, cfg->lock, cfg->bulk_size, POOL_BYTES, &tune);
	if (err) {
		free(objs);
		return err;
	}
	res->objs_per_page = cache.objs_per_page;
	res->cycles_per_ns = lb_cycles_per_ns();
	res->probe.gauge.units_per_ns = res->cycles_per_ns; /* batches timed by lb_cycles */
	err = lb_slub_cpu_init(&cache, &cpu, 0);
	sigfillset(&prot.all);
	if (!err && prot.prot == LB_PROT_LOCK) {
		prot.lock = lb_lock_alloc(cfg->lock);
		prot.tctx = lb_thread_ctx_alloc(cfg->lock);
		err = prot.lock ? cfg->lock->init(prot.lock) : ENOMEM;
		if (!err && cfg->lock->thread_init)
			err = cfg->lock->thread_init(prot.tctx, 1);
	}
	for (unsigned int r = 0; !err && r < cfg->repeat && !lb_slab_stop_requested(); r++) {
		struct b_job fast = { &cpu, &prot, objs, 1, false, true };
		res->fastpath_cycles[r] = time_rounds(&fast, cfg->bulk_objects, &res->probe);
		for (size_t i = 0; i < cfg->nbulk && !lb_slab_stop_requested(); i++) {
			struct b_job fb = { &cpu, &prot, objs, cfg->bulk_n[i], false, false };
			struct b_job bk = { &cpu, &prot, objs, cfg->bulk_n[i], true, false };
			res->fallback_cycles[i][r] = time_rounds(&fb, cfg->bulk_objects, &res->probe);
			res->bulk_cycles[i][r] = time_rounds(&bk, cfg->bulk_objects, &res->probe);
		}
		if (lb_slab_stop_requested())
			break; /* the unfinished repeat is not counted */
		res->done = r + 1;
	}
	if (prot.lock) {
		if (cfg->lock->thread_fini)
			cfg->lock->thread_fini(prot.tctx);
		if (cfg->lock->destroy)
			cfg->lock->destroy(prot.lock);
		lb_lock_free(prot.lock);
	}
	lb_thread_ctx_free(prot.tctx);
	res->list_lock_acquires = cpu.lock_acquires;
	if (cpu.cache) {
		lb_slub_cpu_fini(&cpu);
		lb_slub_cpu_release(&cpu);
	}
	if (!err && lb_slub_check(&cache, 0, stderr))
		err = EPROTO;
	lb_slub_cache_destroy(&cache);
	free(objs);
	return err;
}
