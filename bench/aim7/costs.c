/* SPDX-License-Identifier: MIT */
/*
 * costs.c - the cost table's text format (costs.h): names of the ops,
 * parsing with line-numbered errors, writing, and the shipped default.
 */
#include "costs.h"
#include "aim7_paths.h"
#include "lb_textfile.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name, *what;
} cost_ops[AIM_NCOSTS] = {
	[AIM_COST_GETPID] = { "getpid", "syscall(SYS_getpid): a bare system call" },
	[AIM_COST_STAT] = { "stat", "stat() of a name in the directory" },
	[AIM_COST_OPEN_CLOSE] = { "open_close", "open(O_RDONLY) + close of an existing file" },
	[AIM_COST_CREAT_EXISTING] = { "creat_existing", "creat() + close of an existing file" },
	[AIM_COST_CREAT_NEW] = { "creat_new", "creat() + close of a new name" },
	[AIM_COST_UNLINK] = { "unlink", "unlink() of a file" },
	[AIM_COST_LINK] = { "link", "link() of a new name to an existing file" },
	[AIM_COST_READDIR] = { "readdir", "opendir + read every entry + closedir" },
	[AIM_COST_BRK] = { "brk", "one sbrk() of +-1 page, no touch" },
	[AIM_COST_FAULT] = { "fault", "first touch of a page just added by sbrk" },
	[AIM_COST_FORK_EXIT] = { "fork_exit", "fork + _exit + waitpid" },
	[AIM_COST_FORK_EXEC] = { "fork_exec", "fork + exec of a true + waitpid" },
	[AIM_COST_SIGNAL] = { "signal", "kill(self, SIGUSR2) and its handler" },
	[AIM_COST_SHM_COPY] = { "shm_copy", "semop -1, memcpy to/from SysV shm, semop +1" },
	[AIM_COST_PIPE_RT] = { "pipe_rt", "pipe write + read back, re-aim's sizes" },
	[AIM_COST_STREAM_RT] = { "stream_rt", "socketpair(SOCK_STREAM) write + read back" },
	[AIM_COST_DGRAM_RT] = { "dgram_rt", "socketpair(SOCK_DGRAM) send + receive" },
	[AIM_COST_TCP_RT] = { "tcp_rt", "loopback TCP write + read back" },
	[AIM_COST_UDP_RT] = { "udp_rt", "loopback UDP send + receive" },
	[AIM_COST_TCP_SETUP] = { "tcp_setup", "TCP listen + connect + accept + close" },
	[AIM_COST_UDP_SETUP] = { "udp_setup", "two bound UDP sockets, closed" },
	[AIM_COST_PIPELINE] = { "pipeline", "24 KiB through a pipe to another process" },
	[AIM_COST_FILE_READ] = { "file_read", "pread of one cached 4 KiB page" },
	[AIM_COST_FILE_WRITE] = { "file_write", "pwrite of one 4 KiB page" },
	[AIM_COST_FSYNC] = { "fsync", "fsync after a one-page write" },
};

const char *aim_cost_name(int op)
{
	return op >= 0 && op < AIM_NCOSTS ? cost_ops[op].name : "?";
}

const char *aim_cost_what(int op)
{
	return op >= 0 && op < AIM_NCOSTS ? cost_ops[op].what : "?";
}

const char *aim_costs_default_path(void)
{
	return access(LB_AIM7_SRC_COSTS, R_OK) == 0    ? LB_AIM7_SRC_COSTS
	       : access(LB_AIM7_DATA_COSTS, R_OK) == 0 ? LB_AIM7_DATA_COSTS
						       : NULL;
}

/* A host fact: the rest of the line, trimmed to the field. */
static void set_text(char *dst, size_t len, const char *val)
{
	snprintf(dst, len, "%s", val);
}

static int parse_line(char *line, unsigned int lineno, struct aim_costs *c, bool *have_schema,
		      bool *seen, char *err, size_t errlen)
{
	char *key = line + strspn(line, " \t");
	char *end = key + strcspn(key, " \t");
	char *val = end + strspn(end, " \t");
	if (*end)
		*end = '\0';
	/* trailing blanks of the value */
	size_t vl = strlen(val);
	while (vl && (val[vl - 1] == ' ' || val[vl - 1] == '\t' || val[vl - 1] == '\r'))
		val[--vl] = '\0';
	if (!*have_schema) {
		if (strcmp(key, AIM_COSTS_SCHEMA) != 0 || strcmp(val, "1") != 0) {
			snprintf(err, errlen, "%u: not a cost table: the first item must be '"
				 AIM_COSTS_SCHEMA " 1', got '%s%s%s'", lineno, key, *val ? " " : "",
				 val);
			return -1;
		}
		*have_schema = true;
		return 0;
	}
	if (!strncmp(key, "host.", 5)) {
		const char *h = key + 5;
		if (!strcmp(h, "kernel"))
			set_text(c->host.kernel, sizeof(c->host.kernel), val);
		else if (!strcmp(h, "cpu"))
			set_text(c->host.cpu, sizeof(c->host.cpu), val);
		else if (!strcmp(h, "date"))
			set_text(c->host.date, sizeof(c->host.date), val);
		else if (!strcmp(h, "cpus"))
			set_text(c->host.cpus, sizeof(c->host.cpus), val);
		else if (!strcmp(h, "load"))
			set_text(c->host_load, sizeof(c->host_load), val);
		else if (!strcmp(h, "fs"))
			set_text(c->host_fs, sizeof(c->host_fs), val);
		/* other host facts are kept by nobody and refused by nobody */
		return 0;
	}
	char *num_end;
	errno = 0;
	if (!strcmp(key, "dir_entries")) {
		unsigned long n = strtoul(val, &num_end, 10);
		if (!*val || *num_end || errno || n > 1000000) {
			snprintf(err, errlen, "%u: dir_entries '%s' is not a count 0..1000000", lineno,
				 val);
			return -1;
		}
		c->dir_entries = (unsigned int)n;
		return 0;
	}
	if (!strcmp(key, "creat_existing.sleep_frac") || !strcmp(key, "creat_existing.offcpu_ns")) {
		bool frac = !strcmp(key, "creat_existing.sleep_frac");
		double v = strtod(val, &num_end);
		if (!*val || *num_end || errno || !isfinite(v) || v < 0 || v > (frac ? 1 : 1e9)) {
			snprintf(err, errlen, "%u: %s: '%s' is not %s", lineno, key, val,
				 frac ? "a fraction 0..1" : "a time in ns (0..1e9)");
			return -1;
		}
		*(frac ? &c->creat_sleep_frac : &c->creat_offcpu_ns) = v;
		c->have_sleep = true;
		return 0;
	}
	bool cpu = !strncmp(key, "cpu.", 4);
	int op = -1;
	for (int i = 0; i < AIM_NCOSTS && op < 0; i++)
		if (!strcmp(key + (cpu ? 4 : 0), cost_ops[i].name))
			op = i + (cpu ? AIM_NCOSTS : 0);
	if (op < 0) {
		snprintf(err, errlen, "%u: unknown item '%s'; accepted: host.*, dir_entries and the "
			 "ops (getpid, stat, ..., fsync; see doc/aim7.md)", lineno, key);
		return -1;
	}
	double ns = strtod(val, &num_end);
	if (!*val || *num_end || errno || !isfinite(ns) || ns <= 0 || ns > 1e9) {
		snprintf(err, errlen, "%u: %s: '%s' is not a time in ns (0 < ns <= 1e9)", lineno, key,
			 val);
		return -1;
	}
	if (seen[op]) {
		snprintf(err, errlen, "%u: %s given twice", lineno, key);
		return -1;
	}
	seen[op] = true;
	if (op >= AIM_NCOSTS)
		c->cpu_ns[op - AIM_NCOSTS] = ns;
	else
		c->ns[op] = ns;
	return 0;
}

int aim_costs_parse(const char *text, struct aim_costs *c, char *err, size_t errlen)
{
	bool have_schema = false, seen[2 * AIM_NCOSTS] = { false };
	char line[512];
	unsigned int lineno = 0;
	memset(c, 0, sizeof(*c));
	int more;
	while ((more = lb_textfile_next_line(&text, line, sizeof(line), &lineno, err, errlen)) > 0)
		if (parse_line(line, lineno, c, &have_schema, seen, err, errlen))
			return -1;
	if (more < 0)
		return -1;
	if (!have_schema) {
		snprintf(err, errlen, "empty: not a cost table (want '" AIM_COSTS_SCHEMA " 1' first)");
		return -1;
	}
	for (int i = 0; i < AIM_NCOSTS; i++)
		if (!seen[i]) {
			snprintf(err, errlen, "op '%s' missing (every op is required)",
				 cost_ops[i].name);
			return -1;
		}
	/* CPU times: all ops or none (a table sized half from each would not
	 * say which it was). */
	int ncpu = 0;
	for (int i = 0; i < AIM_NCOSTS; i++)
		ncpu += seen[AIM_NCOSTS + i];
	if (ncpu && ncpu < AIM_NCOSTS) {
		for (int i = 0; i < AIM_NCOSTS; i++)
			if (!seen[AIM_NCOSTS + i]) {
				snprintf(err, errlen, "cpu.%s missing (CPU times: every op or none)",
					 cost_ops[i].name);
				return -1;
			}
	}
	c->have_cpu = ncpu == AIM_NCOSTS;
	return 0;
}

/* lb_textfile_parser's shape of the parser. */
static int parse_text(const char *text, void *c, char *err, size_t errlen)
{
	return aim_costs_parse(text, c, err, errlen);
}

int aim_costs_load(const char *path, struct aim_costs *c, char *err, size_t errlen)
{
	if (lb_textfile_load(path, 64 * 1024, parse_text, c, err, errlen))
		return -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

void aim_costs_write(FILE *out, const struct aim_costs *c)
{
	fprintf(out, "# SPDX-License-Identifier: MIT\n"
		     "# lockbench aim7 cost table: ns per real system call on the kernel below,\n"
		     "# written by `lockbench aim7 --calibrate FILE` (doc/aim7.md, \"Calibration\").\n"
		     AIM_COSTS_SCHEMA " %d\n", AIM_COSTS_VERSION);
	fprintf(out, "host.kernel %s\nhost.cpu %s\nhost.cpus %s\nhost.date %s\nhost.load %s\n",
		c->host.kernel, c->host.cpu, c->host.cpus, c->host.date, c->host_load);
	if (c->host_fs[0])
		fprintf(out, "host.fs %s\n", c->host_fs);
	fprintf(out, "dir_entries %u\n", c->dir_entries);
	for (int i = 0; i < AIM_NCOSTS; i++)
		fprintf(out, "%-15s %10.1f   # %s\n", cost_ops[i].name, c->ns[i], cost_ops[i].what);
	if (c->have_cpu) {
		fprintf(out, "# CPU time of the same calls (this thread + reaped children);\n"
			     "# wall - CPU is the off-CPU part (I/O and other waits)\n");
		for (int i = 0; i < AIM_NCOSTS; i++)
			fprintf(out, "cpu.%-15s %10.1f\n", cost_ops[i].name, c->cpu_ns[i]);
	}
	if (c->have_sleep)
		fprintf(out, "# truncating creat()s that slept (a voluntary switch), and their\n"
			     "# mean off-CPU time: the journal waits of ext4_orphan_add/del\n"
			     "creat_existing.sleep_frac %.6f\ncreat_existing.offcpu_ns %.1f\n",
			c->creat_sleep_frac, c->creat_offcpu_ns);
}

const double *aim_costs_sizing_ns(const struct aim_costs *c)
{
	return c->have_cpu ? c->cpu_ns : c->ns;
}
