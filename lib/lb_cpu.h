/* SPDX-License-Identifier: MIT */
/*
 * lb_cpu.h - the two CPU facts lib's own code needs: the cache-line size it
 * pads shared data to, and the pause hint for its few spin loops (the start
 * barrier, the clock calibration).
 *
 * lib sits below the lock layer and includes nothing from locks/, so it
 * cannot use <lockbench/lb_atomic.h>.  The lock headers keep their own
 * lb_cpu_relax() there because an embedder gets only include/lockbench/.
 * LB_CACHELINE is defined identically in both (C allows an identical
 * redefinition, and a different one would not compile); lib atomics are
 * plain <stdatomic.h>.
 */
#ifndef LB_CPU_H
#define LB_CPU_H

#include <stdatomic.h>

/* Size of the unit of coherence we pad shared data to. */
#define LB_CACHELINE 64

/* The body of lib's spin loops: `pause`/`yield` where the CPU has one.  Not
 * a barrier; the loops load with an explicit order. */
static inline void lb_cpu_pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif /* LB_CPU_H */
