/* SPDX-License-Identifier: MIT */
/*
 * lb_plugin.c - load a lock from a shared object (the ABI is lb_plugin.h).
 *
 * Each path is opened once; its table is remembered for the life of the
 * process (plugins are never closed: their code may run until exit, e.g.
 * from the preload's mutexes).  The loader is reached through lb_lock_find()
 * for any name lb_plugin_is_path() accepts.
 */
#include "lb_plugin.h"
#include "lb_cli.h"
#include "lb_registry.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LB_PLUGIN_MAX 64

struct loaded_plugin {
	char *path;
	const struct lb_lock_ops *ops;
	const struct lb_lock_ops *exported; /* the object's own table (ops, or what
					     * an older version's table was copied from) */
};

/* The loader's own table of opened plugins, guarded by plugins_mutex. */
static struct loaded_plugin plugins[LB_PLUGIN_MAX];
static size_t nplugins;
static pthread_mutex_t plugins_mutex = PTHREAD_MUTEX_INITIALIZER;

bool lb_plugin_is_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') || (n > 3 && !strcmp(name + n - 3, ".so"));
}

static const struct lb_lock_ops *fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return NULL;
}

/* The registry's per-entry check, its lines joined into one. */
static int check_ops(const struct lb_lock_ops *ops, char *why, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return snprintf(why, len, "out of memory"), 1;
	int bad = lb_lock_check_entry(ops, f);
	fclose(f);
	for (char *p = buf; p && *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : '\0';
	snprintf(why, len, "%s", buf ? buf : "");
	free(buf);
	return bad;
}

/* How many bytes of struct lb_lock_ops a plugin of this ABI version
 * exports; 0 for a version this lockbench cannot load. */
static size_t ops_size_of_version(unsigned int version)
{
	switch (version) {
	case LB_PLUGIN_ABI_VERSION_V1:
		return LB_PLUGIN_OPS_SIZE_V1;
	case LB_PLUGIN_ABI_VERSION_V2:
		return LB_PLUGIN_OPS_SIZE_V2;
	case LB_PLUGIN_ABI_VERSION_V3:
		return LB_PLUGIN_OPS_SIZE_V3;
	case LB_PLUGIN_ABI_VERSION:
		return sizeof(struct lb_lock_ops);
	default:
		return 0;
	}
}

static const struct lb_lock_ops *load_locked(const char *path, char *err, size_t len)
{
	for (size_t i = 0; i < nplugins; i++)
		if (!strcmp(plugins[i].path, path))
			return plugins[i].ops;
	if (nplugins == LB_PLUGIN_MAX)
		return fail(err, len, "plugin '%s': at most %d plugins per process", path,
			    LB_PLUGIN_MAX);
	/* RTLD_NOW: an unresolved symbol is an error here, not a crash mid-run.
	 * RTLD_LOCAL: two plugins (HEAD and patched) may share internal names. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		/* dlopen searches the library path for a name without a '/', never
		 * the current directory: name the fix when the file is right here. */
		if (!strchr(path, '/') && access(path, F_OK) == 0)
			return fail(err, len, "plugin '%s': a name without '/' is looked up in the "
				    "library path, not here; accepted: ./%s or another path", path, path);
		return fail(err, len, "plugin '%s': cannot be loaded: %s", path, dlerror());
	}
	const unsigned int *version = dlsym(h, LB_PLUGIN_SYM_VERSION);
	const struct lb_lock_ops *ops = dlsym(h, LB_PLUGIN_SYM_OPS);
	char why[512];
	if (!version || !ops) {
		dlclose(h);
		return fail(err, len, "plugin '%s': symbol '%s' missing; a plugin exports '%s' "
			    "and '%s' (LB_PLUGIN_EXPORT_OPS in lb_plugin.h)", path,
			    !version ? LB_PLUGIN_SYM_VERSION : LB_PLUGIN_SYM_OPS,
			    LB_PLUGIN_SYM_VERSION, LB_PLUGIN_SYM_OPS);
	}
	size_t table_size = ops_size_of_version(*version);
	if (!table_size) {
		unsigned int v = *version;
		dlclose(h);
		return fail(err, len, "plugin '%s': ABI version %u; accepted: %u..%u (rebuild it "
			    "against this lockbench's lb_plugin.h)", path, v, LB_PLUGIN_ABI_VERSION_V1,
			    LB_PLUGIN_ABI_VERSION);
	}
	/* What the checks read: an older table ends before the members its
	 * version lacks, so only its prefix is read and the rest is NULL (a
	 * version-1 lock "cannot be shared by processes", a version-1 or -2
	 * lock never fails to lock). */
	bool older = table_size < sizeof(struct lb_lock_ops);
	struct lb_lock_ops view = { 0 };
	memcpy(&view, ops, table_size);
	/* The same file under another spelling of its path: the same table. */
	for (size_t i = 0; i < nplugins; i++)
		if (plugins[i].exported == ops)
			return plugins[i].ops;
	const struct lb_lock_ops *exported = ops;
	ops = &view;
	if (!ops->name || !*ops->name) {
		dlclose(h);
		return fail(err, len, "plugin '%s': the ops table has no name", path);
	}
	/* Each message is written before dlclose: ops->name lives in the object. */
	if (lb_plugin_is_path(ops->name)) {
		fail(err, len, "plugin '%s': lock name '%s' looks like a path; accepted: a name "
		     "without '/' that does not end in .so", path, ops->name);
		dlclose(h);
		return NULL;
	}
	if (check_ops(ops, why, sizeof(why))) {
		dlclose(h);
		return fail(err, len, "plugin '%s': fails the registry's checks: %s", path, why);
	}
	/* Not a path (checked above): lb_lock_find looks at the built-ins only. */
	const char *taken = lb_lock_find(ops->name) ? "a built-in lock" : NULL;
	for (size_t i = 0; i < nplugins && !taken; i++)
		if (!strcmp(plugins[i].ops->name, ops->name))
			taken = plugins[i].path;
	if (taken) {
		fail(err, len, "plugin '%s': lock name '%s' is taken by %s; give each plugin its "
		     "own name (scripts/build-plugin --name)", path, ops->name, taken);
		dlclose(h);
		return NULL;
	}
	if (older) {
		struct lb_lock_ops *grown = malloc(sizeof(*grown));
		if (!grown) {
			dlclose(h);
			return fail(err, len, "plugin '%s': out of memory", path);
		}
		*grown = view; /* kept for the life of the process, as the handle */
		ops = grown;
	} else {
		ops = exported;
	}
	char *copy = strdup(path);
	if (!copy)
		return fail(err, len, "plugin '%s': out of memory", path);
	plugins[nplugins++] = (struct loaded_plugin){ copy, ops, exported };
	return ops; /* the handle stays open for the life of the process */
}

const struct lb_lock_ops *lb_plugin_load(const char *path, char *err, size_t errlen)
{
	pthread_mutex_lock(&plugins_mutex);
	const struct lb_lock_ops *ops = load_locked(path, err, errlen);
	pthread_mutex_unlock(&plugins_mutex);
	return ops;
}

const struct lb_lock_ops *lb_plugin_load_or_exit(const char *path)
{
	char err[1024];
	const struct lb_lock_ops *ops = lb_plugin_load(path, err, sizeof(err));
	if (!ops)
		lb_usage_error("%s", err);
	return ops;
}
