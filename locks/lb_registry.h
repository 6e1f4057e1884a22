/* SPDX-License-Identifier: MIT */
/* lb_registry.h - lookup, validation and allocation over the lock registry. */
#ifndef LB_REGISTRY_H
#define LB_REGISTRY_H

#include <stdio.h>
#include "lb_lock_ops.h"

/* The registry in list order; lb_lock_count() entries. */
const struct lb_lock_ops *const *lb_lock_table(void);
size_t lb_lock_count(void);

/* Exact name lookup; NULL when unknown.  A name with a '/' or a ".so"
 * ending is a plugin path (lb_plugin.h): it is loaded and checked, and a
 * plugin that cannot be used ends the program with a one-line reason and
 * exit status 2. */
const struct lb_lock_ops *lb_lock_find(const char *name);

/* The longest --lock list a command takes, + 1 (each refuses a longer one). */
#define LB_LOCK_LIST_CHARS 4096

/* A lock named in a --lock list, or exit 2 with one line naming --lock,
 * the name and `accepted` (each command says which locks it runs). */
typedef const struct lb_lock_ops *(*lb_lock_finder)(const char *name, const char *accepted);

/* --lock LIST: the comma-separated names of `arg` into ops[0..cap), each
 * through `find`, none twice; returns how many.  A list that is not one
 * (an empty name, more than `cap`) or names a lock twice: one line naming
 * --lock, exit 2. */
size_t lb_lock_list_parse(const char *arg, const struct lb_lock_ops **ops, size_t cap,
			  lb_lock_finder find, const char *accepted);

/*
 * Check every entry (unique names, members present for each flag, sane
 * sizes).  Prints one line per problem to `err` and returns the number of
 * problems; 0 means the table is consistent.
 */
int lb_registry_check(FILE *err);

/* One entry's checks (members present for each flag, sane sizes; not the
 * name's uniqueness): problems printed one per line to err, and counted. */
int lb_lock_check_entry(const struct lb_lock_ops *ops, FILE *err);

/* Write the accepted lock names, comma separated, into buf. */
void lb_lock_names(char *buf, size_t len, bool include_unsupported);

/* The same, leaving out locks with any of `flags` set (e.g.
 * LB_LOCK_F_FALLIBLE, for a caller that cannot handle a failed lock). */
void lb_lock_names_without(char *buf, size_t len, unsigned int flags);

/* May `ops` take part in a default run (available, and not the busted control)? */
bool lb_lock_in_default_runs(const struct lb_lock_ops *ops);

/*
 * A lock object on its own cache lines (nothing else shares them), and a
 * thread context likewise.  Both zeroed.  NULL on allocation failure.
 */
void *lb_lock_alloc(const struct lb_lock_ops *ops);
void lb_lock_free(void *lock);
void *lb_thread_ctx_alloc(const struct lb_lock_ops *ops);
void lb_thread_ctx_free(void *tctx);

/* A lock whose waiters only spin (exclusive, never sleeps, a real lock):
 * it needs its threads <= CPUs (doc/embedding.md); `list` says "spin-only". */
bool lb_lock_spin_only(const struct lb_lock_ops *o);

/* Render ops->flags as "excl,try,sleep,..." into buf. */
const char *lb_lock_flags_str(unsigned int flags, char *buf, size_t len);

#endif /* LB_REGISTRY_H */
