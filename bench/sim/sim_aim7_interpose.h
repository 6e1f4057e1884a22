/* SPDX-License-Identifier: MIT */
/*
 * sim_aim7_interpose.h - force-included into `lockbench sim --workload
 * aim7`'s own compile of bench/aim7's simulated kernel (kern_*.c), its
 * system tests (tests_sys.c) and the child loop (sim_aim7_world.c), over
 * sim_interpose.h (every atomic, futex, sleep and clock to the engine):
 *
 *  - lb_now_ns() (the window's alarm) and lb_cycles() (the lock wrappers'
 *    wait and hold timing) read the virtual clock, in ns (so a context's
 *    cycles_per_ns is 1);
 *  - every symbol those files define is renamed aim_simk_* so both copies
 *    link into lockbench (a name missing here is a duplicate definition at
 *    link time); struct aim_lock, whose tag is also a function's name,
 *    is renamed with it, consistently in every interposed file;
 *  - aim_kwork_burn (the cost table's CPU time as a busy loop natively) is
 *    sim_aim7_world.c's: lb_sim_spend(ns) of virtual CPU.
 */
#ifndef LB_SIM_AIM7_INTERPOSE_H
#define LB_SIM_AIM7_INTERPOSE_H

#include "sim_interpose.h"
#include "lb_time.h" /* first, so the macros below rename calls only */

#include <stdlib.h> /* first, so calloc/malloc below rename calls only */
#include <string.h>

/*
 * The world's memory on whole lines.  The simulator charges accesses by
 * 64-byte line, so which objects share a line decides what a store
 * invalidates; from plain calloc that followed the host's heap (argument
 * strings moved seed 002's cells: doc/sim.md, "Determinism").  Every
 * allocation of these files starts a line and owns its last one, so the
 * world's line sharing depends on the world alone.  free() takes them.
 */
static inline void *lb_simi_line_alloc(size_t bytes, int zero)
{
	size_t n = bytes ? (bytes + 63) / 64 * 64 : 64;
	void *p = aligned_alloc(64, n);
	if (p && zero)
		memset(p, 0, n);
	return p;
}
#define calloc(n, s) lb_simi_line_alloc((n) * (s), 1)
#define malloc(s) lb_simi_line_alloc((s), 0)

#define lb_now_ns() lb_simi_now_ns()
#define lb_cycles() lb_simi_now_ns()

/* kern_core.c's preempt-off sections: a spin-role lock is a kernel
 * spinlock, held with preemption off from lock() to unlock() (a tick or a
 * wake-up then only marks need_resched, acted on at unlock).  The mutex
 * role sleeps; the rw role stands for rw_semaphores (mmap_sem) as well as
 * tasklist_lock, so it stays preemptible (AIM_ROLE_SPIN: aim7.h, included by the
 * files that expand these). */
void lb_simi_preempt(int off);
#define AIM_PREEMPT_OFF(role) ((role) == AIM_ROLE_SPIN ? lb_simi_preempt(1) : (void)0)
#define AIM_PREEMPT_ON(role) ((role) == AIM_ROLE_SPIN ? lb_simi_preempt(0) : (void)0)

#define aim_class_name aim_simk_class_name
#define aim_dir_find aim_simk_dir_find
#define aim_file_read aim_simk_file_read
#define aim_file_sync aim_simk_file_sync
#define aim_file_truncate aim_simk_file_truncate
#define aim_file_write aim_simk_file_write
#define aim_kernel_check aim_simk_kernel_check
#define aim_kernel_class_counters aim_simk_kernel_class_counters
#define aim_kernel_counters aim_simk_kernel_counters
#define aim_kernel_destroy aim_simk_kernel_destroy
#define aim_kernel_init aim_simk_kernel_init
#define aim_kwork aim_simk_kwork
#define aim_kwork_n aim_simk_kwork_n
#define aim_lock aim_simk_lock
#define aim_mm_brk aim_simk_mm_brk
#define aim_mm_dup aim_simk_mm_dup
#define aim_mm_exec aim_simk_mm_exec
#define aim_mm_exit aim_simk_mm_exit
#define aim_mm_fault aim_simk_mm_fault
#define aim_mm_inspect aim_simk_mm_inspect
#define aim_nsys_tests aim_simk_nsys_tests
#define aim_nuser_tests aim_simk_nuser_tests
#define aim_page_alloc aim_simk_page_alloc
#define aim_page_free aim_simk_page_free
#define aim_pipe_read aim_simk_pipe_read
#define aim_pipe_write aim_simk_pipe_write
#define aim_pool_check aim_simk_pool_check
#define aim_pool_get aim_simk_pool_get
#define aim_pool_get_locked aim_simk_pool_get_locked
#define aim_pool_put aim_simk_pool_put
#define aim_pool_put_locked aim_simk_pool_put_locked
#define aim_port_bind aim_simk_port_bind
#define aim_port_release aim_simk_port_release
#define aim_read_lock aim_simk_read_lock
#define aim_read_unlock aim_simk_read_unlock
#define aim_shm_read aim_simk_shm_read
#define aim_shm_write aim_simk_shm_write
#define aim_sig_deliver aim_simk_sig_deliver
#define aim_sig_send aim_simk_sig_send
#define aim_stopping aim_simk_stopping
#define aim_sys_close_file aim_simk_sys_close_file
#define aim_sys_creat aim_simk_sys_creat
#define aim_sys_link aim_simk_sys_link
#define aim_sys_lookup aim_simk_sys_lookup
#define aim_sys_open_file aim_simk_sys_open_file
#define aim_sys_readdir aim_simk_sys_readdir
#define aim_sys_tests aim_simk_sys_tests
#define aim_sys_unlink aim_simk_sys_unlink
#define aim_task_exit aim_simk_task_exit
#define aim_task_fork aim_simk_task_fork
#define aim_task_walk aim_simk_task_walk
#define aim_unlock aim_simk_unlock
#define aim_user_tests aim_simk_user_tests
#define aim_kwork_burn aim_simk_kwork_burn
#define aim_shell_pipeline aim_simk_shell_pipeline
#define aim_wait_change aim_simk_wait_change

#endif /* LB_SIM_AIM7_INTERPOSE_H */
