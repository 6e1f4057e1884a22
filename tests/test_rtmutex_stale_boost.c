/* SPDX-License-Identifier: MIT */
/*
 * test_rtmutex_stale_boost.c - a preempted applier must not leave a stale
 * boost in the kernel while a thread below the waiter runs (issue 39, item 3).
 *
 * Scripted schedule, every thread pinned to one CPU, so SCHED_FIFO decides
 * who runs and the order is exact:
 *   O (SCHED_OTHER) holds lock M and sleeps;
 *   X (FIFO 10) blocks on M, boosts O to 10 and, in its apply step, reads
 *   10; right before X's sched_setscheduler(O, 10), X wakes H;
 *   H (FIFO 50) preempts X, blocks on M, boosts O to 50 and applies it;
 *   X's stale sched_setscheduler(O, 10) lands after H's;
 *   right after it, before X re-reads O's priority, X wakes a hog (FIFO 30).
 * The hog stands for any thread between X and H: if X still runs at 10 it
 * preempts X there and, for as long as it runs, O runs at 10 -- behind the
 * hog -- while H waits on O.  The kernel's rt_mutex_setprio() cannot apply
 * a stale value.  The hog samples O's kernel priority once and sleeps; the
 * verdict is that it saw O at H's priority (50) or above.
 *
 * "Right before/after X's sched_setscheduler()" is made exact by interposing
 * the call: this file defines sched_setscheduler as a wrapper before it
 * includes rtmutex.h (as tests/oversub/test_rtmutex_applier.c does).  Nothing
 * in the lock is changed for the test.
 *
 * Safety: no thread spins for long (the hog samples and sleeps);
 * RLIMIT_RTTIME kills an RT thread that runs 2 s without sleeping; alarm()
 * ends a hung test.  Needs SCHED_FIFO up to 50: otherwise the TAP plan is
 * a skip with one line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>

static int lb_test_sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp);
#define sched_setscheduler lb_test_sched_setscheduler
#include "rtmutex.h"
#undef sched_setscheduler
#include "tap.h"
#include "test_sync.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#define PRIO_X 10
#define PRIO_HOG 30
#define PRIO_H 50
#define SCRIPT_WAIT_US 2000000 /* bound on waiting for a scripted step */

static lb_rtmutex_t lock_m;
static struct lb_rtmutex_task task_o, task_x, task_h;
static _Atomic uint32_t o_holds, o_release, x_go, h_go, hog_go, hog_done, x_done, h_done;
static _Atomic pid_t trigger_tid, target_tid; /* X's apply of 10 to O, once */
static _Atomic int eff_seen_by_x = -1;  /* O's eff_prio after H ran (scripted: 50) */
static _Atomic int hog_saw = -1;        /* O's kernel FIFO priority while the hog ran */
static int cpu = -1;
/* The words above hand one scripted step's result to the next thread:
 * stores are release, loads acquire (post()/wait_eq() order them too). */

/* O's kernel priority in logical terms: its FIFO priority, or 0. */
static int kernel_prio(pid_t tid)
{
	struct sched_param sp;
	int pol = sched_getscheduler(tid);
	if (pol < 0 || sched_getparam(tid, &sp) != 0)
		return -1;
	return (pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ? sp.sched_priority : 0;
}

/* The interposed sched_setscheduler.  On X's apply of PRIO_X to O (once):
 * wake H before the real call (H preempts X: its boost to 50 lands first),
 * and the hog after it (the hog preempts X if X runs below PRIO_HOG). */
static int lb_test_sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp)
{
	pid_t me = (pid_t)lb_gettid();
	bool armed = me == lb_load_acquire(&trigger_tid) && pid == lb_load_acquire(&target_tid) &&
		     policy == SCHED_FIFO && sp->sched_priority == PRIO_X;
	if (armed) {
		lb_store_release(&trigger_tid, 0);
		post(&h_go, 1);
		/* Poll, bounded: H runs first on our CPU (higher priority), so
		 * O's eff is normally 50 at the first look; a failure is
		 * reported by the verdict, not waited for. */
		for (int i = 0; i < SCRIPT_WAIT_US / 100 && lb_rtmutex_task_eff_prio(&task_o) != PRIO_H;
		     i++)
			usleep(100);
		lb_store_release(&eff_seen_by_x, lb_rtmutex_task_eff_prio(&task_o));
	}
	int ret = sched_setscheduler(pid, policy, sp);
	if (armed)
		post(&hog_go, 1);
	return ret;
}

static void *o_main(void *arg)
{
	(void)arg;
	lb_rtmutex_ctx_init(&task_o, LB_RTMUTEX_TASK_REAL);
	lb_store_release(&target_tid, task_o.tid);
	lb_rtmutex_lock(&lock_m, &task_o);
	post(&o_holds, 1);
	wait_eq(&o_release, 1);
	lb_rtmutex_unlock(&lock_m, &task_o);
	/* Stay alive until X and H are done: their applies target our tid. */
	wait_eq(&x_done, 1);
	wait_eq(&h_done, 1);
	return NULL;
}

static void *x_main(void *arg)
{
	(void)arg;
	lb_rtmutex_ctx_init(&task_x, LB_RTMUTEX_TASK_REAL); /* no SPIN: waits sleep */
	wait_eq(&x_go, 1);
	lb_store_release(&trigger_tid, task_x.tid);
	lb_rtmutex_lock(&lock_m, &task_x);
	lb_rtmutex_unlock(&lock_m, &task_x);
	post(&x_done, 1);
	return NULL;
}

static void *h_main(void *arg)
{
	(void)arg;
	lb_rtmutex_ctx_init(&task_h, LB_RTMUTEX_TASK_REAL);
	wait_eq(&h_go, 1);
	lb_rtmutex_lock(&lock_m, &task_h);
	lb_rtmutex_unlock(&lock_m, &task_h);
	post(&h_done, 1);
	return NULL;
}

static void *hog_main(void *arg)
{
	(void)arg;
	wait_eq(&hog_go, 1);
	/* The hog is running: what does O run at now? */
	lb_store_release(&hog_saw, kernel_prio(lb_load_acquire(&target_tid)));
	post(&hog_done, 1);
	return NULL;
}

static int spawn_other(pthread_t *th, void *(*fn)(void *))
{
	pthread_attr_t attr;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	int err = pthread_create(th, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

static void *probe_main(void *arg)
{
	return arg;
}

/* Wait, bounded, until both X and H are queued on M and O's kernel
 * priority is H's; returns O's kernel priority then (or at the bound). */
static int settled_prio(bool *queued)
{
	struct lb_rtmutex_task *q[4];
	int prio = -1;
	/* Poll loop, bounded: X and H finish their applies and queue while
	 * we sleep here. */
	for (int i = 0; i < SCRIPT_WAIT_US / 1000; i++) {
		*queued = lb_rtmutex_waiter_tasks(&lock_m, q, 4) == 2;
		prio = kernel_prio(task_o.tid);
		if (*queued && prio == PRIO_H)
			break;
		usleep(1000);
	}
	return prio;
}

int main(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		tap_skip_all("sched_getaffinity failed");
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, &set))
			cpu = c;
	pthread_t probe;
	if (spawn_fifo(&probe, probe_main, NULL, PRIO_H, cpu) != 0)
		tap_skip_all("SCHED_FIFO 50 not permitted (needs root, CAP_SYS_NICE or RLIMIT_RTPRIO)");
	pthread_join(probe, NULL);

	/* Safety nets: an RT thread running 2 s without sleeping is killed
	 * (SIGXCPU), and the whole test ends after 20 s. */
	struct rlimit rt = { .rlim_cur = 2000000, .rlim_max = 2000000 };
	(void)setrlimit(RLIMIT_RTTIME, &rt);
	alarm(20);

	lb_rtmutex_init(&lock_m, NULL);
	pthread_t o, x, h, hog;
	if (spawn_other(&o, o_main) || spawn_fifo(&x, x_main, NULL, PRIO_X, cpu) ||
	    spawn_fifo(&h, h_main, NULL, PRIO_H, cpu) || spawn_fifo(&hog, hog_main, NULL, PRIO_HOG, cpu))
		tap_skip_all("could not start the SCHED_FIFO threads");
	wait_eq(&o_holds, 1);
	post(&x_go, 1);
	wait_eq(&hog_done, 1);
	bool queued = false;
	int settled = settled_prio(&queued);

	tap_plan(5);
	tap_ok(lb_load_acquire(&trigger_tid) == 0, "X applied O's boost to %d (the scripted apply ran)",
	       PRIO_X);
	tap_ok(lb_load_acquire(&eff_seen_by_x) == PRIO_H,
	       "H boosted O to %d between X's read and X's apply (O's eff %d)", PRIO_H,
	       lb_load_acquire(&eff_seen_by_x));
	tap_ok(lb_load_acquire(&hog_saw) >= PRIO_H,
	       "while the FIFO-%d hog ran, O ran at FIFO %d (needs >= %d: no stale boost applied)",
	       PRIO_HOG, lb_load_acquire(&hog_saw), PRIO_H);
	tap_ok(queued && settled == PRIO_H, "with X and H queued, O settles at FIFO %d (%d)", PRIO_H,
	       settled);
	post(&o_release, 1);
	pthread_join(o, NULL);
	pthread_join(x, NULL);
	pthread_join(h, NULL);
	pthread_join(hog, NULL);
	tap_ok(lb_load_acquire(&task_o.real_errors) == 0, "no refused boost of O (%llu)",
	       (unsigned long long)lb_load_acquire(&task_o.real_errors));
	return tap_failed ? 1 : 0;
}
