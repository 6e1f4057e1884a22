/* SPDX-License-Identifier: MIT */
/*
 * mutex_plugin.c - the adaptive-spinning mutex as a plugin: the adapter
 * `scripts/build-plugin --lock mutex` compiles against any tree's mutex.h,
 * and the plugin form of doc/embedding.md's worked example.
 *
 * Every call takes the thread's context, lb_mutex_ctx_t (thread_ctx_size
 * bytes lockbench gives each thread), set up by thread_init() on the thread
 * that uses it.  The mutex has no static initializer: init() sizes its spin
 * budget with the defaults.
 */
#include "lb_plugin.h"
#include "mutex.h"

#ifdef LB_PLUGIN_LOST_WAKEUP_AT
#include <stdatomic.h>
#include <unistd.h>
#endif

#ifndef LB_PLUGIN_NAME
#define LB_PLUGIN_NAME "mutex-plugin"
#endif

static int plugin_init(void *lock)
{
	lb_mutex_init(lock, NULL);
	return 0;
}

static int plugin_thread_init(void *tctx, unsigned int thread_index)
{
	(void)thread_index;
	lb_mutex_ctx_init(tctx);
	return 0;
}

#ifdef LB_PLUGIN_LOST_WAKEUP_AT
/* Broken on purpose (tests/aim7/test_aim7_watchdog.py): the Nth lock()
 * never returns, as if its wake-up were lost. */
static _Atomic unsigned long lost_wakeup_locks;
#endif

static void plugin_lock(void *lock, void *tctx)
{
#ifdef LB_PLUGIN_LOST_WAKEUP_AT
	/* Relaxed: a count; the lock orders the data. */
	if (atomic_fetch_add_explicit(&lost_wakeup_locks, 1, memory_order_relaxed) ==
	    LB_PLUGIN_LOST_WAKEUP_AT)
		for (;;)
			pause();
#endif
	lb_mutex_lock(lock, tctx);
}

static void plugin_unlock(void *lock, void *tctx)
{
	lb_mutex_unlock(lock, tctx);
}

static bool plugin_trylock(void *lock, void *tctx)
{
	return lb_mutex_trylock(lock, tctx);
}

LB_PLUGIN_EXPORT_OPS(
	.name = LB_PLUGIN_NAME,
	.family = "mutex",
	.summary = "adaptive-spinning mutex built as a plugin (tests/plugin/mutex_plugin.c)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX,
	.lock_size = sizeof(lb_mutex_t),
	.lock_align = _Alignof(lb_mutex_t),
	.thread_ctx_size = sizeof(lb_mutex_ctx_t),
	.thread_init = plugin_thread_init,
	.init = plugin_init,
	.lock = plugin_lock,
	.unlock = plugin_unlock,
	.trylock = plugin_trylock,
);
