/* SPDX-License-Identifier: MIT */
/*
 * lb_stop.h - the one "stop, and say why" flag of a command.
 *
 * A signal handler (the driver's, bench/driver.c) calls lb_stop_request(sig)
 * when the user asks a run to end; engines and workloads poll
 * lb_stop_signal() at the points where a run can end cleanly (between
 * slices, in a sleep, between measurements) and return what finished.
 * One flag per process: every command runs one workload.
 */
#ifndef LB_STOP_H
#define LB_STOP_H

/* Async-signal-safe (a store to a volatile sig_atomic_t).  The first
 * request's signal is kept: a second one does not overwrite it. */
void lb_stop_request(int sig);

/* The signal that asked the run to stop; 0 when none did. */
int lb_stop_signal(void);

#endif /* LB_STOP_H */
