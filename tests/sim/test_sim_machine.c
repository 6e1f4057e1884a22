/* SPDX-License-Identifier: MIT */
/*
 * test_sim_machine.c MACHINE-FILE... - the machine-file parser: every
 * shipped file loads, and each kind of bad input gets one line naming the
 * file, the line and the field.
 */
#include "sim_test.h"

#include <string.h>

static const char *good = SIM_TEST_MACHINE(2, 2);

/* good with the line of `field` replaced (appended when `field` is ""). */
static void with_line(char *out, size_t len, const char *field, const char *line)
{
	const char *at = *field ? strstr(good, field) : NULL;
	if (!at) {
		snprintf(out, len, "%s%s\n", good, line);
		return;
	}
	const char *end = strchr(at, '\n');
	snprintf(out, len, "%.*s%s%s", (int)(at - good), good, line, end);
}

static void expect_error(const char *text, const char *want, const char *what)
{
	struct lb_sim_machine m;
	char err[512] = "";
	int rc = lb_sim_machine_parse(text, "m.machine", &m, err, sizeof(err));
	tap_ok(rc == -1 && strstr(err, want) && !strchr(err, '\n'),
	       "%s: one line with '%s' (%s)", what, want, err);
}

int main(int argc, char **argv)
{
	char text[2048], err[512];
	struct lb_sim_machine m;
	for (int i = 1; i < argc; i++) {
		int rc = lb_sim_machine_load(argv[i], &m, err, sizeof(err));
		tap_ok(rc == 0 && lb_sim_machine_cpus(&m) >= 2, "%s loads: %s, %u CPUs",
		       argv[i], rc ? err : m.name, rc ? 0 : lb_sim_machine_cpus(&m));
	}
	tap_ok(lb_sim_machine_parse(good, "m.machine", &m, err, sizeof(err)) == 0 &&
	       m.cross_socket == 200 && lb_sim_machine_cpus(&m) == 4,
	       "the round machine parses (cross_socket %llu)",
	       (unsigned long long)m.cross_socket);
	with_line(text, sizeof(text), "", "bogus 3");
	expect_error(text, "m.machine:18: unknown field 'bogus'; accepted: name, sockets",
		     "unknown field");
	with_line(text, sizeof(text), "sockets", "sockets two");
	expect_error(text, "m.machine:2: field 'sockets': 'two' is not valid; accepted: 1..64",
		     "not a number");
	with_line(text, sizeof(text), "sockets", "sockets 0");
	expect_error(text, "m.machine:2: field 'sockets': '0' is not valid", "out of range");
	with_line(text, sizeof(text), "cross_socket", "cross_socket -5");
	expect_error(text, "m.machine:8: field 'cross_socket': '-5' is not valid; accepted: "
		     "0..100000 ns", "negative latency");
	with_line(text, sizeof(text), "rmw", "rmw 10ns");
	expect_error(text, "m.machine:10: field 'rmw': '10ns'", "trailing junk");
	with_line(text, sizeof(text), "", "memory 90");
	expect_error(text, "m.machine:18: field 'memory' given twice (first on line 9)",
		     "duplicate");
	with_line(text, sizeof(text), "wakeup", "# wakeup left out");
	expect_error(text, "m.machine: field 'wakeup' missing", "missing field");
	with_line(text, sizeof(text), "wakeup", "wakeup");
	expect_error(text, "m.machine:12: field 'wakeup' has no value", "no value");
	expect_error(SIM_TEST_MACHINE(4, 256), "m.machine: field 'sockets' x 'cores_per_socket' "
		     "x 'smt' is 1024 CPUs; accepted: at most 512", "too many CPUs");
	with_line(text, sizeof(text), "name", "name two words");
	expect_error(text, "m.machine:1: field 'name': 'two words' is not one word", "name");
	with_line(text, sizeof(text), "", "source any text at all # and a comment");
	tap_ok(lb_sim_machine_parse(text, "m.machine", &m, err, sizeof(err)) == 0,
	       "source lines are free text (%s)", err);
	tap_ok(lb_sim_machine_load("/nonexistent/x.machine", &m, err, sizeof(err)) == -1 &&
	       strstr(err, "/nonexistent/x.machine: cannot open"), "a missing file: %s", err);
	return tap_done();
}
