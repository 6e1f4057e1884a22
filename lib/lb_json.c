/* SPDX-License-Identifier: MIT */
/*
 * lb_json.c - streaming JSON writer.
 *
 * Layout: every member or element goes on its own line, indented two spaces
 * per level; a key is followed by ": " and its value on the same line; an
 * empty container is written "{}" or "[]"; the document ends with a newline.
 *
 * Doubles are written with the fewest of 15 or 17 significant digits that
 * read back to the same double ("%.15g" if it round-trips, else "%.17g"), so
 * 0.1 stays "0.1" while every value is still exact.  NaN and infinities have
 * no JSON spelling and become null.  Output assumes the "C" locale (we never
 * call setlocale), so the decimal separator is '.'.
 */
#include "lb_json.h"
#include "lb_die.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

void lb_json_init(struct lb_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

static void indent(struct lb_json *j)
{
	fputc('\n', j->out);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Comma, newline and indent as needed before a key or a value. */
static void separate(struct lb_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->out);
		indent(j);
	}
	j->first[j->depth] = false;
}

/* After a complete top-level value, end the document's line. */
static void value_done(struct lb_json *j)
{
	if (j->depth == 0)
		fputc('\n', j->out);
}

static void begin(struct lb_json *j, char open)
{
	separate(j);
	if (j->depth + 1 >= LB_JSON_MAX_DEPTH)
		lb_die(EOVERFLOW, "lb_json: nesting too deep");
	fputc(open, j->out);
	j->depth++;
	j->first[j->depth] = true;
}

static void end(struct lb_json *j, char close)
{
	if (j->depth == 0)
		lb_die(EINVAL, "lb_json: end without begin");
	bool empty = j->first[j->depth];
	j->depth--;
	if (!empty)
		indent(j);
	fputc(close, j->out);
	value_done(j);
}

void lb_json_object_begin(struct lb_json *j)
{
	begin(j, '{');
}

void lb_json_object_end(struct lb_json *j)
{
	end(j, '}');
}

void lb_json_array_begin(struct lb_json *j)
{
	begin(j, '[');
}

void lb_json_array_end(struct lb_json *j)
{
	end(j, ']');
}

static void write_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out); /* bytes >= 0x80 pass through as UTF-8 */
		}
	}
	fputc('"', out);
}

void lb_json_key(struct lb_json *j, const char *key)
{
	separate(j);
	write_escaped(j->out, key);
	fputs(": ", j->out);
	j->after_key = true;
}

void lb_json_string(struct lb_json *j, const char *s)
{
	if (!s) {
		lb_json_null(j);
		return;
	}
	separate(j);
	write_escaped(j->out, s);
	value_done(j);
}

void lb_json_int(struct lb_json *j, int64_t v)
{
	separate(j);
	fprintf(j->out, "%" PRId64, v);
	value_done(j);
}

void lb_json_uint(struct lb_json *j, uint64_t v)
{
	separate(j);
	fprintf(j->out, "%" PRIu64, v);
	value_done(j);
}

void lb_json_double(struct lb_json *j, double v)
{
	char buf[32];
	if (!isfinite(v)) {
		lb_json_null(j);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	separate(j);
	fputs(buf, j->out);
	value_done(j);
}

void lb_json_bool(struct lb_json *j, bool v)
{
	separate(j);
	fputs(v ? "true" : "false", j->out);
	value_done(j);
}

void lb_json_null(struct lb_json *j)
{
	separate(j);
	fputs("null", j->out);
	value_done(j);
}

void lb_json_kv_string(struct lb_json *j, const char *key, const char *s)
{
	lb_json_key(j, key);
	lb_json_string(j, s);
}

void lb_json_kv_int(struct lb_json *j, const char *key, int64_t v)
{
	lb_json_key(j, key);
	lb_json_int(j, v);
}

void lb_json_kv_uint(struct lb_json *j, const char *key, uint64_t v)
{
	lb_json_key(j, key);
	lb_json_uint(j, v);
}

void lb_json_kv_double(struct lb_json *j, const char *key, double v)
{
	lb_json_key(j, key);
	lb_json_double(j, v);
}

void lb_json_kv_bool(struct lb_json *j, const char *key, bool v)
{
	lb_json_key(j, key);
	lb_json_bool(j, v);
}

void lb_json_kv_uint_array(struct lb_json *j, const char *key, const unsigned int *v, size_t n)
{
	lb_json_key(j, key);
	lb_json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		lb_json_uint(j, v[i]);
	lb_json_array_end(j);
}
