/* SPDX-License-Identifier: MIT */
/*
 * lb_probe.h - USDT (user statically defined tracing) probes in the lock
 * slow paths, for bpftrace, perf and SystemTap.  doc/tracing.md has the
 * one-liners; this file is the list of probes and their arguments.
 *
 * Provider `lockbench`:
 *
 *   | probe            | arguments                       | fired                                    |
 *   |------------------|---------------------------------|------------------------------------------|
 *   | contention_begin | arg0 lock, arg1 flags           | a lock/read_lock/write_lock must wait     |
 *   | contention_end   | arg0 lock, arg1 ret             | that wait is over (ret 0 = acquired,     |
 *   |                  |                                 | else the errno it returns, e.g. 110)     |
 *   | handoff          | arg0 lock, arg1 new owner       | unlock gives the lock to a chosen waiter |
 *   | pi_boost         | arg0 lock, arg1 task, arg2 prio | a waiter raises the owner's priority     |
 *
 * `lock` is the lock object's address, `flags` a set of LB_CONTENTION_*
 * bits with the values of the kernel's lock:contention_begin tracepoint
 * (LCB_F_SPIN, _READ, _WRITE, _RT, _MUTEX), so one script reads both.
 * Probes sit only where a thread already waits: the uncontended fast path
 * has none, so lock/unlock cost the same with probes compiled in.  A probe
 * site is a `nop` plus an ELF note (.note.stapsdt); attaching turns the nop
 * into a breakpoint.
 *
 * Compiled in only with -DLB_USDT=1 (the lockbench build sets it when
 * sys/sdt.h from systemtap-sdt-dev is present; -Dusdt=disabled turns it
 * off).  Without it, or for an embedder who does not define it, every probe
 * macro is empty.  The choice only adds or removes nops: translation units
 * built either way share locks safely.
 */
#ifndef LB_PROBE_H
#define LB_PROBE_H

/* Contention flags, bit for bit the kernel's LCB_F_* values. */
#define LB_CONTENTION_SPIN  (1u << 0) /* the waiter spins */
#define LB_CONTENTION_READ  (1u << 1) /* read side of a read/write lock */
#define LB_CONTENTION_WRITE (1u << 2) /* write side of a read/write lock */
#define LB_CONTENTION_RT    (1u << 3) /* priority-inheriting (rt) mutex */
#define LB_CONTENTION_MUTEX (1u << 5) /* a sleeping lock */

#ifndef LB_USDT
#define LB_USDT 0
#endif

#if LB_USDT
#include <sys/sdt.h>

/*
 * sys/sdt.h expands a variadic macro with an empty argument list, which
 * clang -pedantic reports at every probe site; silence exactly that
 * warning, for exactly the probe.
 */
#if defined(__clang__)
#define LB__PROBE_QUIET_BEGIN                                                  \
	_Pragma("clang diagnostic push")                                       \
	_Pragma("clang diagnostic ignored \"-Wgnu-zero-variadic-macro-arguments\"")
#define LB__PROBE_QUIET_END _Pragma("clang diagnostic pop")
#else
#define LB__PROBE_QUIET_BEGIN
#define LB__PROBE_QUIET_END
#endif

/* One probe: sdt.h's macro inside the quiet-warning bracket (in the body,
 * not an argument, so that it expands after the bracket opens). */
#define LB__PROBE2(name, a, b)                                                 \
	do {                                                                   \
		LB__PROBE_QUIET_BEGIN STAP_PROBE2(lockbench, name, a, b);      \
		LB__PROBE_QUIET_END                                            \
	} while (0)
#define LB__PROBE3(name, a, b, c)                                              \
	do {                                                                   \
		LB__PROBE_QUIET_BEGIN STAP_PROBE3(lockbench, name, a, b, c);   \
		LB__PROBE_QUIET_END                                            \
	} while (0)
#define LB_PROBE_CONTENTION_BEGIN(lock, flags)                                 \
	LB__PROBE2(contention_begin, (const void *)(lock), (unsigned int)(flags))
#define LB_PROBE_CONTENTION_END(lock, ret)                                     \
	LB__PROBE2(contention_end, (const void *)(lock), (int)(ret))
#define LB_PROBE_HANDOFF(lock, to) LB__PROBE2(handoff, (const void *)(lock), (const void *)(to))
#define LB_PROBE_PI_BOOST(lock, task, prio)                                    \
	LB__PROBE3(pi_boost, (const void *)(lock), (const void *)(task), (int)(prio))
#else
/* Compiled out: arguments are still "used" so no variable goes unused. */
#define LB_PROBE_CONTENTION_BEGIN(lock, flags) ((void)(lock), (void)(flags))
#define LB_PROBE_CONTENTION_END(lock, ret)     ((void)(lock), (void)(ret))
#define LB_PROBE_HANDOFF(lock, to)             ((void)(lock), (void)(to))
#define LB_PROBE_PI_BOOST(lock, task, prio)    ((void)(lock), (void)(task), (void)(prio))
#endif

/*
 * LB_PROBE_CONTENDED - a lock's contended path between its two probes:
 * contention_begin(lock, flags), the statement `slow_call`, then
 * contention_end(lock, 0).  For slow paths that always acquire; one that
 * can fail (returns an errno) passes its result to LB_PROBE_CONTENTION_END
 * itself.
 */
#define LB_PROBE_CONTENDED(lock, flags, slow_call)                             \
	do {                                                                   \
		LB_PROBE_CONTENTION_BEGIN(lock, flags);                        \
		slow_call;                                                     \
		LB_PROBE_CONTENTION_END(lock, 0);                              \
	} while (0)

#endif /* LB_PROBE_H */
