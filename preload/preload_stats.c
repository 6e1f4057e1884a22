/* SPDX-License-Identifier: MIT */
/*
 * preload_stats.c - statistics at exit (LOCKBENCH_STATS).
 *
 * LOCKBENCH_STATS=1 prints a summary and the top LOCKBENCH_STATS_TOP locks
 * by contention on stderr; LOCKBENCH_STATS=PATH writes the same as a
 * lockbench-preload JSON file (lib/lb_schema.h head, atomic replace via
 * lib/lb_outfile.h); "%p" in PATH becomes the process id, so a program that
 * runs others (which inherit LD_PRELOAD) gets one file per process.  A fork
 * child that exits without exec writes nothing: its parent's figures would
 * be counted twice.  Counters are read while other threads may still run:
 * each is a consistent 64-bit value, the set is a snapshot.
 */
#include "preload.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_outfile.h"
#include "lb_schema.h"
#include "preload_schema.h"
#include "preload_stats.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t lbp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void lbp_snap_take(struct lbp_snap *x, struct lbp_lock *l)
{
	memset(x, 0, sizeof(*x));
	x->mutex = atomic_load_explicit(&l->mutex, memory_order_relaxed);
	x->site = atomic_load_explicit(&l->st.site, memory_order_relaxed);
	/*
	 * A mutex inside a loaded object (a static or global one) is its own
	 * class, named by its symbol, as lockstat keys a static lock by its
	 * address: its first locking call site depends on which thread gets
	 * there first (a producer or a consumer), so it would change from run
	 * to run.  Heap mutexes (dladdr finds no object) keep the call site.
	 */
	Dl_info di;
	if (x->mutex && dladdr(x->mutex, &di) && di.dli_fname) {
		x->site = x->mutex;
		x->data = true;
	}
	x->serial = l->serial;
	x->lock = l;
	x->mutexes = 1;
	x->v[S_ACQ] = atomic_load_explicit(&l->st.acquisitions, memory_order_relaxed);
	x->v[S_CONT] = atomic_load_explicit(&l->st.contended, memory_order_relaxed);
	x->v[S_TRYF] = atomic_load_explicit(&l->st.trylock_failed, memory_order_relaxed);
	x->v[S_WAIT] = atomic_load_explicit(&l->st.wait_ns, memory_order_relaxed);
	x->v[S_MAXWAIT] = atomic_load_explicit(&l->st.max_wait_ns, memory_order_relaxed);
	x->v[S_HOLD] = atomic_load_explicit(&l->st.hold_ns, memory_order_relaxed);
	x->v[S_MAXHOLD] = atomic_load_explicit(&l->st.max_hold_ns, memory_order_relaxed);
}

/* Fold y into x (one class: same site). */
static void lbp_snap_add(struct lbp_snap *x, const struct lbp_snap *y)
{
	if (!x->mutexes || y->serial < x->serial) {
		x->mutex = y->mutex;
		x->serial = y->serial;
	}
	if (y->lock)
		x->lock = y->lock;
	x->site = y->site;
	x->data = y->data;
	x->mutexes += y->mutexes;
	x->destroyed += y->destroyed;
	for (unsigned int m = 0; m < LBP_NMETRICS; m++) {
		if (m == S_MAXWAIT || m == S_MAXHOLD)
			x->v[m] = x->v[m] > y->v[m] ? x->v[m] : y->v[m];
		else
			x->v[m] += y->v[m];
	}
}

/* Fold lock l (snapshot y) into class c, histograms included. */
static void lbp_class_add_lock(struct lbp_class *c, const struct lbp_snap *y, struct lbp_lock *l)
{
	lbp_snap_add(&c->s, y);
	lbp_class_lockstat_add_lock(&c->ls, l);
	struct lbp_hist *h = lbp_lock_hist(l);
	for (unsigned int b = 0; b < LBP_HIST_BUCKETS; b++) {
		c->wait_hist[b] += atomic_load_explicit(&h->wait[b], memory_order_relaxed);
		c->hold_hist[b] += atomic_load_explicit(&h->hold[b], memory_order_relaxed);
	}
}

static void lbp_class_add(struct lbp_class *c, const struct lbp_class *y)
{
	lbp_snap_add(&c->s, &y->s);
	lbp_class_lockstat_add(&c->ls, &y->ls);
	for (unsigned int b = 0; b < LBP_HIST_BUCKETS; b++) {
		c->wait_hist[b] += y->wait_hist[b];
		c->hold_hist[b] += y->hold_hist[b];
	}
}

/* An open-addressing table of classes keyed by site; grows at half full. */
struct lbp_class_table {
	struct lbp_class *slot;
	size_t size, used; /* size: a power of two */
};

static size_t lbp_site_hash(const void *site, size_t size)
{
	return (size_t)(((uint64_t)(uintptr_t)site * 0x9e3779b97f4a7c15ull) >> 20) & (size - 1);
}

/* The class of site, created empty if new; NULL when the table is full
 * (fixed tables) or cannot grow. */
static struct lbp_class *lbp_class_of(struct lbp_class_table *t, const void *site, bool grow)
{
	if (grow && (t->used + 1) * 2 > t->size) {
		size_t nsize = t->size ? t->size * 2 : 1024;
		struct lbp_class *ns = calloc(nsize, sizeof(*ns));
		if (!ns)
			return NULL;
		struct lbp_class_table nt = { ns, nsize, 0 };
		for (size_t i = 0; i < t->size; i++)
			if (t->slot[i].s.mutexes)
				lbp_class_add(lbp_class_of(&nt, t->slot[i].s.site, false), &t->slot[i]);
		free(t->slot);
		*t = nt;
	}
	if (!t->size)
		return NULL;
	size_t h = lbp_site_hash(site, t->size);
	for (size_t i = 0; i < t->size; i++) {
		struct lbp_class *c = &t->slot[(h + i) & (t->size - 1)];
		if (c->s.mutexes && c->s.site == site)
			return c;
		if (!c->s.mutexes) {
			t->used++;
			return c;
		}
	}
	return NULL;
}

static int lbp_snap_cmp(const void *a, const void *b);

/*
 * Mutexes destroyed before exit (many programs tear everything down) keep
 * a place in the ranking: the LBP_RETIRED_KEEP most contended ones are
 * remembered, and every one is added to its class (a fixed table; classes
 * beyond it share one "(other classes)" entry), under a tiny spinlock
 * (destroy is rare).
 */
#define LBP_RETIRED_KEEP 256
#define LBP_RETIRED_CLASSES 1024 /* a power of two */
static struct lbp_snap lbp_retired[LBP_RETIRED_KEEP];
static size_t lbp_nretired;
static struct lbp_class lbp_retired_class_slots[LBP_RETIRED_CLASSES];
static struct lbp_class_table lbp_retired_classes = { lbp_retired_class_slots,
						      LBP_RETIRED_CLASSES, 0 };
static struct lbp_class lbp_retired_other; /* site NULL; used when mutexes > 0 */
struct lbp_pool lbp_retired_guard; /* only its guard word is used */

void lbp_stats_retire(struct lbp_lock *l)
{
	struct lbp_snap x;
	lbp_snap_take(&x, l);
	x.lock = NULL;
	x.destroyed = 1;
	if (!x.v[S_ACQ])
		return;
	lbp_pool_lock(&lbp_retired_guard);
	/* Fixed table: at most 3/4 full, then the shared entry. */
	struct lbp_class *c = lbp_retired_classes.used * 4 < LBP_RETIRED_CLASSES * 3
				      ? lbp_class_of(&lbp_retired_classes, x.site, false)
				      : NULL;
	if (!c) {
		c = &lbp_retired_other;
		x.site = NULL;
	}
	lbp_class_add_lock(c, &x, l);
	if (lbp_nretired < LBP_RETIRED_KEEP) {
		lbp_retired[lbp_nretired++] = x;
	} else {
		size_t worst = 0;
		for (size_t i = 1; i < LBP_RETIRED_KEEP; i++)
			if (lbp_snap_cmp(&lbp_retired[i], &lbp_retired[worst]) > 0)
				worst = i;
		if (lbp_snap_cmp(&x, &lbp_retired[worst]) < 0)
			lbp_retired[worst] = x;
	}
	lbp_pool_unlock(&lbp_retired_guard);
}

static uint64_t ld(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static int lbp_snap_cmp(const void *a, const void *b)
{
	const struct lbp_snap *x = a, *y = b;
	if (x->v[S_CONT] != y->v[S_CONT])
		return x->v[S_CONT] < y->v[S_CONT] ? 1 : -1;
	if (x->v[S_WAIT] != y->v[S_WAIT])
		return x->v[S_WAIT] < y->v[S_WAIT] ? 1 : -1;
	if (x->v[S_ACQ] != y->v[S_ACQ])
		return x->v[S_ACQ] < y->v[S_ACQ] ? 1 : -1;
	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The derived metrics of a mutex or class. */
static void lbp_snap_finish(struct lbp_snap *x)
{
	x->v[S_AVGWAIT] = x->v[S_CONT] ? x->v[S_WAIT] / x->v[S_CONT] : 0;
	x->v[S_AVGHOLD] = x->v[S_ACQ] ? x->v[S_HOLD] / x->v[S_ACQ] : 0;
	x->v[S_MUTEXES] = x->mutexes;
}


/* Snapshot every live lock, sorted by contention, and every class (in
 * tot->classes, sorted likewise); caller frees both. */
static struct lbp_snap *lbp_collect(struct lbp_totals *tot)
{
	size_t n = atomic_load_explicit(&lbp_lock_pool.used, memory_order_acquire);
	struct lbp_class_table ct = { NULL, 0, 0 };
	bool ok = true;
	lbp_pool_lock(&lbp_retired_guard);
	struct lbp_snap *s = calloc(n + lbp_nretired + 1, sizeof(*s));
	if (!s) {
		lbp_pool_unlock(&lbp_retired_guard);
		return NULL;
	}
	memcpy(s, lbp_retired, lbp_nretired * sizeof(*s));
	size_t k = lbp_nretired, retired = lbp_nretired;
	for (size_t i = 0; i < LBP_RETIRED_CLASSES && ok; i++) {
		const struct lbp_class *r = &lbp_retired_class_slots[i];
		struct lbp_class *c = r->s.mutexes ? lbp_class_of(&ct, r->s.site, true) : NULL;
		if (c)
			lbp_class_add(c, r);
		ok = c || !r->s.mutexes;
	}
	if (lbp_retired_other.s.mutexes) {
		struct lbp_class *c = lbp_class_of(&ct, NULL, true);
		if (c)
			lbp_class_add(c, &lbp_retired_other);
		ok &= c != NULL;
	}
	lbp_pool_unlock(&lbp_retired_guard);
	tot->acq = ld(&lbp_global.retired_acq);
	tot->cont = ld(&lbp_global.retired_contended);
	tot->wait = ld(&lbp_global.retired_wait_ns);
	tot->hold = ld(&lbp_global.retired_hold_ns);
	for (size_t i = 0; i < n; i++) {
		struct lbp_lock *l = lbp_pool_slot(&lbp_lock_pool, i);
		if (atomic_load_explicit(&l->state, memory_order_acquire) != LBP_SLOT_LIVE)
			continue;
		struct lbp_snap *x = &s[k++];
		lbp_snap_take(x, l);
		if (ok && (x->v[S_ACQ] || x->site)) {
			struct lbp_class *c = lbp_class_of(&ct, x->site, true);
			if (c)
				lbp_class_add_lock(c, x, l);
			ok = c != NULL;
		}
		tot->acq += x->v[S_ACQ];
		tot->cont += x->v[S_CONT];
		tot->wait += x->v[S_WAIT];
		tot->hold += x->v[S_HOLD];
	}
	tot->live = k - retired;
	tot->listed = k;
	for (size_t i = 0; i < k; i++)
		lbp_snap_finish(&s[i]);
	qsort(s, k, sizeof(*s), lbp_snap_cmp);
	/* Pack the classes to the front, then rank them like the mutexes. */
	size_t m = 0;
	for (size_t i = 0; i < ct.size; i++)
		if (ct.slot[i].s.mutexes) {
			ct.slot[m] = ct.slot[i];
			lbp_snap_finish(&ct.slot[m].s);
			m++;
		}
	/* struct lbp_class starts with its snap: lbp_snap_cmp ranks classes. */
	qsort(ct.slot, m, sizeof(*ct.slot), lbp_snap_cmp);
	tot->nclass = ok ? m : 0; /* out of memory: no class table, not a partial one */
	tot->classes = ct.slot;
	return s;
}

/*
 * A class's name: where its first lock call came from, as "symbol+0xoff
 * (object)" or, where the object exports no symbol there (a stripped or
 * non-exported function), "object+0xoff" from the object's load address.
 * Both stay the same from run to run of the same binaries (heap and ASLR
 * addresses do not).  The return address is looked up one byte back, in
 * the call instruction itself (a call may be a function's last one).
 */
void lbp_site_name(const void *site, bool data, char *buf, size_t len,
			  const char **object)
{
	Dl_info di;
	*object = "";
	if (!site) {
		snprintf(buf, len, "(no lock call of its own)");
		return;
	}
	memset(&di, 0, sizeof(di));
	/* A static mutex's class: "&" and its own address, looked up as it is. */
	if (data) {
		*buf = '&';
		buf++;
		len--;
	}
	if (!dladdr((const char *)site - (data ? 0 : 1), &di) || !di.dli_fname) {
		snprintf(buf, len, "%p", site);
		return;
	}
	const char *obj = di.dli_fname;
	if (!*obj)
		obj = program_invocation_name;
	*object = obj;
	const char *base = strrchr(obj, '/');
	base = base ? base + 1 : obj;
	if (di.dli_sname && di.dli_saddr)
		snprintf(buf, len, "%s+0x%lx (%s)", di.dli_sname,
			 (unsigned long)((const char *)site - (const char *)di.dli_saddr), base);
	else
		snprintf(buf, len, "%s+0x%lx", base,
			 (unsigned long)((const char *)site - (const char *)di.dli_fbase));
}

static uint64_t lbp_pass_lock_calls(void)
{
	uint64_t n = ld(&lbp_global.pass_lock_calls);
	size_t used = atomic_load_explicit(&lbp_thread_pool.used, memory_order_acquire);
	for (size_t i = 0; i < used; i++) {
		struct lbp_thread *t = lbp_pool_slot(&lbp_thread_pool, i);
		if (atomic_load_explicit(&t->state, memory_order_acquire) == LBP_SLOT_LIVE)
			n += ld(&t->pass_lock_calls);
	}
	return n;
}

static const struct {
	const char *name;
	size_t offset;
} lbp_pass_reasons[] = {
	{ "recursive", offsetof(struct lbp_global_stats, pass_recursive) },
	{ "errorcheck", offsetof(struct lbp_global_stats, pass_errorcheck) },
	{ "adaptive_or_other_type", offsetof(struct lbp_global_stats, pass_adaptive) },
	{ "robust", offsetof(struct lbp_global_stats, pass_robust) },
	{ "prio_inherit", offsetof(struct lbp_global_stats, pass_pi) },
	{ "prio_protect", offsetof(struct lbp_global_stats, pass_pp) },
	{ "process_shared", offsetof(struct lbp_global_stats, pass_pshared) },
	{ "attr_unreadable", offsetof(struct lbp_global_stats, pass_attr_error) },
};

static uint64_t lbp_reason(size_t i)
{
	return ld((_Atomic uint64_t *)((char *)&lbp_global + lbp_pass_reasons[i].offset));
}

/* What the statistics cost, said wherever they are shown. */
#define LBP_PERTURB_NOTE                                                       \
	"statistics perturb the run: a trylock probe before every lock, two clock " \
	"reads per lock/unlock pair, histogram updates; measure speed without "    \
	"LOCKBENCH_STATS"

/* "<lo>:<count>" for each non-empty log2 bucket (lo in ns, us, ms, s). */
static void lbp_hist_text(FILE *out, const char *what, const uint64_t *h)
{
	fprintf(out, "      %s:", what);
	for (unsigned int b = 0; b < LBP_HIST_BUCKETS; b++) {
		if (!h[b])
			continue;
		uint64_t lo = b ? 1ull << (b - 1) : 0;
		if (lo >= 1000000000ull)
			fprintf(out, " %.1fs:%llu", (double)lo / 1e9, (unsigned long long)h[b]);
		else if (lo >= 1000000ull)
			fprintf(out, " %.1fms:%llu", (double)lo / 1e6, (unsigned long long)h[b]);
		else if (lo >= 1000ull)
			fprintf(out, " %.1fus:%llu", (double)lo / 1e3, (unsigned long long)h[b]);
		else
			fprintf(out, " %lluns:%llu", (unsigned long long)lo, (unsigned long long)h[b]);
	}
	fputc('\n', out);
}

/* How many classes get their histograms printed in the text summary. */
#define LBP_TEXT_HIST_CLASSES 5

static void lbp_write_text(FILE *out, const struct lbp_snap *s, const struct lbp_totals *t)
{
	char name[512];
	const char *obj;
	fprintf(out, "lockbench-preload: pid %d lock %s: %llu mutexes taken over (%llu destroyed), "
		     "%llu cond waits on ours (%llu left to glibc)\n",
		(int)getpid(), lbp_cfg.ops->name, (unsigned long long)ld(&lbp_global.taken_over),
		(unsigned long long)ld(&lbp_global.destroyed),
		(unsigned long long)ld(&lbp_global.cond_waits),
		(unsigned long long)ld(&lbp_global.cond_waits_passed));
	fprintf(out, "lockbench-preload: left to glibc:");
	for (size_t i = 0; i < sizeof(lbp_pass_reasons) / sizeof(lbp_pass_reasons[0]); i++)
		fprintf(out, " %s %llu", lbp_pass_reasons[i].name,
			(unsigned long long)lbp_reason(i));
	fprintf(out, "; lock calls on glibc mutexes %llu\n",
		(unsigned long long)lbp_pass_lock_calls());
	fprintf(out, "lockbench-preload: total acquisitions %llu, contended %llu (%.2f%%), "
		     "wait %.3f ms, hold %.3f ms\n",
		(unsigned long long)t->acq, (unsigned long long)t->cont, pct(t->cont, t->acq),
		(double)t->wait / 1e6, (double)t->hold / 1e6);
	fprintf(out, "lockbench-preload: note: " LBP_PERTURB_NOTE "\n");
	fprintf(out, "lockbench-preload: top %u by contention (* = destroyed before exit)\n",
		lbp_cfg.stats_top);
	fprintf(out, "%4s  %-18s %12s %10s %7s %10s %12s %10s %12s  %s\n", "rank", "mutex",
		"acquisitions", "contended", "cont%", "wait_ms", "max_wait_us", "hold_ms",
		"max_hold_us", "class");
	for (size_t i = 0; i < t->listed && i < lbp_cfg.stats_top; i++) {
		lbp_site_name(s[i].site, s[i].data, name, sizeof(name), &obj);
		fprintf(out, "%4zu  %-18p%c%12llu %10llu %7.2f %10.3f %12.1f %10.3f %12.1f  %s\n",
			i + 1, s[i].mutex, s[i].lock ? ' ' : '*', (unsigned long long)s[i].v[S_ACQ],
			(unsigned long long)s[i].v[S_CONT], pct(s[i].v[S_CONT], s[i].v[S_ACQ]),
			(double)s[i].v[S_WAIT] / 1e6, (double)s[i].v[S_MAXWAIT] / 1e3,
			(double)s[i].v[S_HOLD] / 1e6, (double)s[i].v[S_MAXHOLD] / 1e3, name);
	}
	fprintf(out, "lockbench-preload: top %u classes by contention (class = a static "
		     "mutex itself, &SYMBOL, or the call site of a heap mutex's first lock; "
		     "%zu classes; log2 histograms of contended waits and "
		     "of holds for the first %d)\n",
		lbp_cfg.stats_top, t->nclass, LBP_TEXT_HIST_CLASSES);
	fprintf(out, "%4s  %7s %12s %10s %7s %10s %12s %12s %10s %12s %12s  %s\n", "rank",
		"mutexes", "acquisitions", "contended", "cont%", "wait_ms", "avg_wait_us",
		"max_wait_us", "hold_ms", "avg_hold_us", "max_hold_us", "class");
	for (size_t i = 0; i < t->nclass && i < lbp_cfg.stats_top; i++) {
		const struct lbp_class *c = &t->classes[i];
		const uint64_t *v = c->s.v;
		lbp_site_name(c->s.site, c->s.data, name, sizeof(name), &obj);
		fprintf(out,
			"%4zu  %7llu %12llu %10llu %7.2f %10.3f %12.2f %12.1f %10.3f %12.2f %12.1f  %s\n",
			i + 1, (unsigned long long)c->s.mutexes, (unsigned long long)v[S_ACQ],
			(unsigned long long)v[S_CONT], pct(v[S_CONT], v[S_ACQ]),
			(double)v[S_WAIT] / 1e6, (double)v[S_AVGWAIT] / 1e3,
			(double)v[S_MAXWAIT] / 1e3, (double)v[S_HOLD] / 1e6,
			(double)v[S_AVGHOLD] / 1e3, (double)v[S_MAXHOLD] / 1e3, name);
		fprintf(out, "      owner changes %llu, waits spun %llu slept %llu, bounces "
			     "con %llu acq %llu%s\n",
			(unsigned long long)c->ls.owner_changes,
			(unsigned long long)c->ls.spin_resolved, (unsigned long long)c->ls.slept,
			(unsigned long long)c->ls.con_bounces, (unsigned long long)c->ls.acq_bounces,
			c->ls.rt ? ", taken by SCHED_FIFO/RR threads (R)" : "");
		if (i < LBP_TEXT_HIST_CLASSES) {
			lbp_hist_text(out, "wait", c->wait_hist);
			lbp_hist_text(out, "hold", c->hold_hist);
		}
	}
}

/* A histogram as {"lo_ns": [...], "count": [...]}, non-empty buckets only
 * (bucket rule in preload.h: 0, then [2^(b-1), 2^b) ns, the last open). */
static void lbp_json_hist(struct lb_json *j, const char *key, const uint64_t *h)
{
	lb_json_key(j, key);
	lb_json_object_begin(j);
	lb_json_key(j, "lo_ns");
	lb_json_array_begin(j);
	for (unsigned int b = 0; b < LBP_HIST_BUCKETS; b++)
		if (h[b])
			lb_json_uint(j, b ? 1ull << (b - 1) : 0);
	lb_json_array_end(j);
	lb_json_key(j, "count");
	lb_json_array_begin(j);
	for (unsigned int b = 0; b < LBP_HIST_BUCKETS; b++)
		if (h[b])
			lb_json_uint(j, h[b]);
	lb_json_array_end(j);
	lb_json_object_end(j);
}

static void lbp_json_points(struct lb_json *j, const char *key, const struct lbp_point_snap *p)
{
	char name[512], addr[32];
	const char *obj;
	lb_json_key(j, key);
	lb_json_array_begin(j);
	for (unsigned int i = 0; i < LBP_POINTS && p[i].ip; i++) {
		lbp_site_name(p[i].ip, false, name, sizeof(name), &obj);
		snprintf(addr, sizeof(addr), "%p", p[i].ip);
		lb_json_object_begin(j);
		lb_json_kv_string(j, "site", name);
		lb_json_kv_string(j, "ip", addr);
		lb_json_kv_uint(j, "count", p[i].count);
		lb_json_object_end(j);
	}
	lb_json_array_end(j);
}

/* The kernel lockstat's and mutrace's extra columns of a class. */
static void lbp_json_lockstat(struct lb_json *j, const struct lbp_class_lockstat *ls)
{
	lb_json_key(j, "lockstat");
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "owner_changes", ls->owner_changes);
	lb_json_kv_uint(j, "waits_spin_resolved", ls->spin_resolved);
	lb_json_kv_uint(j, "waits_slept", ls->slept);
	lb_json_kv_uint(j, "con_bounces", ls->con_bounces);
	lb_json_kv_uint(j, "acq_bounces", ls->acq_bounces);
	lb_json_kv_uint(j, "min_wait_ns", ls->min_wait_ns);
	lb_json_kv_uint(j, "min_hold_ns", ls->min_hold_ns);
	lb_json_kv_bool(j, "realtime", ls->rt);
	lbp_json_points(j, "contention_points", ls->contention);
	lbp_json_points(j, "contending_points", ls->contending);
	lb_json_object_end(j);
}

static void lbp_json_one(struct lb_json *j, const char *key, double v)
{
	lb_json_key(j, key);
	lb_json_object_begin(j);
	lb_json_kv_double(j, "mean", v);
	lb_json_kv_double(j, "sd", 0);
	lb_json_kv_double(j, "sd_pct", 0);
	lb_json_kv_double(j, "median", v);
	lb_json_kv_double(j, "min", v);
	lb_json_kv_double(j, "max", v);
	lb_json_kv_uint(j, "n", 1);
	lb_json_object_end(j);
}

static void lbp_read_cmdline(char *buf, size_t len)
{
	buf[0] = '\0';
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0' && i != n - 1)
			buf[i] = ' ';
}

static void lbp_write_json(FILE *out, const struct lbp_snap *s, const struct lbp_totals *t)
{
	struct lb_hostinfo host;
	struct lb_json j;
	char cmd[4096], addr[32];
	lb_hostinfo_get(&host);
	lbp_read_cmdline(cmd, sizeof(cmd));
	lb_schema_begin_file(&j, out, &lb_schema_preload, &host, cmd);
	lb_json_kv_string(&j, "lock", lbp_cfg.ops->name);
	lb_json_kv_int(&j, "pid", getpid());
	lb_json_kv_uint(&j, "top", lbp_cfg.stats_top);
	lb_json_kv_string(&j, "class", "call site of a mutex's first lock call");
	lb_json_kv_string(&j, "note", LBP_PERTURB_NOTE);
	lb_json_object_end(&j);

	lb_json_key(&j, "totals");
	lb_json_object_begin(&j);
	lb_json_kv_uint(&j, "mutexes_taken_over", ld(&lbp_global.taken_over));
	lb_json_kv_uint(&j, "mutexes_destroyed", ld(&lbp_global.destroyed));
	lb_json_kv_uint(&j, "mutexes_live", t->live);
	lb_json_kv_uint(&j, "classes", t->nclass);
	lb_json_kv_uint(&j, "acquisitions", t->acq);
	lb_json_kv_uint(&j, "contended", t->cont);
	lb_json_kv_double(&j, "contended_pct", pct(t->cont, t->acq));
	lb_json_kv_uint(&j, "wait_ns", t->wait);
	lb_json_kv_uint(&j, "hold_ns", t->hold);
	lb_json_kv_uint(&j, "cond_waits", ld(&lbp_global.cond_waits));
	lb_json_kv_uint(&j, "cond_waits_left_to_glibc", ld(&lbp_global.cond_waits_passed));
	lb_json_kv_uint(&j, "cond_overflow_waits", ld(&lbp_global.cond_overflow));
	lb_json_object_end(&j);

	lb_json_key(&j, "left_to_glibc");
	lb_json_object_begin(&j);
	for (size_t i = 0; i < sizeof(lbp_pass_reasons) / sizeof(lbp_pass_reasons[0]); i++)
		lb_json_kv_uint(&j, lbp_pass_reasons[i].name, lbp_reason(i));
	lb_json_kv_uint(&j, "lock_calls", lbp_pass_lock_calls());
	lb_json_object_end(&j);

	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	for (size_t i = 0; i < t->nclass && i < lbp_cfg.stats_top; i++) {
		const struct lbp_class *c = &t->classes[i];
		double v[LBP_NMETRICS];
		char name[512];
		const char *obj;
		for (size_t m = 0; m < LBP_NMETRICS; m++)
			v[m] = (double)c->s.v[m];
		v[S_CONT_PCT] = pct(c->s.v[S_CONT], c->s.v[S_ACQ]);
		lbp_site_name(c->s.site, c->s.data, name, sizeof(name), &obj);
		lb_json_object_begin(&j);
		lb_json_key(&j, "params");
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "class", name);
		lb_json_object_end(&j);
		lb_json_key(&j, "summary");
		lb_json_object_begin(&j);
		for (size_t m = 0; m < LBP_NMETRICS; m++)
			lbp_json_one(&j, lb_schema_preload.metrics[m].key, v[m]);
		lb_json_object_end(&j);
		lb_json_key(&j, "runs");
		lb_json_array_begin(&j);
		lb_json_object_begin(&j);
		lb_json_kv_uint(&j, "repeat_index", 0);
		for (size_t m = 0; m < LBP_NMETRICS; m++)
			lb_json_kv_double(&j, lb_schema_preload.metrics[m].key, v[m]);
		lb_json_object_end(&j);
		lb_json_array_end(&j);
		lb_json_kv_uint(&j, "rank", i + 1);
		lb_json_kv_string(&j, "object", obj);
		snprintf(addr, sizeof(addr), "%p", c->s.site);
		lb_json_kv_string(&j, "site", addr);
		snprintf(addr, sizeof(addr), "%p", c->s.mutex);
		lb_json_kv_string(&j, "first_mutex", addr);
		lb_json_kv_uint(&j, "destroyed", c->s.destroyed);
		lbp_json_hist(&j, "wait_histogram", c->wait_hist);
		lbp_json_hist(&j, "hold_histogram", c->hold_hist);
		lbp_json_lockstat(&j, &c->ls);
		if (lbp_cfg.ops->counters && c->s.lock) {
			/* The counters of the class's live mutexes, summed (a lock
			 * type reports the same names in the same order). */
			struct lb_counter sum[LB_MAX_COUNTERS], one[LB_MAX_COUNTERS];
			size_t nc = 0;
			for (size_t k = 0; k < t->listed; k++) {
				if (!s[k].lock || s[k].site != c->s.site)
					continue;
				size_t n1 = lbp_cfg.ops->counters(lbp_lock_obj(s[k].lock), one,
								  LB_MAX_COUNTERS);
				if (!nc) {
					memcpy(sum, one, n1 * sizeof(one[0]));
					nc = n1;
				} else {
					for (size_t q = 0; q < nc && q < n1; q++)
						sum[q].value += one[q].value;
				}
			}
			lb_json_key(&j, "lock_counters");
			lb_json_object_begin(&j);
			for (size_t q = 0; q < nc; q++)
				lb_json_kv_uint(&j, sum[q].name, sum[q].value);
			lb_json_object_end(&j);
		}
		lb_json_object_end(&j);
	}
	lb_json_array_end(&j);
	lb_json_object_end(&j);
	fputc('\n', out);
}

/* "%p" -> pid; anything else verbatim. */
static void lbp_expand_path(char *buf, size_t len, const char *path)
{
	size_t o = 0;
	for (const char *p = path; *p && o + 1 < len; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			int n = snprintf(buf + o, len - o, "%d", (int)getpid());
			if (n > 0)
				o += (size_t)n < len - o ? (size_t)n : len - o - 1;
			p++;
		} else {
			buf[o++] = *p;
		}
	}
	buf[o] = '\0';
}

void lbp_stats_check_path(void)
{
	if (!lbp_cfg.stats_path)
		return;
	char path[4096];
	struct lb_outfile f;
	lbp_expand_path(path, sizeof(path), lbp_cfg.stats_path);
	lbp_in_core++;
	int err = lb_outfile_open(&f, path);
	if (!err)
		lb_outfile_abort(&f);
	lbp_in_core--;
	if (err)
		lbp_fatal("liblockbench-preload: LOCKBENCH_STATS=%s: cannot write there: %s "
			  "(accepted: 1, 0, or a writable file path)", path, strerror(err));
}

/* LOCKBENCH_LOCKSTAT / LOCKBENCH_CONTENTION: written atomically like the JSON. */
static void lbp_write_extra(const char *raw, const char *var, const struct lbp_totals *t,
			    const char *sep)
{
	char path[4096];
	struct lb_outfile f;
	lbp_expand_path(path, sizeof(path), raw);
	int err = lb_outfile_open(&f, path);
	if (!err) {
		if (var[0] == 'L')
			lbp_write_lock_stat(f.fp, t);
		else
			lbp_write_contention(f.fp, t, sep);
		err = lb_outfile_commit(&f);
	}
	if (err)
		fprintf(stderr, "lockbench-preload: LOCKBENCH_%s=%s: %s\n", var, path,
			strerror(err));
}

void lbp_stats_write(void)
{
	if (getpid() != lbp_cfg.pid)
		return; /* a fork child: its parent reports */
	/* A process that never locked (a shell, `timeout`, `env` in front of
	 * the real program) reports nothing. */
	if (!atomic_load_explicit(&lbp_global.taken_over, memory_order_relaxed) &&
	    !lbp_pass_lock_calls())
		return;
	lbp_in_core++;
	struct lbp_totals t;
	struct lbp_snap *s = lbp_collect(&t);
	if (!s) {
		lbp_in_core--;
		return;
	}
	if (!lbp_cfg.stats_path) {
		FILE *out = lbp_cfg.stats_fd >= 0 ? fdopen(lbp_cfg.stats_fd, "w") : NULL;
		lbp_write_text(out ? out : stderr, s, &t);
		fflush(out ? out : stderr);
	} else {
		char path[4096];
		struct lb_outfile f;
		lbp_expand_path(path, sizeof(path), lbp_cfg.stats_path);
		int err = lb_outfile_open(&f, path);
		if (err) {
			fprintf(stderr, "lockbench-preload: LOCKBENCH_STATS=%s: %s\n", path,
				strerror(err));
		} else {
			lbp_write_json(f.fp, s, &t);
			err = lb_outfile_commit(&f);
			if (err)
				fprintf(stderr, "lockbench-preload: LOCKBENCH_STATS=%s: %s\n", path,
					strerror(err));
		}
	}
	if (lbp_cfg.lockstat_path)
		lbp_write_extra(lbp_cfg.lockstat_path, "LOCKSTAT", &t, NULL);
	if (lbp_cfg.contention_path)
		lbp_write_extra(lbp_cfg.contention_path, "CONTENTION", &t, lbp_cfg.contention_sep);
	free(s);
	free(t.classes);
	lbp_in_core--;
}
