/* SPDX-License-Identifier: MIT */
/*
 * workload.h - a `lockbench` command described once: its name, summary,
 * options, result schema, signal policy and stages.
 *
 * Every row of the command manifest (bench/meson.build) names a folder
 * whose sources define `const struct lb_workload lb_workload_<name>`; the
 * command table, the schema list, the man-page list and the tests' folders
 * are generated from the manifest, and lb_workload_check() (run at start-up
 * and by tests/test_workloads.c) refuses a descriptor with a field missing.
 *
 * A workload (bench, ab, aim7, rt, slab) supplies stages, and the driver
 * (driver.c, lb_driver_run) runs them in one lifecycle for all:
 *
 *   parse      argv -> the config (what was asked; exit 2 on bad input)
 *   outputs    the result files the config names (--json, --csv ...): the
 *              driver refuses two naming one file and opens them all
 *              before anything runs (a bad path: exit 2, nothing left)
 *   signals    per .signals: LB_SIGNALS_END or LB_SIGNALS_FINISH
 *   facts      load, host, and (when asked) the runnable threads, into the
 *              run record
 *   run        the measurement; the config is const from here on, what the
 *              run finds goes into the run record (and its own results)
 *   report     the table and the result files, from the results
 *   commit     every output renamed into place, or all discarded
 *   exit code  0; 1 when a stage failed; 128 + the signal when one ended
 *              the run early (the finished part was reported)
 *
 * A result tool (compare, plot) or `list` has no stages: .main runs it.
 */
#ifndef LB_WORKLOAD_H
#define LB_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lb_hostinfo.h"
#include "lb_outfile.h"

struct lb_opt_cmd;
struct lb_workload_schema;

/* What the user's signals do while a workload runs (INT, TERM, HUP, QUIT). */
enum lb_signal_policy {
	/* Remove the output temporaries and die of the signal: nothing half
	 * done is worth reporting (aim7, rt). */
	LB_SIGNALS_END,
	/* The first asks the run to stop (lib/lb_stop.h): the finished part is
	 * reported and written, exit 128 + the signal.  A second before the
	 * outputs are written leaves at once, removing the temporaries. */
	LB_SIGNALS_FINISH,
};

/* At most this many result files per command (--json, --csv, ...). */
#define LB_WORKLOAD_MAX_OUTPUTS 2

/* One result file a config names: the option that named it and the path
 * (NULL: not asked for). */
struct lb_output_request {
	const char *option;
	const char *path;
};

/* Facts the driver finds while running, beside the config. */
struct lb_run_record {
	const char *command;       /* the command line, joined ("config.command") */
	double load_before;        /* 1-min load average before the run; < 0 unknown */
	double runnable_before;    /* other threads runnable before the run (when the
				    * descriptor asks); < 0 unknown or not asked */
	int interrupted_by;        /* the signal that ended the run early; 0 none */
	double steal_s;            /* steal time over the run stage, s, all CPUs together
				    * (lib/lb_steal.h); < 0 unknown */
	struct lb_hostinfo host;   /* read before the run stage */
};

/* One command's run, handed to its stages. */
struct lb_run {
	const void *cfg;           /* the workload's config (const from the run stage on) */
	struct lb_run_record rec;
	FILE *out;                 /* the human-readable report: stdout, or stderr when a
				    * result file goes to stdout */
	struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS];
	struct lb_outfile file[LB_WORKLOAD_MAX_OUTPUTS]; /* req[i]'s file; .fp NULL: none */
	void *results;             /* the workload's own, from run to report */
};

struct lb_workload {
	const char *name;          /* the command word: "bench" */
	const char *summary;       /* one line for `lockbench --help` */
	const struct lb_opt_cmd *options; /* the option table (NULL: the command parses its own) */
	const struct lb_workload_schema *schema; /* its result files (NULL: writes none) */
	enum lb_signal_policy signals;
	int signal_flags;          /* sigaction flags: 0 cuts a sleep short, SA_RESTART not */
	bool ignore_sigpipe;       /* SIGPIPE ignored: a dead reader is a write error */
	bool runnable_before;      /* the run record's runnable_before is read (110 ms) */

	/* Stages (a workload has all of parse, run, report; a tool has main). */
	size_t config_size;
	void (*parse)(int argc, char **argv, void *cfg);
	/* The result files the config asks for, in req[] order; unused ones
	 * keep a NULL path. */
	void (*outputs)(const void *cfg, struct lb_output_request req[LB_WORKLOAD_MAX_OUTPUTS]);
	/* 0, or 1 after its own error line (the outputs are then discarded). */
	int (*run)(struct lb_run *run);
	/* Tables and files from run->results; 0 or 1 as run.  Runs only when
	 * run returned 0. */
	int (*report)(struct lb_run *run);
	/* Frees what run->results owns (called whatever happened, when the
	 * run stage set results); the driver then frees run->results itself.
	 * NULL: the results own nothing. */
	void (*release)(struct lb_run *run);

	/* A result tool or `list`: the whole command (argv[0] the command word). */
	int (*main)(int argc, char **argv);
};

/* A workload's four stages, named <prefix>_parse, _outputs, _run and
 * _report in its *_main.c (and `.release = <prefix>_release` beside them
 * when its results own memory). */
#define LB_WORKLOAD_STAGES(prefix)                                                          \
	.parse = prefix##_parse, .outputs = prefix##_outputs, .run = prefix##_run,          \
	.report = prefix##_report

/* A workload whose names follow the recipe (doc/HACKING.md): options
 * lb_<prefix>_cmd, schema lb_schema_<prefix>, config `config_type`, stages
 * <prefix>_parse ... <prefix>_report. */
#define LB_WORKLOAD_PARTS(prefix, config_type)                                              \
	.options = &lb_##prefix##_cmd, .schema = &lb_schema_##prefix,                       \
	.config_size = sizeof(config_type), LB_WORKLOAD_STAGES(prefix)

/* Every command, in `lockbench --help` order (generated from the manifest). */
extern const struct lb_workload *const lb_workloads[];
extern const size_t lb_nworkloads;

/* The one run by a bare `lockbench` (the default comparison, bench/micro). */
extern const struct lb_workload lb_workload_default;

/* A command by name; NULL when unknown. */
const struct lb_workload *lb_workload_find(const char *name);

/* 0 when every descriptor of table[0..n) has what its kind needs (name,
 * summary; parse, run, report, config_size and options, or main; a schema
 * that is in `schemas` (NULL-terminated) with a name and metrics, and then
 * outputs); names unique.  Else one line per fault on `err`, and -1. */
int lb_workload_check_table(const struct lb_workload *const *table, size_t n,
			    const struct lb_workload_schema *const *schemas, FILE *err);
/* The check over the generated table and the default comparison. */
int lb_workload_check(FILE *err);

/* The lifecycle above for a workload; the exit status. */
int lb_driver_run(const struct lb_workload *w, int argc, char **argv);

#endif /* LB_WORKLOAD_H */
