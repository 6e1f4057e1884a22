/* SPDX-License-Identifier: MIT */
/*
 * preload_lockstat_out.c - the class statistics in the layouts existing
 * tools read:
 *
 *  - LOCKBENCH_LOCKSTAT=PATH: the kernel's /proc/lock_stat text,
 *    "lock_stat version 0.4" (kernel/locking/lockdep_proc.c, seq_header /
 *    seq_stats / seq_lock_time: 40-column class name, 12 columns of 14,
 *    times in microseconds with two decimals, rounded as snprint_time does;
 *    classes sorted by contentions; under a class with contentions, its
 *    contention points then its contending points, each "[<ip>] name").
 *    Every class of ours is an exclusive mutex: only the write side exists,
 *    so the line is "name:" and never "name-W:"/"name-R:".  Class names
 *    are not truncated to the kernel's 37 characters (ours carry the
 *    object); a longer name shifts that line's columns, which a parser
 *    that splits off the 12 numbers from the right reads all the same
 *    (scripts/lockstat-parse).
 *
 *  - LOCKBENCH_CONTENTION=PATH: perf lock contention's default table
 *    (tools/perf/builtin-lock.c: contended, total wait, max wait, avg wait,
 *    type, caller; keys 10 and 12 wide, times scaled to ns/us/ms/s/m/h with
 *    two decimals; classes with any wait, sorted by total wait), or with
 *    LOCKBENCH_CONTENTION_SEP=SEP its -x CSV form ("# output: " header,
 *    raw nanoseconds, SEP plus a space between fields).  perf's caller is
 *    the waiter's call site; ours is the class (the first lock call's site
 *    or the static mutex), whose waiters' sites are the lock_stat points.
 */
#include "preload_stats.h"
#include "lb_registry.h"

#include <stdlib.h>
#include <string.h>

static void lbp_points_add(struct lbp_point_snap *dst, const struct lbp_point_snap *src)
{
	/* Merge by ip, then keep the LBP_POINTS most counted (classes sum
	 * several mutexes, each with its own first four). */
	struct lbp_point_snap all[2 * LBP_POINTS];
	unsigned int n = 0;
	for (unsigned int i = 0; i < LBP_POINTS; i++)
		if (dst[i].ip)
			all[n++] = dst[i];
	for (unsigned int i = 0; i < LBP_POINTS; i++) {
		if (!src[i].ip)
			continue;
		unsigned int k;
		for (k = 0; k < n && all[k].ip != src[i].ip; k++)
			;
		if (k < n)
			all[k].count += src[i].count;
		else
			all[n++] = src[i];
	}
	for (unsigned int i = 1; i < n; i++) /* insertion sort, count descending */
		for (unsigned int k = i; k > 0 && all[k].count > all[k - 1].count; k--) {
			struct lbp_point_snap t = all[k];
			all[k] = all[k - 1];
			all[k - 1] = t;
		}
	memset(dst, 0, LBP_POINTS * sizeof(*dst));
	memcpy(dst, all, (n < LBP_POINTS ? n : LBP_POINTS) * sizeof(*dst));
}

static void lbp_min_fold(uint64_t *c, uint64_t y)
{
	if (y && (!*c || y < *c))
		*c = y;
}

void lbp_class_lockstat_add(struct lbp_class_lockstat *c, const struct lbp_class_lockstat *y)
{
	c->owner_changes += y->owner_changes;
	c->spin_resolved += y->spin_resolved;
	c->slept += y->slept;
	c->con_bounces += y->con_bounces;
	c->acq_bounces += y->acq_bounces;
	lbp_min_fold(&c->min_wait_ns, y->min_wait_ns);
	lbp_min_fold(&c->min_hold_ns, y->min_hold_ns);
	c->rt |= y->rt;
	lbp_points_add(c->contention, y->contention);
	lbp_points_add(c->contending, y->contending);
}

static uint64_t ld(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static void lbp_points_take(struct lbp_point_snap *dst, struct lbp_points *p)
{
	for (unsigned int i = 0; i < LBP_POINTS; i++) {
		dst[i].ip = atomic_load_explicit(&p->ip[i], memory_order_relaxed);
		dst[i].count = dst[i].ip ? ld(&p->count[i]) : 0;
	}
}

void lbp_class_lockstat_add_lock(struct lbp_class_lockstat *c, struct lbp_lock *l)
{
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	struct lbp_class_lockstat y;
	memset(&y, 0, sizeof(y));
	y.owner_changes = ld(&ls->owner_changes);
	y.spin_resolved = ld(&ls->spin_resolved);
	y.slept = ld(&ls->slept);
	y.con_bounces = ld(&ls->con_bounces);
	y.acq_bounces = ld(&ls->acq_bounces);
	/* Lock: UINT64_MAX = none; class: 0 = none (the kernel prints 0). */
	uint64_t w = ld(&ls->min_wait_ns), h = ld(&ls->min_hold_ns);
	y.min_wait_ns = w == UINT64_MAX ? 0 : (w ? w : 1);
	y.min_hold_ns = h == UINT64_MAX ? 0 : (h ? h : 1);
	y.rt = atomic_load_explicit(&ls->rt, memory_order_relaxed) != 0;
	lbp_points_take(y.contention, &ls->contention);
	lbp_points_take(y.contending, &ls->contending);
	lbp_class_lockstat_add(c, &y);
}

/* ---- /proc/lock_stat, version 0.4 --------------------------------------- */

#define LBP_LS_WIDTH (40 + 1 + 12 * (14 + 1))

static void lbp_ls_line(FILE *out, char c, int offset, int length)
{
	for (int i = 0; i < offset; i++)
		fputc(' ', out);
	for (int i = 0; i < length; i++)
		fputc(c, out);
	fputc('\n', out);
}

/* The kernel's snprint_time: ns as microseconds, "%lld.%02d", rounded. */
static void lbp_ls_time(FILE *out, uint64_t ns)
{
	char num[32];
	ns += 5;
	snprintf(num, sizeof(num), "%llu.%02u", (unsigned long long)(ns / 1000),
		 (unsigned int)(ns % 1000 / 10));
	fprintf(out, " %14s", num);
}

static void lbp_ls_lock_time(FILE *out, uint64_t nr, uint64_t min, uint64_t max, uint64_t total)
{
	fprintf(out, "%14llu", (unsigned long long)nr);
	lbp_ls_time(out, min);
	lbp_ls_time(out, max);
	lbp_ls_time(out, total);
	lbp_ls_time(out, nr ? total / nr : 0);
}

static int lbp_ls_points(FILE *out, const char *name, int namelen,
			 const struct lbp_point_snap *p)
{
	int i;
	for (i = 0; i < LBP_POINTS && p[i].ip; i++) {
		char ip[40], sym[512];
		const char *obj;
		if (!i)
			lbp_ls_line(out, '-', 40 - namelen, namelen);
		snprintf(ip, sizeof(ip), "[<%016lx>]", (unsigned long)(uintptr_t)p[i].ip);
		lbp_site_name(p[i].ip, false, sym, sizeof(sym), &obj);
		fprintf(out, "%40s %14llu %29s %s\n", name, (unsigned long long)p[i].count, ip, sym);
	}
	return i;
}

static int lbp_by_contentions(const void *a, const void *b)
{
	const struct lbp_class *x = *(const struct lbp_class *const *)a;
	const struct lbp_class *y = *(const struct lbp_class *const *)b;
	if (x->s.v[S_CONT] != y->s.v[S_CONT])
		return x->s.v[S_CONT] < y->s.v[S_CONT] ? 1 : -1;
	return x->s.serial < y->s.serial ? -1 : x->s.serial > y->s.serial;
}

static void lbp_ls_class(FILE *out, const struct lbp_class *c)
{
	const uint64_t *v = c->s.v;
	const char *obj;
	char name[512];
	if (!v[S_ACQ])
		return; /* the kernel prints a class only once it was held */
	lbp_site_name(c->s.site, c->s.data, name, sizeof(name), &obj);
	int namelen = (int)strlen(name);
	fprintf(out, "%40s:", name);
	fprintf(out, "%14llu ", (unsigned long long)c->ls.con_bounces);
	lbp_ls_lock_time(out, v[S_CONT], c->ls.min_wait_ns, v[S_MAXWAIT], v[S_WAIT]);
	fprintf(out, " %14llu ", (unsigned long long)c->ls.acq_bounces);
	lbp_ls_lock_time(out, v[S_ACQ], c->ls.min_hold_ns, v[S_MAXHOLD], v[S_HOLD]);
	fputc('\n', out);
	if (!v[S_CONT])
		return;
	lbp_ls_points(out, name, namelen, c->ls.contention);
	if (lbp_ls_points(out, name, namelen, c->ls.contending)) {
		fputc('\n', out);
		lbp_ls_line(out, '.', 0, LBP_LS_WIDTH);
		fputc('\n', out);
	}
}

void lbp_write_lock_stat(FILE *out, const struct lbp_totals *t)
{
	fputs("lock_stat version 0.4\n", out);
	lbp_ls_line(out, '-', 0, LBP_LS_WIDTH);
	fprintf(out, "%40s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s\n",
		"class name", "con-bounces", "contentions", "waittime-min", "waittime-max",
		"waittime-total", "waittime-avg", "acq-bounces", "acquisitions", "holdtime-min",
		"holdtime-max", "holdtime-total", "holdtime-avg");
	lbp_ls_line(out, '-', 0, LBP_LS_WIDTH);
	fputc('\n', out);
	const struct lbp_class **order = calloc(t->nclass + 1, sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < t->nclass; i++)
		order[i] = &t->classes[i];
	qsort(order, t->nclass, sizeof(*order), lbp_by_contentions);
	for (size_t i = 0; i < t->nclass; i++)
		lbp_ls_class(out, order[i]);
	free(order);
}

/* ---- perf lock contention ---------------------------------------------- */

/* perf's lock_stat_key_print_time: the largest unit the value reaches. */
static void lbp_perf_time(FILE *out, uint64_t ns, int len)
{
	static const struct {
		double base;
		const char *unit;
	} units[] = { { 1e9 * 3600, "h " }, { 1e9 * 60, "m " }, { 1e9, "s " },
		      { 1e6, "ms" },        { 1e3, "us" } };
	if (len == 0) {
		fprintf(out, "%llu", (unsigned long long)ns);
		return;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if ((double)ns >= units[i].base) {
			fprintf(out, "%*.2f %s", len - 3, (double)ns / units[i].base, units[i].unit);
			return;
		}
	fprintf(out, "%*llu %s", len - 3, (unsigned long long)ns, "ns");
}

static const char *lbp_perf_type(void)
{
	if (!strncmp(lbp_cfg.ops->name, "rtmutex", 7))
		return "rtmutex";
	return lb_lock_spin_only(lbp_cfg.ops) ? "spinlock" : "mutex";
}

/* Between two fields: perf's "%s " after each key in CSV, one space else. */
static void lbp_perf_sep(FILE *out, const char *sep)
{
	if (sep)
		fputs(sep, out);
	fputc(' ', out);
}

static int lbp_by_wait_total(const void *a, const void *b)
{
	const struct lbp_class *x = *(const struct lbp_class *const *)a;
	const struct lbp_class *y = *(const struct lbp_class *const *)b;
	if (x->s.v[S_WAIT] != y->s.v[S_WAIT])
		return x->s.v[S_WAIT] < y->s.v[S_WAIT] ? 1 : -1;
	return x->s.serial < y->s.serial ? -1 : x->s.serial > y->s.serial;
}

void lbp_write_contention(FILE *out, const struct lbp_totals *t, const char *sep)
{
	static const char *const heads[] = { "contended", "total wait", "max wait", "avg wait" };
	static const int lens[] = { 10, 12, 12, 12 };
	if (sep) {
		fputs("# output: ", out);
		for (int k = 0; k < 4; k++)
			fprintf(out, "%s%s ", heads[k], sep);
		fprintf(out, "%s%s %s\n", "type", sep, "caller");
	} else {
		for (int k = 0; k < 4; k++)
			fprintf(out, "%*s ", lens[k], heads[k]);
		fprintf(out, "  %10s   %s\n\n", "type", "caller");
	}
	const struct lbp_class **order = calloc(t->nclass + 1, sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < t->nclass; i++)
		order[i] = &t->classes[i];
	qsort(order, t->nclass, sizeof(*order), lbp_by_wait_total);
	for (size_t i = 0; i < t->nclass; i++) {
		const uint64_t *v = order[i]->s.v;
		char name[512];
		const char *obj;
		if (!v[S_WAIT])
			continue; /* perf shows entries with wait time only */
		lbp_site_name(order[i]->s.site, order[i]->s.data, name, sizeof(name), &obj);
		int w = sep ? 0 : 1;
		fprintf(out, "%*llu", w * lens[0], (unsigned long long)v[S_CONT]);
		lbp_perf_sep(out, sep);
		lbp_perf_time(out, v[S_WAIT], w * lens[1]);
		lbp_perf_sep(out, sep);
		lbp_perf_time(out, v[S_MAXWAIT], w * lens[2]);
		lbp_perf_sep(out, sep);
		lbp_perf_time(out, v[S_CONT] ? v[S_WAIT] / v[S_CONT] : 0, w * lens[3]);
		lbp_perf_sep(out, sep);
		if (sep)
			fprintf(out, "%s%s %s\n", lbp_perf_type(), sep, name);
		else
			fprintf(out, "  %10s   %s\n", lbp_perf_type(), name);
	}
}
