/* SPDX-License-Identifier: MIT */
/*
 * lb_blockci.h - a confidence interval for the centre of a series whose
 * neighbours are not independent (per-block log ratios of `lockbench ab`:
 * slices next to each other share the host's state -- a vCPU move, a
 * neighbour's burst -- so two adjacent blocks tend to err the same way).
 *
 * Method (a moving-block bootstrap for the standard error, then Student's
 * t; Kuensch 1989, Ann. Statist. 17(3)):
 *  - the statistic is the 10 % trimmed mean of x (a preempted block moves
 *    it by a rank, not by its size);
 *  - resamples: ceil(n / L) blocks of L = floor(sqrt(n)) consecutive
 *    values each, starts drawn uniformly from the n - L + 1 possible, the
 *    statistic of each resample; se is their standard deviation.
 *    Dependence within L values is kept in every resample, so se carries
 *    most of it;
 *  - what the blocks lose (the correlation at lags near and past L) is put
 *    back by an AR(1) factor from the data's lag-1 autocorrelation (below,
 *    lb_blockci.c);
 *  - the interval is estimate -/+ t(1 - alpha/2, df) * se with
 *    df = floor(n / L) - 1: about that many independent stretches are in
 *    the data, and the t quantile widens the interval for how little that
 *    is (n = 40, L = 6: df 5; n = 9..15, L = 3: df 2..4).
 *    Measured on AR(1) series of 40 values (tests/ab/test_blockci.c):
 *    L = n^(1/3) with df n/L - 1 covered 0.90 at 95 % for a lag-1
 *    correlation of 0.5; L = floor(sqrt(n)) covers 0.92, and 0.95 on independent
 *    values;
 *  - the minimum detectable change: the shift this series would report
 *    with 80 % power at the same alpha, (t(1 - alpha/2, df) + z(0.8)) * se.
 * The random draws come from a fixed seed: the same data give the same
 * interval, run after run.
 *
 * lb_block_rank_ci: the interval for series whose values are independent
 * but heavy-tailed (`ab`'s contended cells: over 100-block A/A series the
 * per-block log ratios' autocorrelation was -0.07..+0.08 at lags 1..5, a
 * kurtosis of 3..4.5; doc/ab.md).  Each value is a unit: the Hodges-Lehmann
 * estimate (the median of the Walsh averages) and Wilcoxon's signed-rank
 * interval (lib/lb_paired.h, exact up to 50 values), which needs only
 * independence and a distribution symmetric about the centre -- no
 * variance estimate, so a few wild blocks move it by a rank, not by their
 * size.  Against dependence the evidence does not show but cannot rule out,
 * its half-widths are scaled by sqrt((1 + rho) / (1 - rho)), the AR(1)
 * variance factor of the data's lag-1 correlation (as above, >= 0).  On
 * independent t(3) series of 12 values its 97.5 % interval covers 0.979
 * where lb_block_ci's covers 0.993 and is 1.22x as wide, and at a lag-1
 * correlation of 0.1 it still covers 0.971 (tests/ab/test_blockci.c).
 */
#ifndef LB_BLOCKCI_H
#define LB_BLOCKCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_BLOCKCI_RESAMPLES 1000
#define LB_BLOCKCI_TRIM 0.10      /* fraction trimmed at each end */
#define LB_BLOCKCI_POWER_Z 0.8416 /* z(0.8): the minimum detectable change's power */
#define LB_BLOCKCI_MIN_DF 2       /* fewer: no interval */
#define LB_BLOCKCI_MIN_N 9        /* the fewest values with 2 df (L 3) */
#define LB_BLOCKCI_SEED UINT64_C(0x6c6f636b62656e63) /* "lockbenc" */

struct lb_block_ci {
	size_t n;           /* values used */
	size_t block_len;   /* L */
	double estimate;    /* trimmed mean */
	double rho;         /* lag-1 autocorrelation, clamped to [0, 0.95] */
	double inflation;   /* the variance's AR(1) correction (>= 1) */
	double se;          /* bootstrap standard error of the estimate, corrected */
	double df;          /* floor(n / L) - 1 */
	double lo, hi;      /* the interval, level 1 - alpha */
	double mdc;         /* minimum detectable change (same units as x) */
	bool rank;          /* lb_block_rank_ci's interval (block_len 1, df NAN) */
	double coverage;    /* rank: the coverage the signed-rank interval achieves
			     * before the widening (>= 1 - alpha); else 1 - alpha */
};

/*
 * x[0..n-1] in time order, finite.  alpha in (0, 0.5).  0, or -1 when
 * fewer than LB_BLOCKCI_MIN_N values are given, alpha is out of range or memory runs
 * out (*out then: estimate the plain mean where there is one, lo = hi =
 * estimate, se 0, mdc INFINITY).
 */
int lb_block_ci(const double *x, size_t n, double alpha, uint64_t seed, struct lb_block_ci *out);

/*
 * The signed-rank interval over x[0..n-1] (each value a unit; above), the
 * same contract as lb_block_ci: 0, or -1 with fewer than LB_BLOCKCI_MIN_N
 * values, alpha out of (0, 0.5), no memory, or too few values for the level
 * (9 values reach 99.6 %: enough for 8 cells' 0.05 / 8, not 16's) (*out:
 * the estimate, lo = hi, mdc INFINITY).  se is the half-width's normal equivalent, half / z(1 -
 * alpha/2); mdc = half + z(0.8) * se: the shift found 4 times in 5.
 */
int lb_block_rank_ci(const double *x, size_t n, double alpha, struct lb_block_ci *out);

/* The trimmed mean lb_block_ci uses (x not modified; n >= 1). */
double lb_trimmed_mean(const double *x, size_t n, double trim);

/* splitmix64: the generator of the draws (for tests' synthetic data too). */
uint64_t lb_splitmix64(uint64_t *state);
/* Uniform in [0, 1) from it. */
double lb_rng_uniform(uint64_t *state);
/* Standard normal (Box-Muller on two uniforms). */
double lb_rng_normal(uint64_t *state);

#endif /* LB_BLOCKCI_H */
