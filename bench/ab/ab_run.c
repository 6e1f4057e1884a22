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
 * least.
 */
#include "ab.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_time.h"

#include <errno.h>
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
		if (!c->c2c)
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
		}
		free(cells[i].c2c);
	}
}

/*
 * One block of one cell: four slices, two pairs (slots 0-1 and 2-3, one A
 * and one B each, adjacent in time; A leads one pair, B the other).
 * 0, EINTR (stopped) or an errno.
 */
static int run_block(const struct lb_ab_config *cfg, struct lb_ab_cell *c, size_t k)
{
	double ns[2][LB_AB_SIDES], ops[2][LB_AB_SIDES], cpu[2][LB_AB_SIDES], c2c[2] = { 0, 0 };
	unsigned int nc2c[2] = { 0, 0 };
	for (unsigned int slot = 0; slot < 4; slot++) {
		int side = lb_ab_side(k, slot);
		unsigned int pair = slot / 2;
		struct lb_run_result r;
		/* The slice's round trip, just before it (no worker exists yet). */
		double rt = lb_c2c_round_trip_ns(cfg->c2c_cpu[0], cfg->c2c_cpu[1], LB_AB_C2C_ROUNDS,
						 LB_AB_C2C_BUDGET_NS);
		int err = lb_bench_run_one(&cfg->run, cfg->lock[side], c->nthreads, &r);
		if (err) {
			lb_run_result_free(&r);
			return err;
		}
		ns[pair][side] = r.ns_per_op;
		ops[pair][side] = r.ops_per_sec;
		cpu[pair][side] = r.cpu_ns_per_op;
		c->lost_updates[side] += r.lost_updates;
		if (rt >= 0) {
			c2c[pair] += rt;
			nc2c[pair]++;
		}
		lb_run_result_free(&r);
	}
	for (unsigned int pair = 0; pair < 2; pair++) {
		size_t i = 2 * k + pair;
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->ns[s][i] = ns[pair][s];
			c->ops[s][i] = ops[pair][s];
			c->cpu[s][i] = cpu[pair][s];
		}
		c->c2c[i] = nc2c[pair] ? c2c[pair] / nc2c[pair] : -1;
	}
	return 0;
}

int lb_ab_run(struct lb_ab_config *cfg, struct lb_ab_cell *cells)
{
	size_t ncells = cfg->run.nthread_counts;
	size_t cap = cfg->blocks ? cfg->blocks : LB_AB_MAX_BLOCKS;
	int err = alloc_cells(cells, ncells, cfg->run.threads, 2 * cap);
	if (err)
		return err;
	uint64_t start = lb_now_ns();
	for (size_t k = 0; k < cap; k++) {
		uint64_t block_start = lb_now_ns();
		for (size_t i = 0; i < ncells; i++) {
			if (!cfg->quiet)
				fprintf(stderr, "\r%s: ab: block %zu, %u threads   ", lb_cli_prog(), k + 1,
					cells[i].nthreads);
			err = run_block(cfg, &cells[i], k);
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
