/* SPDX-License-Identifier: MIT */
/* stall.c - aim7's watchdog verdict over a window without progress (stall.h). */
#include "stall.h"

#include <stdio.h>

static bool asleep(char s)
{
	return s == 'S' || s == 'D';
}

struct aim_stall_verdict aim_stall_judge(const struct aim_stall_thread *t, unsigned int n,
					 uint64_t window_ns)
{
	struct aim_stall_verdict v = { .threads = n, .example = -1 };
	int preempted = -1, busy = -1, unproven = -1, spinner = -1, sleeper = -1;
	unsigned int known = 0, proven = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct aim_stall_thread *x = &t[i];
		if (!x->known)
			continue;
		known++;
		/* Any thread (a waiter, a holder) the machine did not run: it
		 * waited for a CPU a tenth of the window or more (not a
		 * poller's short waits on a loaded machine). */
		if (x->cpu_ns < AIM_STALL_PROOF_NS && x->delay_ns > x->cpu_ns &&
		    x->delay_ns >= window_ns / 10 && x->run_state == 'R') {
			v.waiting_cpu++;
			preempted = preempted < 0 ? (int)i : preempted;
		}
		if (!x->in_lock) {
			if (x->cpu_ns >= window_ns / 4) {
				v.busy++;
				busy = busy < 0 ? (int)i : busy;
			}
			continue;
		}
		v.in_lock++;
		if (x->cpu_ns >= AIM_STALL_PROOF_NS) {
			proven++;
			spinner = spinner < 0 ? (int)i : spinner;
			continue;
		}
		unproven = unproven < 0 ? (int)i : unproven;
		if (asleep(x->run_state)) {
			v.asleep++;
			sleeper = sleeper < 0 ? (int)i : sleeper;
		}
	}
	if (!known) {
		v.kind = AIM_STALL_UNKNOWN;
	} else if (v.in_lock && proven == v.in_lock) {
		v.kind = AIM_STALL_SPINNING; /* each waiter ran and saw no hand-over */
		v.example = spinner;
	} else if (preempted >= 0) {
		v.kind = AIM_STALL_PREEMPTED;
		v.example = preempted;
	} else if (busy >= 0) {
		v.kind = AIM_STALL_BUSY;
		v.example = busy;
	} else {
		v.kind = AIM_STALL_ASLEEP;
		v.example = sleeper >= 0 ? sleeper : unproven;
	}
	v.stuck = v.kind >= AIM_STALL_SPINNING;
	return v;
}

void aim_stall_describe(const struct aim_stall_verdict *v, const struct aim_stall_thread *t,
			uint64_t window_ns, char *buf, size_t len)
{
	static const char *const what[] = {
		[AIM_STALL_PREEMPTED] = "slow, not stuck: waiters were waiting for a CPU",
		[AIM_STALL_BUSY] = "slow, not stuck: a thread ran outside the locks",
		[AIM_STALL_SPINNING] = "stuck: every waiter ran and nobody got a lock "
				       "(a livelock or a lost hand-over)",
		[AIM_STALL_ASLEEP] = "stuck: waiters asleep and nobody runs "
				     "(a deadlock or a lost wake-up)",
		[AIM_STALL_UNKNOWN] = "stuck: no thread's scheduler state readable",
	};
	int k = snprintf(buf, len, "no progress for %.1f s: %s (%u threads: %u in lock waits, "
			 "%u asleep; %u waiting for a CPU; %u busy outside the locks)",
			 (double)window_ns / 1e9, what[v->kind], v->threads, v->in_lock,
			 v->asleep, v->waiting_cpu, v->busy);
	if (v->example >= 0 && k > 0 && (size_t)k < len) {
		const struct aim_stall_thread *x = &t[v->example];
		snprintf(buf + k, len - (size_t)k, "; e.g. thread %d (%s, state %c): %.2f s on a "
			 "CPU, %.2f s run delay", v->example, x->in_lock ? "in a lock wait" : "no lock",
			 x->run_state, (double)x->cpu_ns / 1e9, (double)x->delay_ns / 1e9);
	}
}
