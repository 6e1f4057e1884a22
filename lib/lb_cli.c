/* SPDX-License-Identifier: MIT */
/* lb_cli.c - strict option-value parsers and the one-line usage error. */
#include "lb_cli.h"
#include "lb_time.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cli_prog = "lockbench";

void lb_cli_set_prog(const char *prog)
{
	cli_prog = prog;
}

const char *lb_cli_prog(void)
{
	return cli_prog;
}

/*
 * The message stays ONE line whatever it quotes: a newline, tab or other
 * control character in a value (or a file name) the user gave is written
 * as \n, \t or \xHH.
 */
static void put_one_line(const char *text, FILE *out)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
}

void lb_usage_error(const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n >= 0)
		put_one_line(text, stderr);
	else
		fputs(fmt, stderr); /* out of memory: the format at least names the error */
	free(text);
	fputc('\n', stderr);
	exit(2);
}

/* Parse digits only (no sign, no spaces); *end set past them. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = (unsigned int)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1; /* overflow */
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

int lb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	const char *end;
	if (!s || parse_digits(s, &v, &end) || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int lb_parse_uint(const char *s, unsigned int min, unsigned int max, unsigned int *out)
{
	uint64_t v;
	if (lb_parse_u64(s, min, max, &v))
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* digits[.digits] without exponent or sign; *end past it. */
static int parse_plain_double(const char *s, double *out, const char **end)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	char buf[64];
	size_t len = (size_t)(p - s);
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	double v = strtod(buf, NULL);
	if (errno || !isfinite(v))
		return -1;
	*out = v;
	*end = p;
	return 0;
}

int lb_parse_double(const char *s, double min, double max, double *out)
{
	double v;
	const char *end;
	if (!s || parse_plain_double(s, &v, &end) || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int lb_parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t min_ns,
			 uint64_t max_ns, uint64_t *out_ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", (double)LB_NS_PER_S },
		      { "m", 60e9 }, { "h", 3600e9 } };
	double v, mult = (double)default_unit_ns;
	const char *end;
	if (!s || parse_plain_double(s, &v, &end))
		return -1;
	if (*end) {
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].suffix) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		mult = units[i].ns;
	}
	double ns = v * mult + 0.5; /* rounded to the nearest ns below */
	/* 2^64 is exact as a double; anything at or above it cannot convert
	 * (undefined behaviour), and (double)max_ns may round up to it. */
	if (!(ns >= 0.0 && ns < 18446744073709551616.0))
		return -1;
	uint64_t r = (uint64_t)ns;
	if (r < min_ns || r > max_ns)
		return -1;
	*out_ns = r;
	return 0;
}

int lb_parse_uint_list(const char *s, unsigned int min, unsigned int max, unsigned int *out,
		       size_t cap, size_t *n)
{
	const char *p = s;
	size_t count = 0;
	if (!s || !*s)
		return -1;
	for (;;) {
		uint64_t a, b, step = 1;
		const char *end;
		if (parse_digits(p, &a, &end))
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			if (parse_digits(p + 1, &b, &end) || b < a)
				return -1;
			p = end;
			if (*p == ':') {
				if (parse_digits(p + 1, &step, &end) || step == 0)
					return -1;
				p = end;
			}
		}
		if (a < min || b > max)
			return -1;
		/* Stop before the step would pass b: `v += step` must never wrap
		 * (A-B:18446744073709551615 would otherwise restart below A). */
		for (uint64_t v = a;; v += step) {
			if (count == cap)
				return -1;
			out[count++] = (unsigned int)v;
			if (b - v < step)
				break;
		}
		if (*p == '\0')
			break;
		if (*p != ',')
			return -1;
		p++;
	}
	*n = count;
	return 0;
}

int lb_split_names(char *s, char **out, size_t cap, size_t *n)
{
	size_t count = 0;
	if (!s || !*s)
		return -1;
	for (char *tok = s;;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		if (!*tok || count == cap)
			return -1;
		out[count++] = tok;
		if (!comma)
			break;
		tok = comma + 1;
	}
	*n = count;
	return 0;
}

/* The long option's name as typed: "--name" or "--name=value" -> "name", len. */
static size_t long_name_len(const char *arg)
{
	const char *eq = strchr(arg, '=');
	return eq ? (size_t)(eq - arg) : strlen(arg);
}

/* Append ", --name" for every long option (aliases with the same val once). */
static void list_long_options(char *buf, size_t len, const struct option *longopts,
			      const char *prefix, size_t prefix_len, size_t *count)
{
	size_t used = strlen(buf);
	*count = 0;
	for (const struct option *o = longopts; o->name; o++) {
		if (prefix && strncmp(o->name, prefix, prefix_len))
			continue;
		bool twin = false; /* an alias or dashed twin of one already listed */
		for (const struct option *p = longopts; p < o && !twin; p++)
			twin = p->val == o->val && p->flag == o->flag &&
			       (!prefix || !strncmp(p->name, prefix, prefix_len));
		if (twin)
			continue;
		int n = snprintf(buf + used, used < len ? len - used : 0, "%s--%s",
				 *count ? ", " : "", o->name);
		if (n > 0)
			used += (size_t)n;
		(*count)++;
	}
	if (used >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

void lb_cli_getopt_fail(int c, int argc, char **argv, const char *shortopts,
			const struct option *longopts, const char *help)
{
	char see[160] = "";
	if (help)
		snprintf(see, sizeof(see), "; see '%s'", help);
	/* getopt_long has advanced optind past a finished argument; an unknown
	 * letter inside a group ("-zq") leaves it on the group. */
	const char *arg = optind > 0 && optind - 1 < argc ? argv[optind - 1] : NULL;
	const char *cur = optind < argc ? argv[optind] : NULL;
	bool is_long = arg && !strncmp(arg, "--", 2) && arg[2];

	if (c == ':') {
		/* The accepted values are the option's own: point at the help. */
		const char *h = help ? help : "--help";
		if (is_long)
			lb_usage_error("option '%.*s' needs a value; accepted values: see '%s'",
				       (int)long_name_len(arg), arg, h);
		lb_usage_error("option '-%c' needs a value; accepted values: see '%s'", optopt, h);
	}
	if (is_long) {
		const char *name = arg + 2;
		size_t nlen = long_name_len(arg) - 2;
		const struct option *exact = NULL;
		for (const struct option *o = longopts; o->name; o++)
			if (strlen(o->name) == nlen && !strncmp(o->name, name, nlen))
				exact = o;
		size_t nmatch = 0;
		char cands[512] = "";
		list_long_options(cands, sizeof(cands), longopts, name, nlen, &nmatch);
		bool given_value = strchr(arg, '=') != NULL;
		if (given_value && (exact ? exact->has_arg == no_argument
					  : (nmatch == 1 && optopt != 0)))
			lb_usage_error("option '%.*s' takes no value%s", (int)(nlen + 2), arg, see);
		if (!exact && nmatch > 1)
			lb_usage_error("option '%.*s' is ambiguous; candidates: %s%s", (int)(nlen + 2),
				       arg, cands, see);
		char all[1024] = "";
		size_t nall;
		list_long_options(all, sizeof(all), longopts, NULL, 0, &nall);
		lb_usage_error("unknown option '%.*s'; accepted: %s%s", (int)(nlen + 2), arg, all,
			       see);
	}
	/* A short option letter. */
	const char *group = NULL;
	if (cur && cur[0] == '-' && cur[1] != '-' && strchr(cur + 1, optopt))
		group = cur;  /* optind still on the group: more letters follow */
	else if (arg && arg[0] == '-' && arg[1] != '-' && strchr(arg + 1, optopt))
		group = arg;
	char letters[128] = "";
	size_t k = 0;
	for (const char *p = shortopts ? shortopts : ""; *p && k + 4 < sizeof(letters); p++) {
		if (*p == ':')
			continue;
		k += (size_t)snprintf(letters + k, sizeof(letters) - k, "%s-%c", k ? ", " : "", *p);
	}
	if (optopt && isprint(optopt)) {
		if (group && strlen(group) > 2)
			lb_usage_error("unknown option '-%c' in '%s'; accepted short options: %s%s",
				       optopt, group, letters[0] ? letters : "none", see);
		lb_usage_error("unknown option '-%c'; accepted short options: %s%s", optopt,
			       letters[0] ? letters : "none", see);
	}
	lb_usage_error("unknown option '%s'%s", arg ? arg : "?", see);
}

char *lb_cli_join_args(int argc, char **argv)
{
	size_t len = strlen(cli_prog) + 1;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, cli_prog);
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}
