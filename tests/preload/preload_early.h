/* SPDX-License-Identifier: MIT */
/* preload_early.h - threads started in a constructor (see preload_early.c). */
#ifndef LB_PRELOAD_EARLY_H
#define LB_PRELOAD_EARLY_H

#include <pthread.h>

#define EARLY_THREADS 2

struct early_result {
	long counter;          /* the shared counter */
	long done_by_threads;  /* what the threads say they added */
	int threads;           /* threads started */
	int state_at_start;    /* lb_preload_state() in the constructor; -1: not loaded */
};

/* Stop and join the constructor's threads. */
int early_finish(struct early_result *r);

#endif /* LB_PRELOAD_EARLY_H */
