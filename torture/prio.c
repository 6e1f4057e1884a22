/* SPDX-License-Identifier: MIT */
/* prio.c - nice values, SCHED_FIFO and rt_boost for the torture workers. */
#include "prio.h"
#include "out.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int lb_torture_set_nice(int nice)
{
	/* Linux: PRIO_PROCESS with a thread id sets that thread's nice. */
	return setpriority(PRIO_PROCESS, (id_t)gettid(), nice) ? errno : 0;
}

int lb_torture_set_normal(int nice)
{
	struct sched_param sp = { .sched_priority = 0 };
	int err = pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	if (!err)
		err = lb_torture_set_nice(nice);
	return err;
}

int lb_torture_set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

/* Tell the lock our new base priority (PI locks), for every context we use. */
static void tell_lock(struct lb_torture_thread *t, int prio)
{
	const struct lb_lock_ops *ops = t->run->ops;
	if (!ops->thread_set_prio)
		return;
	ops->thread_set_prio(t->tctx[0], prio);
	for (int k = 1; k < t->ntctx; k++)
		if (t->tctx[k] && t->tctx[k] != t->tctx[0])
			ops->thread_set_prio(t->tctx[k], prio);
}

static void warn_once(struct lb_torture_run *run, _Atomic bool *flag, const char *what, int err)
{
	/* exchange: exactly one thread prints; relaxed, nothing else is published. */
	if (!atomic_exchange_explicit(flag, true, memory_order_relaxed))
		lb_torture_printf("%s%s %s: SCHED_FIFO not permitted (%s); skipped\n", run->cfg.type,
				  LB_TORTURE_FLAG, what, strerror(err));
}

bool lb_torture_fifo_allowed(const struct lb_torture_run *run)
{
	return (run->ops->flags & (LB_LOCK_F_SLEEPS | LB_LOCK_F_PI)) || run->cfg.rt_spinners;
}

void lb_torture_writer_sched_init(struct lb_torture_thread *t)
{
	struct lb_torture_run *run = t->run;
	if (run->cfg.writer_fifo && lb_torture_fifo_allowed(run)) {
		int err = lb_torture_set_fifo(LB_TORTURE_FIFO_PRIO);
		if (!err) {
			t->rt = true;
			tell_lock(t, LB_TORTURE_FIFO_PRIO);
			return;
		}
		warn_once(run, &run->warned_fifo, "writer_fifo", err);
	}
	lb_torture_set_nice(LB_TORTURE_MAX_NICE);
	t->rt = false;
}

static bool boost_applies(const struct lb_torture_run *run)
{
	int rb = run->cfg.rt_boost;
	if (!lb_torture_fifo_allowed(run))
		return false;
	if (rb == 2)
		return true;
	return rb == 1 && (run->ops->flags & LB_LOCK_F_PI);
}

void lb_torture_rt_boost(struct lb_torture_thread *t, bool reset)
{
	struct lb_torture_run *run = t->run;
	uint64_t w = run->cfg.nwriters_stress > 0 ? (uint64_t)run->cfg.nwriters_stress : 1;
	uint64_t factor = (uint64_t)run->cfg.rt_boost_factor;

	if (!boost_applies(run))
		return;
	if (!t->rt) {
		if (reset || atomic_load_explicit(&run->boost_disabled, memory_order_relaxed))
			return;
		if (lb_torture_random(&t->rng) % (w * factor))
			return; /* the common case: stay as we are */
		int err = lb_torture_set_fifo(LB_TORTURE_FIFO_PRIO);
		if (err) {
			atomic_store_explicit(&run->boost_disabled, true, memory_order_relaxed);
			warn_once(run, &run->warned_boost, "rt_boost", err);
			return;
		}
		t->rt = true;
		tell_lock(t, LB_TORTURE_FIFO_PRIO);
	} else {
		if (!reset && lb_torture_random(&t->rng) % (w * factor * 2))
			return;
		lb_torture_set_normal(0);
		t->rt = false;
		tell_lock(t, 0);
	}
}
