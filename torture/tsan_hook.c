/* SPDX-License-Identifier: MIT */
/*
 * tsan_hook.c - ThreadSanitizer calls __tsan_on_report() (a weak hook in
 * its runtime, meant to be overridden by the program) after printing each
 * report.  We count them; the verdict reads the count.  A global, because
 * the runtime calls the hook without any context of ours.
 */
#include "tsan_hook.h"

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define LB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LB_TSAN 1
#endif
#endif

#ifdef LB_TSAN
static _Atomic long tsan_reports;

void __tsan_on_report(const void *report);
void __tsan_on_report(const void *report)
{
	(void)report;
	/* A plain count; the verdict reads it after joining the workers. */
	atomic_fetch_add_explicit(&tsan_reports, 1, memory_order_relaxed);
}

long lb_torture_tsan_reports(void)
{
	return atomic_load_explicit(&tsan_reports, memory_order_relaxed);
}

/*
 * locktorture's exit status is 0 SUCCESS, 1 FAILURE, 2 usage: a run that
 * raced already says FAILURE and exits 1, so TSan's own exit code (66 by
 * default) would only blur that.  TSAN_OPTIONS still overrides it.
 */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "exitcode=1";
}

int lb_torture_tsan_enabled(void)
{
	return 1;
}
#else
long lb_torture_tsan_reports(void)
{
	return 0;
}

int lb_torture_tsan_enabled(void)
{
	return 0;
}
#endif
