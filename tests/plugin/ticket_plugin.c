/* SPDX-License-Identifier: MIT */
/*
 * ticket_plugin.c - the ticket lock as a plugin (locks/include/lockbench/lb_plugin.h), and the
 * adapter scripts/build-plugin compiles against any tree's ticket.h: the
 * same file built from HEAD and from a patched tree gives two plugins that
 * differ only in the header they included and the name set with
 * -DLB_PLUGIN_NAME, so both run side by side in one lockbench process.
 *
 * -DLB_PLUGIN_EXTRA_WORK=N adds N iterations of a dependent busy loop to the
 * lock path after the acquisition: a copy that is slower on purpose, for
 * checking that `lockbench ab` flags a slowdown.  An iteration is a
 * volatile load, add and store (~2.3 ns here), so ticket-slow's 40 make it
 * ~8x slower at 1 thread: a slowdown nothing can miss.
 *
 * -DLB_PLUGIN_RELOCK_EVERY=N makes every N-th acquisition by a thread take
 * the lock twice (taken, released, taken again, before the critical
 * section starts, so mutual exclusion holds): 1/N of an extra lock and
 * unlock per op.  A few cycles of extra work in the lock path vanish
 * behind the locked add (out-of-order execution runs them in its shadow:
 * one volatile iteration measured +1..+6 % from run to run); an extra
 * locked add cannot.  The count itself is a load and a store per op in
 * the thread's context, done before the atomic add so that it overlaps
 * it (kept on the lock's line, after the add, it cost +14 % alone).
 * ticket-5pct uses N = 64: +3.0 .. +5.3 % at 1 thread in single runs on
 * the loaded development guest (N = 32: median +9.6 % over 20 runs);
 * scripts/ab-aa-check's slow mode quotes the median of its runs.
 */
#include "lb_plugin.h"
#include "ticket.h"

#include <stdint.h>

#ifndef LB_PLUGIN_NAME
#define LB_PLUGIN_NAME "ticket-plugin"
#endif
#ifndef LB_PLUGIN_EXTRA_WORK
#define LB_PLUGIN_EXTRA_WORK 0
#endif
#ifndef LB_PLUGIN_RELOCK_EVERY
#define LB_PLUGIN_RELOCK_EVERY 0
#endif

#if LB_PLUGIN_RELOCK_EVERY > 0
/* The thread's count of acquisitions for the every-N-th relock, in its own
 * context (no shared line, no thread-local lookup in a shared object),
 * counted before the lock's atomic add so that its store is already on
 * its way when the add waits for earlier stores. */
struct relock_ctx {
	uint32_t acquisitions;
};
#define PLUGIN_CTX_FLAG LB_LOCK_F_THREAD_CTX
#else
#define PLUGIN_CTX_FLAG 0
#endif

static int plugin_init(void *lock)
{
	lb_ticket_init(lock);
	return 0;
}

#if LB_PLUGIN_EXTRA_WORK > 0
/* Volatile steps the compiler cannot fold: the deliberate slowdown. */
static inline void extra_work(void)
{
	for (volatile unsigned int i = 0; i < LB_PLUGIN_EXTRA_WORK; i++)
		;
}
#endif

static void plugin_lock(void *lock, void *tctx)
{
#if LB_PLUGIN_RELOCK_EVERY > 0
	struct relock_ctx *ctx = tctx;
	bool again = ++ctx->acquisitions % LB_PLUGIN_RELOCK_EVERY == 0;
#else
	(void)tctx;
#endif
	lb_ticket_lock(lock);
#if LB_PLUGIN_EXTRA_WORK > 0
	extra_work();
#endif
#if LB_PLUGIN_RELOCK_EVERY > 0
	if (again) {
		lb_ticket_unlock(lock);
		lb_ticket_lock(lock);
	}
#endif
}

static void plugin_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_unlock(lock);
}

static bool plugin_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_ticket_trylock(lock);
}

LB_PLUGIN_EXPORT_OPS(
	.name = LB_PLUGIN_NAME,
	.family = "spin",
	.summary = "ticket spinlock built as a plugin (tests/plugin/ticket_plugin.c)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR | PLUGIN_CTX_FLAG,
	.lock_size = sizeof(lb_ticket_t),
	.lock_align = _Alignof(lb_ticket_t),
#if LB_PLUGIN_RELOCK_EVERY > 0
	.thread_ctx_size = sizeof(struct relock_ctx),
#endif
	.init = plugin_init,
	.lock = plugin_lock,
	.unlock = plugin_unlock,
	.trylock = plugin_trylock,
);
