/* SPDX-License-Identifier: MIT */
/*
 * deadlock_verdict.h - how locktorture --deadlock judges one injected
 * ABBA/ABBCCA round from what its members saw (pure; tested by
 * tests/test_torture_units.c).
 */
#ifndef LB_TORTURE_DEADLOCK_VERDICT_H
#define LB_TORTURE_DEADLOCK_VERDICT_H

enum lb_dl_round_verdict {
	LB_DL_DETECTED,     /* some member got EDEADLK */
	LB_DL_TIMEOUT_ONLY, /* broken by a timeout before the cycle formed */
	LB_DL_MISSED,       /* broken by a timeout while every member waited */
	LB_DL_UNBROKEN,     /* every member got its second lock: no exclusion */
};

/*
 * ret[m]: member m's second acquisition (0, EDEADLK, ETIMEDOUT, ...);
 * unasked[m]: for a member that timed out, how many members had not yet
 * asked for their second lock when its timeout returned.  A round broken
 * only by timeouts is timeout-only when one of them saw a member that had
 * not asked (it was not waiting, so no cycle existed), else missed.
 */
enum lb_dl_round_verdict lb_dl_judge_round(const int *ret, const int *unasked, int members);

#endif /* LB_TORTURE_DEADLOCK_VERDICT_H */
