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
 */
#ifndef LB_SLAB_BATCH_H
#define LB_SLAB_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#define LB_SLAB_BATCH_TRIES 4

/* What the probe saw around the batches of one command run. */
struct lb_slab_batch_stats {
	uint64_t batches;       /* batches kept */
	uint64_t redone;        /* batches thrown away for a switch or a move */
	uint64_t kept_switched; /* kept after LB_SLAB_BATCH_TRIES dirty tries */
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

#endif /* LB_SLAB_BATCH_H */
