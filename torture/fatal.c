/* SPDX-License-Identifier: MIT */
/* fatal.c - the fatal-signal report (see fatal.h). */
#include "fatal.h"
#include "stats.h"
#include "workers.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALT_STACK_SIZE (64 * 1024)

/*
 * Globals, because a signal handler cannot be handed a context: the run
 * being tortured and its pre-formatted End banner (written once, before
 * any worker starts, read-only afterwards), and which worker this thread
 * is (thread-local; NULL in main and helper threads).
 */
static struct lb_torture_run *fatal_run;
static char fatal_banner[4096];
static size_t fatal_banner_len;
static char fatal_replay[4096];
static size_t fatal_replay_len;
static _Atomic int fatal_entered;
static _Thread_local struct lb_torture_thread *fatal_self;
static _Thread_local void *fatal_alt_stack;

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	}
	return "signal";
}

/* A line under construction; every append is bounded and signal-safe. */
struct line {
	char buf[512];
	size_t len;
};

static void put_str(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, long long v)
{
	char digits[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	if (v < 0)
		put_str(l, "-");
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = digits[--n];
}

static void emit(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, buf, len);
		if (n <= 0)
			return; /* nothing sensible to do about a broken stdout here */
		buf += n;
		len -= (size_t)n;
	}
}

/* The stats line, as lb_torture_format_stats() writes it, without stdio. */
static void emit_stats(const struct lb_torture_run *run, bool write_side)
{
	struct lb_torture_totals t;
	struct line l = { .len = 0 };
	lb_torture_collect(run, write_side, &t);
	put_str(&l, write_side ? "Writes:  Total: " : "Reads :  Total: ");
	put_num(&l, t.sum);
	put_str(&l, "  Max/Min: ");
	put_num(&l, t.max);
	put_str(&l, "/");
	put_num(&l, t.min);
	put_str(&l, !run->cfg.onoff_interval && t.max / 2 > t.min ? " ???" : " ");
	put_str(&l, "  Fail: ");
	put_str(&l, t.fail ? "1 !!!\n" : "0 \n");
	emit(l.buf, l.len);
}

/*
 * The exclusion counter at the signal, independent of whatever aborted: a
 * lock whose misuse check fires on the second owner's unlock has let two
 * threads in, and the counter (relaxed loads: lock-free, signal-safe) says
 * so.  The holders word counts writers in its high half, readers in its low.
 */
static void emit_exclusion(const struct lb_torture_run *run)
{
	uint64_t h = atomic_load_explicit(&run->holders, memory_order_relaxed);
	long long writers = (long long)(h >> 32), readers = (long long)(h & 0xffffffffu);
	struct line l = { .len = 0 };
	put_str(&l, run->cfg.type);
	put_str(&l, LB_TORTURE_FLAG);
	put_str(&l, writers > 1 || (writers && readers && !run->rcu) ? "!!! " : " ");
	put_str(&l, "exclusion counter at the signal: ");
	put_num(&l, writers);
	put_str(&l, " writer(s), ");
	put_num(&l, readers);
	put_str(&l, " reader(s) inside");
	if (writers > 1)
		put_str(&l, ": two write owners at once");
	put_str(&l, "\n");
	emit(l.buf, l.len);
}

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
	(void)info;
	(void)uctx;
	/* A second thread faulting while the first reports: let the first finish. */
	if (atomic_exchange_explicit(&fatal_entered, 1, memory_order_relaxed)) {
		for (;;)
			pause();
	}
	const struct lb_torture_run *run = fatal_run;
	struct line l = { .len = 0 };
	put_str(&l, "\n");
	put_str(&l, run->cfg.type);
	put_str(&l, LB_TORTURE_FLAG "!!! fatal signal ");
	put_str(&l, signal_name(sig));
	put_str(&l, " in ");
	if (fatal_self) {
		put_str(&l, lb_torture_role(fatal_self));
		put_str(&l, " ");
		put_num(&l, fatal_self->id);
	} else {
		put_str(&l, "a non-worker thread");
	}
	if (sig == SIGABRT)
		put_str(&l, " (an abort: the lock's own message, if any, is on stderr)");
	put_str(&l, "\n");
	emit(l.buf, l.len);
	emit_exclusion(run);
	emit_stats(run, true);
	if (run->ops->read_lock)
		emit_stats(run, false);
	emit(fatal_replay, fatal_replay_len);
	emit(fatal_banner, fatal_banner_len);
	_exit(1);
}

void lb_torture_fatal_install(struct lb_torture_run *run, const char *replay)
{
	size_t r = strlen(replay);
	fatal_replay_len = r < sizeof(fatal_replay) ? r : sizeof(fatal_replay) - 1;
	memcpy(fatal_replay, replay, fatal_replay_len);
#ifdef NDEBUG
	bool debug = false;
#else
	bool debug = true;
#endif
	int n = lb_torture_format_banner(fatal_banner, sizeof(fatal_banner), &run->cfg,
					 "End of test: FAILURE", debug);
	fatal_banner_len = n < 0 ? 0 : (size_t)n < sizeof(fatal_banner) ? (size_t)n
									 : sizeof(fatal_banner) - 1;
	fatal_run = run;
	struct sigaction sa = { .sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, NULL);
}

void lb_torture_fatal_enter_thread(struct lb_torture_thread *t)
{
	fatal_self = t;
	fatal_alt_stack = malloc(ALT_STACK_SIZE);
	if (fatal_alt_stack) {
		stack_t ss = { .ss_sp = fatal_alt_stack, .ss_size = ALT_STACK_SIZE };
		if (sigaltstack(&ss, NULL) != 0) {
			free(fatal_alt_stack);
			fatal_alt_stack = NULL;
		}
	}
}

void lb_torture_fatal_leave_thread(void)
{
	if (fatal_alt_stack) {
		stack_t ss = { .ss_flags = SS_DISABLE };
		sigaltstack(&ss, NULL);
		free(fatal_alt_stack);
		fatal_alt_stack = NULL;
	}
	fatal_self = NULL;
}
