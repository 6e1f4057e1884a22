/* SPDX-License-Identifier: MIT */
/*
 * test_posix_atfork.c - the pthread_atfork pattern, under the preload (and
 * under plain glibc, which must pass it too).
 *
 * The prepare handler locks M, the parent and child handlers unlock it
 * (the documented way to fork with a consistent M).  While the main thread
 * forks, CONTENDERS other threads hammer M, so at fork time M has waiters
 * queued, spinners and perhaps a hand-over in flight.  In the child only the
 * forking thread exists: it must be able to use M, and so must new threads
 * it creates (whose records may be the ones the vanished threads had).
 * Each child checks mutual exclusion and the final count, and exits 0; a
 * child that hangs -- makes no progress for CHILD_STALL_S, counted through
 * a shared page -- is killed (the test fails), one that aborts fails too.
 * A slow child is not a hung one: with a FIFO spinlock and more threads
 * than CPUs each hand-over to a preempted waiter costs a time slice, and a
 * child can take seconds while it makes progress all along.
 * POSIX_ATFORK_FORKS overrides the number of forks.
 */
#include "tap.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONTENDERS 3
#define CHILD_THREADS 4
/* POSIX_ATFORK_SPIN_ONLY=1 (a spin-only lock such as ticket): at most one
 * contender a CPU but one, and one child thread a CPU, so spinners never
 * outnumber the CPUs (a FIFO spinlock then hands over at time-slice pace:
 * one run of 40 forks took 79 s instead of 1.3 s). */
static int contenders = CONTENDERS, child_threads = CHILD_THREADS;
#define CHILD_ITERS 2000
#define CHILD_STALL_S 5   /* no progress this long: hung */
#define CHILD_TIMEOUT_S 120 /* the child's own safety net (alarm) */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
/* A second mutex held by a contender across the fork: it stays held in the
 * child (as with glibc), and must not be mistaken for one a new child
 * thread holds. */
static pthread_mutex_t held_elsewhere = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static _Atomic int stop;
static _Atomic int inside;
static _Atomic long overlaps;

static void prepare(void) { pthread_mutex_lock(&m); }
static void parent(void) { pthread_mutex_unlock(&m); }
static void child(void) { pthread_mutex_unlock(&m); }

static void critical(void)
{
	if (atomic_fetch_add_explicit(&inside, 1, memory_order_relaxed))
		atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
	counter++;
	atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
}

static void *contender(void *arg)
{
	long id = (long)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (id == 0) {
			/* Hold the other mutex over a short sleep now and then. */
			pthread_mutex_lock(&held_elsewhere);
			pthread_mutex_lock(&m);
			critical();
			pthread_mutex_unlock(&m);
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
			pthread_mutex_unlock(&held_elsewhere);
		} else {
			pthread_mutex_lock(&m);
			critical();
			pthread_mutex_unlock(&m);
		}
	}
	return NULL;
}

/* The children's progress, on a page shared with the parent (MAP_SHARED
 * before the forks): one increment per critical section. */
static _Atomic long *child_progress;

static void *child_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILD_ITERS; i++) {
		pthread_mutex_lock(&m);
		critical();
		pthread_mutex_unlock(&m);
		atomic_fetch_add_explicit(child_progress, 1, memory_order_relaxed);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the child; kill it once it made no progress for CHILD_STALL_S.
 * 1 when it had to be killed as hung, 0 when it ended (status in *st). */
static int wait_or_kill_stalled(pid_t pid, int *st)
{
	long seen = atomic_load(child_progress);
	double since = now_s();
	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			*st = 0;
			return 0;
		}
		long now_seen = atomic_load(child_progress);
		if (now_seen != seen) {
			seen = now_seen;
			since = now_s();
		} else if (now_s() - since > CHILD_STALL_S) {
			kill(pid, SIGKILL);
			while (waitpid(pid, st, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
}

/* In the child: M usable by us and by new threads; 0 = all good. */
static int child_main(void)
{
	alarm(CHILD_TIMEOUT_S);
	pthread_mutex_lock(&m);
	long base = counter;
	pthread_mutex_unlock(&m);
	atomic_store(&overlaps, 0);
	pthread_t t[CHILD_THREADS];
	for (int i = 0; i < child_threads; i++)
		if (pthread_create(&t[i], NULL, child_worker, NULL))
			return 3;
	for (int i = 0; i < child_threads; i++)
		pthread_join(t[i], NULL);
	if (counter != base + (long)child_threads * CHILD_ITERS)
		return 4;
	if (atomic_load(&overlaps))
		return 5;
	/* The mutex a vanished thread may hold: trylock must not crash, and
	 * must not claim we hold it already. */
	int rc = pthread_mutex_trylock(&held_elsewhere);
	if (rc == 0)
		pthread_mutex_unlock(&held_elsewhere);
	else if (rc != EBUSY)
		return 6;
	return 0;
}

/*
 * A timed lock waiting on a mutex the forking thread holds: in the child
 * that waiter is gone, and whatever it left in the mutex (a queue entry,
 * the preload's gate for locks without a timed lock of their own) must not
 * keep the child out.  0 = the child could unlock and re-lock it.
 */
static pthread_mutex_t timed_m = PTHREAD_MUTEX_INITIALIZER;

static void *timed_waiter(void *arg)
{
	(void)arg;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	if (pthread_mutex_timedlock(&timed_m, &dl) == 0)
		pthread_mutex_unlock(&timed_m);
	return NULL;
}

static int fork_with_timed_waiter(void)
{
	pthread_mutex_lock(&timed_m);
	pthread_t t;
	pthread_create(&t, NULL, timed_waiter, NULL);
	struct timespec ts = { 0, 50000000 }; /* it has waited well over 1 ms */
	nanosleep(&ts, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(CHILD_TIMEOUT_S);
		pthread_mutex_unlock(&timed_m);
		pthread_mutex_lock(&timed_m);
		pthread_mutex_unlock(&timed_m);
		_exit(0);
	}
	pthread_mutex_unlock(&timed_m);
	pthread_join(t, NULL);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	int forks = 40;
	const char *s = getenv("POSIX_ATFORK_FORKS");
	if (s && atoi(s) > 0)
		forks = atoi(s);
	tap_plan(4);
	child_progress = mmap(NULL, sizeof(*child_progress), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (child_progress == MAP_FAILED)
		return 99;
	int tw = fork_with_timed_waiter();
	tap_ok(tw == 0, "a timed waiter at fork time leaves the mutex usable in the child (%d)", tw);
	if (pthread_atfork(prepare, parent, child)) {
		tap_ok(false, "pthread_atfork");
		return 1;
	}
	const char *spin = getenv("POSIX_ATFORK_SPIN_ONLY");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (spin && !strcmp(spin, "1") && ncpu > 0) {
		contenders = ncpu - 1 < 1 ? 1 : ncpu - 1 < CONTENDERS ? (int)ncpu - 1 : CONTENDERS;
		child_threads = ncpu < CHILD_THREADS ? (int)ncpu : CHILD_THREADS;
	}
	pthread_t t[CONTENDERS];
	for (long i = 0; i < contenders; i++)
		pthread_create(&t[i], NULL, contender, (void *)i);
	int bad = 0, hung = 0, aborted = 0;
	for (int f = 0; f < forks; f++) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
		pid_t pid = fork();
		if (pid < 0) {
			bad++;
			continue;
		}
		if (pid == 0)
			_exit(child_main());
		int st;
		if (wait_or_kill_stalled(pid, &st) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)) {
			hung++;
		} else if (WIFSIGNALED(st)) {
			aborted++;
			tap_diag("fork %d: child killed by signal %d", f, WTERMSIG(st));
		} else if (WEXITSTATUS(st) != 0) {
			bad++;
			tap_diag("fork %d: child exit %d", f, WEXITSTATUS(st));
		}
		if (hung || aborted)
			break; /* one is enough: do not wait for every alarm */
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < contenders; i++)
		pthread_join(t[i], NULL);
	tap_ok(hung == 0, "no child hung on M (%d of %d forks)", hung, forks);
	tap_ok(aborted == 0, "no child crashed or aborted (%d of %d forks)", aborted, forks);
	tap_ok(bad == 0 && atomic_load(&overlaps) == 0,
	       "children counted exactly, parent kept mutual exclusion (%d bad)", bad);
	return tap_failed ? 1 : 0;
}
