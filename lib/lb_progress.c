/* SPDX-License-Identifier: MIT */
/* lb_progress.c - see lb_progress.h. */
#include "lb_progress.h"

#include "lb_cli.h"
#include "lb_time.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS LB_NS_PER_S

char *lb_progress_clock(uint64_t ns, char *buf, size_t size)
{
	uint64_t s = (ns + LB_NS_PER_S / 2) / LB_NS_PER_S;
	if (s >= 3600)
		snprintf(buf, size, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else
		snprintf(buf, size, "%llu:%02llu", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	return buf;
}

uint64_t lb_progress_eta_ns(unsigned int total, unsigned int done, uint64_t elapsed_ns,
			    uint64_t expected_ns)
{
	if (expected_ns)
		return expected_ns > elapsed_ns ? expected_ns - elapsed_ns : 0;
	if (!done || done >= total)
		return 0;
	return (uint64_t)((double)elapsed_ns / done * (total - done));
}

/* The ETA as text: "-:--" until it means something (a step done of a
 * counted run, or the run time known). */
static const char *eta_text(const struct lb_progress *p, uint64_t elapsed, char *buf, size_t size)
{
	if (!p->expected_ns && !(p->done && p->total))
		return "-:--";
	return lb_progress_clock(lb_progress_eta_ns(p->total, p->done, elapsed, p->expected_ns),
				 buf, size);
}

/* "i/N", or "i" for a run of steps not counted in advance (total 0). */
static void step_count(const struct lb_progress *p, unsigned int i, char *buf, size_t size)
{
	if (p->total)
		snprintf(buf, size, "%u/%u", i, p->total);
	else
		snprintf(buf, size, "%u", i);
}

/* "[i/N] step: E elapsed, ETA T" (T "-:--" until a step is done, unless the
 * command knows the run time). */
static size_t status_text(const struct lb_progress *p, uint64_t now, char *buf, size_t size)
{
	char el[16], eta[16];
	uint64_t elapsed = now - p->t0_ns;
	char count[32];
	step_count(p, p->done < p->total || !p->total ? p->done + 1 : p->total, count,
		   sizeof(count));
	int n = snprintf(buf, size, "%s: [%s] %s: %s elapsed, ETA %s", lb_cli_prog(), count, p->step,
			 lb_progress_clock(elapsed, el, sizeof(el)), eta_text(p, elapsed, eta, sizeof(eta)));
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* On a terminal, with p->lock held: the status line, drawn over the last. */
static void redraw(struct lb_progress *p)
{
	char buf[256];
	size_t n = status_text(p, lb_now_ns(), buf, sizeof(buf));
	fprintf(p->out, "\r%s", buf);
	for (size_t i = n; i < p->drawn; i++)
		fputc(' ', p->out);
	if (n < p->drawn)
		fprintf(p->out, "\r%s", buf);
	p->drawn = n;
	fflush(p->out);
}

static void clear_locked(struct lb_progress *p)
{
	if (!p->drawn)
		return;
	fputc('\r', p->out);
	for (size_t i = 0; i < p->drawn; i++)
		fputc(' ', p->out);
	fputc('\r', p->out);
	fflush(p->out);
	p->drawn = 0;
}

/* The ticker: a redraw a second while a step runs, so a terminal is never
 * silent for long.  Sleeps on the condition variable, which end() signals. */
static void *ticker_main(void *arg)
{
	struct lb_progress *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->stop_ticker) {
		struct timespec at;
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += TICK_NS / LB_NS_PER_S;
		int e = pthread_cond_timedwait(&p->wake, &p->lock, &at);
		if (e == ETIMEDOUT && !p->stop_ticker && !p->hidden && p->step[0])
			redraw(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void lb_progress_begin(struct lb_progress *p, FILE *out, bool quiet, unsigned int total,
		       uint64_t expected_ns, int tty)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->enabled = !quiet;
	p->tty = tty < 0 ? isatty(fileno(out)) == 1 : tty != 0;
	p->total = total;
	p->expected_ns = expected_ns;
	p->t0_ns = p->line_ns = lb_now_ns();
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (p->enabled && p->tty) {
		/* SCHED_OTHER whatever the caller runs at: a command may have made
		 * its main thread SCHED_FIFO, and a redraw must never compete with
		 * the measured threads. */
		pthread_attr_t a;
		struct sched_param sp = { .sched_priority = 0 };
		pthread_attr_init(&a);
		pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&a, SCHED_OTHER);
		pthread_attr_setschedparam(&a, &sp);
		p->ticking = pthread_create(&p->ticker, &a, ticker_main, p) == 0;
		pthread_attr_destroy(&a);
	}
}

void lb_progress_step(struct lb_progress *p, const char *fmt, ...)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->step, sizeof(p->step), fmt, ap);
	va_end(ap);
	p->step_t0_ns = lb_now_ns();
	p->hidden = false;
	if (p->tty)
		redraw(p);
	pthread_mutex_unlock(&p->lock);
}

/* Off a terminal, with p->lock held: the line of the last finished step. */
static void done_line(struct lb_progress *p, uint64_t now, const char *note)
{
	char el[16], eta[16], count[32];
	uint64_t elapsed = now - p->t0_ns;
	step_count(p, p->done, count, sizeof(count));
	fprintf(p->out, "%s: [%s] %s: done in %.1f s%s%s; %s elapsed, ETA %s\n", lb_cli_prog(),
		count, p->step, (double)(now - p->step_t0_ns) / LB_NS_PER_S, note[0] ? ", " : "",
		note, lb_progress_clock(elapsed, el, sizeof(el)), eta_text(p, elapsed, eta, sizeof(eta)));
	fflush(p->out);
	p->line_ns = now;
	p->unsaid = false;
}

/* The step is finished; off a terminal, its line with `note` (may be ""),
 * or, with line_every_ns, only once that long has passed since the last. */
static void step_done(struct lb_progress *p, const char *note)
{
	pthread_mutex_lock(&p->lock);
	uint64_t now = lb_now_ns();
	if (p->done < p->total || !p->total)
		p->done++;
	if (!p->tty) {
		if (!p->line_every_ns || now - p->line_ns >= p->line_every_ns)
			done_line(p, now, note);
		else
			p->unsaid = true;
	}
	pthread_mutex_unlock(&p->lock);
}

void lb_progress_step_done(struct lb_progress *p)
{
	if (p->enabled)
		step_done(p, "");
}

void lb_progress_step_done_note(struct lb_progress *p, const char *fmt, ...)
{
	if (!p->enabled)
		return;
	char note[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	step_done(p, note);
}

void lb_progress_clear(struct lb_progress *p)
{
	if (!p->enabled || !p->tty)
		return;
	pthread_mutex_lock(&p->lock);
	clear_locked(p);
	p->hidden = true; /* until the next step: the command prints now */
	pthread_mutex_unlock(&p->lock);
}

void lb_progress_vprintf(struct lb_progress *p, FILE *out, const char *fmt, va_list ap)
{
	if (!p || !p->enabled || !p->tty) {
		vfprintf(out, fmt, ap);
		return;
	}
	pthread_mutex_lock(&p->lock);
	clear_locked(p);
	vfprintf(out, fmt, ap);
	fflush(out);
	pthread_mutex_unlock(&p->lock);
}

void lb_progress_end(struct lb_progress *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->enabled && !p->tty && p->unsaid)
		done_line(p, lb_now_ns(), ""); /* the last step a thinned run did not say */
	p->stop_ticker = true;
	p->step[0] = '\0';
	pthread_cond_signal(&p->wake);
	if (p->enabled && p->tty)
		clear_locked(p);
	pthread_mutex_unlock(&p->lock);
	if (p->ticking)
		pthread_join(p->ticker, NULL);
	p->ticking = false;
	p->enabled = false;
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
}
