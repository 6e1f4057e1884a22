/* SPDX-License-Identifier: MIT */
/* affinity.c - bind lists, the shuffler and onoff, applied per worker. */
#include "affinity.h"
#include "out.h"
#include "procmode.h"
#include "lb_time.h"
#include "state.h"
#include "stutter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKER_STACK (512 * 1024)

struct lb_torture_affinity {
	pthread_mutex_t mutex;   /* guards everything below and the threads' handles */
	cpu_set_t online;        /* onoff's view */
	int idle_cpu;            /* the shuffler's idle CPU, -1 none */
	long offl_tries, offl_ok, onl_tries, onl_ok;
	pthread_t shuffler, onoff;
	bool shuffler_started, onoff_started;
};

int lb_torture_affinity_init(struct lb_torture_run *run)
{
	struct lb_torture_affinity *a = calloc(1, sizeof(*a));
	if (!a)
		return ENOMEM;
	pthread_mutex_init(&a->mutex, NULL);
	a->online = run->cfg.allowed;
	a->idle_cpu = -1;
	run->affinity = a;
	return 0;
}

void lb_torture_affinity_free(struct lb_torture_run *run)
{
	if (!run->affinity)
		return;
	pthread_mutex_destroy(&run->affinity->mutex);
	free(run->affinity);
	run->affinity = NULL;
}

/* The worker's CPU set under the current state; caller holds the mutex. */
static void worker_mask(const struct lb_torture_run *run, const struct lb_torture_thread *t,
			cpu_set_t *out)
{
	const struct lb_torture_affinity *a = run->affinity;
	cpu_set_t base, on;

	CPU_AND(&base, t->writer ? &run->cfg.bind_writers : &run->cfg.bind_readers,
		&run->cfg.allowed);
	if (CPU_COUNT(&base) == 0)
		base = run->cfg.allowed;
	CPU_AND(&on, &base, &a->online);
	if (CPU_COUNT(&on) == 0)
		on = base;
	*out = on;
	if (a->idle_cpu >= 0 && CPU_ISSET(a->idle_cpu, out) && CPU_COUNT(out) > 1)
		CPU_CLR(a->idle_cpu, out);
}

/* Re-apply every created, still running worker's set; caller holds the mutex. */
static void apply_all(struct lb_torture_run *run)
{
	for (int i = 0; i < run->nthreads; i++) {
		struct lb_torture_thread *t = &run->threads[i];
		cpu_set_t set;
		if (!t->created || atomic_load_explicit(&t->exited, memory_order_relaxed))
			continue;
		worker_mask(run, t, &set);
		/* ESRCH races with an exiting worker are harmless; nothing to do. */
		if (t->pid)
			sched_setaffinity(t->pid, sizeof(set), &set);
		else
			pthread_setaffinity_np(t->handle, sizeof(set), &set);
	}
}

int lb_torture_spawn(struct lb_torture_run *run, struct lb_torture_thread *t,
		     void *(*fn)(void *))
{
	struct lb_torture_affinity *a = run->affinity;
	struct sched_param sp = { .sched_priority = 0 };
	pthread_attr_t attr;
	cpu_set_t set;
	if (run->shared_map) { /* -P: a forked process */
		pthread_mutex_lock(&a->mutex);
		worker_mask(run, t, &set);
		int err = lb_torture_proc_spawn(run, t, fn, &set);
		pthread_mutex_unlock(&a->mutex);
		return err;
	}
	int err = pthread_attr_init(&attr);
	if (err)
		return err;
	/* Workers start as SCHED_OTHER whatever the creating thread runs at. */
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setstacksize(&attr, WORKER_STACK);

	pthread_mutex_lock(&a->mutex);
	worker_mask(run, t, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(&t->handle, &attr, fn, t);
	if (err == EINVAL) {
		/* A CPU set the kernel refuses: run anywhere we may rather than not at all. */
		pthread_attr_setaffinity_np(&attr, sizeof(run->cfg.allowed), &run->cfg.allowed);
		err = pthread_create(&t->handle, &attr, fn, t);
	}
	t->created = !err;
	pthread_mutex_unlock(&a->mutex);
	pthread_attr_destroy(&attr);
	return err;
}

static void *shuffler_main(void *arg)
{
	struct lb_torture_run *run = arg;
	struct lb_torture_affinity *a = run->affinity;
	uint64_t interval = (uint64_t)run->cfg.shuffle_interval * run->cfg.jiffy_ns;

	for (;;) {
		lb_torture_sleep_unless_stopped(run, interval);
		if (lb_torture_must_stop(run))
			break;
		if (run->cfg.ncpus < 2)
			continue; /* nothing to shuffle on one CPU */
		pthread_mutex_lock(&a->mutex);
		/* Next allowed CPU after the idle one; past the last, none idle. */
		int next = -1;
		for (int cpu = a->idle_cpu + 1; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &run->cfg.allowed)) {
				next = cpu;
				break;
			}
		a->idle_cpu = next;
		apply_all(run);
		pthread_mutex_unlock(&a->mutex);
	}
	return NULL;
}

/* The n-th allowed CPU (n < ncpus). */
static int nth_allowed(const struct lb_torture_run *run, unsigned int n)
{
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &run->cfg.allowed) && n-- == 0)
			return cpu;
	return -1;
}

static void *onoff_main(void *arg)
{
	struct lb_torture_run *run = arg;
	struct lb_torture_affinity *a = run->affinity;
	const struct lb_torture_config *cfg = &run->cfg;
	struct lb_torture_random rng;

	lb_torture_random_init(&rng);
	if (cfg->onoff_holdoff > 0) {
		if (cfg->verbose)
			lb_torture_printf("%s%s torture_onoff begin holdoff\n", cfg->type, LB_TORTURE_FLAG);
		lb_torture_sleep_unless_stopped(run, (uint64_t)cfg->onoff_holdoff * LB_NS_PER_S);
		if (cfg->verbose && !lb_torture_must_stop(run))
			lb_torture_printf("%s%s torture_onoff end holdoff\n", cfg->type, LB_TORTURE_FLAG);
	}
	while (!lb_torture_must_stop(run)) {
		int cpu = nth_allowed(run, lb_torture_random(&rng) % (unsigned int)cfg->ncpus);
		const char *what = NULL;
		pthread_mutex_lock(&a->mutex);
		if (cpu >= 0 && CPU_ISSET(cpu, &a->online)) {
			if (CPU_COUNT(&a->online) > 1) { /* the last one is "not hotpluggable" */
				a->offl_tries++;
				CPU_CLR(cpu, &a->online);
				a->offl_ok++;
				what = "offlining";
			}
		} else if (cpu >= 0) {
			a->onl_tries++;
			CPU_SET(cpu, &a->online);
			a->onl_ok++;
			what = "onlining";
		}
		if (what)
			apply_all(run);
		pthread_mutex_unlock(&a->mutex);
		if (what && cfg->verbose > 1)
			lb_torture_printf("%s%s torture_onoff task: %s %d\n", cfg->type, LB_TORTURE_FLAG, what, cpu);
		lb_torture_sleep_unless_stopped(run, (uint64_t)cfg->onoff_interval * LB_NS_PER_S);
	}
	return NULL;
}

int lb_torture_affinity_start(struct lb_torture_run *run)
{
	struct lb_torture_affinity *a = run->affinity;
	int err = 0;
	if (run->cfg.onoff_interval > 0) {
		err = pthread_create(&a->onoff, NULL, onoff_main, run);
		a->onoff_started = !err;
		if (err)
			return err;
	}
	if (run->cfg.shuffle_interval > 0) {
		err = pthread_create(&a->shuffler, NULL, shuffler_main, run);
		a->shuffler_started = !err;
	}
	return err;
}

void lb_torture_affinity_stop(struct lb_torture_run *run)
{
	struct lb_torture_affinity *a = run->affinity;
	if (!a)
		return;
	if (a->onoff_started)
		pthread_join(a->onoff, NULL);
	if (a->shuffler_started)
		pthread_join(a->shuffler, NULL);
	/* Workers finish their last iteration on their whole bind lists. */
	if (a->onoff_started || a->shuffler_started) {
		pthread_mutex_lock(&a->mutex);
		a->online = run->cfg.allowed;
		a->idle_cpu = -1;
		apply_all(run);
		pthread_mutex_unlock(&a->mutex);
	}
	a->onoff_started = a->shuffler_started = false;
}

void lb_torture_onoff_stats(const struct lb_torture_run *run, char *buf, size_t len)
{
	struct lb_torture_affinity *a = run->affinity;
	pthread_mutex_lock(&a->mutex);
	snprintf(buf, len, "onoff: %ld/%ld:%ld/%ld", a->offl_ok, a->offl_tries, a->onl_ok,
		 a->onl_tries);
	pthread_mutex_unlock(&a->mutex);
}
