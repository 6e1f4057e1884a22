/* SPDX-License-Identifier: MIT */
/*
 * compare_ab.h - `lockbench compare` of `lockbench ab` files: one file shows
 * the paired ratios the run computed, never an unpaired re-test; two or
 * more files get a warning that comparing them is sequential.
 */
#ifndef LB_COMPARE_AB_H
#define LB_COMPARE_AB_H

#include "result_file.h"

#include <stdbool.h>
#include <stdio.h>

void lb_cmp_ab_table(FILE *out, const struct lb_rfile *f);
void lb_cmp_ab_json(FILE *out, const struct lb_rfile *f);
void lb_cmp_ab_csv(FILE *out, const struct lb_rfile *f);
/* Two or more files of which one at least is an ab file: the warning on
 * out; true when it was written. */
bool lb_cmp_ab_sequential_warning(FILE *out, const struct lb_rfile *files, size_t n);

#endif /* LB_COMPARE_AB_H */
