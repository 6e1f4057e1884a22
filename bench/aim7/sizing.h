/* SPDX-License-Identifier: MIT */
/*
 * sizing.h - sizing the simulated kernel's work from a cost table
 * (costs.h), so that each system test's share of child time matches the
 * share its real system calls take on the table's kernel.
 *
 * The simulated kernel marks the points where the real kernel spends time
 * its own data structures do not model (a path walk, an inode set-up, a
 * copy, a page clear) with aim_kwork(ctx, KOP).  A kernel op's real cost
 * comes from the table (aim_sizing_real_ns: e.g. the part of link() under
 * the directory's i_mutex is link - stat).  Running each test once with no
 * padding gives its native time N_t and how often it passes each point
 * (count_t[KOP]), hence its real time R_t = sum count_t[op] * real[op].
 * With a common scale s = max(AIM_SIZING_MIN_SCALE, max_t N_t / R_t) (the
 * smallest that needs no test to shed work, and never below the real
 * kernel's speed), every point then burns f_t * s * real[op] of CPU, where
 * f_t = 1 - N_t / (s R_t), so the test takes N_t + f_t s R_t = s R_t:
 * its share of child time is its share of the table's time.  Only tests
 * with at least AIM_SIZING_MIN_SHARE of the table's time set s; a test
 * below it whose model is slower than s times its real calls keeps its
 * native time (f_t = 0) and runs over its share, which the check reports.
 * The default, 0, lets every test set s.  Every test's model is meant to
 * cost less than its real calls (N_t < R_t: the pipe and shm copies are
 * one memcpy and one memcmp, kern_ipc.c), so s is 1 and the simulated
 * kernel runs at the table's speed: a 100-user point of high_systime on
 * 2 CPUs takes about 100 x sum R_t / 2 = ~3 s; a test whose model is
 * slower than its real calls raises s for all (--explain: its pad is 0 %).
 */
#define AIM_SIZING_MIN_SHARE 0.0
/* The floor of s: 1, the table's speed.  Below it the model would run
 * faster than the real kernel, and a lock section (a creat under the
 * directory's i_mutex) shorter than the real one -- the times the locks'
 * spin budgets and the gauges are about. */
#define AIM_SIZING_MIN_SCALE 1.0
/* The share check also reports the tests with at least this share. */
#define AIM_SIZING_BIG_SHARE 0.01
#ifndef LB_AIM7_SIZING_H
#define LB_AIM7_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aim_costs;
struct aim_workfile;

/* Points in the simulated kernel (and tests) that stand for real work. */
enum aim_kop {
	AIM_K_CREAT_WALK,    /* creat: syscall, path walk, truncate: outside i_mutex */
	AIM_K_CREAT_DIR,     /* creat of an existing name: lookup under i_mutex */
	AIM_K_CREAT_NEW_DIR, /* creat of a new name: lookup + inode set-up under i_mutex */
	AIM_K_LINK_WALK,     /* link: walk to the old name */
	AIM_K_LINK_DIR,      /* link: lookup + add the entry under i_mutex */
	AIM_K_UNLINK_WALK,   /* unlink: syscall entry */
	AIM_K_UNLINK_DIR,    /* unlink: lookup + remove the entry under i_mutex */
	AIM_K_LOOKUP,        /* stat-like lookup of a name */
	AIM_K_READDIR,       /* readdir under i_mutex */
	AIM_K_BRK,
	AIM_K_FAULT,
	AIM_K_FORK_EXIT,
	AIM_K_FORK_EXEC,
	AIM_K_SIGNAL,
	AIM_K_SHM_COPY,
	AIM_K_PIPE_RT,
	AIM_K_STREAM_RT,
	AIM_K_DGRAM_RT,
	AIM_K_TCP_RT,
	AIM_K_UDP_RT,
	AIM_K_TCP_SETUP,
	AIM_K_UDP_SETUP,
	AIM_K_PIPELINE,
	AIM_K_FILE_READ,
	AIM_K_FILE_WRITE,
	AIM_K_FSYNC,
	AIM_K_GETPID,
	AIM_K_ORPHAN,        /* ext4_orphan_add or _del under s_orphan_lock */
	AIM_NKOPS
};
const char *aim_kop_name(int kop);

/* Real ns of each kernel op from the table (the i_mutex splits). */
void aim_sizing_real_ns(const struct aim_costs *c, double *real /* [AIM_NKOPS] */);

#define AIM_SIZING_MAX_TESTS 128
struct aim_sizing {
	bool on;
	double scale;                         /* s (>= AIM_SIZING_MIN_SCALE) */
	double kwork_ns[AIM_NKOPS];           /* s * real[op] */
	double loops_per_ns;                  /* aim_kwork's calibrated loop rate */
	/* per workfile slot */
	double native_ns[AIM_SIZING_MAX_TESTS]; /* N_t: one run, no padding */
	double real_ns[AIM_SIZING_MAX_TESTS];   /* R_t (0: no kernel op) */
	double pad_frac[AIM_SIZING_MAX_TESTS];  /* f_t */
	double target_ns[AIM_SIZING_MAX_TESTS]; /* what one run should take: s R_t, or N_t */
	double share_table[AIM_SIZING_MAX_TESTS]; /* hits R_t / sum: the table's share */
	/* The orphan sections' journal waits (costs.h): each section sleeps
	 * with probability orphan_sleep_p for orphan_sleep_ns (0: never). */
	double orphan_sleep_p, orphan_sleep_ns;
	bool from_cpu;                        /* sized from CPU times (else wall) */
};

/*
 * The sizing from the table, the native times and the op counts per run of
 * each slot (count[slot * AIM_NKOPS + op]); only tests with at least min_share
 * of the table's time set the scale (AIM_SIZING_MIN_SHARE), which is never
 * below AIM_SIZING_MIN_SCALE.  0, or -1 when no test of the
 * workfile passes any kernel op (nothing to size).
 */
int aim_sizing_compute(const struct aim_workfile *wf, const struct aim_costs *c,
		       const double *native_ns, const double *count, double min_share,
		       struct aim_sizing *out);
/* Each slot's share of the workfile's time: weight hits * ns[slot], or the
 * table's share (hits R_t / sum) when ns is NULL; shares[] gets wf->ntests
 * entries summing to 1. */
void aim_sizing_shares(const struct aim_workfile *wf, const struct aim_sizing *sz,
		       const double *ns, double *shares);
/* The loop rate of aim_kwork's burn loop on this CPU (fastest of a few). */
double aim_kwork_calibrate(void);
/* Burn about ns of CPU with the loop rate given (work, not a clock: a
 * preempted burner still owes the rest); the caller keeps the result in a
 * sink of its own so the loop is not optimised away. */
uint64_t aim_kwork_burn(double ns, double loops_per_ns);

#endif /* LB_AIM7_SIZING_H */
