/* SPDX-License-Identifier: MIT */
/* out.c - locktorture's standard output and its status line (out.h). */
#include "out.h"
#include "lb_progress.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static struct lb_progress progress;
/* &progress once it is drawn, NULL before and after.  Release in begin and
 * stop pairs with the acquire in lb_torture_printf, so a worker that sees
 * the pointer sees the progress initialised. */
static _Atomic(struct lb_progress *) shown;
/* The process that draws it: a -P worker forked later prints plainly (the
 * lock it would take may have been held by the ticker at the fork). */
static pid_t owner;

void lb_torture_out_begin(const char *what, uint64_t duration_ns)
{
	if (isatty(STDERR_FILENO) != 1)
		return;
	owner = getpid();
	lb_progress_begin(&progress, stderr, false, 1, duration_ns, 1);
	lb_progress_step(&progress, "%s", what);
	atomic_store_explicit(&shown, &progress, memory_order_release);
}

void lb_torture_out_stop(void)
{
	struct lb_progress *p = atomic_exchange_explicit(&shown, NULL, memory_order_acq_rel);
	/* Cleared and hidden, never ended: a hung worker may still be inside
	 * lb_progress_vprintf with it, and the process ends soon after. */
	if (p)
		lb_progress_clear(p);
}

void lb_torture_printf(const char *fmt, ...)
{
	struct lb_progress *p = atomic_load_explicit(&shown, memory_order_acquire);
	if (p && getpid() != owner)
		p = NULL;
	va_list ap;
	va_start(ap, fmt);
	lb_progress_vprintf(p, stdout, fmt, ap);
	va_end(ap);
}
