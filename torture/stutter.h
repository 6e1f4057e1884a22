/* SPDX-License-Identifier: MIT */
/*
 * stutter.h - the run/pause cycle (the kernel's kernel/torture.c).
 *
 * With stutter = S jiffies the background thread repeats: when S > 2, pause
 * mode 1 (workers sleep a jiffy at a time) for S-3 jiffies plus up to one
 * jiffy of fuzz; pause mode 2 (workers spin, sleeping 10 us every 65536
 * loops, so they all restart together) for 2 jiffies; then run for S
 * jiffies plus fuzz.  S = 1 never pauses; S = 0 disables the thread.
 */
#ifndef LB_TORTURE_STUTTER_H
#define LB_TORTURE_STUTTER_H

#include "context.h"

/* Start the stutter thread when cfg.stutter > 0; 0 or an errno value. */
int lb_torture_stutter_start(struct lb_torture_run *run);

/* Stop and join it (call after setting run->stop); leaves workers unpaused. */
void lb_torture_stutter_stop(struct lb_torture_run *run);

/* A worker's pause point, once per iteration, with no lock held. */
void lb_torture_stutter_wait(struct lb_torture_thread *t);

/* Sleep ns in slices, returning early once the run stops. */
void lb_torture_sleep_unless_stopped(const struct lb_torture_run *run, uint64_t ns);

#endif /* LB_TORTURE_STUTTER_H */
