/* SPDX-License-Identifier: MIT */
/*
 * template.c - start here for a lock of your own (doc/plugin.md).
 *
 * Copy this file, replace the test-and-set lock below with yours, and build:
 *
 *   cc -O2 -shared -fPIC -fvisibility=hidden $(pkg-config --cflags lockbench-locks) \
 *      mylock.c -o mylock.so
 *   lockbench bench --lock ./mylock.so
 *
 * Only the two symbols LB_PLUGIN_EXPORT_OPS writes are looked up; with
 * -fvisibility=hidden nothing else leaves the object.
 */
#include <lockbench/lb_plugin.h>

#include <stdatomic.h>

struct my_lock {
	_Atomic int held;
};

static int my_init(void *lock)
{
	atomic_init(&((struct my_lock *)lock)->held, 0);
	return 0;
}

static void my_lock(void *lock, void *tctx)
{
	struct my_lock *l = lock;
	(void)tctx;
	/* acquire: the critical section starts after the exchange that won. */
	while (atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
		/* Spin on a plain load until it looks free: no stores meanwhile,
		 * so the line stays shared while the holder works. */
		while (atomic_load_explicit(&l->held, memory_order_relaxed))
			;
}

static void my_unlock(void *lock, void *tctx)
{
	(void)tctx;
	/* release: pairs with the acquire exchange in my_lock. */
	atomic_store_explicit(&((struct my_lock *)lock)->held, 0, memory_order_release);
}

LB_PLUGIN_EXPORT_OPS(
	.name = "my-tas",
	.family = "spin",
	.summary = "test-and-set spinlock from the plugin template",
	.flags = LB_LOCK_F_EXCLUSIVE,
	.lock_size = sizeof(struct my_lock),
	.lock_align = _Alignof(struct my_lock),
	.init = my_init,
	.lock = my_lock,
	.unlock = my_unlock,
);
