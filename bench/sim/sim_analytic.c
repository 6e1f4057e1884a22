/* SPDX-License-Identifier: MIT */
/*
 * sim_analytic.c - `lockbench sim`'s analytic cross-check (doc/sim.md,
 * "Analytic cross-check"): for a cell whose lock fits it, the throughput
 * the closed queue of lib/lb_queue_model.h predicts, printed beside the
 * simulation's.  A second model prediction, from inputs the simulation
 * never touches: the cell's own --cs and --par and the machine file.
 *
 *   n  = the cell's threads (the model gives each one a core, so the
 *        model applies only when threads <= cpus);
 *   a  = --par (work outside the lock between two acquisitions);
 *   s  = --cs (work inside the lock);
 *   t  = the mean line transfer between two distinct CPUs of the cell's
 *        CPU set (its first `cpus` CPUs), pairs equally weighted, from the
 *        machine file's same_core / same_socket / cross_socket (0 on one
 *        CPU: the line never moves);
 *   ticket:  S(k) = s + t * k  (Boyd-Wickizer et al. 2012: every waiter's
 *            re-read of the line after a release is one more transfer);
 *   queued:  S(k) = s + t      (the hand-over costs what the ticket's costs
 *            with the holder alone at the lock, whatever the queue).
 *
 * This file only classifies the lock and maps the inputs (the simulator's
 * knowledge); the chain, generic queue math, is solved in lib/ with the
 * other statistics (lib/lb_queue_model.h, doc/HACKING.md's layout).
 */
#include "sim_cell.h"
#include "lb_queue_model.h"

#include <string.h>

/* Which model fits a lock, by manifest name, and why not when none. */
static const struct {
	const char *lock;
	enum lb_simb_analytic_kind kind;
	const char *why_not;
} lock_models[] = {
	{ "ticket", LB_SIMB_AN_TICKET, NULL },
	{ "qspinlock", LB_SIMB_AN_QUEUE, NULL },
	{ "qspinlock-pv", LB_SIMB_AN_QUEUE, NULL },
	{ "rqspinlock", LB_SIMB_AN_QUEUE, NULL },
	/* The spinning mutexes: their spinners queue (OSQ, or an MCS lock in
	 * v3.14), so one of them watches the lock word. */
	{ "mutex", LB_SIMB_AN_QUEUE, NULL },
	{ "mutex-v3.14", LB_SIMB_AN_QUEUE, NULL },
	{ "mutex-v3.15", LB_SIMB_AN_QUEUE, NULL },
	{ "mutex-nospin", LB_SIMB_AN_NONE, "sleeping waiters and barging: no one hand-over cost" },
	{ "tas", LB_SIMB_AN_NONE, "every waiter's RMW storms the line" },
	{ "qrwlock", LB_SIMB_AN_NONE, "a reader-writer lock" },
	{ "none", LB_SIMB_AN_NONE, "excludes nobody" },
	{ "busted", LB_SIMB_AN_NONE, "excludes nobody" },
};

const char *lb_simb_analytic_name(enum lb_simb_analytic_kind kind)
{
	return kind == LB_SIMB_AN_TICKET ? "markov" : kind == LB_SIMB_AN_QUEUE ? "queue" : "n/a";
}

double lb_simb_mean_transfer(const struct lb_sim_machine *m, unsigned int cpus)
{
	double sum = 0;
	for (unsigned int x = 0; x < cpus; x++)
		for (unsigned int y = 0; y < cpus; y++)
			sum += (double)lb_sim_machine_distance(m, x, y); /* 0 when x == y */
	return cpus > 1 ? sum / ((double)cpus * (cpus - 1)) : 0;
}

void lb_simb_analytic(const struct lb_simb_config *cfg, const char *lock, unsigned int threads,
		      unsigned int cpus, struct lb_simb_analytic *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = LB_SIMB_AN_NONE;
	out->why_not = "not classified";
	for (size_t i = 0; i < sizeof(lock_models) / sizeof(lock_models[0]); i++)
		if (!strcmp(lock_models[i].lock, lock)) {
			out->kind = lock_models[i].kind;
			out->why_not = lock_models[i].why_not;
		}
	if (out->kind != LB_SIMB_AN_NONE && threads > cpus) {
		out->kind = LB_SIMB_AN_NONE;
		out->why_not = "more threads than CPUs (the model: a core each)";
	}
	if (out->kind == LB_SIMB_AN_NONE)
		return;
	out->n = threads;
	out->a_ns = (double)cfg->par_ns;
	out->s_ns = (double)cfg->cs_ns;
	out->t_ns = lb_simb_mean_transfer(&cfg->machine, cpus);
	struct lb_qm_lock q = { .n = threads, .a = out->a_ns, .s = out->s_ns };
	if (out->kind == LB_SIMB_AN_TICKET)
		q.c = out->t_ns;
	else
		q.c0 = out->t_ns;
	struct lb_qm_result r;
	if (lb_qm_solve(&q, &r, NULL)) {
		/* a = s = t = 0: --par 0ns and --cs 0ns on one CPU */
		out->kind = LB_SIMB_AN_NONE;
		out->why_not = "no time anywhere (par, cs and t all 0)";
		return;
	}
	out->acquires_per_s = r.throughput * 1e9;
}
