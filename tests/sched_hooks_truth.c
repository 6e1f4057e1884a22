/* SPDX-License-Identifier: MIT */
/*
 * sched_hooks_truth.c - how often the scheduler hooks' userspace stand-ins
 * (lb_sched_hooks.h) disagree with what the kernel says, measured in a real
 * lock run (issue 33).
 *
 *   sched-hooks-truth [--gen v3.14|v3.15] [--threads N] [--seconds S] [--hogs H]
 *                     [--announced A] [--unannounced U]
 *
 * N threads take one mutex-v3.x lock with a short busy critical section
 * (1 us); 1 in A sections (default 32) also sleeps 100 us announced
 * (lb_sched_block_begin/end, as a workload's I/O wait) and 1 in U (default
 * 0: never) sleeps 100 us unannounced (a wait the lock cannot know of).  H extra threads burn CPU, to make the owner
 * and the spinners lose their CPUs involuntarily.  The hooks wrap the
 * stand-ins; every 16th call of each also reads the truth:
 *
 *  - owner running: the owner thread's state letter in
 *    /proc/self/task/TID/stat, 'R' (running or runnable) against S/D.
 *    The letter cannot tell on-CPU from waiting in a run queue, so the
 *    run-queue part is measured in aggregate: each thread's run_delay in
 *    /proc/self/task/TID/schedstat (ns it waited for a CPU while runnable)
 *    over the run, none of which the stand-in sees.
 *  - need_resched: procs_running in /proc/stat (runnable tasks, this
 *    process's and everyone's) greater than the CPUs this process may use:
 *    some task waits for a CPU.  The kernel's flag is per CPU; this is the
 *    machine-wide approximation the kernel exposes to userspace.
 *
 * TAP: the checks are that the truth could be read and the lock stayed
 * exact; the rates are diagnostics (quoted in doc/mutex.md), never
 * asserted.
 */
#define LB_SCHED_HOOKS_OVERRIDE 1
#include "lb_sched_hooks.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Confusion counts of one hook: [stand-in said yes][truth said yes]. */
static _Atomic(uint64_t) owner_conf[2][2], resched_conf[2][2];
static _Atomic(uint64_t) owner_calls, resched_calls, truth_failures;
static int truth_owner_state(struct lb_sched_task *owner); /* 1 R, 0 S/D, -1 unreadable */
static int truth_resched(void);

static bool lb_sched_owner_running(struct lb_sched_task *owner)
{
	bool said = lb_sched_owner_running_standin(owner);
	if (atomic_fetch_add_explicit(&owner_calls, 1, memory_order_relaxed) % 16 == 0) {
		int truth = truth_owner_state(owner);
		if (truth < 0)
			atomic_fetch_add(&truth_failures, 1);
		else
			atomic_fetch_add(&owner_conf[said][truth], 1);
	}
	return said;
}

static bool lb_sched_need_resched(struct lb_sched_spin *s)
{
	bool said = lb_sched_need_resched_standin(s);
	if (atomic_fetch_add_explicit(&resched_calls, 1, memory_order_relaxed) % 16 == 0) {
		int truth = truth_resched();
		if (truth < 0)
			atomic_fetch_add(&truth_failures, 1);
		else
			atomic_fetch_add(&resched_conf[said][truth], 1);
	}
	return said;
}

#include "mutex.h"
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 64

struct worker {
	lb_mutex_ctx_t rec; /* first: its address is the owner value */
	pthread_t tid;
	_Atomic(pid_t) ktid;
	long ops;
	uint64_t run_delay0, run_delay1; /* schedstat, ns */
};

static struct worker *workers;
static int nworkers, ncpus;
static lb_mutex_t lock;
static _Atomic int stop;
static long shared_count;
static int every_announced = 32, every_unannounced;

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

static int truth_owner_state(struct lb_sched_task *owner)
{
	lb_mutex_ctx_t *rec = (lb_mutex_ctx_t *)((char *)owner - offsetof(lb_mutex_ctx_t, sched));
	struct worker *w = (struct worker *)rec; /* rec is a worker's first member */
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)atomic_load(&w->ktid));
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -1;
	char *p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p || p[1] != ' ')
		return -1;
	return p[2] == 'R';
}

static int truth_resched(void)
{
	char buf[8192];
	if (read_small("/proc/stat", buf, sizeof(buf)) < 0)
		return -1;
	char *p = strstr(buf, "\nprocs_running ");
	if (!p)
		return -1;
	return atoi(p + 15) > ncpus;
}

static uint64_t run_delay_of(pid_t tid)
{
	char path[64], buf[128];
	unsigned long long exec, delay;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	if (read_small(path, buf, sizeof(buf)) < 0 || sscanf(buf, "%llu %llu", &exec, &delay) != 2)
		return 0;
	return delay;
}

static void burn_ns(uint64_t ns)
{
	uint64_t end = lb_sched__now_ns() + ns;
	while (lb_sched__now_ns() < end)
		lb_cpu_relax(); /* a busy critical section; nothing to pair with */
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	atomic_store(&w->ktid, (pid_t)syscall(SYS_gettid));
	w->run_delay0 = run_delay_of(atomic_load(&w->ktid));
	unsigned int seed = (unsigned int)(uintptr_t)w;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		lb_mutex_v3_lock(&lock, &w->rec);
		shared_count++;
		burn_ns(1000);
		if (every_announced && rand_r(&seed) % every_announced == 0) {
			lb_sched_block_begin(&w->rec.sched);
			usleep(100);
			lb_sched_block_end(&w->rec.sched);
		}
		if (every_unannounced && rand_r(&seed) % every_unannounced == 0)
			usleep(100);
		lb_mutex_v3_unlock(&lock, &w->rec);
		w->ops++;
		burn_ns(500);
	}
	w->run_delay1 = run_delay_of(atomic_load(&w->ktid));
	return NULL;
}

static void *hog_main(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		lb_cpu_relax(); /* burns a CPU until told to stop */
	return NULL;
}

static void report(const char *what, _Atomic(uint64_t) conf[2][2], const char *yes)
{
	uint64_t tt = conf[1][1], ff = conf[0][0], tf = conf[1][0], ft = conf[0][1];
	uint64_t n = tt + ff + tf + ft;
	tap_diag("%s: %llu samples; stand-in %s / truth %s: both %llu, neither %llu, "
		 "stand-in only %llu (%.2f %%), truth only %llu (%.2f %%); error rate %.2f %%",
		 what, (unsigned long long)n, yes, yes, (unsigned long long)tt,
		 (unsigned long long)ff, (unsigned long long)tf, n ? 100.0 * tf / n : 0.0,
		 (unsigned long long)ft, n ? 100.0 * ft / n : 0.0,
		 n ? 100.0 * (tf + ft) / n : 0.0);
}

int main(int argc, char **argv)
{
	enum lb_mutex_gen gen = LB_MUTEX_GEN_V3_15;
	int hogs = 0;
	double seconds = 2;
	nworkers = 4;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--gen"))
			gen = !strcmp(argv[i + 1], "v3.14") ? LB_MUTEX_GEN_V3_14 : LB_MUTEX_GEN_V3_15;
		else if (!strcmp(argv[i], "--threads"))
			nworkers = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--hogs"))
			hogs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--announced"))
			every_announced = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--unannounced"))
			every_unannounced = atoi(argv[i + 1]);
	}
	if (nworkers < 1 || nworkers > MAX_THREADS || hogs < 0 || hogs > MAX_THREADS ||
	    seconds <= 0 || every_announced < 0 || every_unannounced < 0) {
		fprintf(stderr, "sched-hooks-truth: --threads 1..64, --hogs 0..64, --seconds > 0, "
			"--announced and --unannounced >= 0\n");
		return 2;
	}
	ncpus = (int)lb_mutex__ncpus();
	lb_mutex_init_gen(&lock, gen, NULL);
	workers = aligned_alloc(LB_CACHELINE, sizeof(*workers) * MAX_THREADS);
	if (!workers)
		return 1;
	memset(workers, 0, sizeof(*workers) * MAX_THREADS);
	pthread_t hog[MAX_THREADS];
	for (int i = 0; i < hogs; i++)
		pthread_create(&hog[i], NULL, hog_main, NULL);
	for (int i = 0; i < nworkers; i++) {
		lb_mutex_ctx_init(&workers[i].rec);
		pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
	}
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&stop, 1);
	long ops = 0;
	uint64_t delay = 0;
	for (int i = 0; i < nworkers; i++) {
		pthread_join(workers[i].tid, NULL);
		ops += workers[i].ops;
		delay += workers[i].run_delay1 - workers[i].run_delay0;
	}
	for (int i = 0; i < hogs; i++)
		pthread_join(hog[i], NULL);

	tap_diag("%s, %d threads, %d hogs, %d CPUs, %.1f s, sleeps 1 in %d announced, 1 in %d "
		 "unannounced (0: none): %ld ops", gen == LB_MUTEX_GEN_V3_14 ? "mutex-v3.14" :
		 "mutex-v3.15", nworkers, hogs, ncpus, seconds, every_announced, every_unannounced,
		 ops);
	report("owner running (stat 'R')", owner_conf, "running");
	report("need_resched (procs_running > CPUs)", resched_conf, "yes");
	tap_diag("run queue: the threads waited %.1f ms for a CPU in %.1f s x %d threads "
		 "(%.2f %% of their time), unseen by the owner-running stand-in",
		 delay / 1e6, seconds, nworkers, 100.0 * (double)delay / (seconds * 1e9 * nworkers));
	tap_ok(ops == shared_count, "the lock stayed exact (%ld ops, count %ld)", ops, shared_count);
	tap_ok(atomic_load(&truth_failures) == 0 &&
		       owner_conf[0][0] + owner_conf[0][1] + owner_conf[1][0] + owner_conf[1][1] > 0,
	       "the kernel's truth was readable at every sample (%llu failures)",
	       (unsigned long long)atomic_load(&truth_failures));
	free(workers);
	return tap_done();
}
