/* SPDX-License-Identifier: MIT */
/*
 * fatal.h - a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) in
 * any thread still ends the test with the statistics so far, the reason
 * ("!!! fatal signal SIGSEGV in writer 3"), what the exclusion counter
 * shows at that moment (two owners, whether or not the lock's own misuse
 * check is what aborted), the replay line and "--- End of test: FAILURE",
 * exit status 1, so a soak log can tell a broken lock from a broken tool.
 * The handler uses only async-signal-safe calls (write, _exit, lock-free
 * atomics); the End banner is formatted when the handler is installed.
 */
#ifndef LB_TORTURE_FATAL_H
#define LB_TORTURE_FATAL_H

#include "context.h"

/* Install the handlers for this run (after the lock is initialised);
 * replay: the "!!! replay" line (copied) printed before the banner. */
void lb_torture_fatal_install(struct lb_torture_run *run, const char *replay);

/* In each worker, first thing: name the thread for the report and give it
 * an alternate signal stack (a stack overflow must still be reported). */
void lb_torture_fatal_enter_thread(struct lb_torture_thread *t);
/* In each worker, last thing: the alternate stack is released. */
void lb_torture_fatal_leave_thread(void);

#endif /* LB_TORTURE_FATAL_H */
