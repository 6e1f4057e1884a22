/* SPDX-License-Identifier: MIT */
/*
 * deadlock.h - locktorture's deadlock torture (--deadlock): rounds that
 * create AA, ABBA or ABBCCA deadlocks on purpose, for locks whose
 * acquisition can fail (LB_LOCK_F_FALLIBLE: rqspinlock), modelled on the
 * kernel's rqspinlock stress module.  See doc/rqspinlock.md.
 *
 * Writers are split into groups (2 threads for aa and abba, 3 for abbcca),
 * each with its own locks; writers left over sit out.  A round is one of:
 *  - aa: every member takes the group's lock, then takes it again: that
 *    second attempt must fail with EDEADLK (and only it);
 *  - abba / abbcca, injected: member m takes lock m, all meet, then each
 *    takes lock m+1 (mod group size): a cycle that some member must break
 *    with EDEADLK (rqspinlock follows the wait-for chain, so it sees the
 *    three-party cycle as well as the two-party one);
 *  - abba / abbcca, ordered (drawn from the seed: one round in two):
 *    hand over hand through the locks in index
 *    order, holding each about a millisecond: deadlock-free, so an EDEADLK
 *    there is a false detection (with three members, one waits while
 *    holding a lock another waiter wants: what an over-eager ABBA check
 *    calls a cycle).
 * With --deadlock_nmi 1 a thread sends the workers SIGUSR2 every
 * millisecond; the handler retakes the lock its thread holds ("NMI" on a
 * holder or waiter), which must fail with EDEADLK.
 *
 * The verdict fails on a round with no error, an AA broken only by the
 * timeout, an ABBA or ABBCCA broken only by timeouts while every member had
 * asked for its second lock (deadlock_verdict.h; a timeout that returned
 * before some member asked is counted apart: the cycle never formed), an
 * EDEADLK in an ordered round or in an uncontended first
 * acquisition, a handler granted a lock its thread holds, and on a lock
 * that cannot be taken and released after the run.  Per-thread histograms
 * of wait times, task and handler context apart, are printed at the end.
 */
#ifndef LB_TORTURE_DEADLOCK_H
#define LB_TORTURE_DEADLOCK_H

#include "context.h"

enum lb_torture_deadlock_mode {
	LB_TORTURE_DEADLOCK_NONE,
	LB_TORTURE_DEADLOCK_AA,
	LB_TORTURE_DEADLOCK_ABBA,
	LB_TORTURE_DEADLOCK_ABBCCA,
};

/* "none", "aa", "abba", "abbcca" -> the mode, or -1. */
int lb_torture_deadlock_mode_parse(const char *arg);

/*
 * Option checks for --deadlock (after the thread counts are resolved): a
 * lock without detection is skipped with one line and exit 77 (it would
 * hang, by design); too few writers for one group is a usage error.
 */
void lb_torture_deadlock_check_options(const struct lb_torture_config *cfg);

/* Allocate the groups' locks (run->deadlock); 0 or an errno value.  A no-op
 * without --deadlock. */
int lb_torture_deadlock_init(struct lb_torture_run *run);

/* The worker loop that replaces lb_torture_writer under --deadlock. */
void *lb_torture_deadlock_worker(void *arg);

/* Start / stop (before the workers are joined) the NMI sender. */
int lb_torture_deadlock_start(struct lb_torture_run *run);
void lb_torture_deadlock_stop(struct lb_torture_run *run);

/* After every join: the summary lines; the number of failed checks. */
int lb_torture_deadlock_report(struct lb_torture_run *run);

/* Free what init allocated (after every join). */
void lb_torture_deadlock_free(struct lb_torture_run *run);

#endif /* LB_TORTURE_DEADLOCK_H */
