/* SPDX-License-Identifier: MIT */
/* test_wrap.c - lib/lb_wrap.c: lines of at most LB_WIDTH columns, nothing lost. */
#include "lb_wrap.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* What lb_wrap(cont, text) prints, in buf. */
static void wrapped(char *buf, size_t size, const char *cont, const char *text)
{
	FILE *f = fmemopen(buf, size, "w");
	memset(buf, 0, size);
	lb_wrap(f, cont, text);
	fclose(f);
}

/* Every line at most LB_WIDTH columns (characters, not bytes). */
static bool fits(const char *s)
{
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		if (lb_text_width(s, len) > LB_WIDTH)
			return false;
		s += len + (nl != NULL);
	}
	return true;
}

/* s with each "\n" + cont turned back into one space: the text before wrapping. */
static void unwrap(char *s, const char *cont)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\n%s", cont);
	for (char *p; (p = strstr(s, pat)) != NULL;) {
		*p = ' ';
		memmove(p + 1, p + strlen(pat), strlen(p + strlen(pat)) + 1);
	}
}

/* lb_line: built in pieces, printed wrapped, or as it is when wide. */
static void line_check(void)
{
	struct lb_line l = { .len = 0 };
	char out[4096];
	for (int i = 0; i < 30; i++)
		lb_line_add(&l, i ? " piece%d" : "# piece%d", i);
	char whole[sizeof(l.buf) + 1];
	snprintf(whole, sizeof(whole), "%s\n", l.buf);
	FILE *f = fmemopen(out, sizeof(out), "w");
	lb_line_put(f, true, "#   ", &l);
	fclose(f);
	tap_ok(!strcmp(out, whole) && l.len == 0 && !l.buf[0],
	       "lb_line_put wide: the line as built, one newline, and the line emptied");
	for (int i = 0; i < 30; i++)
		lb_line_add(&l, i ? " piece%d" : "# piece%d", i);
	f = fmemopen(out, sizeof(out), "w");
	lb_line_put(f, false, "#   ", &l);
	fclose(f);
	tap_ok(fits(out) && strstr(out, "\n#   piece"), "lb_line_put: broken to fit, '#   ' continued");
	unwrap(out, "#   ");
	tap_ok(!strcmp(out, whole), "joined again, it is the line as built");
	for (int i = 0; i < 1000; i++)
		lb_line_add(&l, "0123456789");
	tap_ok(l.len == sizeof(l.buf) - 1 && !l.buf[l.len], "what does not fit is dropped, never overrun");
}

int main(void)
{
	char text[1024], out[4096];
	tap_diag("test_wrap: lb_wrap() breaks at spaces within LB_WIDTH, continuation prefix");
	wrapped(out, sizeof(out), "#   ", "# short line");
	tap_ok(!strcmp(out, "# short line\n"), "a short line prints as it is, '\\n' added");

	text[0] = '\0';
	for (int i = 0; i < 40; i++)
		strcat(text, i ? " word±" : "# word±");
	wrapped(out, sizeof(out), "#   ", text);
	tap_ok(fits(out) && strstr(out, "\n#   word±") != NULL,
	       "a 40-word line (with 2-byte '±'): every line <= %d columns, continued with '#   '",
	       LB_WIDTH);
	size_t first = strcspn(out, "\n");
	tap_ok(lb_text_width(out, first) > LB_WIDTH - 7,
	       "the first line is filled up to the last space that fits (%zu columns)",
	       lb_text_width(out, first));
	strcat(text, "\n");
	unwrap(out, "#   ");
	tap_ok(!strcmp(out, text), "joined again at the breaks, it is the text itself");

	memset(text, 'x', 150);
	strcpy(text + 150, " tail");
	wrapped(out, sizeof(out), "    ", text);
	tap_ok(!strncmp(out, text, 150) && !strcmp(out + 150, "\n    tail\n"),
	       "a word longer than the line stays whole; the rest goes on the next line");

	wrapped(out, sizeof(out), "  ", "one\ntwo\n");
	tap_ok(!strcmp(out, "one\ntwo\n"), "several lines: each its own, nothing added");

	line_check();
	return tap_done();
}
