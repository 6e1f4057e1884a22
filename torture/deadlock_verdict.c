/* SPDX-License-Identifier: MIT */
/* deadlock_verdict.c - one injected cycle round's verdict (deadlock_verdict.h). */
#include "deadlock_verdict.h"

#include <errno.h>

enum lb_dl_round_verdict lb_dl_judge_round(const int *ret, const int *unasked, int members)
{
	int errors = 0, deadlk = 0, unformed = 0;
	for (int m = 0; m < members; m++) {
		errors += ret[m] != 0;
		deadlk += ret[m] == EDEADLK;
		unformed += ret[m] == ETIMEDOUT && unasked[m] > 0;
	}
	if (!errors)
		return LB_DL_UNBROKEN;
	if (deadlk)
		return LB_DL_DETECTED;
	return unformed ? LB_DL_TIMEOUT_ONLY : LB_DL_MISSED;
}
