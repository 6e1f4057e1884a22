/* SPDX-License-Identifier: MIT */
/*
 * lb_outfile_signals.c - the signals that end a command (INT, TERM, HUP,
 * QUIT) remove the temporaries of its outputs first (see lb_outfile.h).
 * The handler runs lb_outfile_unlink_pending() (unlink() only:
 * async-signal-safe), restores the default action and raises the signal
 * again, so the command still dies of it (exit status 128 + N in a shell).
 */
#include "lb_outfile.h"

#include <signal.h>
#include <stddef.h>

static const int lb_stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

void lb_stop_signal_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(lb_stop_signals) / sizeof(lb_stop_signals[0]); i++)
		sigaddset(set, lb_stop_signals[i]);
}

void lb_stop_signals_catch(void (*handler)(int), int flags, const sigset_t *mask)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = flags };
	if (mask)
		sa.sa_mask = *mask;
	else
		sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(lb_stop_signals) / sizeof(lb_stop_signals[0]); i++)
		sigaction(lb_stop_signals[i], &sa, NULL);
}

void lb_outfile_die_of_signal(int sig)
{
	lb_outfile_unlink_pending();
	signal(sig, SIG_DFL);
	raise(sig); /* blocked while the handler runs: delivered as it returns */
}

void lb_outfile_unlink_on_signals(void)
{
	sigset_t others;
	/* The other stop signals wait while one handler runs: one cleanup. */
	lb_stop_signal_set(&others);
	lb_stop_signals_catch(lb_outfile_die_of_signal, 0, &others);
}
