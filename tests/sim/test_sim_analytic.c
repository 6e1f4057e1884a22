/* SPDX-License-Identifier: MIT */
/*
 * test_sim_analytic.c - `lockbench sim`'s analytic cross-check
 * (bench/sim/sim_analytic.c, doc/sim.md): the engine's CPU distance and
 * the mean line transfer of a CPU set on an SMT machine worked out by
 * hand, which lock gets which chain, the cell's inputs mapped to a, s, t,
 * and one prediction solved by hand.  No cell runs.
 */
#include "sim_test.h"
#include "sim_cell.h"

#include <math.h>
#include <string.h>

/* 2 sockets x 2 cores x 2 SMT: CPUs 0-1 one core, 0-3 socket 0. */
#define SMT_MACHINE                                                            \
	"name smt\nsockets 2\ncores_per_socket 2\nsmt 2\n"                     \
	"l1_hit 1\nsame_core 5\nsame_socket 50\ncross_socket 200\n"            \
	"memory 100\nrmw 10\ncontext_switch 1000\nwakeup 3000\nsyscall 100\n" \
	"tick 4000000\nmin_granularity 750000\nwakeup_granularity 1000000\n"  \
	"sched_latency 6000000\n"

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(b));
}

static void load(struct lb_simb_config *cfg)
{
	char err[256];
	memset(cfg, 0, sizeof(*cfg));
	if (lb_sim_machine_parse(SMT_MACHINE, "test", &cfg->machine, err, sizeof(err))) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	cfg->cs_ns = 100;
	cfg->par_ns = 200;
}

static void test_distance(const struct lb_sim_machine *m)
{
	tap_ok(lb_sim_machine_distance(m, 3, 3) == 0 && lb_sim_machine_distance(m, 0, 1) == 5 &&
	       lb_sim_machine_distance(m, 1, 2) == 50 && lb_sim_machine_distance(m, 3, 4) == 200 &&
	       lb_sim_machine_distance(m, 7, 6) == 5,
	       "distance: self 0, SMT siblings 5, same socket 50, across 200");
	/* All 8: each CPU has 1 sibling (5), 2 same-socket CPUs (50), 4 across
	 * (200): 905 / 7.  Socket 0 (4 CPUs): (5 + 2 x 50) / 3 = 35.  CPUs 0-2:
	 * pairs 5, 50, 50: 35.  Two siblings: 5.  One CPU: 0. */
	double t8 = lb_simb_mean_transfer(m, 8), t4 = lb_simb_mean_transfer(m, 4);
	double t3 = lb_simb_mean_transfer(m, 3), t2 = lb_simb_mean_transfer(m, 2);
	double t1 = lb_simb_mean_transfer(m, 1);
	tap_ok(near(t8, 905.0 / 7) && near(t4, 35) && near(t3, 35) && near(t2, 5) && t1 == 0,
	       "mean transfer: 8 CPUs 905/7, 4 and 3 CPUs 35, 2 CPUs 5, 1 CPU 0 (got %g %g %g %g %g)",
	       t8, t4, t3, t2, t1);
}

static void test_kinds(const struct lb_simb_config *cfg)
{
	static const char *const queued[] = { "qspinlock", "qspinlock-pv", "rqspinlock",
					      "mutex", "mutex-v3.14", "mutex-v3.15" };
	static const char *const none[] = { "tas", "mutex-nospin", "qrwlock", "none", "busted",
					    "no-such-lock" };
	struct lb_simb_analytic an;
	bool all = true;
	lb_simb_analytic(cfg, "ticket", 2, 2, &an);
	tap_ok(an.kind == LB_SIMB_AN_TICKET, "ticket: the Markov chain");
	for (size_t i = 0; i < sizeof(queued) / sizeof(queued[0]); i++) {
		lb_simb_analytic(cfg, queued[i], 2, 2, &an);
		all = all && an.kind == LB_SIMB_AN_QUEUE;
	}
	tap_ok(all, "qspinlock, qspinlock-pv, rqspinlock and the spinning mutexes: the queue");
	all = true;
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		lb_simb_analytic(cfg, none[i], 2, 2, &an);
		all = all && an.kind == LB_SIMB_AN_NONE && an.why_not && an.why_not[0];
	}
	tap_ok(all, "tas, mutex-nospin, qrwlock, none, busted, an unknown name: n/a, with why");
	lb_simb_analytic(cfg, "ticket", 3, 2, &an);
	tap_ok(an.kind == LB_SIMB_AN_NONE && strstr(an.why_not, "more threads than CPUs"),
	       "3 threads on 2 CPUs: n/a (%s)", an.why_not);
}

static void test_prediction(const struct lb_simb_config *cfg)
{
	/* ticket, 2 threads on CPUs 0-1 (siblings, t = 5), a = 200, s = 100:
	 * S(1) = 105, S(2) = 110; w1 = (2/200) 105 = 1.05, w2 = 1.05 (1/200) 110
	 * = 0.5775; X = (1.05/105 + 0.5775/110) / 2.6275 = 0.01525 / 2.6275 per ns. */
	struct lb_simb_analytic an;
	lb_simb_analytic(cfg, "ticket", 2, 2, &an);
	tap_ok(an.n == 2 && an.a_ns == 200 && an.s_ns == 100 && near(an.t_ns, 5) &&
	       near(an.acquires_per_s, 0.01525 / 2.6275 * 1e9),
	       "ticket 2 on 2: n 2, a 200, s 100, t 5, %.1f acq/s (by hand %.1f)",
	       an.acquires_per_s, 0.01525 / 2.6275 * 1e9);
	/* the queue on the same cell: S = 105 always; w1 = 1.05, w2 = 0.55125,
	 * X = (1 - 1/2.60125) / 105 per ns. */
	lb_simb_analytic(cfg, "qspinlock", 2, 2, &an);
	double x = (1 - 1 / 2.60125) / 105 * 1e9;
	tap_ok(near(an.acquires_per_s, x), "qspinlock 2 on 2: %.1f acq/s (by hand %.1f)",
	       an.acquires_per_s, x);
}

int main(void)
{
	struct lb_simb_config cfg;
	load(&cfg);
	test_distance(&cfg.machine);
	test_kinds(&cfg);
	test_prediction(&cfg);
	return tap_done();
}
