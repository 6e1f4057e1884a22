/* SPDX-License-Identifier: MIT */
/* ab_paired.c - an ab file's paired figures (see ab_paired.h). */
#include "ab_paired.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

bool lb_abp_is_ab(const struct lb_rfile *f)
{
	return f->schema && !strcmp(f->schema->name, "lockbench-ab");
}

const char *lb_abp_lock(const struct lb_rfile *f, int b)
{
	const char *s = json_string_value(
		json_object_get(json_object_get(f->root, "config"), b ? "lock_b" : "lock_a"));
	return s ? s : "?";
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static struct lb_abp_row row_of(const json_t *r, double threads, const char *figure,
				const char *verdict)
{
	return (struct lb_abp_row){
		.threads = threads, .figure = figure, .ratio = num(r, "ratio"),
		.lo = num(r, "ratio_lo"), .hi = num(r, "ratio_hi"), .mdc_pct = num(r, "mdc_pct"),
		.confidence = num(r, "confidence"), .verdict = verdict,
		.blocks = (size_t)(isfinite(num(r, "blocks")) ? num(r, "blocks") : 0),
	};
}

size_t lb_abp_rows(const struct lb_rfile *f, struct lb_abp_row *rows, size_t cap)
{
	size_t n = 0;
	if (!lb_abp_is_ab(f))
		return 0;
	for (size_t c = 0; c < f->ncells && n < cap; c++) {
		const json_t *p = json_object_get(f->cells[c].cell, "paired");
		if (!json_is_object(p) || !isfinite(num(p, "ratio")))
			continue;
		double threads = lb_param_number(f->cells[c].params, "threads");
		const char *verdict = json_string_value(json_object_get(p, "verdict"));
		const char *metric = json_string_value(json_object_get(p, "metric"));
		const json_t *own = json_object_get(p, "own_cost");
		verdict = verdict ? verdict : "";
		if (json_is_object(own)) {
			rows[n++] = row_of(own, threads, "own cost", verdict);
			if (n < cap)
				rows[n++] = row_of(p, threads, metric ? metric : "?", "");
		} else {
			rows[n++] = row_of(p, threads, metric ? metric : "?", verdict);
		}
	}
	return n;
}
