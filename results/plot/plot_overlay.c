/* SPDX-License-Identifier: MIT */
/*
 * plot_overlay.c - `lockbench plot --overlay`: the PRE/POST picture.  Two or
 * more result files (or one file with several series, such as an `ab`
 * result's A and B) in one picture: every series' headline metric against
 * the x param with +-1 sd error bars on top, and below it the difference of
 * each series from its reference in %, with the error bar of that
 * difference (both sds propagated).  The reference of a series in file k > 0
 * is the series of file 0 with the same params (else file 0's first); in a
 * single file, the file's first series.
 */
#include "plot_overlay.h"
#include "lb_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct oseries {
	const struct lb_rfile *file;
	char key[256];        /* params but x, "k=v ..." */
	char label[400];      /* "file: key" */
	double x[64], mean[64], sd[64];
	size_t n;
};

/* Every string from a file reaches the script single-quoted (plot_script.c). */
static void quote(FILE *gp, const char *s)
{
	lb_plot_gp_string(gp, s);
}

static void params_key(const json_t *params, const char *skip, char *buf, size_t len)
{
	const char *k;
	json_t *v;
	size_t used = 0;
	buf[0] = '\0';
	json_object_foreach((json_t *)params, k, v) {
		if (!strcmp(k, skip) || used >= len)
			continue;
		char text[128];
		lb_param_text(v, text, sizeof(text));
		int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", k, text);
		used += w > 0 ? (size_t)w : 0;
	}
}

/* Every file's cells grouped by params but x, each group sorted by x. */
static size_t collect(const struct lb_rfile *files, const char *const *names, size_t nfiles,
		      const char *x, const char *metric, struct oseries *s, size_t cap)
{
	size_t n = 0;
	for (size_t f = 0; f < nfiles; f++) {
		const struct lb_metric_desc *md = lb_schema_metric(files[f].schema, metric);
		if (!md)
			continue;
		size_t mi = (size_t)(md - files[f].schema->metrics);
		for (size_t c = 0; c < files[f].ncells; c++) {
			const struct lb_rcell *cell = &files[f].cells[c];
			char key[256];
			params_key(cell->params, x, key, sizeof(key));
			size_t k = 0;
			while (k < n && !(s[k].file == &files[f] && !strcmp(s[k].key, key)))
				k++;
			if (k == n) {
				if (n == cap)
					continue;
				memset(&s[n], 0, sizeof(s[n]));
				s[n].file = &files[f];
				snprintf(s[n].key, sizeof(s[n].key), "%s", key);
				snprintf(s[n].label, sizeof(s[n].label), "%s: %s", names[f], key);
				n++;
			}
			struct lb_summary sum;
			lb_summarize(cell->values[mi], cell->nvalues[mi], &sum);
			if (!sum.n || s[k].n == 64)
				continue;
			size_t i = s[k].n++;
			s[k].x[i] = lb_param_number(cell->params, x);
			s[k].mean[i] = sum.mean;
			s[k].sd[i] = sum.sd;
			for (; i > 0 && s[k].x[i - 1] > s[k].x[i]; i--) { /* insertion by x */
				double t;
				t = s[k].x[i], s[k].x[i] = s[k].x[i - 1], s[k].x[i - 1] = t;
				t = s[k].mean[i], s[k].mean[i] = s[k].mean[i - 1], s[k].mean[i - 1] = t;
				t = s[k].sd[i], s[k].sd[i] = s[k].sd[i - 1], s[k].sd[i - 1] = t;
			}
		}
	}
	return n;
}

static const struct oseries *reference(const struct oseries *s, size_t n, size_t k,
				       const struct lb_rfile *first)
{
	if (s[k].file == first)
		return &s[0];
	for (size_t i = 0; i < n; i++)
		if (s[i].file == first && !strcmp(s[i].key, s[k].key))
			return &s[i];
	return &s[0];
}

/*
 * The script's body.  drows[k]: rows of series k's delta block ($dvK; 0
 * when it is its own reference or no x matched).  gnuplot refuses a plot
 * command whose every point is undefined, so empty series are left out, and
 * without a delta row there is no delta panel (one file with one series).
 */
static void body(FILE *b, const struct oseries *s, size_t n, const size_t *drows,
		 const struct lb_rfile *first, const char *x, const char *metric)
{
	size_t deltas = 0;
	for (size_t k = 0; k < n; k++)
		deltas += drows[k] != 0;
	const struct lb_metric_desc *md = lb_schema_metric(first->schema, metric);
	char t[1024], cmd[200];
	lb_plot_command_text(first, cmd, sizeof(cmd));
	snprintf(t, sizeof(t), "%s%s vs %s, overlaid (mean; error bars +-1 sd)\n%s\n%s",
		 first->model ? "MODEL PREDICTION: " : "", md ? md->title : metric, x,
		 first->host_line, cmd);
	fputs(deltas ? "set multiplot\nset lmargin 12\nset rmargin 34\n"
		       "set origin 0,0.35\nset size 1,0.65\nset grid\nset key outside right top\n"
		       "set logscale x 2\nset format x ''\nset xlabel ''\nset title "
		     : "set lmargin 12\nset rmargin 34\nset grid\nset key outside right top\n"
		       "set logscale x 2\nset format x '%g'\nset xlabel ", b);
	if (!deltas) {
		quote(b, x);
		fputs("\nset title ", b);
	}
	quote(b, t);
	fputs("\nset ylabel ", b);
	char axis[160];
	snprintf(axis, sizeof(axis), "%s%s%s%s", md ? md->title : metric, md && *md->unit ? " (" : "",
		 md && *md->unit ? md->unit : "", md && *md->unit ? ")" : "");
	quote(b, axis);
	fputs("\nset yrange [0:*]\nplot ", b);
	size_t drawn = 0;
	for (size_t k = 0; k < n; k++) {
		if (!s[k].n)
			continue;
		fprintf(b, "%s$ov%zu using 1:2:3 with yerrorlines lw 1.5 lc %zu title ",
			drawn++ ? ", " : "", k, k + 1);
		quote(b, s[k].label);
	}
	if (!deltas) {
		fputs("\nunset logscale\n", b);
		return;
	}
	fputs("\nunset title\nset origin 0,0\nset size 1,0.35\nset format x '%g'\nset xlabel ", b);
	quote(b, x);
	fputs("\nset ylabel 'delta vs reference (%)'\nset autoscale y\n"
	      "set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead dt 2\nplot ", b);
	size_t plotted = 0;
	for (size_t k = 0; k < n; k++) {
		if (!drows[k])
			continue;
		/* The same colour as the series in the panel above. */
		fprintf(b, "%s$dv%zu using 1:2:3 with yerrorlines lw 1.5 lc %zu title ",
			plotted++ ? ", " : "", k, k + 1);
		quote(b, s[k].label);
	}
	fputs("\nunset arrow 1\nunset multiplot\nunset logscale\n", b);
}

size_t lb_plot_overlay(FILE *gp, const struct lb_rfile *files, const char *const *names,
		       size_t nfiles, const struct lb_plot_hints *d, const char *dir, int formats,
		       struct lb_plot_outputs *o)
{
	const char *x = d->x_param, *metric = d->curves && d->curves[0] ? d->curves[0] : NULL;
	if (!x || !metric || !nfiles)
		return 0;
	struct oseries *s = calloc(64, sizeof(*s));
	if (!s)
		return 0;
	size_t n = collect(files, names, nfiles, x, metric, s, 64), drows[64] = { 0 }, points = 0;
	for (size_t k = 0; k < n; k++)
		points += s[k].n;
	if (!points) { /* no finite value anywhere: nothing to draw */
		free(s);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		const struct oseries *r = reference(s, n, k, &files[0]);
		fprintf(gp, "$ov%zu << EOD\n", k);
		for (size_t i = 0; i < s[k].n; i++)
			fprintf(gp, "%.10g %.10g %.10g\n", s[k].x[i], s[k].mean[i], s[k].sd[i]);
		fputs("EOD\n", gp);
		if (r == &s[k])
			continue;
		fprintf(gp, "$dv%zu << EOD\n", k);
		for (size_t i = 0; i < s[k].n; i++)
			for (size_t j = 0; j < r->n; j++) {
				if (r->x[j] != s[k].x[i] || r->mean[j] == 0)
					continue;
				double m = r->mean[j], v = s[k].mean[i];
				double err = hypot(s[k].sd[i] / m, v * r->sd[j] / (m * m)) * 100;
				fprintf(gp, "%.10g %.10g %.10g\n", s[k].x[i], (v - m) / m * 100, err);
				drows[k]++;
			}
		fputs("EOD\n", gp);
	}
	char *text = NULL;
	size_t len = 0;
	FILE *b = open_memstream(&text, &len);
	if (!b) {
		free(s);
		return 0;
	}
	body(b, s, n, drows, &files[0], x, metric);
	fclose(b);
	char picture[128];
	snprintf(picture, sizeof(picture), "%s-vs-%s", metric, x);
	for (char *p = picture; *p; p++)
		*p = *p == '_' ? '-' : *p;
	lb_plot_emit(gp, text, dir, "overlay", picture, formats, o);
	free(text);
	free(s);
	return n ? 1 : 0;
}
