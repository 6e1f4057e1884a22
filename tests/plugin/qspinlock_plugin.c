/* SPDX-License-Identifier: MIT */
/*
 * qspinlock_plugin.c - the queued spinlock as a plugin: the adapter
 * `scripts/build-plugin --lock qspinlock` compiles against any tree's
 * qspinlock.h (HEAD and patched, side by side under two names), and the
 * worked example of a lock with a per-thread context in doc/plugin.md.
 *
 * The context is the thread's lb_qspin_ctx_t (thread_ctx_size bytes that
 * lockbench gives each thread).  thread_init() sets it up with the thread's
 * dense index in this plugin's own node domain: one struct lb_qspin_slot
 * per index, static and zero-filled, shared by every lock of the plugin
 * (the kernel's per-CPU qnodes).  lock() passes the context; unlock() and
 * trylock() do not need it.
 */
#include "lb_plugin.h"
#include "qspinlock.h"

#include <errno.h>

#ifndef LB_PLUGIN_NAME
#define LB_PLUGIN_NAME "qspinlock-plugin"
#endif

_Static_assert(LB_MAX_THREADS <= LB_QSPIN_MAX_THREADS, "thread indices must fit the tail");
static struct lb_qspin_slot plugin_slots[LB_MAX_THREADS];

static int plugin_init(void *lock)
{
	lb_qspin_init(lock);
	return 0;
}

static int plugin_thread_init(void *tctx, unsigned int thread_index)
{
	if (thread_index >= LB_MAX_THREADS)
		return EINVAL;
	return lb_qspin_ctx_init(tctx, plugin_slots, thread_index) ? 0 : EINVAL;
}

static void plugin_lock(void *lock, void *tctx)
{
	lb_qspin_lock(lock, tctx);
}

static void plugin_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_qspin_unlock(lock);
}

static bool plugin_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_qspin_trylock(lock);
}

LB_PLUGIN_EXPORT_OPS(
	.name = LB_PLUGIN_NAME,
	.family = "spin",
	.summary = "queued spinlock built as a plugin (tests/plugin/qspinlock_plugin.c)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR | LB_LOCK_F_THREAD_CTX,
	.lock_size = sizeof(lb_qspin_t),
	.lock_align = _Alignof(lb_qspin_t),
	.thread_ctx_size = sizeof(lb_qspin_ctx_t),
	.thread_init = plugin_thread_init,
	.init = plugin_init,
	.lock = plugin_lock,
	.unlock = plugin_unlock,
	.trylock = plugin_trylock,
);
