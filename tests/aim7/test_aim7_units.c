/* SPDX-License-Identifier: MIT */
/*
 * test_aim7_units.c - the parts of `lockbench aim7` that need no threads:
 * the workfile parser (every shipped file, every error), re-aim's job
 * assignment and shuffle, the figure formulas on fixed child times, and the
 * simulated kernel's invariant check on a kernel corrupted by hand.
 */
#include "../../bench/aim7/kern.h"
#include "../../bench/aim7/kern_internal.h"
#include "../../bench/aim7/task.h"
#include "../tap.h"
#include "lb_paired.h"
#include "lb_registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) + 1);
}

static void shipped(const char *name, size_t lines, unsigned long total)
{
	struct aim_workfile wf;
	char err[4600] = "";
	int rc = aim_workfile_load(name, &wf, err, sizeof(err));
	tap_ok(rc == 0 && wf.total_hits == total,
	       "workfile %s loads: %zu distinct tests, total hits %lu (want %lu) %s", name,
	       wf.ntests, wf.total_hits, total, err);
	(void)lines;
}

static void parse_error(const char *text, const char *want)
{
	struct aim_workfile wf;
	char err[512] = "";
	int rc = aim_workfile_parse(text, &wf, err, sizeof(err));
	tap_ok(rc == -1 && strstr(err, want) != NULL, "bad workfile rejected: '%s' (want '%s')", err,
	       want);
}

static void test_workfiles(void)
{
	shipped("high_systime", 18, 260);
	shipped("shared", 53, 780);
	shipped("compute", 26, 820);
	shipped("fserver", 31, 595);
	shipped("new_fserver", 28, 580);
	shipped("alltests", 63, 1000);
	shipped("five_sec", 11, 220);
	shipped("workfile.high_systime", 18, 260);

	struct aim_workfile wf;
	char err[4600];
	aim_workfile_load("high_systime", &wf, err, sizeof(err));
	int cc = aim_test_index("creat_clo"), pc = aim_test_index("pipe_cpy");
	bool weights = wf.ntests == 18;
	for (size_t i = 0; i < wf.ntests; i++) {
		if (wf.test[i] == cc)
			weights &= wf.hits[i] == 20;
		if (wf.test[i] == pc)
			weights &= wf.hits[i] == 30;
	}
	tap_ok(weights, "high_systime: creat_clo 20, pipe_cpy 30, 18 tests");

	/* alltests names string_rtns twice: 20 then 30; the last weight wins
	 * and both count in the total (re-aim's check_name). */
	aim_workfile_load("alltests", &wf, err, sizeof(err));
	unsigned long eff = 0;
	for (size_t i = 0; i < wf.ntests; i++)
		eff += wf.hits[i];
	tap_ok(wf.ntests == 62 && wf.total_hits == 1000 && eff == 980,
	       "alltests: 62 distinct tests, total 1000, effective weights 980 (got %zu, %lu, %lu)",
	       wf.ntests, wf.total_hits, eff);

	tap_ok(aim_workfile_parse("# c\n\n 10 sieve\nFILESIZE: 10K\nPOOLSIZE: 2M\n5 add_int # x\n", &wf,
				  err, sizeof(err)) == 0 &&
		       wf.ntests == 2 && wf.total_hits == 15 && wf.filesize_kb == 10 &&
		       wf.poolsize_kb == 2048,
	       "comments, blank lines, FILESIZE/POOLSIZE and trailing comments accepted");
	parse_error("10 sieve\n3 nosuch_test\n", "2: unknown test 'nosuch_test'");
	parse_error("sieve 10\n", "1: expected '<hits> <test name>'");
	parse_error("10\n", "1: expected '<hits> <test name>'");
	parse_error("-5 sieve\n", "1: expected");
	parse_error("10 sieve extra\n", "1: unexpected 'extra'");
	parse_error("FILESIZE: lots\n10 sieve\n", "1: bad size");
	parse_error("# nothing\n", "no test with a non-zero weight; accepted");
	parse_error("0 sieve\n", "no test with a non-zero weight; accepted");
	parse_error("99999999999 sieve\n", "1: expected");
	tap_ok(aim_workfile_load("no_such_workfile", &wf, err, sizeof(err)) == -1 &&
		       strstr(err, "unknown workfile 'no_such_workfile'") && strstr(err, "high_systime"),
	       "unknown workfile name lists the shipped ones: %s", err);
	tap_ok(aim_workfile_load("/nonexistent/dir/wf", &wf, err, sizeof(err)) == -1 &&
		       strstr(err, "/nonexistent/dir/wf"),
	       "unreadable path named: %s", err);

	/* Every test a shipped workfile names exists (else load fails above);
	 * every registered test has a function and a description. */
	bool table = aim_ntests() >= 60;
	for (size_t i = 0; i < aim_ntests(); i++)
		table &= aim_test_at(i)->fn && aim_test_at(i)->what && aim_test_at(i)->name &&
			 aim_test_index(aim_test_at(i)->name) == (int)i;
	tap_ok(table, "%zu tests registered, names unique, each with a function", aim_ntests());
}

static void test_jobs(void)
{
	struct aim_workfile wf;
	char err[4600];
	unsigned int counts[AIM_MAX_WORKFILE_TESTS];
	aim_workfile_load("high_systime", &wf, err, sizeof(err));

	/* jobs == total hits: each test runs exactly its hits. */
	unsigned int sum = aim_assign_jobs(&wf, 260, counts);
	bool exact = sum == 260;
	for (size_t i = 0; i < wf.ntests; i++)
		exact &= counts[i] == wf.hits[i];
	tap_ok(exact, "260 jobs over high_systime: each test its hits (sum %u)", sum);

	/* 26 jobs: 20/260*26 = 2, 30/260*26 = 3, 10/260*26 = 1. */
	sum = aim_assign_jobs(&wf, 26, counts);
	bool tenth = true;
	for (size_t i = 0; i < wf.ntests; i++)
		tenth &= counts[i] == wf.hits[i] / 10;
	tap_ok(tenth && sum == 26, "26 jobs: hits/10 each (sum %u)", sum);

	/* 1 job: every test still runs once (re-aim's minimum of 1). */
	sum = aim_assign_jobs(&wf, 1, counts);
	tap_ok(sum == wf.ntests, "1 job: each test at least once (sum %u of %zu)", sum, wf.ntests);

	/* 13 jobs: 20/260*13 = 1.0, 30/260*13 = 1.5 -> 2 (round half away), 10 -> 0.5 -> 1. */
	aim_assign_jobs(&wf, 13, counts);
	bool rounding = true;
	for (size_t i = 0; i < wf.ntests; i++)
		rounding &= counts[i] == (wf.hits[i] == 30 ? 2u : 1u);
	tap_ok(rounding, "13 jobs: round(hits/total*jobs) with halves rounded up");

	/* The shuffle is a permutation of the assignment, seed-dependent. */
	sum = aim_assign_jobs(&wf, 260, counts);
	uint16_t a[260], b[260];
	aim_shuffle_jobs(&wf, counts, 1, a, sum);
	aim_shuffle_jobs(&wf, counts, 2, b, sum);
	unsigned int seen[AIM_MAX_WORKFILE_TESTS] = { 0 };
	for (unsigned int i = 0; i < sum; i++)
		seen[a[i]]++;
	bool perm = true;
	for (size_t i = 0; i < wf.ntests; i++)
		perm &= seen[i] == counts[i];
	tap_ok(perm && memcmp(a, b, sizeof(a)) != 0,
	       "shuffled order holds every job once; two seeds give two orders");
}

static void test_figures(void)
{
	struct aim_figures f;
	const double t4[] = { 2.0, 2.0, 2.0, 2.0 };
	aim_figures_compute(4, 100, 2.0, t4, 1.5, 0.5, &f);
	tap_ok(close_to(f.jobs_per_min, 100.0 / 2.0 * 60 * 4) && close_to(f.jobs_per_min_child, 3000) &&
		       close_to(f.jobs_per_sec_child, 50) && close_to(f.jti, 100) &&
		       close_to(f.std_dev, 0) && close_to(f.max_child_s, 2) && close_to(f.min_child_s, 2),
	       "equal children: JPM %.2f (want 12000), JPM/child %.2f, JPS/child %.2f, JTI %.1f",
	       f.jobs_per_min, f.jobs_per_min_child, f.jobs_per_sec_child, f.jti);

	/* Times 1 and 3: mean 2, population sd 1, CoV 0.5 -> JTI 50. */
	const double t2[] = { 1.0, 3.0 };
	aim_figures_compute(2, 10, 3.0, t2, 0, 0, &f);
	tap_ok(close_to(f.std_dev, 1.0) && close_to(f.jti, 50.0) && close_to(f.jobs_per_min, 400.0) &&
		       close_to(f.max_child_s, 3) && close_to(f.min_child_s, 1),
	       "times 1,3: std_dev %.3f (want 1), JTI %.1f (want 50), JPM %.1f (want 400)", f.std_dev,
	       f.jti, f.jobs_per_min);

	/* CoV above 1 clamps JTI at 0 (re-aim's cast bug would go negative). */
	const double t3[] = { 0.01, 0.01, 0.01, 10.0 };
	aim_figures_compute(4, 1, 10.0, t3, 0, 0, &f);
	tap_ok(f.jti == 0.0, "CoV > 1: JTI clamped to 0 (got %.2f, CoV %.0f%%)", f.jti, f.cov_pct);

	const double t1[] = { 5.0 };
	aim_figures_compute(1, 7, 5.0, t1, 0, 0, &f);
	tap_ok(close_to(f.jti, 100) && close_to(f.jobs_per_min, 7.0 / 5.0 * 60),
	       "one child: JTI 100, JPM %.2f (want 84)", f.jobs_per_min);
}

/* The fixed window's accounting on the seed's numbers: 100 children cut
 * by a 2000.04-s alarm, child CPU 21,564.90 + 2,721.29 s: 12.14 CPUs. */
static void test_window_figures(void)
{
	struct aim_point *p = calloc(1, sizeof(*p));
	if (!p) {
		tap_ok(false, "out of memory");
		return;
	}
	double child_s[100];
	for (int i = 0; i < 100; i++)
		child_s[i] = 2000.04;
	aim_figures_compute(100, 104, 2000.04, child_s, 2721.29, 21564.90, &p->fig);
	p->users = 100;
	p->window_s = 2000.04;
	p->child_cpu_s = 2721.29 + 21564.90;
	p->jobs_done = 5000;
	tap_ok(fabs(aim_cpus_busy(p) - 24286.19 / 2000.04) < 1e-9 &&
		       fabs(aim_progress_per_s(p) - 5000 / 2000.04) < 1e-9,
	       "window: CPUs busy %.2f (child CPU 24286.19 / parent 2000.04), progress %.3f jobs/s (completed, not "
	       "nominal)", aim_cpus_busy(p), aim_progress_per_s(p));
	p->window_s = 0;
	tap_ok(aim_cpus_busy(p) == 0 && aim_progress_per_s(p) == 0,
	       "not a window run: no CPUs-busy or progress figure");
	free(p);
}

/* Collapse runs of blanks and drop the trailing ones (the seed thread's
 * mail quoting lost re-aim's column padding). */
static void squeeze(const char *in, char *out, size_t len)
{
	size_t o = 0;
	bool blank = false;
	for (; *in && o + 1 < len; in++) {
		if (*in == ' ' || *in == '\n') {
			blank = o > 0;
			continue;
		}
		if (blank && o + 2 < len)
			out[o++] = ' ';
		blank = false;
		out[o++] = *in;
	}
	out[o] = '\0';
}

/* The seed's PRE line from its own numbers: 100 children of 104 jobs
 * (high_systime's weights at 100 jobs), all cut by the 2000-s alarm. */
static void test_console(void)
{
	double child_s[100];
	for (int i = 0; i < 100; i++)
		child_s[i] = i % 2 ? 2000.05 : 2000.03; /* mean 2000.04, sd 0.01 */
	struct aim_figures f;
	aim_figures_compute(100, 104, 2000.04, child_s, 2721.29, 21564.90, &f);
	char row[256], flat[256];
	int n = aim_console_row(row, sizeof(row), &f);
	squeeze(row, flat, sizeof(flat));
	tap_ok(fabs(f.jobs_per_min - 104.0 * 100 * 60 / 2000.04) < 1e-9 &&
		       !strcmp(flat, "100 2000.04 21564.90 2721.29 311.99 3.12 0.01 0.00 99"),
	       "console line: 104 x 100 x 60 / 2000.04 = %.2f Jobs/min; row '%s' (want the "
	       "seed's '100 2000.04 21564.90 2721.29 311.99 3.12 0.01 0.00 99')",
	       f.jobs_per_min, flat);
	tap_ok(n > 0 && !strncmp(row, "100     2000.04  21564.90", 25) && row[n - 1] == '\n',
	       "re-aim's padding: '%%-8d%%-8.2f %%-7.2f...' gives '%.25s'", row);
}

/* Run one test of the workfile once, single-threaded, on a fresh kernel;
 * the acquisitions of each lock class it made. */
static bool run_one_test(const char *name, uint64_t *acq)
{
	const struct lb_lock_ops *ops[AIM_NROLES] = { lb_lock_find("mutex"),
						      lb_lock_find("qspinlock"),
						      lb_lock_find("qrwlock") };
	struct aim_kernel *k = calloc(1, sizeof(*k));
	struct aim_task *t = calloc(1, sizeof(*t));
	_Atomic int stop = 0;
	int idx = aim_test_index(name);
	if (!k || !t || idx < 0 || aim_kernel_init(k, ops, 1, &stop)) {
		free(k);
		free(t);
		return false;
	}
	t->k = k;
	t->ctx.k = k;
	t->tag = 1;
	t->rng = 1;
	for (int r = 0; r < AIM_NROLES; r++)
		if (ops[r]->thread_ctx_size) {
			t->ctx.tctx[r] = lb_thread_ctx_alloc(ops[r]);
			if (ops[r]->thread_init)
				ops[r]->thread_init(t->ctx.tctx[r], (unsigned int)r);
		}
	aim_mm_exec(&t->ctx, &k->mm[0]); /* the child's image, as child_main */
	aim_test_at((size_t)idx)->fn(t);
	for (int cls = 0; cls < AIM_NCLASSES; cls++)
		acq[cls] = t->ctx.cls[cls].acquires;
	bool clean = aim_kernel_check(k, stderr) == 0;
	for (int r = 0; r < AIM_NROLES; r++)
		if (t->ctx.tctx[r]) {
			if (ops[r]->thread_fini)
				ops[r]->thread_fini(t->ctx.tctx[r]);
			lb_thread_ctx_free(t->ctx.tctx[r]);
		}
	aim_kernel_destroy(k);
	free(k);
	free(t);
	return clean;
}

/*
 * s_orphan_lock where v3.14 takes it: twice per creat() of an existing name
 * (O_TRUNC -> ext4_truncate: ext4_orphan_add, ext4_orphan_del), twice per
 * last unlink (ext4_unlink's add, the eviction's del), never for a new
 * name, a link or an unlink that leaves a link.
 */
static void test_orphan_counts(void)
{
	uint64_t acq[AIM_NCLASSES];
	/* creat_clo: 1 new creat, 999 truncating ones, 1 last unlink. */
	bool ok = run_one_test("creat_clo", acq);
	tap_ok(ok && acq[AIM_CLASS_ORPHAN] == 2 * 999 + 2 && acq[AIM_CLASS_DIR] == 1000 + 1,
	       "creat_clo: s_orphan_lock %llu (want 2000 = 2 x 999 truncates + 2 for the last "
	       "unlink), dir i_mutex %llu (want 1001)", (unsigned long long)acq[AIM_CLASS_ORPHAN],
	       (unsigned long long)acq[AIM_CLASS_DIR]);
	/* link_test: 7 links, 9 x 7 unlink+relink, 8 unlinks: only the last
	 * of the 8 final unlinks drops the last link. */
	ok = run_one_test("link_test", acq);
	tap_ok(ok && acq[AIM_CLASS_ORPHAN] == 2 && acq[AIM_CLASS_DIR] == 1 + 7 + 9 * 7 * 2 + 8,
	       "link_test: s_orphan_lock %llu (want 2: the last unlink only), dir i_mutex %llu "
	       "(want 142 = 1 + 7 + 9 x 7 x 2 + 8)", (unsigned long long)acq[AIM_CLASS_ORPHAN],
	       (unsigned long long)acq[AIM_CLASS_DIR]);
	ok = run_one_test("brk_test", acq);
	tap_ok(ok && acq[AIM_CLASS_ORPHAN] == 0, "brk_test: no s_orphan_lock (%llu)",
	       (unsigned long long)acq[AIM_CLASS_ORPHAN]);
}

/* Drive the kernel single-threaded, then break it by hand: the check must
 * pass first and name each corruption after. */
static void test_kernel_check(void)
{
	const struct lb_lock_ops *ops[AIM_NROLES] = { lb_lock_find("mutex"),
						      lb_lock_find("qspinlock"),
						      lb_lock_find("qrwlock") };
	struct aim_kernel *k = calloc(1, sizeof(*k));
	_Atomic int stop = 0;
	FILE *devnull = fopen("/dev/null", "w");
	if (!k || !devnull || aim_kernel_init(k, ops, 2, &stop)) {
		tap_ok(false, "kernel init");
		return;
	}
	struct aim_ctx c = { .k = k };
	for (int r = 0; r < AIM_NROLES; r++) {
		if (!ops[r]->thread_ctx_size)
			continue;
		c.tctx[r] = lb_thread_ctx_alloc(ops[r]);
		if (ops[r]->thread_init)
			ops[r]->thread_init(c.tctx[r], (unsigned int)r);
	}
	aim_mm_exec(&c, &k->mm[0]);
	aim_mm_brk(&c, &k->mm[0], 8);
	aim_mm_fault(&c, &k->mm[0], 57);
	aim_sys_creat(&c, "a", 1);
	aim_sys_link(&c, "a", "b");
	aim_sys_creat(&c, "c", 1);
	aim_sys_unlink(&c, "c");
	uint32_t pid = aim_task_fork(&c, 1);
	uint8_t buf[4096];
	aim_file_write(&c, &k->fdata[0], 0, 4, buf);
	aim_pipe_write(&c, &k->pipe[0], 100);
	aim_pipe_read(&c, &k->pipe[0], 100);
	aim_sig_send(&c, &k->sig[0], 3);
	tap_ok(aim_sys_readdir(&c) == 2 && aim_task_walk(&c) == 1 && aim_sys_lookup(&c, "b"),
	       "directory holds 2 names, the task list 1 task");
	tap_ok(aim_kernel_check(k, stderr) == 0, "a kernel driven correctly passes the check");

	/* Corruptions a broken lock causes, one at a time. */
	uint32_t ino = AIM_NONE;
	for (uint32_t i = 0; i < k->itable.pool.n; i++)
		if (k->itable.pool.owner[i])
			ino = i;
	k->itable.nlink[ino]++;
	tap_ok(aim_kernel_check(k, devnull) > 0, "a lost unlink (link count too high) is caught");
	k->itable.nlink[ino]--;
	k->dir.nentries++;
	tap_ok(aim_kernel_check(k, devnull) > 0, "a directory count off by one is caught");
	k->dir.nentries--;
	k->pages.nfree--;
	tap_ok(aim_kernel_check(k, devnull) > 0, "a page lost from the free list is caught");
	k->pages.nfree++;
	k->tasks.nr++;
	tap_ok(aim_kernel_check(k, devnull) > 0, "a task count off by one is caught");
	k->tasks.nr--;
	k->pipe[0].buf[0] ^= 1;
	k->pipe[0].rseq = 0;
	k->pipe[0].tail -= 100;
	aim_pipe_read(&c, &k->pipe[0], 100);
	tap_ok(aim_kernel_check(k, devnull) > 0, "a corrupt byte in a pipe is caught");
	k->pipe[0].errors = 0;
	/* A transfer that wraps the ring, one bad byte on each side of the
	 * wrap: each counted once (the pattern is checked a ring run at a time). */
	struct aim_pipe *pp = &k->pipe[0];
	size_t lead = (2 * AIM_PIPE_SIZE - 1000 - (size_t)(pp->head % AIM_PIPE_SIZE)) %
		      AIM_PIPE_SIZE;
	size_t moved = aim_pipe_write(&c, pp, lead);
	moved += aim_pipe_read(&c, pp, lead);
	size_t wrap_at = (size_t)(pp->head % AIM_PIPE_SIZE); /* 1000 bytes before the end */
	moved += aim_pipe_write(&c, pp, 3000);
	tap_ok(pp->errors == 0 && moved == 2 * lead + 3000 && wrap_at == AIM_PIPE_SIZE - 1000,
	       "a transfer across the ring's end is written clean (from %zu)", wrap_at);
	pp->buf[(wrap_at + 10) % AIM_PIPE_SIZE] ^= 0x40;
	pp->buf[(wrap_at + 2900) % AIM_PIPE_SIZE] ^= 0x01;
	aim_pipe_read(&c, pp, 3000);
	tap_ok(pp->errors == 2, "two corrupt bytes across the ring's wrap: %llu counted (2)",
	       (unsigned long long)pp->errors);
	pp->errors = 0;
	k->dcache.n--;
	tap_ok(aim_kernel_check(k, devnull) > 0, "a dentry cache count off by one is caught");
	k->dcache.n++;
	/* An entry renamed behind the hash's back: the hashed find of "a" still
	 * answers, the entry scan under i_mutex sees "a" twice. */
	uint32_t eb = aim_dir_find(&k->dir, "b", NULL);
	snprintf(k->dir.ent[eb].name, sizeof(k->dir.ent[eb].name), "a");
	aim_sys_creat(&c, "a", 1);
	tap_ok(k->dir.errors > 0 && aim_kernel_check(k, devnull) > 0,
	       "the directory entry scan disagreeing with the hashed find is caught");
	snprintf(k->dir.ent[eb].name, sizeof(k->dir.ent[eb].name), "b");
	k->dir.errors = 0;
	k->dir.i_mutex.overlaps = 1;
	tap_ok(aim_kernel_check(k, devnull) > 0, "two threads inside one lock are caught");
	k->dir.i_mutex.overlaps = 0;
	tap_ok(aim_kernel_check(k, devnull) == 0, "and the repaired kernel passes again");

	aim_task_exit(&c, pid, 1);
	for (int r = 0; r < AIM_NROLES; r++)
		if (c.tctx[r]) {
			if (ops[r]->thread_fini)
				ops[r]->thread_fini(c.tctx[r]);
			lb_thread_ctx_free(c.tctx[r]);
		}
	aim_kernel_destroy(k);
	free(k);
	fclose(devnull);
}

/* The paired A/B's verdict (the ratio itself: tests/test_paired.c) and the
 * gauges' verdict on fixed data. */
static void test_paired(void)
{
	struct lb_paired_ratio pr;
	/* Ratios 2, 2, 2: geometric mean 2, zero spread, interval 2-2. */
	const double pre3[] = { 100, 50, 10 }, post3[] = { 200, 100, 20 };
	int rc = lb_paired_ratio(pre3, post3, 3, 0.95, &pr);
	tap_ok(rc == 0 && close_to(pr.geomean, 2) && !strcmp(aim_paired_verdict(&pr), "POST faster"),
	       "ratios 2,2,2: interval %.3f-%.3f, verdict %s", pr.lo, pr.hi, aim_paired_verdict(&pr));

	/* Ratios 1.5 and 2.5: interval 0.0755-49.7 holds 1. */
	const double pre2[] = { 10, 10 }, post2[] = { 15, 25 };
	rc = lb_paired_ratio(pre2, post2, 2, 0.95, &pr);
	tap_ok(rc == 0 && !strcmp(aim_paired_verdict(&pr), "no difference shown"),
	       "ratios 1.5,2.5: interval %.5f-%.2f, %s", pr.lo, pr.hi, aim_paired_verdict(&pr));

	/* Five pairs around 0.9 with a little spread: slower, interval below 1. */
	const double pre5[] = { 100, 100, 100, 100, 100 }, post5[] = { 90, 91, 89, 90, 90 };
	rc = lb_paired_ratio(pre5, post5, 5, 0.95, &pr);
	tap_ok(rc == 0 && !strcmp(aim_paired_verdict(&pr), "POST slower"),
	       "five ratios ~0.90: interval %.4f-%.4f, %s", pr.lo, pr.hi, aim_paired_verdict(&pr));

	rc = lb_paired_ratio(pre5, post5, 1, 0.95, &pr);
	tap_ok(rc == 0 && !strcmp(aim_paired_verdict(&pr), "one pair: no interval"),
	       "one pair: ratio %.2f, %s", pr.geomean, aim_paired_verdict(&pr));

	tap_ok(aim_ab_first_side(0) == 0 && aim_ab_first_side(1) == 1 && aim_ab_first_side(2) == 0 &&
		       aim_ab_first_side(3) == 1,
	       "ABBA: PRE first in even repeats, POST first in odd ones");

	/* Gauges: 0.3 s held in 0.6 s wall = 0.5: present; 0.29 s: absent. */
	tap_ok(close_to(aim_rho(300000000ull, 0.6), 0.5) && aim_mechanism_present(aim_rho(300000000ull, 0.6)) &&
		       !aim_mechanism_present(aim_rho(290000000ull, 0.6)) && aim_rho(5, 0) == 0,
	       "rho = held / wall (0.3 s / 0.6 s = %.2f); mechanism present from %.1f, absent below",
	       aim_rho(300000000ull, 0.6), AIM_RHO_CONTENDED);
}

/* Gauge formulas on a fixed class record. */
static void test_gauges(void)
{
	struct aim_class_stats st;
	memset(&st, 0, sizeof(st));
	/* 1000 acquisitions over 2 s wall: held 1.2 s, waited 3 ms in all;
	 * 990 waits of 100 ns (bucket [64,128)), 10 of 2^18 ns ~ 262 us
	 * (bucket [2^18, 2^19)); 40 slow; counters sleeps 5, spin_won 250. */
	st.acquires = 1000;
	st.held_ns = 1200000000ull;
	st.wait_ns = 3000000ull;
	st.slow = 40;
	st.wait_hist[6] = 990;
	st.wait_hist[18] = 10;
	st.counters[0] = (struct lb_counter){ "fast", 745 };
	st.counters[1] = (struct lb_counter){ "spin_won", 250 };
	st.counters[2] = (struct lb_counter){ "sleeps", 5 };
	st.ncounters = 3;
	struct aim_gauges g;
	aim_gauges_compute(&st, 2.0, &g);
	tap_ok(close_to(g.rho, 0.6) && close_to(g.slow_frac, 0.04) && close_to(g.sleep_frac, 0.005) &&
		       close_to(g.spin_won, 0.25) && close_to(g.wait_mean_ns, 3000) &&
		       close_to(g.wait_p99_ns, 128),
	       "gauges: rho %.2f (0.6), slow %.3f (0.04), sleep %.4f (0.005), spin_won %.2f (0.25), "
	       "wait mean %.0f (3000) p99 %.0f (128)", g.rho, g.slow_frac, g.sleep_frac, g.spin_won,
	       g.wait_mean_ns, g.wait_p99_ns);
	/* 985 short waits and 15 long: the 990th wait is in the 2^18 bucket. */
	struct aim_class_stats tail = st;
	struct aim_gauges gt;
	tail.wait_hist[6] = 985;
	tail.wait_hist[18] = 15;
	aim_gauges_compute(&tail, 2.0, &gt);
	double p99_tail = gt.wait_p99_ns;
	memset(tail.wait_hist, 0, sizeof(tail.wait_hist));
	aim_gauges_compute(&tail, 2.0, &gt);
	tap_ok(close_to(p99_tail, 524288) && gt.wait_p99_ns == 0,
	       "wait p99 in the 2^18 bucket is its upper edge (%.0f); empty histogram 0", p99_tail);
	tap_ok(aim_mechanism_present(g.rho) && aim_contended_class(AIM_ROLE_MUTEX) == AIM_CLASS_ORPHAN,
	       "rho 0.6 passes the rho part; the mutex role's contended class is s_orphan_lock");
	st.held_ns = 80000000ull; /* 0.08 s of 2 s */
	aim_gauges_compute(&st, 2.0, &g);
	tap_ok(close_to(g.rho, 0.04) && !aim_mechanism_present(g.rho),
	       "rho %.2f: mechanism absent", g.rho);
	struct aim_cpu_sample a = { .idle = 100, .total = 1000, .ok = true },
			      b = { .idle = 400, .total = 2000, .ok = true }, bad = { 0 };
	tap_ok(close_to(aim_idle_fraction(&a, &b), 0.3) && aim_idle_fraction(&a, &bad) == -1 &&
		       aim_idle_fraction(&b, &a) == -1,
	       "idle fraction from two /proc/stat samples: %.2f (0.3); unknown -> -1",
	       aim_idle_fraction(&a, &b));
}

/*
 * The gate on fixed data: a rho made by burns (351-us holds under the lock,
 * one runner at a time) must not pass; short holds with >= 2 running
 * contenders pass; a lock that cannot tell its running contenders gets no
 * verdict.
 */
static void test_gate(void)
{
	struct aim_class_stats st;
	struct aim_gate g;
	const double horizon = 20000;
	memset(&st, 0, sizeof(st));
	/* 5000 holds of ~351 us (bucket [2^18, 2^19) ns) in 2 s: rho 0.88. */
	st.acquires = 5000;
	st.held_ns = 5000ull * 351000;
	st.hold_hist[18] = 5000;
	st.waiters_hist[1] = 5000;
	st.counters[0] = (struct lb_counter){ "spin_won", 10 };
	st.counters[1] = (struct lb_counter){ "sleeps", 4000 };
	st.ncounters = 2;
	aim_gate_eval(&st, 2.0, horizon, &g);
	tap_ok(g.known && !g.present && strstr(g.why, "median hold"),
	       "burn-made rho 0.88 (351-us holds, no running counters): absent: %s", g.why);
	st.counters[2] = (struct lb_counter){ "acq_running_1", 900 };
	st.counters[3] = (struct lb_counter){ "acq_running_2", 100 };
	st.counters[4] = (struct lb_counter){ "acq_running_3plus", 0 };
	st.ncounters = 5;
	aim_gate_eval(&st, 2.0, horizon, &g);
	tap_ok(g.known && !g.present && strstr(g.why, "median hold"),
	       "and with running counters: still absent: %s", g.why);
	/* Short holds (bucket [2^11, 2^12) ns ~ 4 us) but 500000 of them: rho 1.0. */
	struct aim_class_stats sh = st;
	memset(sh.hold_hist, 0, sizeof(sh.hold_hist));
	sh.acquires = 500000;
	sh.held_ns = 500000ull * 4000;
	sh.hold_hist[11] = 500000;
	aim_gate_eval(&sh, 2.0, horizon, &g);
	tap_ok(g.known && !g.present && strstr(g.why, "running contenders < 2"),
	       "short holds, 90%% of contended acquisitions with 1 runner: absent: %s", g.why);
	sh.counters[2].value = 100;
	sh.counters[3].value = 600;
	sh.counters[4].value = 300;
	aim_gate_eval(&sh, 2.0, horizon, &g);
	tap_ok(g.known && g.present, "short holds, 90%% with >= 2 running: present: %s", g.why);
	sh.ncounters = 2; /* a lock without acq_running_* */
	aim_gate_eval(&sh, 2.0, horizon, &g);
	tap_ok(!g.known && !g.present && strstr(g.why, "withheld"),
	       "a lock that cannot tell its running contenders: verdict withheld: %s", g.why);
	struct aim_gauges ga;
	aim_gauges_compute(&sh, 2.0, &ga);
	tap_ok(!ga.have_running && close_to(ga.hold_p50_ns, 4096) && close_to(ga.waiters_share[1], 1),
	       "gauges: hold p50 <= %.0f ns (4096), waiters 1: %.0f%%, running n/a",
	       ga.hold_p50_ns, 100 * ga.waiters_share[1]);
	tap_ok(aim_spin_horizon_ns() > 0, "the spin horizon: %.0f ns (the mutex's spin budget)",
	       aim_spin_horizon_ns());
}

/*
 * The --window A/B lines go through the same gate: three ABBA pairs whose
 * s_orphan_lock rho of 0.88 is made by burns (351-us holds, one runner)
 * print "mechanism absent", the gauges and each side's figure, and no
 * ratio; the same runs with short holds and >= 2 running contenders print
 * the paired ratio.
 */
static void window_run(struct aim_point *p, const struct aim_class_stats *st, double cpu)
{
	p->users = 100;
	p->window_s = 2.0;
	p->fig.parent_s = 2.0;
	p->child_cpu_s = cpu;
	p->jobs_done = (uint64_t)(100 * cpu);
	p->cls[AIM_CLASS_ORPHAN] = *st;
}

static void test_window_gate(void)
{
	struct aim_cell *pre = calloc(1, sizeof(*pre)), *post = calloc(1, sizeof(*post));
	if (!pre || !post) {
		tap_ok(false, "out of memory");
		free(pre);
		free(post);
		return;
	}
	struct aim_class_stats burn;
	memset(&burn, 0, sizeof(burn));
	burn.acquires = 5000;
	burn.held_ns = 5000ull * 351000; /* rho 0.88 over 2 s */
	burn.hold_hist[18] = 5000;
	burn.counters[0] = (struct lb_counter){ "acq_running_1", 900 };
	burn.counters[1] = (struct lb_counter){ "acq_running_2", 100 };
	burn.counters[2] = (struct lb_counter){ "acq_running_3plus", 0 };
	burn.ncounters = 3;
	pre->users = post->users = 100;
	const double cpu_pre[3] = { 1.50, 1.60, 1.55 }, cpu_post[3] = { 1.80, 1.85, 1.90 };
	for (int r = 0; r < 3; r++) {
		window_run(&pre->run[r], &burn, cpu_pre[r]);
		window_run(&post->run[r], &burn, cpu_post[r]);
	}
	pre->nruns = post->nruns = 3;
	char line[1024];
	aim_window_ratio_line(line, sizeof(line), pre, post, AIM_ROLE_MUTEX, "CPUs busy",
			      aim_cpus_busy);
	tap_ok(strstr(line, "kernel mechanism absent (s_orphan_lock: median hold") &&
		       strstr(line, "no ratio") && strstr(line, "PRE rho 0.88-0.88") &&
		       strstr(line, "hold p50 <= 524.3-524.3 us") &&
		       strstr(line, ">= 2 running 10-10%") &&
		       strstr(line, "CPUs busy PRE 0.750-0.800 (n=3), POST 0.900-0.950 (n=3)") &&
		       !strstr(line, "x,") && !strstr(line, "interval"),
	       "window A/B on a burn-made rho 0.88: mechanism absent, gauges, no ratio: %s", line);
	aim_window_ratio_line(line, sizeof(line), pre, post, AIM_ROLE_MUTEX, "progress/s",
			      aim_progress_per_s);
	tap_ok(strstr(line, "POST/PRE progress/s at 100 users: kernel mechanism absent") &&
		       strstr(line, "no ratio"),
	       "and the progress line too: %s", line);
	/* Short holds (~4 us), 90 % of contended acquisitions with >= 2 running. */
	struct aim_class_stats sh = burn;
	memset(sh.hold_hist, 0, sizeof(sh.hold_hist));
	sh.acquires = 500000;
	sh.held_ns = 500000ull * 4000;
	sh.hold_hist[11] = 500000;
	sh.counters[0].value = 100;
	sh.counters[1].value = 600;
	sh.counters[2].value = 300;
	for (int r = 0; r < 3; r++) {
		pre->run[r].cls[AIM_CLASS_ORPHAN] = sh;
		post->run[r].cls[AIM_CLASS_ORPHAN] = sh;
	}
	aim_window_ratio_line(line, sizeof(line), pre, post, AIM_ROLE_MUTEX, "CPUs busy",
			      aim_cpus_busy);
	tap_ok(strstr(line, "POST/PRE CPUs busy at 100 users: 1.") && strstr(line, "95% interval") &&
		       strstr(line, "n=3 ABBA pairs: POST faster") && !strstr(line, "mechanism"),
	       "mechanism present in every run: the paired ratio and its verdict: %s", line);
	post->run[1].cls[AIM_CLASS_ORPHAN] = burn; /* one POST run made by burns */
	struct aim_gate g;
	aim_ab_gate(pre, post, AIM_ROLE_MUTEX, &g);
	aim_window_ratio_line(line, sizeof(line), pre, post, AIM_ROLE_MUTEX, "CPUs busy",
			      aim_cpus_busy);
	tap_ok(!g.present && g.known && strstr(line, "kernel mechanism absent") &&
		       strstr(line, "POST rho 0.88-1.00") && strstr(line, "no ratio"),
	       "one run without the mechanism withholds the ratio: %s", line);
	free(pre);
	free(post);
}

/* A table with every op: getpid 100, stat 500, the fs ops below, the
 * rest 1000 + 10 x their index, brk 10. */
static void fixed_table(char *buf, size_t len, const char *extra)
{
	int n = snprintf(buf, len, "# a fixed table\n" AIM_COSTS_SCHEMA " 1\nhost.kernel test 1.0\n"
			 "host.cpus 2\ndir_entries 256\n%s", extra);
	for (int op = 0; op < AIM_NCOSTS && n > 0 && (size_t)n < len; op++) {
		double ns = 1000 + 10 * op;
		switch (op) {
		case AIM_COST_GETPID: ns = 100; break;
		case AIM_COST_STAT: ns = 500; break;
		case AIM_COST_CREAT_EXISTING: ns = 2000; break;
		case AIM_COST_CREAT_NEW: ns = 5000; break;
		case AIM_COST_LINK: ns = 3000; break;
		case AIM_COST_UNLINK: ns = 1500; break;
		case AIM_COST_BRK: ns = 10; break;
		}
		n += snprintf(buf + n, len - (size_t)n, "%s %.1f  # comment\n", aim_cost_name(op), ns);
	}
}

static void costs_error(const char *text, const char *want)
{
	struct aim_costs c;
	char err[512] = "";
	int rc = aim_costs_parse(text, &c, err, sizeof(err));
	tap_ok(rc == -1 && strstr(err, want) != NULL, "bad cost table rejected: '%s' (want '%s')",
	       err, want);
}

static void test_costs(void)
{
	char text[8192], bad[8400], err[5000] = "";
	struct aim_costs c;
	fixed_table(text, sizeof(text), "");
	int rc = aim_costs_parse(text, &c, err, sizeof(err));
	tap_ok(rc == 0 && c.ns[AIM_COST_GETPID] == 100 && c.ns[AIM_COST_FSYNC] == 1000 + 10 * AIM_COST_FSYNC &&
	       c.dir_entries == 256 && !strcmp(c.host.kernel, "test 1.0") && !strcmp(c.host.cpus, "2"),
	       "a fixed table parses: every op, host facts, dir_entries %s", err);
	const char *def = aim_costs_default_path();
	tap_ok(def && aim_costs_load(def, &c, err, sizeof(err)) == 0 && !strcmp(c.path, def),
	       "the shipped table loads: %s %s", def ? def : "(none)", err);

	/* write -> parse round trip */
	aim_costs_parse(text, &c, err, sizeof(err));
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);
	struct aim_costs back;
	if (f) {
		aim_costs_write(f, &c);
		fclose(f);
	}
	rc = mem ? aim_costs_parse(mem, &back, err, sizeof(err)) : -1;
	bool same = rc == 0;
	for (int op = 0; same && op < AIM_NCOSTS; op++)
		same = fabs(back.ns[op] - c.ns[op]) < 0.051;
	tap_ok(same, "a written table parses back to the same costs %s", err);
	free(mem);

	/* The optional CPU and off-CPU lines. */
	char cpu[8192 + 2048];
	fixed_table(text, sizeof(text), "creat_existing.sleep_frac 0.25\ncreat_existing.offcpu_ns "
			"40000\n");
	int off = snprintf(cpu, sizeof(cpu), "%s", text);
	for (int op = 0; op < AIM_NCOSTS && off > 0 && (size_t)off < sizeof(cpu); op++)
		off += snprintf(cpu + off, sizeof(cpu) - (size_t)off, "cpu.%s %d\n", aim_cost_name(op),
				10 + op);
	rc = aim_costs_parse(cpu, &c, err, sizeof(err));
	tap_ok(rc == 0 && c.have_cpu && c.cpu_ns[AIM_COST_STAT] == 10 + AIM_COST_STAT &&
		       aim_costs_sizing_ns(&c) == c.cpu_ns && c.have_sleep &&
		       c.creat_sleep_frac == 0.25 && c.creat_offcpu_ns == 40000,
	       "CPU times and the creat's off-CPU part parse; sizing reads the CPU times %s", err);
	aim_costs_parse(text, &c, err, sizeof(err));
	tap_ok(!c.have_cpu && aim_costs_sizing_ns(&c) == c.ns, "without cpu.* lines: wall times");
	fixed_table(bad, sizeof(bad), "cpu.stat 10\n");
	costs_error(bad, "cpu.getpid missing");
	fixed_table(bad, sizeof(bad), "creat_existing.sleep_frac 1.5\n");
	costs_error(bad, "not a fraction 0..1");

	costs_error("", "not a cost table");
	costs_error("getpid 100\n", "1: not a cost table");
	costs_error(AIM_COSTS_SCHEMA " 2\n", "1: not a cost table");
	fixed_table(bad, sizeof(bad), "bogus 12\n");
	costs_error(bad, "6: unknown item 'bogus'");
	fixed_table(bad, sizeof(bad), "getpid 100\n");
	costs_error(bad, "getpid given twice");
	fixed_table(bad, sizeof(bad), "stat -5\n");
	costs_error(bad, "6: stat: '-5' is not a time");
	fixed_table(bad, sizeof(bad), "stat 12abc\n");
	costs_error(bad, "'12abc' is not a time");
	fixed_table(bad, sizeof(bad), "dir_entries lots\n");
	costs_error(bad, "dir_entries 'lots'");
	costs_error(AIM_COSTS_SCHEMA " 1\ngetpid 100\n", "op 'stat' missing");
	tap_ok(aim_costs_load("/nonexistent/costs.txt", &c, err, sizeof(err)) == -1 &&
	       strstr(err, "cannot read '/nonexistent/costs.txt'"), "a missing file: '%s'", err);
}

/* host.fs: the calibration directory's filesystem, kept and written back. */
static void test_costs_fs(void)
{
	char text[8192], err[512] = "";
	struct aim_costs c;
	fixed_table(text, sizeof(text), "host.fs ext2/3/4 on vda, no journal (none in /proc/fs/jbd2)\n");
	int rc = aim_costs_parse(text, &c, err, sizeof(err));
	char out[8192] = "";
	FILE *f = fmemopen(out, sizeof(out), "w");
	if (f) {
		aim_costs_write(f, &c);
		fclose(f);
	}
	tap_ok(rc == 0 && !strcmp(c.host_fs, "ext2/3/4 on vda, no journal (none in /proc/fs/jbd2)") &&
		       strstr(out, "\nhost.fs ext2/3/4 on vda, no journal (none in /proc/fs/jbd2)\n"),
	       "host.fs parses and is written back: '%s' %s", c.host_fs, err);
	char fs[160];
	aim_cal_fs_facts("/", fs, sizeof(fs));
	tap_ok(fs[0] != '\0', "the filesystem of /: %s", fs);
}

/* The sizing formula on the fixed table, fixed native times and counts. */
static void test_sizing(void)
{
	char text[8192], err[512];
	struct aim_costs c;
	fixed_table(text, sizeof(text), "");
	aim_costs_parse(text, &c, err, sizeof(err));
	double real[AIM_NKOPS];
	aim_sizing_real_ns(&c, real);
	/* truncate = creat_existing - open_close = 2000 - 1020: two orphan
	 * sections of 490; creat outside = 2000 - 400 - 980. */
	tap_ok(close_to(real[AIM_K_CREAT_DIR], 400) && close_to(real[AIM_K_CREAT_WALK], 620) &&
	       close_to(real[AIM_K_ORPHAN], 490) &&
	       close_to(real[AIM_K_CREAT_NEW_DIR], 3400) && close_to(real[AIM_K_LINK_WALK], 500) &&
	       close_to(real[AIM_K_LINK_DIR], 2500) && close_to(real[AIM_K_UNLINK_WALK], 100) &&
	       close_to(real[AIM_K_UNLINK_DIR], 420) && close_to(real[AIM_K_BRK], 10),
	       "i_mutex and s_orphan_lock split: creat %.0f+%.0f+2x%.0f (new %.0f), link "
	       "%.0f+%.0f, unlink %.0f+%.0f", real[AIM_K_CREAT_WALK], real[AIM_K_CREAT_DIR],
	       real[AIM_K_ORPHAN], real[AIM_K_CREAT_NEW_DIR], real[AIM_K_LINK_WALK],
	       real[AIM_K_LINK_DIR], real[AIM_K_UNLINK_WALK], real[AIM_K_UNLINK_DIR]);

	struct aim_workfile wf;
	aim_workfile_parse("20 creat_clo\n10 brk_test\n5 sieve\n5 signal_test\n", &wf, err,
			   sizeof(err));
	static double count[4 * AIM_NKOPS];
	memset(count, 0, sizeof(count));
	count[0 * AIM_NKOPS + AIM_K_CREAT_WALK] = 1000; /* creat_clo: 1000 creats */
	count[0 * AIM_NKOPS + AIM_K_CREAT_DIR] = 1000;
	count[0 * AIM_NKOPS + AIM_K_ORPHAN] = 2000;     /* R = 2e6 ns */
	count[1 * AIM_NKOPS + AIM_K_BRK] = 100000;      /* brk_test: R = 1e6 ns */
	count[3 * AIM_NKOPS + AIM_K_SIGNAL] = 1;        /* signal_test: R = 1120 ns, tiny */
	double native[4] = { 1000, 500000, 300, 5000 }; /* sieve: no kernel op */
	struct aim_sizing sz;
	memset(&sz, 0, sizeof(sz));
	sz.loops_per_ns = 1;
	int rc = aim_sizing_compute(&wf, &c, native, count, 0, &sz);
	tap_ok(rc == 0 && close_to(sz.scale, 5000 / 1120.0) && close_to(sz.pad_frac[3], 0) &&
	       close_to(sz.target_ns[1], 5000 / 1120.0 * 1e6),
	       "min_share 0: every test sets the scale: %.3f (signal_test's 5000/1120)", sz.scale);
	/* Above 1 %: creat_clo (native/real 0.0005) and brk_test (0.5): the
	 * model is cheaper than the real calls everywhere, so the scale is the
	 * floor, 1 (the table's speed), not brk_test's 0.5, and every test
	 * that has room is padded to its real time. */
	rc = aim_sizing_compute(&wf, &c, native, count, 0.01, &sz);
	tap_ok(rc == 0 && sz.on && close_to(sz.scale, AIM_SIZING_MIN_SCALE) &&
	       close_to(sz.scale, 1) && close_to(sz.real_ns[0], 2e6) &&
	       close_to(sz.real_ns[1], 1e6) && close_to(sz.real_ns[3], 1120) &&
	       close_to(sz.kwork_ns[AIM_K_CREAT_WALK], 620) && sz.loops_per_ns == 1,
	       "scale = max(1, max native/real over tests with >= 1%% of the time) = %.3f (1: "
	       "brk_test's 0.5 is below the table's speed; signal_test's 4.5 does not count)",
	       sz.scale);
	tap_ok(close_to(sz.pad_frac[0], 1 - 1000 / 2e6) && close_to(sz.pad_frac[1], 0.5) &&
	       close_to(sz.pad_frac[2], 0) && close_to(sz.pad_frac[3], 0) &&
	       close_to(sz.target_ns[0], 2e6) && close_to(sz.target_ns[1], 1e6) &&
	       close_to(sz.target_ns[2], 300) && close_to(sz.target_ns[3], 5000),
	       "pad fractions %.4f %.4f %.4f %.4f, targets %.0f %.0f %.0f %.0f ns (each test's "
	       "floor no higher than its table time but signal_test's)", sz.pad_frac[0],
	       sz.pad_frac[1], sz.pad_frac[2], sz.pad_frac[3], sz.target_ns[0], sz.target_ns[1],
	       sz.target_ns[2], sz.target_ns[3]);
	/* native + padding burnt at every op = the target: the share formula. */
	double padded = native[0] + sz.pad_frac[0] * (1000 * sz.kwork_ns[AIM_K_CREAT_WALK] +
						       1000 * sz.kwork_ns[AIM_K_CREAT_DIR] +
						       2000 * sz.kwork_ns[AIM_K_ORPHAN]);
	double padded_brk = native[1] + sz.pad_frac[1] * 100000 * sz.kwork_ns[AIM_K_BRK];
	tap_ok(close_to(padded, sz.target_ns[0]) && close_to(padded_brk, sz.target_ns[1]),
	       "native + padding = target (%.0f, %.0f ns)", padded, padded_brk);
	double shares[4], sim[4], measured[4] = { 2.2e6, 1e6, 300, 5000 };
	aim_sizing_shares(&wf, &sz, NULL, shares);
	aim_sizing_shares(&wf, &sz, measured, sim);
	double sum = 40e6 + 10e6 + 1500 + 5 * 1120;
	tap_ok(close_to(shares[0], 40e6 / sum) && close_to(shares[1], 10e6 / sum) &&
	       close_to(shares[2], 1500 / sum) && close_to(shares[3], 5600 / sum) &&
	       close_to(sim[0], 44e6 / (44e6 + 10e6 + 1500 + 25000)),
	       "table shares weight hits x s R (user tests: native): %.6f %.6f %.6f %.6f",
	       shares[0], shares[1], shares[2], shares[3]);
	memset(count, 0, sizeof(count));
	tap_ok(aim_sizing_compute(&wf, &c, native, count, 0.01, &sz) == -1 && !sz.on,
	       "no kernel op in the workfile: nothing to size");
	double rate = aim_kwork_calibrate();
	tap_ok(rate > 0.01 && rate < 100, "the burn loop's rate: %.2f loops/ns", rate);
}

int main(void)
{
	test_costs();
	test_costs_fs();
	test_sizing();
	test_paired();
	test_gauges();
	test_gate();
	test_window_gate();
	test_workfiles();
	test_jobs();
	test_figures();
	test_console();
	test_window_figures();
	test_orphan_counts();
	test_kernel_check();
	return tap_done();
}
