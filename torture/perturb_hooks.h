/* SPDX-License-Identifier: MIT */
/*
 * perturb_hooks.h - force-included (-include) into locktorture's own compile
 * of the lock adapters, with -DLB_PERTURB=1, and into nothing else: lockbench,
 * the preload library and the installed headers never see it.
 *
 * Every lock reaches memory through <stdatomic.h>'s generic functions (which
 * GCC expands into the __atomic_* builtins, Clang into __c11_atomic_*) or
 * through the __atomic builtins directly
 * (qspinlock.h's byte and half-word views).  Defining each builtin's name as
 * a function-like macro that calls the perturbation before and after the
 * builtin (lb_perturb_slow_site(), when --perturb is on) hooks them all, with
 * no per-lock code: a
 * macro's own name inside its expansion is not expanded again, so the inner
 * call is the real builtin.
 * lb_futex.h calls lb_perturb_point() around its syscall under the same
 * LB_PERTURB define.
 *
 * lb_perturb_point() costs a load and a predicted branch while --perturb is
 * off; torture/perturb.c has the delays.
 */
#ifndef LB_TORTURE_PERTURB_HOOKS_H
#define LB_TORTURE_PERTURB_HOOKS_H

#if !defined(LB_PERTURB) || defined(__cplusplus)
#error "perturb_hooks.h is for locktorture's C compile of the locks (-DLB_PERTURB=1)"
#endif

#include <stdatomic.h>
#include <stdbool.h>

#include "perturb.h"

/*
 * Statement-expression wrappers: perturb, do the operation, perturb.  Both
 * points get the call site's run counter and whether the operation publishes
 * a state (stores and read-modify-writes; a compare-exchange, after it, only
 * when it succeeded); the point after it also gets its memory order:
 * lb_perturb_slow_site() delays rarely run sites and the point after a
 * publishing release more often (perturb.h).  mo is evaluated once more, by
 * the hook: every caller passes a constant or a plain variable.
 */
#define LB_PERTURB_VOID_(call, mo, publishes)                                  \
	LB_PERTURB_VOID_N_(call, mo, publishes, LB_PERTURB_CAT_(lb_perturb_s, __COUNTER__))
#define LB_PERTURB_VOID_N_(call, mo, publishes, site)                          \
	__extension__({                                                        \
		static _Thread_local uint32_t site;                            \
		LB_PERTURB_BEFORE_(site, publishes);                           \
		call;                                                          \
		LB_PERTURB_AFTER_(site, mo, publishes);                        \
	})
/*
 * Per call site and thread, the times it ran (site, a block-scope static:
 * one per expansion): a store or read-modify-write on a path that runs
 * rarely (a slow unlock, a hand-over, a pass-on) is perturbed far more often
 * than the fast path's (perturb.h).
 */
#define LB_PERTURB_BEFORE_(site, publishes)                                    \
	do {                                                                   \
		if (__builtin_expect(lb_perturb_enabled, 0))                   \
			lb_perturb_slow_site(&site, false, publishes, 0);      \
	} while (0)
#define LB_PERTURB_AFTER_(site, mo, publishes)                                 \
	do {                                                                   \
		if (__builtin_expect(lb_perturb_enabled, 0))                   \
			lb_perturb_slow_site(&site, true, publishes, (int)(mo)); \
	} while (0)
/* The result's name is made unique (__COUNTER__) so that a wrapped operation
 * nested in another's argument does not shadow it.  A compare-exchange
 * publishes only when it succeeds (its result). */
#define LB_PERTURB_VALUE_(call, mo) LB_PERTURB_VALUE_N_(call, mo, true, 0, __COUNTER__)
#define LB_PERTURB_LOAD_(call, mo) LB_PERTURB_VALUE_N_(call, mo, false, 0, __COUNTER__)
#define LB_PERTURB_CAS_(call, mo) LB_PERTURB_VALUE_N_(call, mo, true, 1, __COUNTER__)
#define LB_PERTURB_VALUE_N_(call, mo, publishes, is_cas, n)                    \
	LB_PERTURB_VALUE_NAMED_(call, mo, publishes, is_cas,                   \
				LB_PERTURB_CAT_(lb_perturb_r, n), LB_PERTURB_CAT_(lb_perturb_s, n))
#define LB_PERTURB_CAT_(a, b) a##b
#define LB_PERTURB_VALUE_NAMED_(call, mo, publishes, is_cas, result, site)     \
	__extension__({                                                        \
		static _Thread_local uint32_t site;                            \
		LB_PERTURB_BEFORE_(site, publishes);                           \
		__auto_type result = call;                                     \
		LB_PERTURB_AFTER_(site, mo, (publishes) && (!(is_cas) || (bool)result)); \
		result;                                                        \
	})

#define __atomic_load(p, r, mo) LB_PERTURB_VOID_(__atomic_load(p, r, mo), mo, false)
#define __atomic_load_n(p, mo) LB_PERTURB_LOAD_(__atomic_load_n(p, mo), mo)
#define __atomic_store(p, v, mo) LB_PERTURB_VOID_(__atomic_store(p, v, mo), mo, true)
#define __atomic_store_n(p, v, mo) LB_PERTURB_VOID_(__atomic_store_n(p, v, mo), mo, true)
#define __atomic_exchange(p, v, r, mo) LB_PERTURB_VOID_(__atomic_exchange(p, v, r, mo), mo, true)
#define __atomic_exchange_n(p, v, mo) LB_PERTURB_VALUE_(__atomic_exchange_n(p, v, mo), mo)
#define __atomic_compare_exchange(p, e, d, w, s, f)                            \
	LB_PERTURB_CAS_(__atomic_compare_exchange(p, e, d, w, s, f), s)
#define __atomic_compare_exchange_n(p, e, d, w, s, f)                          \
	LB_PERTURB_CAS_(__atomic_compare_exchange_n(p, e, d, w, s, f), s)
#define __atomic_fetch_add(p, v, mo) LB_PERTURB_VALUE_(__atomic_fetch_add(p, v, mo), mo)
#define __atomic_fetch_sub(p, v, mo) LB_PERTURB_VALUE_(__atomic_fetch_sub(p, v, mo), mo)
#define __atomic_fetch_and(p, v, mo) LB_PERTURB_VALUE_(__atomic_fetch_and(p, v, mo), mo)
#define __atomic_fetch_or(p, v, mo) LB_PERTURB_VALUE_(__atomic_fetch_or(p, v, mo), mo)
#define __atomic_fetch_xor(p, v, mo) LB_PERTURB_VALUE_(__atomic_fetch_xor(p, v, mo), mo)
/* A fence publishes nothing by itself: plain points. */
#define __atomic_thread_fence(mo) LB_PERTURB_VOID_(__atomic_thread_fence(mo), mo, false)

/* Clang's <stdatomic.h> expands to its __c11_atomic_* builtins instead. */
#define __c11_atomic_load(p, mo) LB_PERTURB_LOAD_(__c11_atomic_load(p, mo), mo)
#define __c11_atomic_store(p, v, mo) LB_PERTURB_VOID_(__c11_atomic_store(p, v, mo), mo, true)
#define __c11_atomic_exchange(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_exchange(p, v, mo), mo)
#define __c11_atomic_compare_exchange_strong(p, e, d, s, f)                    \
	LB_PERTURB_CAS_(__c11_atomic_compare_exchange_strong(p, e, d, s, f), s)
#define __c11_atomic_compare_exchange_weak(p, e, d, s, f)                      \
	LB_PERTURB_CAS_(__c11_atomic_compare_exchange_weak(p, e, d, s, f), s)
#define __c11_atomic_fetch_add(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_fetch_add(p, v, mo), mo)
#define __c11_atomic_fetch_sub(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_fetch_sub(p, v, mo), mo)
#define __c11_atomic_fetch_and(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_fetch_and(p, v, mo), mo)
#define __c11_atomic_fetch_or(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_fetch_or(p, v, mo), mo)
#define __c11_atomic_fetch_xor(p, v, mo) LB_PERTURB_VALUE_(__c11_atomic_fetch_xor(p, v, mo), mo)
#define __c11_atomic_thread_fence(mo) LB_PERTURB_VOID_(__c11_atomic_thread_fence(mo), mo, false)

#endif /* LB_TORTURE_PERTURB_HOOKS_H */
