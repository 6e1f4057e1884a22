/* SPDX-License-Identifier: MIT */
/*
 * task.h - what a test function gets: its child ("user") and that child's
 * helper thread, the other process of its shell pipelines.
 */
#ifndef LB_AIM7_TASK_H
#define LB_AIM7_TASK_H

#include "kern.h"

#include <pthread.h>

/* The helper sleeps on `cmd` until its child posts a pipeline to drain. */
struct aim_helper {
	struct aim_ctx ctx;
	struct aim_pipe *pipe;
	_Atomic uint32_t cmd;      /* futex word: bumped per request */
	_Atomic uint32_t done;     /* futex word: bumped per completion */
	uint32_t bytes;            /* this request's size; UINT32_MAX = exit */
	pthread_t tid;
	bool started;
};

struct aim_task {
	struct aim_ctx ctx;
	struct aim_kernel *k;
	unsigned int index;        /* child number */
	uint32_t tag;              /* owner tag of its files/ports/tasks */
	uint32_t pid;              /* its entry in the task list */
	uint32_t seq;              /* makes file names unique */
	uint64_t rng;
	struct aim_helper *helper;
	uint8_t buf[4096], buf2[4096];
	uint64_t sink;
};

static inline uint64_t aim_rand(struct aim_task *t)
{
	uint64_t x = t->rng; /* xorshift64 */
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return t->rng = x;
}

/* Should the job end at its next safe point (a loop's iteration boundary,
 * after which it cleans up)?  When the run is stopping, or when the
 * window's alarm cut the job (aim_kwork_n): its remaining iterations
 * would only be dropped, and each shell pipeline among them waits for
 * a CPU twice. */
static inline bool aim_job_ending(const struct aim_task *t)
{
	return t->ctx.cut || aim_stopping(t->k);
}

/* Post a pipeline of `bytes` to the helper and feed it; returns when the
 * helper has drained it (or the run stops).  shell_pipe.c, compiled both
 * natively and into the simulator's world. */
void aim_shell_pipeline(struct aim_task *t, uint32_t bytes);
/* A futex sleep on `word` while it holds `seen`, 20 ms at most, so a stop
 * flag is seen. */
void aim_wait_change(_Atomic uint32_t *word, uint32_t seen);

#endif /* LB_AIM7_TASK_H */
