/* SPDX-License-Identifier: MIT */
/*
 * steal_shim.c - LD_PRELOAD shim for the steal-time report tests: every
 * fopen of /proc/stat gets a made-up text whose steal field grows by
 * LB_SHIM_STEAL_STEP ticks (default 150) at each open, so the runs under it
 * saw steal time.  Other files open as usual.
 */
/* Both names defined here: no redirection of fopen to fopen64. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *fake_stat(void)
{
	static unsigned long long opens;
	const char *env = getenv("LB_SHIM_STEAL_STEP");
	unsigned long long step = env ? strtoull(env, NULL, 10) : 150;
	static char text[256];
	unsigned long long steal = 1000 + step * opens++;
	int n = snprintf(text, sizeof(text),
			 "cpu  100 0 100 1000 0 0 0 %llu 0 0\ncpu0 100 0 100 1000 0 0 0 %llu 0 0\n"
			 "procs_running 1\nprocs_blocked 0\n", steal, steal);
	return fmemopen(text, (size_t)n, "r");
}

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);
	if (path && strcmp(path, "/proc/stat") == 0)
		return fake_stat();
	if (!real)
		real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
	return real(path, mode);
}

FILE *fopen64(const char *path, const char *mode);
FILE *fopen64(const char *path, const char *mode)
{
	return fopen(path, mode);
}
