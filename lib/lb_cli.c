/* SPDX-License-Identifier: MIT */
/* lb_cli.c - strict option-value parsers and the one-line usage error. */
#include "lb_cli.h"

#include <ctype.h>
#include <errno.h>
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

void lb_usage_error(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
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
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
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
	double ns = v * mult;
	if (!(ns >= (double)min_ns && ns <= (double)max_ns))
		return -1;
	*out_ns = (uint64_t)(ns + 0.5);
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
		for (uint64_t v = a; v <= b; v += step) {
			if (count == cap)
				return -1;
			out[count++] = (unsigned int)v;
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
