/* SPDX-License-Identifier: MIT */
/*
 * sim_test.h - what the simulator's tests share: a machine with round
 * figures, so every expected time below can be worked out by hand.
 */
#ifndef LB_SIM_TEST_H
#define LB_SIM_TEST_H

#include "sim.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>

/* 2 sockets x 2 cores unless the caller says otherwise. */
#define SIM_TEST_MACHINE(sockets, cores)                                       \
	"name round\n"                                                         \
	"sockets " #sockets "\ncores_per_socket " #cores "\nsmt 1\n"           \
	"l1_hit 1\nsame_core 5\nsame_socket 50\ncross_socket 200\n"            \
	"memory 100\nrmw 10\ncontext_switch 1000\nwakeup 3000\nsyscall 100\n" \
	"tick 4000000\nmin_granularity 750000\nwakeup_granularity 1000000\n"  \
	"sched_latency 6000000\n"

static inline struct lb_sim_world *sim_test_world(const char *text, uint64_t seed)
{
	struct lb_sim_machine m;
	char err[256];
	if (lb_sim_machine_parse(text, "test", &m, err, sizeof(err))) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	struct lb_sim_world *w = lb_sim_create(&m, seed);
	if (!w) {
		printf("Bail out! no memory for a world\n");
		exit(1);
	}
	return w;
}

/* From inside a virtual thread: spend until absolute virtual time t. */
static inline void sim_test_until(uint64_t t)
{
	uint64_t now = lb_sim_now();
	if (t > now)
		lb_sim_spend(t - now);
}

#endif /* LB_SIM_TEST_H */
