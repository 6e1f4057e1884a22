/* SPDX-License-Identifier: MIT */
/*
 * bad_plugin.c - plugins the loader must refuse, one per -D:
 *   BAD_VERSION  the ABI version is not this lockbench's
 *   BAD_MISSING  no lb_plugin_ops symbol
 *   BAD_OPS      an ops table without unlock (the registry's checks fail)
 *   BAD_NAME     the name of a built-in lock
 * and one it must accept:
 *   OLD_V1       a version-1 plugin (before init_shared): it loads, and
 *                reads as "cannot be shared by processes".  The bytes where
 *                version 2 has init_shared are set here without the PSHARED
 *                flag, so a loader reading past a version-1 table would
 *                refuse the plugin (the flag check) instead.
 *   OLD_V2       a version-2 plugin (before lock_fallible): likewise, it
 *                loads and reads as "never fails to lock"; the bytes where
 *                version 3 has lock_fallible are set without the FALLIBLE
 *                flag.
 */
#include "lb_plugin.h"

static int bad_init(void *lock)
{
	(void)lock;
	return 0;
}

static void bad_lock(void *lock, void *tctx)
{
	(void)lock;
	(void)tctx;
}

#if defined(OLD_V2)
static int bad_lock_fallible(void *lock, void *tctx)
{
	(void)lock;
	(void)tctx;
	return 0;
}
#endif

#if defined(BAD_MISSING)
LB_PLUGIN_VISIBLE extern const unsigned int lb_plugin_abi_version;
LB_PLUGIN_VISIBLE const unsigned int lb_plugin_abi_version = LB_PLUGIN_ABI_VERSION;
/* Referenced so the unused adapter functions do not warn. */
LB_PLUGIN_VISIBLE extern void (*const lb_bad_unused[2])(void);
LB_PLUGIN_VISIBLE void (*const lb_bad_unused[2])(void) = { (void (*)(void))bad_init,
							   (void (*)(void))bad_lock };
#else
#if defined(BAD_VERSION)
#undef LB_PLUGIN_ABI_VERSION
#define LB_PLUGIN_ABI_VERSION 999u
#elif defined(OLD_V1)
#undef LB_PLUGIN_ABI_VERSION
#define LB_PLUGIN_ABI_VERSION LB_PLUGIN_ABI_VERSION_V1
#elif defined(OLD_V2)
#undef LB_PLUGIN_ABI_VERSION
#define LB_PLUGIN_ABI_VERSION LB_PLUGIN_ABI_VERSION_V2
#elif defined(OLD_V3)
#undef LB_PLUGIN_ABI_VERSION
#define LB_PLUGIN_ABI_VERSION LB_PLUGIN_ABI_VERSION_V3
#endif
LB_PLUGIN_EXPORT_OPS(
#if defined(BAD_NAME)
	.name = "ticket",
#elif defined(OLD_V1)
	.name = "old-v1",
	.init_shared = bad_init, /* past a version-1 table: must not be read */
#elif defined(OLD_V2)
	.name = "old-v2",
	.lock_fallible = bad_lock_fallible, /* past a version-2 table: must not be read */
#elif defined(OLD_V3)
	.name = "old-v3",
#else
	.name = "bad-plugin",
#endif
	.family = "spin",
	.summary = "a plugin the loader refuses",
	.flags = LB_LOCK_F_EXCLUSIVE,
	.lock_size = 4,
	.lock_align = 4,
	.init = bad_init,
	.lock = bad_lock,
#if !defined(BAD_OPS)
	.unlock = bad_lock,
#endif
);
#endif
