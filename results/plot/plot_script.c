/* SPDX-License-Identifier: MIT */
/*
 * plot_script.c - a file's plot description (its schema's plot hints, or
 * the generic one) and the gnuplot script for it (see plot.h).  Data go
 * inline as gnuplot datablocks, so one gnuplot process draws every picture
 * of a file.
 */
#include "plot.h"
#include "plot_overlay.h"
#include "lb_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool has_param(const struct lb_rfile *f, const char *key)
{
	return f->ncells && json_object_get(f->cells[0].params, key);
}

static bool has_metric(const struct lb_rfile *f, const char *key)
{
	return lb_schema_metric(f->schema, key) != NULL;
}

void lb_plot_describe(const struct lb_rfile *f, struct lb_plot_hints *out)
{
	static const char *generic_curves[2];
	const struct lb_plot_hints *hints = f->schema->plot;
	memset(out, 0, sizeof(*out));
	if (hints && has_param(f, hints->x_param) && has_metric(f, hints->curves[0])) {
		*out = *hints;
		return;
	}
	/* Generic: the headline metric against the first numeric param. */
	generic_curves[0] = f->schema->nmetrics ? f->schema->metrics[0].key : NULL;
	out->curves = generic_curves;
	for (size_t i = 0; f->schema->params[i] && !out->x_param; i++)
		if (f->ncells && json_is_number(json_object_get(f->cells[0].params, f->schema->params[i])))
			out->x_param = f->schema->params[i];
	if (!out->x_param && f->ncells) {
		const char *key;
		json_t *v;
		json_object_foreach(f->cells[0].params, key, v)
			if (json_is_number(v)) {
				out->x_param = key;
				break;
			}
	}
}

/*
 * A string as a gnuplot string expression that nothing in it can escape:
 * single-quoted, where gnuplot expands nothing (no backquote command
 * substitution, no @macro, no backslash escape; checked with gnuplot 5.4),
 * a quote as ' . "'" . ', each newline as ' . "\n" . ' and every
 * other control character as a blank (a raw newline would end the command).
 */
void lb_plot_gp_string(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '\'')
			/* Not '' doubling: gnuplot 5.4 reads a string that starts
			 * with '' as an empty string and the rest as a syntax error
			 * (a lock named "';x;'" failed the plot). */
			fputs("' . \"'\" . '", gp);
		else if (ch == '\n')
			fputs("' . \"\\n\" . '", gp);
		else if (ch < 0x20 || ch == 0x7f)
			fputc(' ', gp);
		else
			fputc(ch, gp);
	}
	fputc('\'', gp);
}

/* A label inside a datablock's double-quoted column: no quote or control
 * character (a newline would end the data line, "EOD" alone the block). */
static void gp_data_label(char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"')
			*s = '\'';
		else if (ch < 0x20 || ch == 0x7f)
			*s = ' ';
	}
}

/* A part of a picture's file name from the file's text (a param key):
 * letters, digits, '.', '-' and '_' only, never a '/'. */
static void file_name_part(char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_'))
			*s = '_';
	}
}

/* Series: cells that share every param but x; labelled by the params that vary. */
struct series {
	char label[160];
	size_t *cells;
	size_t n;
};

/* A cell's series: its params but x as text, in key order, a missing key
 * and null alike; NULL when out of memory. */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *series_key(const json_t *params, const char *skip)
{
	size_t n = 0, cap = json_object_size(params) + 1;
	const char **keys = malloc(cap * sizeof(*keys));
	char *buf = NULL;
	size_t len = 0;
	FILE *s = keys ? open_memstream(&buf, &len) : NULL;
	if (!s) {
		free(keys);
		return NULL;
	}
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)params, key, v)
		if (!skip || strcmp(key, skip))
			keys[n++] = key;
	qsort(keys, n, sizeof(*keys), by_name);
	for (size_t i = 0; i < n; i++) {
		char text[128];
		lb_param_text(json_object_get(params, keys[i]), text, sizeof(text));
		if (strcmp(text, "null"))
			fprintf(s, "%s\x1f%s\x1e", keys[i], text);
	}
	free(keys);
	if (fclose(s)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void series_label(const struct lb_rfile *f, const json_t *params, const char *skip,
			 char *buf, size_t len)
{
	const char *key;
	json_t *v;
	size_t used = 0;
	bool first = true;
	buf[0] = '\0';
	json_object_foreach((json_t *)params, key, v) {
		bool is_first = first;
		first = false;
		if (skip && !strcmp(key, skip))
			continue;
		char mine[128];
		bool varies = json_object_get(f->varying, key) != NULL;
		lb_param_text(v, mine, sizeof(mine));
		if (!varies || used >= len)
			continue;
		int w = is_first ? snprintf(buf + used, len - used, "%s%s", used ? " " : "", mine)
				 : snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", key, mine);
		used += w > 0 ? (size_t)w : 0;
	}
	if (!buf[0])
		snprintf(buf, len, "all");
}

/* A cell of a series while it is sorted by x (then by file order). */
struct by_x {
	double x;
	size_t cell;
};

static int cmp_by_x(const void *pa, const void *pb)
{
	const struct by_x *a = pa, *b = pb;
	if (a->x != b->x && !(isnan(a->x) && isnan(b->x)))
		return isnan(a->x) ? 1 : isnan(b->x) ? -1 : a->x < b->x ? -1 : 1;
	return a->cell < b->cell ? -1 : a->cell > b->cell;
}

/* Cells grouped by series_key (a hash: jansson's object), each series in
 * ascending x; cell lists grow as needed (one per cell was cells^2). */
static size_t make_series(const struct lb_rfile *f, const char *x, struct series **out)
{
	struct series *s = calloc(f->ncells ? f->ncells : 1, sizeof(*s));
	size_t *cap = calloc(f->ncells ? f->ncells : 1, sizeof(*cap));
	json_t *index = json_object();
	struct by_x *sorted = malloc((f->ncells ? f->ncells : 1) * sizeof(*sorted));
	size_t n = 0;
	if (!s || !cap || !index || !sorted)
		goto out;
	for (size_t c = 0; c < f->ncells; c++) {
		char *key = series_key(f->cells[c].params, x);
		if (!key)
			break;
		json_t *slot = json_object_get(index, key);
		size_t k = slot ? (size_t)json_integer_value(slot) : n;
		if (k == n) {
			if (json_object_set_new(index, key, json_integer((json_int_t)n))) {
				free(key);
				break;
			}
			series_label(f, f->cells[c].params, x, s[n].label, sizeof(s[n].label));
			n++;
		}
		free(key);
		if (s[k].n == cap[k]) {
			size_t grown = cap[k] ? 2 * cap[k] : 8;
			size_t *cells = realloc(s[k].cells, grown * sizeof(*cells));
			if (!cells)
				break;
			s[k].cells = cells;
			cap[k] = grown;
		}
		s[k].cells[s[k].n++] = c;
	}
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < s[k].n; i++)
			sorted[i] = (struct by_x){ lb_param_number(f->cells[s[k].cells[i]].params, x),
						   s[k].cells[i] };
		qsort(sorted, s[k].n, sizeof(*sorted), cmp_by_x);
		for (size_t i = 0; i < s[k].n; i++)
			s[k].cells[i] = sorted[i].cell;
	}
out:
	free(cap);
	free(sorted);
	if (index)
		json_decref(index);
	*out = s;
	return s ? n : 0;
}

static void free_series(struct series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].cells);
	free(s);
}

static void add_output(struct lb_plot_outputs *o, const char *dir, const char *prefix,
		       const char *picture, const char *ext)
{
	char **t = realloc(o->tmp, (o->n + 1) * sizeof(*t));
	char **fin = t ? realloc(o->final, (o->n + 1) * sizeof(*fin)) : NULL;
	if (t)
		o->tmp = t;
	if (!t || !fin)
		return;
	o->final = fin;
	size_t len = strlen(dir) + strlen(prefix) + strlen(picture) + 32;
	o->tmp[o->n] = malloc(len);
	o->final[o->n] = malloc(len);
	if (!o->tmp[o->n] || !o->final[o->n])
		return;
	snprintf(o->tmp[o->n], len, "%s/.%s-%s.tmp.%s", dir, prefix, picture, ext);
	snprintf(o->final[o->n], len, "%s/%s-%s.%s", dir, prefix, picture, ext);
	o->n++;
}

/* set terminal/output for each format, then the same body. */
static void emit(FILE *gp, const char *body, const char *dir, const char *prefix,
		 const char *picture, int formats, struct lb_plot_outputs *o)
{
	static const struct { int bit; const char *ext, *term; } fmts[] = {
		{ LB_PLOT_SVG, "svg", "svg size 1000,650 dynamic noenhanced font 'sans,11' background '#ffffff'" },
		{ LB_PLOT_PNG, "png", "pngcairo size 1000,650 noenhanced font 'sans,10'" },
	};
	for (size_t i = 0; i < 2; i++) {
		if (!(formats & fmts[i].bit))
			continue;
		add_output(o, dir, prefix, picture, fmts[i].ext);
		fprintf(gp, "set terminal %s\nset output ", fmts[i].term);
		lb_plot_gp_string(gp, o->tmp[o->n - 1]);
		fprintf(gp, "\n%sunset output\n", body);
	}
}

void lb_plot_command_text(const struct lb_rfile *f, char *buf, size_t len)
{
	/* ab and some others record the whole argv ("lockbench ab ..."), bench
	 * its arguments alone ("bench ..."): "lockbench" is added only when the
	 * first word is not already the program. */
	const char *c = f->command, *sp = strchr(c, ' ');
	size_t first = sp ? (size_t)(sp - c) : strlen(c);
	const char *base = c + first;
	while (base > c && base[-1] != '/')
		base--;
	bool named = (size_t)(c + first - base) == strlen("lockbench") &&
		     !strncmp(base, "lockbench", strlen("lockbench"));
	snprintf(buf, len, "%s%.150s%s", named || !*c ? "" : "lockbench ", c,
		 strlen(c) > 150 ? "..." : "");
}

static void title(FILE *b, const char *what, const struct lb_rfile *f)
{
	char t[1024], cmd[200];
	lb_plot_command_text(f, cmd, sizeof(cmd));
	snprintf(t, sizeof(t), "%s%s%s%s\n%s\n%s%s", f->model ? "MODEL PREDICTION (" : "",
		 f->model ? f->model : "", f->model ? "): " : "", what, f->host_line, cmd,
		 f->interrupted ? "  (interrupted run)" : "");
	fputs("set title ", b);
	lb_plot_gp_string(b, t);
	fputs("\n", b);
}

static const char *metric_axis(const struct lb_rfile *f, const char *key, char *buf, size_t len)
{
	const struct lb_metric_desc *m = lb_schema_metric(f->schema, key);
	if (!m)
		snprintf(buf, len, "%s", key);
	else if (m->unit[0])
		snprintf(buf, len, "%s (%s)", m->title, m->unit);
	else
		snprintf(buf, len, "%s", m->title);
	return buf;
}

/* How many distinct values x takes over the cells. */
static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

/* (Sorted: cells x cells comparisons was the quadratic part of a big file.)
 * Cells without a numeric x do not count. */
static size_t distinct_x(const struct lb_rfile *f, const char *x)
{
	double *v = malloc((f->ncells ? f->ncells : 1) * sizeof(*v));
	size_t n = 0, distinct = 0;
	if (!v)
		return 0;
	for (size_t c = 0; c < f->ncells; c++) {
		double x_c = lb_param_number(f->cells[c].params, x);
		if (!isnan(x_c))
			v[n++] = x_c;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || v[i] != v[i - 1];
	free(v);
	return distinct;
}

/*
 * A cell's figures as gnuplot can draw them: false when the mean is not a
 * finite number (no run measured it, or the runs overflow a double), and
 * then the point is left out; a standard deviation that is not finite
 * draws no error bar (0).
 */
static bool drawable(const struct lb_rcell *c, size_t mi, double *mean, double *sd)
{
	struct lb_summary sum;
	lb_summarize(c->values[mi], c->nvalues[mi], &sum);
	if (!sum.n || !isfinite(sum.mean))
		return false;
	*mean = sum.mean;
	*sd = isfinite(sum.sd) ? sum.sd : 0;
	return true;
}

/*
 * The lines for metrics with nothing to draw wait here until the script is
 * done: printed when it draws something, dropped when it draws nothing (the
 * one-line "nothing to draw" error says it all).  One plot command runs one
 * script at a time.
 */
static char *skip_notes;
static size_t skip_notes_len;
static FILE *skip_notes_fp;

static void skipped(const struct lb_rfile *f, const char *metric)
{
	if (!skip_notes_fp)
		skip_notes_fp = open_memstream(&skip_notes, &skip_notes_len);
	fprintf(skip_notes_fp ? skip_notes_fp : stderr,
		"lockbench: plot: %s: %s has no finite value in any cell (not measured); "
		"skipped\n", f->path, metric);
}

void lb_plot_flush_notes(bool print)
{
	if (!skip_notes_fp)
		return;
	fclose(skip_notes_fp);
	if (print && skip_notes)
		fputs(skip_notes, stderr);
	free(skip_notes);
	skip_notes = NULL;
	skip_notes_len = 0;
	skip_notes_fp = NULL;
}

/* x does not vary: one bar per cell (mean, +-1 sd). */
static size_t bars(FILE *gp, const struct lb_rfile *f, const char *metric, const char *dir,
		   const char *prefix, int formats, struct lb_plot_outputs *o)
{
	const struct lb_metric_desc *md = lb_schema_metric(f->schema, metric);
	size_t mi = (size_t)(md - f->schema->metrics);
	char axis[256], picture[128], what[384], label[160];
	double smallest = INFINITY, lowest = INFINITY;
	size_t points = 0;
	fprintf(gp, "$%s_bars << EOD\n", metric);
	for (size_t c = 0; c < f->ncells; c++) {
		double mean, sd;
		if (!drawable(&f->cells[c], mi, &mean, &sd))
			continue;
		series_label(f, f->cells[c].params, NULL, label, sizeof(label));
		gp_data_label(label);
		fprintf(gp, "%zu %.10g %.10g \"%s\"\n", c, mean, sd, label);
		smallest = fmin(smallest, fabs(mean));
		lowest = fmin(lowest, mean - sd);
		points++;
	}
	fputs("EOD\n", gp);
	if (!points) {
		skipped(f, metric);
		return 0;
	}
	char *body = NULL;
	size_t blen = 0;
	FILE *b = open_memstream(&body, &blen);
	if (!b)
		return 0;
	snprintf(what, sizeof(what), "%s (mean of the runs; error bars: +-1 sample sd)", md->title);
	title(b, what, f);
	fputs("set ylabel ", b);
	lb_plot_gp_string(b, metric_axis(f, metric, axis, sizeof(axis)));
	/* From 0 up unless a value is negative (then gnuplot's own range). */
	fputs("\nset style fill solid 0.5\nset boxwidth 0.6\nset grid ytics\n", b);
	fputs(lowest >= 0 ? "set yrange [0:*]\n" : "set autoscale y\n", b);
	fputs("set xtics rotate by -30\nset xrange [-0.7:*]\n", b);
	fputs(smallest >= 1000 ? "set format y '%.1s%c'\n" : "set format y '%g'\n", b);
	fprintf(b, "plot $%s_bars using 1:2:xtic(4) with boxes notitle, "
		   "$%s_bars using 1:2:3 with yerrorbars lc 'black' title 'mean +- sd'\n"
		   "unset yrange\nunset xrange\nset xtics norotate\nset format y '%%g'\n", metric,
		metric);
	fclose(b);
	snprintf(picture, sizeof(picture), "%s", metric);
	for (char *p = picture; *p; p++)
		*p = *p == '_' ? '-' : *p;
	emit(gp, body, dir, prefix, picture, formats, o);
	free(body);
	return 1;
}

/* A histogram bucket key: a decimal 0..LB_PLOT_MAX_BUCKET (rt --histogram
 * goes to 100000); -1 for anything else, which is left out. */
#define LB_PLOT_MAX_BUCKET 1000000L
static long hist_bucket(const char *key)
{
	long v = 0;
	if (!*key)
		return -1;
	for (; *key; key++) {
		if (*key < '0' || *key > '9' || v > LB_PLOT_MAX_BUCKET)
			return -1;
		v = v * 10 + (*key - '0');
	}
	return v <= LB_PLOT_MAX_BUCKET ? v : -1;
}

/* Latency histograms: per cell, the buckets of every entry of cell[hist_key]
 * summed ({"<bucket>": count, ...}, cyclictest style), log count axis. */
static size_t histograms(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
			 const char *dir, const char *prefix, int formats,
			 struct lb_plot_outputs *o)
{
	bool any = false;
	bool *drawn = calloc(f->ncells ? f->ncells : 1, sizeof(*drawn));
	if (!drawn)
		return 0;
	for (size_t c = 0; c < f->ncells; c++) {
		const json_t *entries = json_object_get(f->cells[c].cell, d->hist_key);
		size_t maxb = 0;
		for (size_t e = 0; e < json_array_size(entries); e++) {
			const char *key;
			json_t *v;
			json_object_foreach(json_object_get(json_array_get(entries, e), "histogram"), key,
					    v) {
				long bkt = hist_bucket(key);
				if (bkt >= 0 && (size_t)bkt + 1 > maxb)
					maxb = (size_t)bkt + 1;
			}
		}
		double *sum = calloc(maxb ? maxb : 1, sizeof(double));
		if (!sum) {
			free(drawn);
			return 0;
		}
		for (size_t e = 0; e < json_array_size(entries); e++) {
			const char *key;
			json_t *v;
			json_object_foreach(json_object_get(json_array_get(entries, e), "histogram"), key,
					    v) {
				long bkt = hist_bucket(key);
				if (bkt >= 0 && json_is_number(v) && isfinite(json_number_value(v)))
					sum[bkt] += json_number_value(v);
			}
		}
		fprintf(gp, "$hist_c%zu << EOD\n", c);
		/* Counts > 0 only: the count axis is logarithmic. */
		for (size_t k = 0; k < maxb; k++)
			if (sum[k] > 0 && isfinite(sum[k])) {
				fprintf(gp, "%zu %.10g\n", k, sum[k]);
				drawn[c] = any = true;
			}
		fputs("EOD\n", gp);
		free(sum);
	}
	if (!any) {
		free(drawn);
		return 0;
	}
	char *body = NULL, what[256], label[160];
	size_t blen = 0;
	FILE *b = open_memstream(&body, &blen);
	if (!b)
		return 0;
	snprintf(what, sizeof(what), "latency histogram (every %s entry of each cell summed)",
		 d->hist_key);
	title(b, what, f);
	fprintf(b, "set xlabel 'latency (%s)'\nset ylabel 'samples (count)'\nset logscale y 10\n"
		   "set grid\nset key outside right top\nplot ", d->hist_unit);
	bool first = true;
	for (size_t c = 0; c < f->ncells; c++) {
		if (!drawn[c])
			continue;
		series_label(f, f->cells[c].params, NULL, label, sizeof(label));
		fprintf(b, "%s$hist_c%zu using 1:2 with steps lw 1.5 title ", first ? "" : ", ", c);
		lb_plot_gp_string(b, label);
		first = false;
	}
	free(drawn);
	fputs("\nunset logscale\n", b);
	fclose(b);
	emit(gp, body, dir, prefix, "histogram", formats, o);
	free(body);
	return 1;
}

static size_t scaling(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
		      const char *metric, struct series *s, size_t ns, const char *dir,
		      const char *prefix, int formats, struct lb_plot_outputs *o)
{
	const struct lb_metric_desc *md = lb_schema_metric(f->schema, metric);
	size_t mi = (size_t)(md - f->schema->metrics);
	char axis[256], picture[128], what[384];
	double smallest = INFINITY, lowest = INFINITY, xmin = INFINITY;
	size_t points = 0;
	bool *drawn = calloc(ns ? ns : 1, sizeof(*drawn));
	if (!drawn)
		return 0;
	for (size_t k = 0; k < ns; k++) {
		fprintf(gp, "$%s_s%zu << EOD\n", metric, k);
		for (size_t i = 0; i < s[k].n; i++) {
			const struct lb_rcell *c = &f->cells[s[k].cells[i]];
			double mean, sd, x = lb_param_number(c->params, d->x_param);
			if (!isfinite(x) || !drawable(c, mi, &mean, &sd))
				continue;
			fprintf(gp, "%.10g %.10g %.10g\n", x, mean, sd);
			smallest = fmin(smallest, fabs(mean));
			lowest = fmin(lowest, mean - sd);
			xmin = fmin(xmin, x);
			drawn[k] = true;
			points++;
		}
		fputs("EOD\n", gp);
	}
	char *body = NULL;
	size_t blen = 0;
	FILE *b = points ? open_memstream(&body, &blen) : NULL;
	if (!b) {
		if (!points)
			skipped(f, metric);
		free(drawn);
		return 0;
	}
	snprintf(what, sizeof(what), "%s vs %s (mean of the runs; error bars: +-1 sample sd)",
		 md->title, d->x_param);
	title(b, what, f);
	fputs("set xlabel ", b);
	lb_plot_gp_string(b, d->x_param);
	fputs("\nset ylabel ", b);
	lb_plot_gp_string(b, metric_axis(f, metric, axis, sizeof(axis)));
	fputs("\nset key outside right top\nset grid\n", b);
	/* A log x axis (thread counts double) only when every x is > 0, the
	 * y axis from 0 only when no value is negative. */
	fputs(xmin > 0 ? "set logscale x 2\n" : "unset logscale x\n", b);
	fputs(lowest >= 0 ? "set yrange [0:*]\n" : "set autoscale y\n", b);
	/* Large figures with SI prefixes (45.8M ops/s); small ones as they are. */
	fputs(smallest >= 1000 ? "set format y '%.1s%c'\nplot " : "set format y '%g'\nplot ", b);
	bool first = true;
	for (size_t k = 0; k < ns; k++) {
		if (!drawn[k])
			continue; /* no point: gnuplot would warn about an empty block */
		fprintf(b, "%s$%s_s%zu using 1:2:3 with yerrorlines lw 1.5 title ", first ? "" : ", ",
			metric, k);
		lb_plot_gp_string(b, s[k].label);
		first = false;
	}
	free(drawn);
	fputs("\nunset logscale\nunset yrange\nset format y '%g'\n", b);
	fclose(b);
	snprintf(picture, sizeof(picture), "%s", metric);
	for (char *p = picture; *p; p++)
		*p = *p == '_' ? '-' : *p;
	snprintf(picture + strlen(picture), sizeof(picture) - strlen(picture), "-vs-%s", d->x_param);
	file_name_part(picture);
	emit(gp, body, dir, prefix, picture, formats, o);
	free(body);
	return 1;
}

/* Latency distribution: one line per series at each x value. */
static size_t latency(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
		      struct series *s, size_t ns, const char *dir, const char *prefix, int formats,
		      struct lb_plot_outputs *o)
{
	size_t pictures = 0;
	/* The distinct x values. */
	double xs[256];
	size_t nx = 0;
	for (size_t c = 0; c < f->ncells && nx < 256; c++) {
		double x = lb_param_number(f->cells[c].params, d->x_param);
		if (!isfinite(x))
			continue;
		size_t k = 0;
		while (k < nx && xs[k] != x)
			k++;
		if (k == nx)
			xs[nx++] = x;
	}
	for (size_t xi = 0; xi < nx; xi++) {
		bool any = false;
		bool *drawn = calloc(ns ? ns : 1, sizeof(*drawn));
		if (!drawn)
			break;
		for (size_t k = 0; k < ns; k++) {
			fprintf(gp, "$lat_x%zu_s%zu << EOD\n", xi, k);
			for (size_t i = 0; i < s[k].n; i++) {
				const struct lb_rcell *c = &f->cells[s[k].cells[i]];
				if (lb_param_number(c->params, d->x_param) != xs[xi])
					continue;
				double samples = 0;
				const json_t *runs = json_object_get(c->cell, "runs");
				for (size_t r = 0; r < c->nruns; r++)
					samples += json_number_value(json_object_get(
						json_object_get(json_array_get(runs, r), d->samples_key),
						"latency_samples"));
				samples = c->nruns ? samples / (double)c->nruns : 0;
				for (size_t q = 0; q < d->nquantiles; q++) {
					const struct lb_metric_desc *md =
						lb_schema_metric(f->schema, d->quantiles[q].metric);
					if (!md)
						continue;
					size_t mi = (size_t)(md - f->schema->metrics);
					struct lb_summary sum;
					lb_summarize(c->values[mi], c->nvalues[mi], &sum);
					/* x: "1 in N acquisitions waits this long or longer" */
					double one_in = d->quantiles[q].q < 1 ? 1 / (1 - d->quantiles[q].q)
									      : samples;
					/* Both axes are logarithmic: values > 0 only. */
					if (sum.n && sum.mean > 0 && isfinite(sum.mean) && one_in >= 1 &&
					    isfinite(one_in)) {
						fprintf(gp, "%.10g %.10g\n", one_in, sum.mean);
						drawn[k] = any = true;
					}
				}
			}
			fputs("EOD\n", gp);
		}
		if (!any) {
			free(drawn);
			continue;
		}
		char *body = NULL, what[256], picture[96];
		size_t blen = 0;
		FILE *b = open_memstream(&body, &blen);
		if (!b) {
			free(drawn);
			continue;
		}
		snprintf(what, sizeof(what), "lock acquisition latency distribution at %s = %g "
			 "(p50, p99, p99.9, max; mean of the runs)", d->x_param, xs[xi]);
		title(b, what, f);
		fputs("set xlabel '1 in N sampled acquisitions waits this long or longer (N)'\n"
		      "set ylabel 'acquisition latency (ns)'\nset logscale xy 10\nset grid xtics ytics mxtics mytics\n"
		      "set key outside right top\nplot ", b);
		bool first = true;
		for (size_t k = 0; k < ns; k++) {
			if (!drawn[k])
				continue;
			fprintf(b, "%s$lat_x%zu_s%zu using 1:2 with linespoints lw 1.5 title ",
				first ? "" : ", ", xi, k);
			lb_plot_gp_string(b, s[k].label);
			first = false;
		}
		free(drawn);
		fputs("\nunset logscale\n", b);
		fclose(b);
		snprintf(picture, sizeof(picture), "latency-%s%g", d->x_param, xs[xi]);
		file_name_part(picture);
		emit(gp, body, dir, prefix, picture, formats, o);
		free(body);
		pictures++;
	}
	return pictures;
}

/* Per-thread share of the operations at the largest x, from each cell's first run. */
static size_t fairness(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
		       struct series *s, size_t ns, const char *dir, const char *prefix, int formats,
		       struct lb_plot_outputs *o)
{
	double xmax = -INFINITY;
	for (size_t c = 0; c < f->ncells; c++)
		xmax = fmax(xmax, lb_param_number(f->cells[c].params, d->x_param));
	bool any = false;
	bool *drawn = calloc(ns ? ns : 1, sizeof(*drawn));
	if (!drawn)
		return 0;
	for (size_t k = 0; k < ns; k++) {
		fprintf(gp, "$fair_s%zu << EOD\n", k);
		for (size_t i = 0; i < s[k].n; i++) {
			const struct lb_rcell *c = &f->cells[s[k].cells[i]];
			if (lb_param_number(c->params, d->x_param) != xmax)
				continue;
			const json_t *threads = json_object_get(
				json_array_get(json_object_get(c->cell, "runs"), 0), d->per_thread_key);
			size_t n = json_array_size(threads);
			double total = 0;
			for (size_t t = 0; t < n; t++)
				total += json_number_value(
					json_object_get(json_array_get(threads, t), d->per_thread_ops));
			for (size_t t = 0; t < n && total > 0 && isfinite(total); t++) {
				double ops = json_number_value(
					json_object_get(json_array_get(threads, t), d->per_thread_ops));
				if (!isfinite(ops * (double)n / total))
					continue;
				fprintf(gp, "%zu %.10g\n", t, ops * (double)n / total);
				drawn[k] = any = true;
			}
		}
		fputs("EOD\n", gp);
	}
	char *body = NULL, what[256];
	size_t blen = 0;
	FILE *b = any ? open_memstream(&body, &blen) : NULL;
	if (!b) {
		free(drawn);
		return 0;
	}
	snprintf(what, sizeof(what), "per-thread fairness at %s = %g: each thread's operations / "
		 "the mean (1 = fair share; first run)", d->x_param, xmax);
	title(b, what, f);
	fputs("set xlabel 'thread index'\nset ylabel 'share of operations (x fair share)'\n"
	      "set key outside right top\nset grid\nset yrange [0:*]\nplot ", b);
	for (size_t k = 0; k < ns; k++) {
		if (!drawn[k])
			continue;
		fprintf(b, "$fair_s%zu using 1:2 with linespoints lw 1.5 title ", k);
		lb_plot_gp_string(b, s[k].label);
		fputs(", ", b);
	}
	free(drawn);
	fputs("1 with lines dt 2 lc 'black' title 'fair share'\nunset yrange\n", b);
	fclose(b);
	emit(gp, body, dir, prefix, "fairness", formats, o);
	free(body);
	return 1;
}

size_t lb_plot_script(FILE *gp, const struct lb_rfile *f, const struct lb_plot_hints *d,
		      const char *dir, const char *prefix, int formats, struct lb_plot_outputs *o)
{
	struct series *s = NULL;
	size_t pictures = 0;
	if (!f->ncells)
		return 0;
	size_t ns = make_series(f, d->x_param, &s);
	fputs("# lockbench plot: generated gnuplot script\nset encoding utf8\n", gp);
	bool varies = d->x_param && distinct_x(f, d->x_param) > 1;
	for (size_t i = 0; d->curves[i]; i++)
		if (lb_schema_metric(f->schema, d->curves[i])) {
			pictures += varies ? scaling(gp, f, d, d->curves[i], s, ns, dir, prefix,
						     formats, o)
					   : bars(gp, f, d->curves[i], dir, prefix, formats, o);
		}
	if (d->hist_key)
		pictures += histograms(gp, f, d, dir, prefix, formats, o);
	if (d->quantiles && d->x_param)
		pictures += latency(gp, f, d, s, ns, dir, prefix, formats, o);
	if (d->per_thread_key && d->x_param)
		pictures += fairness(gp, f, d, s, ns, dir, prefix, formats, o);
	free_series(s, ns);
	return pictures;
}

/* For plot_overlay.c: emit() under a public name. */
void lb_plot_emit(FILE *gp, const char *body, const char *dir, const char *prefix,
		  const char *picture, int formats, struct lb_plot_outputs *o)
{
	emit(gp, body, dir, prefix, picture, formats, o);
}
