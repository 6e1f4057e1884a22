/* SPDX-License-Identifier: MIT */
/* lb_registry.c - the explicit lock table and its start-up checks. */
#include "lb_registry.h"
#include "lb_atomic.h" /* LB_CACHELINE */
#include "lb_cli.h"
#include "lb_die.h"
#include "lb_plugin.h"
#include "lb_topo.h"
#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LB_DECLARE_OPS(sym) extern const struct lb_lock_ops lb_##sym##_ops;
LB_LOCKS(LB_DECLARE_OPS)

#define LB_OPS_ENTRY(sym) &lb_##sym##_ops,
static const struct lb_lock_ops *const lb_locks[] = { LB_LOCKS(LB_OPS_ENTRY) };

#define LB_COUNT_ONE(sym) +1
_Static_assert(sizeof(lb_locks) / sizeof(lb_locks[0]) == 0 LB_LOCKS(LB_COUNT_ONE),
	       "registry table and LB_LOCKS list disagree");

const struct lb_lock_ops *const *lb_lock_table(void)
{
	return lb_locks;
}

size_t lb_lock_count(void)
{
	return sizeof(lb_locks) / sizeof(lb_locks[0]);
}

const struct lb_lock_ops *lb_lock_find(const char *name)
{
	/* A path names a plugin (locks/include/lockbench/lb_plugin.h): loaded, checked, or exit 2. */
	if (lb_plugin_is_path(name))
		return lb_plugin_load_or_exit(name);
	for (size_t i = 0; i < lb_lock_count(); i++)
		if (strcmp(lb_locks[i]->name, name) == 0)
			return lb_locks[i];
	return NULL;
}

size_t lb_lock_list_parse(const char *arg, const struct lb_lock_ops **ops, size_t cap,
			  lb_lock_finder find, const char *accepted)
{
	char *names = strdup(arg);
	char **items = calloc(cap ? cap : 1, sizeof(*items));
	size_t n, nops = 0;
	if (!names || !items)
		lb_die(errno, "--lock list");
	if (lb_split_names(names, items, cap, &n))
		lb_usage_error("--lock: '%s' is not a comma-separated list of lock names; "
			       "accepted: %s", arg, accepted);
	for (size_t i = 0; i < n; i++) {
		const struct lb_lock_ops *o = find(items[i], accepted);
		for (size_t j = 0; j < nops; j++)
			if (ops[j] == o)
				lb_usage_error("--lock: '%s' is listed twice", items[i]);
		ops[nops++] = o;
	}
	free(items);
	free(names);
	return nops;
}

int lb_lock_check_entry(const struct lb_lock_ops *o, FILE *err)
{
	int bad = 0;
#define LB_REQUIRE(cond, what)                                                 \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(err, "registry: lock '%s': %s\n", o->name, what); \
			bad++;                                                 \
		}                                                              \
	} while (0)
	LB_REQUIRE(o->family && o->summary, "family and summary are required");
	if (o->unsupported)
		return bad; /* stub entry: only the descriptive fields matter */
	bool rw = o->flags & LB_LOCK_F_RW, tr = o->flags & LB_LOCK_F_TRYLOCK;
	LB_REQUIRE(o->init && o->lock && o->unlock, "init, lock and unlock are required");
	LB_REQUIRE(o->lock_size > 0 && o->lock_align > 0 &&
			   (o->lock_align & (o->lock_align - 1)) == 0,
		   "lock_size and a power-of-two lock_align are required");
	LB_REQUIRE(!tr == !o->trylock, "TRYLOCK flag and trylock member disagree");
	LB_REQUIRE(!rw == !o->read_lock && !rw == !o->read_unlock,
		   "RW flag and read_lock/read_unlock disagree");
	LB_REQUIRE(!(rw && tr) == !o->read_trylock,
		   "RW|TRYLOCK flags and read_trylock disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_THREAD_CTX) == !o->thread_ctx_size,
		   "THREAD_CTX flag and thread_ctx_size disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_COUNTERS) == !o->counters,
		   "COUNTERS flag and counters member disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_TIMED) == !o->timedlock,
		   "TIMED flag and timedlock member disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_PSHARED) == !o->init_shared,
		   "PSHARED flag and init_shared member disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_FALLIBLE) == !o->lock_fallible,
		   "FALLIBLE flag and lock_fallible member disagree");
	LB_REQUIRE(!(o->flags & LB_LOCK_F_RCU) || rw, "RCU flag requires a read side");
	LB_REQUIRE(!!(o->flags & LB_LOCK_F_EXCLUSIVE) !=
			   !!(o->flags & (LB_LOCK_F_NOLOCK)),
		   "exactly one of EXCLUSIVE and NOLOCK must be set");
#undef LB_REQUIRE
	return bad;
}

int lb_registry_check(FILE *err)
{
	int bad = 0;
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lb_lock_ops *o = lb_locks[i];
		if (!o->name || !*o->name) {
			fprintf(err, "registry: entry %zu has no name\n", i);
			bad++;
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(lb_locks[j]->name, o->name) == 0) {
				fprintf(err, "registry: duplicate name '%s'\n", o->name);
				bad++;
			}
		bad += lb_lock_check_entry(o, err);
	}
	return bad;
}

/* Comma-separated names of the locks that pass: unsupported ones only with
 * include_unsupported, none with a flag of `without`. */
static void names_matching(char *buf, size_t len, bool include_unsupported, unsigned int without)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < lb_lock_count(); i++) {
		if ((lb_locks[i]->unsupported && !include_unsupported) ||
		    (lb_locks[i]->flags & without))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
				 lb_locks[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

void lb_lock_names(char *buf, size_t len, bool include_unsupported)
{
	names_matching(buf, len, include_unsupported, 0);
}

void lb_lock_names_without(char *buf, size_t len, unsigned int flags)
{
	names_matching(buf, len, false, flags);
}

bool lb_lock_in_default_runs(const struct lb_lock_ops *o)
{
	return !o->unsupported && !(o->flags & LB_LOCK_F_BUSTED);
}

/* Whole cache lines of ordinary memory (node -1): no neighbour shares them. */
void *lb_lock_alloc(const struct lb_lock_ops *ops)
{
	return lb_mem_alloc(ops->lock_size, ops->lock_align, -1);
}

/* Node -1 memory is plain aligned_alloc memory: free() is lb_mem_free for it. */
void lb_lock_free(void *lock)
{
	free(lock);
}

void *lb_thread_ctx_alloc(const struct lb_lock_ops *ops)
{
	return ops->thread_ctx_size ? lb_mem_alloc(ops->thread_ctx_size, LB_CACHELINE, -1) : NULL;
}

void lb_thread_ctx_free(void *tctx)
{
	free(tctx);
}

bool lb_lock_spin_only(const struct lb_lock_ops *o)
{
	return (o->flags & LB_LOCK_F_EXCLUSIVE) &&
	       !(o->flags & (LB_LOCK_F_SLEEPS | LB_LOCK_F_NOLOCK | LB_LOCK_F_BUSTED));
}

const char *lb_lock_flags_str(unsigned int flags, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
		{ LB_LOCK_F_EXCLUSIVE, "excl" },  { LB_LOCK_F_RW, "rw" },
		{ LB_LOCK_F_TRYLOCK, "try" },     { LB_LOCK_F_SLEEPS, "sleeps" },
		{ LB_LOCK_F_PI, "pi" },           { LB_LOCK_F_THREAD_CTX, "ctx" },
		{ LB_LOCK_F_FAIR, "fair" },       { LB_LOCK_F_COUNTERS, "counters" },
		{ LB_LOCK_F_BUSTED, "busted" },   { LB_LOCK_F_NOLOCK, "nolock" },
		{ LB_LOCK_F_RCU, "rcu" },         { LB_LOCK_F_SPIN_ROLE, "spinrole" },
		{ LB_LOCK_F_TIMED, "timed" },     { LB_LOCK_F_NO_TURN, "noturn" },
		{ LB_LOCK_F_PSHARED, "pshared" }, { LB_LOCK_F_FALLIBLE, "fallible" },
	};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	return buf;
}
