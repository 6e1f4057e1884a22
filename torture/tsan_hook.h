/* SPDX-License-Identifier: MIT */
/*
 * tsan_hook.h - under ThreadSanitizer, count its reports so the verdict
 * turns into FAILURE (a data race on the torture's plain shared data is a
 * lock that lost its acquire/release ordering).  Without TSan: always 0.
 */
#ifndef LB_TORTURE_TSAN_HOOK_H
#define LB_TORTURE_TSAN_HOOK_H

/* Reports ThreadSanitizer printed so far in this process. */
long lb_torture_tsan_reports(void);

/* Whether this program was built with ThreadSanitizer. */
int lb_torture_tsan_enabled(void);

#endif /* LB_TORTURE_TSAN_HOOK_H */
