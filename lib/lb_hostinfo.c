/* SPDX-License-Identifier: MIT */
/*
 * lb_hostinfo.c - machine and build facts for result metadata.  Every field
 * is always filled: a fact that cannot be read becomes "unknown" (or "none"
 * for a missing cpufreq governor, which is normal in VMs).
 */
#include "lb_hostinfo.h"

#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef LB_BUILD_TYPE
#define LB_BUILD_TYPE "unknown"
#endif
#ifndef LB_GIT_REV
#define LB_GIT_REV "unknown"
#endif
#ifndef LB_VERSION
#define LB_VERSION "unknown"
#endif

#if defined(__clang__)
#define LB_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define LB_COMPILER "gcc " __VERSION__
#else
#define LB_COMPILER "unknown"
#endif

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

/* Strip trailing whitespace (newlines from files, a space in clang's version). */
static void rstrip(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* First line of a sysfs/procfs file, or fallback. */
static void read_line(const char *file, char *dst, size_t len, const char *fallback)
{
	FILE *fp = fopen(file, "re");
	copy(dst, len, fallback);
	if (!fp)
		return;
	if (fgets(dst, (int)len, fp))
		rstrip(dst);
	else
		copy(dst, len, fallback);
	fclose(fp);
}

/* The CPU's name from /proc/cpuinfo; the key differs per architecture. */
static void cpu_model(char *dst, size_t len)
{
	static const char *const keys[] = { "model name", "Processor", "cpu model", "cpu" };
	char line[256];
	FILE *fp = fopen("/proc/cpuinfo", "re");
	copy(dst, len, "unknown");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0'; /* line is now the key, val the value */
		char *val = colon + 1 + strspn(colon + 1, " \t");
		rstrip(line);
		rstrip(val);
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (strcmp(line, keys[i]) == 0 && *val) {
				copy(dst, len, val);
				fclose(fp);
				return;
			}
		}
	}
	fclose(fp);
}

/* CPUs in our affinity mask; grows the mask for machines beyond CPU_SETSIZE. */
static int allowed_cpus(void)
{
	for (int n = CPU_SETSIZE; n <= (1 << 16); n *= 2) {
		cpu_set_t *set = CPU_ALLOC((size_t)n);
		size_t size = CPU_ALLOC_SIZE((size_t)n);
		if (!set)
			break;
		if (sched_getaffinity(0, size, set) == 0) {
			int count = CPU_COUNT_S(size, set);
			CPU_FREE(set);
			return count;
		}
		CPU_FREE(set);
	}
	return -1;
}

void lb_hostinfo_get(struct lb_hostinfo *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	h->ncpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	h->ncpus_allowed = allowed_cpus();
	h->numa_nodes = numa_available() < 0 ? 1 : numa_num_configured_nodes();
	if (h->numa_nodes < 1)
		h->numa_nodes = 1;

	if (uname(&u) == 0) {
		size_t r = strlen(u.release);
		copy(h->kernel, sizeof(h->kernel), u.release);
		if (r + 1 < sizeof(h->kernel)) {
			h->kernel[r] = ' ';
			copy(h->kernel + r + 1, sizeof(h->kernel) - r - 1, u.version);
		}
	} else {
		copy(h->kernel, sizeof(h->kernel), "unknown");
	}
	if (gethostname(h->hostname, sizeof(h->hostname)) != 0)
		copy(h->hostname, sizeof(h->hostname), "unknown");
	h->hostname[sizeof(h->hostname) - 1] = '\0'; /* not terminated on truncation */

	copy(h->compiler, sizeof(h->compiler), LB_COMPILER);
	rstrip(h->compiler);
	copy(h->build_type, sizeof(h->build_type), LB_BUILD_TYPE);
	copy(h->git_rev, sizeof(h->git_rev), LB_GIT_REV);
	copy(h->version, sizeof(h->version), LB_VERSION);
	read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
		  h->cpufreq_governor, sizeof(h->cpufreq_governor), "none");
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  h->clocksource, sizeof(h->clocksource), "unknown");
}

double lb_load_average_now(void)
{
	double load = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	return load;
}

/* Written once by the constructor, before main and any thread: read only. */
static double load_average_at_start = -1;

__attribute__((constructor)) static void snapshot_load_average(void)
{
	load_average_at_start = lb_load_average_now();
}

double lb_load_average_at_start(void)
{
	return load_average_at_start;
}

static long procs_running(void)
{
	long n = -1;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "procs_running %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

double lb_runnable_others(void)
{
	enum { READS = 11 };
	long v[READS];
	for (int i = 0; i < READS; i++) {
		if ((v[i] = procs_running()) < 0)
			return -1;
		struct timespec gap = { 0, 10 * 1000 * 1000 };
		nanosleep(&gap, NULL); /* 10 ms apart: the reads see different moments */
	}
	/* Insertion sort of 11 values for the median. */
	for (int i = 1; i < READS; i++)
		for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
			long t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	long others = v[READS / 2] - 1; /* the reading thread is running itself */
	return others < 0 ? 0 : (double)others;
}
