/* SPDX-License-Identifier: MIT */
/*
 * compare_main.c - `lockbench compare A.json B.json [C.json ...]` and the
 * ministat-like `lockbench compare --column N a.txt b.txt`: options, reading
 * the inputs, matching cells by their params, building the groups.
 */
#include "compare.h"
#include "compare_sides.h"
#include "compare_ab.h"
#include "ab_paired.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_outfile.h"
#include "result_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64

struct cmp_opts {
	double confidence;
	const char *metrics_arg, *match_arg, *labels_arg, *json_path, *csv_path;
	const char *side_arg[2]; /* --side-a, --side-b: two sides inside one file */
	unsigned int column; /* 0: result files; N: plain numbers, field N */
	enum lb_better better;
	bool wide;
	const char *paths[LB_CMP_MAX_SIDES];
	size_t npaths;
};

static int parse_confidence(const struct lb_opt *opt, const char *arg, void *base)
{
	double pct;
	(void)opt;
	if (lb_parse_double(arg, 50, 99.99, &pct))
		return -1;
	((struct cmp_opts *)base)->confidence = pct / 100;
	return 0;
}

static int parse_better(const struct lb_opt *opt, const char *arg, void *base)
{
	struct cmp_opts *o = base;
	(void)opt;
	if (!strcmp(arg, "higher"))
		o->better = LB_BETTER_HIGHER;
	else if (!strcmp(arg, "lower"))
		o->better = LB_BETTER_LOWER;
	else
		return -1;
	return 0;
}

static const struct lb_opt cmp_opts_table[] = {
	{ .name = "metric", .short_name = 'm', .kind = LB_OPT_STRING, .arg = "LIST",
	  .help = "metrics to compare, comma separated, or 'all'\n"
		  "(default: the workload's headline metric, e.g.\n"
		  "ops_per_sec for bench)",
	  .offset = LB_OPT_AT(struct cmp_opts, metrics_arg, const char *) },
	{ .name = "confidence", .short_name = 'c', .kind = LB_OPT_CUSTOM, .arg = "P",
	  .help = "confidence level in % for the verdict (default 95;\n50..99.99)",
	  .def = "95", .parse = parse_confidence,
	  .accepted = "a percentage 50..99.99, e.g. 95 or 99.5" },
	{ .name = "match", .kind = LB_OPT_STRING, .arg = "KEYS",
	  .help = "params that identify a cell, comma separated\n(default: all of them)",
	  .offset = LB_OPT_AT(struct cmp_opts, match_arg, const char *) },
	/* -L is the lock under test in rt and slab (one option vocabulary). */
	{ .name = "label", .retired_short = 'L', .kind = LB_OPT_STRING, .arg = "LIST",
	  .help = "names of the files in the table, comma separated,\n"
		  "one per file (default: the file names)",
	  .offset = LB_OPT_AT(struct cmp_opts, labels_arg, const char *) },
	{ .name = "column", .short_name = 'C', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "plain-number mode: read field N (1-based, split on\n"
		  "blanks) of every line of each text file; lines\n"
		  "starting with '#' and blank lines are skipped",
	  .min = 1, .max = 1000, .accepted = "a field number 1..1000",
	  .offset = LB_OPT_AT(struct cmp_opts, column, unsigned int) },
	{ .name = "better", .kind = LB_OPT_CUSTOM, .arg = "DIR",
	  .help = "plain-number mode: higher or lower is better\n(default: no direction)",
	  .parse = parse_better, .accepted = "higher, lower" },
	{ .name = "side-a", .short_name = 'A', .kind = LB_OPT_STRING, .arg = "SEL",
	  .help = "one file, two sides: side A is the cells whose\n"
		  "params match SEL, KEY=VALUE[,KEY=VALUE...]\n"
		  "(e.g. lock=ticket); needs --side-b",
	  .needs = "KEY=VALUE[,KEY=VALUE...]",
	  .offset = LB_OPT_AT(struct cmp_opts, side_arg[0], const char *) },
	{ .name = "side-b", .short_name = 'B', .kind = LB_OPT_STRING, .arg = "SEL",
	  .help = "side B's cells (the same keys as --side-a, other\n"
		  "values); A and B are paired on their other params",
	  .needs = "KEY=VALUE[,KEY=VALUE...]",
	  .offset = LB_OPT_AT(struct cmp_opts, side_arg[1], const char *) },
	LB_OPT_ROW_JSON(struct cmp_opts, json_path, "also write the comparison as JSON (atomically)"),
	LB_OPT_ROW_CSV(struct cmp_opts, csv_path, "also write one CSV row per file and comparison"),
	LB_OPT_ROW_WIDE(struct cmp_opts, wide),
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};

static const struct lb_opt_cmd cmp_cmd = {
	.name = "lockbench compare",
	.usage = "usage: lockbench compare [options] A.json B.json [C.json ...]\n"
		 "       lockbench compare --side-a SEL --side-b SEL [options] FILE.json\n"
		 "       lockbench compare [options] AIM7-AB.json\n"
		 "       lockbench compare --column N [options] a.txt b.txt [c.txt ...]\n"
		 "\n"
		 "Put two or more result files side by side: for every cell present in\n"
		 "all of them (matched by its params: lock, threads, ...) and every chosen\n"
		 "metric, COUNT, MEAN, MEDIAN and STDDEV (MIN, MAX with --wide) of each\n"
		 "file's runs, the change against the first file (A) in %, and a\n"
		 "verdict: Welch's t-test\n"
		 "(\"difference X% +/- Y%\" or \"no difference proven\") with the\n"
		 "Mann-Whitney U p-value.  Cells missing from a file are listed.\n"
		 "One file with --side-a/--side-b: the cells one selector picks against\n"
		 "those the other picks (two locks of one run).  An aim7 --ab file (or an\n"
		 "ab file) alone: its PRE side against its POST side per load point.\n"
		 "\n",
	.epilogue = "\nAt most " LB_OPT_STR(LB_CMP_MAX_SIDES) " files; fewer than "
		    LB_OPT_STR(LB_CMP_MIN_RUNS) " runs on a side gives a warning.\n",
	.opts = cmp_opts_table,
	.operands = true,
};

static void parse(int argc, char **argv, struct cmp_opts *o)
{
	struct lb_opt_seen seen;
	memset(o, 0, sizeof(*o));
	lb_opt_parse(&cmp_cmd, argc, argv, o, &seen);
	for (int i = seen.first_operand; i < argc; i++) {
		if (o->npaths == LB_CMP_MAX_SIDES)
			lb_usage_error("too many files (%d given); accepted: 2..%d files",
				       argc - seen.first_operand, LB_CMP_MAX_SIDES);
		o->paths[o->npaths++] = argv[i];
	}
	bool within = o->side_arg[0] || o->side_arg[1];
	if ((o->side_arg[0] == NULL) != (o->side_arg[1] == NULL))
		lb_usage_error("%s: needs %s too; accepted: --side-a KEY=VALUE --side-b KEY=VALUE",
			       o->side_arg[0] ? "--side-a" : "--side-b",
			       o->side_arg[0] ? "--side-b" : "--side-a");
	if (within && o->npaths != 1)
		lb_usage_error("--side-a/--side-b: compare two sides of one file, %zu given; accepted: "
			       "one file", o->npaths);
	if (within && o->column)
		lb_usage_error("--side-a/--side-b: not with --column (plain numbers have no params)");
	if (o->npaths < (o->column ? 2u : 1u))
		lb_usage_error("needs two files or more to compare%s, %zu given; see 'lockbench compare "
			       "--help'", o->column ? "" : " (or one aim7 --ab file)", o->npaths);

	if (!o->column && o->better != LB_BETTER_NONE)
		lb_usage_error("--better: only with --column (result files carry their directions)");
	if (o->column && (o->metrics_arg || o->match_arg))
		lb_usage_error("%s: not with --column (plain numbers have one metric and no cells)",
			       o->metrics_arg ? "--metric" : "--match");
}

/* The file name without directories and a .json/.txt extension. */
static char *default_label(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *s = strdup(base);
	if (!s)
		lb_usage_error("out of memory");
	char *dot = strrchr(s, '.');
	if (dot && dot != s && (!strcmp(dot, ".json") || !strcmp(dot, ".txt")))
		*dot = '\0';
	return s;
}

/* The sides' names: --label, or the file names (w: one file's two sides,
 * named by their selectors). */
static void set_labels(const struct cmp_opts *o, const struct lb_cmp_within *w,
		       struct lb_cmp_report *r, char **owned)
{
	r->nsides = w ? 2 : o->npaths;
	for (size_t i = 0; i < r->nsides; i++) {
		r->side_path[i] = o->paths[w ? 0 : i];
		owned[i] = w ? strdup(w->label[i]) : default_label(o->paths[i]);
		if (!owned[i])
			lb_usage_error("out of memory");
		r->side_label[i] = owned[i];
		if (w)
			r->side_selector[i] = w->sel[i].text;
	}
	if (!o->labels_arg)
		return;
	static char buf[1024];
	char *items[LB_CMP_MAX_SIDES + 1];
	size_t n;
	if (strlen(o->labels_arg) >= sizeof(buf))
		lb_usage_error("--label: list too long");
	strcpy(buf, o->labels_arg);
	if (lb_split_names(buf, items, LB_CMP_MAX_SIDES + 1, &n) || n != r->nsides)
		lb_usage_error("--label: '%s' does not name each of the %zu %s; accepted: %zu "
			       "comma-separated names", o->labels_arg, r->nsides, w ? "sides" : "files",
			       r->nsides);
	for (size_t i = 0; i < n; i++)
		r->side_label[i] = items[i];
}

/* Plain numbers: field `column` of every line. */
static double *read_plain(const char *path, unsigned int column, size_t *n)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		lb_usage_error("%s: cannot read: %s", path, strerror(errno));
	size_t cap = 64, count = 0, lineno = 0;
	double *v = malloc(cap * sizeof(*v));
	/* getline: a line of any length is one line (a fixed buffer split
	 * lines over 4 KiB into several, silently). */
	char *line = NULL;
	size_t line_cap = 0;
	while (v && getline(&line, &line_cap, fp) >= 0) {
		lineno++;
		char *save, *tok = strtok_r(line, " \t\r\n", &save);
		if (!tok || tok[0] == '#')
			continue;
		for (unsigned int f = 1; tok && f < column; f++)
			tok = strtok_r(NULL, " \t\r\n", &save);
		if (!tok) {
			fclose(fp);
			lb_usage_error("--column: %s line %zu has fewer than %u fields; accepted: "
				       "lines with a number in field %u", path, lineno, column, column);
		}
		char *end;
		errno = 0;
		double x = strtod(tok, &end);
		if (*end || end == tok || errno || !isfinite(x)) {
			fclose(fp);
			lb_usage_error("--column: %s line %zu field %u is '%s', not a number", path,
				       lineno, column, tok);
		}
		if (count == cap) {
			cap *= 2;
			double *bigger = realloc(v, cap * sizeof(*v));
			if (!bigger)
				free(v);
			v = bigger;
			if (!v)
				break;
		}
		v[count++] = x;
	}
	free(line);
	fclose(fp);
	if (!v)
		lb_usage_error("out of memory");
	if (count == 0)
		lb_usage_error("%s: no numbers in field %u", path, column);
	*n = count;
	return v;
}

static void build_plain(const struct cmp_opts *o, struct lb_cmp_report *r, double **owned)
{
	r->schema = "plain";
	r->groups = calloc(1, sizeof(*r->groups));
	if (!r->groups)
		lb_usage_error("out of memory");
	r->ngroups = 1;
	struct lb_cmp_group *g = &r->groups[0];
	snprintf(g->cell, sizeof(g->cell), "column %u", o->column);
	snprintf(g->label, sizeof(g->label), "column %u", o->column);
	g->metric = "value";
	g->unit = "";
	g->better = o->better;
	for (size_t i = 0; i < o->npaths; i++) {
		owned[i] = read_plain(o->paths[i], o->column, &g->side[i].n);
		g->side[i].v = owned[i];
	}
}

/* Comma list validated against accepted[]; "all" when allow_all. */
static size_t parse_key_list(const char *opt, const char *arg, const char *const *accepted,
			     size_t naccepted, const char **out, bool allow_all)
{
	static char buf[2048];
	char list[1024] = "";
	char *items[MAX_LIST];
	size_t n;
	for (size_t i = 0; i < naccepted; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 accepted[i]);
	if (allow_all && !strcmp(arg, "all")) {
		for (size_t i = 0; i < naccepted; i++)
			out[i] = accepted[i];
		return naccepted;
	}
	if (strlen(arg) >= sizeof(buf) || lb_split_names(strcpy(buf, arg), items, MAX_LIST, &n))
		lb_usage_error("%s: '%s' is not a comma-separated list; accepted: %s%s", opt, arg,
			       allow_all ? "all, " : "", list);
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < naccepted && strcmp(items[i], accepted[k]))
			k++;
		if (k == naccepted)
			lb_usage_error("%s: unknown name '%s'; accepted: %s%s", opt, items[i],
				       allow_all ? "all, " : "", list);
		out[i] = accepted[k];
	}
	return n;
}

/* Params whose value differs between cells (varying: from
 * lb_rfile_varying_keys over every file): the ones a label needs. */
static void cell_label(const json_t *varying, const json_t *params, const struct lb_cmp_within *w,
		       char *buf, size_t len)
{
	const char *key;
	const json_t *v;
	size_t used = 0;
	bool first_key = true;
	buf[0] = '\0';
	json_object_foreach((json_t *)params, key, v) {
		char mine[128];
		bool varies = json_object_get(varying, key) != NULL;
		lb_param_text(v, mine, sizeof(mine));
		bool is_first = first_key;
		first_key = false;
		if (!varies || used >= len)
			continue;
		int wrote = is_first ? snprintf(buf + used, len - used, "%s%s", used ? " " : "", mine)
				     : snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", key,
						mine);
		used += wrote > 0 ? (size_t)wrote : 0;
	}
	if (!buf[0]) { /* one cell everywhere: name it by its first param (not a side's) */
		first_key = true;
		json_object_foreach((json_t *)params, key, v) {
			char mine[128];
			if (w && lb_cmp_within_excludes(w, key)) {
				first_key = false;
				continue;
			}
			lb_param_text(v, mine, sizeof(mine));
			if (first_key)
				snprintf(buf, len, "%s", mine);
			else
				snprintf(buf, len, "%s=%s", key, mine);
			break;
		}
	}
}

static void add_unmatched(struct lb_cmp_report *r, char letter, const char *side,
			  const char *label)
{
	char **grown = realloc(r->unmatched, (r->nunmatched + 1) * sizeof(*grown));
	if (!grown)
		lb_usage_error("out of memory");
	r->unmatched = grown;
	size_t len = strlen(label) + strlen(side) + 16;
	r->unmatched[r->nunmatched] = malloc(len);
	if (!r->unmatched[r->nunmatched])
		lb_usage_error("out of memory");
	snprintf(r->unmatched[r->nunmatched++], len, "(%c) %s: %s", letter, side, label);
}

/* Load the inputs; one file with sides of its own gets them in *w. */
static void load_files(const struct cmp_opts *o, struct lb_rfile *files, struct lb_cmp_within **w,
		       struct lb_cmp_within *storage)
{
	char err[1024];
	for (size_t i = 0; i < o->npaths; i++) {
		if (lb_rfile_load(o->paths[i], &files[i], err, sizeof(err)))
			lb_usage_error("%s", err);
		if (files[i].schema != files[0].schema)
			lb_usage_error("%s holds %s results but %s holds %s; accepted: files of one "
				       "workload", o->paths[i], files[i].schema->name, o->paths[0],
				       files[0].schema->name);
	}
	*w = NULL;
	if (o->npaths == 1) {
		lb_cmp_within_setup(&files[0], o->side_arg[0], o->side_arg[1], storage);
		*w = storage;
	}
}

/* Within one file, without --match: every param of its cells but the
 * sides' own (borrowed from the document). */
static const char *const *within_match_keys(const struct lb_rfile *f,
					    const struct lb_cmp_within *w, const char **keys,
					    size_t cap)
{
	size_t n = 0;
	for (size_t c = 0; c < f->ncells; c++) {
		const char *key;
		const json_t *v;
		json_object_foreach(f->cells[c].params, key, v) {
			bool have = lb_cmp_within_excludes(w, key);
			for (size_t i = 0; i < n && !have; i++)
				have = !strcmp(keys[i], key);
			if (have)
				continue;
			if (n + 1 == cap)
				lb_usage_error("%s: more than %zu params; accepted: fewer, or --match",
					       f->path, cap - 1);
			keys[n++] = key;
		}
	}
	keys[n] = NULL;
	return keys;
}

/*
 * The groups: side i is sides[i]'s cells, all of them (member[i] NULL) or
 * those member[i] marks (two sides of one file, w).
 */
static void build_results(const struct cmp_opts *o, struct lb_cmp_report *r,
			  struct lb_rfile *files, const struct lb_cmp_within *w)
{
	size_t nsides = r->nsides;
	struct lb_rfile *sides[LB_CMP_MAX_SIDES];
	const bool *member[LB_CMP_MAX_SIDES] = { NULL };
	for (size_t i = 0; i < nsides; i++) {
		sides[i] = &files[w ? 0 : i];
		member[i] = w ? w->member[i] : NULL;
		double *c2c = r->side_c2c[i];
		r->side_interrupted[i] = sides[i]->interrupted;
		r->side_model[i] = sides[i]->model;
		lb_rfile_c2c_range(sides[i], member[i], &c2c[0], &c2c[1], &c2c[2]);
		r->side_load[i] = sides[i]->load_average;
		r->side_steal[i] = sides[i]->steal_s;
	}
	const struct lb_workload_schema *s = files[0].schema;
	static char schema_full[128];
	snprintf(schema_full, sizeof(schema_full), "%s-%u", s->name, s->version);
	r->schema = schema_full;

	const char *metric_keys[MAX_LIST], *match_keys[MAX_LIST + 1];
	const char *all_metrics[MAX_LIST];
	size_t nall = s->nmetrics < MAX_LIST ? s->nmetrics : MAX_LIST, nmetrics = 1;
	for (size_t m = 0; m < nall; m++)
		all_metrics[m] = s->metrics[m].key;
	metric_keys[0] = all_metrics[0];
	if (o->metrics_arg)
		nmetrics = parse_key_list("--metric", o->metrics_arg, all_metrics, nall, metric_keys,
					  true);
	const char *const *match = NULL;
	if (o->match_arg) {
		size_t nparams = 0;
		while (s->params[nparams] && nparams < MAX_LIST)
			nparams++;
		size_t n = parse_key_list("--match", o->match_arg, (const char *const *)s->params,
					  nparams, match_keys, false);
		match_keys[n] = NULL;
		match = match_keys;
		for (size_t i = 0; w && i < n; i++)
			if (lb_cmp_within_excludes(w, match_keys[i]))
				lb_usage_error("--match: '%s' tells the two sides apart (%s, %s), so no "
					       "cells would pair; accepted: the other params",
					       match_keys[i], w->sel[0].text, w->sel[1].text);
	} else if (w) {
		match = within_match_keys(&files[0], w, match_keys, MAX_LIST + 1);
	}

	r->groups = calloc(sides[0]->ncells * nmetrics + 1, sizeof(*r->groups));
	json_t *varying = lb_rfile_varying_keys(files, o->npaths);
	if (!r->groups || !varying)
		lb_usage_error("out of memory");
	for (size_t i = 0; w && i < w->nexcluded; i++)
		json_object_del(varying, w->excluded[i]); /* the sides' labels say those */
	/* Each other side's cells by params signature; a file whose numbers
	 * mix integers and reals under one key is scanned cell by cell. */
	struct lb_rindex index[LB_CMP_MAX_SIDES] = { 0 };
	bool scan[LB_CMP_MAX_SIDES] = { false };
	for (size_t f = 1; f < nsides; f++) {
		scan[f] = lb_rfile_index_mixed(sides[0], sides[f], match);
		if (!scan[f] && lb_rfile_index_build(sides[f], match, &index[f]))
			lb_usage_error("out of memory");
	}
	for (size_t c = 0; c < sides[0]->ncells; c++) {
		if (member[0] && !member[0][c])
			continue;
		struct lb_rcell *cells[LB_CMP_MAX_SIDES] = { &sides[0]->cells[c] };
		char label[200];
		bool everywhere = true;
		cell_label(varying, cells[0]->params, w, label, sizeof(label));
		for (size_t f = 1; f < nsides; f++) {
			/* The first unmatched cell that matches, in file order. */
			const json_t *bucket = scan[f] ? NULL
							: lb_rfile_index_lookup(&index[f], cells[0]->params,
										match);
			size_t ncand = scan[f] ? sides[f]->ncells : json_array_size(bucket);
			cells[f] = NULL;
			for (size_t i = 0; i < ncand && !cells[f]; i++) {
				size_t k = scan[f] ? i
						   : (size_t)json_integer_value(json_array_get(bucket, i));
				if ((!member[f] || member[f][k]) && !sides[f]->cells[k].matched &&
				    lb_params_match(cells[0]->params, sides[f]->cells[k].params, match))
					cells[f] = &sides[f]->cells[k];
			}
			everywhere &= cells[f] != NULL;
		}
		if (!everywhere) {
			add_unmatched(r, 'A', r->side_label[0], label);
			continue;
		}
		for (size_t f = 0; f < nsides; f++)
			cells[f]->matched = true;
		for (size_t m = 0; m < nmetrics; m++) {
			const struct lb_metric_desc *md = lb_schema_metric(s, metric_keys[m]);
			size_t mi = (size_t)(md - s->metrics), total = 0;
			for (size_t f = 0; f < nsides; f++)
				total += cells[f]->nvalues[mi];
			if (total == 0)
				continue; /* not measured anywhere: nothing to say */
			struct lb_cmp_group *g = &r->groups[r->ngroups++];
			snprintf(g->cell, sizeof(g->cell), "%s", label);
			snprintf(g->label, sizeof(g->label), "%s: %s", label, md->key);
			g->metric = md->key;
			g->unit = md->unit;
			g->better = md->better;
			for (size_t f = 0; f < nsides; f++) {
				g->side[f].v = cells[f]->values[mi];
				g->side[f].n = cells[f]->nvalues[mi];
			}
		}
	}
	for (size_t f = 1; f < nsides; f++)
		for (size_t k = 0; k < sides[f]->ncells; k++)
			if ((!member[f] || member[f][k]) && !sides[f]->cells[k].matched) {
				char label[200];
				cell_label(varying, sides[f]->cells[k].params, w, label, sizeof(label));
				add_unmatched(r, (char)('A' + f), r->side_label[f], label);
			}
	for (size_t f = 1; f < nsides; f++)
		lb_rfile_index_free(&index[f]);
	json_decref(varying);
}

/*
 * The output rules of bench, aim7 and rt (lib/lb_outfile.h): --json and
 * --csv not the same file, and neither one of the inputs (it would be
 * replaced by the comparison of itself).
 */
static void check_outputs(const struct cmp_opts *o)
{
	lb_outfile_refuse_same("--json", o->json_path, "--csv", o->csv_path);
	const char *opts[2] = { "--json", "--csv" }, *outs[2] = { o->json_path, o->csv_path };
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; outs[k] && i < o->npaths; i++)
			if (lb_outfile_same_target(outs[k], o->paths[i]))
				lb_usage_error("%s '%s' names the input file '%s'; accepted: a file that "
					       "is not one of the inputs", opts[k], outs[k], o->paths[i]);
}

/* One ab file: its paired ratios (compare_ab.c), in the outputs asked. */
static int compare_one_ab(const struct cmp_opts *o, struct lb_rfile *f)
{
	struct lb_outfile json = { 0 }, csv = { 0 };
	int rc = 0;
	if (o->side_arg[0] || o->side_arg[1])
		lb_usage_error("--side-a/--side-b: %s is a lockbench ab file, whose sides are paired "
			       "slice by slice; accepted: 'lockbench compare %s' alone (its paired "
			       "ratios)", f->path, f->path);
	lb_outfile_unlink_on_signals();
	if (o->json_path)
		lb_outfile_open_or_exit("--json", o->json_path, &json, NULL);
	if (o->csv_path)
		lb_outfile_open_or_exit("--csv", o->csv_path, &csv, &json);
	FILE *table = lb_outfile_report_stream(&json, &csv);
	lb_cmp_ab_table(table, f);
	fflush(table);
	if (o->json_path) {
		lb_cmp_ab_json(json.fp, f);
		rc |= lb_outfile_commit_or_say(&json, "compare", "--json", o->json_path) != 0;
	}
	if (o->csv_path) {
		lb_cmp_ab_csv(csv.fp, f);
		rc |= lb_outfile_commit_or_say(&csv, "compare", "--csv", o->csv_path) != 0;
	}
	lb_rfile_free(f);
	return rc;
}

static int lb_cmd_compare(int argc, char **argv)
{
	struct cmp_opts o;
	struct lb_cmp_report r = { 0 };
	struct lb_rfile files[LB_CMP_MAX_SIDES] = { 0 };
	double *plain[LB_CMP_MAX_SIDES] = { 0 };
	char *labels[LB_CMP_MAX_SIDES] = { 0 };
	struct lb_outfile json = { 0 }, csv = { 0 };
	int rc = 0;

	struct lb_cmp_within within_storage, *within = NULL;

	parse(argc, argv, &o);
	check_outputs(&o);
	r.confidence = o.confidence;
	r.wide = o.wide;
	for (size_t i = 0; i < LB_CMP_MAX_SIDES; i++)
		r.side_load[i] = r.side_steal[i] = -1; /* plain numbers: not recorded */
	if (!o.column && o.npaths == 1) {
		char err[1024];
		if (lb_rfile_load(o.paths[0], &files[0], err, sizeof(err)))
			lb_usage_error("%s", err);
		if (lb_abp_is_ab(&files[0]))
			return compare_one_ab(&o, &files[0]);
		lb_rfile_free(&files[0]);
		memset(&files[0], 0, sizeof(files[0]));
	}
	if (!o.column)
		load_files(&o, files, &within, &within_storage);
	if (!o.column && lb_cmp_ab_sequential_warning(stderr, files, o.npaths))
		r.sequential_ab = true;
	set_labels(&o, within, &r, labels);
	if (o.column)
		build_plain(&o, &r, plain);
	else
		build_results(&o, &r, files, within);
	lb_outfile_unlink_on_signals();
	if (o.json_path)
		lb_outfile_open_or_exit("--json", o.json_path, &json, NULL);
	if (o.csv_path)
		lb_outfile_open_or_exit("--csv", o.csv_path, &csv, &json);
	/* stderr when the JSON or CSV goes to stdout, which then holds it alone. */
	FILE *table = lb_outfile_report_stream(&json, &csv);

	lb_cmp_compute(&r);
	if (r.ngroups == 0)
		fprintf(stderr, "%s: no cell is present in every file%s\n", lb_cli_prog(),
			o.match_arg ? "" : " (see --match)");
	lb_cmp_write_table(table, &r);
	fflush(table);
	if (o.json_path) {
		lb_cmp_write_json(json.fp, &r);
		if (lb_outfile_commit_or_say(&json, "compare", "--json", o.json_path))
			rc = 1;
	}
	if (o.csv_path) {
		lb_cmp_write_csv(csv.fp, &r);
		if (lb_outfile_commit_or_say(&csv, "compare", "--csv", o.csv_path))
			rc = 1;
	}
	for (size_t i = 0; i < LB_CMP_MAX_SIDES; i++) {
		lb_rfile_free(&files[i]);
		free(plain[i]);
		free(labels[i]);
	}
	if (within)
		lb_cmp_within_free(within);
	for (size_t i = 0; i < r.nunmatched; i++)
		free(r.unmatched[i]);
	free(r.unmatched);
	free(r.groups);
	return rc;
}

const struct lb_workload lb_workload_compare = {
	.name = "compare",
	.summary = "result files side by side: deltas, Welch t and U test verdicts",
	.main = lb_cmd_compare,
};
