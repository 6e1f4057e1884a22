/* SPDX-License-Identifier: MIT */
/*
 * kern_internal.h - what the kern_*.c files of the simulated kernel share
 * among themselves and nobody else uses (the interface is kern.h).
 */
#ifndef LB_AIM7_KERN_INTERNAL_H
#define LB_AIM7_KERN_INTERNAL_H

#include "kern.h"

#include <stdio.h>

/* A pool's free list and owner marks agree (kern_core.c); the number of
 * violations, each printed to err. */
unsigned long aim_pool_check(const struct aim_pool *p, const char *what, FILE *err);

/* A directory chain walk (kern_fs.c): the entry named `name` or AIM_NONE;
 * *prevp (when not NULL) gets the entry before it in its chain. */
uint32_t aim_dir_find(struct aim_dir *d, const char *name, uint32_t *prevp);

#endif /* LB_AIM7_KERN_INTERNAL_H */
