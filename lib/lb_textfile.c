/* SPDX-License-Identifier: MIT */
/* lb_textfile.c - small text input files read whole; host facts for them. */
#include "lb_textfile.h"
#include "lb_hostinfo.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *lb_textfile_read(const char *path, size_t max, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	char *text = malloc(max + 1);
	size_t n = text ? fread(text, 1, max + 1, f) : 0;
	bool bad_read = ferror(f);
	fclose(f);
	if (!text || bad_read || n > max) {
		if (!text)
			snprintf(err, errlen, "'%s': out of memory", path);
		else if (bad_read)
			snprintf(err, errlen, "'%s': read error", path);
		else
			snprintf(err, errlen, "'%s': larger than %zu KiB", path, max / 1024);
		free(text);
		return NULL;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		snprintf(err, errlen, "'%s': not a text file", path);
		free(text);
		return NULL;
	}
	return text;
}

int lb_textfile_load(const char *path, size_t max, lb_textfile_parser *parse, void *obj,
		     char *err, size_t errlen)
{
	char msg[600];
	char *text = lb_textfile_read(path, max, err, errlen);
	if (!text)
		return -1;
	int rc = parse(text, obj, msg, sizeof(msg));
	free(text);
	if (rc)
		snprintf(err, errlen, "%s:%s", path, msg);
	return rc ? -1 : 0;
}

int lb_textfile_next_line(const char **text, char *line, size_t size, unsigned int *lineno,
			  char *err, size_t errlen)
{
	while (**text) {
		const char *p = *text, *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		++*lineno;
		if (len >= size) {
			snprintf(err, errlen, "%u: line longer than %zu characters", *lineno, size - 1);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		*text = p + len + (nl != NULL);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (line[strspn(line, " \t\r")] != '\0')
			return 1;
	}
	return 0;
}

static void no_hash(char *s)
{
	for (; *s; s++)
		*s = *s == '#' ? ' ' : *s;
}

void lb_textfile_host_facts(struct lb_textfile_host *f)
{
	struct lb_hostinfo h;
	lb_hostinfo_get(&h);
	snprintf(f->kernel, sizeof(f->kernel), "%s", h.kernel);
	snprintf(f->cpu, sizeof(f->cpu), "%s", h.cpu_model);
	snprintf(f->cpus, sizeof(f->cpus), "%d", h.ncpus_online);
	no_hash(f->kernel);
	no_hash(f->cpu);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(f->date, sizeof(f->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}
