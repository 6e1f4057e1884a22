/* SPDX-License-Identifier: MIT */
/*
 * workers.h - the writer and reader threads and the exclusion check
 * (the kernel's kernel/locking/locktorture.c).
 *
 * A writer sets lock_is_write_held right after acquiring and clears it
 * right before releasing; a reader increments and decrements
 * lock_is_read_held the same way.  A writer that finds either already set,
 * or a reader that finds a writer, counts a Fail in its own record and
 * prints the first one of each kind.  --holders_check adds a deterministic
 * check: one counter, writers add 2^32 and readers 1 with fetch_add, and
 * the previous value tells whether anyone else was inside.
 *
 * Locks flagged LB_LOCK_F_RCU (readers run alongside writers by design) keep
 * the writer/writer check and replace the reader/writer one with a
 * grace-period check: each writer bumps a generation while holding the lock;
 * a reader records the generation it saw and that it is inside; once the
 * writer's unlock (which waits for a grace period) returns, no reader may
 * still be inside with an older generation.
 */
#ifndef LB_TORTURE_WORKERS_H
#define LB_TORTURE_WORKERS_H

#include "context.h"

/* pthread entry points; arg is the thread's struct lb_torture_thread. */
void *lb_torture_writer(void *arg);
void *lb_torture_reader(void *arg);

/* Name of a worker's role, for messages: "writer" or "reader". */
const char *lb_torture_role(const struct lb_torture_thread *t);

/* The parts of a worker's life other loops (deadlock.c) share: set up its
 * lock contexts ([0] and `nested` more), wait for the start (false when
 * stopped first), and leave (thread_fini, EXITED). */
int lb_torture_thread_setup(struct lb_torture_thread *t, int nested);
bool lb_torture_wait_for_go(struct lb_torture_thread *t);
void lb_torture_finish(struct lb_torture_thread *t);

/* WARN_ON_ONCE + n_lock_fail++: counted always, the first of each kind
 * (once) printed as a "!!!" line naming `what`. */
void lb_torture_record_fail(struct lb_torture_thread *t, _Atomic bool *once, const char *what);

#endif /* LB_TORTURE_WORKERS_H */
