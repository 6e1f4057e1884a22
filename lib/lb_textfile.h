/* SPDX-License-Identifier: MIT */
/*
 * lb_textfile.h - a small text input file (a cost table, a machine file)
 * read whole, bounded, with a one-line reason when it cannot be.
 */
#ifndef LB_TEXTFILE_H
#define LB_TEXTFILE_H

#include <stddef.h>

/*
 * Read `path` (at most `max` bytes) into a NUL-terminated buffer the
 * caller frees.  NULL, with `err` set ("cannot read 'P': why", "'P':
 * larger than N KiB", "'P': not a text file" for an embedded NUL, out of
 * memory, read error), when it cannot.
 */
char *lb_textfile_read(const char *path, size_t max, char *err, size_t errlen);

/*
 * Read `path` as lb_textfile_read does and hand its text to `parse`, whose
 * reasons come back prefixed by the path ("PATH:REASON").  0, or -1 with
 * `err` set.
 */
typedef int lb_textfile_parser(const char *text, void *obj, char *err, size_t errlen);
int lb_textfile_load(const char *path, size_t max, lb_textfile_parser *parse, void *obj,
		     char *err, size_t errlen);

/*
 * The next line of `*text` that holds something once its '#' comment is
 * cut, copied into `line` (`size` bytes); `*text` and `*lineno` move past
 * it.  1: a line; 0: the end; -1: a line of `size` characters or more
 * (`err` says "N: line longer than M characters").
 */
int lb_textfile_next_line(const char **text, char *line, size_t size, unsigned int *lineno,
			  char *err, size_t errlen);

/*
 * Host facts as values of a '#'-commented text file: the kernel (uname
 * -r -v), the CPU model, the online CPUs and the UTC date now, each with
 * any '#' made a space (a '#' would start a comment there).
 */
struct lb_textfile_host {
	char kernel[128], cpu[128], cpus[16], date[64];
};
void lb_textfile_host_facts(struct lb_textfile_host *f);

#endif /* LB_TEXTFILE_H */
