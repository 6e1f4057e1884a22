/* SPDX-License-Identifier: MIT */
/*
 * shell_pipe.c - a child's shell pipeline to its helper, and the bounded
 * futex wait both sides sleep in.  One source compiled twice: natively
 * into `lockbench aim7` (aim7_run.c's threads) and over
 * bench/sim/sim_aim7_interpose.h into the simulator's aim7 world
 * (sim_aim7_world.c's virtual threads, where its atomics and futexes go
 * to the engine and its names are renamed aim_simk_*), so the two cannot
 * drift apart.
 */
#include "task.h"
#include "lb_futex.h"

#include <time.h>

void aim_wait_change(_Atomic uint32_t *word, uint32_t seen)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	lb_futex_wait(word, seen, &ts);
}

void aim_shell_pipeline(struct aim_task *t, uint32_t bytes)
{
	struct aim_helper *h = t->helper;
	uint32_t done0 = atomic_load_explicit(&h->done, memory_order_acquire);
	h->bytes = bytes;
	/* release: publishes `bytes` to the helper's acquire load. */
	atomic_fetch_add_explicit(&h->cmd, 1, memory_order_release);
	lb_futex_wake(&h->cmd, 1);
	size_t sent = aim_pipe_write(&t->ctx, h->pipe, bytes);
	/* wait(2) for the pipeline's last process */
	while (sent == bytes) { /* a short write means the run is stopping */
		/* acquire: the helper's counters are read after its bump. */
		uint32_t d = atomic_load_explicit(&h->done, memory_order_acquire);
		if (d != done0 || aim_stopping(t->k))
			break;
		aim_wait_change(&h->done, d);
	}
}
