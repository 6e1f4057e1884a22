/* SPDX-License-Identifier: MIT */
/*
 * sim_slub.h - the SLUB-like allocator (engines/slub/slub.h) as `lockbench
 * sim --workload rt` runs it: slub.c compiled a second time over
 * sim_slub_interpose.h (bench/sim/meson.build), its public functions
 * renamed lb_simslub_* so both copies link into lockbench.  Include this,
 * not slub.h, to call the simulated copy.
 */
#ifndef LB_SIM_SLUB_H
#define LB_SIM_SLUB_H

#define lb_slub_alloc lb_simslub_alloc
#define lb_slub_alloc_bulk lb_simslub_alloc_bulk
#define lb_slub_alloc_nocache lb_simslub_alloc_nocache
#define lb_slub_cache_destroy lb_simslub_cache_destroy
#define lb_slub_cache_init lb_simslub_cache_init
#define lb_slub_cache_init_shared lb_simslub_cache_init_shared
#define lb_slub_cache_init_tuned lb_simslub_cache_init_tuned
#define lb_slub_check lb_simslub_check
#define lb_slub_cpu_fini lb_simslub_cpu_fini
#define lb_slub_cpu_init lb_simslub_cpu_init
#define lb_slub_cpu_offcpu lb_simslub_cpu_offcpu
#define lb_slub_cpu_release lb_simslub_cpu_release
#define lb_slub_cpu_set_prio lb_simslub_cpu_set_prio
#define lb_slub_cpu_set_spin_budget lb_simslub_cpu_set_spin_budget
#define lb_slub_current_slot lb_simslub_current_slot
#define lb_slub_debug_hold_lock lb_simslub_debug_hold_lock
#define lb_slub_debug_lock lb_simslub_debug_lock
#define lb_slub_debug_unlock lb_simslub_debug_unlock
#define lb_slub_free lb_simslub_free
#define lb_slub_free_bulk lb_simslub_free_bulk
#define lb_slub_free_nocache lb_simslub_free_nocache
#define lb_slub_site_name lb_simslub_site_name
#define lb_slub_tuning_default lb_simslub_tuning_default

#include "slub.h"

#endif /* LB_SIM_SLUB_H */
