/* SPDX-License-Identifier: MIT */
/*
 * test_aim7_stall.c - aim7's watchdog verdict (bench/aim7/stall.c) on
 * scripted thread states: waiters asleep with nobody running, and waiters
 * that all ran without a hand-over, must be stuck and named as such;
 * threads that waited for a CPU (an emulated or oversubscribed machine,
 * issue 37) or ran outside the locks must be slow, not stuck.
 */
#include "../../bench/aim7/stall.h"
#include "../tap.h"

#include <string.h>

#define MS 1000000ull
#define SEC (1000 * MS)
#define WINDOW (7500 * MS)

static struct aim_stall_thread th(bool in_lock, char state, uint64_t cpu, uint64_t delay)
{
	return (struct aim_stall_thread){ .in_lock = in_lock, .known = true, .run_state = state,
					  .cpu_ns = cpu, .delay_ns = delay };
}

static void check(const char *what, const struct aim_stall_thread *t, unsigned int n,
		  enum aim_stall_kind want)
{
	struct aim_stall_verdict v = aim_stall_judge(t, n, WINDOW);
	char line[512];
	aim_stall_describe(&v, t, WINDOW, line, sizeof(line));
	bool stuck_want = want >= AIM_STALL_SPINNING;
	tap_ok(v.kind == want && v.stuck == stuck_want, "%s: %s", what, line);
}

int main(void)
{
	/* A deadlock or a lost wake-up: every waiter asleep, nobody runs. */
	struct aim_stall_thread dead[] = { th(true, 'S', 0, 0), th(true, 'S', 1 * MS, 0),
					   th(false, 'S', 0, 0) };
	check("waiters asleep, nobody runs", dead, 3, AIM_STALL_ASLEEP);
	/* A lost hand-over or a livelock: every waiter ran and spun. */
	struct aim_stall_thread spin[] = { th(true, 'R', 3 * SEC, 4 * SEC),
					   th(true, 'R', 2 * SEC, 5 * SEC), th(false, 'S', 0, 0) };
	check("every waiter ran, no hand-over", spin, 3, AIM_STALL_SPINNING);
	/* The guest: waiters runnable, waiting for a vCPU more than they ran. */
	struct aim_stall_thread guest[] = { th(true, 'R', 30 * MS, 6 * SEC),
					    th(true, 'R', 3 * SEC, 4 * SEC), th(true, 'S', 0, 0) };
	check("a waiter waited for a CPU", guest, 3, AIM_STALL_PREEMPTED);
	/* A holder (no lock wait) preempted, its waiters asleep. */
	struct aim_stall_thread holder[] = { th(false, 'R', 10 * MS, 7 * SEC),
					     th(true, 'S', 0, 0), th(true, 'S', 0, 0) };
	check("a preempted holder, waiters asleep", holder, 3, AIM_STALL_PREEMPTED);
	/* A long test outside the locks. */
	struct aim_stall_thread busy[] = { th(false, 'R', 7 * SEC, 0), th(false, 'S', 0, 0) };
	check("a thread busy outside the locks", busy, 2, AIM_STALL_BUSY);
	/* A sleeper that was briefly runnable does not make a deadlock slow. */
	struct aim_stall_thread woke[] = { th(true, 'S', 1 * MS, 2 * MS), th(true, 'S', 0, 0) };
	check("waiters asleep after a short run delay", woke, 2, AIM_STALL_ASLEEP);
	/* A poller (a helper's 20 ms waits) runnable briefly on a loaded
	 * machine does not hide a lost wake-up: the first window seen with
	 * the broken plugin of the commit message. */
	struct aim_stall_thread poll[] = { th(true, 'S', 0, 0), th(false, 'R', 10 * MS, 700 * MS) };
	check("a poller's short run delay, a waiter asleep", poll, 2, AIM_STALL_ASLEEP);
	/* Nothing readable. */
	struct aim_stall_thread none[] = { { .in_lock = true, .run_state = '?' } };
	check("nothing readable", none, 1, AIM_STALL_UNKNOWN);
	return tap_done();
}
