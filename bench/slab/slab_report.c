/* SPDX-License-Identifier: MIT */
/*
 * slab_report.c - `lockbench slab`'s tables in the layout of the two
 * kernel-list threads (doc/slab.md cites them), and its JSON file through
 * the shared schema (lib/lb_schema.h), which compare and plot read.
 */
#include "slab.h"
#include "lb_wrap.h"
#include "workload.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_schema.h"
#include "lb_stats.h"
#include "lb_time.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The first is the headline: what compare and plot show by default (the
 * bulk table against n); Table A's figures are total_ns. */
enum { M_CYCLES, M_NS, M_TOTAL_NS, M_COUNT };

static const struct lb_metric_desc slab_metrics[M_COUNT] = {
	[M_CYCLES] = { "cycles_per_obj", "cycles", LB_BETTER_LOWER, "TSC cycles per object" },
	[M_NS] = { "ns_per_obj", "ns", LB_BETTER_LOWER, "ns per object" },
	[M_TOTAL_NS] = { "total_ns", "ns", LB_BETTER_LOWER, "total time of the iterations" },
};

static const char *const slab_params[] = { "table", "protection", "model", "context", "n", "api",
					   NULL };

const struct lb_workload_schema lb_schema_slab = {
	LB_SCHEMA_TABLES("lockbench-slab", 1, slab_params, slab_metrics),
};

const char *lb_slab_commas(double v, char *buf, size_t len)
{
	char digits[32];
	snprintf(digits, sizeof(digits), "%.0f", v < 0 ? 0 : v);
	size_t n = strlen(digits), o = 0;
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static struct lb_summary summary_of(const double *v, unsigned int n)
{
	struct lb_summary s;
	lb_summarize(v, n, &s);
	return s;
}

static void print_probe(FILE *out, const struct lb_slab_batch_stats *st)
{
	lb_wrapf(out, "    ", "probe: %llu batches kept, %llu redone (the thread was switched out or "
		 "changed CPU during them), %llu kept after %d such tries",
		(unsigned long long)st->batches, (unsigned long long)st->redone,
		(unsigned long long)st->kept_switched, LB_SLAB_BATCH_TRIES);
	lb_slab_print_gauge(out, &st->gauge);
}

void lb_slab_print_gauge(FILE *out, const struct lb_slab_gauge *g)
{
	struct lb_slab_gauge_summary s;
	if (!lb_slab_gauge_summarize(g, &s)) {
		fprintf(out, "host speed: not measured (no batch kept)\n");
		return;
	}
	if (s.steady) {
		lb_wrapf(out, "    ", "host speed steady (p90/p10 %.2f): reference add chain p10 %.2f / "
			 "median %.2f / p90 %.2f ns per add over %llu batches",
			s.ratio, s.p10, s.median, s.p90, (unsigned long long)s.samples);
		return;
	}
	lb_wrapf(out, "    ", "host speed: reference add chain p10 %.2f / median %.2f / p90 %.2f ns per "
		 "add over %llu batches, %.0f %% of them within %.2fx of p10: the CPU ran at speeds "
		 "%.2fx apart (p90/p10) during the table; its figures carry that spread",
		s.p10, s.median, s.p90, (unsigned long long)s.samples, s.fast_share * 100.0,
		LB_SLAB_GAUGE_STEADY, s.ratio);
}

void lb_slab_print_header(FILE *out, const struct lb_slab_config *cfg, const char *cpu_model)
{
	const char *why = lb_prot_unsupported(LB_PROT_RSEQ, NULL);
	char pin[48] = "not pinned";
	if (cfg->cpu >= 0)
		snprintf(pin, sizeof(pin), "pinned to CPU %d", cfg->cpu);
	lb_wrapf(out, "    ", "lockbench slab: %s; %s; rseq: %s; lock %s; medians of %u", cpu_model,
		 pin, why ? why : "registered by glibc", cfg->lock->name, cfg->repeat);
}

void lb_slab_print_protect(FILE *out, const struct lb_slab_config *cfg, const char *cpu_model,
			   const struct lb_slab_protect_result *res)
{
	char b1[40], b2[40];
	unsigned int n = res->done;
	if (!n) {
		fprintf(out, "A. no repeat finished\n");
		return;
	}
	fprintf(out, "\nA. %s iterations of an empty section (one counter update), total ns\n",
		lb_slab_commas((double)cfg->section_iters, b1, sizeof(b1)));
	fprintf(out, "        %s\n", cpu_model);
	double med[LB_PROT_COUNT] = { 0 };
	for (int p = 0; p < LB_PROT_COUNT; p++) {
		if (!res->supported[p]) {
			lb_wrapf(out, "    ", "%-7s skipped: %s", lb_prot_label((enum lb_prot)p),
				 res->why[p]);
			continue;
		}
		med[p] = summary_of(res->section_ns[p], n).median;
		fprintf(out, "%-7s %s\n", lb_prot_label((enum lb_prot)p),
			lb_slab_commas(med[p], b1, sizeof(b1)));
	}
	double it = (double)cfg->section_iters;
	if (res->supported[LB_PROT_RSEQ] && med[LB_PROT_NONE] > 0)
		lb_wrapf(out, "    ", "rseq per-CPU update %.2f ns = %.2fx the plain per-thread "
			 "update (NONE, %.2f ns); %llu rseq restarts in all",
			med[LB_PROT_RSEQ] / it, med[LB_PROT_RSEQ] / med[LB_PROT_NONE],
			med[LB_PROT_NONE] / it, (unsigned long long)res->rseq_aborts);
	if (res->supported[LB_PROT_RSEQ] && res->indexed_ns[0] > 0) {
		double ix = summary_of(res->indexed_ns, n).median;
		lb_wrapf(out, "    ", "the same update of the slot cpu_id names, outside any section: "
			 "%.2f ns (rseq = %.2fx that: the section's own cost is its descriptor store)",
			ix / it, med[LB_PROT_RSEQ] / ix);
	}
	if (res->supported[LB_PROT_SIGMASK]) {
		double sys = summary_of(res->syscall_ns, n).median;
		lb_wrapf(out, "    ", "sigmask section %.1f ns: 2 rt_sigprocmask system calls; a bare "
			 "system call (getppid) costs %.1f ns here, 2 x = %.1f ns",
			med[LB_PROT_SIGMASK] / it, sys, 2 * sys);
	}
	if (!res->allocfree_done) {
		print_probe(out, &res->probe);
		lb_wrapf(out, "    ", "\nA. alloc+free: not run (%s)",
			!res->supported[res->opt_prot]   ? res->why[res->opt_prot]
			: lb_slab_stop_requested()       ? "interrupted"
							 : "the signal mask is needed for NO-OPT");
		return;
	}
	n = res->done_af;
	const char *opt = lb_prot_label((enum lb_prot)res->opt_prot);
	lb_wrapf(out, "    ", "\nA. %s x kfree(kmalloc(128)), total ns, medians of %u with SD; OPT: "
		 "task stock on %s (%s), handler on SIGMASK; NO-OPT: one SIGMASK stock; BH: inside a "
		 "SIGUSR1 handler, %llu per signal",
		lb_slab_commas((double)cfg->op_iters, b1, sizeof(b1)), n, opt,
		cfg->opt_prot < 0 ? "the cheapest per-CPU protection above" : "--opt",
		(unsigned long long)cfg->bh_batch);
	fprintf(out, "%s\n", cpu_model);
	char h1[40], h2[40];
	snprintf(h1, sizeof(h1), "%s OPT", opt);
	snprintf(h2, sizeof(h2), "SIGMASK NO-OPT");
	fprintf(out, "%-13s%16s%16s\n", "", h1, h2);
	for (int bh = 0; bh < 2; bh++) {
		struct lb_summary a = summary_of(res->allocfree_ns[LB_COL_OPT][bh], n);
		struct lb_summary b = summary_of(res->allocfree_ns[LB_COL_NOOPT][bh], n);
		fprintf(out, "%-13s%16s", bh ? "ALLOC/FREE BH" : "ALLOC/FREE",
			lb_slab_commas(a.median, b1, sizeof(b1)));
		fprintf(out, "%16s\n", lb_slab_commas(b.median, b2, sizeof(b2)));
		fprintf(out, "%-13s%16s", "SD", lb_slab_commas(a.sd, b1, sizeof(b1)));
		fprintf(out, "%16s\n", lb_slab_commas(b.sd, b2, sizeof(b2)));
	}
	fprintf(out, "rseq restarts: sections %llu, OPT task %llu, OPT BH %llu\n",
		(unsigned long long)res->section_restarts[LB_PROT_RSEQ],
		(unsigned long long)res->allocfree_restarts[LB_COL_OPT][0],
		(unsigned long long)res->allocfree_restarts[LB_COL_OPT][1]);
	print_probe(out, &res->probe);
}

static double improved_pct(double fallback, double bulk)
{
	/* On the printed (rounded) cycles, as the thread computed it. */
	double f = round(fallback), b = round(bulk);
	return f > 0 ? (f - b) / f * 100.0 : 0;
}

void lb_slab_print_bulk(FILE *out, const struct lb_slab_config *cfg,
			const struct lb_slab_bulk_result *res)
{
	unsigned int n = res->done;
	if (!n) {
		fprintf(out, "B. no repeat finished\n");
		return;
	}
	double cpn = res->cycles_per_ns > 0 ? res->cycles_per_ns : 1;
	char prot[64];
	if (cfg->bulk_prot == LB_PROT_LOCK)
		snprintf(prot, sizeof(prot), "the per-CPU lock (%s)", cfg->lock->name);
	else
		snprintf(prot, sizeof(prot), "%s", cfg->bulk_prot == LB_PROT_SIGMASK ? "the signal mask"
										: "nothing");
	lb_wrapf(out, "    ", "\nB. bulk API: %u-byte objects, %u per page, cpu_partial %u, "
		 "min_partial %u, list_lock %s, each call (fallback) or batch (bulk) under %s; per "
		 "object, medians of %u; TSC %.3f GHz",
		cfg->bulk_size, res->objs_per_page, cfg->cpu_partial, cfg->min_partial,
		cfg->lock->name, prot, n, cpn);
	double fp = summary_of(res->fastpath_cycles, n).median;
	fprintf(out, "normal fastpath is: %.0f cycles(tsc) %.3f ns\n", fp, fp / cpn);
	fprintf(out, "bulk-  Fallback                 - Bulk-API\n");
	for (size_t i = 0; i < cfg->nbulk; i++) {
		double f = summary_of(res->fallback_cycles[i], n).median;
		double b = summary_of(res->bulk_cycles[i], n).median;
		fprintf(out, "%3u - %3.0f cycles(tsc) %6.3f ns - %3.0f cycles(tsc) %6.3f ns - "
			"improved %.1f%%\n",
			cfg->bulk_n[i], f, f / cpn, b, b / cpn, improved_pct(f, b));
	}
	print_probe(out, &res->probe);
}

/* ---- JSON ------------------------------------------------------------- */

static void cell(struct lb_json *j, const char *table, const char *prot, const char *model,
		 const char *context, unsigned int n, const char *api, const double *v,
		 unsigned int nrep, int metric, double cycles_per_ns)
{
	lb_json_object_begin(j);
	lb_json_key(j, "params");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "table", table);
	lb_json_kv_string(j, "protection", prot);
	lb_json_kv_string(j, "model", model);
	lb_json_kv_string(j, "context", context);
	lb_json_kv_uint(j, "n", n);
	lb_json_kv_string(j, "api", api);
	lb_json_object_end(j);
	double ns[LB_SLAB_MAX_REPEAT];
	for (unsigned int r = 0; r < nrep; r++)
		ns[r] = metric == M_CYCLES ? v[r] / cycles_per_ns : v[r];
	lb_json_key(j, "summary");
	lb_json_object_begin(j);
	if (metric == M_CYCLES) {
		lb_schema_summary_of(j, "cycles_per_obj", v, nrep);
		lb_schema_summary_of(j, "ns_per_obj", ns, nrep);
	} else {
		lb_schema_summary_of(j, "total_ns", v, nrep);
	}
	lb_json_object_end(j);
	lb_json_key(j, "runs");
	lb_json_array_begin(j);
	for (unsigned int r = 0; r < nrep; r++) {
		lb_json_object_begin(j);
		lb_json_kv_uint(j, "repeat_index", r);
		for (int m = 0; m < M_COUNT; m++) {
			lb_json_key(j, slab_metrics[m].key);
			if (metric == M_CYCLES && m == M_CYCLES)
				lb_json_double(j, v[r]);
			else if (metric == M_CYCLES && m == M_NS)
				lb_json_double(j, ns[r]);
			else if (metric == M_TOTAL_NS && m == M_TOTAL_NS)
				lb_json_double(j, v[r]);
			else
				lb_json_null(j);
		}
		lb_json_object_end(j);
	}
	lb_json_array_end(j);
	lb_json_object_end(j);
}

/* One table's gauge: ns per add; the percentiles null when no batch was kept. */
static void gauge_json(struct lb_json *j, const char *table, const struct lb_slab_gauge *g)
{
	struct lb_slab_gauge_summary s;
	bool have = lb_slab_gauge_summarize(g, &s);
	lb_json_key(j, table);
	lb_json_object_begin(j);
	lb_json_kv_uint(j, "batches", s.samples);
	const char *keys[] = { "p10_ns", "median_ns", "p90_ns", "p90_p10", "fast_share" };
	const double vals[] = { s.p10, s.median, s.p90, s.ratio, s.fast_share };
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		lb_json_key(j, keys[k]);
		if (have)
			lb_json_double(j, vals[k]);
		else
			lb_json_null(j);
	}
	lb_json_key(j, "steady");
	if (have)
		lb_json_bool(j, s.steady);
	else
		lb_json_null(j);
	lb_json_kv_double(j, "cost_ns", s.cost_ns);
	lb_json_object_end(j);
}

void lb_slab_write_json(FILE *fp, const struct lb_slab_config *cfg,
			const struct lb_run_record *rec, const struct lb_slab_protect_result *pr,
			const struct lb_slab_bulk_result *br)
{
	struct lb_json j;
	int interrupted_by = rec->interrupted_by;
	lb_schema_begin_file(&j, fp, &lb_schema_slab, &rec->host, rec->command);
	lb_json_kv_uint(&j, "section_iterations", cfg->section_iters);
	lb_json_kv_uint(&j, "ops", cfg->op_iters);
	lb_json_kv_uint(&j, "bh_batch", cfg->bh_batch);
	lb_json_kv_uint(&j, "repeat", cfg->repeat);
	lb_json_kv_string(&j, "lock", cfg->lock->name);
	lb_json_kv_int(&j, "cpu", cfg->cpu);
	lb_json_kv_uint(&j, "bulk_size", cfg->bulk_size);
	lb_json_kv_uint(&j, "bulk_objects", cfg->bulk_objects);
	lb_json_kv_string(&j, "bulk_protect", lb_prot_name((enum lb_prot)cfg->bulk_prot));
	lb_json_kv_uint(&j, "cpu_partial", cfg->cpu_partial);
	lb_json_kv_uint(&j, "min_partial", cfg->min_partial);
	lb_json_kv_uint(&j, "min_objects", cfg->min_objects);
	if (pr) {
		lb_json_kv_uint(&j, "rseq_aborts", pr->rseq_aborts);
		/* per figure: the empty rseq section, OPT alloc+free task and BH */
		lb_json_kv_uint(&j, "rseq_restarts_sections", pr->section_restarts[LB_PROT_RSEQ]);
		lb_json_kv_uint(&j, "rseq_restarts_opt_task", pr->allocfree_restarts[LB_COL_OPT][0]);
		lb_json_kv_uint(&j, "rseq_restarts_opt_bh", pr->allocfree_restarts[LB_COL_OPT][1]);
	}
	/* the probe around the timed batches (bench/slab/slab_batch.h) */
	uint64_t kept = (pr ? pr->probe.batches : 0) + (br ? br->probe.batches : 0);
	uint64_t redone = (pr ? pr->probe.redone : 0) + (br ? br->probe.redone : 0);
	uint64_t dirty = (pr ? pr->probe.kept_switched : 0) + (br ? br->probe.kept_switched : 0);
	lb_json_kv_uint(&j, "batches", kept);
	lb_json_kv_uint(&j, "batches_redone", redone);
	lb_json_kv_uint(&j, "batches_kept_switched", dirty);
	/* the host-speed gauge beside the batches, per table (slab_batch.h) */
	lb_json_key(&j, "host_speed");
	lb_json_object_begin(&j);
	lb_json_kv_uint(&j, "reference_adds", LB_SLAB_REF_ADDS);
	lb_json_kv_double(&j, "steady_limit", LB_SLAB_GAUGE_STEADY);
	if (pr)
		gauge_json(&j, "protect", &pr->probe.gauge);
	if (br)
		gauge_json(&j, "bulk", &br->probe.gauge);
	lb_json_object_end(&j);
	if (br) {
		lb_json_kv_uint(&j, "objs_per_page", br->objs_per_page);
		lb_json_kv_double(&j, "tsc_ghz", br->cycles_per_ns);
	}
	lb_json_object_end(&j);
	lb_json_key(&j, "results");
	lb_json_array_begin(&j);
	if (pr && pr->done) {
		for (int p = 0; p < LB_PROT_COUNT; p++)
			if (pr->supported[p])
				cell(&j, "section", lb_prot_name((enum lb_prot)p), "", "task", 0, "",
				     pr->section_ns[p], pr->done, M_TOTAL_NS, 1);
		for (int c = 0; pr->allocfree_done && c < LB_COL_COUNT; c++)
			for (int bh = 0; bh < 2; bh++)
				cell(&j, "allocfree",
				     lb_prot_name(c == LB_COL_OPT ? (enum lb_prot)pr->opt_prot
								  : LB_PROT_SIGMASK),
				     c == LB_COL_OPT ? "OPT" : "NO-OPT", bh ? "bh" : "task", 0, "",
				     pr->allocfree_ns[c][bh], pr->done_af, M_TOTAL_NS, 1);
	}
	if (br && br->done) {
		double cpn = br->cycles_per_ns > 0 ? br->cycles_per_ns : 1;
		const char *prot = lb_prot_name((enum lb_prot)cfg->bulk_prot);
		cell(&j, "bulk", prot, "", "task", 1, "fastpath", br->fastpath_cycles, br->done,
		     M_CYCLES, cpn);
		for (size_t i = 0; i < cfg->nbulk; i++) {
			cell(&j, "bulk", prot, "", "task", cfg->bulk_n[i], "fallback",
			     br->fallback_cycles[i], br->done, M_CYCLES, cpn);
			cell(&j, "bulk", prot, "", "task", cfg->bulk_n[i], "bulk", br->bulk_cycles[i],
			     br->done, M_CYCLES, cpn);
		}
	}
	lb_json_array_end(&j);
	/* true: a signal ended the run; "results" holds the repeats that finished. */
	lb_schema_write_interrupted(&j, interrupted_by);
	lb_json_object_end(&j);
	fputc('\n', fp);
}
