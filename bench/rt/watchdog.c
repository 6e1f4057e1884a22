/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - ends a run that stopped making progress (a deadlock, a lost
 * wake-up, an RT livelock) or that outlived --run-timeout: prints a thread
 * dump on stderr, removes half-written output files and exits with status 1.
 *
 * One thread for the whole command, at the highest SCHED_FIFO priority when
 * that is permitted, so spinning RT threads cannot keep it off a CPU (it is
 * not pinned: it runs wherever a CPU is free).  It polls every 50 ms; the
 * run in progress publishes its task table through arm/disarm; progress is
 * the sum of the receivers' message counts (the RT threads' cycles when the
 * run has no load), each written by its own thread only, so the load pays
 * no shared counter per message.  With -P it kills the run's child processes
 * before it exits.  This is the one module-level state of the rt workload: the
 * watchdog must see whatever run is current.
 */
#include "rt.h"
#include "lb_cli.h"
#include "slub.h"
#include "lb_outfile.h"
#include "lb_time.h"

#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RLX memory_order_relaxed
#define DUMP_MAX_LINES 24

static struct {
	pthread_mutex_t mu;          /* guards the fields below */
	struct lb_rt_task_info *const *tasks;
	unsigned int ntasks;
	_Atomic int *children;       /* -P: the run's processes (0: none in that slot) */
	unsigned int nchildren;
	const char *lock;
	uint64_t armed_at, last_progress_at, last_progress;
	uint64_t watchdog_ns, run_timeout_ns;
	uint64_t inflight_sum, inflight_samples, inflight_max; /* this run's */
} wd = { .mu = PTHREAD_MUTEX_INITIALIZER };

static _Atomic bool fired; /* the watchdog is ending the command */

static const char *state_name(int s)
{
	static const char *const names[] = { "start", "run", "write", "read", "sleep",
					     "alloc", "done", "hung(inject)" };
	return s >= 0 && s <= LB_RT_ST_HUNG ? names[s] : "?";
}

static const char *role_name(enum lb_rt_task_role r)
{
	return r == LB_RT_SENDER ? "sender" : r == LB_RT_RECEIVER ? "receiver" : "rt";
}

static const char *lock_state_name(const struct lb_rt_task_info *t)
{
	int s = t->slab ? atomic_load_explicit(&t->slab->lock_state, RLX) : 0;
	return s == LB_SLUB_LS_HOLDS ? "HOLDS" : s != LB_SLUB_LS_OUT ? "waiting" : "-";
}

/* The dump; wd.mu held.  Tasks still active first, up to DUMP_MAX_LINES. */
static void dump(const char *why)
{
	unsigned int count[3][LB_RT_ST_HUNG + 1] = { { 0 } }, holders = 0, waiters = 0, shown = 0;
	fprintf(stderr, "\nlockbench: rt: WATCHDOG: %s (list_lock '%s'); thread dump:\n", why,
		wd.lock ? wd.lock : "?");
	for (unsigned int i = 0; i < wd.ntasks; i++) {
		const struct lb_rt_task_info *t = wd.tasks[i];
		int st = atomic_load_explicit(&t->state, RLX);
		if (st >= 0 && st <= LB_RT_ST_HUNG)
			count[t->role][st]++;
		const char *ls = lock_state_name(t);
		holders += !strcmp(ls, "HOLDS");
		waiters += !strcmp(ls, "waiting");
	}
	/* Lock holders and waiters first, then anything not done. */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned int i = 0; i < wd.ntasks && shown < DUMP_MAX_LINES; i++) {
			const struct lb_rt_task_info *t = wd.tasks[i];
			int st = atomic_load_explicit(&t->state, RLX);
			bool in_lock = strcmp(lock_state_name(t), "-") != 0;
			if ((pass == 0) != in_lock || st == LB_RT_ST_DONE)
				continue;
			fprintf(stderr, "  %-8s g%u/%-4u tid %6d  state %-12s list_lock %-7s done %llu",
				role_name(t->role), t->group, t->index,
				atomic_load_explicit(&t->tid, RLX), state_name(st), lock_state_name(t),
				(unsigned long long)atomic_load_explicit(&t->done, RLX));
			if (t->total)
				fprintf(stderr, "/%llu", (unsigned long long)t->total);
			fputc('\n', stderr);
			shown++;
		}
	fprintf(stderr, "  (%u tasks; list_lock held by %u, waited for by %u)\n", wd.ntasks, holders,
		waiters);
	for (int r = 0; r < 3; r++)
		for (int s = 0; s <= LB_RT_ST_HUNG; s++)
			if (count[r][s])
				fprintf(stderr, "  %u %s task(s) in state %s\n", count[r][s],
					role_name((enum lb_rt_task_role)r), state_name(s));
}

/* The run's progress: the receivers' messages, or with no load the RT
 * threads' cycles (with a load they keep cycling through a hang).  wd.mu held. */
static uint64_t progress_now(void)
{
	uint64_t received = 0, cycles = 0;
	bool load = false;
	for (unsigned int i = 0; i < wd.ntasks; i++) {
		const struct lb_rt_task_info *t = wd.tasks[i];
		uint64_t d = atomic_load_explicit(&t->done, RLX);
		if (t->role == LB_RT_RECEIVER) {
			load = true;
			received += d;
		} else if (t->role == LB_RT_RT) {
			cycles += d;
		}
	}
	return load ? received : cycles;
}

/*
 * -P: before the children die, this process's RT threads are parked in a
 * signal handler that never returns.  A child killed while it holds (or is
 * handed) the list_lock leaves a PI futex to its waiter with the owner dead:
 * an RT thread of ours would then return from lock() and fail in unlock()
 * (glibc: EPERM, a fatal error), or spin at SCHED_FIFO on a ticket that is
 * never served.  Parked, they run no more user code; _exit ends them.
 */
#define LB_RT_PARK_SIGNAL SIGUSR2
#define LB_RT_PARK_WAIT_NS 1000000000ull /* how long the parking may take */

static _Atomic unsigned int parked;

static void on_park(int sig)
{
	(void)sig;
	/* Relaxed: the watchdog only counts arrivals. */
	atomic_fetch_add_explicit(&parked, 1, RLX);
	for (;;)
		pause(); /* parked until _exit: no user code of the run after this */
}

/* wd.mu held.  Returns how many RT threads did not park in time. */
static unsigned int park_rt_threads(void)
{
	struct sigaction sa = { .sa_handler = on_park };
	sigemptyset(&sa.sa_mask);
	sigaction(LB_RT_PARK_SIGNAL, &sa, NULL);
	unsigned int sent = 0;
	pid_t me = getpid();
	for (unsigned int i = 0; i < wd.ntasks; i++) {
		const struct lb_rt_task_info *t = wd.tasks[i];
		int tid = atomic_load_explicit(&t->tid, RLX);
		if (t->role == LB_RT_RT && tid > 0 &&
		    syscall(SYS_tgkill, me, tid, LB_RT_PARK_SIGNAL) == 0)
			sent++;
	}
	/* Polling with sleeps: the watchdog is FIFO 99 and must leave the
	 * CPUs to the threads it waits for. */
	uint64_t until = lb_now_ns() + LB_RT_PARK_WAIT_NS;
	while (atomic_load_explicit(&parked, RLX) < sent && lb_now_ns() < until) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	unsigned int got = atomic_load_explicit(&parked, RLX);
	return got < sent ? sent - got : 0;
}

bool lb_rt_watchdog_fired(void)
{
	return atomic_load_explicit(&fired, memory_order_acquire);
}

/* -P: nothing of the run may outlive the command.  wd.mu held. */
static void kill_children(void)
{
	unsigned int left = 0;
	/* Relaxed: a slot is 0 once the run reaped that child (no kill then). */
	for (unsigned int i = 0; i < wd.nchildren; i++) {
		int pid = atomic_load_explicit(&wd.children[i], RLX);
		if (pid > 0 && kill(pid, SIGKILL) == 0)
			left++; /* running, or ended and not yet reaped */
	}
	for (unsigned int i = 0; i < wd.nchildren; i++) {
		int pid = atomic_load_explicit(&wd.children[i], RLX);
		if (pid > 0)
			waitpid(pid, NULL, 0); /* reaped here or by the run: none left behind */
	}
	if (wd.nchildren)
		fprintf(stderr, "  (%u task process(es) left, killed and reaped)\n", left);
}

/* The dump, then (-P) the RT threads parked and the children killed and
 * reaped, no half-written result left, exit 1.  wd.mu held. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void end_command(const char *why)
{
	/* Release: the run's reaper reads it before it calls a child's death
	 * a failure of its own. */
	atomic_store_explicit(&fired, true, memory_order_release);
	dump(why);
	if (wd.nchildren) {
		unsigned int late = park_rt_threads();
		if (late)
			fprintf(stderr, "  (%u RT thread(s) not parked within 1 s)\n", late);
	}
	kill_children();
	lb_outfile_unlink_pending(); /* no half-written results */
	fflush(stdout);
	fflush(stderr);
	_exit(1);
}

void lb_rt_watchdog_end_command(const char *why)
{
	pthread_mutex_lock(&wd.mu);
	end_command(why);
}

/* One sample of the messages in flight: the senders' counts less the
 * receivers' (a receiver may count a message before its sender does:
 * clamped at 0), taken while the load is live.  wd.mu held. */
static void inflight_sample(void)
{
	uint64_t sent = 0, received = 0, total = 0;
	for (unsigned int i = 0; i < wd.ntasks; i++) {
		const struct lb_rt_task_info *t = wd.tasks[i];
		uint64_t d = atomic_load_explicit(&t->done, RLX);
		if (t->role == LB_RT_SENDER) {
			sent += d;
		} else if (t->role == LB_RT_RECEIVER) {
			received += d;
			total += t->total;
		}
	}
	if (!sent || received >= total)
		return;
	uint64_t n = sent > received ? sent - received : 0;
	wd.inflight_sum += n;
	wd.inflight_samples++;
	if (n > wd.inflight_max)
		wd.inflight_max = n;
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec ts = { 0, 50 * 1000000 };
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&wd.mu);
		if (wd.tasks) {
			uint64_t now = lb_now_ns();
			uint64_t p = progress_now();
			char why[160] = "";
			inflight_sample();
			if (p != wd.last_progress) {
				wd.last_progress = p;
				wd.last_progress_at = now;
			} else if (now - wd.last_progress_at > wd.watchdog_ns) {
				snprintf(why, sizeof(why),
					 "no progress for %.1f s (deadlock, lost wake-up or livelock?)",
					 (double)(now - wd.last_progress_at) / LB_NS_PER_S);
			}
			if (!*why && now - wd.armed_at > wd.run_timeout_ns)
				snprintf(why, sizeof(why), "the run took longer than --run-timeout %.1f s",
					 (double)wd.run_timeout_ns / LB_NS_PER_S);
			if (*why)
				end_command(why);
		}
		pthread_mutex_unlock(&wd.mu);
	}
	return NULL;
}

int lb_rt_watchdog_start(const struct lb_rt_config *cfg, bool fifo)
{
	pthread_t tid;
	pthread_attr_t attr;
	pthread_mutexattr_t ma;
	/* Priority inheritance: the FIFO watchdog never waits behind a
	 * preempted normal-priority arm/disarm. */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&wd.mu, &ma);
	pthread_mutexattr_destroy(&ma);
	wd.watchdog_ns = cfg->watchdog_ns;
	wd.run_timeout_ns = cfg->run_timeout_ns;
	pthread_attr_init(&attr);
	if (fifo) {
		struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	int err = pthread_create(&tid, &attr, watchdog_main, NULL);
	if (err && fifo) {
		pthread_attr_destroy(&attr);
		pthread_attr_init(&attr);
		err = pthread_create(&tid, &attr, watchdog_main, NULL);
	}
	pthread_attr_destroy(&attr);
	if (!err)
		pthread_detach(tid);
	return err;
}

void lb_rt_watchdog_arm(struct lb_rt_task_info *const *tasks, unsigned int ntasks,
			const char *lock)
{
	pthread_mutex_lock(&wd.mu);
	wd.tasks = tasks;
	wd.ntasks = ntasks;
	wd.lock = lock;
	wd.armed_at = wd.last_progress_at = lb_now_ns();
	wd.inflight_sum = wd.inflight_samples = wd.inflight_max = 0;
	wd.last_progress = progress_now();
	pthread_mutex_unlock(&wd.mu);
}

void lb_rt_watchdog_children(_Atomic int *pids, unsigned int n)
{
	pthread_mutex_lock(&wd.mu);
	wd.children = pids;
	wd.nchildren = n;
	pthread_mutex_unlock(&wd.mu);
}

void lb_rt_watchdog_disarm(struct lb_rt_inflight *inflight)
{
	pthread_mutex_lock(&wd.mu);
	if (inflight) {
		inflight->samples = wd.inflight_samples;
		inflight->max = wd.inflight_max;
		inflight->mean = wd.inflight_samples ? (double)wd.inflight_sum /
							     (double)wd.inflight_samples
						     : 0;
	}
	wd.tasks = NULL;
	wd.ntasks = 0;
	wd.children = NULL;
	wd.nchildren = 0;
	pthread_mutex_unlock(&wd.mu);
}


void lb_rt_watchdog_check_floor(const struct lb_rt_config *cfg)
{
	if (cfg->watchdog_ns < LB_RT_WATCHDOG_MIN_NS)
		lb_usage_error("--watchdog: %.0fms is below the floor of 1s (shorter ones fire on a "
			       "busy machine); accepted: 1s..1h", (double)cfg->watchdog_ns / 1e6);
}
