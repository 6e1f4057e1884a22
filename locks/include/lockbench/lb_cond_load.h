/* SPDX-License-Identifier: MIT */
/*
 * lb_cond_load.h - the one spin primitive: load a word until a condition
 * on its value holds.  Every spin loop of a lock header goes through it:
 * the whole loop where a look is one load of one word, the wait alone
 * (lb_cond_load_pause/_pauses, below) where a look is more than that.
 *
 * The kernel's counterpart is smp_cond_load_relaxed() and
 * smp_cond_load_acquire() (include/asm-generic/barrier.h, Linux v6.6): a
 * READ_ONCE of *ptr, the condition on VAL, cpu_relax() between looks; an
 * architecture may replace the loop (arm64 waits in WFE until the line is
 * written).  Its users put budgets and deadlines into the condition
 * (qspinlock's pending loop: `VAL != _Q_PENDING_VAL || !cnt--`; osq_lock:
 * `VAL || need_resched() || vcpu_is_preempted(...)`; rqspinlock's
 * RES_CHECK_TIMEOUT in kernel/bpf/rqspinlock.c, v6.15).  Here the exit that
 * is not about the word is a separate argument, `stop`, so a replacement
 * knows which part it may wait on.
 *
 *   lb_cond_load(var, ptr, mo, cond);
 *   lb_cond_load_until(var, ptr, mo, cond, stop);
 *   lb_cond_load_relaxed / _acquire (var, ptr, cond)         (the kernel's names)
 *   lb_cond_load_relaxed_until / _acquire_until (var, ptr, cond, stop)
 *   lb_cond_load_pause(ptr);  lb_cond_load_pauses(ptr, n);  (the wait alone)
 *
 * Each look stores atomic_load_explicit(ptr, mo) into the lvalue `var`;
 * `cond` is an expression over `var` (and constants).  The loop ends when
 * `cond` is true, or, in the _until forms, when `stop` (evaluated once
 * after every look whose `cond` was false, before the wait) is true: a
 * budget counting looks, a clock deadline, a scheduler hook.  After the
 * loop `var` holds the last value loaded; the caller tells the two exits
 * apart by `cond` on it (or by what `stop` recorded).  Statements, not
 * expressions: C11 has no statement expressions, and these headers build
 * as bare C11 and C++.
 *
 * Memory order: every look loads with `mo`.  The kernel's _acquire form
 * loads relaxed and adds smp_acquire__after_ctrl_dep() after the loop;
 * these locks spell acquire on each look as they always did (no cost on
 * x86, where both are plain loads; on arm64 an LDAR per look).
 *
 * Natively the wait between looks is lb_cpu_relax() (pause / yield, and
 * locktorture's spin count under LB_PERTURB), so a loop written with the
 * primitive compiles to the loop it replaced: load, test, branch, pause.
 *
 * Replacing the wait (a simulator): define LB_COND_LOAD_WAIT(ptr) and
 * LB_COND_LOAD_WAIT_UNTIL(ptr) before this header is first included (a
 * force-included header does that).  LB_COND_LOAD_WAIT may park the caller
 * until *ptr's line is written: nothing but that store can end the loop.
 * LB_COND_LOAD_WAIT_UNTIL is the wait of an _until loop: `stop` may turn
 * true without a store to the line (a clock, a need_resched hook, a budget
 * counting looks), so it must also return when whatever `stop` reads may
 * have changed (a deadline, the next scheduler event); a budget counted in
 * looks then counts wake-ups, as on arm64's WFE.  Both must leave `ptr`
 * unevaluated or evaluate it once; the native ones ignore it.
 *
 * The wait alone, lb_cond_load_pauses(ptr, n) (lb_cond_load_pause(ptr):
 * n = 1): n pauses between two looks
 * of a loop the forms above cannot spell, a look being more than one load
 * of one word (a trylock or other RMW per look, two words watched, a hook
 * before each look) or the wait being more than one pause (mutex.h's
 * owner spin backs off up to LB_MUTEX_POLL_MAX pauses between looks).
 * `ptr` names the word whose store is most likely to end the loop.
 * Natively it is n lb_cpu_relax(), the loop it replaces.  Its replacement,
 * LB_COND_LOAD_WAIT_PAUSES(ptr, n), may park the caller until *ptr's line
 * is written or n pauses' time has passed, whichever comes first, and
 * must spend at least one pause's time: it may end a wait early, never
 * late, so it is sound for any loop (the next look only comes sooner);
 * `n` is evaluated once, `ptr` at most once.  A loop that counts a budget
 * in pauses keeps counting n for the wait (the simulated wait may have
 * been shorter: the budget is then spent a little early).
 */
#ifndef LB_COND_LOAD_H
#define LB_COND_LOAD_H

#include "lb_atomic.h"

/* The wait between two looks of a loop only a store to *ptr can end. */
#ifndef LB_COND_LOAD_WAIT
#define LB_COND_LOAD_WAIT(ptr) lb_cpu_relax()
#endif

/* The wait between two looks of an _until loop (see the header comment). */
#ifndef LB_COND_LOAD_WAIT_UNTIL
#define LB_COND_LOAD_WAIT_UNTIL(ptr) lb_cpu_relax()
#endif

/* Load *ptr with order mo into var until cond holds. */
#define lb_cond_load(var, ptr, mo, cond)                                       \
	do {                                                                   \
		for (;;) {                                                     \
			(var) = atomic_load_explicit((ptr), (mo));             \
			if (cond)                                              \
				break;                                         \
			LB_COND_LOAD_WAIT(ptr);                                \
		}                                                              \
	} while (0)

/* As lb_cond_load, and also end when stop holds (looked at after each look
 * that failed cond, before the wait). */
#define lb_cond_load_until(var, ptr, mo, cond, stop)                           \
	do {                                                                   \
		for (;;) {                                                     \
			(var) = atomic_load_explicit((ptr), (mo));             \
			if (cond)                                              \
				break;                                         \
			if (stop)                                              \
				break;                                         \
			LB_COND_LOAD_WAIT_UNTIL(ptr);                          \
		}                                                              \
	} while (0)

#define lb_cond_load_relaxed(var, ptr, cond) lb_cond_load(var, ptr, memory_order_relaxed, cond)
#define lb_cond_load_acquire(var, ptr, cond) lb_cond_load(var, ptr, memory_order_acquire, cond)
#define lb_cond_load_relaxed_until(var, ptr, cond, stop)                       \
	lb_cond_load_until(var, ptr, memory_order_relaxed, cond, stop)
#define lb_cond_load_acquire_until(var, ptr, cond, stop)                       \
	lb_cond_load_until(var, ptr, memory_order_acquire, cond, stop)

/* The wait between two looks of a loop the forms above cannot spell: one
 * pause, or n; a replacement may end it when *ptr's line is written (see
 * the header comment).  Natively the pause alone (`ptr` unevaluated), so
 * the loop compiles as it did with lb_cpu_relax(). */
#ifdef LB_COND_LOAD_WAIT_PAUSES
#define lb_cond_load_pause(ptr) LB_COND_LOAD_WAIT_PAUSES(ptr, 1u)
#define lb_cond_load_pauses(ptr, n) LB_COND_LOAD_WAIT_PAUSES(ptr, n)
#else
#define lb_cond_load_pause(ptr) lb_cpu_relax()
#define lb_cond_load_pauses(ptr, n)                                            \
	do {                                                                   \
		for (uint32_t lb_cond_load_i_ = 0, lb_cond_load_n_ = (n);      \
		     lb_cond_load_i_ < lb_cond_load_n_; lb_cond_load_i_++)     \
			lb_cpu_relax();                                        \
	} while (0)
#endif

#endif /* LB_COND_LOAD_H */
