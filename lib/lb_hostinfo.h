/* SPDX-License-Identifier: MIT */
/* lb_hostinfo.h - facts about the machine and build, for result metadata. */
#ifndef LB_HOSTINFO_H
#define LB_HOSTINFO_H

struct lb_hostinfo {
	char cpu_model[128];   /* /proc/cpuinfo "model name" (or "unknown") */
	int ncpus_online;      /* sysconf(_SC_NPROCESSORS_ONLN) */
	int ncpus_allowed;     /* CPUs in this process's affinity mask */
	int numa_nodes;        /* libnuma; 1 when NUMA is unavailable */
	char kernel[128];      /* uname -r plus -v */
	char hostname[64];
	char compiler[64];     /* __VERSION__ with its family, e.g. "gcc 12.2.0" */
	char build_type[32];   /* LB_BUILD_TYPE from meson */
	char git_rev[64];      /* LB_GIT_REV from meson */
	char version[32];      /* LB_VERSION */
	char cpufreq_governor[32]; /* cpu0 scaling_governor, or "none" */
	char clocksource[32];  /* current kernel clocksource */
};

void lb_hostinfo_get(struct lb_hostinfo *h);

/* The 1-min load average now (/proc/loadavg), or -1 where it cannot be read. */
double lb_load_average_now(void);

/* The 1-min load average when the process started (read once, before main,
 * by a constructor in lb_hostinfo.c), or -1: the `load_average_before` of
 * a result file, which compare's load warning reads. */
double lb_load_average_at_start(void);

/* Threads runnable now beside the caller: the median of 11 reads of
 * /proc/stat's procs_running over ~100 ms, less the caller itself; -1 where
 * it cannot be read.  Unlike the 1-min load average it does not remember
 * the work this process (or the run before it) did a minute ago. */
double lb_runnable_others(void);

#endif /* LB_HOSTINFO_H */
