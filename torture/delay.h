/* SPDX-License-Identifier: MIT */
/*
 * delay.h - the kernel's per-type hold-time model (kernel/locking/locktorture.c).
 *
 * Every delay is a busy-wait with the lock held; "preempt" is sched_yield().
 * The model is picked from the lock's flags, by the role the lock plays:
 * busted/nolock -> lock_busted, reader/writer + sleeps -> rwsem_lock,
 * reader/writer -> rw_lock, PI -> rtmutex_lock, sleeps -> mutex_lock,
 * otherwise spin_lock.  A lock flagged LB_LOCK_F_SPIN_ROLE (qspinlock-pv,
 * qrwlock: they park waiters but stand in for spinlock_t/rwlock_t) counts
 * as not sleeping here.
 */
#ifndef LB_TORTURE_DELAY_H
#define LB_TORTURE_DELAY_H

#include "context.h"

enum lb_torture_delay_model lb_torture_delay_model_for(const struct lb_lock_ops *ops);

/* The kernel type whose delays we use ("mutex_lock", ...). */
const char *lb_torture_delay_model_name(enum lb_torture_delay_model model);

/* The longest single hold the model can produce, in ms, for long_hold. */
unsigned int lb_torture_delay_max_hold_ms(enum lb_torture_delay_model model, int long_hold);

/* Called by a writer/reader with the main lock held. */
void lb_torture_write_delay(const struct lb_torture_run *run, struct lb_torture_random *rng);
void lb_torture_read_delay(const struct lb_torture_run *run, struct lb_torture_random *rng);

#endif /* LB_TORTURE_DELAY_H */
