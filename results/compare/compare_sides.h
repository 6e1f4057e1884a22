/* SPDX-License-Identifier: MIT */
/*
 * compare_sides.h - the two sides of a comparison inside ONE result file:
 * the cells a selector (`--side-a lock=ticket`, KEY=VALUE[,KEY=VALUE...])
 * picks against those another picks, or the sides the file itself names
 * (an aim7 --ab file: side=PRE against side=POST, the A/B lock's param
 * left out of the matching; a `lockbench ab` file: side=A against side=B,
 * lock left out).  Cells of A and B are then paired on their other params.
 */
#ifndef LB_COMPARE_SIDES_H
#define LB_COMPARE_SIDES_H

#include "result_file.h"

#include <stdbool.h>
#include <stddef.h>

#define LB_CMP_MAX_SEL_KEYS 8

struct lb_cmp_selector {
	size_t n;
	const char *key[LB_CMP_MAX_SEL_KEYS];
	const char *value[LB_CMP_MAX_SEL_KEYS];
	char text[256];       /* "lock=tas,threads=2" as given (or made) */
	char buf[256];        /* the storage of key[] and value[] */
};

struct lb_cmp_within {
	struct lb_cmp_selector sel[2];
	/* Params not matched on (the selectors' keys, and the file's A/B lock
	 * key), NULL-terminated. */
	const char *excluded[2 * LB_CMP_MAX_SEL_KEYS + 2];
	size_t nexcluded;
	char label[2][320];   /* default side labels */
	bool *member[2];      /* [cell index]: the cell is on that side (malloc'd) */
};

/*
 * Set up the sides of file f: from the selectors' arguments a_arg and b_arg
 * (both or neither; "--side-a"/"--side-b" in messages), or, when both are
 * NULL, from what the file says (aim7 --ab, ab).  Bad input: one line, exit 2.
 */
void lb_cmp_within_setup(const struct lb_rfile *f, const char *a_arg, const char *b_arg,
			 struct lb_cmp_within *w);
void lb_cmp_within_free(struct lb_cmp_within *w);

/* Is `key` one of w's excluded params? */
bool lb_cmp_within_excludes(const struct lb_cmp_within *w, const char *key);

#endif /* LB_COMPARE_SIDES_H */
