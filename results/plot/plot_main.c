/* SPDX-License-Identifier: MIT */
/*
 * plot_main.c - `lockbench plot FILE.json... -o DIR`: read every file first
 * (a bad one stops everything with exit 2), write one gnuplot script per
 * file, run gnuplot, and move the pictures into place only when it
 * succeeded (no half-drawn picture is ever left under its final name).
 */
#include "plot.h"
#include "ab_paired.h"
#include "plot_overlay.h"
#include "workload.h"
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_outfile.h"
#include "lb_progress.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FILES 64

extern char **environ;

/*
 * Signals (INT, TERM, HUP, QUIT) end the command with nothing half-made
 * left: they stay blocked except while gnuplot runs, when the handler
 * kills gnuplot (SIGKILL, then waits, so it can create nothing more),
 * removes the script and the pictures' temporaries, and dies of the
 * signal.  Pictures already renamed into place are kept.  The handler
 * gets no context: these are the command's only globals, written with the
 * signals blocked and read only by the handler.
 */
static volatile pid_t gnuplot_pid;
static const char *volatile pending_script;
static const struct lb_plot_outputs *volatile pending_outputs;

static void on_stop_signal(int sig)
{
	pid_t pid = gnuplot_pid;
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (pending_script)
		unlink(pending_script); /* async-signal-safe, as everything here */
	const struct lb_plot_outputs *o = pending_outputs;
	for (size_t i = 0; o && i < o->n; i++)
		unlink(o->tmp[i]);
	signal(sig, SIG_DFL);
	raise(sig); /* blocked in the handler: delivered as it returns */
}

static void install_stop_handlers(void)
{
	sigset_t set;
	lb_stop_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	lb_stop_signals_catch(on_stop_signal, 0, NULL);
}

/* What the command line asks for. */
struct plot_args {
	const char *dir;
	int formats; /* LB_PLOT_SVG | LB_PLOT_PNG */
	bool overlay; /* --overlay */
};

static int parse_formats(const struct lb_opt *opt, const char *arg, void *base)
{
	char buf[64], *items[4];
	size_t n;
	int formats = 0;
	if (strlen(arg) >= sizeof(buf) || lb_split_names(strcpy(buf, arg), items, 4, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(items[i], "svg"))
			formats |= LB_PLOT_SVG;
		else if (!strcmp(items[i], "png"))
			formats |= LB_PLOT_PNG;
		else
			lb_usage_error("--%s: unknown format '%s'; accepted: %s", opt->name, items[i],
				       opt->accepted);
	}
	((struct plot_args *)base)->formats = formats;
	return 0;
}

static const struct lb_opt plot_opts[] = {
	{ .name = "output", .short_name = 'o', .kind = LB_OPT_STRING, .arg = "DIR",
	  .help = "directory for the pictures (created if missing;\nits parent must exist)",
	  .needs = "a directory", .offset = LB_OPT_AT(struct plot_args, dir, const char *) },
	{ .name = "format", .short_name = 'f', .kind = LB_OPT_CUSTOM, .arg = "LIST",
	  .help = "svg, png or svg,png (default svg,png)", .def = "svg,png",
	  .parse = parse_formats, .accepted = "svg, png, svg,png" },
	{ .name = "overlay", .kind = LB_OPT_FLAG,
	  .help = "one picture of all the files: every curve with\nerror bars, and a delta-% panel against the first\nfile (DIR/overlay-METRIC-vs-X); one ab file: its\npaired ratios, as without --overlay",
	  .offset = LB_OPT_AT(struct plot_args, overlay, bool) },
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};

static const struct lb_opt_cmd plot_cmd = {
	.name = "lockbench plot",
	.usage = "usage: lockbench plot [options] -o DIR FILE.json [FILE.json ...]\n"
		 "\n"
		 "Draw result files with gnuplot (Debian package gnuplot-nox).  For each\n"
		 "file, into DIR as NAME-PICTURE.svg and .png (NAME: the file's name):\n"
		 "  bench: ops/s against threads per lock with +-1 sd error bars; the\n"
		 "         acquisition-latency distribution per lock on log axes, one\n"
		 "         picture per thread count; the per-thread share of operations\n"
		 "         at the largest thread count (fairness)\n"
		 "  aim7:  jobs/min against users\n"
		 "  ab:    the paired ratio B/A per cell with its interval, log axis\n"
		 "  rt:    RT latencies and hackbench time, one bar per list lock, and\n"
		 "         the latency histograms (with rt --histogram)\n"
		 "  other workloads: their headline metric against their first numeric\n"
		 "         param (one bar per cell when that param takes one value)\n"
		 "Every picture is titled with what it shows, the host and the command\n"
		 "that produced the data; NAME.gp keeps the gnuplot script.\n"
		 "\n",
	.opts = plot_opts,
	.operands = true,
};

/* gnuplot's path on PATH, or NULL. */
static char *find_gnuplot(void)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		return NULL;
	char *copy = strdup(path), *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		size_t len = strlen(dir) + sizeof("/gnuplot");
		char *cand = malloc(len);
		if (!cand)
			break;
		snprintf(cand, len, "%s/gnuplot", dir);
		if (access(cand, X_OK) == 0) {
			free(copy);
			return cand;
		}
		free(cand);
	}
	free(copy);
	return NULL;
}

static char *prefix_of(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char *s = strdup(base);
	if (!s)
		lb_usage_error("out of memory");
	char *dot = strrchr(s, '.');
	if (dot && dot != s && !strcmp(dot, ".json"))
		*dot = '\0';
	return s;
}

static int run_gnuplot(const char *gnuplot, const char *script)
{
	pid_t pid;
	/* "./x" for a relative path: a directory named "-x" is no option. */
	size_t len = strlen(script) + 3;
	char *arg = malloc(len);
	if (!arg)
		return -1;
	snprintf(arg, len, "%s%s", script[0] == '/' ? "" : "./", script);
	char *argv[] = { (char *)"gnuplot", arg, NULL };
	/* gnuplot starts with the signals unblocked and at their defaults. */
	sigset_t none, stops;
	sigemptyset(&none);
	lb_stop_signal_set(&stops);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &stops);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int err = posix_spawn(&pid, gnuplot, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	free(arg);
	if (err) {
		fprintf(stderr, "%s: cannot run %s: %s\n", lb_cli_prog(), gnuplot, strerror(err));
		return -1;
	}
	int status, rc = 0;
	gnuplot_pid = pid;
	sigprocmask(SIG_UNBLOCK, &stops, NULL); /* a signal now ends gnuplot and us */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			rc = -1;
			break;
		}
	sigprocmask(SIG_BLOCK, &stops, NULL);
	gnuplot_pid = 0;
	if (rc)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: gnuplot failed on %s (see above)\n", lb_cli_prog(), script);
		return -1;
	}
	return 0;
}

static void discard(struct lb_plot_outputs *o)
{
	for (size_t i = 0; i < o->n; i++) {
		unlink(o->tmp[i]);
		free(o->tmp[i]);
		free(o->final[i]);
	}
	free(o->tmp);
	free(o->final);
	memset(o, 0, sizeof(*o));
}

/* Rename every temporary into place; each picture must be non-empty. */
static int publish(struct lb_plot_outputs *o)
{
	int rc = 0;
	for (size_t i = 0; i < o->n; i++) {
		struct stat st;
		if (stat(o->tmp[i], &st) || st.st_size == 0) {
			fprintf(stderr, "%s: gnuplot wrote no %s\n", lb_cli_prog(), o->final[i]);
			rc = -1;
		} else if (rename(o->tmp[i], o->final[i])) {
			fprintf(stderr, "%s: cannot write %s: %s\n", lb_cli_prog(), o->final[i],
				strerror(errno));
			rc = -1;
		} else {
			printf("%s\n", o->final[i]);
		}
	}
	return rc;
}

/* What one script draws: the files and how; write() puts the script in gp
 * and returns how many pictures it makes (0: nothing to draw). */
struct plot_job {
	const struct lb_rfile *files;
	const char *const *names;
	size_t nfiles;
	const char *dir, *prefix; /* the script is DIR/PREFIX.gp */
	int formats;
	const char *nothing;      /* why there was nothing to draw */
	size_t (*write)(FILE *gp, const struct plot_job *job, struct lb_plot_outputs *o);
	struct lb_progress *progress; /* drawn while gnuplot runs (a terminal only) */
};

/*
 * Write the job's script to a temporary, run gnuplot on it, then move the
 * script and the pictures into place; a signal meanwhile removes the
 * temporaries (pending_*).  0 drawn, 1 failed (gnuplot, a write), 2 nothing
 * to draw (bad input).
 */
static int draw(const char *gnuplot, const struct plot_job *job)
{
	struct lb_plot_outputs o = { 0 };
	size_t len = strlen(job->dir) + strlen(job->prefix) + 16;
	char *script = malloc(len), *tmp_script = malloc(len + 8);
	int rc = 1;
	if (!script || !tmp_script)
		goto out;
	snprintf(script, len, "%s/%s.gp", job->dir, job->prefix);
	snprintf(tmp_script, len + 8, "%s/.%s.gp.tmp", job->dir, job->prefix);
	FILE *gp = fopen(tmp_script, "w");
	if (!gp) {
		fprintf(stderr, "%s: cannot write %s: %s\n", lb_cli_prog(), tmp_script, strerror(errno));
		goto out;
	}
	pending_script = tmp_script;
	pending_outputs = &o;
	size_t pictures = job->write(gp, job, &o);
	lb_plot_flush_notes(pictures > 0);
	if (fclose(gp) || pictures == 0) {
		if (pictures == 0) {
			fprintf(stderr, "%s: %s: nothing to draw (%s)\n", lb_cli_prog(),
				job->files[0].path, job->nothing);
			rc = 2;
		}
		unlink(tmp_script);
		goto out;
	}
	/* The status line only while gnuplot runs: every line of our own is
	 * printed before or after, with the line cleared. */
	lb_progress_step(job->progress, "%s: gnuplot drawing %zu picture(s)", job->prefix, pictures);
	int failed = run_gnuplot(gnuplot, tmp_script);
	lb_progress_clear(job->progress);
	lb_progress_step_done(job->progress);
	if (failed) {
		unlink(tmp_script);
		goto out;
	}
	rename(tmp_script, script);
	rc = publish(&o) ? 1 : 0;
out:
	discard(&o);
	pending_outputs = NULL;
	pending_script = NULL;
	free(script);
	free(tmp_script);
	return rc;
}

/* One file's pictures (plot_script.c). */
static size_t write_one(FILE *gp, const struct plot_job *job, struct lb_plot_outputs *o)
{
	if (lb_abp_is_ab(&job->files[0])) /* its pairing kept: the paired ratios alone */
		return lb_plot_ab(gp, &job->files[0], job->dir, job->prefix, job->formats, o);
	struct lb_plot_hints d;
	lb_plot_describe(&job->files[0], &d);
	return lb_plot_script(gp, &job->files[0], &d, job->dir, job->prefix, job->formats, o);
}

/* --overlay: one picture of every file (plot_overlay.c). */
static size_t write_overlay(FILE *gp, const struct plot_job *job, struct lb_plot_outputs *o)
{
	struct lb_plot_hints d;
	lb_plot_describe(&job->files[0], &d);
	return lb_plot_overlay(gp, job->files, job->names, job->nfiles, &d, job->dir, job->formats,
			       o);
}

static int plot_one(const char *gnuplot, const struct lb_rfile *f, const char *dir,
		    const char *prefix, int formats, struct lb_progress *pg)
{
	const struct plot_job job = {
		.files = f, .nfiles = 1, .dir = dir, .prefix = prefix, .formats = formats,
		.nothing = "no cell with a finite value of a metric it draws; accepted: a result "
			   "file with measured cells",
		.write = write_one, .progress = pg,
	};
	return draw(gnuplot, &job);
}

static int plot_overlay_all(const char *gnuplot, const struct lb_rfile *files,
			    const char *const *names, size_t nfiles, const char *dir, int formats,
			    struct lb_progress *pg)
{
	const struct plot_job job = {
		.files = files, .names = names, .nfiles = nfiles, .dir = dir, .prefix = "overlay",
		.formats = formats, .nothing = "--overlay: no curve metric and numeric param",
		.write = write_overlay, .progress = pg,
	};
	return draw(gnuplot, &job);
}

static int lb_cmd_plot(int argc, char **argv)
{
	struct plot_args args = { 0 };
	struct lb_opt_seen seen;
	lb_opt_parse(&plot_cmd, argc, argv, &args, &seen);
	const char *dir = args.dir;
	int formats = args.formats;
	int first_file = seen.first_operand;
	bool overlay = args.overlay;
	if (!dir)
		lb_usage_error("--output: needs a directory for the pictures; accepted: -o DIR");
	size_t nfiles = (size_t)(argc - first_file);
	if (nfiles == 0)
		lb_usage_error("needs a result file to draw; see 'lockbench plot --help'");
	if (nfiles > MAX_FILES)
		lb_usage_error("too many files (%zu); accepted: 1..%d", nfiles, MAX_FILES);
	char *gnuplot = find_gnuplot();
	if (!gnuplot)
		lb_usage_error("gnuplot is not installed (not found on PATH); install the Debian "
			       "package gnuplot-nox: apt-get install gnuplot-nox");

	struct lb_rfile *files = calloc(nfiles, sizeof(*files));
	char **prefixes = calloc(nfiles, sizeof(*prefixes));
	char err[1024];
	if (!files || !prefixes)
		lb_usage_error("out of memory");
	for (size_t i = 0; i < nfiles; i++) {
		if (lb_rfile_load(argv[first_file + i], &files[i], err, sizeof(err)))
			lb_usage_error("%s", err);
		prefixes[i] = prefix_of(argv[first_file + i]);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(prefixes[k], prefixes[i]))
				lb_usage_error("two files named '%s' would draw over each other; "
					       "accepted: files with different names", prefixes[i]);
	}
	if (mkdir(dir, 0777) && errno != EEXIST)
		lb_usage_error("--output: cannot create '%s': %s; accepted: a directory whose parent "
			       "exists", dir, strerror(errno));
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK))
		lb_usage_error("--output: '%s' is not a writable directory", dir);

	int rc = 0;
	install_stop_handlers();
	/* An ab file keeps its pairing: --overlay would draw its sides' means
	 * +- sd; one ab file draws its paired ratios instead, and overlaying
	 * ab files with each other is the sequential method (a warning). */
	if (overlay && nfiles == 1 && lb_abp_is_ab(&files[0]))
		overlay = false;
	for (size_t i = 0; overlay && i < nfiles; i++)
		if (lb_abp_is_ab(&files[i])) {
			fprintf(stderr, "%s: WARNING: --overlay of %zu files with ab files among them: "
				"the sequential method (each measured at another time); each ab "
				"file's own picture keeps its pairing\n", lb_cli_prog(), nfiles);
			break;
		}
	/* On a terminal only (a gnuplot run can take seconds); elsewhere the
	 * picture names printed are the log.  Begun with the stop signals
	 * blocked, so its ticker never takes one. */
	struct lb_progress pg;
	lb_progress_begin(&pg, stderr, isatty(STDERR_FILENO) != 1, overlay ? 1 : (unsigned)nfiles,
			  0, -1);
	if (overlay)
		rc = plot_overlay_all(gnuplot, files, (const char *const *)prefixes, nfiles, dir,
				      formats, &pg);
	for (size_t i = 0; i < nfiles && !overlay; i++) {
		int one = plot_one(gnuplot, &files[i], dir, prefixes[i], formats, &pg);
		rc = one > rc ? one : rc;
	}
	lb_progress_end(&pg);
	for (size_t i = 0; i < nfiles; i++) {
		lb_rfile_free(&files[i]);
		free(prefixes[i]);
	}
	free(files);
	free(prefixes);
	free(gnuplot);
	return rc;
}

const struct lb_workload lb_workload_plot = {
	.name = "plot",
	.summary = "pictures of result files through gnuplot (SVG, PNG)",
	.main = lb_cmd_plot,
};
