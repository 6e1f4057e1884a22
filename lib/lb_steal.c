/* SPDX-License-Identifier: MIT */
/* lb_steal.c - /proc/stat's steal time (see lb_steal.h). */
#include "lb_steal.h"
#include "lb_json.h"
#include "lb_wrap.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lb_steal_parse(const char *text, uint64_t *ticks)
{
	/* The aggregate line: "cpu" and a blank, at the start of a line. */
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, "cpu", 3) != 0 || (p[3] != ' ' && p[3] != '\t'))
			continue;
		/* user nice system idle iowait irq softirq steal ... */
		const char *s = p + 3;
		uint64_t v = 0;
		for (int field = 1; field <= 8; field++) {
			while (*s == ' ' || *s == '\t')
				s++;
			if (!isdigit((unsigned char)*s))
				return -1;
			char *end;
			errno = 0;
			v = strtoull(s, &end, 10);
			if (errno)
				return -1;
			s = end;
		}
		*ticks = v;
		return 0;
	}
	return -1;
}

int64_t lb_steal_ticks_now(void)
{
	/* The aggregate line comes first: one read of its first 4 KiB. */
	char buf[4096];
	FILE *fp = fopen("/proc/stat", "re");
	if (!fp)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	uint64_t ticks;
	if (lb_steal_parse(buf, &ticks) || ticks > INT64_MAX)
		return -1;
	return (int64_t)ticks;
}

double lb_steal_seconds(int64_t before, int64_t after)
{
	long hz = sysconf(_SC_CLK_TCK);
	if (before < 0 || after < 0 || hz <= 0)
		return -1;
	return after > before ? (double)(after - before) / (double)hz : 0.0;
}

void lb_steal_note(FILE *out, const char *prefix, double steal_s)
{
	char cont[32];
	/* Wrapped to LB_WIDTH: each further line is the prefix and two spaces. */
	snprintf(cont, sizeof(cont), "%s  ", prefix);
	if (steal_s > 0)
		lb_wrapf(out, cont, "%ssteal time: %.2f s over the run (all CPUs): the hypervisor ran "
			 "other work on these vCPUs, so lock holders and waiters stalled unseen (FIFO "
			 "spinlocks suffer most); figures vary between runs", prefix, steal_s);
}

void lb_steal_json(struct lb_json *j, double steal_s)
{
	if (steal_s >= 0)
		lb_json_kv_double(j, "steal_s", steal_s);
	else
		lb_json_kv_string(j, "steal_s", NULL);
}
