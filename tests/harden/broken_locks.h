/* SPDX-License-Identifier: MIT */
/*
 * broken_locks.h - deliberately broken lock copies, built only into test
 * programs (never into the registry), each with a bug today's torture or
 * a weaker one would miss:
 *   tas-trylock-ignores  trylock() takes the lock without looking at it
 *   tas-racy-trylock     trylock() tests, then sets: right alone, racy
 *   tas-relaxed-unlock   unlock() stores with relaxed order (no release)
 *   mutex-strand-one     one waiter's wake-up is lost: it sleeps forever
 *                        while the others go on
 *   tas-segv             writer 3 faults (SIGSEGV) inside lock()
 *   tas-abort            writer 2's unlock "detects misuse" and aborts
 *   ticket-drop-one      an unlock once forgets to serve the next ticket:
 *                        every waiter spins forever (a lost hand-over)
 */
#ifndef LB_TEST_BROKEN_LOCKS_H
#define LB_TEST_BROKEN_LOCKS_H

#include "lb_lock_ops.h"

/* NULL-terminated. */
extern const struct lb_lock_ops *const lb_test_broken_locks[];

#endif /* LB_TEST_BROKEN_LOCKS_H */
