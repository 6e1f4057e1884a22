/* SPDX-License-Identifier: MIT */
/*
 * test_raw.c - the raw-section emulation of `lockbench rt`
 * (bench/slub/raw_section.h): an RT thread woken on a CPU inside a long
 * raw list_lock section starts only when the section ends, and its wait is
 * counted; with a PI lock (never raw) it starts at once, preempting the
 * holder.  Needs SCHED_FIFO (skips, 77, where it is not permitted).
 *
 *   test-rt-raw            TAP
 *   test-rt-raw --broken   the RT thread does not wait (the old code): the
 *                          raw-lock checks must fail
 */
#include "raw_section.h"
#include "lb_registry.h"
#include "lb_time.h"
#include "../tap.h"
#include "../test_sync.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS UINT64_C(1000000)
#define SECTION_NS (40 * MS)  /* the holder's section */
#define WAKE_AFTER_NS (10 * MS) /* the RT thread's wake-up, inside it */

static bool broken;

struct scene {
	const struct lb_lock_ops *ops;
	void *lock;
	struct lb_raw_sections raw;
	bool raw_on;
	_Atomic int holding;
	uint64_t section_end_ns, rt_wake_ns, rt_start_ns, rt_wait_ns;
};

static void *holder_main(void *arg)
{
	struct scene *s = arg;
	void *tctx = lb_thread_ctx_alloc(s->ops);
	struct lb_raw_thread rt;
	if (s->ops->thread_init)
		s->ops->thread_init(tctx, 0);
	lb_raw_thread_init(&rt);
	if (s->raw_on)
		lb_raw_enter(&s->raw, &rt);
	s->ops->lock(s->lock, tctx);
	atomic_store_explicit(&s->holding, 1, memory_order_release);
	uint64_t t0 = lb_now_ns();
	/* Spin loop: a long critical section that keeps the CPU busy. */
	while (lb_now_ns() - t0 < SECTION_NS)
		lb_cpu_relax();
	s->section_end_ns = lb_now_ns();
	s->ops->unlock(s->lock, tctx);
	if (s->raw_on)
		lb_raw_exit(&s->raw, &rt);
	if (s->ops->thread_fini)
		s->ops->thread_fini(tctx);
	lb_thread_ctx_free(tctx);
	return NULL;
}

static void *rt_main(void *arg)
{
	struct scene *s = arg;
	/* Acquire spin: wait (sleeping) until the holder is inside its section. */
	while (!atomic_load_explicit(&s->holding, memory_order_acquire)) {
		struct timespec d = { 0, 100000 };
		nanosleep(&d, NULL);
	}
	struct timespec ts = { 0, (long)WAKE_AFTER_NS };
	nanosleep(&ts, NULL);
	s->rt_wake_ns = lb_now_ns();
	if (s->raw_on && !broken)
		s->rt_wait_ns = lb_raw_wait_cpu(&s->raw, 0);
	s->rt_start_ns = lb_now_ns();
	return NULL;
}

static int run_scene_once(const char *name, struct scene *s)
{
	memset(s, 0, sizeof(*s));
	s->ops = lb_lock_find(name);
	if (!s->ops || s->ops->unsupported) {
		tap_diag("lock %s cannot run here", name);
		exit(1);
	}
	s->raw_on = lb_raw_lock_is_raw(s->ops);
	s->lock = lb_lock_alloc(s->ops);
	if (!s->lock || s->ops->init(s->lock) || lb_raw_sections_init(&s->raw, 98)) {
		tap_diag("setup of %s failed", name);
		exit(1);
	}
	pthread_t h, r;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (pthread_create(&h, &attr, holder_main, s))
		exit(1);
	pthread_attr_destroy(&attr);
	if (spawn_fifo(&r, rt_main, s, 99, 0))
		exit(1);
	pthread_join(r, NULL);
	pthread_join(h, NULL);
	if (s->ops->destroy)
		s->ops->destroy(s->lock);
	lb_lock_free(s->lock);
	lb_raw_sections_destroy(&s->raw);
	return 0;
}

/* A shared machine may wake the RT thread only after the section ended:
 * then the scene proves nothing, and is run again (up to 5 times). */
static int run_scene(const char *name, struct scene *s)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		run_scene_once(name, s);
		if (s->rt_wake_ns < s->section_end_ns)
			return 0;
		tap_diag("%s: the RT thread woke %.2f ms after the section ended; again", name,
			 ((double)s->rt_wake_ns - (double)s->section_end_ns) / 1e6);
	}
	return -1;
}

int main(int argc, char **argv)
{
	broken = argc > 1 && !strcmp(argv[1], "--broken");
	struct scene s;
	struct sched_param sp = { .sched_priority = 1 };
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		tap_skip_exit77("SCHED_FIFO not permitted here");
	}
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);

	tap_ok(lb_raw_lock_is_raw(lb_lock_find("qspinlock")) &&
	       !lb_raw_lock_is_raw(lb_lock_find("pthread-pi")) &&
	       !lb_raw_lock_is_raw(lb_lock_find("pthread-mutex")),
	       "qspinlock is raw; pthread-pi and pthread-mutex are not");
	if (run_scene("qspinlock", &s)) {
		tap_ok(false, "qspinlock: the RT thread never woke inside the section");
	} else {
		tap_ok(s.raw_on, "qspinlock: raw sections on");
		tap_ok(s.rt_start_ns >= s.section_end_ns,
		       "qspinlock: the RT thread woken inside the raw section starts after it "
		       "ends (%+.2f ms)", ((double)s.rt_start_ns - (double)s.section_end_ns) / 1e6);
		/* The wait covers wake-up to section end (1 ms of slack). */
		tap_ok(s.rt_wait_ns + MS >= s.section_end_ns - s.rt_wake_ns,
		       "qspinlock: its wait (%.2f ms) is counted, woken %.2f ms before the end",
		       (double)s.rt_wait_ns / 1e6,
		       ((double)s.section_end_ns - (double)s.rt_wake_ns) / 1e6);
	}
	if (run_scene("pthread-pi", &s)) {
		tap_ok(false, "pthread-pi: the RT thread never woke inside the section");
	} else {
		tap_ok(!s.raw_on, "pthread-pi: no raw sections");
		tap_ok(s.rt_start_ns < s.section_end_ns,
		       "pthread-pi: the RT thread preempts the holder and starts %.2f ms before "
		       "the section ends", ((double)s.section_end_ns - (double)s.rt_start_ns) / 1e6);
		tap_ok(s.rt_wait_ns == 0, "pthread-pi: no wait counted");
	}
	return tap_done();
}
