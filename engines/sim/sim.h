/* SPDX-License-Identifier: MIT */
/*
 * sim.h - the simulator engine: N virtual CPUs in S sockets, in virtual
 * time, in one host thread (issue 35; the model is doc/sim.md).
 *
 * A world is made from a machine (lb_sim_machine_parse) and a seed; virtual
 * threads are coroutines added with lb_sim_spawn and run by lb_sim_run.
 * The calls below the "thread side" line are made from inside a virtual
 * thread only: each is a yield point that charges virtual time.  Same seed,
 * same machine, same program: the same events in the same order
 * (lb_sim_digest).
 *
 * Not modelled yet (doc/sim.md): periodic load balancing, nice weights.
 */
#ifndef LB_SIM_H
#define LB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LB_SIM_MAX_CPUS 512
#define LB_SIM_LINE 64              /* bytes per coherence line */
#define LB_SIM_NO_DEADLINE UINT64_MAX

/* The machine file's contents (sim_machine.c); every time in ns. */
struct lb_sim_machine {
	char name[64];
	unsigned sockets, cores_per_socket, smt;
	uint64_t l1_hit, same_core, same_socket, cross_socket, memory, rmw;
	uint64_t context_switch, wakeup, syscall;
	uint64_t tick, min_granularity, wakeup_granularity, sched_latency;
};

/* Parse machine-file text; `file` names it in errors.  0, or -1 with one
 * line ("FILE:LINE: field 'x': ...") in err. */
int lb_sim_machine_parse(const char *text, const char *file, struct lb_sim_machine *m,
			 char *err, size_t errlen);
/* Read and parse a file; 0 or -1 with the error in err. */
int lb_sim_machine_load(const char *path, struct lb_sim_machine *m, char *err, size_t errlen);
static inline unsigned lb_sim_machine_cpus(const struct lb_sim_machine *m)
{
	return m->sockets * m->cores_per_socket * m->smt;
}
/* One line transfer between CPUs a and b (ns): 0 on one CPU, same_core for
 * SMT siblings, same_socket, cross_socket.  CPUs are numbered socket-major,
 * SMT siblings adjacent: the engine's coherence charges these figures (its
 * sim_distance applies the same rule to precomputed core and socket
 * numbers; tests sim-coherence and sim-analytic check both by hand). */
static inline uint64_t lb_sim_machine_distance(const struct lb_sim_machine *m, unsigned a,
					       unsigned b)
{
	if (a == b)
		return 0;
	if (a / m->smt == b / m->smt)
		return m->same_core;
	unsigned per_socket = m->smt * m->cores_per_socket;
	return a / per_socket == b / per_socket ? m->same_socket : m->cross_socket;
}

struct lb_sim_world;
typedef void (*lb_sim_fn)(void *arg);

enum lb_sim_access_kind { LB_SIM_LOAD, LB_SIM_STORE, LB_SIM_RMW };
enum lb_sim_wait_result {
	LB_SIM_WRITTEN,   /* the line was written */
	LB_SIM_TIMEDOUT,  /* the deadline passed */
	LB_SIM_RESCHED,   /* preempted while waiting, running again */
};

/* Per-world counters (lb_sim_stats). */
struct lb_sim_stats {
	uint64_t events;         /* events run */
	uint64_t switches;       /* context switches */
	uint64_t transfers;      /* line transfers (misses, upgrades) */
	uint64_t invalidations;  /* sharers invalidated */
	uint64_t wakeups;        /* threads woken from futexes and sleeps */
	uint64_t preemptions;    /* tick, wake-up and boost preemptions */
	uint64_t run_ns;         /* virtual time threads ran on CPUs, summed over
				  * CPUs (spinning included): / (now x CPUs) is the
				  * busy share */
	uint64_t migrations;     /* wake-ups and affinity moves onto another CPU */
	uint64_t busy_ns;        /* CPU time with a current thread, all CPUs (to now) */
};

/* Host side. */
struct lb_sim_world *lb_sim_create(const struct lb_sim_machine *m, uint64_t seed);
void lb_sim_destroy(struct lb_sim_world *w);
/* A new virtual thread (fair class, any CPU) starting at a seeded offset
 * under 1 us; its id (0, 1, ...) or -1 on allocation failure. */
int lb_sim_spawn(struct lb_sim_world *w, lb_sim_fn fn, void *arg);
/* Set before lb_sim_run: class, priority (1..99) and CPU of a spawned
 * thread; 0, or -1 (nothing changed) for an unknown thread, a priority or
 * a CPU out of range. */
int lb_sim_thread_fifo(struct lb_sim_world *w, int tid, int prio);
int lb_sim_thread_pin(struct lb_sim_world *w, int tid, unsigned cpu);
/* Run events up to virtual time `until` (ns) or until every thread ended;
 * returns the number of threads still alive. */
unsigned lb_sim_run(struct lb_sim_world *w, uint64_t until);
uint64_t lb_sim_world_now(const struct lb_sim_world *w);
uint64_t lb_sim_digest(const struct lb_sim_world *w);
/* A thread's effective priority now: its FIFO priority or boost, the
 * highest (0: fair); -1 for an unknown thread. */
int lb_sim_thread_eff_prio(const struct lb_sim_world *w, int tid);
struct lb_sim_stats lb_sim_stats(const struct lb_sim_world *w);
/* The directory's view of the line holding addr: its owner CPU (-1: none)
 * and its number of sharers (the owner not counted). */
void lb_sim_line_state(const struct lb_sim_world *w, const void *addr, int *owner,
		       unsigned *sharers);

/* ---- Thread side: from inside a virtual thread only. ---- */
/* Whether the caller is a virtual thread (callable from anywhere). */
bool lb_sim_inside(void);
uint64_t lb_sim_now(void);
unsigned lb_sim_getcpu(void);
int lb_sim_self(void);
/* Charge the coherence cost of an access to the line holding addr (a yield
 * point); the caller then makes the real access, and after a write calls
 * lb_sim_written so the line's waiters see it.  Outside a virtual thread
 * it does nothing (an interposed atomic made by the host). */
void lb_sim_access(const void *addr, enum lb_sim_access_kind kind);
void lb_sim_written(const void *addr);
/* Park until the line holding addr is written, the deadline (absolute ns)
 * passes, or the thread was preempted and runs again. */
enum lb_sim_wait_result lb_sim_cond_wait(const void *addr, uint64_t deadline);
/* The three steps for code written against the engine directly. */
uint32_t lb_sim_load_u32(const uint32_t *p);
void lb_sim_store_u32(uint32_t *p, uint32_t v);
uint32_t lb_sim_fetch_add_u32(uint32_t *p, uint32_t v);
uint32_t lb_sim_xchg_u32(uint32_t *p, uint32_t v);
bool lb_sim_cas_u32(uint32_t *p, uint32_t *expected, uint32_t desired);
/* futex: 0 woken, 1 the word was not `expected`, 2 timed out. */
int lb_sim_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t deadline);
unsigned lb_sim_futex_wake(const uint32_t *addr, unsigned n);
/* PI futexes (sim_pi.c, the kernel's FUTEX_LOCK_PI / FUTEX_UNLOCK_PI): the
 * word holds the owner's TID, lb_sim_self() + 1 (the simulated gettid), and
 * LB_SIM_FUTEX_WAITERS while someone waits.  The caller's user-space CAS
 * failed first, as with the kernel's.  lock_pi blocks in priority order,
 * boosting the owner (and the chain of owners it is blocked on) to the
 * top waiter's effective priority; an unlock hands the word to the top
 * waiter (its TID | WAITERS) and drops the unlocker's boost after the wake.
 * Results: */
#define LB_SIM_FUTEX_WAITERS 0x80000000u   /* the kernel's FUTEX_WAITERS */
#define LB_SIM_FUTEX_TID_MASK 0x3fffffffu  /* the kernel's FUTEX_TID_MASK */
enum lb_sim_pi_result {
	LB_SIM_PI_OK = 0,        /* the caller owns it (lock) / released it (unlock) */
	LB_SIM_PI_TIMEDOUT = 2,  /* the deadline passed (ETIMEDOUT) */
	LB_SIM_PI_DEADLOCK = 3,  /* the caller owns it already (EDEADLK) */
	LB_SIM_PI_NOOWNER = 4,   /* the TID in the word is no thread (ESRCH) */
	LB_SIM_PI_NOTOWNER = 5,  /* unlock by a thread that does not own it (EPERM) */
};
int lb_sim_futex_lock_pi(uint32_t *addr, uint64_t deadline);
int lb_sim_futex_unlock_pi(uint32_t *addr);
void lb_sim_yield(void);
/* A spin loop's pause (x86 `pause`): charged l1_hit (doc/sim.md). */
void lb_sim_pause(void);
/* The machine the caller's world runs. */
const struct lb_sim_machine *lb_sim_machine_running(void);
/* A word of the caller's world for a lock's calibrated spin cost (zero in
 * a new world), so no calibration outlives its cell. */
_Atomic(unsigned int) *lb_sim_spin_cache(void);
void lb_sim_sleep(uint64_t ns);
/* clock_nanosleep(TIMER_ABSTIME): until absolute virtual time t (the
 * system call's cost is paid first; a t already past returns then). */
void lb_sim_sleep_until(uint64_t t);
/* Timed work: ns of CPU time, preemptible. */
void lb_sim_spend(uint64_t ns);
void lb_sim_set_fifo(int prio);
void lb_sim_set_fair(void);
/* sched_setscheduler(tid): thread tid's own class, FIFO prio (1..99) or
 * fair (prio 0); a boost stays on top of it.  0, or -1 for an unknown
 * thread or a priority out of range. */
int lb_sim_setscheduler(int tid, int prio);
/* sched_getscheduler(0): the caller's own class, its FIFO priority or 0
 * for fair (boosts not counted, as the kernel's policy). */
int lb_sim_own_prio(void);
/* Whether the caller may run on cpu (its affinity). */
bool lb_sim_allowed(unsigned cpu);
/* Allowed CPUs as a list; the thread migrates at once if it must. */
void lb_sim_set_affinity(const unsigned *cpus, unsigned n);
/* PI hooks: raise thread tid to FIFO prio (no effect if already above,
 * or for an unknown thread), and return it to its own class and priority. */
void lb_sim_boost(int tid, int prio);
void lb_sim_unboost(int tid);
void lb_sim_preempt_disable(void);
void lb_sim_preempt_enable(void);
/* The scheduler's truth, for a lock's spinner (the kernel's
 * owner->on_cpu and need_resched()): whether thread tid is current on a
 * CPU (false for an unknown one), and whether a tick or a wake-up marked
 * the caller to give up its CPU (it can only be marked inside a
 * preempt-off region: elsewhere it is preempted at once, as a kernel task
 * with preemption on). */
bool lb_sim_on_cpu(int tid);
/* The caller's CPU time so far (virtual ns): CLOCK_THREAD_CPUTIME_ID's. */
uint64_t lb_sim_cpu_ns(void);
bool lb_sim_need_resched(void);

#endif /* LB_SIM_H */
