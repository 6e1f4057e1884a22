/* SPDX-License-Identifier: MIT */
/*
 * preload_delay.c - LOCKBENCH_DELAY=CLASS:NS[;CLASS:NS...]: make the named
 * classes' critical sections NS longer, to see how much a program's run
 * time depends on one lock before rewriting it (the question perf lock
 * contention -J answers by delaying a kernel lock's owner, and COZ, SOSP'15,
 * by virtual speed-ups).
 *
 * CLASS is a class as LOCKBENCH_STATS names it: `SYMBOL+0xOFF (OBJECT)` or
 * `OBJECT+0xOFF` for a call site, the same with a leading `&` for a static
 * mutex.  The names are resolved to addresses once, in our constructor,
 * among the objects loaded then (dlopen'ed later ones cannot be named): an
 * object or symbol that is not there, bad syntax or NS outside 1..1e8 is
 * a one-line error and exit 2.  At run time a mutex's first owner compares
 * its class (the first lock call's site, or the mutex's own address) with
 * them, once; every later acquisition of a delayed mutex spins NS on the
 * CPU after acquiring, inside the critical section (so hold times, and
 * contention, grow as for a slower critical section).  At exit a named
 * class that took no lock is reported on stderr.
 */
#include "preload.h"
#include "lb_atomic.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LBP_DELAY_MAX 8
#define LBP_DELAY_NS_MAX 100000000ull /* 100 ms */

struct lbp_delay {
	char name[256];
	const void *addr;    /* the class key: a call site, or a static mutex */
	bool data;           /* &: addr is a mutex, not a call site */
	uint64_t ns;
	_Atomic uint64_t applied; /* delayed acquisitions */
};
static struct lbp_delay lbp_delays[LBP_DELAY_MAX];

_Noreturn static void lbp_delay_refuse(const char *env, const char *why)
{
	lbp_fatal("liblockbench-preload: LOCKBENCH_DELAY='%s': %s; accepted: CLASS:NS[;CLASS:NS] "
		  "(up to %d), CLASS as LOCKBENCH_STATS names it (SYMBOL+0xOFF (OBJECT), "
		  "OBJECT+0xOFF, & before either for a static mutex) in an object loaded at "
		  "start-up, NS 1..%llu",
		  env, why, LBP_DELAY_MAX, LBP_DELAY_NS_MAX);
}

struct lbp_obj_query {
	const char *base; /* basename wanted */
	const char *path; /* found: its path ("" for the program) */
	const void *inside; /* found: an address inside it */
};

static const char *lbp_basename(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int lbp_obj_match(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lbp_obj_query *q = arg;
	const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name
							       : program_invocation_name;
	if (strcmp(lbp_basename(name), q->base) != 0)
		return 0;
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			q->inside = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			q->path = info->dlpi_name ? info->dlpi_name : "";
			return 1;
		}
	}
	return 0;
}

/* "SYM+0xOFF (OBJ)" or "OBJ+0xOFF" (after any '&') to an address, or NULL
 * with *why set. */
static const void *lbp_delay_resolve(char *cls, const char **why)
{
	char *paren = strstr(cls, " (");
	char *plus = strrchr(paren ? (*paren = '\0', cls) : cls, '+');
	if (!plus || strncmp(plus, "+0x", 3) != 0 || !plus[3]) {
		*why = "a class must end in +0xOFFSET";
		return NULL;
	}
	char *end;
	errno = 0;
	unsigned long long off = strtoull(plus + 3, &end, 16);
	if (*end || errno) {
		*why = "the offset is not hexadecimal";
		return NULL;
	}
	*plus = '\0';
	struct lbp_obj_query q = { NULL, NULL, NULL };
	if (paren) {
		size_t n = strlen(paren + 2);
		if (!n || paren[2 + n - 1] != ')') {
			*why = "a symbol's object must be in parentheses";
			return NULL;
		}
		paren[2 + n - 1] = '\0';
		q.base = paren + 2;
	} else {
		q.base = cls;
	}
	if (!dl_iterate_phdr(lbp_obj_match, &q)) {
		*why = "no object of that name is loaded";
		return NULL;
	}
	Dl_info di;
	if (!dladdr(q.inside, &di) || !di.dli_fbase) {
		*why = "the object has no load address";
		return NULL;
	}
	if (!paren)
		return (const char *)di.dli_fbase + off;
	void *h = dlopen(*q.path ? q.path : NULL, RTLD_LAZY | RTLD_NOLOAD);
	void *sym = h ? dlsym(h, cls) : NULL;
	if (h)
		dlclose(h);
	if (!sym) {
		*why = "no such symbol in that object";
		return NULL;
	}
	return (const char *)sym + off;
}

static void lbp_delay_one(const char *env, char *item)
{
	char *colon = strrchr(item, ':');
	if (!colon)
		lbp_delay_refuse(env, "no :NS");
	*colon = '\0';
	const char *ns_s = colon + 1;
	char *end;
	errno = 0;
	unsigned long long ns = strtoull(ns_s, &end, 10);
	if (*ns_s < '0' || *ns_s > '9' || *end || errno || ns < 1 || ns > LBP_DELAY_NS_MAX)
		lbp_delay_refuse(env, "NS out of bounds");
	if (lbp_cfg.ndelay == LBP_DELAY_MAX)
		lbp_delay_refuse(env, "too many classes");
	struct lbp_delay *d = &lbp_delays[lbp_cfg.ndelay];
	snprintf(d->name, sizeof(d->name), "%s", item);
	d->data = item[0] == '&';
	const char *why = NULL;
	d->addr = lbp_delay_resolve(item + d->data, &why);
	if (!d->addr) {
		char msg[512];
		snprintf(msg, sizeof(msg), "class '%s': %s", d->name, why);
		lbp_delay_refuse(env, msg);
	}
	d->ns = ns;
	lbp_cfg.ndelay++;
}

void lbp_delay_parse(void)
{
	const char *env = getenv("LOCKBENCH_DELAY");
	if (!env || !*env)
		return;
	char buf[2048];
	if (strlen(env) >= sizeof(buf))
		lbp_delay_refuse(env, "too long");
	strcpy(buf, env);
	char *save = NULL;
	for (char *it = strtok_r(buf, ";", &save); it; it = strtok_r(NULL, ";", &save))
		lbp_delay_one(env, it);
	if (!lbp_cfg.ndelay)
		lbp_delay_refuse(env, "no class");
}

static uint32_t lbp_delay_decide(struct lbp_lock *l, const void *site)
{
	const void *cls_site = atomic_load_explicit(&l->st.site, memory_order_relaxed);
	if (!cls_site && site) { /* without statistics nobody recorded it yet */
		atomic_store_explicit(&l->st.site, site, memory_order_relaxed);
		cls_site = site;
	}
	if (!cls_site)
		return 0; /* a cond re-lock before any lock call: decide later */
	const void *mutex = atomic_load_explicit(&l->mutex, memory_order_relaxed);
	uint32_t state = 1;
	for (unsigned int i = 0; i < lbp_cfg.ndelay; i++)
		if (lbp_delays[i].addr == (lbp_delays[i].data ? mutex : cls_site)) {
			state = 2 + i;
			break;
		}
	atomic_store_explicit(&l->delay_state, state, memory_order_relaxed);
	return state;
}

void lbp_delay_apply(struct lbp_lock *l, const void *site)
{
	/* We own l: delay_state is only written by owners. */
	uint32_t state = atomic_load_explicit(&l->delay_state, memory_order_relaxed);
	if (!state)
		state = lbp_delay_decide(l, site);
	if (state < 2)
		return;
	struct lbp_delay *d = &lbp_delays[state - 2];
	atomic_fetch_add_explicit(&d->applied, 1, memory_order_relaxed);
	uint64_t until = lbp_now_ns() + d->ns;
	/* Spin on the clock on purpose: the delay stands for a longer critical
	 * section, which runs on the CPU (no barrier needed: nothing is shared). */
	while (lbp_now_ns() < until)
		lb_cpu_relax();
}

void lbp_delay_report(void)
{
	for (unsigned int i = 0; i < lbp_cfg.ndelay; i++) {
		uint64_t n = atomic_load_explicit(&lbp_delays[i].applied, memory_order_relaxed);
		dprintf(2, "liblockbench-preload: LOCKBENCH_DELAY: class '%s': %llu acquisitions "
			   "delayed by %llu ns%s\n",
			lbp_delays[i].name, (unsigned long long)n,
			(unsigned long long)lbp_delays[i].ns,
			n ? "" : " (the class took no lock: nothing was delayed)");
	}
}
