/* SPDX-License-Identifier: MIT */
/*
 * slab.h - `lockbench slab` (doc/slab.md): the allocator fast-path
 * experiments of two kernel-list threads on the SLUB-like allocator shared
 * with `lockbench rt` (engines/slub/slub.h).
 *
 *  Table A (protect): the cost of an empty section under each protection of
 *  per-CPU data (slab_stock.h), then alloc+free of a 128-byte object from a
 *  task-context stock on the cheapest protection (OPT) and from one stock
 *  behind the signal mask (NO-OPT), in task context and inside a signal
 *  handler (BH), medians with SD.
 *  Table B (bulk): per bulk size N, the cost per object of N single
 *  alloc+free calls ("fallback") against the bulk API, in TSC cycles and ns.
 */
#ifndef LB_SLAB_BENCH_H
#define LB_SLAB_BENCH_H

#include "slab_batch.h"
#include "slab_stock.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LB_SLAB_MAX_REPEAT 50
#define LB_SLAB_MAX_BULK 32
#define LB_SLAB_BULK_MAX_N 1024
/* Batches per Table A measurement (doc/slab.md, "How a figure is taken"). */
#define LB_SLAB_A_BATCHES 45

struct lb_slab_config {
	bool table_protect, table_bulk;
	uint64_t section_iters;          /* empty sections per measurement */
	uint64_t op_iters;               /* alloc+free pairs per measurement */
	uint64_t bh_batch;               /* BH rows: pairs per signal (1: one signal each) */
	unsigned int repeat;
	int opt_prot;                    /* -1: the cheapest per-CPU one measured */
	const struct lb_lock_ops *lock;  /* the per-CPU lock and list_lock */
	int cpu;                         /* pinned here; -1: not pinned */
	unsigned int bulk_size;          /* table B object size */
	uint32_t cpu_partial, min_partial, min_objects;
	unsigned int bulk_n[LB_SLAB_MAX_BULK];
	size_t nbulk;
	uint64_t bulk_objects;           /* objects per bulk measurement */
	int bulk_prot;                   /* LB_PROT_LOCK, _SIGMASK or _NONE */
	const char *json_path;
	bool quiet;
};

/* Table A figures: [repeat] per row. */
enum lb_slab_col { LB_COL_OPT, LB_COL_NOOPT, LB_COL_COUNT };
struct lb_slab_protect_result {
	bool supported[LB_PROT_COUNT];
	char why[LB_PROT_COUNT][160];
	double section_ns[LB_PROT_COUNT][LB_SLAB_MAX_REPEAT];
	double syscall_ns[LB_SLAB_MAX_REPEAT];  /* one bare system call (getppid) */
	double indexed_ns[LB_SLAB_MAX_REPEAT];  /* the iterations as plain indexed updates */
	int opt_prot;                            /* what OPT ran on */
	double allocfree_ns[LB_COL_COUNT][2][LB_SLAB_MAX_REPEAT]; /* [col][bh] */
	uint64_t rseq_aborts, slow_paths;
	uint64_t section_restarts[LB_PROT_COUNT];   /* rseq restarts per figure */
	uint64_t allocfree_restarts[LB_COL_COUNT][2];
	struct lb_slab_batch_stats probe;        /* batches redone, Table A */
	unsigned int done;                       /* section repeats completed */
	unsigned int done_af;                    /* alloc+free repeats completed */
	bool allocfree_done;
};

struct lb_slab_bulk_result {
	double fallback_cycles[LB_SLAB_MAX_BULK][LB_SLAB_MAX_REPEAT];
	double bulk_cycles[LB_SLAB_MAX_BULK][LB_SLAB_MAX_REPEAT];
	double fastpath_cycles[LB_SLAB_MAX_REPEAT];
	double cycles_per_ns;
	uint32_t objs_per_page;
	uint64_t list_lock_acquires;
	struct lb_slab_batch_stats probe;        /* batches redone, Table B */
	unsigned int done;
};

/* slab_opts.c: exits 2 with one line on bad usage. */
void lb_slab_parse(int argc, char **argv, struct lb_slab_config *cfg);

/* slab_run.c: 0, or an errno value when a run could not start.  They stop
 * early (keeping the repeats done) once lb_slab_stop_requested(). */
int lb_slab_run_protect(const struct lb_slab_config *cfg, struct lb_slab_protect_result *res);
int lb_slab_run_bulk(const struct lb_slab_config *cfg, struct lb_slab_bulk_result *res);
int lb_slab_stop_requested(void); /* lb_stop_signal(): lib/lb_stop.h */
/* Pin the calling thread to cfg->cpu (no-op for -1); 0 or errno. */
int lb_slab_pin(const struct lb_slab_config *cfg);
struct lb_opt_cmd;
extern const struct lb_opt_cmd lb_slab_cmd; /* slab_opts.c */
extern const struct lb_workload_schema lb_schema_slab; /* slab_report.c */

/* slab_report.c */
/* cpu_model: the host's (struct lb_hostinfo), printed in the headers. */
void lb_slab_print_header(FILE *out, const struct lb_slab_config *cfg, const char *cpu_model);
void lb_slab_print_protect(FILE *out, const struct lb_slab_config *cfg, const char *cpu_model,
			   const struct lb_slab_protect_result *res);
void lb_slab_print_bulk(FILE *out, const struct lb_slab_config *cfg,
			const struct lb_slab_bulk_result *res);
struct lb_run_record; /* bench/workload.h: the command line, the signal, the host */
void lb_slab_write_json(FILE *fp, const struct lb_slab_config *cfg,
			const struct lb_run_record *rec, const struct lb_slab_protect_result *pr,
			const struct lb_slab_bulk_result *br);
/* The table's host-speed line (slab_batch.h): steady, or the spread. */
void lb_slab_print_gauge(FILE *out, const struct lb_slab_gauge *g);
/* "1,234,567" into buf. */
const char *lb_slab_commas(double v, char *buf, size_t len);

#endif /* LB_SLAB_BENCH_H */
