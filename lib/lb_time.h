/* SPDX-License-Identifier: MIT */
/*
 * lb_time.h - clocks: CLOCK_MONOTONIC nanoseconds, the cycle counter (TSC on
 * x86, CNTVCT on arm64, a CLOCK_MONOTONIC_RAW fallback elsewhere) and its
 * calibration to nanoseconds.
 */
#ifndef LB_TIME_H
#define LB_TIME_H

#include <stdint.h>

/* Nanoseconds per second, millisecond, microsecond: the one spelling. */
#define LB_NS_PER_S UINT64_C(1000000000)
#define LB_NS_PER_MS UINT64_C(1000000)
#define LB_NS_PER_US UINT64_C(1000)

/* CLOCK_MONOTONIC in ns. */
uint64_t lb_now_ns(void);

/* This thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns. */
uint64_t lb_thread_cpu_ns(void);

/* CLOCK_MONOTONIC_RAW in ns: lb_cycles() where there is no cycle counter. */
uint64_t lb_cycles_fallback(void);

/* Cycle counter; cheap (no serialisation).  Inline: it sits in hot loops.
 * LB_CYCLES_REPLACE, defined only by a force-included header (lockbench
 * sim's copy of the allocator, bench/sim/sim_slub_interpose.h), replaces
 * both counters with a virtual clock; nothing else defines it. */
static inline uint64_t lb_cycles(void)
{
#if defined(LB_CYCLES_REPLACE)
	return LB_CYCLES_REPLACE();
#elif defined(__GNUC__) && defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__GNUC__) && defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return lb_cycles_fallback();
#endif
}

/*
 * The cycle counter, ordered with the code around it: on x86 an lfence
 * before rdtsc (the read waits until every earlier instruction has
 * completed) and one after (later instructions, e.g. a lock's atomic, do
 * not start before the read); on arm64 an isb before and after the
 * counter read.  For timing a short interval such as one lock acquisition:
 * the unordered lb_cycles() may be executed early or late by tens of
 * cycles, which for a ~20-cycle uncontended lock reads as 0.
 */
static inline uint64_t lb_cycles_ordered(void)
{
#if defined(LB_CYCLES_REPLACE)
	return LB_CYCLES_REPLACE();
#elif defined(__GNUC__) && defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#elif defined(__GNUC__) && defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
	return v;
#else
	return lb_cycles_fallback();
#endif
}

/*
 * Calibrate the cycle counter against CLOCK_MONOTONIC: median of 5 windows
 * of ~10 ms each.  Idempotent and thread-safe (first caller does the work).
 * Returns cycles per ns (e.g. 2.59 for a 2.59 GHz TSC).
 */
double lb_cycles_per_ns(void);

/* The calibration above if some caller already made it, else 0 (no cost). */
double lb_cycles_per_ns_if_known(void);

/* Cycles one back-to-back pair of lb_cycles() reads costs (the median of
 * 1001 pairs, measured with the calibration): subtract it from a timed
 * interval to get what was inside it. */
uint64_t lb_cycles_overhead(void);

/* The floor of one back-to-back pair of lb_cycles_ordered() reads (the
 * minimum of 1001 pairs, measured with the calibration): what an interval
 * timed with them costs at least.  Subtracting more (the median) would take
 * away part of what the interval measures. */
uint64_t lb_cycles_ordered_floor(void);
/* Convert using the calibration above. */
double lb_cycles_to_ns(uint64_t cycles);

/* Name of the counter in use: "tsc", "cntvct" or "clock". */
const char *lb_cycles_source(void);

/* Busy-wait (no sleeping) for at least ns nanoseconds. */
void lb_spin_ns(uint64_t ns);

#endif /* LB_TIME_H */
