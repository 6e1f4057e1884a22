/* SPDX-License-Identifier: MIT */
/* lb_stop.c - the stop flag (see lb_stop.h). */
#include "lb_stop.h"

#include <signal.h>

/* Set from a signal handler: the one global here. */
static volatile sig_atomic_t stop_signal;

void lb_stop_request(int sig)
{
	if (!stop_signal)
		stop_signal = sig; /* async-signal-safe: a plain sig_atomic_t store */
}

int lb_stop_signal(void)
{
	return stop_signal;
}
