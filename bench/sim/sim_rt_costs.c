/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_costs.c - the rt socket-path cost file (sim_rt_costs.h): parse
 * with line-numbered errors, write, and draw by inverse CDF.
 */
#include "sim_rt_costs.h"
#include "lb_textfile.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NS 1e9

struct parse_state {
	bool have_schema, have_count[2], have_mean[2];
};

static struct lb_simr_dist *side_of(struct lb_simr_costs *c, const char *key, const char **rest,
				    int *idx)
{
	if (!strncmp(key, "send.", 5)) {
		*rest = key + 5;
		*idx = 0;
		return &c->send;
	}
	if (!strncmp(key, "recv.", 5)) {
		*rest = key + 5;
		*idx = 1;
		return &c->recv;
	}
	return NULL;
}

/* A number that is the whole of s, finite, in [lo, hi]. */
static int number(const char *s, double lo, double hi, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*v) && *v >= lo && *v <= hi ? 0 : -1;
}

/* SIDE.q P NS: P above the last one, NS not below it. */
static int parse_quantile(struct lb_simr_dist *d, const char *name, char *val, unsigned int lineno,
			  char *err, size_t errlen)
{
	char *ns_text = val + strcspn(val, " \t");
	if (*ns_text)
		*ns_text++ = '\0';
	ns_text += strspn(ns_text, " \t");
	double p, ns;
	if (number(val, 0, 1, &p)) {
		snprintf(err, errlen, "%u: %s.q: '%s' is not a probability 0..1", lineno, name, val);
		return -1;
	}
	if (number(ns_text, -INFINITY, INFINITY, &ns) || ns < 0 || ns > MAX_NS) {
		snprintf(err, errlen, "%u: %s.q %s: '%s' is not a time in ns (0..1e9)", lineno, name,
			 val, ns_text);
		return -1;
	}
	if (d->n == 0 && p != 0) {
		snprintf(err, errlen, "%u: %s.q: the table must start at 0 (the least), got %s",
			 lineno, name, val);
		return -1;
	}
	if (d->n && (p <= d->p[d->n - 1] || ns < d->ns[d->n - 1])) {
		snprintf(err, errlen, "%u: %s.q %s %s: unsorted (after %g %.1f: P must rise and NS "
			 "not fall)", lineno, name, val, ns_text, d->p[d->n - 1], d->ns[d->n - 1]);
		return -1;
	}
	if (d->n == LB_SIMR_COSTS_MAXQ) {
		snprintf(err, errlen, "%u: %s.q: more than %d quantiles", lineno, name,
			 LB_SIMR_COSTS_MAXQ);
		return -1;
	}
	d->p[d->n] = p;
	d->ns[d->n++] = ns;
	return 0;
}

static int parse_side(struct lb_simr_costs *c, struct parse_state *st, const char *key, char *val,
		      unsigned int lineno, char *err, size_t errlen)
{
	const char *item;
	int i;
	struct lb_simr_dist *d = side_of(c, key, &item, &i);
	const char *name = i ? "recv" : "send";
	double v;
	if (!strcmp(item, "q"))
		return parse_quantile(d, name, val, lineno, err, errlen);
	if (!strcmp(item, "count")) {
		if (st->have_count[i] || number(val, 1, 1e15, &v) || v != floor(v)) {
			snprintf(err, errlen, "%u: %s: '%s' is not a count >= 1%s", lineno, key, val,
				 st->have_count[i] ? " (or given twice)" : "");
			return -1;
		}
		d->count = (uint64_t)v;
		st->have_count[i] = true;
		return 0;
	}
	if (!strcmp(item, "mean")) {
		if (st->have_mean[i] || number(val, 0, MAX_NS, &v)) {
			snprintf(err, errlen, "%u: %s: '%s' is not a time in ns (0..1e9)%s", lineno, key,
				 val, st->have_mean[i] ? " (or given twice)" : "");
			return -1;
		}
		d->mean = v;
		st->have_mean[i] = true;
		return 0;
	}
	snprintf(err, errlen, "%u: unknown item '%s'; accepted: %s.count, %s.mean, %s.q", lineno,
		 key, name, name, name);
	return -1;
}

static int parse_line(char *line, unsigned int lineno, struct lb_simr_costs *c,
		      struct parse_state *st, char *err, size_t errlen)
{
	char *key = line + strspn(line, " \t");
	char *end = key + strcspn(key, " \t");
	char *val = end + strspn(end, " \t");
	if (*end)
		*end = '\0';
	size_t vl = strlen(val);
	while (vl && (val[vl - 1] == ' ' || val[vl - 1] == '\t' || val[vl - 1] == '\r'))
		val[--vl] = '\0';
	if (!st->have_schema) {
		if (strcmp(key, LB_SIMR_COSTS_SCHEMA) || strcmp(val, "1")) {
			snprintf(err, errlen, "%u: not an rt cost file: the first item must be '"
				 LB_SIMR_COSTS_SCHEMA " 1', got '%s%s%s'", lineno, key,
				 *val ? " " : "", val);
			return -1;
		}
		st->have_schema = true;
		return 0;
	}
	static const struct {
		const char *key;
		size_t off, len;
	} texts[] = {
#define TEXT(k, f) { k, offsetof(struct lb_simr_costs, f), sizeof(((struct lb_simr_costs *)0)->f) }
		TEXT("host.kernel", host.kernel), TEXT("host.cpu", host.cpu),
		TEXT("host.cpus", host.cpus),     TEXT("host.date", host.date),
		TEXT("host.load", host_load),     TEXT("method", method),
		TEXT("shape", shape),
#undef TEXT
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (!strcmp(key, texts[i].key)) {
			snprintf((char *)c + texts[i].off, texts[i].len, "%s", val);
			return 0;
		}
	if (!strncmp(key, "host.", 5))
		return 0; /* other host facts: kept by nobody, refused by nobody */
	if (!strcmp(key, "clock.p50_ns") || !strcmp(key, "clock.mean_ns")) {
		double v;
		if (number(val, 0, MAX_NS, &v)) {
			snprintf(err, errlen, "%u: %s: '%s' is not a time in ns (0..1e9)", lineno, key,
				 val);
			return -1;
		}
		*(!strcmp(key, "clock.p50_ns") ? &c->clock_p50_ns : &c->clock_mean_ns) = v;
		return 0;
	}
	const char *item;
	int i;
	if (side_of(c, key, &item, &i))
		return parse_side(c, st, key, val, lineno, err, errlen);
	snprintf(err, errlen, "%u: unknown item '%s'; accepted: host.*, method, shape, clock.*, "
		 "send.* and recv.* (count, mean, q)", lineno, key);
	return -1;
}

/* After the last line: each side whole (a truncated table ends early). */
static int check_side(const struct lb_simr_dist *d, const char *name,
		      const struct parse_state *st, int i, char *err, size_t errlen)
{
	if (!st->have_count[i] || !st->have_mean[i]) {
		snprintf(err, errlen, "%s.%s missing (each side needs count, mean and its quantiles)",
			 name, st->have_count[i] ? "mean" : "count");
		return -1;
	}
	if (d->n < 2 || d->p[d->n - 1] != 1) {
		snprintf(err, errlen, "%s.q: the table stops at %g after %zu quantiles: truncated "
			 "(it must run from 0 to 1)", name, d->n ? d->p[d->n - 1] : 0.0, d->n);
		return -1;
	}
	if (d->mean < d->ns[0] || d->mean > d->ns[d->n - 1]) {
		snprintf(err, errlen, "%s.mean %.1f lies outside its table's %.1f..%.1f", name,
			 d->mean, d->ns[0], d->ns[d->n - 1]);
		return -1;
	}
	return 0;
}

int lb_simr_costs_parse(const char *text, struct lb_simr_costs *c, char *err, size_t errlen)
{
	struct parse_state st = { 0 };
	char line[1024];
	unsigned int lineno = 0;
	memset(c, 0, sizeof(*c));
	int more;
	while ((more = lb_textfile_next_line(&text, line, sizeof(line), &lineno, err, errlen)) > 0)
		if (parse_line(line, lineno, c, &st, err, errlen))
			return -1;
	if (more < 0)
		return -1;
	if (!st.have_schema) {
		snprintf(err, errlen, "empty: not an rt cost file (want '" LB_SIMR_COSTS_SCHEMA
			 " 1' first)");
		return -1;
	}
	if (check_side(&c->send, "send", &st, 0, err, errlen) ||
	    check_side(&c->recv, "recv", &st, 1, err, errlen))
		return -1;
	return 0;
}

/* lb_textfile_parser's shape of the parser. */
static int parse_text(const char *text, void *c, char *err, size_t errlen)
{
	return lb_simr_costs_parse(text, c, err, errlen);
}

int lb_simr_costs_load(const char *path, struct lb_simr_costs *c, char *err, size_t errlen)
{
	if (lb_textfile_load(path, 64 * 1024, parse_text, c, err, errlen))
		return -1;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

static void write_side(FILE *out, const char *name, const struct lb_simr_dist *d)
{
	fprintf(out, "%s.count %llu\n%s.mean %.1f\n", name, (unsigned long long)d->count, name,
		d->mean);
	for (size_t i = 0; i < d->n; i++)
		fprintf(out, "%s.q %-6g %.1f\n", name, d->p[i], d->ns[i]);
}

void lb_simr_costs_write(FILE *out, const struct lb_simr_costs *c)
{
	fprintf(out, LB_SIMR_COSTS_SCHEMA " %d\n", LB_SIMR_COSTS_VERSION);
	fprintf(out, "host.kernel %s\nhost.cpu %s\nhost.cpus %s\nhost.date %s\nhost.load %s\n",
		c->host.kernel, c->host.cpu, c->host.cpus, c->host.date, c->host_load);
	fprintf(out, "method %s\nshape %s\n", c->method, c->shape);
	fprintf(out, "clock.p50_ns %.1f\nclock.mean_ns %.1f\n", c->clock_p50_ns, c->clock_mean_ns);
	write_side(out, "send", &c->send);
	write_side(out, "recv", &c->recv);
}

double lb_simr_dist_at(const struct lb_simr_dist *d, double u)
{
	if (u <= d->p[0])
		return d->ns[0];
	if (u >= d->p[d->n - 1])
		return d->ns[d->n - 1];
	/* The last quantile at or below u: p[lo] <= u < p[hi]. */
	size_t lo = 0, hi = d->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->p[mid] <= u)
			lo = mid;
		else
			hi = mid;
	}
	double f = (u - d->p[lo]) / (d->p[hi] - d->p[lo]);
	return d->ns[lo] + f * (d->ns[hi] - d->ns[lo]);
}

double lb_simr_dist_table_mean(const struct lb_simr_dist *d)
{
	double m = 0;
	for (size_t i = 1; i < d->n; i++)
		m += (d->p[i] - d->p[i - 1]) * (d->ns[i] + d->ns[i - 1]) / 2;
	return m;
}

/* splitmix64 (engines/sim/sim_world.c's sim_rand, the same constants). */
static uint64_t splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t lb_simr_dist_draw(const struct lb_simr_dist *d, uint64_t *rng)
{
	double u = (double)(splitmix(rng) >> 11) * 0x1.0p-53; /* [0, 1), 53 bits */
	return (uint64_t)llround(lb_simr_dist_at(d, u));
}

uint64_t lb_simr_rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t s = seed ^ 0x726f636b65747331ull; /* apart from the world's own stream */
	uint64_t a = splitmix(&s);
	s = a ^ (stream * 0xd1342543de82ef95ull);
	return splitmix(&s);
}
