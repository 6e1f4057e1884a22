/* SPDX-License-Identifier: MIT */
/*
 * test_reap.h - the process tests' reaper: wait for n forked children until
 * a deadline, then kill what is left and reap it too, so a hung lock ends
 * the test instead of wedging it.
 */
#ifndef LB_TEST_REAP_H
#define LB_TEST_REAP_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include "lb_time.h"

/* Whether all n children (pids) exited 0 within deadline_ns; *hung says
 * whether any had to be killed.  A reaped child's slot is set to 0. */
static inline bool lb_test_reap(pid_t *pids, unsigned int n, uint64_t deadline_ns, bool *hung)
{
	uint64_t end = lb_now_ns() + deadline_ns;
	bool clean = true;
	unsigned int left = n;
	*hung = false;
	while (left) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);
		if (p > 0) {
			left--;
			clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
			for (unsigned int i = 0; i < n; i++)
				if (pids[i] == p)
					pids[i] = 0;
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break; /* ECHILD: none left */
		if (!*hung && lb_now_ns() > end) {
			*hung = true;
			for (unsigned int i = 0; i < n; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
			continue; /* reap the killed ones */
		}
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL); /* poll: no child has ended yet */
	}
	return clean && !*hung;
}

#endif /* LB_TEST_REAP_H */
