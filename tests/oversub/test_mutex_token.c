/* SPDX-License-Identifier: MIT */
/*
 * test_mutex_token.c - a lost WOKEN token must not silence every later
 * unlock of lb_mutex (issue 14 item 3).
 *
 * Scenario: W sleeps on the mutex (nospin, so it queues at once).  U
 * unlocks: its releasing CAS sets WOKEN and hands W the token, and then U
 * is "preempted" before its FUTEX_WAKE -- made exact by interposing the
 * header's lb_futex_wake_scoped: on U's thread the wrapper first blocks for up to
 * STALL_NS.  Meanwhile V locks and unlocks in a loop.  Every one of V's
 * unlocks sees WAITERS|WOKEN and, trusting the token, wakes nobody.
 *
 * Verdict: W gets the lock well before U's stall ends (W's wait <
 * STALL_NS / 4): some later unlock notices the stale token and wakes W.
 * On fadcfce W waits for the whole stall.  Bounded: the stall ends after
 * STALL_NS whatever happens; alarm() ends a hung test.  TAP on stdout.
 */
#include "lb_futex.h"
static long lb_test_futex_wake(_Atomic uint32_t *uaddr, int n, int scope);
#define lb_futex_wake_scoped lb_test_futex_wake
#include "mutex.h"
#undef lb_futex_wake_scoped
#include "../tap.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>

#define STALL_NS 1000000000ull /* U's "preemption": 1 s */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static lb_mutex_t *m;
static lb_mutex_ctx_t *rec_u, *rec_w, *rec_v;
static _Atomic uint32_t u_holds, stalled, release_u, w_done;
static _Atomic uint32_t armed_tid;
static uint64_t w_wait_ns;

/* The interposed wake: on U's thread (once), stall before the real wake. */
static long lb_test_futex_wake(_Atomic uint32_t *uaddr, int n, int scope)
{
	uint32_t want = atomic_load(&armed_tid);
	if (want && want == lb_gettid()) {
		atomic_store(&armed_tid, 0);
		atomic_store(&stalled, 1);
		struct timespec ts = { .tv_sec = (time_t)(STALL_NS / 1000000000ull),
				       .tv_nsec = (long)(STALL_NS % 1000000000ull) };
		/* The stall: until main releases us or STALL_NS passes. */
		lb_futex_wait(&release_u, 0, &ts);
	}
	return lb_futex_wake_scoped(uaddr, n, scope);
}

static void post(_Atomic uint32_t *w)
{
	atomic_store(w, 1);
	lb_futex_wake(w, INT_MAX);
}

static void *u_main(void *arg)
{
	(void)arg;
	lb_mutex_lock(m, rec_u);
	post(&u_holds);
	/* Wait (bounded) until W sleeps in FUTEX_WAIT: only then does our
	 * unlock owe the wake that we are about to lose. */
	for (int i = 0; i < 1000 && atomic_load(&rec_w->waiter.state) != LB_MUTEX__SLEEPING; i++)
		usleep(1000);
	usleep(5000);
	atomic_store(&armed_tid, lb_gettid());
	lb_mutex_unlock(m, rec_u);
	return NULL;
}

static void *w_main(void *arg)
{
	(void)arg;
	/* Wait for U to hold the lock (acquire pairs with post's store). */
	while (!atomic_load(&u_holds))
		lb_futex_wait(&u_holds, 0, NULL);
	uint64_t t0 = now_ns();
	lb_mutex_lock(m, rec_w);
	w_wait_ns = now_ns() - t0;
	lb_mutex_unlock(m, rec_w);
	post(&w_done);
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "Bail out! test_mutex_token: time limit hit\n";
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(20);
	m = aligned_alloc(_Alignof(lb_mutex_t), sizeof(*m));
	rec_u = aligned_alloc(_Alignof(lb_mutex_ctx_t), sizeof(*rec_u));
	rec_w = aligned_alloc(_Alignof(lb_mutex_ctx_t), sizeof(*rec_w));
	rec_v = aligned_alloc(_Alignof(lb_mutex_ctx_t), sizeof(*rec_v));
	if (!m || !rec_u || !rec_w || !rec_v)
		return 1;
	struct lb_mutex_attr attr = { .nospin = true };
	lb_mutex_init(m, &attr);
	lb_mutex_ctx_init(rec_u);
	lb_mutex_ctx_init(rec_w);
	lb_mutex_ctx_init(rec_v);

	pthread_t u, w;
	pthread_create(&u, NULL, u_main, NULL);
	pthread_create(&w, NULL, w_main, NULL);
	/* Wait (bounded) for U to stall inside its unlock. */
	for (int i = 0; i < 2000 && !atomic_load(&stalled); i++)
		usleep(1000);
	bool set_up = atomic_load(&stalled) != 0;
	/* V: lock/unlock until W got in or the stall is over.  Relaxed: a
	 * late view of w_done only adds iterations. */
	uint64_t end = now_ns() + STALL_NS + 100000000ull;
	unsigned long iters = 0;
	while (!atomic_load_explicit(&w_done, memory_order_relaxed) && now_ns() < end) {
		lb_mutex_lock(m, rec_v);
		iters++;
		lb_mutex_unlock(m, rec_v);
	}
	post(&release_u);
	pthread_join(u, NULL);
	pthread_join(w, NULL);

	tap_plan(2);
	tap_ok(set_up, "scenario: U stalled between its releasing CAS and FUTEX_WAKE");
	tap_ok(w_wait_ns < STALL_NS / 4,
	       "W got the lock after %.1f ms while U's wake was stalled for up to %.0f ms "
	       "(%lu lock/unlock pairs by V)",
	       (double)w_wait_ns / 1e6, (double)STALL_NS / 1e6, iters);
	return tap_failed ? 1 : 0;
}
