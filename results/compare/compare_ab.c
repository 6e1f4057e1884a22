/* SPDX-License-Identifier: MIT */
/*
 * compare_ab.c - `lockbench compare FILE.ab.json`: the paired ratios the ab
 * run computed (ab_paired.h), per cell, as table, JSON or CSV.  Nothing is
 * re-tested: the slices of an ab file are pairs measured next to each
 * other, and an unpaired test over them (Welch, Mann-Whitney) throws the
 * pairing away, reads the wall time where ab paired the CPU time, and
 * counts the pairs ab left out.
 */
#include "compare_ab.h"
#include "ab_paired.h"
#include "lb_json.h"
#include "lb_wrap.h"

#include <math.h>
#include <string.h>

#define MAX_ROWS 64

static void interval_text(const struct lb_abp_row *r, char *buf, size_t len)
{
	if (isfinite(r->lo) && isfinite(r->hi))
		snprintf(buf, len, "[%.4f, %.4f]", r->lo, r->hi);
	else
		snprintf(buf, len, "none");
}

static const char *verdict_words(const char *v)
{
	return !*v ? "-" : !strcmp(v, "worse") ? "B worse" : !strcmp(v, "better") ? "B better" :
	       !strcmp(v, "none") ? "no difference seen" : !strcmp(v, "withheld") ?
	       "withheld (load)" : v;
}

void lb_cmp_ab_table(FILE *out, const struct lb_rfile *f)
{
	struct lb_abp_row rows[MAX_ROWS];
	size_t n = lb_abp_rows(f, rows, MAX_ROWS);
	lb_wrapf(out, "#   ", "# %s: lockbench ab's paired ratios B/A, (A) %s vs (B) %s, as the run "
		 "computed them (blocks as the unit); no unpaired re-test", f->path,
		 lb_abp_lock(f, 0), lb_abp_lock(f, 1));
	lb_wrapf(out, "#   ", "# command: %s", f->command);
	lb_wrapf(out, "#   ", "# %s", f->host_line);
	fprintf(out, "%-8s | %-14s | %6s | %9s | %-20s | %6s | %9s | %s\n", "THREADS", "FIGURE",
		"BLOCKS", "RATIO B/A", "INTERVAL", "LEVEL", "COULD SEE", "VERDICT");
	fputs("---------+----------------+--------+-----------+----------------------+--------+"
	      "-----------+---------\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct lb_abp_row *r = &rows[i];
		char iv[48], see[24], lvl[16];
		interval_text(r, iv, sizeof(iv));
		snprintf(see, sizeof(see), isfinite(r->mdc_pct) ? "+-%.1f%%" : "-", r->mdc_pct);
		snprintf(lvl, sizeof(lvl), isfinite(r->confidence) ? "%.1f%%" : "-",
			 100 * r->confidence);
		fprintf(out, "%-8g | %-14.14s | %6zu | %9.4f | %-20s | %6s | %9s | %s\n", r->threads,
			r->figure, r->blocks, r->ratio, iv, lvl, see, verdict_words(r->verdict));
	}
	fputs("# the verdict is the interval excluding 1, on the cell's first row (1 thread: the "
	      "lock's own cost); '-': a figure shown beside it\n", out);
	if (!n)
		fprintf(out, "# no cell carries paired figures (an interrupted run before its "
			     "first block?)\n");
}

static void kv_or_null(struct lb_json *j, const char *key, double v)
{
	if (isfinite(v)) {
		lb_json_kv_double(j, key, v);
	} else {
		lb_json_key(j, key);
		lb_json_null(j);
	}
}

void lb_cmp_ab_json(FILE *out, const struct lb_rfile *f)
{
	struct lb_abp_row rows[MAX_ROWS];
	size_t n = lb_abp_rows(f, rows, MAX_ROWS);
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "schema", "lockbench-compare-ab-1");
	lb_json_kv_string(&j, "schema_name", "lockbench-compare-ab");
	lb_json_kv_uint(&j, "schema_version", 1);
	lb_json_kv_string(&j, "input_schema", "lockbench-ab-1");
	lb_json_kv_string(&j, "host", f->host_line);
	lb_json_key(&j, "config");
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "path", f->path);
	lb_json_kv_string(&j, "command", f->command);
	lb_json_kv_string(&j, "lock_a", lb_abp_lock(f, 0));
	lb_json_kv_string(&j, "lock_b", lb_abp_lock(f, 1));
	lb_json_object_end(&j);
	lb_json_key(&j, "cells");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		const struct lb_abp_row *r = &rows[i];
		lb_json_object_begin(&j);
		lb_json_kv_double(&j, "threads", r->threads);
		lb_json_kv_string(&j, "figure", r->figure);
		lb_json_kv_uint(&j, "blocks", r->blocks);
		lb_json_kv_double(&j, "ratio", r->ratio);
		kv_or_null(&j, "ratio_lo", r->lo);
		kv_or_null(&j, "ratio_hi", r->hi);
		kv_or_null(&j, "confidence", r->confidence);
		kv_or_null(&j, "mdc_pct", r->mdc_pct);
		lb_json_kv_string(&j, "verdict", r->verdict);
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}

void lb_cmp_ab_csv(FILE *out, const struct lb_rfile *f)
{
	struct lb_abp_row rows[MAX_ROWS];
	size_t n = lb_abp_rows(f, rows, MAX_ROWS);
	fputs("threads,figure,blocks,ratio,ratio_lo,ratio_hi,confidence,mdc_pct,verdict\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct lb_abp_row *r = &rows[i];
		fprintf(out, "%g,%s,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%s\n", r->threads, r->figure,
			r->blocks, r->ratio, r->lo, r->hi, r->confidence, r->mdc_pct, r->verdict);
	}
}

bool lb_cmp_ab_sequential_warning(FILE *out, const struct lb_rfile *files, size_t n)
{
	size_t ab = 0;
	for (size_t i = 0; i < n; i++)
		ab += lb_abp_is_ab(&files[i]);
	if (n < 2 || !ab)
		return false;
	lb_wrapf(out, "#   ", "# WARNING: comparing %zu ab files is the sequential method again: "
		 "each file's slices were measured at another time, so what the host did between "
		 "the runs is in the difference.  Compare A and B inside one `lockbench ab` run "
		 "(`lockbench compare FILE.ab.json` shows its paired ratios).", n);
	return true;
}
