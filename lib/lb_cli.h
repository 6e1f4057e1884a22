/* SPDX-License-Identifier: MIT */
/*
 * lb_cli.h - option-value parsing shared by lockbench and locktorture.
 *
 * Every parser is strict: the whole string must be consumed, no sign, no
 * overflow, and the value must lie in [min, max].  Parsers return 0 on success
 * and -1 on any bad input; the caller then reports through lb_usage_error(),
 * which prints ONE line naming the option and the accepted values and exits
 * with status 2.
 */
#ifndef LB_CLI_H
#define LB_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Program name used as the prefix of error lines ("lockbench", ...). */
void lb_cli_set_prog(const char *prog);
const char *lb_cli_prog(void);

/* "<prog>: <message>\n" on stderr, then exit(2).  Message without newline. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void lb_usage_error(const char *fmt, ...);

/*
 * The one-line error for an option getopt_long() rejected, then exit(2).
 * Call it when getopt_long (with an optstring that starts with ':' and
 * opterr = 0) returns '?' or ':'.  It names the option as the user wrote it:
 * "unknown option '--foo'; accepted: --lock, --threads, ...",
 * "option '--c' is ambiguous; candidates: --cs, --cs-lines, --csv",
 * "option '--explain' takes no value", "option '--json' needs a value",
 * "unknown option '-z' in '-zq'".  `help` is appended as
 * "; see '<help>'" when not NULL (e.g. "lockbench bench --help").
 */
struct option;
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void lb_cli_getopt_fail(int c, int argc, char **argv, const char *shortopts,
			const struct option *longopts, const char *help);

/* Decimal unsigned integer in [min, max]. */
int lb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int lb_parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out);

/* Non-negative decimal with optional fraction ("2.5"), in [min, max]. */
int lb_parse_double(const char *s, double min, double max, double *out);

/*
 * A duration: a number (fraction allowed) with an optional unit ns, us, ms,
 * s, m, h; a bare number is in `default_unit_ns` (LB_NS_PER_S for seconds).  The
 * result in ns must lie in [min_ns, max_ns].
 */
int lb_parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t min_ns,
			 uint64_t max_ns, uint64_t *out_ns);

/*
 * A list of unsigned integers: comma-separated items, each N, A-B (inclusive)
 * or A-B:S (step S), every value in [min, max], at most `cap` values
 * in total.  Stores them in order into out[] and the count in *n.
 */
int lb_parse_uint_list(const char *s, unsigned int min, unsigned int max, unsigned int *out,
		       size_t cap, size_t *n);

/*
 * The command line as one string for a result file's "command":
 * "<prog> argv[0] argv[1] ..." (argv[0] is the command, e.g. "bench").
 * malloc'ed; NULL when out of memory.
 */
char *lb_cli_join_args(int argc, char **argv);

/* Split a comma-separated list of names in place; at most cap items. */
int lb_split_names(char *s, char **out, size_t cap, size_t *n);

#endif /* LB_CLI_H */
