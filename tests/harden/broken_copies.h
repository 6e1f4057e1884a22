/* SPDX-License-Identifier: MIT */
/*
 * broken_copies.h - broken copies of the real locks, generated from their
 * headers by mkbroken.py (one small slip each, see there) and compiled,
 * like locktorture's own copy of the locks, with the --perturb hooks:
 *   qspinlock-pv-steal-bit      a stealer tests the LOCKED bit, not the
 *                               locked byte: it steals during a slow
 *                               unlock (two owners, a narrow window)
 *   qspinlock-pv-halt-no-recheck  a waiter halts without looking at
 *                               node->locked again (a lost wake-up, a
 *                               narrow window)
 *   mutex-pass-on-after-release the tenure pass-on releases and then hands
 *                               over, overwriting a stealer (two owners)
 *   mutex-wait-private          a pshared mutex's waiter sleeps on a private
 *                               futex, its waker wakes the shared one (a lost
 *                               wake-up, seen only across processes: -P)
 *   qrwlock-seq-after-word      a parked reader reads its wake sequence after
 *                               the lock word (a lost wake-up, the window
 *                               between two loads on the wait path)
 *   tas-trylock-store           trylock claims a free lock with a plain store
 *                               (two owners when a lock() lands in between;
 *                               for the conformance test, no --perturb hooks)
 */
#ifndef LB_TEST_BROKEN_COPIES_H
#define LB_TEST_BROKEN_COPIES_H

#include "lb_lock_ops.h"

extern const struct lb_lock_ops lb_broken_pv_steal_bit_ops;
extern const struct lb_lock_ops lb_broken_pv_halt_no_recheck_ops;
extern const struct lb_lock_ops lb_broken_mutex_pass_on_ops;
extern const struct lb_lock_ops lb_broken_mutex_wait_private_ops;
extern const struct lb_lock_ops lb_broken_tas_trylock_store_ops;
extern const struct lb_lock_ops lb_broken_qrwlock_seq_after_word_ops;

#endif /* LB_TEST_BROKEN_COPIES_H */
