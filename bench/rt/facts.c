/* SPDX-License-Identifier: MIT */
/*
 * facts.c - what the header of `lockbench rt` states about the machine:
 * whether SCHED_FIFO is permitted, the kernel's preemption model, RT
 * throttling, the clocksource, and whether memory was locked.
 */
#include "rt.h"
#include "lb_hostinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

static long read_long(const char *path, long fallback)
{
	FILE *f = fopen(path, "r");
	long v = fallback;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = fallback;
		fclose(f);
	}
	return v;
}

/* "full" from "none voluntary (full) lazy", or "" when unreadable. */
static void dynamic_preempt(char *buf, size_t len)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/debug/sched/preempt", "r");
	*buf = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		char *open = strchr(line, '('), *close = open ? strchr(open, ')') : NULL;
		if (open && close)
			snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
	}
	fclose(f);
}

static void preempt_model(char *buf, size_t len)
{
	struct utsname u;
	char dyn[32];
	const char *model = "unknown (no PREEMPT in uname -v: none or voluntary)";
	if (uname(&u) == 0) {
		if (strstr(u.version, "PREEMPT_RT"))
			model = "PREEMPT_RT";
		else if (strstr(u.version, "PREEMPT_DYNAMIC"))
			model = "PREEMPT_DYNAMIC";
		else if (strstr(u.version, "PREEMPT"))
			model = "PREEMPT (full)";
	}
	dynamic_preempt(dyn, sizeof(dyn));
	if (*dyn)
		snprintf(buf, len, "%s, current: %s", model, dyn);
	else if (!strcmp(model, "PREEMPT_DYNAMIC"))
		snprintf(buf, len, "%s (current mode not readable without debugfs)", model);
	else
		snprintf(buf, len, "%s", model);
}

/* Probe SCHED_FIFO on a short-lived thread: the caller's policy stays. */
static void *probe_fifo(void *arg)
{
	int *err = arg;
	struct sched_param sp = { .sched_priority = 1 };
	*err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	return NULL;
}

void lb_rt_facts_get(const struct lb_rt_config *cfg, struct lb_rt_facts *f)
{
	struct lb_hostinfo h;
	pthread_t t;
	int err = 0;
	memset(f, 0, sizeof(*f));
	if (pthread_create(&t, NULL, probe_fifo, &err) == 0)
		pthread_join(t, NULL);
	else
		err = EAGAIN;
	f->fifo_permitted = err == 0;
	f->fifo_errno = err;
	preempt_model(f->preempt_model, sizeof(f->preempt_model));
	f->rt_runtime_us = read_long("/proc/sys/kernel/sched_rt_runtime_us", -2);
	f->rt_period_us = read_long("/proc/sys/kernel/sched_rt_period_us", -2);
	lb_hostinfo_get(&h);
	snprintf(f->clocksource, sizeof(f->clocksource), "%s", h.clocksource);
	/* As cyclictest does by default: ask for no deep idle states while we
	 * run (the request lasts as long as the file stays open, i.e. until
	 * exit); wake-up latencies out of a deep C-state are not the lock's. */
	f->dma_latency_fd = -1;
	if (cfg->rt_threads) {
		int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
		int32_t zero = 0;
		if (fd >= 0 && write(fd, &zero, sizeof(zero)) == (ssize_t)sizeof(zero))
			f->dma_latency_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	if (cfg->mlockall) {
		/* ONFAULT: pages lock as they are touched; the reserved 1 GiB pool
		 * and hundreds of thread stacks would otherwise be faulted in whole. */
		f->mlocked = mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0;
		f->mlock_errno = f->mlocked ? 0 : errno;
	}
}
