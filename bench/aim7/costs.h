/* SPDX-License-Identifier: MIT */
/*
 * costs.h - the cost table of `lockbench aim7`: what the real system calls
 * behind re-aim's system tests cost on a running kernel (calibrate.c
 * measures them, `lockbench aim7 --calibrate FILE` writes them), and how the
 * simulated kernel is sized from it (sizing.c).
 *
 * File format (schema "lockbench-aim7-costs", version 1), one item a line,
 * '#' comments and blank lines ignored, at most 64 KiB:
 *
 *   lockbench-aim7-costs 1          first item: the schema name and version
 *   host.KEY free text              host facts (kernel, cpu, cpus, date, load)
 *   dir_entries N                   names in the directory the fs ops ran in
 *   OP NS                           every op of aim_cost_name(), once: ns per op
 *                                   (wall clock)
 *   cpu.OP NS                       optional, every op or none: CPU ns per op
 *                                   (this thread's plus its reaped children's
 *                                   CPU clock over the same timed region)
 *   creat_existing.sleep_frac F     optional: the share of creat()s of an
 *                                   existing name that slept (a voluntary
 *                                   context switch inside the call)
 *   creat_existing.offcpu_ns NS     optional: mean off-CPU time (wall - CPU)
 *                                   of those that slept
 *
 * Tables without the optional lines (written before they existed) still
 * load; the kernel is then sized from wall times and its orphan sections
 * never sleep, which `lockbench aim7` says.
 */
#ifndef LB_AIM7_COSTS_H
#define LB_AIM7_COSTS_H

#include "lb_textfile.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define AIM_COSTS_SCHEMA "lockbench-aim7-costs"
#define AIM_COSTS_VERSION 1

/* The real operations timed (ns per op; "rt" = a write and a read back). */
enum aim_cost_op {
	AIM_COST_GETPID,         /* syscall(SYS_getpid): a bare system call */
	AIM_COST_STAT,           /* stat() of a name in the directory */
	AIM_COST_OPEN_CLOSE,     /* open(O_RDONLY) + close of an existing file */
	AIM_COST_CREAT_EXISTING, /* creat() + close of an existing file (truncate) */
	AIM_COST_CREAT_NEW,      /* creat() + close of a new name (inode set-up) */
	AIM_COST_UNLINK,         /* unlink() of a file */
	AIM_COST_LINK,           /* link() of a new name to an existing file */
	AIM_COST_READDIR,        /* opendir + read every entry + closedir */
	AIM_COST_BRK,            /* one sbrk() of +-1 page, no touch */
	AIM_COST_FAULT,          /* first touch of a page just added by sbrk */
	AIM_COST_FORK_EXIT,      /* fork + _exit + waitpid */
	AIM_COST_FORK_EXEC,      /* fork + exec of a `true` + waitpid */
	AIM_COST_SIGNAL,         /* kill(self, SIGUSR2) and its handler */
	AIM_COST_SHM_COPY,       /* semop -1, memcpy to/from shm, semop +1 */
	AIM_COST_PIPE_RT,        /* pipe round trip at re-aim's sizes */
	AIM_COST_STREAM_RT,      /* socketpair(SOCK_STREAM) round trip */
	AIM_COST_DGRAM_RT,       /* socketpair(SOCK_DGRAM) round trip */
	AIM_COST_TCP_RT,         /* loopback TCP round trip */
	AIM_COST_UDP_RT,         /* loopback UDP round trip */
	AIM_COST_TCP_SETUP,      /* listen, connect, accept, close all */
	AIM_COST_UDP_SETUP,      /* two bound UDP sockets, closed */
	AIM_COST_PIPELINE,       /* 24 KiB through a pipe to another process */
	AIM_COST_FILE_READ,      /* pread of one cached 4 KiB page */
	AIM_COST_FILE_WRITE,     /* pwrite of one 4 KiB page */
	AIM_COST_FSYNC,          /* fsync after a page write (tmpfs/ext4: as is) */
	AIM_NCOSTS
};
const char *aim_cost_name(int op);
const char *aim_cost_what(int op);

struct aim_costs {
	char path[4096];          /* the file read, or "" */
	struct lb_textfile_host host; /* kernel, cpu, cpus, date */
	char host_load[32];
	/* The calibration directory's filesystem and whether it has a
	 * journal (free text, "" when the table does not say): a journal-less
	 * ext4 takes no s_orphan_lock and scans recently deleted inodes on
	 * every create (doc/aim7.md, "The new-name creat"). */
	char host_fs[160];
	unsigned int dir_entries;
	double ns[AIM_NCOSTS];
	/* CPU time of the same calls (cpu.OP), when the table has it. */
	bool have_cpu;
	double cpu_ns[AIM_NCOSTS];
	/* The off-CPU part of a truncating creat (journal waits on ext4). */
	bool have_sleep;
	double creat_sleep_frac, creat_offcpu_ns;
};
/* The times to size from: CPU when the table has them, else wall. */
const double *aim_costs_sizing_ns(const struct aim_costs *c);

/*
 * Parse a table.  0, or -1 with a one-line message ("LINE: ...") in err.
 * Every op must be present once with 0 < ns <= 1e9.
 */
int aim_costs_parse(const char *text, struct aim_costs *c, char *err, size_t errlen);
/* Read and parse a file (at most 64 KiB); the message names the file. */
int aim_costs_load(const char *path, struct aim_costs *c, char *err, size_t errlen);
void aim_costs_write(FILE *out, const struct aim_costs *c);
/* The table shipped for this source tree (bench/aim7/costs/), or NULL. */
const char *aim_costs_default_path(void);

/*
 * Measure every op on the running kernel in a temporary directory under
 * tmpdir (bounded: about budget_s seconds in all).  0, or an errno value
 * with a message in err.
 */
int aim_costs_measure(struct aim_costs *c, const char *tmpdir, double budget_s, char *err,
		      size_t errlen);
/* "ext2/3/4 on vda, no journal (...)": dir's filesystem (cal_fs.c). */
void aim_cal_fs_facts(const char *dir, char *out, size_t len);

#endif /* LB_AIM7_COSTS_H */
