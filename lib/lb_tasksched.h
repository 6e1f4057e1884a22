/* SPDX-License-Identifier: MIT */
/*
 * lb_tasksched.h - what the scheduler says of one thread: its run state
 * (/proc/PID/task/TID/stat), its CPU time and its run delay, the time it was
 * runnable but waiting for a CPU (/proc/PID/task/TID/schedstat).  The
 * watchdogs (locktorture's, aim7's) judge a window without progress from it:
 * threads asleep in a lock are stuck, threads waiting for a CPU were not
 * given one (an oversubscribed, virtual or emulated machine), which says
 * nothing about the lock (doc/locktorture.md, doc/vm-check.md).
 */
#ifndef LB_TASKSCHED_H
#define LB_TASKSCHED_H

#include <stdbool.h>
#include <stdint.h>

struct lb_tasksched {
	char run_state;       /* 'R', 'S', 'D', ...; '?' unknown */
	bool known;           /* cpu_ns and delay_ns were read */
	uint64_t cpu_ns;      /* time on a CPU */
	uint64_t delay_ns;    /* time runnable, waiting for a CPU */
};

/* The state letter after the command's ')' in /proc/.../stat text; '?'
 * when malformed. */
char lb_tasksched_parse_stat(const char *text);

/* "on_cpu_ns run_delay_ns slices" (/proc/.../schedstat); false when
 * malformed. */
bool lb_tasksched_parse_schedstat(const char *text, uint64_t *cpu_ns, uint64_t *delay_ns);

/* Thread tid of process pid now ('?' and known false where unreadable; a
 * worker process is pid == tid). */
void lb_tasksched_read(int pid, int tid, struct lb_tasksched *s);

#endif /* LB_TASKSCHED_H */
