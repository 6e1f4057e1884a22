/* SPDX-License-Identifier: MIT */
/*
 * preload_glibc_probes.h - glibc's NPTL USDT probes, fired by the preload.
 *
 * Debian 12's glibc (2.36) is built without SystemTap notes, so tools that
 * attach to glibc's probes (bcc's ulockstat-style scripts, bpftrace
 * `usdt:...:libpthread:mutex_entry` one-liners) find nothing there.  The
 * preload fires the same provider, names and arguments, so those tools work
 * when pointed at liblockbench-preload.so, beside our richer lockbench:*
 * probes (locks/include/lockbench/lb_probe.h).
 *
 * Names and arguments as glibc 2.35's nptl sources fire them with
 * LIBC_PROBE (nptl/pthread_mutex_lock.c, pthread_mutex_unlock.c,
 * pthread_mutex_timedlock.c, pthread_mutex_init.c, pthread_mutex_destroy.c,
 * pthread_cond_wait.c, pthread_cond_signal.c, pthread_cond_broadcast.c,
 * pthread_cond_init.c, pthread_cond_destroy.c; listed in glibc's
 * nptl/DESIGN-systemtap-probes.txt).  The provider is `libpthread`, the
 * module name these sources had while NPTL was libpthread.so (glibc <= 2.33,
 * the name the tools were written against):
 *
 *   | probe                    | arguments         | fired                                  |
 *   |--------------------------|-------------------|----------------------------------------|
 *   | mutex_init               | mutex             | pthread_mutex_init                     |
 *   | mutex_destroy            | mutex             | pthread_mutex_destroy                  |
 *   | mutex_entry              | mutex             | entry of pthread_mutex_lock (and the   |
 *   |                          |                   | re-lock at the end of a cond wait)     |
 *   | mutex_acquired           | mutex             | pthread_mutex_lock acquired it         |
 *   | mutex_timedlock_entry    | mutex, abstime    | entry of pthread_mutex_timedlock       |
 *   | mutex_timedlock_acquired | mutex             | pthread_mutex_timedlock acquired it    |
 *   | mutex_release            | mutex             | pthread_mutex_unlock released it (and  |
 *   |                          |                   | the release at the start of a cond wait)|
 *   | cond_init                | cond, attr        | pthread_cond_init                      |
 *   | cond_destroy             | cond              | pthread_cond_destroy                   |
 *   | cond_wait                | cond, mutex       | every pthread_cond_*wait               |
 *   | cond_signal              | cond              | pthread_cond_signal                    |
 *   | cond_broadcast           | cond              | pthread_cond_broadcast                 |
 *
 * As in glibc, pthread_mutex_trylock fires nothing.  Every argument is a
 * pointer (an `8@...` argument in the ELF note).  Compiled in with LB_USDT
 * (sys/sdt.h) like the lockbench:* probes; otherwise empty.
 */
#ifndef LB_PRELOAD_GLIBC_PROBES_H
#define LB_PRELOAD_GLIBC_PROBES_H

#include "lb_probe.h" /* LB_USDT, sys/sdt.h and the quiet-warning bracket */

#if LB_USDT
#define LBP_GLIBC_PROBE1(name, a)                                               \
	do {                                                                    \
		LB__PROBE_QUIET_BEGIN STAP_PROBE1(libpthread, name, (const void *)(a)); \
		LB__PROBE_QUIET_END                                             \
	} while (0)
#define LBP_GLIBC_PROBE2(name, a, b)                                            \
	do {                                                                    \
		LB__PROBE_QUIET_BEGIN STAP_PROBE2(libpthread, name, (const void *)(a), \
						  (const void *)(b));           \
		LB__PROBE_QUIET_END                                             \
	} while (0)
#else
#define LBP_GLIBC_PROBE1(name, a)    ((void)(a))
#define LBP_GLIBC_PROBE2(name, a, b) ((void)(a), (void)(b))
#endif

#endif /* LB_PRELOAD_GLIBC_PROBES_H */
