/* SPDX-License-Identifier: MIT */
/*
 * test_mixed_tu.c - a lock shared by translation units built with different
 * standards and configuration macros (item 3 of the embedding issue):
 *  1. every lock and context type has the same size and alignment in the
 *     strict C11, plain C11 and gnu11+counters+probes+sub-word builds;
 *  2. locks allocated with the plain build's sizes and initialised by it
 *     are taken by threads of all three builds at once; the totals prove
 *     mutual exclusion, and a lost wake-up between differently built
 *     waiters and wakers shows as a timeout (SIGALRM: not ok, exit 1).
 */
#include "mixed_tu.h"
#include "tap.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * One thread per variant, few iterations: FIFO spinlocks with more threads
 * than CPUs hand over at the scheduler's pace on a loaded machine.
 */
#define ITERS 3000u
#define MAXTHREADS 4 /* strict, plain, gnu, and cxx when a C++ compiler was found */

static const char *const type_names[MIXED_NTYPES] = {
	"lb_tas_t", "lb_ticket_t", "lb_qspin_t", "lb_qspin_pv_t", "lb_qrwlock_t", "lb_mutex_t",
	"lb_rtmutex_t", "lb_futex_pi_t", "struct lb_qspin_slot", "struct lb_qspin_pv_slot",
	"struct lb_qspin_ctx", "struct lb_qspin_pv_ctx", "lb_mutex_ctx_t", "struct lb_rtmutex_task",
};

static struct mixed_shared shared;

struct worker {
	pthread_t thread;
	unsigned int index;
	void (*run)(struct mixed_shared *s, unsigned int index, unsigned int iters);
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->run(&shared, w->index, ITERS);
	return NULL;
}

static void on_alarm(int sig)
{
	static const char msg[] = "not ok - timed out after 60 s: a waiter never woken?\n1..1\n";

	(void)sig;
	/* write(2) and _exit(2) only: async-signal-safe. */
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void *alloc_type(const struct mixed_layout *l, int type, size_t n)
{
	size_t align = l->align[type] < sizeof(void *) ? sizeof(void *) : l->align[type];
	size_t size = (l->size[type] * n + align - 1) / align * align;
	void *p = aligned_alloc(align, size);

	if (!p)
		abort();
	memset(p, 0xa5, size); /* init must not rely on zeroed memory */
	return p;
}

int main(void)
{
	struct mixed_layout strict, plain, gnu, cxx;
	struct worker workers[MAXTHREADS];
	unsigned int nthreads;

	mixed_strict_layout(&strict);
	mixed_plain_layout(&plain);
	mixed_gnu_layout(&gnu);
	mixed_cxx_layout(&cxx);
	nthreads = cxx.size[MIXED_TAS] ? 4 : 3;
	if (nthreads == 3)
		tap_diag("no C++ variant (no C++ compiler at configure time)");
	for (int t = 0; t < MIXED_NTYPES; t++) {
		tap_ok(plain.size[t] == gnu.size[t] && plain.align[t] == gnu.align[t],
		       "%s: same layout in plain c11 (%zu/%zu) and gnu11+counters+probes (%zu/%zu)",
		       type_names[t], plain.size[t], plain.align[t], gnu.size[t], gnu.align[t]);
		if (strict.size[t])
			tap_ok(strict.size[t] == gnu.size[t] && strict.align[t] == gnu.align[t],
			       "%s: same layout in strict c11 (%zu/%zu) and gnu11 (%zu/%zu)",
			       type_names[t], strict.size[t], strict.align[t], gnu.size[t],
			       gnu.align[t]);
		if (cxx.size[MIXED_TAS])
			tap_ok(cxx.size[t] == gnu.size[t] && cxx.align[t] == gnu.align[t],
			       "%s: same layout in C++17 (%zu/%zu) and C gnu11 (%zu/%zu)",
			       type_names[t], cxx.size[t], cxx.align[t], gnu.size[t], gnu.align[t]);
	}

	const char *bad = mixed_gnu_initializer_mismatch();
	tap_ok(bad == NULL, "every static initializer equals lb_X_init with defaults%s%s",
	       bad ? ": not " : "", bad ? bad : "");
	bad = mixed_cxx_initializer_mismatch();
	tap_ok(bad == NULL, "C++17 build: initializers equal init%s%s", bad ? ": not " : "",
	       bad ? bad : "");
	bad = mixed_strict_initializer_mismatch();
	tap_ok(bad == NULL, "strict c11 build: initializers equal init%s%s", bad ? ": not " : "",
	       bad ? bad : "");

	for (int t = 0; t < MIXED_NSHARED; t++)
		shared.lock[t] = alloc_type(&plain, t, t >= MIXED_NLOCKS ? MAXTHREADS : 1);
	mixed_plain_init(&shared);

	signal(SIGALRM, on_alarm);
	alarm(60);
	for (unsigned int i = 0; i < nthreads; i++) {
		workers[i].index = i;
		workers[i].run = i == 0 ? mixed_strict_run : i == 1 ? mixed_plain_run
			       : i == 2 ? mixed_gnu_run : mixed_cxx_run;
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
			tap_ok(false, "pthread_create");
			return tap_done();
		}
	}
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_join(workers[i].thread, NULL);
	alarm(0);

	unsigned long all = nthreads * ITERS, sleeping = (nthreads - 1) * ITERS;
	tap_ok(shared.count[MIXED_TAS] == all, "tas: %lu of %lu", shared.count[MIXED_TAS], all);
	tap_ok(shared.count[MIXED_TICKET] == all / 10, "ticket: %lu of %lu",
	       shared.count[MIXED_TICKET], all / 10);
	tap_ok(shared.count[MIXED_QSPIN] == all / 10,
	       "qspinlock (word-only and sub-word builds): %lu of %lu", shared.count[MIXED_QSPIN],
	       all / 10);
	tap_ok(shared.count[MIXED_QSPIN_PV] == sleeping, "qspinlock-pv: %lu of %lu",
	       shared.count[MIXED_QSPIN_PV], sleeping);
	tap_ok(shared.qrw_a == shared.count[MIXED_QRW] && shared.qrw_b == shared.qrw_a,
	       "qrwlock writers: %lu writes, pair %lu/%lu", shared.count[MIXED_QRW],
	       shared.qrw_a, shared.qrw_b);
	tap_ok(shared.torn_reads == 0, "qrwlock readers saw no torn pair (%lu)", shared.torn_reads);
	tap_ok(shared.count[MIXED_MUTEX] == sleeping, "mutex (counting and non-counting builds): %lu of %lu",
	       shared.count[MIXED_MUTEX], sleeping);
	tap_ok(shared.count[MIXED_RTMUTEX] == sleeping, "rtmutex: %lu of %lu",
	       shared.count[MIXED_RTMUTEX], sleeping);
	tap_ok(shared.count[MIXED_FUTEX_PI] == sleeping, "futex_pi: %lu of %lu",
	       shared.count[MIXED_FUTEX_PI], sleeping);
	for (int t = 0; t < MIXED_NSHARED; t++)
		free(shared.lock[t]);
	return tap_done();
}
