/* SPDX-License-Identifier: MIT */
/*
 * sim_measure.h - `lockbench sim --measure-machine FILE`: a machine file for
 * the machine lockbench runs on, from probes made here (doc/sim.md,
 * "A machine measured here").  Each latency comes from its own probe, never
 * from a bench result: the cache-line round trip (lib/lb_c2c), a dependent
 * load chain (l1_hit, memory), a locked add on a private line (rmw), futex
 * ping-pongs (context_switch, wakeup) and getppid (syscall).  Each probe is
 * repeated; the file takes the median and its `source` lines give the
 * spread (a virtual machine's vCPUs move between near and far cores).
 */
#ifndef LB_SIM_MEASURE_H
#define LB_SIM_MEASURE_H

#include <stdbool.h>
#include <stdio.h>

#define LB_SIMB_MEASURE_MAX_SAMPLES 32

/* One measured field: its samples (ns) and how they were taken. */
struct lb_simb_probe {
	const char *field;   /* the machine-file field it gives */
	const char *how;     /* one line: the probe and the arithmetic */
	double samples[LB_SIMB_MEASURE_MAX_SAMPLES];
	unsigned int n;      /* samples taken (0: the probe could not run) */
	double value;        /* what the file gets (ns): the median, or derived */
};

enum lb_simb_probe_id {
	LB_SIMB_P_L1_HIT,
	LB_SIMB_P_RMW,
	LB_SIMB_P_MEMORY,
	LB_SIMB_P_SAME_SOCKET,
	LB_SIMB_P_CROSS_SOCKET,
	LB_SIMB_P_SYSCALL,
	LB_SIMB_P_CONTEXT_SWITCH,
	LB_SIMB_P_WAKEUP,
	LB_SIMB_P_COUNT
};

struct lb_simb_measured {
	unsigned int cpus;   /* online CPUs this process may use */
	char host[128];      /* a line naming the host (uname), for the file's header */
	struct lb_simb_probe p[LB_SIMB_P_COUNT];
};

/* Run every probe (a few seconds); 0, or -1 with one line on stderr when a
 * probe could not run at all (e.g. only one CPU usable). */
int lb_simb_measure(struct lb_simb_measured *m);

/* The median and the spread of one probe's samples into *med, *lo, *hi. */
void lb_simb_probe_spread(const struct lb_simb_probe *p, double *med, double *lo, double *hi);

/* Write the machine file (the format of engines/sim/machines/, which
 * lb_sim_machine_parse reads) for `m`; `name` is its name field.  Every
 * value is rounded to whole ns, at least 1. */
void lb_simb_measured_write(FILE *f, const struct lb_simb_measured *m, const char *name);

#endif /* LB_SIM_MEASURE_H */
