/* SPDX-License-Identifier: MIT */
/* procmode.c - locktorture -P: one shared mapping, forked workers, reaping. */
#include "procmode.h"
#include "out.h"
#include "perturb.h"
#include "tsan_hook.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* Everything run.c and workers.c carve, each piece on its own lines, with
 * a cache line of slack per piece for its alignment. */
static size_t map_size(const struct lb_torture_config *cfg)
{
	const struct lb_lock_ops *ops = cfg->ops;
	size_t line = LB_CACHELINE;
	size_t nthreads = (size_t)cfg->nwriters_stress + (size_t)cfg->nreaders_stress;
	size_t nlocks = 1 + (size_t)cfg->nested_locks;
	size_t lock_align = ops->lock_align > line ? ops->lock_align : line;
	size_t nctx = ops->thread_ctx_size ? nthreads * nlocks : 0;
	size_t size = round_up(sizeof(struct lb_torture_run), line) + line;
	size += round_up(nthreads * sizeof(struct lb_torture_thread), line) + line;
	size += nlocks * (round_up(ops->lock_size, lock_align) + lock_align);
	size += nctx * (round_up(ops->thread_ctx_size, line) + line);
	size += round_up(lb_perturb_tally_size(), line) + line;
	return round_up(size, (size_t)sysconf(_SC_PAGESIZE));
}

struct lb_torture_run *lb_torture_proc_map(const struct lb_torture_config *cfg)
{
	size_t size = map_size(cfg);
	/* Anonymous shared memory is zeroed: the initial state of every atomic. */
	void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	struct lb_torture_run *run = base;
	run->shared_map = base;
	run->shared_size = size;
	run->shared_used = round_up(sizeof(*run), LB_CACHELINE);
	void *tally = lb_torture_proc_carve(run, lb_perturb_tally_size(), LB_CACHELINE);
	if (tally)
		lb_perturb_share_tally(tally);
	return run;
}

void *lb_torture_proc_carve(struct lb_torture_run *run, size_t size, size_t align)
{
	if (align < LB_CACHELINE)
		align = LB_CACHELINE;
	uintptr_t base = (uintptr_t)run->shared_map;
	size_t at = round_up(base + run->shared_used, align) - base;
	size_t end = round_up(at + size, LB_CACHELINE);
	if (end > run->shared_size)
		return NULL;
	run->shared_used = end;
	return (char *)run->shared_map + at;
}

/* The worker process: dies with main, runs fn, reports a sanitizer's
 * findings through its exit status (66, TSan's own). */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void worker_main(struct lb_torture_thread *t, void *(*fn)(void *), const cpu_set_t *set,
			const cpu_set_t *allowed, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* main died before the line above */
		_exit(1);
	/* A CPU set the kernel refuses: run anywhere we may rather than not at all. */
	if (sched_setaffinity(0, sizeof(*set), set))
		sched_setaffinity(0, sizeof(*allowed), allowed);
	/* Workers start as SCHED_OTHER whatever main runs at. */
	struct sched_param sp = { .sched_priority = 0 };
	sched_setscheduler(0, SCHED_OTHER, &sp);
	fn(t);
	fflush(stdout);
	_exit(lb_torture_tsan_reports() ? 66 : 0);
}

int lb_torture_proc_spawn(struct lb_torture_run *run, struct lb_torture_thread *t,
			  void *(*fn)(void *), const cpu_set_t *set)
{
	pid_t parent = getpid();
	/* Nothing buffered may be written twice, once by each process. */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0)
		worker_main(t, fn, set, &run->cfg.allowed, parent);
	t->pid = pid;
	t->created = true;
	return 0;
}

int lb_torture_proc_reap(struct lb_torture_run *run)
{
	int bad = 0;
	for (int i = 0; i < run->nthreads; i++) {
		struct lb_torture_thread *t = &run->threads[i];
		int status;
		if (!t->pid)
			continue;
		pid_t got;
		do
			got = waitpid(t->pid, &status, 0);
		while (got < 0 && errno == EINTR);
		t->pid = 0;
		if (got < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
			continue;
		bad++;
		if (WIFSIGNALED(status))
			lb_torture_printf("%s%s!!! %s %d: its process was killed by %s\n", run->cfg.type,
					  LB_TORTURE_FLAG, t->writer ? "writer" : "reader", t->id,
					  strsignal(WTERMSIG(status)));
		else
			lb_torture_printf("%s%s!!! %s %d: its process exited with status %d%s\n",
					  run->cfg.type, LB_TORTURE_FLAG, t->writer ? "writer" : "reader",
					  t->id, WEXITSTATUS(status),
					  WEXITSTATUS(status) == 66 ? " (ThreadSanitizer reports, see stderr)"
							 : "");
	}
	return bad;
}

void lb_torture_proc_kill_all(const struct lb_torture_run *run)
{
	for (int i = 0; i < run->nthreads; i++)
		if (run->threads[i].pid > 0)
			kill(run->threads[i].pid, SIGKILL);
}

void lb_torture_proc_unmap(struct lb_torture_run *run)
{
	munmap(run->shared_map, run->shared_size);
}
