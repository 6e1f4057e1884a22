/* SPDX-License-Identifier: MIT */
/*
 * lb_opt.h - one declarative table per command: every option written once.
 *
 * A row names the option (long name, short letter, argument), its --help
 * text, its default, how its value is parsed and where it goes (a field of
 * the command's own struct, by offset), and the range or the accepted
 * values.  From the rows, lb_opt_parse() builds getopt_long()'s tables,
 * prints --help, applies the defaults, stores every value and reports a bad
 * one in the uniform way: ONE line naming the option and the accepted
 * values, exit status 2 (lb_cli.h).  `CMD --list-options` (hidden) prints
 * the rows for tests/embed/test_man_options.py, so an option missing from
 * the man page fails a test.  See doc/HACKING.md, "Adding an option".
 */
#ifndef LB_OPT_H
#define LB_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lb_opt_kind {
	LB_OPT_FLAG,      /* no value: the bool field becomes true */
	LB_OPT_UINT,      /* unsigned int field, a decimal in [min, max] */
	LB_OPT_INT,       /* int field, a (non-negative) decimal in [min, max] */
	LB_OPT_U64,       /* uint64_t field, a decimal in [min, max] */
	LB_OPT_DURATION,  /* uint64_t ns field: a time with unit (bare number: unit_ns) */
	LB_OPT_UINT_LIST, /* unsigned int[cap] field + size_t count: N, A-B, A-B:S, ... */
	LB_OPT_STRING,    /* const char * field: the argument itself */
	LB_OPT_ENUM,      /* int-sized field: the index of the argument in choices[] */
	LB_OPT_CUSTOM,    /* parse(): anything else */
	LB_OPT_HELP,      /* --help: printed after every option is checked, exit 0 */
};

struct lb_opt;

/*
 * A custom parser: store what `arg` says into `base` (the command's struct).
 * o->name is the option as the user spelled it (an alias or a dashed twin),
 * so its messages name what was typed.
 * Return 0, or -1 for the uniform error ("--NAME: 'ARG' is not INVALID;
 * accepted: ACCEPTED"); a parser with a more precise message calls
 * lb_opt_bad_value() or lb_usage_error() itself.
 */
typedef int lb_opt_parse_fn(const struct lb_opt *o, const char *arg, void *base);

struct lb_opt {
	const char *name;        /* long name without "--"; NULL ends the table */
	const char *alias;       /* another long name for it (an older spelling), or NULL */
	char short_name;         /* the short letter, or 0 */
	char retired_short;      /* a letter the row answered to once and gave up (it means
				  * something else in another command): refused in one line
				  * naming --name, or 0 */
	enum lb_opt_kind kind;
	const char *arg;         /* the argument's name in --help ("LIST"); NULL for flags */
	const char *help;        /* --help text; each '\n' starts an indented line */
	const char *def;         /* default, run through the row's parser before argv; NULL:
				  * the field keeps what the command set (dynamic defaults) */
	size_t offset;           /* the field in the command's struct */
	size_t count_offset;     /* LB_OPT_UINT_LIST: its size_t count */
	uint64_t min, max;       /* accepted range (ns for durations) */
	uint64_t unit_ns;        /* LB_OPT_DURATION: what a bare number counts */
	size_t cap;              /* LB_OPT_UINT_LIST: at most this many values */
	const char *const *choices; /* LB_OPT_ENUM: the accepted words, NULL-terminated */
	const char *invalid;     /* the error's "is not ...": NULL = "valid" */
	const char *accepted;    /* the error's "accepted: ...": NULL = "MIN..MAX[ UNIT]" or
				  * the choices, comma separated */
	const char *unit;        /* appended to "MIN..MAX" ("ms", "jiffies"), or NULL */
	const char *needs;       /* LB_OPT_STRING: "" is refused with "--NAME: needs NEEDS" */
	lb_opt_parse_fn *parse;  /* LB_OPT_CUSTOM */
	const char *bare;        /* non-NULL: the value is optional (--name or --name=ARG,
				  * long spellings only); given bare, the row parses this */
	/* --help text built at run time (e.g. a list of shipped files); wins over help */
	const char *(*help_fn)(void);
};

/* A command: its rows (ended by a row with a NULL name) and its --help frame. */
struct lb_opt_cmd {
	const char *name;        /* "lockbench bench": errors point at '<name> --help' */
	const char *usage;       /* --help before the options (full lines) */
	const char *epilogue;    /* --help after the options, or NULL */
	const struct lb_opt *opts;
	bool operands;           /* arguments that are not options are the command's (files) */
	bool dashed_twins;       /* a name with '_' is also accepted with '-' (locktorture) */
	bool help_alone;         /* --help with any other argument is an error (`list`) */
	int help_column;         /* --help: width of the "  -x, --name ARG" column; 0 = 25 */
};

/* What argv held besides the values: which rows were given. */
struct lb_opt_seen {
	uint64_t given;          /* bit i: row i appeared at least once */
	int first_operand;       /* optind after the options */
};

#define LB_OPT_MAX_ROWS 64
/* getopt_long entries of a row at most: its name, its alias, their dashed twins. */
#define LB_OPT_MAX_SPELLINGS 4

/*
 * Apply every row's default into `base`, then parse argv (argv[0] is the
 * command) into it.  Bad input: one line, exit 2.  Without cmd->operands a
 * stray argument is an error.  --help prints (after all of argv was checked)
 * and exits 0; `CMD --list-options` alone prints one line per row
 * ("--name -x ARG", '-' for none) and exits 0.
 */
void lb_opt_parse(const struct lb_opt_cmd *cmd, int argc, char **argv, void *base,
		  struct lb_opt_seen *seen);

/* Whether the row called `name` was given (a programming error aborts). */
bool lb_opt_given(const struct lb_opt_cmd *cmd, const struct lb_opt_seen *seen, const char *name);

/* Run every row's default through its parser into base (lb_opt_parse does it first). */
void lb_opt_defaults(const struct lb_opt_cmd *cmd, void *base);

/* The --help text: usage, one entry per row, epilogue. */
void lb_opt_help(const struct lb_opt_cmd *cmd, FILE *out);

/* The one-line error for a bad value of `o`, then exit(2). */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void lb_opt_bad_value(const struct lb_opt *o, const char *arg, const char *accepted);

/* The field of `o` in `base`. */
static inline void *lb_opt_field(const struct lb_opt *o, void *base)
{
	return (char *)base + o->offset;
}

/* "1024" from LB_OPT_STR(LB_BENCH_MAX_THREADS), for help and accepted texts. */
#define LB_OPT_STR_(x) #x
#define LB_OPT_STR(x) LB_OPT_STR_(x)

/*
 * The offset of T's `field`, checked at compile time to be of `ctype`
 * (a row's parser writes exactly that type).
 */
#define LB_OPT_AT(T, field, ctype)                                                          \
	(offsetof(T, field) + 0 * sizeof(char[_Generic(((T *)0)->field, ctype: 1, default: -1)]))
/* The same for an int-sized field (an enum). */
#define LB_OPT_AT_INT(T, field)                                                             \
	(offsetof(T, field) + 0 * sizeof(char[sizeof(((T *)0)->field) == sizeof(int) ? 1 : -1]))

/*
 * The options every command spells the same way, defined here once.  T is
 * the command's struct, field the member the value goes to.
 */
#define LB_OPT_ROW_JSON(T, field, help_text)                                                \
	{ .name = "json", .kind = LB_OPT_STRING, .arg = "FILE", .help = help_text,           \
	  .needs = "a file name", .offset = LB_OPT_AT(T, field, const char *) }
#define LB_OPT_ROW_CSV(T, field, help_text)                                                 \
	{ .name = "csv", .kind = LB_OPT_STRING, .arg = "FILE", .help = help_text,            \
	  .needs = "a file name", .offset = LB_OPT_AT(T, field, const char *) }
#define LB_OPT_ROW_QUIET(T, field)                                                          \
	{ .name = "quiet", .short_name = 'q', .kind = LB_OPT_FLAG,                            \
	  .help = "no progress lines on stderr", .offset = LB_OPT_AT(T, field, bool) }
/* --wide: every column in the table; the default table fits LB_WIDTH (lb_wrap.h). */
#define LB_OPT_ROW_WIDE(T, field)                                                           \
	{ .name = "wide", .kind = LB_OPT_FLAG,                                                \
	  .help = "every column in the table (default: the columns that\n"                   \
		  "fit 100 columns; JSON and CSV keep every figure)",                           \
	  .offset = LB_OPT_AT(T, field, bool) }
#define LB_OPT_ROW_REPEAT(T, field, max_runs, default_text, help_text)                      \
	{ .name = "repeat", .short_name = 'r', .kind = LB_OPT_UINT, .arg = "N",               \
	  .help = help_text, .def = default_text, .min = 1, .max = max_runs,                  \
	  .invalid = "a valid count", .offset = LB_OPT_AT(T, field, unsigned int) }
/* --cs and --par: "N" loop iterations, or "N<unit>" a time (ns, us, ms) into
 * a struct lb_work_len (lib/lb_work.h); the command turns a time into
 * iterations with lb_work_iters_for_ns() once it has parsed. */
int lb_opt_parse_work(const struct lb_opt *o, const char *arg, void *base);
#define LB_OPT_WORK_ACCEPTED                                                                \
	"0..1000000000 loop iterations, or a time like 200ns, 5us, 1ms (at most 100ms)"
#define LB_OPT_ROW_WORK(T, opt_name, field, help_text)                                     \
	{ .name = opt_name, .kind = LB_OPT_CUSTOM, .arg = "WORK", .help = help_text,          \
	  .parse = lb_opt_parse_work, .invalid = "a valid amount of work",                    \
	  .accepted = LB_OPT_WORK_ACCEPTED, .offset = LB_OPT_AT(T, field, struct lb_work_len) }
#define LB_OPT_ROW_HELP                                                                     \
	{ .name = "help", .short_name = 'h', .kind = LB_OPT_HELP, .help = "this text" }
#define LB_OPT_ROW_END { .name = NULL }

#endif /* LB_OPT_H */
