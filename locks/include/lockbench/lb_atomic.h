/* SPDX-License-Identifier: MIT */
/*
 * lb_atomic.h - the one thin layer over <stdatomic.h> that lock headers use.
 *
 * Everything here is C11 plus, where the compiler is GNU-compatible, one
 * inline-asm instruction for cpu_relax.  Every access has an explicit
 * memory_order: spelled out at the call site, or named by the helper it
 * calls ("acquire load", "release store", "CAS that acquires", each written
 * with explicit orders here) so a reader sees it at a glance.
 *
 * Public lock headers depend on this file and the C11 standard headers only.
 */
#ifndef LB_ATOMIC_H
#define LB_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Atomics in C and C++.  Lock headers spell atomic types `_Atomic(T)` (the
 * C11 type-specifier form, never the `_Atomic T` qualifier form) and use the
 * C11 generic functions (atomic_load_explicit...).  In C that is
 * <stdatomic.h>.  In C++ those exact spellings are what C++23's
 * <stdatomic.h> provides (`#define _Atomic(T) std::atomic<T>` plus
 * using-declarations); C++11..20 lack that header, so the same mapping is
 * made here, together with atomic_init, which C++23's header omits.  GCC
 * and Clang give std::atomic<T> the size and alignment of _Atomic(T) for
 * the lock-free integer and pointer types used here, so one lock object can
 * be shared by C and C++ files (doc/embedding.md, "C++").
 */
#if defined(__cplusplus)
#include <atomic>
#if !defined(_Atomic)
#define _Atomic(T) std::atomic<T>
#endif
using std::memory_order;
using std::memory_order_relaxed;
using std::memory_order_consume;
using std::memory_order_acquire;
using std::memory_order_release;
using std::memory_order_acq_rel;
using std::memory_order_seq_cst;
using std::atomic_init;
using std::atomic_load_explicit;
using std::atomic_store_explicit;
using std::atomic_exchange_explicit;
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_compare_exchange_weak_explicit;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_sub_explicit;
using std::atomic_fetch_and_explicit;
using std::atomic_fetch_or_explicit;
using std::atomic_thread_fence;
using std::atomic_signal_fence;
/* C11 keywords the headers use, under names both languages accept. */
#define LB_ALIGNAS(n) alignas(n)
#define LB_ALIGNOF(T) alignof(T)
#define LB_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#include <stdatomic.h>
#define LB_ALIGNAS(n) _Alignas(n)
#define LB_ALIGNOF(T) _Alignof(T)
#define LB_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* Size of the unit of coherence we pad lock objects and shared data to. */
#define LB_CACHELINE 64

#define lb_load_relaxed(p)      atomic_load_explicit((p), memory_order_relaxed)
#define lb_load_acquire(p)      atomic_load_explicit((p), memory_order_acquire)
#define lb_store_relaxed(p, v)  atomic_store_explicit((p), (v), memory_order_relaxed)
#define lb_store_release(p, v)  atomic_store_explicit((p), (v), memory_order_release)

/*
 * Lock-word idioms the word-based locks share (qspinlock, qspinlock-pv,
 * qrwlock's write side, ticket, futex-pi).  Both are static inline, so a
 * fast path compiles to the same instructions as the spelled-out CAS.
 *
 * lb_cas_acquire - one strong CAS of `word` from *seen to `desired`.
 * Acquire on success: it takes a lock, and pairs with the release that
 * dropped it.  Relaxed on failure: the caller only reads back *seen (the
 * value the word had), to choose its slow path; nothing was acquired.
 */
static inline bool lb_cas_acquire(_Atomic(uint32_t) *word, uint32_t *seen, uint32_t desired)
{
	return atomic_compare_exchange_strong_explicit(word, seen, desired, memory_order_acquire,
						       memory_order_relaxed);
}

/*
 * lb_cas_acquire_if_zero - the trylock of a word that is 0 when free: a
 * relaxed peek first, so a visibly busy word fails without taking its cache
 * line for ownership, then lb_cas_acquire from 0 to `desired`.  Never
 * waits.
 */
static inline bool lb_cas_acquire_if_zero(_Atomic(uint32_t) *word, uint32_t desired)
{
	uint32_t seen = atomic_load_explicit(word, memory_order_relaxed);

	if (seen)
		return false;
	return lb_cas_acquire(word, &seen, desired);
}

#if defined(__GNUC__)
#define LB_UNUSED __attribute__((unused))
#define LB_NOINLINE __attribute__((noinline))
#define LB_LIKELY(x) __builtin_expect(!!(x), 1)
#define LB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LB_UNUSED
#define LB_NOINLINE
#define LB_LIKELY(x) (x)
#define LB_UNLIKELY(x) (x)
#endif

/*
 * LB_SLOWPATH - how lock headers declare their contended paths: static,
 * never inlined (the fast path stays a few instructions with no register
 * pressure, and profiles name the slow path), and marked unused so a
 * translation unit that includes a header without calling it stays quiet.
 * Compilers without the GNU attributes get plain static inline.
 */
#if defined(__GNUC__)
#define LB_SLOWPATH static __attribute__((noinline, unused))
#else
#define LB_SLOWPATH static inline
#endif

/*
 * lb_cpu_relax - the body of every spin loop.  On x86 `pause` tells the core
 * we are spinning (saves power, avoids a memory-order machine clear when the
 * awaited store lands); on arm64 `yield` is the architectural hint.  It is
 * not a barrier: spin loops still load with an explicit order.
 */
static inline void lb_cpu_relax(void)
{
#if defined(LB_CPU_RELAX_REPLACE)
	/* A simulator's copy of the locks only (bench/sim/sim_interpose.h
	 * defines it): the pause costs virtual time instead. */
	LB_CPU_RELAX_REPLACE();
#else
#if defined(LB_PERTURB)
	/* locktorture's copy of the locks only (torture/perturb_hooks.h): count
	 * the spin for the watchdog's evidence. */
	lb_perturb_count_spin();
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
#endif /* LB_CPU_RELAX_REPLACE */
}

#endif /* LB_ATOMIC_H */
