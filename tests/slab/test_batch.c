/* SPDX-License-Identifier: MIT */
/*
 * test_batch.c - the probe around `lockbench slab`'s timed batches
 * (bench/slab/slab_batch.h): a batch the thread sleeps in (a voluntary
 * context switch) or changes CPU in is redone and counted, at most
 * LB_SLAB_BATCH_TRIES tries; an undisturbed batch runs once.  The
 * host-speed gauge beside it: one reference sample per kept batch, a sane
 * time per add, and the histogram's percentiles and verdict on known
 * samples (a bimodal host, a steady one, none).
 */
#include "slab_batch.h"
#include "lb_time.h"
#include "../tap.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

struct body_state {
	unsigned int calls;
	int move_to; /* first call: move the thread to this CPU (-1: no) */
	bool sleep;
};

static void body(void *arg, uint64_t n)
{
	struct body_state *b = arg;
	b->calls++;
	if (b->sleep)
		usleep(200); /* a voluntary context switch, every try */
	if (b->move_to >= 0 && b->calls == 1) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((unsigned int)b->move_to, &set);
		sched_setaffinity(0, sizeof(set), &set); /* migrates the caller now */
	}
	for (volatile uint64_t i = 0; i < n; i++)
		;
}

static bool near(double got, double want)
{
	return fabs(got - want) <= 0.01 * want; /* the histogram's 1 % bins */
}

static void gauge_checks(void)
{
	struct lb_slab_gauge_summary s;
	struct lb_slab_gauge *g = calloc(1, sizeof(*g));
	if (!g)
		abort();
	tap_ok(!lb_slab_gauge_summarize(g, &s) && s.samples == 0,
	       "gauge: an empty histogram has no percentiles");

	/* The host of doc/slab.md: 25 % of batches at 0.32 ns per add, the
	 * rest at 0.75; timed in TSC units at 2 per ns. */
	g->units_per_ns = 2.0;
	for (int i = 0; i < 100; i++)
		lb_slab_gauge_add(g, (i % 4 == 0 ? 0.32 : 0.75) * 2.0);
	bool have = lb_slab_gauge_summarize(g, &s);
	tap_ok(have && s.samples == 100 && near(s.p10, 0.32) && near(s.median, 0.75) &&
	       near(s.p90, 0.75) && s.p10 <= s.median && s.median <= s.p90,
	       "gauge, bimodal: p10 %.3f / median %.3f / p90 %.3f ns per add (0.32 / 0.75 / 0.75)",
	       s.p10, s.median, s.p90);
	tap_ok(!s.steady && near(s.ratio, 0.75 / 0.32) && fabs(s.fast_share - 0.25) < 1e-9,
	       "gauge, bimodal: not steady, p90/p10 %.2f, %.0f %% fast", s.ratio,
	       s.fast_share * 100);

	memset(g, 0, sizeof(*g));
	for (int i = 0; i < 1000; i++) /* 1 % of jitter: steady */
		lb_slab_gauge_add(g, 0.50 * (1.0 + 0.01 * (i % 10) / 9.0));
	lb_slab_gauge_summarize(g, &s);
	tap_ok(s.steady && s.ratio <= LB_SLAB_GAUGE_STEADY && s.ratio >= 1.0 &&
	       near(s.median, 0.5025),
	       "gauge, steady: p90/p10 %.3f, median %.4f ns per add", s.ratio, s.median);

	memset(g, 0, sizeof(*g));
	lb_slab_gauge_add(g, 1e-9);
	lb_slab_gauge_add(g, 1e9);
	lb_slab_gauge_summarize(g, &s);
	tap_ok(s.samples == 2 && s.p10 > 0 && s.p90 > s.p10 && isfinite(s.p90),
	       "gauge: samples outside the range land in the end bins (%.3g .. %.3g)", s.p10,
	       s.p90);
	free(g);

	double ref = lb_slab_reference(lb_now_ns);
	tap_ok(ref > 0.01 && ref < 50, "the reference chain: %.3f ns per add", ref);
}

int main(void)
{
	gauge_checks();
	struct lb_slab_batch_stats st = { 0 };
	struct body_state quiet = { 0, -1, false };
	unsigned int first_try = 0;
	for (int k = 0; k < 20; k++) {
		unsigned int before = quiet.calls;
		lb_slab_time_batch(body, &quiet, 100, lb_now_ns, &st);
		first_try += quiet.calls - before == 1;
	}
	tap_ok(st.batches == 20 && first_try >= 15 && quiet.calls == st.batches + st.redone,
	       "undisturbed batches run once (%u of 20 at the first try, %llu redone)", first_try,
	       (unsigned long long)st.redone);
	struct lb_slab_gauge_summary gs;
	bool have = lb_slab_gauge_summarize(&st.gauge, &gs); /* before tap_ok reads gs */
	tap_ok(st.gauge.samples == st.batches && st.gauge.cost > 0 && have && gs.p10 > 0 &&
	       gs.p10 <= gs.median && gs.median <= gs.p90,
	       "one gauge sample per kept batch (%llu), p10 %.3f <= median %.3f <= p90 %.3f ns",
	       (unsigned long long)st.gauge.samples, gs.p10, gs.median, gs.p90);

	struct lb_slab_batch_stats ss = { 0 };
	struct body_state sleeper = { 0, -1, true };
	double per = lb_slab_time_batch(body, &sleeper, 10, lb_now_ns, &ss);
	tap_ok(sleeper.calls == LB_SLAB_BATCH_TRIES && ss.redone == LB_SLAB_BATCH_TRIES - 1 &&
	       ss.kept_switched == 1 && ss.batches == 1,
	       "a batch that sleeps every try: %u tries, %llu redone, %llu kept switched", sleeper.calls,
	       (unsigned long long)ss.redone, (unsigned long long)ss.kept_switched);
	tap_ok(per >= 200e3 / 10, "the kept try's time per iteration is returned (%.0f ns)", per);

	cpu_set_t allowed;
	int here = sched_getcpu(), other = -1;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE && other < 0; c++)
			if (c != here && CPU_ISSET((unsigned int)c, &allowed))
				other = c;
	if (other < 0 || here < 0) {
		tap_ok(true, "# SKIP a move to another CPU: one CPU allowed");
	} else {
		struct lb_slab_batch_stats sm = { 0 };
		struct body_state mover = { 0, other, false };
		lb_slab_time_batch(body, &mover, 10, lb_now_ns, &sm);
		tap_ok(mover.calls >= 2 && sm.redone >= 1,
		       "a batch that moved from CPU %d to %d is redone (%u tries)", here, other,
		       mover.calls);
	}
	return tap_done();
}
