/* SPDX-License-Identifier: MIT */
/*
 * mutex.c - vtable adapter for mutex.h, the adaptive-spinning mutex:
 *
 *   mutex         spin on the owner (OSQ head, bounded budget), then sleep
 *   mutex-nospin  the same lock with spinning switched off at init, for A/B
 *                 runs of what the spinning buys
 *   mutex-v3.14   the v3.14 generation (mutex_v3.h: MCS lock around each
 *                 spin attempt, owner cleared then count = 1 under a ticket
 *                 wait_lock, no handoff): aim7's PRE
 *   mutex-v3.15   the v3.15 generation (mutex_v3.h: cancellable OSQ, count
 *                 = 1 before wait_lock, patch 6/8's reschedule point): POST
 *
 * The thread context is the lb_mutex_ctx_t record (its address is the
 * owner value).  LB_MUTEX_SPIN_NS in the environment overrides the spin
 * budget (ns) of `mutex` at init, like glibc's mutex_spin_count tunable; the
 * value in use is whatever lb_mutex_init calibrated, read by nobody else.
 */
#include "lb_adapter.h"
#include <lockbench/mutex.h>
#include "lb_deadline.h"

#include <stdio.h>
#include <stdlib.h>

static uint32_t spin_ns_from_env(void)
{
	const char *s = getenv("LB_MUTEX_SPIN_NS");
	if (!s || !*s)
		return 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	return (*end == '\0' && v > 0 && v <= 100000000ul) ? (uint32_t)v : 0;
}

/* Each variant's init, and its init_shared twin (rt -P): the same lock with
 * shared futexes (attr.pshared); the thread records then come from the
 * caller's shared mapping, as init_shared's contract says. */
static int mutex_setup(void *lock, int gen, bool nospin, bool pshared)
{
	struct lb_mutex_attr a = { .spin_ns = nospin ? 0 : spin_ns_from_env(),
				   .nospin = nospin, .pshared = pshared };
	/* The current generation lets every CPU but the owner's spin (the
	 * kernel's rule); the v3.x generations keep lb_mutex_init's default. */
	if (gen == LB_MUTEX_GEN_CURRENT)
		a.max_spinners = -1;
	lb_mutex_init_gen(lock, (enum lb_mutex_gen)gen, &a);
	return 0;
}

#define LB_MUTEX_INITS(sym, gen, nospin)                                          \
	static int sym(void *lock) { return mutex_setup(lock, gen, nospin, false); } \
	static int sym##_shared(void *lock) { return mutex_setup(lock, gen, nospin, true); }

LB_MUTEX_INITS(mutex_init_spin, LB_MUTEX_GEN_CURRENT, false)
LB_MUTEX_INITS(mutex_init_nospin, LB_MUTEX_GEN_CURRENT, true)
LB_MUTEX_INITS(mutex_init_v3_14, LB_MUTEX_GEN_V3_14, false)
LB_MUTEX_INITS(mutex_init_v3_15, LB_MUTEX_GEN_V3_15, false)

static void mutex_describe(const void *lock, char *buf, size_t len)
{
	const lb_mutex_t *m = lock;
	if (m->gen != LB_MUTEX_GEN_CURRENT)
		snprintf(buf, len,
			 "kernel v3.%d generation: spins while the owner runs and no "
			 "need_resched (lb_sched_hooks.h stand-ins), stops on an owner "
			 "change; no handoff; %s",
			 m->gen % 100,
			 m->gen == LB_MUTEX_GEN_V3_14
				 ? "MCS lock per spin attempt, unlock sets count under a ticket wait_lock"
				 : "cancellable OSQ, unlock sets count before wait_lock");
	else if (m->spin_relax == 0)
		snprintf(buf, len, "no optimistic spinning; handoff after %u us",
			 m->handoff_ns / 1000);
	else
		snprintf(buf, len,
			 "spin budget %u ns (LB_MUTEX_SPIN_NS), at most %d spinner(s); "
			 "handoff after %u us",
			 m->spin_ns, m->max_spinners, m->handoff_ns / 1000);
}

LB_CTX_ADAPTERS(mutex, lb_mutex_ctx_init, lb_mutex_lock, lb_mutex_unlock, lb_mutex_trylock)
LB_ADAPT_TIMED_MONOTONIC(mutex_timedlock, lb_mutex_timedlock, lb_mutex_trylock)
/* The v3.x generations: their own verbs (mutex_v3.h) on the same object. */
LB_ADAPT_CTX_VOID(mutex_v3_lock, lb_mutex_v3_lock)
LB_ADAPT_CTX_VOID(mutex_v3_unlock, lb_mutex_v3_unlock)
LB_ADAPT_CTX_BOOL(mutex_v3_trylock, lb_mutex_v3_trylock)
LB_ADAPT_TIMED_MONOTONIC(mutex_v3_timedlock, lb_mutex_v3_timedlock, lb_mutex_v3_trylock)

/*
 * The holder of every mutex whose holder vanished in a fork: a record no
 * thread has, never written (only its address is used, as an owner value).
 */
static lb_mutex_ctx_t mutex_orphan;

static void mutex_atfork_child(void *lock, void *tctx)
{
	lb_mutex_atfork_child(lock, tctx, &mutex_orphan);
}

static void mutex_v3_atfork_child(void *lock, void *tctx)
{
	lb_mutex_v3_atfork_child(lock, tctx, &mutex_orphan);
}

#if LB_MUTEX_COUNTING
static size_t mutex_counters(const void *lock, struct lb_counter *out, size_t max)
{
	struct lb_mutex_stats s;
	lb_mutex_read_stats(lock, &s);
	const struct lb_counter all[] = {
		{ "fast", s.fast },         { "spin_won", s.spin_won },
		{ "spin_gaveup", s.spin_gaveup }, { "sleeps", s.sleeps },
		{ "wakes", s.wakes },       { "handoffs", s.handoffs },
		/* running contenders at each slow-path acquisition (the gauge) */
		{ "acq_running_1", s.acq_running[0] }, { "acq_running_2", s.acq_running[1] },
		{ "acq_running_3plus", s.acq_running[2] },
	};
	return lb_adapt_counters_out(out, max, all, sizeof(all) / sizeof(all[0]));
}
#define LB_MUTEX_OPS_COUNTERS LB_LOCK_F_COUNTERS
#define LB_MUTEX_OPS_COUNTERS_FN mutex_counters
#else
#define LB_MUTEX_OPS_COUNTERS 0
#define LB_MUTEX_OPS_COUNTERS_FN NULL
#endif

/* The thread announces an off-CPU wait it makes while holding locks: the
 * v3.x generations' spinners stop for it (lb_sched_owner_running); the
 * current generation does not ask, its spin is budget-bound. */
static void mutex_offcpu(void *tctx, bool begin)
{
	lb_mutex_ctx_t *me = tctx;
	if (begin)
		lb_sched_block_begin(&me->sched);
	else
		lb_sched_block_end(&me->sched);
}

/* verbs: mutex (lb_mutex_*) or mutex_v3 (lb_mutex_v3_*, mutex_v3.h). */
#define LB_MUTEX_OPS(sym, cli, what, initfn, verbs)                            \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		.name = cli,                                                   \
		.family = "mutex",                                             \
		.summary = what,                                               \
		.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK |             \
			 LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX |             \
			 LB_LOCK_F_PSHARED | LB_LOCK_F_TIMED | LB_MUTEX_OPS_COUNTERS, \
		LB_OPS_OBJECT(lb_mutex_t),                                     \
		LB_OPS_CTX(lb_mutex_ctx_t, mutex),                          \
		.init = initfn,                                                \
		.init_shared = initfn##_shared,                                \
		LB_OPS_EXCL(verbs),                                            \
		.counters = LB_MUTEX_OPS_COUNTERS_FN,                          \
		.describe = mutex_describe,                                    \
		.timedlock = verbs##_timedlock,                                \
		.atfork_child = verbs##_atfork_child,                          \
		.offcpu = mutex_offcpu,                                        \
	};

LB_MUTEX_OPS(mutex, "mutex",
	     "adaptive-spinning mutex (kernel mutex.c port, v4.10+ handoff)", mutex_init_spin,
	     mutex)
LB_MUTEX_OPS(mutex_nospin, "mutex-nospin",
	     "the same mutex with spinning off: contended lockers sleep at once",
	     mutex_init_nospin, mutex)
LB_MUTEX_OPS(mutex_v3_14, "mutex-v3.14",
	     "kernel v3.14 mutex: MCS lock per spin attempt, sleeps on owner change",
	     mutex_init_v3_14, mutex_v3)
LB_MUTEX_OPS(mutex_v3_15, "mutex-v3.15",
	     "kernel v3.15 mutex: cancellable OSQ, sleeps on owner change, resched point",
	     mutex_init_v3_15, mutex_v3)
