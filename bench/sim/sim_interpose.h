/* SPDX-License-Identifier: MIT */
/*
 * sim_interpose.h - force-included (-include) into `lockbench sim`'s own
 * compile of the lock adapters (bench/sim/meson.build, -DLB_SIM_INTERPOSE=1)
 * and into nothing else: lockbench's native locks, locktorture, the preload
 * library and the installed headers never see it.  It makes the locks'
 * own, unchanged code run on the simulator (doc/sim.md, "Interposition"):
 *
 *  - every atomic access (<stdatomic.h>'s generic functions expand into
 *    GCC's __atomic_* builtins, Clang's into __c11_atomic_*; qspinlock.h
 *    also calls __atomic_* directly) first calls lb_simi_access(), which
 *    charges the line's coherence cost in virtual time (a yield point),
 *    then makes the real access.  The builtin's name is a function-like
 *    macro whose expansion calls the builtin itself (a macro's own name is
 *    not expanded again), as torture/perturb_hooks.h does; the pointer is
 *    evaluated once, passed through lb_simi_access and cast back to its type;
 *  - lb_cond_load's waits park on the line (lb_simi_cond_wait), so a spin
 *    costs O(1) events per store to its line, not one per pause; its wait
 *    alone (lb_cond_load_pause/_pauses: n pauses between looks of a loop
 *    it cannot spell) parks until the line is written or n pauses passed
 *    (n > 1: a single pause is charged as lb_cpu_relax's);
 *  - lb_cpu_relax() (a plain spin loop's pause) costs virtual time;
 *  - futex(2) (PI operations included), gettid, sched_yield,
 *    clock_gettime, nanosleep and sched_getcpu, sched_getaffinity,
 *    sysconf's CPU count, sched_setscheduler/getscheduler/getparam and
 *    pthread_create/join (rtmutex's SCHED_FIFO probe) go to the simulated
 *    kernel.  The system headers are
 *    included first, so the macros below rename calls, not declarations.
 *  - each adapter's `lb_<lock>_ops` is renamed `lb_simlk_<lock>_ops`
 *    (sim_rename.h, generated from the lock manifest), so both copies of
 *    the locks link into one program; bench/sim/sim_locks.c lists them.
 *
 * Fences are left native: the simulated memory is sequentially consistent
 * (doc/sim.md, "What it cannot model").  Called outside a virtual thread
 * (never, in `lockbench sim`: every lock call is made by one), the hooks
 * exit with an error line rather than mix host and virtual time.
 */
#ifndef LB_SIM_INTERPOSE_H
#define LB_SIM_INTERPOSE_H

#if !defined(LB_SIM_INTERPOSE) || defined(__cplusplus)
#error "sim_interpose.h is for lockbench sim's C compile of the locks (-DLB_SIM_INTERPOSE=1)"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim_hooks.h"
#include "sim_rename.h"

/* The pointer of an access, after its cost was charged (a yield point). */
#define LB_SIMI_PTR(p, kind) ((__typeof__(p))lb_simi_access((p), (kind)))
#define LB_SIMI_LOAD_ 0
#define LB_SIMI_STORE_ 1
#define LB_SIMI_RMW_ 2

#define __atomic_load(p, r, mo) __atomic_load(LB_SIMI_PTR(p, LB_SIMI_LOAD_), r, mo)
#define __atomic_load_n(p, mo) __atomic_load_n(LB_SIMI_PTR(p, LB_SIMI_LOAD_), mo)
#define __atomic_store(p, v, mo) __atomic_store(LB_SIMI_PTR(p, LB_SIMI_STORE_), v, mo)
#define __atomic_store_n(p, v, mo) __atomic_store_n(LB_SIMI_PTR(p, LB_SIMI_STORE_), v, mo)
#define __atomic_exchange(p, v, r, mo) __atomic_exchange(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, r, mo)
#define __atomic_exchange_n(p, v, mo) __atomic_exchange_n(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
/* A compare-exchange takes the line exclusive whether or not it succeeds
 * (as in hardware), so a failed one is an RMW too. */
#define __atomic_compare_exchange(p, e, d, w, s, f)                            \
	__atomic_compare_exchange(LB_SIMI_PTR(p, LB_SIMI_RMW_), e, d, w, s, f)
#define __atomic_compare_exchange_n(p, e, d, w, s, f)                          \
	__atomic_compare_exchange_n(LB_SIMI_PTR(p, LB_SIMI_RMW_), e, d, w, s, f)
#define __atomic_fetch_add(p, v, mo) __atomic_fetch_add(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_fetch_sub(p, v, mo) __atomic_fetch_sub(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_fetch_and(p, v, mo) __atomic_fetch_and(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_fetch_or(p, v, mo) __atomic_fetch_or(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_fetch_xor(p, v, mo) __atomic_fetch_xor(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_add_fetch(p, v, mo) __atomic_add_fetch(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_sub_fetch(p, v, mo) __atomic_sub_fetch(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_and_fetch(p, v, mo) __atomic_and_fetch(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __atomic_or_fetch(p, v, mo) __atomic_or_fetch(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)

/* Clang's <stdatomic.h> expands to its __c11_atomic_* builtins instead. */
#define __c11_atomic_load(p, mo) __c11_atomic_load(LB_SIMI_PTR(p, LB_SIMI_LOAD_), mo)
#define __c11_atomic_store(p, v, mo) __c11_atomic_store(LB_SIMI_PTR(p, LB_SIMI_STORE_), v, mo)
#define __c11_atomic_exchange(p, v, mo) __c11_atomic_exchange(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __c11_atomic_compare_exchange_strong(p, e, d, s, f)                    \
	__c11_atomic_compare_exchange_strong(LB_SIMI_PTR(p, LB_SIMI_RMW_), e, d, s, f)
#define __c11_atomic_compare_exchange_weak(p, e, d, s, f)                      \
	__c11_atomic_compare_exchange_weak(LB_SIMI_PTR(p, LB_SIMI_RMW_), e, d, s, f)
#define __c11_atomic_fetch_add(p, v, mo) __c11_atomic_fetch_add(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __c11_atomic_fetch_sub(p, v, mo) __c11_atomic_fetch_sub(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __c11_atomic_fetch_and(p, v, mo) __c11_atomic_fetch_and(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __c11_atomic_fetch_or(p, v, mo) __c11_atomic_fetch_or(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)
#define __c11_atomic_fetch_xor(p, v, mo) __c11_atomic_fetch_xor(LB_SIMI_PTR(p, LB_SIMI_RMW_), v, mo)

/* lb_cond_load.h's waits (defined before its first inclusion). */
#define LB_COND_LOAD_WAIT(ptr) lb_simi_cond_wait((const void *)(ptr))
#define LB_COND_LOAD_WAIT_UNTIL(ptr) lb_simi_cond_wait_until((const void *)(ptr))
#define LB_COND_LOAD_WAIT_PAUSES(ptr, n) lb_simi_cond_wait_pauses((const void *)(ptr), (n))
/* lb_atomic.h's lb_cpu_relax(). */
#define LB_CPU_RELAX_REPLACE() lb_simi_pause()
/* lb_spin_budget.h's calibration cache: one per simulated world. */
#define LB_SPIN_RELAX_PS_SLOT() lb_simi_spin_ps_slot()

/* The simulated kernel (the declarations above are the system headers'). */
#define syscall(...) lb_simi_syscall(__VA_ARGS__)
#define sched_yield() lb_simi_sched_yield()
#define sched_getcpu() lb_simi_sched_getcpu()
#define clock_gettime(clk, ts) lb_simi_clock_gettime((clk), (ts))
#define nanosleep(req, rem) lb_simi_nanosleep((req), (rem))
#define sched_getaffinity(pid, size, set) lb_simi_sched_getaffinity((pid), (size), (set))
#define sysconf(name) lb_simi_sysconf(name)
/* rtmutex's real boost and its permission probe (sim_hooks.h). */
#define sched_setscheduler(pid, pol, sp) lb_simi_sched_setscheduler((pid), (pol), (sp))
#define sched_getscheduler(pid) lb_simi_sched_getscheduler(pid)
#define sched_getparam(pid, sp) lb_simi_sched_getparam((pid), (sp))
#define pthread_create(th, attr, fn, arg) lb_simi_pthread_create((th), (attr), (fn), (arg))
#define pthread_join(th, ret) lb_simi_pthread_join((th), (ret))

/*
 * lb_sched_hooks.h's two questions (owner->on_cpu, need_resched()): in a
 * world that asked for the scheduler's truth (lb_simi_set_sched_truth
 * with LB_SIMI_TRUTH_SCHED: `lockbench sim --workload aim7`) the engine
 * answers them; elsewhere the userspace stand-ins run as natively (a
 * bench cell's events unchanged).
 * Each task record is bound to the virtual thread that initialised it;
 * the kernel's preempt-off regions of the v3.x mutex slow paths are the
 * engine's there too (lb_simi_lock_preempt), so its spinners see a tick
 * as need_resched instead of losing the CPU in the MCS/OSQ queue.
 */
/* mutex_v3.h's preempt-off slow paths, in such a world only. */
#define LB_MUTEX_V3_PREEMPT_OFF() lb_simi_lock_preempt(1)
#define LB_MUTEX_V3_PREEMPT_ON() lb_simi_lock_preempt(0)
#define LB_SCHED_HOOKS_OVERRIDE 1
#define LB_SCHED_TASK_BIND(t) lb_simi_task_bind(t)
/* rtmutex.h's owner_on_cpu/need_resched rule for its two spins, from the
 * same table and engine in a world that asked for LB_SIMI_TRUTH_RTMUTEX
 * (`--workload rt`, which leaves slub.c's gauge on its stand-in);
 * elsewhere (-1) its native answers, running and no resched.  need_resched is only
 * ever set inside a preempt-off region, which rtmutex's spins are not: a
 * spinner is preempted instead, so in practice only the owner's state
 * ends a spin early. */
#define LB_RTMUTEX_TASK_BIND(t) lb_simi_task_bind(t)
#define LB_RTMUTEX_OWNER_RUNNING(t) (lb_simi_owner_running((t), LB_SIMI_TRUTH_RTMUTEX) != 0)
#define LB_RTMUTEX_NEED_RESCHED() (lb_simi_need_resched(LB_SIMI_TRUTH_RTMUTEX) > 0)
#include "lb_sched_hooks.h"

static inline bool lb_sched_owner_running(struct lb_sched_task *owner)
{
	int on = lb_simi_owner_running(owner, LB_SIMI_TRUTH_SCHED);
	return on < 0 ? lb_sched_owner_running_standin(owner) : on != 0;
}

static inline bool lb_sched_need_resched(struct lb_sched_spin *s)
{
	int r = lb_simi_need_resched(LB_SIMI_TRUTH_SCHED);
	return r < 0 ? lb_sched_need_resched_standin(s) : r != 0;
}

#endif /* LB_SIM_INTERPOSE_H */
