/* SPDX-License-Identifier: MIT */
/*
 * lb_adapter.h - generators for the vtable adapters (the .c files in locks/).
 *
 * The vtable (lb_lock_ops.h) calls every lock through `void *lock, void
 * *tctx`; a lock's own functions take its typed object, and a context-free
 * lock ignores tctx.  These macros write those few-line wrappers so an
 * adapter says only which function fills which slot.  Each expands to one
 * static function that calls the lock's function directly: the compiler
 * inlines the lock's fast path into it exactly as into a hand-written
 * wrapper, so the indirect call through the table costs what it did.
 *
 * A context-free lock whose header follows the API shape of
 * doc/embedding.md (prefix_init/_lock/_unlock/_trylock taking the lock)
 * needs one line:
 *
 *   LB_CTXFREE_LOCK_OPS(tas, lb_tas, lb_tas_t,
 *           .name = "tas", .family = "spin", .summary = "...",
 *           .flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK);
 */
#ifndef LB_ADAPTER_H
#define LB_ADAPTER_H

#include <lockbench/lb_atomic.h> /* LB_UNLIKELY */
#include "lb_die.h"
#include "lb_lock_ops.h"

#include <errno.h>

/* init(lock) returning nothing: the slot's "0, no error". */
#define LB_ADAPT_INIT(name, fn)                                                \
	static int name(void *lock)                                            \
	{                                                                      \
		fn(lock);                                                      \
		return 0;                                                      \
	}

/* init(lock) over a call that returns an errno value and takes further
 * fixed arguments: name(lock) is fn(lock, ...). */
#define LB_ADAPT_INIT_ERR(name, fn, ...)                                       \
	static int name(void *lock)                                            \
	{                                                                      \
		return fn(lock, __VA_ARGS__);                                  \
	}

/* destroy(lock) over a call whose result says nothing (the lock is unused). */
#define LB_ADAPT_DESTROY(name, fn)                                             \
	static void name(void *lock)                                           \
	{                                                                      \
		fn(lock);                                                      \
	}

/* The counters() slot's tail: copy a lock's table of named counts into
 * the caller's out[], at most max of them, and say how many. */
static inline size_t lb_adapt_counters_out(struct lb_counter *out, size_t max,
					   const struct lb_counter *all, size_t n)
{
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = all[i];
	return n;
}

/* A lock/unlock slot of a lock that takes no context. */
#define LB_ADAPT_VOID(name, fn)                                                \
	static void name(void *lock, void *tctx)                               \
	{                                                                      \
		(void)tctx;                                                    \
		fn(lock);                                                      \
	}

/* A trylock slot of a lock that takes no context: true = acquired. */
#define LB_ADAPT_BOOL(name, fn)                                                \
	static bool name(void *lock, void *tctx)                               \
	{                                                                      \
		(void)tctx;                                                    \
		return fn(lock);                                               \
	}

/* A trylock slot over a call that returns 0 when it acquired (POSIX). */
#define LB_ADAPT_TRY0(name, fn)                                                \
	static bool name(void *lock, void *tctx)                               \
	{                                                                      \
		(void)tctx;                                                    \
		return fn(lock) == 0;                                          \
	}

/* A lock/unlock slot over a call that returns an errno value: one that
 * cannot fail on a correctly used lock, so a failure aborts (lb_die) rather
 * than letting a benchmark report nonsense. */
#define LB_ADAPT_CHECKED(name, fn)                                             \
	static void name(void *lock, void *tctx)                               \
	{                                                                      \
		(void)tctx;                                                    \
		int err = fn(lock);                                            \
		if (LB_UNLIKELY(err))                                          \
			lb_die(err, #fn);                                      \
	}

/* lock/unlock and trylock slots of a lock that takes the thread context. */
#define LB_ADAPT_CTX_VOID(name, fn)                                            \
	static void name(void *lock, void *tctx)                               \
	{                                                                      \
		fn(lock, tctx);                                                \
	}
#define LB_ADAPT_CTX_BOOL(name, fn)                                            \
	static bool name(void *lock, void *tctx)                               \
	{                                                                      \
		return fn(lock, tctx);                                         \
	}

/* thread_init of a context set up by fn(ctx) alone (no thread index). */
#define LB_ADAPT_THREAD_INIT(name, fn)                                         \
	static int name(void *tctx, unsigned int thread_index)                 \
	{                                                                      \
		(void)thread_index;                                            \
		fn(tctx);                                                      \
		return 0;                                                      \
	}

/* thread_init of a queued lock whose context binds the thread's index in a
 * node table: fn(ctx, slots, index) returns false for an index the table
 * (or the lock word's tail) cannot hold. */
#define LB_ADAPT_SLOT_THREAD_INIT(name, fn, slots)                             \
	static int name(void *tctx, unsigned int thread_index)                 \
	{                                                                      \
		if (thread_index >= LB_MAX_THREADS)                            \
			return EINVAL;                                         \
		return fn(tctx, slots, thread_index) ? 0 : EINVAL;             \
	}

/*
 * A queued lock's node domain and wrappers: the table p_slots of
 * LB_MAX_THREADS `slot_type` entries (static, zero-filled, never freed, so no
 * lock can reach a dead node), checked to fit the lock word's tail
 * (max_threads), then p_init, p_thread_init (binds the caller's slot),
 * p_lock (takes the context: its queue node), p_unlock and p_trylock (do not).
 */
#define LB_QUEUED_ADAPTERS(p, slot_type, max_threads, init_fn, ctx_init_fn,     \
			   lock_fn, unlock_fn, trylock_fn)                     \
	_Static_assert(LB_MAX_THREADS <= (max_threads),                        \
		       "thread indices must fit the lock word's tail");        \
	static slot_type p##_slots[LB_MAX_THREADS];                            \
	LB_ADAPT_INIT(p##_init, init_fn)                                       \
	LB_ADAPT_SLOT_THREAD_INIT(p##_thread_init, ctx_init_fn, p##_slots)     \
	LB_ADAPT_CTX_VOID(p##_lock, lock_fn)                                   \
	LB_ADAPT_VOID(p##_unlock, unlock_fn)                                   \
	LB_ADAPT_BOOL(p##_trylock, trylock_fn)

/*
 * thread_init, lock, unlock and trylock of a lock whose every call takes the
 * thread context (the mutexes): p_thread_init sets the context up with
 * ctx_init_fn(ctx), then p_lock, p_unlock, p_trylock.
 */
#define LB_CTX_ADAPTERS(p, ctx_init_fn, lock_fn, unlock_fn, trylock_fn)        \
	LB_ADAPT_THREAD_INIT(p##_thread_init, ctx_init_fn)                     \
	LB_ADAPT_CTX_VOID(p##_lock, lock_fn)                                   \
	LB_ADAPT_CTX_VOID(p##_unlock, unlock_fn)                               \
	LB_ADAPT_CTX_BOOL(p##_trylock, trylock_fn)

/*
 * A timedlock slot over timed_fn(lock, ctx, deadline), whose deadline is on
 * CLOCK_MONOTONIC: the caller's deadline is converted (lb_deadline.h); one
 * that cannot be (another clock, a tv_nsec out of range) gets a single
 * trylock_fn: 0 if it acquired, else the conversion's EINVAL.
 */
#define LB_ADAPT_TIMED_MONOTONIC(name, timed_fn, trylock_fn)                   \
	static int name(void *lock, void *tctx, const struct timespec *abs,    \
			clockid_t clock)                                       \
	{                                                                      \
		struct timespec mono;                                          \
		int err = lb_deadline_monotonic(abs, clock, &mono);            \
		if (err)                                                       \
			return trylock_fn(lock, tctx) ? 0 : err;               \
		return timed_fn(lock, tctx, &mono);                            \
	}

/* A placeholder slot that does nothing (the harness baselines). */
#define LB_ADAPT_NOP_INIT(name)                                                \
	static int name(void *lock)                                            \
	{                                                                      \
		(void)lock;                                                    \
		return 0;                                                      \
	}
#define LB_ADAPT_NOP(name)                                                     \
	static void name(void *lock, void *tctx)                               \
	{                                                                      \
		(void)lock;                                                    \
		(void)tctx;                                                    \
	}

/*
 * Ops-table fields, for adapters whose wrappers follow one naming scheme:
 * the object's size and alignment; the exclusive side p_lock, p_unlock,
 * p_trylock; the read side p_read_lock, p_read_unlock, p_read_trylock; the
 * per-thread context's type and p_thread_init.
 */
#define LB_OPS_OBJECT(type) .lock_size = sizeof(type), .lock_align = _Alignof(type)
#define LB_OPS_EXCL(p) .lock = p##_lock, .unlock = p##_unlock, .trylock = p##_trylock
#define LB_OPS_READ(p)                                                         \
	.read_lock = p##_read_lock, .read_unlock = p##_read_unlock,            \
	.read_trylock = p##_read_trylock
#define LB_OPS_CTX(type, p) .thread_ctx_size = sizeof(type), .thread_init = p##_thread_init
/* All of the above for an exclusive lock with a context and p_init. */
#define LB_OPS_CTX_LOCK(type, ctx_type, p)                                     \
	LB_OPS_OBJECT(type), LB_OPS_CTX(ctx_type, p), .init = p##_init, LB_OPS_EXCL(p)

/*
 * Every row but the descriptive ones of a reader/writer lock with a thread
 * context and p_init, p_lock... p_read_trylock: its slots, and its .flags,
 * which are the flags those slots imply (EXCLUSIVE, RW, TRYLOCK, THREAD_CTX:
 * lb_lock_check_entry requires them to agree) or'ed with more_flags.
 */
#define LB_OPS_CTX_RWLOCK(type, ctx_type, p, more_flags)                       \
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_TRYLOCK |      \
		 LB_LOCK_F_THREAD_CTX | (more_flags),                          \
	LB_OPS_CTX_LOCK(type, ctx_type, p), LB_OPS_READ(p)

/* p_init, p_lock, p_unlock, p_trylock of a context-free lock. */
#define LB_CTXFREE_ADAPTERS(p, init_fn, lock_fn, unlock_fn, trylock_fn)       \
	LB_ADAPT_INIT(p##_init, init_fn)                                       \
	LB_ADAPT_VOID(p##_lock, lock_fn)                                       \
	LB_ADAPT_VOID(p##_unlock, unlock_fn)                                   \
	LB_ADAPT_BOOL(p##_trylock, trylock_fn)

/*
 * lb_<sym>_ops for a context-free exclusive lock with prefix_init,
 * prefix_lock, prefix_unlock and prefix_trylock over `type`; the variadic
 * part is the table's descriptive fields (.name, .family, .summary, .flags,
 * and any optional member such as .describe).
 */
#define LB_CTXFREE_LOCK_OPS(sym, prefix, type, ...)                            \
	LB_CTXFREE_ADAPTERS(sym##_adapt, prefix##_init, prefix##_lock,         \
			    prefix##_unlock, prefix##_trylock)                 \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		LB_OPS_OBJECT(type), .init = sym##_adapt_init,                 \
		LB_OPS_EXCL(sym##_adapt), __VA_ARGS__                          \
	}

/* The same for a context-free reader/writer lock: prefix_write_lock,
 * _write_unlock, _write_trylock, _read_lock, _read_unlock, _read_trylock. */
#define LB_CTXFREE_RWLOCK_OPS(sym, prefix, type, ...)                          \
	LB_CTXFREE_ADAPTERS(sym##_adapt, prefix##_init, prefix##_write_lock,   \
			    prefix##_write_unlock, prefix##_write_trylock)     \
	LB_ADAPT_VOID(sym##_adapt_read_lock, prefix##_read_lock)               \
	LB_ADAPT_VOID(sym##_adapt_read_unlock, prefix##_read_unlock)           \
	LB_ADAPT_BOOL(sym##_adapt_read_trylock, prefix##_read_trylock)         \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		LB_OPS_OBJECT(type), .init = sym##_adapt_init,                 \
		LB_OPS_EXCL(sym##_adapt), LB_OPS_READ(sym##_adapt), __VA_ARGS__ \
	}

#endif /* LB_ADAPTER_H */
