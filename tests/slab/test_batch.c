/* SPDX-License-Identifier: MIT */
/*
 * test_batch.c - the probe around `lockbench slab`'s timed batches
 * (bench/slab/slab_batch.h): a batch the thread sleeps in (a voluntary
 * context switch) or changes CPU in is redone and counted, at most
 * LB_SLAB_BATCH_TRIES tries; an undisturbed batch runs once.
 */
#include "slab_batch.h"
#include "lb_time.h"
#include "../tap.h"

#include <sched.h>
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

int main(void)
{
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
