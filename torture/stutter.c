/* SPDX-License-Identifier: MIT */
/* stutter.c - the stutter thread and the workers' pause point. */
#include "stutter.h"
#include "prio.h"
#include "state.h"

#include <errno.h>
#include <stdlib.h>

struct lb_torture_stutter {
	pthread_t thread;
};

#define SLICE_NS 10000000u /* how often long sleeps look at the stop flag */

void lb_torture_sleep_unless_stopped(const struct lb_torture_run *run, uint64_t ns)
{
	while (ns && !lb_torture_must_stop(run)) {
		uint64_t step = ns < SLICE_NS ? ns : SLICE_NS;
		lb_torture_sleep_ns(step);
		ns -= step;
	}
}

static void set_pause(struct lb_torture_run *run, int mode)
{
	/* Workers poll this; it orders nothing, so relaxed. */
	atomic_store_explicit(&run->stutter_pause, mode, memory_order_relaxed);
}

static void *stutter_main(void *arg)
{
	struct lb_torture_run *run = arg;
	const uint64_t j = run->cfg.jiffy_ns;
	const uint64_t s = (uint64_t)run->cfg.stutter;
	struct lb_torture_random rng;

	lb_torture_random_init(&rng);
	while (!lb_torture_must_stop(run)) {
		if (s > 1) {
			uint64_t wtime = s;
			if (s > 2) {
				set_pause(run, 1);
				lb_torture_sleep_unless_stopped(run, (s - 3) * j +
								     lb_torture_random(&rng) % j);
				wtime = 2;
			}
			set_pause(run, 2);
			lb_torture_sleep_unless_stopped(run, wtime * j);
		}
		set_pause(run, 0);
		lb_torture_sleep_unless_stopped(run, s * j + lb_torture_random(&rng) % j);
	}
	set_pause(run, 0);
	return NULL;
}

int lb_torture_stutter_start(struct lb_torture_run *run)
{
	if (run->cfg.stutter <= 0)
		return 0;
	struct lb_torture_stutter *st = calloc(1, sizeof(*st));
	if (!st)
		return ENOMEM;
	int err = pthread_create(&st->thread, NULL, stutter_main, run);
	if (err) {
		free(st);
		return err;
	}
	run->stutter = st;
	return 0;
}

void lb_torture_stutter_stop(struct lb_torture_run *run)
{
	if (!run->stutter)
		return;
	pthread_join(run->stutter->thread, NULL);
	free(run->stutter);
	run->stutter = NULL;
	set_pause(run, 0);
}

void lb_torture_stutter_wait(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	bool niced = false;
	int mode;

	while ((mode = atomic_load_explicit(&run->stutter_pause, memory_order_relaxed)) &&
	       !lb_torture_must_stop(run)) {
		if (!niced && !t->rt) {
			lb_torture_set_nice(LB_TORTURE_MAX_NICE);
			niced = true;
		}
		lb_torture_set_state(t, LB_TORTURE_PAUSED, LB_TORTURE_MAIN_LOCK);
		/* A paused thread is alive: keep the watchdog from counting the pause. */
		lb_torture_note_progress(t);
		if (mode == 1) {
			lb_torture_sleep_ns(run->cfg.jiffy_ns);
			continue;
		}
		/* Mode 2: spin until the pause ends so that everyone restarts at once. */
		for (unsigned int i = 0;
		     atomic_load_explicit(&run->stutter_pause, memory_order_relaxed) &&
		     !lb_torture_must_stop(run);
		     i++) {
			if (!(i & 0xffff)) {
				lb_torture_sleep_ns(10000);
				lb_torture_note_progress(t);
			}
			lb_cpu_relax();
		}
	}
}
