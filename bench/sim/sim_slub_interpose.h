/* SPDX-License-Identifier: MIT */
/*
 * sim_slub_interpose.h - force-included into the simulator's copy of
 * engines/slub/slub.c only (bench/sim/meson.build): the locks' interposition
 * (sim_interpose.h: atomics, spin waits, futexes, clocks, sched_getcpu),
 * the allocator's public names renamed (sim_slub.h), and the per-CPU
 * slots' local lock, glibc's PTHREAD_PRIO_INHERIT mutex, as a PI futex on
 * the engine (sim_hooks.c): glibc's own code would run natively, outside
 * the simulation, and block the one host thread.
 *
 * Its cycle counter (lib/lb_time.h's lb_cycles) reads the virtual clock in
 * ns: the allocator's gauges fold host cycle counts into shared maxima by
 * compare-and-swap, so host values would change which accesses are made
 * (their figures are in virtual ns, converted as cycles: not reported).
 *
 * Its calloc gives line-aligned memory (lb_simi_calloc_lines): the
 * simulated coherence is keyed by address, and an array of page records
 * placed wherever the host's heap had room would share other lines from
 * one run to the next (the same seed, other events).
 *
 * slub_rseq.h sees LB_SIM_INTERPOSE and leaves out its rseq asm: the fast
 * path's commit is the C11 compare-and-swap after re-reading the CPU (the
 * variant for ThreadSanitizer and other architectures).
 */
#ifndef LB_SIM_SLUB_INTERPOSE_H
#define LB_SIM_SLUB_INTERPOSE_H

#include "sim_interpose.h"
#include "sim_slub.h"

#include <pthread.h>

#include <stdlib.h>

#define LB_CYCLES_REPLACE() lb_simi_cycles()
#define calloc(n, size) lb_simi_calloc_lines((n), (size))
#define pthread_mutex_init(m, attr) lb_simi_mutex_init((m), (attr))
#define pthread_mutex_destroy(m) lb_simi_mutex_destroy(m)
#define pthread_mutex_lock(m) lb_simi_mutex_lock(m)
#define pthread_mutex_unlock(m) lb_simi_mutex_unlock(m)

#endif /* LB_SIM_SLUB_INTERPOSE_H */
