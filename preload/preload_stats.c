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

struct lbp_snap {
	const void *mutex;
	uint32_t serial;
	struct lbp_lock *lock;  /* NULL: destroyed before exit */
	uint64_t v[LBP_NMETRICS];
};
/* Indexes into lb_schema_preload.metrics (preload_schema.c). */
enum { S_ACQ, S_CONT, S_CONT_PCT, S_TRYF, S_WAIT, S_MAXWAIT, S_HOLD, S_MAXHOLD };

static void lbp_snap_take(struct lbp_snap *x, struct lbp_lock *l)
{
	x->mutex = atomic_load_explicit(&l->mutex, memory_order_relaxed);
	x->serial = l->serial;
	x->v[S_ACQ] = atomic_load_explicit(&l->st.acquisitions, memory_order_relaxed);
	x->v[S_CONT] = atomic_load_explicit(&l->st.contended, memory_order_relaxed);
	x->v[S_TRYF] = atomic_load_explicit(&l->st.trylock_failed, memory_order_relaxed);
	x->v[S_WAIT] = atomic_load_explicit(&l->st.wait_ns, memory_order_relaxed);
	x->v[S_MAXWAIT] = atomic_load_explicit(&l->st.max_wait_ns, memory_order_relaxed);
	x->v[S_HOLD] = atomic_load_explicit(&l->st.hold_ns, memory_order_relaxed);
	x->v[S_MAXHOLD] = atomic_load_explicit(&l->st.max_hold_ns, memory_order_relaxed);
}

static int lbp_snap_cmp(const void *a, const void *b);

/*
 * Mutexes destroyed before exit (many programs tear everything down) keep
 * a place in the ranking: the LBP_RETIRED_KEEP most contended ones are
 * remembered, under a tiny spinlock (destroy is rare).
 */
#define LBP_RETIRED_KEEP 256
static struct lbp_snap lbp_retired[LBP_RETIRED_KEEP];
static size_t lbp_nretired;
struct lbp_pool lbp_retired_guard; /* only its guard word is used */

void lbp_stats_retire(struct lbp_lock *l)
{
	struct lbp_snap x;
	lbp_snap_take(&x, l);
	x.lock = NULL;
	if (!x.v[S_ACQ])
		return;
	lbp_pool_lock(&lbp_retired_guard);
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

struct lbp_totals {
	uint64_t acq, cont, wait, hold;
	size_t live;    /* mutexes not destroyed */
	size_t listed;  /* live + remembered destroyed ones */
};

/* Snapshot every live lock, sorted by contention; caller frees. */
static struct lbp_snap *lbp_collect(struct lbp_totals *tot)
{
	size_t n = atomic_load_explicit(&lbp_lock_pool.used, memory_order_acquire);
	lbp_pool_lock(&lbp_retired_guard);
	struct lbp_snap *s = calloc(n + lbp_nretired + 1, sizeof(*s));
	if (!s) {
		lbp_pool_unlock(&lbp_retired_guard);
		return NULL;
	}
	memcpy(s, lbp_retired, lbp_nretired * sizeof(*s));
	size_t k = lbp_nretired, retired = lbp_nretired;
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
		x->lock = l;
		tot->acq += x->v[S_ACQ];
		tot->cont += x->v[S_CONT];
		tot->wait += x->v[S_WAIT];
		tot->hold += x->v[S_HOLD];
	}
	tot->live = k - retired;
	tot->listed = k;
	qsort(s, k, sizeof(*s), lbp_snap_cmp);
	return s;
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

static void lbp_write_text(FILE *out, const struct lbp_snap *s, const struct lbp_totals *t)
{
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
	fprintf(out, "lockbench-preload: top %u by contention (* = destroyed before exit)\n",
		lbp_cfg.stats_top);
	fprintf(out, "%4s  %-18s %12s %10s %7s %10s %12s %10s %12s\n", "rank", "mutex",
		"acquisitions", "contended", "cont%", "wait_ms", "max_wait_us", "hold_ms",
		"max_hold_us");
	for (size_t i = 0; i < t->listed && i < lbp_cfg.stats_top; i++)
		fprintf(out, "%4zu  %-18p%c%12llu %10llu %7.2f %10.3f %12.1f %10.3f %12.1f\n",
			i + 1, s[i].mutex, s[i].lock ? ' ' : '*', (unsigned long long)s[i].v[S_ACQ],
			(unsigned long long)s[i].v[S_CONT], pct(s[i].v[S_CONT], s[i].v[S_ACQ]),
			(double)s[i].v[S_WAIT] / 1e6, (double)s[i].v[S_MAXWAIT] / 1e3,
			(double)s[i].v[S_HOLD] / 1e6, (double)s[i].v[S_MAXHOLD] / 1e3);
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
	lb_json_init(&j, out);
	lb_json_object_begin(&j);
	lb_schema_write_head(&j, &lb_schema_preload, &host);
	lb_json_key(&j, "config");
	lb_json_object_begin(&j);
	lb_json_kv_string(&j, "command", cmd);
	lb_json_kv_string(&j, "lock", lbp_cfg.ops->name);
	lb_json_kv_int(&j, "pid", getpid());
	lb_json_kv_uint(&j, "top", lbp_cfg.stats_top);
	lb_json_object_end(&j);

	lb_json_key(&j, "totals");
	lb_json_object_begin(&j);
	lb_json_kv_uint(&j, "mutexes_taken_over", ld(&lbp_global.taken_over));
	lb_json_kv_uint(&j, "mutexes_destroyed", ld(&lbp_global.destroyed));
	lb_json_kv_uint(&j, "mutexes_live", t->live);
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
	for (size_t i = 0; i < t->listed && i < lbp_cfg.stats_top; i++) {
		const struct lbp_snap *x = &s[i];
		double v[LBP_NMETRICS];
		for (size_t m = 0; m < sizeof(v) / sizeof(v[0]); m++)
			v[m] = (double)x->v[m];
		v[S_CONT_PCT] = pct(x->v[S_CONT], x->v[S_ACQ]);
		lb_json_object_begin(&j);
		lb_json_key(&j, "params");
		lb_json_object_begin(&j);
		lb_json_kv_string(&j, "lock", lbp_cfg.ops->name);
		snprintf(addr, sizeof(addr), "%p", x->mutex);
		lb_json_kv_string(&j, "mutex", addr);
		lb_json_kv_uint(&j, "rank", i + 1);
		lb_json_object_end(&j);
		lb_json_key(&j, "summary");
		lb_json_object_begin(&j);
		for (size_t m = 0; m < sizeof(v) / sizeof(v[0]); m++)
			lbp_json_one(&j, lb_schema_preload.metrics[m].key, v[m]);
		lb_json_object_end(&j);
		lb_json_kv_bool(&j, "destroyed", !x->lock);
		lb_json_key(&j, "runs");
		lb_json_array_begin(&j);
		lb_json_object_begin(&j);
		lb_json_kv_uint(&j, "repeat_index", 0);
		for (size_t m = 0; m < sizeof(v) / sizeof(v[0]); m++)
			lb_json_kv_double(&j, lb_schema_preload.metrics[m].key, v[m]);
		lb_json_object_end(&j);
		lb_json_array_end(&j);
		if (lbp_cfg.ops->counters && x->lock) {
			struct lb_counter c[LB_MAX_COUNTERS];
			size_t nc = lbp_cfg.ops->counters(lbp_lock_obj(x->lock), c, LB_MAX_COUNTERS);
			lb_json_key(&j, "lock_counters");
			lb_json_object_begin(&j);
			for (size_t k = 0; k < nc; k++)
				lb_json_kv_uint(&j, c[k].name, c[k].value);
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
	free(s);
	lbp_in_core--;
}
