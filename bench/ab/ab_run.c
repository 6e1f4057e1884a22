/* SPDX-License-Identifier: MIT */
/*
 * ab_run.c - the interleaved slices of `lockbench ab`, measured with the
 * timed lock loop (engines/lockloop: lb_loop_run_one, one slice is one short run),
 * each slice with a short cache-line round trip probe just before it.
 *
 * Order: block k of every cell, cell after cell, then block k+1.  Within a
 * block the four slices go A B B A (B A A B when k is odd); each block gives
 * two pairs of adjacent slices (AB and BA, or BA and AB), so each side leads
 * half the pairs and a drift over the block moves both pairs' ratios in
 * opposite directions.  With no --blocks, rounds continue while the next one fits in
 * the budget (judged by the last round's length), with LB_AB_MIN_BLOCKS per
 * cell at least, and cheaper cells run extra blocks in each round (below).
 * Before block 0, one untimed block of every cell warms the caches,
 * the branch predictors and the allocator up; it is not kept.
 *
 * A 1-thread cell runs pinned to one CPU (unless --pin says otherwise), so
 * its slices do not migrate between vCPUs, and each of its blocks starts
 * with the sides' own cost (lb_loop_own_cost: a lock+unlock loop through
 * the vtable less the same loop over `none`) on that CPU.
 */
#include "ab.h"
#include "lb_stop.h"
#include "lb_c2c.h"
#include "lb_cli.h"
#include "lb_progress.h"
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
		for (int s = 0; s < LB_AB_SIDES; s++) {
			c->c2c_side[s] = calloc(cap, sizeof(double));
			c->own[s] = calloc(cap, sizeof(double));
		}
		c->own_none = calloc(cap, sizeof(double));
		if (!c->own_none || !c->c2c || !c->keep || !c->c2c_side[0] || !c->c2c_side[1] || !c->own[0] ||
		    !c->own[1])
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
			free(cells[i].own[s]);
		}
		free(cells[i].c2c);
		free(cells[i].keep);
		free(cells[i].own_none);
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
 * then) unless rt is NULL.  0, EINTR (stopped) or an errno. */
static int run_slice(const struct lb_ab_config *cfg, const struct lb_loop_params *run,
		     const struct lb_lock_ops *ops, unsigned int nthreads, struct lb_run_result *r,
		     double *rt)
{
	if (rt)
		*rt = lb_c2c_round_trip_ns(cfg->c2c_cpu[0], cfg->c2c_cpu[1], LB_AB_C2C_ROUNDS,
					   LB_AB_C2C_BUDGET_NS);
	int err = lb_loop_run_one(run, ops, nthreads, r);
	if (err)
		lb_run_result_free(r);
	return err;
}

/*
 * One block of one cell: four slices, two pairs (slots 0-1 and 2-3, one A
 * and one B each, adjacent in time; A leads one pair, B the other); a
 * 1-thread cell's block starts with the sides' own cost (`none` non-NULL).
 * 0, EINTR (stopped) or an errno.
 */
static int run_block(const struct lb_ab_config *cfg, const struct lb_loop_params *run,
		     const struct lb_lock_ops *none, struct lb_ab_cell *c, size_t k)
{
	double ns[2][LB_AB_SIDES], ops[2][LB_AB_SIDES], cpu[2][LB_AB_SIDES], rt[2][LB_AB_SIDES];
	struct lb_run_result r;
	for (int s = 0; s < LB_AB_SIDES; s++)
		c->own[s][k] = NAN;
	c->own_none[k] = NAN;
	if (none) {
		/* The sides' own cost at this block (engines/lockloop/lockloop_own.c), on the CPU the
		 * 1-thread slices use; a failure leaves NAN: no figure. */
		int own_cpu[1] = { -1 };
		double own[LB_AB_SIDES], calls;
		if (lb_pin_plan(&run->pin, 1, own_cpu))
			own_cpu[0] = -1;
		if (lb_loop_own_cost(none, cfg->lock, LB_AB_SIDES, own_cpu[0], LB_AB_OWN_ROUNDS,
				      own, &calls) == 0) {
			for (int s = 0; s < LB_AB_SIDES; s++)
				c->own[s][k] = own[s];
			c->own_none[k] = calls;
		}
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
		c->lock_failures[side] += r.lock_failures;
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
static void one_thread_config(const struct lb_ab_config *cfg, struct lb_loop_params *one)
{
	*one = cfg->loop;
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

/* One block of cell i (its next index; the warm-up overwrites block 0).
 * Adds the time it took to *spent.  0, EINTR or an errno (reported). */
static int cell_block(const struct lb_ab_config *cfg, const struct lb_loop_params *one,
		      const struct lb_lock_ops *none, struct lb_ab_cell *c, bool warm,
		      uint64_t *spent, struct lb_progress *pg)
{
	bool lone = c->nthreads == 1;
	size_t k = warm ? 0 : c->nblocks;
	lb_progress_step(pg, "ab: %s %zu, %u thread%s", warm ? "warm-up" : "block", k + 1,
			 c->nthreads, c->nthreads == 1 ? "" : "s");
	uint64_t t0 = lb_now_ns();
	int err = run_block(cfg, lone ? one : &cfg->loop, lone ? none : NULL, c, k);
	*spent += lb_now_ns() - t0;
	if (err == EINTR && lb_stop_signal())
		return EINTR; /* cut short: this block is dropped, the rest reported */
	if (err) {
		lb_progress_clear(pg);
		fprintf(stderr, "%s: ab: %u threads failed: %s\n", lb_cli_prog(), c->nthreads,
			strerror(err));
		return err;
	}
	if (!warm) {
		c->nblocks++;
		c->npairs = 2 * c->nblocks;
		lb_progress_step_done(pg);
	}
	return 0;
}

/*
 * Rounds: one block of every cell, then (without --blocks) more blocks of
 * the cells whose slices are cheaper until each cell's time matches the
 * costliest cell's, at most LB_AB_CATCH_UP per round: on a loaded machine a
 * 2-thread slice takes many times its length (its threads wait for CPUs),
 * and the 1-thread cell would otherwise get as few pairs as the slowest.
 */
#define LB_AB_CATCH_UP 16
int lb_ab_run(const struct lb_ab_config *cfg, struct lb_ab_results *res)
{
	struct lb_ab_cell *cells = res->cells;
	size_t ncells = res->n = cfg->nthread_counts;
	size_t cap = cfg->blocks ? cfg->blocks : LB_AB_MAX_BLOCKS;
	int err = alloc_cells(cells, ncells, cfg->threads, 2 * cap);
	if (err)
		return err;
	struct lb_loop_params one;
	one_thread_config(cfg, &one);
	const struct lb_lock_ops *none = lb_lock_find("none");
	if (none && none->unsupported)
		none = NULL;
	uint64_t spent[LB_AB_MAX_CELLS] = { 0 }, scratch = 0, start = lb_now_ns();
	/* Steps are blocks: counted with --blocks, else the time budget gives
	 * the ETA; off a terminal a line a second (a block takes ~20 ms). */
	struct lb_progress pg;
	lb_progress_begin(&pg, stderr, cfg->quiet, (unsigned int)(cfg->blocks * ncells),
			  cfg->blocks ? 0 : cfg->budget_ns, -1);
	lb_progress_line_every(&pg, LB_NS_PER_S);
	for (size_t i = 0; i < ncells; i++)
		if ((err = cell_block(cfg, &one, none, &cells[i], true, &scratch, &pg)))
			goto done;
	start = lb_now_ns(); /* the budget is for the kept blocks */
	for (;;) {
		uint64_t round_start = lb_now_ns();
		bool room = false;
		for (size_t i = 0; i < ncells; i++) {
			if (cells[i].nblocks >= cap)
				continue;
			room = true;
			if ((err = cell_block(cfg, &one, none, &cells[i], false, &spent[i], &pg)))
				goto done;
		}
		if (!room)
			break;
		uint64_t most = 0;
		for (size_t i = 0; i < ncells; i++)
			most = spent[i] > most ? spent[i] : most;
		for (size_t i = 0; i < ncells && !cfg->blocks; i++)
			for (unsigned int extra = 0; extra < LB_AB_CATCH_UP && spent[i] < most &&
						     cells[i].nblocks < cap &&
						     lb_now_ns() - start < cfg->budget_ns; extra++)
				if ((err = cell_block(cfg, &one, none, &cells[i], false, &spent[i],
						      &pg)))
					goto done;
		uint64_t now = lb_now_ns();
		bool enough = !cfg->blocks;
		for (size_t i = 0; i < ncells; i++)
			enough &= cells[i].nblocks >= LB_AB_MIN_BLOCKS;
		if (enough && now - start + (now - round_start) > cfg->budget_ns)
			break;
	}
done:
	if (err == EINTR)
		err = 0;
	res->elapsed_s = (double)(lb_now_ns() - start) / 1e9;
	lb_progress_end(&pg);
	return err;
}
