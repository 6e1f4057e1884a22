/* SPDX-License-Identifier: MIT */
/*
 * lb_wrap.h - text output that fits LB_WIDTH columns.
 *
 * The default tables of every command fit LB_WIDTH columns (the wide
 * columns are behind --wide); prose lines around them (# notes, warnings,
 * verdicts) go through lb_wrap(), which breaks a line that is longer at
 * the last space that fits and starts each further line with a
 * continuation prefix ("#   ", "    "), so nothing is lost.  Columns are
 * counted in characters (UTF-8 code points: "±" is one).
 */
#ifndef LB_WRAP_H
#define LB_WRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LB_WIDTH 100

/* The width of s in columns: its UTF-8 code points. */
size_t lb_text_width(const char *s, size_t len);

/*
 * Print text (one or more lines, '\n' separated; a missing final '\n' is
 * added) with every line longer than LB_WIDTH broken at spaces; the pieces
 * after the first start with cont.  A word longer than the room stays
 * whole (its line is then longer: nothing is cut).
 */
void lb_wrap(FILE *out, const char *cont, const char *text);

/* lb_wrap() of a printf-formatted text. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void lb_wrapf(FILE *out, const char *cont, const char *fmt, ...);

/*
 * One line of prose built in pieces (a clause only under a condition),
 * printed whole: lb_line_add() appends (what does not fit in the buffer is
 * dropped, never overrun), lb_line_put() prints it through lb_wrap() with
 * cont, or as it is when wide (a command's --wide keeps its old lines),
 * with one final '\n', and empties it.
 */
struct lb_line {
	char buf[2048];
	size_t len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void lb_line_add(struct lb_line *l, const char *fmt, ...);
void lb_line_put(FILE *out, bool wide, const char *cont, struct lb_line *l);

#endif /* LB_WRAP_H */
