/* SPDX-License-Identifier: MIT */
/* lb_wrap.c - lines that fit LB_WIDTH columns (lb_wrap.h). */
#include "lb_wrap.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

size_t lb_text_width(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* One line (no '\n') of len bytes, broken at spaces. */
static void wrap_line(FILE *out, const char *cont, const char *s, size_t len)
{
	size_t cont_w = lb_text_width(cont, strlen(cont));
	size_t room = LB_WIDTH;
	bool first = true;
	for (;;) {
		if (!first) {
			while (len && *s == ' ')
				s++, len--;
			fputs(cont, out);
		}
		if (lb_text_width(s, len) <= room) {
			fwrite(s, 1, len, out);
			fputc('\n', out);
			return;
		}
		/* The last space whose left part fits, else the first space. */
		size_t cut = 0, w = 0;
		for (size_t i = 0; i < len; i++) {
			if (s[i] == ' ' && w <= room && i > 0)
				cut = i;
			w += ((unsigned char)s[i] & 0xc0) != 0x80;
			if (w > room && cut)
				break;
		}
		if (!cut) {
			const char *sp = memchr(s + 1, ' ', len - 1);
			cut = sp ? (size_t)(sp - s) : len;
		}
		size_t end = cut;
		while (end && s[end - 1] == ' ')
			end--;
		fwrite(s, 1, end, out);
		fputc('\n', out);
		s += cut;
		len -= cut;
		if (!len)
			return;
		first = false;
		room = cont_w < LB_WIDTH / 2 ? LB_WIDTH - cont_w : LB_WIDTH / 2;
	}
}

void lb_wrap(FILE *out, const char *cont, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		wrap_line(out, cont, text, len);
		text += len + (nl != NULL);
	}
}

void lb_wrapf(FILE *out, const char *cont, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(buf)) {
		lb_wrap(out, cont, buf);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big)
		return;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	lb_wrap(out, cont, big);
	free(big);
}

void lb_line_add(struct lb_line *l, const char *fmt, ...)
{
	size_t room = sizeof(l->buf) - l->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf + l->len, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < room ? (size_t)n : room - 1;
}

void lb_line_put(FILE *out, bool wide, const char *cont, struct lb_line *l)
{
	if (wide) {
		fputs(l->buf, out);
		if (!l->len || l->buf[l->len - 1] != '\n')
			fputc('\n', out);
	} else {
		lb_wrap(out, cont, l->buf);
	}
	l->len = 0;
	l->buf[0] = '\0';
}
