/* SPDX-License-Identifier: MIT */
/*
 * ab_run.c - the interleaved slices of `lockbench ab`, measured with the
 * micro-benchmark's engine (lb_bench_run_one: one slice is one short run),
 * each slice with a short cache-line round trip probe just before it.
 *
 * Order: block k of every cell, cell after cell, then block k+1.  Within a
 * block the four slices go A B B A (B A A B when k is odd); each block gives
 * two pairs of adjacent slices (AB and BA, or BA and AB), so each side leads
 * half the pairs and a drift over the block moves both pairs' ratios in
 * opposite directions.  With no --blocks, blocks continue while the next one fits in
 * the budget (judged by the last block's length), with LB_AB_MIN_BLOCKS at
 * least.  Before block 0, one untimed block of every cell warms the caches,
 * the branch predictors and the allocator up; it is not kept.
 *
 * A 1-thread cell runs pinned to one CPU (unless --pin says otherwise), so
 * its slices do not migrate between vCPUs, and each of its blocks starts
 * with a slice of `none` whose CPU ns/op is the harness floor of that block.
 */
#include "ab.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int alloc_cells(struct lb_ab_cell *cells, size_t n, const unsigned int *threads, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		struct lb_ab_cell *c = &cells[i];
		memset(c, 0, sizeof(*c));
		c->nthreads = threads[i];
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->ns[s] = calloc(cap, sizeof(double));
			c->ops[s] = calloc(cap, sizeof(double));
			c->cpu[s] = calloc(cap, sizeof(double));
			if (!c->ns[s] || !c->ops[s] || !c->cpu[s])
				return ENOMEM;
		}
		c->c2c = calloc(cap, sizeof(double));
		c->keep = calloc(cap, sizeof(bool));
		c->none_cpu = calloc(cap, sizeof(double));
		for (int s = 0; s < LB_AB_SIDES; s++)
			c->c2c_side[s] = calloc(cap, sizeof(double));
		if (!c->c2c || !c->keep || !c->none_cpu || !c->c2c_side[0] || !c->c2c_side[1])
			return ENOMEM;
	}
	return 0;
}

void lb_ab_cells_free(struct lb_ab_cell *cells, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int s = 0; s < LB_AB_SIDES; s++) {
			free(cells[i].ns[s]);
			free(cells[i].ops[s]);
			free(cells[i].cpu[s]);
			free(cells[i].c2c_side[s]);
		}
		free(cells[i].c2c);
		free(cells[i].keep);
		free(cells[i].none_cpu);
	}
}

/* Same placement: both round trips known and within LB_AB_PLACEMENT_RATIO
 * of each other, or one of them unknown (nothing says the host moved). */
static bool same_placement(double rt_a, double rt_b)
{
	if (!(rt_a > 0) || !(rt_b > 0))
		return true;
	double hi = rt_a > rt_b ? rt_a : rt_b, lo = rt_a > rt_b ? rt_b : rt_a;
	return hi <= LB_AB_PLACEMENT_RATIO * lo;
}

/* One slice of `ops`, with the round trip just before it (no worker exists
 * then).  0, EINTR (stopped) or an errno. */
static int run_slice(const struct lb_ab_config *cfg, const struct lb_bench_config *run,
		     const struct lb_lock_ops *ops, unsigned int nthreads, struct lb_run_result *r,
		     double *rt)
{
	*rt = lb_c2c_round_trip_ns(cfg->c2c_cpu[0], cfg->c2c_cpu[1], LB_AB_C2C_ROUNDS,
				   LB_AB_C2C_BUDGET_NS);
	int err = lb_bench_run_one(run, ops, nthreads, r);
	if (err)
		lb_run_result_free(r);
	return err;
}

/*
 * One block of one cell: four slices, two pairs (slots 0-1 and 2-3, one A
 * and one B each, adjacent in time; A leads one pair, B the other); a
 * 1-thread cell's block starts with a `none` slice (`none` non-NULL).
 * 0, EINTR (stopped) or an errno.
 */
static int run_block(const struct lb_ab_config *cfg, const struct lb_bench_config *run,
		     const struct lb_lock_ops *none, struct lb_ab_cell *c, size_t k)
{
	double ns[2][LB_AB_SIDES], ops[2][LB_AB_SIDES], cpu[2][LB_AB_SIDES], rt[2][LB_AB_SIDES];
	struct lb_run_result r;
	double none_rt;
	c->none_cpu[k] = NAN;
	if (none) {
		int err = run_slice(cfg, run, none, 1, &r, &none_rt);
		if (err)
			return err;
		c->none_cpu[k] = r.cpu_ns_per_op;
		lb_run_result_free(&r);
	}
	for (unsigned int slot = 0; slot < 4; slot++) {
		int side = lb_ab_side(k, slot);
		unsigned int pair = slot / 2;
		int err = run_slice(cfg, run, cfg->lock[side], c->nthreads, &r, &rt[pair][side]);
		if (err)
			return err;
		ns[pair][side] = r.ns_per_op;
		ops[pair][side] = r.ops_per_sec;
		cpu[pair][side] = r.cpu_ns_per_op;
		c->lost_updates[side] += r.lost_updates;
		lb_run_result_free(&r);
	}
	for (unsigned int pair = 0; pair < 2; pair++) {
		size_t i = 2 * k + pair;
		unsigned int nrt = 0;
		double sum = 0;
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->ns[s][i] = ns[pair][s];
			c->ops[s][i] = ops[pair][s];
			c->cpu[s][i] = cpu[pair][s];
			c->c2c_side[s][i] = rt[pair][s] >= 0 ? rt[pair][s] : -1;
			if (rt[pair][s] >= 0) {
				sum += rt[pair][s];
				nrt++;
			}
		}
		c->c2c[i] = nrt ? sum / nrt : -1;
		c->keep[i] = same_placement(rt[pair][LB_AB_A], rt[pair][LB_AB_B]);
	}
	return 0;
}

/* A 1-thread cell's configuration: pinned to the round trip's first CPU
 * (or the first this process may use) unless --pin chose; `none` measured. */
static void one_thread_config(const struct lb_ab_config *cfg, struct lb_bench_config *one)
{
	*one = cfg->run;
	if (one->pin.policy != LB_PIN_NONE)
		return;
	int cpu = cfg->c2c_cpu[0], other;
	if (cpu < 0)
		lb_c2c_default_pair(&cpu, &other); /* -1 when only one CPU: unpinned */
	char text[16];
	snprintf(text, sizeof(text), "%d", cpu);
	struct lb_pin pin;
	if (cpu >= 0 && lb_pin_parse(text, &pin) == 0)
		one->pin = pin;
}

int lb_ab_run(struct lb_ab_config *cfg, struct lb_ab_cell *cells)
{
	size_t ncells = cfg->run.nthread_counts;
	size_t cap = cfg->blocks ? cfg->blocks : LB_AB_MAX_BLOCKS;
	int err = alloc_cells(cells, ncells, cfg->run.threads, 2 * cap);
	if (err)
		return err;
	struct lb_bench_config one;
	one_thread_config(cfg, &one);
	const struct lb_lock_ops *none = lb_lock_find("none");
	if (none && none->unsupported)
		none = NULL;
	uint64_t start = lb_now_ns();
	/* k == 0 twice: the first pass is the warm-up, overwritten by the second. */
	for (size_t k = 0, warm = 1; k < cap; k += !warm, warm = 0) {
		uint64_t block_start = lb_now_ns();
		for (size_t i = 0; i < ncells; i++) {
			bool lone = cells[i].nthreads == 1;
			if (!cfg->quiet)
				fprintf(stderr, "\r%s: ab: %s %zu, %u threads   ", lb_cli_prog(),
					warm ? "warm-up" : "block", k + 1, cells[i].nthreads);
			err = run_block(cfg, lone ? &one : &cfg->run, lone ? none : NULL, &cells[i], k);
			if (err == EINTR && lb_bench_stop_signal()) {
				err = 0; /* cut short: this block is dropped, the rest reported */
				goto done;
			}
			if (err) {
				fprintf(stderr, "\n%s: ab: %u threads failed: %s\n", lb_cli_prog(),
					cells[i].nthreads, strerror(err));
				goto done;
			}
		}
		if (warm) {
			start = lb_now_ns(); /* the budget is for the kept blocks */
			continue;
		}
		for (size_t i = 0; i < ncells; i++) {
			cells[i].nblocks = k + 1;
			cells[i].npairs = 2 * (k + 1);
		}
		uint64_t now = lb_now_ns();
		if (!cfg->blocks && k + 1 >= LB_AB_MIN_BLOCKS &&
		    now - start + (now - block_start) > cfg->budget_ns)
			break;
	}
done:
	cfg->elapsed_s = (double)(lb_now_ns() - start) / 1e9;
	if (!cfg->quiet)
		fprintf(stderr, "\r%60s\r", "");
	return err;
}
