/* SPDX-License-Identifier: MIT */
/*
 * lb_progress.h - progress a person can follow, the same in every command.
 *
 * A command announces the steps of its run (a cell's repeat, a block, a
 * load point).  On a terminal one status line is redrawn in place:
 *
 *	lockbench: [3/12] tas, 8 threads: 0:04 elapsed, ETA 0:11
 *
 * and a ticker thread redraws it every second, so a long step never leaves
 * the terminal silent.  Anywhere else (a log file, a pipe, CI) there is no
 * carriage return: one line per finished step, each ending in a newline:
 *
 *	lockbench: [3/12] tas, 8 threads: done in 1.0 s; 0:04 elapsed, ETA 0:11
 *
 * The ETA is the elapsed time per finished step times the steps left, or,
 * when the command knows how long the whole run should take (a fixed
 * --duration), that estimate less the time elapsed; "-:--" before either
 * is known.  Quiet: nothing at all.
 * Not thread-safe across commands' threads: one thread drives a progress
 * (the ticker takes the struct's own lock).
 */
#ifndef LB_PROGRESS_H
#define LB_PROGRESS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct lb_progress {
	FILE *out;
	bool enabled, tty, ticking, stop_ticker;
	bool hidden;           /* cleared for the command's own output: no redraw */
	unsigned int total, done;
	uint64_t t0_ns, step_t0_ns, expected_ns;
	uint64_t line_every_ns; /* off a terminal: at most a line this often (0: every step) */
	uint64_t line_ns;       /* when the last line was written */
	bool unsaid;            /* a finished step whose line was thinned out */
	size_t drawn;          /* columns of the status line now on the terminal */
	char step[96];         /* the running step's text */
	pthread_mutex_t lock;  /* out, drawn and step, against the ticker */
	pthread_cond_t wake;
	pthread_t ticker;
};

/*
 * Start a progress of `total` steps on `out` (stderr in every command);
 * total 0: steps not counted in advance (shown as [i], the ETA from
 * expected_ns alone).
 * quiet: off.  expected_ns: how long the whole run should take, 0: not
 * known (the ETA then comes from the finished steps).  tty: -1 ask
 * isatty(out), 0 or 1 force it (tests).
 */
void lb_progress_begin(struct lb_progress *p, FILE *out, bool quiet, unsigned int total,
		       uint64_t expected_ns, int tty);
/* Off a terminal, at most one line per `ns` (and the last step's at the end):
 * for commands whose steps are many and short (ab's blocks).  Call after
 * begin. */
static inline void lb_progress_line_every(struct lb_progress *p, uint64_t ns)
{
	p->line_every_ns = ns;
}
/* A step begins: its text (printf format).  On a terminal, redrawn now. */
void lb_progress_step(struct lb_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The step that began last is finished (off a terminal: its line). */
void lb_progress_step_done(struct lb_progress *p);
/* The same, its line saying what the step found ("Time 0.63 s"). */
void lb_progress_step_done_note(struct lb_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Before the command prints to the terminal: clear the status line and
 * keep it off (the ticker too) until the next step. */
void lb_progress_clear(struct lb_progress *p);
/*
 * A line of the command's own output while a status line may be on the
 * terminal, from any thread: on a terminal the status line is cleared
 * first, under the lock the ticker redraws with, so the two never share a
 * line, and the ticker draws it again at its next tick.  Otherwise (p
 * NULL, quiet, not a terminal) a plain vfprintf.  Not after
 * lb_progress_end().
 */
void lb_progress_vprintf(struct lb_progress *p, FILE *out, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* The run is over (or cut short): stop the ticker, clear the line. */
void lb_progress_end(struct lb_progress *p);

/* "M:SS" (or "H:MM:SS") of ns into buf; returns buf.  For tests too. */
char *lb_progress_clock(uint64_t ns, char *buf, size_t size);
/* The ETA in ns: the rule above, from the counts and times given. */
uint64_t lb_progress_eta_ns(unsigned int total, unsigned int done, uint64_t elapsed_ns,
			    uint64_t expected_ns);

#endif /* LB_PROGRESS_H */
