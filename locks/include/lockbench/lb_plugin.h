/* SPDX-License-Identifier: MIT */
/*
 * lb_plugin.h - the plugin ABI: a lock built outside the tree as a shared
 * object, used by name wherever a lock name is accepted (lockbench bench
 * --lock, lockbench ab, locktorture --type, LOCKBENCH_LOCK for the preload).
 *
 * A plugin exports exactly two symbols (and may keep everything else hidden):
 *
 *   const unsigned int lb_plugin_abi_version = LB_PLUGIN_ABI_VERSION;
 *   const struct lb_lock_ops lb_plugin_ops = { .name = "my-lock", ... };
 *
 * LB_PLUGIN_EXPORT_OPS(...) below writes both.  The ops table must pass the
 * registry's per-entry checks (lb_lock_check_entry) and its name must not be
 * that of a built-in lock.  The ABI version changes whenever struct
 * lb_lock_ops or the meaning of a flag changes; a plugin built against
 * another version is refused, never called, except version 1 (see below).
 *
 * A lock argument is a plugin path when it contains a '/' or ends in ".so"
 * ("./mylock.so", "/opt/locks/ticket-v2.so"); it is opened with dlopen
 * (RTLD_NOW | RTLD_LOCAL), so two plugins may define the same internal
 * symbols.  Nothing else from the input is ever executed.  See doc/plugin.md.
 */
#ifndef LB_PLUGIN_H
#define LB_PLUGIN_H

#include "lb_lock_ops.h"

/* 2: struct lb_lock_ops gained init_shared (and LB_LOCK_F_PSHARED).
 * 3: it gained lock_fallible (and LB_LOCK_F_FALLIBLE).
 * 4: it gained offcpu.  Older plugins still load: a version-1 table is read
 * up to where init_shared begins, a version-2 one up to lock_fallible, a
 * version-3 one up to offcpu, and the members after are NULL. */
#define LB_PLUGIN_ABI_VERSION 4u
#define LB_PLUGIN_ABI_VERSION_V1 1u
#define LB_PLUGIN_ABI_VERSION_V2 2u
#define LB_PLUGIN_ABI_VERSION_V3 3u
#define LB_PLUGIN_OPS_SIZE_V1 offsetof(struct lb_lock_ops, init_shared)
#define LB_PLUGIN_OPS_SIZE_V2 offsetof(struct lb_lock_ops, lock_fallible)
#define LB_PLUGIN_OPS_SIZE_V3 offsetof(struct lb_lock_ops, offcpu)
#define LB_PLUGIN_SYM_VERSION "lb_plugin_abi_version"
#define LB_PLUGIN_SYM_OPS "lb_plugin_ops"

#if defined(__GNUC__)
#define LB_PLUGIN_VISIBLE __attribute__((visibility("default")))
#else
#define LB_PLUGIN_VISIBLE
#endif

/* In the plugin's one adapter file: LB_PLUGIN_EXPORT_OPS(.name = ..., ...); */
#define LB_PLUGIN_EXPORT_OPS(...)                                                   \
	LB_PLUGIN_VISIBLE extern const unsigned int lb_plugin_abi_version;          \
	LB_PLUGIN_VISIBLE const unsigned int lb_plugin_abi_version = LB_PLUGIN_ABI_VERSION; \
	LB_PLUGIN_VISIBLE extern const struct lb_lock_ops lb_plugin_ops;            \
	LB_PLUGIN_VISIBLE const struct lb_lock_ops lb_plugin_ops = { __VA_ARGS__ }

/* The loader (locks/lb_plugin.c, in lockbench itself; plugins never call it). */
#include <stdbool.h>
#include <stddef.h>

/* Is this lock argument a plugin path (a '/' in it, or a ".so" ending)? */
bool lb_plugin_is_path(const char *name);

/*
 * Open the plugin at `path` (once per path: later calls return the same
 * table) and check it.  The ops table, or NULL with a one-line reason in
 * err: cannot be opened, a symbol missing, a wrong ABI version, an ops table
 * that fails the registry's checks, a name taken by a built-in lock.
 */
const struct lb_lock_ops *lb_plugin_load(const char *path, char *err, size_t errlen);

/* lb_plugin_load, or the reason as "<prog>: plugin PATH: ..." and exit(2). */
const struct lb_lock_ops *lb_plugin_load_or_exit(const char *path);

#endif /* LB_PLUGIN_H */
