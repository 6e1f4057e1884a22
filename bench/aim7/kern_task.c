/* SPDX-License-Identifier: MIT */
/*
 * kern_task.c - processes of the simulated kernel (see kern.h): the task
 * list (fork, exit, ps) and each child's signal queue.
 */
#include "kern_internal.h"

/* ------------------------------------------------------------- tasks */

uint32_t aim_task_fork(struct aim_ctx *c, uint32_t tag)
{
	struct aim_tasklist *tl = &c->k->tasks;
	aim_lock(c, &tl->lock);
	uint32_t pid = aim_pool_get(&tl->pids, tag);
	if (pid != AIM_NONE) {
		uint32_t head = tl->pids.n, last = tl->prev[head];
		if (last > head) {
			tl->errors++;
		} else {
			tl->next[pid] = head;
			tl->prev[pid] = last;
			tl->next[last] = pid;
			tl->prev[head] = pid;
			tl->nr++;
		}
	}
	aim_unlock(c, &tl->lock);
	return pid;
}

void aim_task_exit(struct aim_ctx *c, uint32_t pid, uint32_t tag)
{
	struct aim_tasklist *tl = &c->k->tasks;
	if (pid == AIM_NONE)
		return;
	aim_lock(c, &tl->lock);
	uint32_t head = tl->pids.n, n = tl->next[pid], p = tl->prev[pid];
	if (n > head || p > head || tl->next[p] != pid || tl->prev[n] != pid) {
		tl->errors++;
	} else {
		tl->next[p] = n;
		tl->prev[n] = p;
		tl->nr--;
		aim_pool_put(&tl->pids, pid, tag);
	}
	aim_unlock(c, &tl->lock);
}

uint32_t aim_task_walk(struct aim_ctx *c)
{
	struct aim_tasklist *tl = &c->k->tasks;
	uint32_t count = 0, head = tl->pids.n;
	aim_read_lock(c, &tl->lock);
	for (uint32_t t = tl->next[head]; t != head; t = tl->next[t]) {
		if (t > head || count > head) {
			tl->errors++;
			break;
		}
		count++;
	}
	if (count != tl->nr)
		tl->errors++;
	aim_read_unlock(c, &tl->lock);
	return count;
}

/* ----------------------------------------------------------- signals */

void aim_sig_send(struct aim_ctx *c, struct aim_sighand *s, uint8_t signo)
{
	aim_lock(c, &s->siglock);
	if (s->qtail - s->qhead >= AIM_SIGQ) {
		s->errors++;
	} else {
		s->q[s->qtail++ % AIM_SIGQ] = signo;
		s->pending |= UINT64_C(1) << (signo & 63);
		s->sent++;
	}
	aim_unlock(c, &s->siglock);
}

int aim_sig_deliver(struct aim_ctx *c, struct aim_sighand *s)
{
	int signo = -1;
	aim_lock(c, &s->siglock);
	if (s->qtail != s->qhead) {
		if (s->qtail - s->qhead > AIM_SIGQ) {
			s->errors++;
		} else {
			signo = s->q[s->qhead++ % AIM_SIGQ];
			if (!(s->pending & (UINT64_C(1) << (signo & 63))))
				s->errors++;
			if (s->qtail == s->qhead)
				s->pending = 0;
			s->delivered++;
		}
	}
	aim_unlock(c, &s->siglock);
	return signo;
}
