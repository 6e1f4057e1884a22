/* SPDX-License-Identifier: MIT */
/*
 * tap.h - minimal TAP producer for the C tests.  Each test binary prints a
 * plan, one "ok"/"not ok" line per check with a description, and exits 0 only
 * if every check passed.  tap_skip_all() prints "1..0 # SKIP reason": under
 * Meson's TAP protocol that plan line is the skip signal (and the exit status
 * must be 0, or Meson reports an error); tests registered with the exitcode
 * protocol use tap_skip_exit77() instead.
 */
#ifndef LB_TAP_H
#define LB_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count, tap_failed;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;
	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline void tap_skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	fflush(stdout);
	exit(0);
}

static inline void tap_skip_exit77(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	fflush(stdout);
	exit(77);
}

/* Plan printed at the end ("done testing"); exit status reflects failures. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif /* LB_TAP_H */
