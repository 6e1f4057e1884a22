/* SPDX-License-Identifier: MIT */
/* lb_tasksched.c - a thread's run state, CPU time and run delay (see the header). */
#include "lb_tasksched.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

char lb_tasksched_parse_stat(const char *text)
{
	/* "pid (comm) S ...": comm may hold spaces and ')', so the last ')'. */
	const char *p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2] || p[2] == ' ' || p[2] == '\n')
		return '?';
	return p[2];
}

bool lb_tasksched_parse_schedstat(const char *text, uint64_t *cpu_ns, uint64_t *delay_ns)
{
	uint64_t on, delay;
	if (sscanf(text, "%" SCNu64 " %" SCNu64, &on, &delay) != 2)
		return false;
	*cpu_ns = on;
	*delay_ns = delay;
	return true;
}

/* A small /proc file into buf (NUL-terminated); false when unreadable. */
static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

void lb_tasksched_read(int pid, int tid, struct lb_tasksched *s)
{
	char path[80], buf[512];
	s->run_state = '?';
	s->known = false;
	s->cpu_ns = s->delay_ns = 0;
	if (pid <= 0 || tid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)))
		s->run_state = lb_tasksched_parse_stat(buf);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (read_small(path, buf, sizeof(buf)))
		s->known = lb_tasksched_parse_schedstat(buf, &s->cpu_ns, &s->delay_ns);
}
