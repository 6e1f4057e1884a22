/* SPDX-License-Identifier: MIT */
/*
 * test_progress.c - lib/lb_progress: the clock and ETA arithmetic, one
 * newline-ended line per finished step off a terminal (never a carriage
 * return), the redrawn line and the ticker on a terminal, quiet = nothing.
 * The stream is a temporary file; `tty` is forced (the commands' own pty
 * and file checks are in tests/test_progress_cmds.py).
 */
#include "lb_progress.h"
#include "lb_time.h"
#include "tap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The progress being read, when its ticker may be writing: contents()
 * moves the stream's position, so it holds the progress's own lock. */
static struct lb_progress *reading;

/* Everything written to f so far, NUL-terminated (static buffer). */
static const char *contents(FILE *f)
{
	static char buf[8192];
	if (reading)
		pthread_mutex_lock(&reading->lock);
	fflush(f);
	long end = ftell(f);
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fseek(f, end, SEEK_SET);
	if (reading)
		pthread_mutex_unlock(&reading->lock);
	return buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_arithmetic(void)
{
	char b[16];
	tap_ok(!strcmp(lb_progress_clock(0, b, sizeof(b)), "0:00") &&
	       !strcmp(lb_progress_clock(61400000000ull, b, sizeof(b)), "1:01") &&
	       !strcmp(lb_progress_clock(3725ull * LB_NS_PER_S, b, sizeof(b)), "1:02:05"),
	       "clock: 0:00, 1:01, 1:02:05");
	tap_ok(lb_progress_eta_ns(10, 4, 8 * LB_NS_PER_S, 0) == 12 * LB_NS_PER_S,
	       "ETA from the steps: 4 of 10 done in 8 s -> 12 s left");
	tap_ok(lb_progress_eta_ns(10, 4, 8 * LB_NS_PER_S, 20 * LB_NS_PER_S) == 12 * LB_NS_PER_S &&
	       lb_progress_eta_ns(10, 4, 25 * LB_NS_PER_S, 20 * LB_NS_PER_S) == 0,
	       "ETA from a known run time: 20 s expected, 8 s gone -> 12 s; overdue -> 0");
	tap_ok(lb_progress_eta_ns(10, 0, 5 * LB_NS_PER_S, 0) == 0 &&
	       lb_progress_eta_ns(3, 3, 5 * LB_NS_PER_S, 0) == 0, "no step done, or all: 0");
}

static void test_file(void)
{
	FILE *f = tmpfile();
	struct lb_progress p;
	lb_progress_begin(&p, f, false, 3, 0, 0);
	lb_progress_step(&p, "tas, %d threads", 8);
	const char *s = contents(f);
	tap_ok(s[0] == '\0', "off a terminal a step's start prints nothing (%zu bytes)", strlen(s));
	lb_progress_step_done(&p);
	lb_progress_step(&p, "ticket, %d threads", 8);
	lb_progress_clear(&p);
	lb_progress_step_done(&p);
	lb_progress_end(&p);
	s = contents(f);
	tap_ok(count(s, "\n") == 2 && s[strlen(s) - 1] == '\n' && !strchr(s, '\r'),
	       "off a terminal: one newline-ended line per finished step, no carriage return");
	tap_ok(strstr(s, "[1/3] tas, 8 threads: done in ") && strstr(s, "[2/3] ticket, 8 threads: ") &&
	       count(s, " elapsed, ETA ") == 2, "each line: [i/N], the step, its time, elapsed, ETA");
	fclose(f);
}

/* ab's thinned progress (a line a second at most) off a terminal: however
 * many steps were thinned out, the output ends in a newline -- the last
 * step's line comes at the end, never a line left open. */
static void test_file_thinned(void)
{
	FILE *f = tmpfile();
	struct lb_progress p;
	lb_progress_begin(&p, f, false, 0, 4 * LB_NS_PER_S, 0);
	lb_progress_line_every(&p, 3600 * LB_NS_PER_S);
	for (int i = 0; i < 50; i++) {
		lb_progress_step(&p, "ab: block %d, 1 thread", i + 1);
		lb_progress_step_done(&p);
	}
	lb_progress_end(&p);
	const char *s = contents(f);
	size_t n = strlen(s);
	tap_ok(n > 0 && s[n - 1] == '\n' && count(s, "\n") == 1 && !strchr(s, '\r') &&
	       strstr(s, "[50] ab: block 50, 1 thread: done in "),
	       "off a terminal, 50 thinned steps: one line, the last step's, newline-ended");
	fclose(f);
}

static void test_terminal(void)
{
	FILE *f = tmpfile();
	struct lb_progress p;
	lb_progress_begin(&p, f, false, 2, 2 * LB_NS_PER_S, 1);
	reading = &p; /* its ticker runs from here to lb_progress_end */
	lb_progress_step(&p, "a long step");
	size_t first = strlen(contents(f));
	tap_ok(first > 0 && contents(f)[0] == '\r' && strstr(contents(f), "[1/2] a long step: 0:00 "
								   "elapsed, ETA 0:02"),
	       "on a terminal the step's line is drawn at once, ETA from the known run time");
	/* 2.5 s inside one step: the ticker redraws about once a second. */
	struct timespec ts = { 2, 500000000 };
	nanosleep(&ts, NULL);
	const char *s = contents(f);
	tap_ok(count(s, "\r") >= 2 && (strstr(s, "0:01 elapsed") || strstr(s, "0:02 elapsed")),
	       "a step of 2.5 s is redrawn by the ticker (%zu redraws)", count(s, "\r"));
	lb_progress_clear(&p);
	size_t cleared = strlen(contents(f));
	ts = (struct timespec){ 1, 300000000 };
	nanosleep(&ts, NULL);
	tap_ok(strlen(contents(f)) == cleared && contents(f)[cleared - 1] == '\r',
	       "after clear() the line is blank and the ticker keeps off it until the next step");
	lb_progress_step_done(&p);
	reading = NULL; /* lb_progress_end destroys the lock */
	lb_progress_end(&p);
	s = contents(f);
	tap_ok(!strchr(s, '\n'), "on a terminal nothing ends a line (the table's own lines do)");
	fclose(f);
}

static void test_quiet(void)
{
	FILE *f = tmpfile();
	struct lb_progress p;
	lb_progress_begin(&p, f, true, 2, 0, 1);
	lb_progress_step(&p, "x");
	lb_progress_step_done(&p);
	lb_progress_clear(&p);
	lb_progress_end(&p);
	tap_ok(contents(f)[0] == '\0', "quiet: nothing written, on a terminal or not");
	fclose(f);
}

int main(void)
{
	test_arithmetic();
	test_file();
	test_file_thinned();
	test_terminal();
	test_quiet();
	return tap_done();
}
