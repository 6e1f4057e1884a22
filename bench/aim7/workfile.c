/* SPDX-License-Identifier: MIT */
/*
 * workfile.c - re-aim workfiles and job assignment.
 *
 * Format (re-aim driver.c, as documented in doc/aim7.md): one
 * `<hits> <testname>` per line; lines starting with '#' and blank lines
 * are skipped; `FILESIZE: <n>[K|M]` and `POOLSIZE: <n>[K|M]` set the disk
 * sizes (KiB).  A test named twice keeps its last weight, while every line
 * counts in the total, as in re-aim.
 */
#include "aim7.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aim7_paths.h"

size_t aim_ntests(void)
{
	return aim_nsys_tests + aim_nuser_tests;
}

const struct aim_test *aim_test_at(size_t i)
{
	return i < aim_nsys_tests ? &aim_sys_tests[i] : &aim_user_tests[i - aim_nsys_tests];
}

int aim_test_index(const char *name)
{
	for (size_t i = 0; i < aim_ntests(); i++)
		if (!strcmp(aim_test_at(i)->name, name))
			return (int)i;
	return -1;
}

const char *aim_workfile_shipped(void)
{
	return "high_systime, shared, compute, fserver, new_fserver, alltests, five_sec";
}

/* "<n>[K|k|M|m]" in KiB; -1 on bad input. */
static long parse_size_kb(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || errno || v < 0 || v > 64L * 1024 * 1024)
		return -1;
	if (*end == 'M' || *end == 'm')
		v *= 1024, end++;
	else if (*end == 'K' || *end == 'k')
		end++;
	if (v > 64L * 1024 * 1024)
		return -1; /* the limit (64 GiB) holds after the unit too */
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -1 : v;
}

int aim_workfile_parse(const char *text, struct aim_workfile *wf, char *err, size_t errlen)
{
	unsigned int lineno = 0;
	const char *p = text;
	wf->ntests = 0;
	wf->total_hits = 0;
	wf->filesize_kb = wf->poolsize_kb = 0;
	while (*p) {
		char line[512];
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "%u: line too long", lineno);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl ? nl + 1 : p + len;
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		size_t l = strlen(s);
		while (l && isspace((unsigned char)s[l - 1]))
			s[--l] = '\0';
		if (*s == '#' || *s == '\0')
			continue;
		if (!strncasecmp(s, "FILESIZE:", 9) || !strncasecmp(s, "POOLSIZE:", 9)) {
			long kb = parse_size_kb(s + 9);
			if (kb < 0) {
				snprintf(err, errlen, "%u: bad size in '%s'; expected %.8s <n>[K|M]",
					 lineno, s, s);
				return -1;
			}
			if (toupper((unsigned char)*s) == 'F')
				wf->filesize_kb = (unsigned long)kb;
			else
				wf->poolsize_kb = (unsigned long)kb;
			continue;
		}
		char *end;
		errno = 0;
		long hits = isdigit((unsigned char)*s) ? strtol(s, &end, 10) : -1;
		if (hits < 0 || errno || hits > 1000000 || !isspace((unsigned char)*end)) {
			snprintf(err, errlen,
				 "%u: expected '<hits> <test name>' or 'FILESIZE: <n>[K|M]' or "
				 "'POOLSIZE: <n>[K|M]', got '%s'", lineno, s);
			return -1;
		}
		while (isspace((unsigned char)*end))
			end++;
		char *name = end;
		while (*end && !isspace((unsigned char)*end))
			end++;
		if (*end) {
			*end++ = '\0';
			while (isspace((unsigned char)*end))
				end++;
			if (*end && *end != '#') {
				snprintf(err, errlen, "%u: unexpected '%s' after the test name", lineno,
					 end);
				return -1;
			}
		}
		int idx = aim_test_index(name);
		if (idx < 0) {
			int w = snprintf(err, errlen, "%u: unknown test '%s'; accepted:", lineno, name);
			for (size_t i = 0; i < aim_ntests() && w > 0 && (size_t)w < errlen; i++)
				w += snprintf(err + w, errlen - (size_t)w, "%s %s", i ? "," : "",
					      aim_test_at(i)->name);
			return -1;
		}
		wf->total_hits += (unsigned long)hits;
		size_t slot = 0;
		while (slot < wf->ntests && wf->test[slot] != idx)
			slot++;
		if (slot == wf->ntests) {
			if (wf->ntests == AIM_MAX_WORKFILE_TESTS) {
				snprintf(err, errlen, "%u: more than %d different tests", lineno,
					 AIM_MAX_WORKFILE_TESTS);
				return -1;
			}
			wf->test[wf->ntests++] = idx;
		}
		wf->hits[slot] = (unsigned int)hits; /* re-aim: the last weight wins */
	}
	if (wf->total_hits == 0) {
		(void)lineno;
		snprintf(err, errlen, " no test with a non-zero weight; accepted: lines "
			 "'<hits> <test name>' with hits > 0");
		return -1;
	}
	return 0;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (n < cap - 1)
			break;
		/* Full: a file of exactly 1 MiB fits the last buffer (1 MiB + the
		 * terminator + the byte that tells it ended); one byte more not. */
		if (cap >= (1u << 20) + 2) {
			snprintf(err, errlen, "%s: larger than 1 MiB", path);
			free(buf);
			buf = NULL;
			break;
		}
		cap = 2 * cap > (1u << 20) + 2 ? (1u << 20) + 2 : 2 * cap;
		char *nb = realloc(buf, cap);
		if (!nb)
			free(buf);
		buf = nb;
	}
	if (buf && (ferror(f) || memchr(buf, '\0', n))) {
		snprintf(err, errlen, "%s: unreadable or not a text file", path);
		free(buf);
		buf = NULL;
	} else if (buf) {
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int aim_workfile_load(const char *spec, struct aim_workfile *wf, char *err, size_t errlen)
{
	memset(wf, 0, sizeof(*wf));
	if (!spec || !*spec) {
		snprintf(err, errlen, "empty workfile name; accepted: %s, or a path",
			 aim_workfile_shipped());
		return -1;
	}
	snprintf(wf->name, sizeof(wf->name), "%s", spec);
	if (strchr(spec, '/') || is_file(spec)) {
		snprintf(wf->path, sizeof(wf->path), "%s", spec);
		/* report a path by its last component */
		const char *base = strrchr(spec, '/');
		snprintf(wf->name, sizeof(wf->name), "%s", base ? base + 1 : spec);
	} else {
		static const char *const dirs[] = { LB_AIM7_SRC_WORKFILES, LB_AIM7_DATA_WORKFILES };
		const char *bare = strncmp(spec, "workfile.", 9) ? spec : spec + 9;
		bool found = false;
		snprintf(wf->name, sizeof(wf->name), "%s", bare);
		for (size_t i = 0; i < 2 && !found; i++) {
			snprintf(wf->path, sizeof(wf->path), "%s/workfile.%s", dirs[i], bare);
			found = is_file(wf->path);
		}
		if (!found) {
			snprintf(err, errlen,
				 "unknown workfile '%s'; accepted: %s, or a path (searched %s and %s)",
				 spec, aim_workfile_shipped(), dirs[0], dirs[1]);
			return -1;
		}
	}
	char *text = read_file(wf->path, err, errlen);
	if (!text)
		return -1;
	char perr[2048];
	int rc = aim_workfile_parse(text, wf, perr, sizeof(perr));
	free(text);
	if (rc)
		snprintf(err, errlen, "%s:%s", wf->path, perr);
	return rc;
}

unsigned int aim_assign_jobs(const struct aim_workfile *wf, unsigned int jobs,
			     unsigned int *counts)
{
	unsigned int sum = 0;
	for (size_t i = 0; i < wf->ntests; i++) {
		double share = (double)wf->hits[i] / (double)wf->total_hits * (double)jobs;
		unsigned int c = (unsigned int)lround(share);
		if (c == 0 && wf->hits[i] > 0)
			c = 1;
		counts[i] = c;
		sum += c;
	}
	return sum;
}

void aim_shuffle_jobs(const struct aim_workfile *wf, const unsigned int *counts,
		      uint64_t seed, uint16_t *order, unsigned int n)
{
	unsigned int k = 0;
	for (size_t i = 0; i < wf->ntests; i++)
		for (unsigned int j = 0; j < counts[i] && k < n; j++)
			order[k++] = (uint16_t)i;
	uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
	for (unsigned int i = k; i > 1; i--) {
		x ^= x << 13; /* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		unsigned int j = (unsigned int)(x % i);
		uint16_t tmp = order[i - 1];
		order[i - 1] = order[j];
		order[j] = tmp;
	}
}
