/* SPDX-License-Identifier: MIT */
/*
 * test_opt.c - lib/lb_opt.c on a table of every kind: defaults, values,
 * which rows were given, aliases and dashed twins, the one-line errors with
 * exit 2 (run in a child), --help, --list-options.
 */
#include "lb_cli.h"
#include "lb_opt.h"
#include "lb_time.h"
#include "tap.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct sample {
	unsigned int count;
	int level, mode;
	uint64_t dur_ns, big;
	unsigned int list[4];
	size_t nlist;
	const char *name;
	bool flag;
	int snake;
};

static const char *const modes[] = { "a", "b", "c", NULL };

static const struct lb_opt sample_opts[] = {
	{ .name = "count", .short_name = 'c', .kind = LB_OPT_UINT, .arg = "N",
	  .help = "a count\nsecond line", .def = "3", .min = 1, .max = 10,
	  .offset = LB_OPT_AT(struct sample, count, unsigned int) },
	{ .name = "level", .kind = LB_OPT_INT, .arg = "L", .help = "a level", .min = 0, .max = 5,
	  .unit = "steps", .offset = LB_OPT_AT(struct sample, level, int) },
	{ .name = "mode", .kind = LB_OPT_ENUM, .arg = "M", .help = "a mode", .choices = modes,
	  .offset = LB_OPT_AT_INT(struct sample, mode) },
	{ .name = "dur", .kind = LB_OPT_DURATION, .arg = "T", .help = "a time", .def = "1s",
	  .unit_ns = LB_NS_PER_S, .min = LB_NS_PER_MS, .max = 10 * LB_NS_PER_S,
	  .invalid = "a valid time", .accepted = "1ms..10s",
	  .offset = LB_OPT_AT(struct sample, dur_ns, uint64_t) },
	{ .name = "big", .kind = LB_OPT_U64, .arg = "N", .help = "a big number", .max = UINT64_MAX,
	  .offset = LB_OPT_AT(struct sample, big, uint64_t) },
	{ .name = "list", .kind = LB_OPT_UINT_LIST, .arg = "LIST", .help = "a list", .def = "1,2",
	  .min = 1, .max = 9, .cap = 4, .offset = LB_OPT_AT(struct sample, list, unsigned int *),
	  .count_offset = LB_OPT_AT(struct sample, nlist, size_t) },
	{ .name = "name", .retired_short = 'N', .kind = LB_OPT_STRING, .arg = "S",
	  .help = "a name", .needs = "a name", .offset = LB_OPT_AT(struct sample, name, const char *) },
	{ .name = "snake_case", .alias = "old_name", .kind = LB_OPT_INT, .arg = "N",
	  .help = "a kernel-style name", .min = 0, .max = 9,
	  .offset = LB_OPT_AT(struct sample, snake, int) },
	{ .name = "flag", .short_name = 'f', .kind = LB_OPT_FLAG, .help = "a flag",
	  .offset = LB_OPT_AT(struct sample, flag, bool) },
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};

static const struct lb_opt_cmd sample_cmd = {
	.name = "sample",
	.usage = "usage: sample [options]\n\n",
	.epilogue = "\nthe end\n",
	.opts = sample_opts,
	.dashed_twins = true,
};

/* argv as a NULL-terminated list after the command name; returns argc. */
static int make_argv(char **argv, const char *const *args)
{
	int argc = 0;
	argv[argc++] = (char *)"sample";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return argc;
}

static bool parse_ok(const char *const *args, struct sample *s, struct lb_opt_seen *seen)
{
	char *argv[32];
	int argc = make_argv(argv, args);
	memset(s, 0, sizeof(*s));
	lb_opt_parse(&sample_cmd, argc, argv, s, seen);
	return true;
}

static const struct lb_opt_cmd alone_cmd = {
	.name = "alone",
	.usage = "usage: alone\n",
	.opts = sample_opts,
	.help_alone = true,
};

/* Parse in a child; its exit status, stdout and stderr. */
static int parse_child_cmd(const struct lb_opt_cmd *cmd, const char *const *args, char *out,
			   size_t outlen, char *err, size_t errlen)
{
	int po[2], pe[2];
	if (pipe(po) || pipe(pe))
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[32];
		struct sample s = { 0 };
		struct lb_opt_seen seen;
		dup2(po[1], 1);
		dup2(pe[1], 2);
		int argc = make_argv(argv, args);
		lb_opt_parse(cmd, argc, argv, &s, &seen);
		fflush(stdout);
		_exit(0);
	}
	close(po[1]);
	close(pe[1]);
	ssize_t n = read(po[0], out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(pe[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(po[0]);
	close(pe[0]);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int parse_child(const char *const *args, char *out, size_t outlen, char *err, size_t errlen)
{
	return parse_child_cmd(&sample_cmd, args, out, outlen, err, errlen);
}

static bool one_line(const char *s)
{
	const char *nl = strchr(s, '\n');
	return nl && nl[1] == '\0';
}

static void check_bad(const char *const *args, const char *needle1, const char *needle2)
{
	char out[4096], err[4096];
	int rc = parse_child(args, out, sizeof(out), err, sizeof(err));
	bool good = rc == 2 && !out[0] && one_line(err) && strstr(err, needle1) &&
		    (!needle2 || strstr(err, needle2));
	if (!tap_ok(good, "%s %s: exit 2, one line naming '%s'", args[0], args[1] ? args[1] : "",
		    needle1))
		tap_diag("rc=%d stderr=%s", rc, err);
}

int main(void)
{
	struct sample s;
	struct lb_opt_seen seen;
	lb_cli_set_prog("sample");

	const char *none[] = { NULL };
	parse_ok(none, &s, &seen);
	tap_ok(s.count == 3 && s.dur_ns == LB_NS_PER_S && s.nlist == 2 && s.list[1] == 2 &&
		       !s.flag && !s.name && !seen.given && seen.first_operand == 1,
	       "defaults come from the rows; nothing given");

	const char *all[] = { "-c", "5", "--level=4", "--mode", "b", "--dur", "2ms", "--big",
			      "18446744073709551615", "--list", "3-5", "--name", "x", "-f",
			      "--snake-case", "7", NULL };
	parse_ok(all, &s, &seen);
	tap_ok(s.count == 5 && s.level == 4 && s.mode == 1 && s.dur_ns == 2 * LB_NS_PER_MS &&
		       s.big == UINT64_MAX && s.nlist == 3 && s.list[2] == 5 && !strcmp(s.name, "x") &&
		       s.flag && s.snake == 7,
	       "every kind parses into its field");
	tap_ok(lb_opt_given(&sample_cmd, &seen, "count") &&
		       lb_opt_given(&sample_cmd, &seen, "snake_case") &&
		       !lb_opt_given(&sample_cmd, &seen, "help"),
	       "lb_opt_given: the rows given, under any spelling");
	const char *alias[] = { "--old-name", "2", NULL };
	parse_ok(alias, &s, &seen);
	tap_ok(s.snake == 2, "an alias and its dashed twin reach the row");

	check_bad((const char *const[]){ "--count", "11", NULL }, "--count: '11'", "accepted: 1..10");
	check_bad((const char *const[]){ "--level", "6", NULL }, "--level", "accepted: 0..5 steps");
	check_bad((const char *const[]){ "--mode", "z", NULL }, "--mode", "accepted: a, b, c");
	check_bad((const char *const[]){ "--dur", "1h", NULL }, "is not a valid time", "1ms..10s");
	check_bad((const char *const[]){ "--list", "1,,2", NULL }, "--list", "1..9");
	check_bad((const char *const[]){ "--name", "", NULL }, "--name: needs a name", NULL);
	check_bad((const char *const[]){ "--old-name", "x", NULL }, "--old-name:", "0..9");
	check_bad((const char *const[]){ "--nope", NULL }, "--nope", "accepted: --count");
	check_bad((const char *const[]){ "stray", NULL }, "stray", "accepted");
	check_bad((const char *const[]){ "--help", "stray", NULL }, "stray", NULL);
	check_bad((const char *const[]){ "--flag=1", NULL }, "takes no value", NULL);
	/* A retired letter: with a value, glued or not, or none, the line names the row. */
	check_bad((const char *const[]){ "-N", "x", NULL }, "-N: no longer short for --name",
		  "accepted: --name S");
	check_bad((const char *const[]){ "-Nx", NULL }, "-N:", "accepted: --name S");
	check_bad((const char *const[]){ "-f", "-N", NULL }, "-N:", "accepted: --name S");

	char out[4096], err[4096];
	int rc = parse_child((const char *const[]){ "--help", NULL }, out, sizeof(out), err,
			     sizeof(err));
	tap_ok(rc == 0 && !strncmp(out, "usage: sample", 13) &&
		       strstr(out, "  -c, --count N          a count\n"
				   "                         second line\n") &&
		       strstr(out, "(also --old_name)") && strstr(out, "the end\n") && !err[0],
	       "--help: usage, one entry per row (continuation lines indented), epilogue");
	rc = parse_child((const char *const[]){ "--list-options", NULL }, out, sizeof(out), err,
			 sizeof(err));
	tap_ok(rc == 0 && strstr(out, "--count -c N\n") && strstr(out, "--flag -f -\n") &&
		       strstr(out, "--old_name - N\n") && strstr(out, "--name - S\n"),
	       "--list-options: one line per row and alias");
	rc = parse_child_cmd(&alone_cmd, (const char *const[]){ "--help", "-f", NULL }, out,
			     sizeof(out), err, sizeof(err));
	tap_ok(rc == 2 && !out[0] && one_line(err) && strstr(err, "--help takes no other"),
	       "help_alone: --help with another option is an error");
	rc = parse_child_cmd(&alone_cmd, (const char *const[]){ "--help", NULL }, out, sizeof(out),
			     err, sizeof(err));
	tap_ok(rc == 0 && !strncmp(out, "usage: alone", 12), "help_alone: --help alone prints");
	return tap_done();
}
