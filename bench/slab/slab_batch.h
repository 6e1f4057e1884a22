/* SPDX-License-Identifier: MIT */
/*
 * slab_batch.h - timed batches with a probe around each (doc/slab.md,
 * "How a figure is taken").  A measurement of `lockbench slab` is split
 * into short batches; before and after each batch a probe reads the
 * thread's context-switch count (getrusage RUSAGE_THREAD) and the CPU it
 * runs on.  A batch in which the thread was switched out or moved is redone
 * (at most LB_SLAB_BATCH_TRIES tries, then kept and counted): the rule looks
 * at the probe only, never at the batch's time.  The measurement's figure is
 * the median batch, per iteration.
 *
 * The host-speed gauge (doc/slab.md, "The host-speed gauge"): after each
 * try's timed window, still inside the probe's window, a fixed reference
 * loop -- a dependent chain of LB_SLAB_REF_ADDS register adds -- is timed
 * with the batch's clock, and the kept try's time per add goes into a
 * bounded histogram.  Its spread says how much the host itself changed the
 * CPU's speed while a table ran; it never enters a figure.
 */
#ifndef LB_SLAB_BATCH_H
#define LB_SLAB_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#define LB_SLAB_BATCH_TRIES 4

/* Adds in one reference chain: 1-3 us on a 2-3 GHz core, small against a
 * batch (~0.1-1 ms) and long against the pair of clock reads around it
 * (~20-40 ns with the vDSO, i.e. within 3 % of the chain at its fastest). */
#define LB_SLAB_REF_ADDS 4000
/*
 * "Steady" when the reference's p90/p10 is at most this.  On a core whose
 * speed does not change, the chain's own spread is its clock reads and the
 * histogram's 1 % bins (a few percent); a 2-vCPU KVM guest whose host
 * switched the vCPU between ~0.32 and ~0.70-0.82 ns per add (doc/slab.md)
 * reads 2.2-2.5.  Past 10 % the host's own speed changes are larger than
 * anything the 3 % repeatability target could absorb.
 */
#define LB_SLAB_GAUGE_STEADY 1.10
/* Histogram of the reference's clock units per add: log bins 1 % wide from
 * LB_SLAB_GAUGE_LO (below and above the range fall into the end bins). */
#define LB_SLAB_GAUGE_LO 0.02
#define LB_SLAB_GAUGE_STEP 1.01
#define LB_SLAB_GAUGE_BINS 800 /* LO .. LO * 1.01^800 = 58 units per add */

struct lb_slab_gauge {
	uint64_t bin[LB_SLAB_GAUGE_BINS];
	uint64_t samples;    /* one per kept batch */
	uint64_t cost;       /* clock units spent in the reference chains, every try */
	double units_per_ns; /* the batches' clock: 1 for lb_now_ns, cycles per ns for
			      * lb_cycles; 0 is read as 1 */
};

/* What the probe saw around the batches of one command run. */
struct lb_slab_batch_stats {
	uint64_t batches;       /* batches kept */
	uint64_t redone;        /* batches thrown away for a switch or a move */
	uint64_t kept_switched; /* kept after LB_SLAB_BATCH_TRIES dirty tries */
	struct lb_slab_gauge gauge;
};

/* The reference chain's percentiles over a table's kept batches, ns per add. */
struct lb_slab_gauge_summary {
	uint64_t samples;
	double p10, median, p90; /* ns per add */
	double ratio;            /* p90 / p10 */
	double fast_share;       /* batches at most LB_SLAB_GAUGE_STEADY x p10 */
	double cost_ns;          /* time spent in the reference chains */
	bool steady;             /* ratio <= LB_SLAB_GAUGE_STEADY */
};

/* The thread's state a batch must not change. */
struct lb_slab_probe {
	long switches; /* voluntary + involuntary context switches */
	int cpu;
};

void lb_slab_probe_read(struct lb_slab_probe *p);
/* Whether nothing happened to the thread between the two probes. */
bool lb_slab_probe_clean(const struct lb_slab_probe *before, const struct lb_slab_probe *after);

/* Runs `body(arg, n)` timed by `clock` (lb_now_ns or lb_cycles), redoing it
 * while the probe saw a switch or a move (up to LB_SLAB_BATCH_TRIES tries);
 * returns the kept try's time per iteration. */
double lb_slab_time_batch(void (*body)(void *arg, uint64_t n), void *arg, uint64_t n,
			  uint64_t (*clock)(void), struct lb_slab_batch_stats *st);

/* The reference chain of LB_SLAB_REF_ADDS dependent adds, timed by `clock`:
 * clock units per add. */
double lb_slab_reference(uint64_t (*clock)(void));
/* One sample (clock units per add) into the histogram. */
void lb_slab_gauge_add(struct lb_slab_gauge *g, double units_per_add);
/* The histogram's percentiles in ns per add; false (and *s zeroed but for
 * the cost) when it holds no sample. */
bool lb_slab_gauge_summarize(const struct lb_slab_gauge *g, struct lb_slab_gauge_summary *s);

#endif /* LB_SLAB_BATCH_H */
