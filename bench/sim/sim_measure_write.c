/* SPDX-License-Identifier: MIT */
/*
 * sim_measure_write.c - the measured machine file's text (sim_measure.h):
 * the header, a `source` line per probe with its spread, then the fields.
 */
#include "sim_measure.h"
#include "lb_stats.h"

#include <math.h>

void lb_simb_probe_spread(const struct lb_simb_probe *p, double *med, double *lo, double *hi)
{
	struct lb_summary sum;
	lb_summarize(p->samples, p->n, &sum); /* all zero for no sample */
	*med = sum.median;
	*lo = sum.min;
	*hi = sum.max;
}

static unsigned long long whole_ns(double v)
{
	return v >= 1.5 ? (unsigned long long)llround(v) : 1ull;
}

void lb_simb_measured_write(FILE *f, const struct lb_simb_measured *m, const char *name)
{
	fprintf(f, "# SPDX-License-Identifier: MIT\n"
		"# Written by `lockbench sim --measure-machine` (bench/sim/sim_measure.c).\n"
		"source Measured on this machine: %s, %u CPUs usable.\n"
		"source Each field from its own probe (never from a bench result), the\n"
		"source probe repeated; the value is the median, the spread is min..max ns.\n",
		m->host, m->cpus);
	for (int i = 0; i < LB_SIMB_P_COUNT; i++) {
		const struct lb_simb_probe *p = &m->p[i];
		double med, lo, hi;
		lb_simb_probe_spread(p, &med, &lo, &hi);
		fprintf(f, "source %s: %s; %u samples, median %.1f, spread %.1f..%.1f ns\n",
			p->field, p->how, p->n, med, lo, hi);
	}
	fprintf(f, "name %s\n"
		"sockets 1               # the CPUs this process may use, as one socket\n"
		"cores_per_socket %u\n"
		"smt 1\n", name, m->cpus ? m->cpus : 1);
	for (int i = 0; i < LB_SIMB_P_COUNT; i++)
		fprintf(f, "%s %llu\n", m->p[i].field, whole_ns(m->p[i].value));
	fprintf(f, "same_core %llu          # unused: smt 1; same_socket's value\n"
		"# Not measured: the Linux defaults (kernel/sched/fair.c, unscaled; HZ=250):\n"
		"tick 4000000\n"
		"min_granularity 750000\n"
		"wakeup_granularity 1000000\n"
		"sched_latency 6000000\n", whole_ns(m->p[LB_SIMB_P_SAME_SOCKET].value));
}
