/* SPDX-License-Identifier: MIT */
/*
 * lb_atomic.h - the one thin layer over <stdatomic.h> that lock headers use.
 *
 * Everything here is C11 plus, where the compiler is GNU-compatible, one
 * inline-asm instruction for cpu_relax and one for the cycle counter.  Call
 * sites always spell out their memory_order; these helpers only name the
 * intent ("acquire load", "release store") so a reader sees it at a glance.
 *
 * Public lock headers depend on this file and the C11 standard headers only.
 */
#ifndef LB_ATOMIC_H
#define LB_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Size of the unit of coherence we pad lock objects and shared data to. */
#define LB_CACHELINE 64

#define lb_load_relaxed(p)      atomic_load_explicit((p), memory_order_relaxed)
#define lb_load_acquire(p)      atomic_load_explicit((p), memory_order_acquire)
#define lb_store_relaxed(p, v)  atomic_store_explicit((p), (v), memory_order_relaxed)
#define lb_store_release(p, v)  atomic_store_explicit((p), (v), memory_order_release)

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
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif /* LB_ATOMIC_H */
