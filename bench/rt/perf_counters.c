/* SPDX-License-Identifier: MIT */
/* perf_counters.c - perf_event_open counters with inherit (see the header). */
#include "perf_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const lb_perf_event_names[LB_PERF_NEVENTS] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles", "instructions",
};

static const struct {
	uint32_t type;
	uint64_t config;
} events[LB_PERF_NEVENTS] = {
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

void lb_perf_open(struct lb_perf_counters *pc)
{
	for (int i = 0; i < LB_PERF_NEVENTS; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = events[i].type;
		a.config = events[i].config;
		a.inherit = 1;        /* threads created from now on count too */
		a.exclude_kernel = 0; /* perf stat counts kernel time as well */
		a.exclude_hv = 1;
		long fd = syscall(SYS_perf_event_open, &a, 0 /* this process */, -1 /* any CPU */,
				  -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == EACCES) {
			a.exclude_kernel = 1; /* perf_event_paranoid 2: user-space only */
			fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		}
		pc->fd[i] = fd < 0 ? -1 : (int)fd;
		pc->err[i] = fd < 0 ? errno : 0;
	}
}

void lb_perf_read_close(struct lb_perf_counters *pc, int64_t values[LB_PERF_NEVENTS])
{
	for (int i = 0; i < LB_PERF_NEVENTS; i++) {
		uint64_t v = 0;
		values[i] = -1;
		if (pc->fd[i] < 0)
			continue;
		if (read(pc->fd[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			values[i] = (int64_t)v;
		close(pc->fd[i]);
		pc->fd[i] = -1;
	}
}
