/* SPDX-License-Identifier: MIT */
/* lb_opt.c - getopt tables, --help, defaults and value parsing from an option table. */
#include "lb_opt.h"
#include "lb_cli.h"
#include "lb_time.h"
#include "lb_work.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's value for row i: its short letter, or past every char. */
#define LONG_ONLY_BASE 256

static size_t row_count(const struct lb_opt_cmd *cmd)
{
	size_t n = 0;
	while (cmd->opts[n].name)
		n++;
	if (n > LB_OPT_MAX_ROWS) {
		fprintf(stderr, "%s: %zu option rows, more than %d\n", cmd->name, n, LB_OPT_MAX_ROWS);
		abort();
	}
	return n;
}

static bool takes_value(const struct lb_opt *o)
{
	return o->kind != LB_OPT_FLAG && o->kind != LB_OPT_HELP;
}

/* "lockbench bench --help", for the errors' pointer to the help. */
static const char *help_hint(const struct lb_opt_cmd *cmd, char *buf, size_t len)
{
	snprintf(buf, len, "%s --help", cmd->name);
	return buf;
}

void lb_opt_bad_value(const struct lb_opt *o, const char *arg, const char *accepted)
{
	lb_usage_error("--%s: '%s' is not %s; accepted: %s", o->name, arg,
		       o->invalid ? o->invalid : "valid", accepted);
}

/* The accepted values of a row as its error names them. */
static const char *accepted_text(const struct lb_opt *o, char *buf, size_t len)
{
	if (o->accepted)
		return o->accepted;
	if (o->kind == LB_OPT_ENUM) {
		size_t used = 0;
		buf[0] = '\0';
		for (size_t i = 0; o->choices[i] && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
						 o->choices[i]);
		return buf;
	}
	snprintf(buf, len, "%llu..%llu%s%s", (unsigned long long)o->min,
		 (unsigned long long)o->max, o->unit ? " " : "", o->unit ? o->unit : "");
	return buf;
}

static int parse_enum(const struct lb_opt *o, const char *arg, void *field)
{
	for (int i = 0; o->choices[i]; i++)
		if (!strcmp(arg, o->choices[i])) {
			memcpy(field, &i, sizeof(i));
			return 0;
		}
	return -1;
}

/* Store the value of `arg` for row `o`; 0, or -1 for the uniform error. */
static int parse_value(const struct lb_opt *o, const char *arg, void *base)
{
	void *field = lb_opt_field(o, base);
	unsigned int u;

	switch (o->kind) {
	case LB_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case LB_OPT_HELP:
		return 0;
	case LB_OPT_UINT:
		return lb_parse_uint(arg, (unsigned int)o->min, (unsigned int)o->max, field);
	case LB_OPT_INT:
		if (lb_parse_uint(arg, (unsigned int)o->min, (unsigned int)o->max, &u))
			return -1;
		*(int *)field = (int)u;
		return 0;
	case LB_OPT_U64:
		return lb_parse_u64(arg, o->min, o->max, field);
	case LB_OPT_DURATION:
		return lb_parse_duration_ns(arg, o->unit_ns, o->min, o->max, field);
	case LB_OPT_UINT_LIST:
		return lb_parse_uint_list(arg, (unsigned int)o->min, (unsigned int)o->max, field,
					  o->cap, (size_t *)((char *)base + o->count_offset));
	case LB_OPT_STRING:
		if (o->needs && !*arg)
			lb_usage_error("--%s: needs %s", o->name, o->needs);
		*(const char **)field = arg;
		return 0;
	case LB_OPT_ENUM:
		return parse_enum(o, arg, field);
	case LB_OPT_CUSTOM:
		return o->parse(o, arg, base);
	}
	return -1;
}

static void apply(const struct lb_opt *o, const char *arg, void *base)
{
	char accepted[512];
	if (parse_value(o, arg, base))
		lb_opt_bad_value(o, arg, accepted_text(o, accepted, sizeof(accepted)));
}

void lb_opt_defaults(const struct lb_opt_cmd *cmd, void *base)
{
	for (const struct lb_opt *o = cmd->opts; o->name; o++) {
		if (!o->def)
			continue;
		if (parse_value(o, o->def, base)) {
			fprintf(stderr, "%s: the default '%s' of --%s does not parse\n", cmd->name,
				o->def, o->name);
			abort(); /* a bad table, not bad input */
		}
	}
}

/* One entry: "  -l, --lock LIST        text", continuation lines under the text. */
static void help_row(const struct lb_opt *o, int column, FILE *out)
{
	int width = column - 3; /* the name column between "  " and the text's space */
	char left[64];
	snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
		 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
		 o->arg ? (o->bare ? "[=" : " ") : "", o->arg ? o->arg : "");
	if (o->bare)
		strncat(left, "]", sizeof(left) - strlen(left) - 1);
	const char *text = o->help_fn ? o->help_fn() : o->help;
	fprintf(out, "  %-*s%s", width, left, strlen(left) >= (size_t)width ? "  " : " ");
	for (const char *p = text; *p; p++) {
		fputc(*p, out);
		if (*p == '\n' && p[1])
			fprintf(out, "%*s", column, "");
	}
	fputc('\n', out);
	if (o->alias)
		fprintf(out, "%*s(also --%s)\n", column, "", o->alias);
}

void lb_opt_help(const struct lb_opt_cmd *cmd, FILE *out)
{
	fputs(cmd->usage, out);
	for (const struct lb_opt *o = cmd->opts; o->name; o++)
		help_row(o, cmd->help_column ? cmd->help_column : 25, out);
	if (cmd->epilogue)
		fputs(cmd->epilogue, out);
}

/* The rows for the man-page check: "--name -x ARG", '-' for what a row lacks. */
static void list_options(const struct lb_opt_cmd *cmd)
{
	for (const struct lb_opt *o = cmd->opts; o->name; o++) {
		char letter[3] = { '-', o->short_name, '\0' };
		printf("--%s %s %s\n", o->name, o->short_name ? letter : "-", o->arg ? o->arg : "-");
		if (o->alias)
			printf("--%s - %s\n", o->alias, o->arg ? o->arg : "-");
	}
}

/* getopt_long's spellings of the rows, and the storage of the dashed ones. */
struct getopt_tables {
	struct option longopts[LB_OPT_MAX_ROWS * LB_OPT_MAX_SPELLINGS + 1];
	char dashed[LB_OPT_MAX_ROWS * LB_OPT_MAX_SPELLINGS][48];
	char shortopts[6 * LB_OPT_MAX_ROWS + 2]; /* "x:" and a retired "y::" per row */
};

static void add_spelling(struct getopt_tables *t, size_t *k, const char *name, int has_arg,
			 int val, bool dashed_twin)
{
	t->longopts[(*k)++] = (struct option){ name, has_arg, NULL, val };
	if (!dashed_twin || !strchr(name, '_'))
		return;
	char *twin = t->dashed[*k];
	snprintf(twin, sizeof(t->dashed[0]), "%s", name);
	for (char *p = twin; *p; p++)
		if (*p == '_')
			*p = '-';
	t->longopts[(*k)++] = (struct option){ twin, has_arg, NULL, val };
}

/* Long options in row order (each name, alias and twin), then the short letters. */
static void build_getopt(const struct lb_opt_cmd *cmd, size_t n, struct getopt_tables *t)
{
	size_t k = 0, s = 0;
	t->shortopts[s++] = ':'; /* ':' for a missing value, so lb_cli_getopt_fail names it */
	for (size_t i = 0; i < n; i++) {
		const struct lb_opt *o = &cmd->opts[i];
		int has_arg = !takes_value(o) ? no_argument
			      : o->bare       ? optional_argument
					      : required_argument;
		int val = o->short_name ? o->short_name : LONG_ONLY_BASE + (int)i;
		add_spelling(t, &k, o->name, has_arg, val, cmd->dashed_twins);
		if (o->alias)
			add_spelling(t, &k, o->alias, has_arg, val, cmd->dashed_twins);
		if (o->short_name) {
			t->shortopts[s++] = o->short_name;
			if (takes_value(o))
				t->shortopts[s++] = ':';
		}
		if (o->retired_short) {
			/* Its value optional, so a missing one still reaches the
			 * line that names the new spelling. */
			t->shortopts[s++] = o->retired_short;
			t->shortopts[s++] = ':';
			t->shortopts[s++] = ':';
		}
	}
	t->longopts[k] = (struct option){ 0 };
	t->shortopts[s] = '\0';
}

static size_t row_of(const struct lb_opt_cmd *cmd, size_t n, int c)
{
	if (c >= LONG_ONLY_BASE && (size_t)(c - LONG_ONLY_BASE) < n)
		return (size_t)(c - LONG_ONLY_BASE);
	for (size_t i = 0; i < n; i++)
		if (cmd->opts[i].short_name == c)
			return i;
	for (size_t i = 0; i < n; i++)
		if (cmd->opts[i].retired_short == c)
			return i;
	return n;
}

/* A retired short letter: the one line that names the spelling to use. */
static void refuse_retired(const struct lb_opt_cmd *cmd, const struct lb_opt *o)
{
	lb_usage_error("-%c: no longer short for --%s in %s (a short letter means one thing in "
		       "every command); accepted: --%s%s%s", o->retired_short, o->name, cmd->name,
		       o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void lb_opt_parse(const struct lb_opt_cmd *cmd, int argc, char **argv, void *base,
		  struct lb_opt_seen *seen)
{
	size_t n = row_count(cmd);
	struct getopt_tables t;
	char hint[128];
	bool help = false;

	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		list_options(cmd);
		exit(0);
	}
	*seen = (struct lb_opt_seen){ 0 };
	lb_opt_defaults(cmd, base);
	build_getopt(cmd, n, &t);
	help_hint(cmd, hint, sizeof(hint));
	opterr = 0; /* we print our own one-line errors */
	optind = 1;
	for (;;) {
		int idx = -1;
		int c = getopt_long(argc, argv, t.shortopts, t.longopts, &idx);
		if (c == -1)
			break;
		size_t i = row_of(cmd, n, c);
		if (i == n) /* '?' or ':' */
			lb_cli_getopt_fail(c, argc, argv, t.shortopts + 1, t.longopts, hint);
		if (c == cmd->opts[i].retired_short && c != cmd->opts[i].short_name)
			refuse_retired(cmd, &cmd->opts[i]);
		seen->given |= UINT64_C(1) << i;
		/* The row under the name as typed, so its messages name that spelling. */
		struct lb_opt spelled = cmd->opts[i];
		if (idx >= 0)
			spelled.name = t.longopts[idx].name;
		if (spelled.kind == LB_OPT_HELP)
			help = true; /* after the loop: bad options and stray arguments first */
		else
			apply(&spelled, optarg || !spelled.bare ? optarg : spelled.bare, base);
	}
	if (!cmd->operands && optind < argc)
		lb_usage_error("unexpected argument '%s'; accepted: options only, see '%s'",
			       argv[optind], hint);
	if (help && cmd->help_alone && argc > 2)
		lb_usage_error("--help takes no other arguments; accepted: '%s' alone", hint);
	if (help) {
		lb_opt_help(cmd, stdout);
		exit(0);
	}
	seen->first_operand = optind;
}

bool lb_opt_given(const struct lb_opt_cmd *cmd, const struct lb_opt_seen *seen, const char *name)
{
	size_t n = row_count(cmd);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cmd->opts[i].name, name))
			return seen->given & (UINT64_C(1) << i);
	fprintf(stderr, "%s: no option row --%s\n", cmd->name, name);
	abort();
}

int lb_opt_parse_work(const struct lb_opt *o, const char *arg, void *base)
{
	struct lb_work_len *w = lb_opt_field(o, base);
	size_t len = strlen(arg);
	w->in_ns = !(len && arg[len - 1] >= '0' && arg[len - 1] <= '9');
	if (!w->in_ns)
		return lb_parse_u64(arg, 0, 1000000000, &w->value);
	return lb_parse_duration_ns(arg, 1, 0, 100 * LB_NS_PER_MS, &w->value);
}
