/* SPDX-License-Identifier: MIT */
/*
 * test_sim_measure_write.c - the machine file `lockbench sim
 * --measure-machine` writes (bench/sim/sim_measure_write.c), from fixed
 * samples (no probe runs, nothing timed): the engine's parser reads it
 * back, each field is its probe's median rounded to whole ns (at least 1),
 * and every probe's spread is in a `source` line.
 */
#include "sim_test.h"
#include "sim_measure.h"

#include <string.h>

static void fill(struct lb_simb_measured *m)
{
	static const char *const field[LB_SIMB_P_COUNT] = {
		"l1_hit", "rmw", "memory", "same_socket", "cross_socket", "syscall",
		"context_switch", "wakeup",
	};
	memset(m, 0, sizeof(*m));
	m->cpus = 2;
	snprintf(m->host, sizeof(m->host), "test-host 6.1.0 x86_64");
	for (int i = 0; i < LB_SIMB_P_COUNT; i++) {
		struct lb_simb_probe *p = &m->p[i];
		p->field = field[i];
		p->how = "fixed samples";
		/* samples 10(i+1) +- 1 and one outlier: median 10(i+1) */
		p->samples[0] = 10.0 * (i + 1) - 1;
		p->samples[1] = 10.0 * (i + 1);
		p->samples[2] = 10.0 * (i + 1) + 1;
		p->samples[3] = 1000.0 * (i + 1);
		p->samples[4] = 10.0 * (i + 1) - 0.5;
		p->n = 5;
		double med, lo, hi;
		lb_simb_probe_spread(p, &med, &lo, &hi);
		p->value = med;
	}
	m->p[LB_SIMB_P_L1_HIT].value = 0.4; /* a sub-ns figure is written as 1 */
}

int main(void)
{
	struct lb_simb_measured m;
	char *text = NULL;
	size_t len = 0;
	fill(&m);
	double med, lo, hi;
	lb_simb_probe_spread(&m.p[LB_SIMB_P_RMW], &med, &lo, &hi);
	tap_ok(med == 20 && lo == 19 && hi == 2000, "spread: median 20, 19..2000 (%g, %g..%g)",
	       med, lo, hi);
	FILE *f = open_memstream(&text, &len);
	lb_simb_measured_write(f, &m, "measured-here");
	fclose(f);
	struct lb_sim_machine mc;
	char err[512] = "";
	int rc = lb_sim_machine_parse(text, "measured.machine", &mc, err, sizeof(err));
	tap_ok(rc == 0, "the written file parses (%s)", rc ? err : "ok");
	tap_ok(!strcmp(mc.name, "measured-here") && mc.sockets == 1 && mc.cores_per_socket == 2 &&
	       mc.smt == 1, "name and topology: one socket of the 2 usable CPUs");
	tap_ok(mc.l1_hit == 1 && mc.rmw == 20 && mc.memory == 30 && mc.same_socket == 40 &&
	       mc.cross_socket == 50 && mc.syscall == 60 && mc.context_switch == 70 &&
	       mc.wakeup == 80 && mc.same_core == 40,
	       "each field is its probe's median in whole ns (l1_hit %llu rmw %llu wakeup %llu)",
	       (unsigned long long)mc.l1_hit, (unsigned long long)mc.rmw,
	       (unsigned long long)mc.wakeup);
	tap_ok(strstr(text, "source wakeup: fixed samples; 5 samples, median 80.0, spread "
			    "79.0..8000.0 ns") != NULL, "the wakeup probe's spread is a source line");
	free(text);
	return tap_done();
}
