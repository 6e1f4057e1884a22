/* SPDX-License-Identifier: MIT */
/*
 * sim_machine.c - the machine file (doc/sim.md, "Inputs"): one `field
 * value` a line, `#` comments, `source` lines kept as free text.  Every
 * error is one line naming the file, the line and the field.
 */
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum field_kind { F_NAME, F_COUNT, F_NS };

struct field {
	const char *name;
	enum field_kind kind;
	size_t offset;
	uint64_t min, max;
};

#define M_AT(f) offsetof(struct lb_sim_machine, f)
static const struct field fields[] = {
	{"name", F_NAME, M_AT(name), 0, 0},
	{"sockets", F_COUNT, M_AT(sockets), 1, 64},
	{"cores_per_socket", F_COUNT, M_AT(cores_per_socket), 1, 256},
	{"smt", F_COUNT, M_AT(smt), 1, 8},
	{"l1_hit", F_NS, M_AT(l1_hit), 0, 1000},
	{"same_core", F_NS, M_AT(same_core), 0, 100000},
	{"same_socket", F_NS, M_AT(same_socket), 0, 100000},
	{"cross_socket", F_NS, M_AT(cross_socket), 0, 100000},
	{"memory", F_NS, M_AT(memory), 0, 100000},
	{"rmw", F_NS, M_AT(rmw), 0, 100000},
	{"context_switch", F_NS, M_AT(context_switch), 0, 10000000},
	{"wakeup", F_NS, M_AT(wakeup), 0, 10000000},
	{"syscall", F_NS, M_AT(syscall), 0, 10000000},
	{"tick", F_NS, M_AT(tick), 100000, 100000000},
	{"min_granularity", F_NS, M_AT(min_granularity), 0, 1000000000},
	{"wakeup_granularity", F_NS, M_AT(wakeup_granularity), 0, 1000000000},
	{"sched_latency", F_NS, M_AT(sched_latency), 0, 1000000000},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static void accepted_list(char *out, size_t len)
{
	size_t at = 0;
	out[0] = '\0';
	for (size_t i = 0; i < NFIELDS && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "",
				       fields[i].name);
}

/* A whole number, or a decimal ns figure rounded to the nearest ns. */
static int parse_number(const char *s, enum field_kind kind, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	if (kind == F_COUNT) {
		unsigned long long v = strtoull(s, &end, 10);
		if (errno || *end)
			return -1;
		*out = v;
		return 0;
	}
	double d = strtod(s, &end);
	if (errno || *end || d < 0 || d > 1e12)
		return -1;
	*out = (uint64_t)(d + 0.5);
	return 0;
}

static int set_field(const struct field *f, const char *value, struct lb_sim_machine *m,
		     const char *file, unsigned line, char *err, size_t errlen)
{
	char *base = (char *)m;
	uint64_t v;
	if (f->kind == F_NAME) {
		if (strlen(value) >= sizeof(m->name) || strchr(value, ' '))
			return fail(err, errlen, "%s:%u: field 'name': '%s' is not one word of "
				    "1..63 characters", file, line, value);
		strcpy(m->name, value);
		return 0;
	}
	if (parse_number(value, f->kind, &v) || v < f->min || v > f->max)
		return fail(err, errlen, "%s:%u: field '%s': '%s' is not valid; accepted: "
			    "%llu..%llu%s", file, line, f->name, value,
			    (unsigned long long)f->min, (unsigned long long)f->max,
			    f->kind == F_NS ? " ns" : "");
	if (f->kind == F_COUNT)
		*(unsigned *)(base + f->offset) = (unsigned)v;
	else
		*(uint64_t *)(base + f->offset) = v;
	return 0;
}

/* Split one line into field and value in place; 0 for a blank line. */
static int split_line(char *s, char **field, char **value)
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	if (!n)
		return 0;
	*field = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	while (isspace((unsigned char)*s))
		s++;
	*value = s;
	return 1;
}

static int parse_line(char *s, const char *file, unsigned line, struct lb_sim_machine *m,
		      unsigned seen[NFIELDS], char *err, size_t errlen)
{
	char *name, *value;
	if (!split_line(s, &name, &value) || !strcmp(name, "source"))
		return 0;
	for (size_t i = 0; i < NFIELDS; i++) {
		if (strcmp(name, fields[i].name))
			continue;
		if (seen[i])
			return fail(err, errlen, "%s:%u: field '%s' given twice (first on line %u)",
				    file, line, name, seen[i]);
		if (!*value)
			return fail(err, errlen, "%s:%u: field '%s' has no value", file, line, name);
		seen[i] = line;
		return set_field(&fields[i], value, m, file, line, err, errlen);
	}
	char acc[512];
	accepted_list(acc, sizeof(acc));
	return fail(err, errlen, "%s:%u: unknown field '%s'; accepted: %s, source", file, line,
		    name, acc);
}

int lb_sim_machine_parse(const char *text, const char *file, struct lb_sim_machine *m,
			 char *err, size_t errlen)
{
	unsigned seen[NFIELDS] = {0};
	unsigned line = 0;
	memset(m, 0, sizeof(*m));
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		char buf[1024];
		line++;
		if (len >= sizeof(buf))
			return fail(err, errlen, "%s:%u: line longer than %zu characters", file,
				    line, sizeof(buf) - 1);
		memcpy(buf, text, len);
		buf[len] = '\0';
		if (parse_line(buf, file, line, m, seen, err, errlen))
			return -1;
		text += len + (nl ? 1 : 0);
	}
	for (size_t i = 0; i < NFIELDS; i++)
		if (!seen[i])
			return fail(err, errlen, "%s: field '%s' missing", file, fields[i].name);
	if (lb_sim_machine_cpus(m) > LB_SIM_MAX_CPUS)
		return fail(err, errlen, "%s: field 'sockets' x 'cores_per_socket' x 'smt' is %u "
			    "CPUs; accepted: at most %u", file, lb_sim_machine_cpus(m),
			    LB_SIM_MAX_CPUS);
	return 0;
}

int lb_sim_machine_load(const char *path, struct lb_sim_machine *m, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
	char *text = malloc(65536 + 1);
	size_t n = text ? fread(text, 1, 65536, f) : 0;
	bool big = text && n == 65536 && fgetc(f) != EOF;
	fclose(f);
	if (!text)
		return fail(err, errlen, "%s: out of memory", path);
	text[n] = '\0';
	int rc = big ? fail(err, errlen, "%s: larger than 64 KiB", path)
		: strlen(text) != n ? fail(err, errlen, "%s: contains a NUL byte", path)
		: lb_sim_machine_parse(text, path, m, err, errlen);
	free(text);
	return rc;
}
