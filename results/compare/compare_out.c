/* SPDX-License-Identifier: MIT */
/*
 * compare_out.c - the statistics of each group and the three ways of
 * writing them: the kernel-list table (LABEL | COUNT | MIN | MAX | MEAN |
 * MEDIAN | STDDEV | DIRECTION, (A)/(B) rows, a delta row in %) with a
 * VERDICT column, JSON and CSV.
 */
#include "compare.h"
#include "lb_json.h"
#include "lb_wrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void lb_cmp_compute(struct lb_cmp_report *r)
{
	for (size_t g = 0; g < r->ngroups; g++) {
		struct lb_cmp_group *grp = &r->groups[g];
		for (size_t i = 0; i < r->nsides; i++) {
			struct lb_cmp_side *s = &grp->side[i];
			lb_summarize(s->v, s->n, &s->s);
			if (i == 0)
				continue;
			const struct lb_cmp_side *a = &grp->side[0];
			int rc = lb_welch_test(a->v, a->n, s->v, s->n, r->confidence, &s->welch);
			s->tested = rc == 0;
			s->not_computable = rc == LB_WELCH_NOT_COMPUTABLE;
			if (s->tested)
				lb_mann_whitney(a->v, a->n, s->v, s->n, &s->mwu);
		}
	}
}

/* ~5 significant digits in at most 11 characters. */
static void fmt_value(double v, char *buf, size_t len)
{
	double a = fabs(v);
	if (!isfinite(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1e10)
		snprintf(buf, len, "%.4e", v);
	else if (a >= 1000 || v == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* Standard deviations below 1 keep 5 decimals, as in the seed table. */
static void fmt_sd(double v, char *buf, size_t len)
{
	if (isfinite(v) && fabs(v) < 1)
		snprintf(buf, len, "%.5f", v);
	else
		fmt_value(v, buf, len);
}

static void fmt_pct(double base, double v, char *buf, size_t len)
{
	double p = 100 * (v - base) / fabs(base);
	if (v == base || (isfinite(p) && fabs(p) < 0.005))
		p = 0; /* never "-0.00%" */
	if (!isfinite(p))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.2f%%", p);
}

static const char *direction_text(enum lb_better b)
{
	return b == LB_BETTER_HIGHER ? "+ is good" : b == LB_BETTER_LOWER ? "- is good" : "";
}

void lb_cmp_verdict(const struct lb_cmp_report *r, const struct lb_cmp_group *g, size_t i,
		    char *buf, size_t len)
{
	const struct lb_cmp_side *a = &g->side[0], *s = &g->side[i];
	size_t used = 0;
	if (s->not_computable) {
		snprintf(buf, len, "not computable: the values are too large for a double's "
			 "variance (mean or spread not finite)");
		return;
	}
	if (!s->tested) {
		snprintf(buf, len, "no test: needs 2 or more runs on each side (%zu vs %zu)", a->n, s->n);
		return;
	}
	const struct lb_welch *w = &s->welch;
	double base = fabs(w->mean_a);
	if (w->significant) {
		const char *judge = "";
		if (g->better != LB_BETTER_NONE)
			judge = (w->diff > 0) == (g->better == LB_BETTER_HIGHER) ? ", better" : ", worse";
		if (base > 0)
			used = (size_t)snprintf(buf, len, "difference %+.2f%% +/- %.2f%%%s",
						100 * w->diff / base, 100 * w->half_width / base, judge);
		else
			used = (size_t)snprintf(buf, len, "difference %+.4g +/- %.4g%s", w->diff,
						w->half_width, judge);
	} else {
		used = (size_t)snprintf(buf, len, "no difference proven");
	}
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, " at %.4g%%; Welch p=%.3g, U p=%.3g",
					 100 * r->confidence, w->p, s->mwu.p);
	if (used < len && (a->n < LB_CMP_MIN_RUNS || s->n < LB_CMP_MIN_RUNS))
		snprintf(buf + used, len - used, "; WARNING: %zu vs %zu runs, take %d or more", a->n,
			 s->n, LB_CMP_MIN_RUNS);
}

/*
 * Print a row, then trim the trailing blanks.  Rows with neither direction
 * nor verdict (the label and (A)/(B) rows) end after STDDEV's bar, exactly
 * as in the kernel list's table.  That table (--wide) is wider than
 * LB_WIDTH: the default one leaves out MIN and MAX and puts the verdict on
 * a line of its own under the delta row.
 */
static void row(FILE *out, bool wide, const char *label, const char *cols[7],
		const char *direction, const char *verdict)
{
	char line[1024];
	int n;
	if (!wide)
		n = *direction ? snprintf(line, sizeof(line), "%-32s| %-6s| %-11s| %-11s| %-10s| %s",
					  label, cols[0], cols[3], cols[4], cols[5], direction)
			       : snprintf(line, sizeof(line), "%-32s| %-6s| %-11s| %-11s| %-10s|",
					  label, cols[0], cols[3], cols[4], cols[5]);
	else if (*direction || *verdict)
		n = snprintf(line, sizeof(line),
			     "%-32s| %-6s| %-11s| %-11s| %-11s| %-11s| %-10s| %-15s| %s", label,
			     cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], direction, verdict);
	else
		n = snprintf(line, sizeof(line), "%-32s| %-6s| %-11s| %-11s| %-11s| %-11s| %-10s|",
			     label, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	while (len && line[len - 1] == ' ')
		len--;
	fprintf(out, "%.*s\n", (int)len, line);
}

#define MAX_WARNINGS (3 * LB_CMP_MAX_SIDES)
#define WARNING_LEN 320

/* The machine moved between (A) and another side: the round trips (the host
 * placed the CPUs differently) or the load averages (other work) differ
 * markedly.  One line each, without "WARNING: ". */
/* Both figures known (>= 0) and further apart than abs + frac x the
 * smaller: the rule of the load-average and the steal-time warnings. */
static bool known_and_apart(double a, double x, double abs, double frac)
{
	return a >= 0 && x >= 0 && fabs(x - a) > abs + frac * fmin(a, x);
}

static size_t machine_warnings(const struct lb_cmp_report *r, char out[][WARNING_LEN])
{
	static const char letters[] = "ABCDEFGH";
	size_t n = 0;
	for (size_t i = 1; i < r->nsides; i++) {
		double a = r->side_c2c[0][1], x = r->side_c2c[i][1];
		if (a > 0 && x > 0 && (x > LB_CMP_C2C_MOVED_RATIO * a || a > LB_CMP_C2C_MOVED_RATIO * x))
			snprintf(out[n++], WARNING_LEN,
				 "(A) and (%c) ran at median cache-line round trips of %.0f and %.0f ns: "
				 "the host placed the CPUs differently, so differences in contended "
				 "cells may be the machine's, not the lock's", letters[i], a, x);
	}
	for (size_t i = 1; i < r->nsides; i++) {
		double a = r->side_load[0], x = r->side_load[i];
		if (known_and_apart(a, x, LB_CMP_LOAD_MOVED_ABS, LB_CMP_LOAD_MOVED_FRAC))
			snprintf(out[n++], WARNING_LEN,
				 "(A) and (%c) started at load averages %.2f and %.2f: other work "
				 "shared the machine with one of them, so differences may be the "
				 "machine's, not the lock's", letters[i], a, x);
	}
	for (size_t i = 1; i < r->nsides; i++) {
		double a = r->side_steal[0], x = r->side_steal[i];
		if (known_and_apart(a, x, LB_CMP_STEAL_MOVED_ABS, LB_CMP_STEAL_MOVED_FRAC))
			snprintf(out[n++], WARNING_LEN,
				 "(A) and (%c) saw steal times of %.2f and %.2f s: a hypervisor took "
				 "more of the vCPUs from one of them, so differences may be the "
				 "machine's, not the lock's", letters[i], a, x);
	}
	return n;
}

/* The table's groups: label row, a row per side, a delta row (and, in the
 * default table, a verdict line) per side after (A). */
static void write_groups(FILE *out, const struct lb_cmp_report *r)
{
	static const char letters[] = "ABCDEFGH";
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct lb_cmp_group *grp = &r->groups[g];
		const char *empty[7] = { "", "", "", "", "", "", NULL };
		row(out, r->wide, grp->label, empty, "", "");
		for (size_t i = 0; i < r->nsides; i++) {
			const struct lb_cmp_side *s = &grp->side[i];
			char label[128], cnt[16], v[6][32];
			snprintf(label, sizeof(label), "  (%c) %s", letters[i], r->side_label[i]);
			snprintf(cnt, sizeof(cnt), "%zu", s->n);
			fmt_value(s->s.min, v[0], sizeof(v[0]));
			fmt_value(s->s.max, v[1], sizeof(v[1]));
			fmt_value(s->s.mean, v[2], sizeof(v[2]));
			fmt_value(s->s.median, v[3], sizeof(v[3]));
			fmt_sd(s->s.sd, v[4], sizeof(v[4]));
			const char *cols[7] = { cnt, v[0], v[1], v[2], v[3], v[4], NULL };
			if (s->n == 0)
				cols[1] = cols[2] = cols[3] = cols[4] = cols[5] = "-";
			row(out, r->wide, label, cols, "", "");
			if (i == 0)
				continue;
			const struct lb_cmp_side *a = &grp->side[0];
			char d[5][32], verdict[384];
			fmt_pct(a->s.min, s->s.min, d[0], sizeof(d[0]));
			fmt_pct(a->s.max, s->s.max, d[1], sizeof(d[1]));
			fmt_pct(a->s.mean, s->s.mean, d[2], sizeof(d[2]));
			fmt_pct(a->s.median, s->s.median, d[3], sizeof(d[3]));
			fmt_pct(a->s.sd, s->s.sd, d[4], sizeof(d[4]));
			lb_cmp_verdict(r, grp, i, verdict, sizeof(verdict));
			const char *dcols[7] = { "", d[0], d[1], d[2], d[3], d[4], NULL };
			row(out, r->wide, "", dcols, direction_text(grp->better), verdict);
			if (!r->wide)
				lb_wrapf(out, "    ", "  (%c) vs (A): %s", letters[i], verdict);
		}
	}
}

/* "Units: METRIC UNIT (+ is good), ...": each metric of the table once. */
static void write_units(FILE *out, const struct lb_cmp_report *r)
{
	char line[2048] = "Units:";
	size_t used = strlen(line);
	for (size_t g = 0; g < r->ngroups && used < sizeof(line); g++) {
		bool seen = false;
		for (size_t k = 0; k < g; k++)
			seen |= r->groups[k].metric == r->groups[g].metric ||
				(r->groups[k].metric && r->groups[g].metric &&
				 !strcmp(r->groups[k].metric, r->groups[g].metric));
		if (seen)
			continue;
		const char *dir = direction_text(r->groups[g].better);
		const char *unit = r->groups[g].unit ? r->groups[g].unit : "";
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s %s%s%s%s%s%s",
					 used > 6 ? "," : "", r->groups[g].metric, *unit ? " in " : "",
					 unit, *dir ? " (" : "", dir, *dir ? ")" : "");
	}
	if (r->ngroups)
		lb_wrap(out, "    ", line);
}

void lb_cmp_write_table(FILE *out, const struct lb_cmp_report *r)
{
	static const char letters[] = "ABCDEFGH";
	const char *head[7] = { "COUNT", "MIN", "MAX", "MEAN", "MEDIAN", "STDDEV", NULL };
	/* The wide table prints as it always did: lines wrap only in the default one. */
	const char *cont = r->wide ? NULL : "    ";
	if (r->sequential_ab)
		fprintf(out, "# WARNING: ab files compared with each other: the sequential method "
			     "(each file measured at another time); see stderr\n");
	row(out, r->wide, "LABEL", head, "DIRECTION", "VERDICT");
	if (r->wide)
		fprintf(out, "--------------------------------+-------+------------+------------+-----"
			     "-------+------------+-----------+----------------+--------------------"
			     "--------------------\n");
	else
		fprintf(out, "--------------------------------+-------+------------+------------+-----"
			     "------+----------------\n");
	write_groups(out, r);
	fputc('\n', out);
	for (size_t i = 0; i < r->nsides; i++) {
		char c2c[96] = "", load[48] = "", steal[48] = "", sel[300] = "", line[1200];
		if (r->side_c2c[i][1] > 0)
			snprintf(c2c, sizeof(c2c), "; cache-line round trip %.0f ns (%.0f-%.0f)",
				 r->side_c2c[i][1], r->side_c2c[i][0], r->side_c2c[i][2]);
		if (r->side_load[i] >= 0)
			snprintf(load, sizeof(load), "; load average %.2f before", r->side_load[i]);
		if (r->side_steal[i] > 0)
			snprintf(steal, sizeof(steal), "; steal %.2f s", r->side_steal[i]);
		if (r->side_selector[i])
			snprintf(sel, sizeof(sel), ", the cells with %s", r->side_selector[i]);
		char model[64] = "";
		if (r->side_model[i])
			snprintf(model, sizeof(model), " [MODEL PREDICTION: %.32s]", r->side_model[i]);
		snprintf(line, sizeof(line), "(%c) %s: %s%s%s%s%s%s%s", letters[i], r->side_label[i],
			 r->side_path[i], model, sel, r->side_interrupted[i] ?
			 " (interrupted run: the cells it finished)" : "", c2c, load, steal);
		if (cont)
			lb_wrap(out, cont, line);
		else
			fprintf(out, "%s\n", line);
	}
	char warning[MAX_WARNINGS][WARNING_LEN];
	size_t nwarnings = machine_warnings(r, warning);
	for (size_t i = 0; i < nwarnings; i++)
		if (cont)
			lb_wrapf(out, cont, "WARNING: %s", warning[i]);
		else
			fprintf(out, "WARNING: %s\n", warning[i]);
	if (cont) {
		write_units(out, r);
		lb_wrapf(out, "", "Deltas are (X - A) / A.  Verdict: Welch's t-test at %.4g%% "
			 "confidence on the means (the difference with the half-width of its interval, "
			 "in %% of A's mean; \"no difference proven\" when the interval includes 0) and "
			 "the two-sided Mann-Whitney U p-value; --wide adds MIN and MAX.",
			 100 * r->confidence);
	} else {
		fprintf(out, "Deltas are (X - A) / A.  Verdict: Welch's t-test at %.4g%% confidence "
			     "on the means (the difference with the half-width of its interval, in %% "
			     "of A's mean;\n\"no difference proven\" when the interval includes 0) and "
			     "the two-sided Mann-Whitney U p-value.\n", 100 * r->confidence);
	}
	for (size_t i = 0; i < r->nunmatched; i++)
		if (cont)
			lb_wrapf(out, cont, "Only in %s", r->unmatched[i]);
		else
			fprintf(out, "Only in %s\n", r->unmatched[i]);
}

static void json_summary(struct lb_json *j, const struct lb_summary *s)
{
	lb_json_kv_uint(j, "n", s->n);
	lb_json_kv_double(j, "min", s->n ? s->min : NAN);
	lb_json_kv_double(j, "max", s->n ? s->max : NAN);
	lb_json_kv_double(j, "mean", s->n ? s->mean : NAN);
	lb_json_kv_double(j, "median", s->n ? s->median : NAN);
	lb_json_kv_double(j, "sd", s->n > 1 ? s->sd : NAN);
}

static double pct(double base, double v)
{
	return base != 0 ? 100 * (v - base) / fabs(base) : NAN;
}

void lb_cmp_write_json(FILE *out, const struct lb_cmp_report *r)
{
	struct lb_json j;
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "schema", "lockbench-compare-1");
	lb_json_kv_string(&j, "input_schema", r->schema);
	lb_json_kv_double(&j, "confidence", r->confidence);
	lb_json_key(&j, "sides");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < r->nsides; i++) {
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "label", r->side_label[i]);
		lb_json_kv_string(&j, "path", r->side_path[i]);
		lb_json_kv_bool(&j, "interrupted", r->side_interrupted[i]);
		/* Only for a model's file: its figures are predictions. */
		if (r->side_model[i])
			lb_json_kv_string(&j, "model", r->side_model[i]);
		/* Two sides of one file: the params that pick the side's cells. */
		lb_json_kv_string(&j, "selector", r->side_selector[i]);
		lb_json_key(&j, "load_average_before");
		if (r->side_load[i] >= 0)
			lb_json_double(&j, r->side_load[i]);
		else
			lb_json_null(&j);
		/* Only where there was steal: older readers' files stay as they were. */
		if (r->side_steal[i] > 0)
			lb_json_kv_double(&j, "steal_s", r->side_steal[i]);
		/* {min, median, max} ns of the runs' round trips, or null. */
		lb_json_key(&j, "c2c_ns");
		if (r->side_c2c[i][1] > 0) {
			lb_json_object_begin(&j);
			lb_json_kv_double(&j, "min", r->side_c2c[i][0]);
			lb_json_kv_double(&j, "median", r->side_c2c[i][1]);
			lb_json_kv_double(&j, "max", r->side_c2c[i][2]);
			lb_json_object_end(&j);
		} else {
			lb_json_null(&j);
		}
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	lb_json_key(&j, "comparisons");
	lb_json_array_begin(&j);
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct lb_cmp_group *grp = &r->groups[g];
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "cell", grp->cell);
		lb_json_kv_string(&j, "metric", grp->metric);
		lb_json_kv_string(&j, "unit", grp->unit);
		lb_json_kv_string(&j, "better", lb_better_name(grp->better));
		lb_json_key(&j, "sides");
		lb_json_array_begin(&j);
		for (size_t i = 0; i < r->nsides; i++) {
			const struct lb_cmp_side *s = &grp->side[i], *a = &grp->side[0];
			lb_json_object_begin(&j);
			lb_json_kv_string(&j, "label", r->side_label[i]);
			json_summary(&j, &s->s);
			if (i > 0) {
				lb_json_kv_double(&j, "delta_mean_pct", pct(a->s.mean, s->s.mean));
				lb_json_kv_double(&j, "delta_median_pct", pct(a->s.median, s->s.median));
				lb_json_kv_bool(&j, "tested", s->tested);
				if (s->tested) {
					const struct lb_welch *w = &s->welch;
					char verdict[384];
					lb_json_key(&j, "welch");
					lb_json_object_begin(&j);
					lb_json_kv_double(&j, "diff", w->diff);
					lb_json_kv_double(&j, "half_width", w->half_width);
					lb_json_kv_double(&j, "diff_pct", pct(w->mean_a, w->mean_b));
					lb_json_kv_double(&j, "half_width_pct",
							  w->mean_a != 0 ? 100 * w->half_width / fabs(w->mean_a) : NAN);
					lb_json_kv_double(&j, "t", w->t);
					lb_json_kv_double(&j, "df", w->df);
					lb_json_kv_double(&j, "p", w->p);
					lb_json_kv_bool(&j, "difference", w->significant);
					lb_json_object_end(&j);
					lb_json_key(&j, "mann_whitney");
					lb_json_object_begin(&j);
					lb_json_kv_double(&j, "u", s->mwu.u);
					lb_json_kv_double(&j, "p", s->mwu.p);
					lb_json_kv_bool(&j, "exact", s->mwu.exact);
					lb_json_object_end(&j);
					lb_cmp_verdict(r, grp, i, verdict, sizeof(verdict));
					lb_json_kv_string(&j, "verdict", verdict);
				} else if (s->not_computable) {
					char verdict[384];
					lb_cmp_verdict(r, grp, i, verdict, sizeof(verdict));
					lb_json_kv_string(&j, "verdict", verdict);
				}
				lb_json_kv_bool(&j, "few_runs",
						a->n < LB_CMP_MIN_RUNS || s->n < LB_CMP_MIN_RUNS);
			}
			lb_json_object_end(&j);
		}
		lb_json_array_end(&j);
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	char warning[MAX_WARNINGS][WARNING_LEN];
	size_t nwarnings = machine_warnings(r, warning);
	lb_json_key(&j, "warnings");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < nwarnings; i++)
		lb_json_string(&j, warning[i]);
	lb_json_array_end(&j);
	lb_json_key(&j, "unmatched");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < r->nunmatched; i++)
		lb_json_string(&j, r->unmatched[i]);
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}

/* CSV field: quoted, with quotes doubled. */
static void csv_text(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void lb_cmp_write_csv(FILE *out, const struct lb_cmp_report *r)
{
	fprintf(out, "cell,metric,unit,better,side,label,n,min,max,mean,median,sd,delta_mean_pct,"
		     "diff_pct,half_width_pct,welch_t,welch_df,welch_p,difference,u,u_p,u_exact\n");
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct lb_cmp_group *grp = &r->groups[g];
		for (size_t i = 0; i < r->nsides; i++) {
			const struct lb_cmp_side *s = &grp->side[i], *a = &grp->side[0];
			csv_text(out, grp->cell);
			fprintf(out, ",%s,", grp->metric);
			csv_text(out, grp->unit);
			fprintf(out, ",%s,%c,", lb_better_name(grp->better), (char)('A' + i));
			csv_text(out, r->side_label[i]);
			fprintf(out, ",%zu,%.10g,%.10g,%.10g,%.10g,%.10g", s->n, s->s.min, s->s.max,
				s->s.mean, s->s.median, s->s.sd);
			if (i > 0 && s->tested) {
				const struct lb_welch *w = &s->welch;
				fprintf(out, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%d\n",
					pct(a->s.mean, s->s.mean), pct(w->mean_a, w->mean_b),
					w->mean_a != 0 ? 100 * w->half_width / fabs(w->mean_a) : NAN,
					w->t, w->df, w->p, w->significant, s->mwu.u, s->mwu.p, s->mwu.exact);
			} else {
				fprintf(out, ",,,,,,,,,,\n");
			}
		}
	}
}
