/* SPDX-License-Identifier: MIT */
/*
 * test_c2c_pairs.c - the round trip by CPU pair (lib/lb_c2c_pairs.h): the
 * pairs it picks on this machine (none with fewer than three CPUs), and
 * its comment line and JSON on a fixed, made-up set of four nodes.  The
 * picking on a many-CPU, many-node machine is checked in the emulated
 * guest (tests/vm/guest_checks.py, "c2c_pairs").
 */
#include "lb_c2c_pairs.h"
#include "lb_cpulist.h"
#include "lb_json.h"
#include "tap.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static char *capture_print(const struct lb_c2c_pairs *set)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	lb_c2c_pairs_print(f, set);
	fclose(f);
	return buf;
}

static char *capture_json(const struct lb_c2c_pairs *set)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lb_json j;
	lb_json_init(&j, f);
	lb_json_object_begin(&j);
	lb_c2c_pairs_json(&j, set);
	lb_json_object_end(&j);
	fclose(f);
	return buf;
}

/* A made-up machine of 12 CPUs whose node ids have holes, and whose CPU
 * numbers do not follow node order: CPUs 0-2 on node 5, 3-5 on node 0,
 * 6-8 on node 2, 9-11 on node 7. */
static int sparse_node_of(int cpu)
{
	static const int node[12] = { 5, 5, 5, 0, 0, 0, 2, 2, 2, 7, 7, 7 };
	return cpu >= 0 && cpu < 12 ? node[cpu] : -1;
}

static void check_sparse_nodes(void)
{
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	for (int cpu = 1; cpu < 12; cpu++) /* not CPU 0: c0 is CPU 1 */
		CPU_SET(cpu, &cpus);
	struct lb_c2c_pairs set;
	lb_c2c_pick_pairs_on(&set, &cpus, sparse_node_of);
	char got[256] = "";
	for (size_t i = 0; i < set.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d-%d/%d-%d", i ? " " : "",
			 set.pair[i].cpu[0], set.pair[i].cpu[1], set.pair[i].node[0], set.pair[i].node[1]);
	tap_ok(strcmp(got, "1-2/5-5 1-3/5-0 1-6/5-2 1-9/5-7") == 0,
	       "node ids 0, 2, 5, 7 (holes, out of CPU order): the neighbour, then each other node "
	       "in node order: '%s'", got);
}

static void squeeze(char *s) /* drop white space: the layout is lb_json's */
{
	char *o = s;
	for (; *s; s++)
		if (*s != ' ' && *s != '\n')
			*o++ = *s;
	*o = 0;
}

int main(void)
{
	tap_plan(6);
	cpu_set_t allowed;
	lb_cpulist_allowed(&allowed);
	int first = 0;
	while (first < CPU_SETSIZE && !CPU_ISSET(first, &allowed))
		first++;
	struct lb_c2c_pairs set;
	lb_c2c_pick_pairs(&set);
	if (CPU_COUNT(&allowed) < 3)
		tap_ok(set.n == 0, "%d CPUs allowed: no pairs (got %zu)", CPU_COUNT(&allowed), set.n);
	else
		tap_ok(set.n >= 1 && set.pair[0].cpu[0] == first && set.pair[0].ns < 0,
		       "%d CPUs allowed: pairs from CPU%d, not yet measured (%zu)",
		       CPU_COUNT(&allowed), first, set.n);
	/* Pinned to one CPU, the process has nothing to pair. */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	sched_setaffinity(0, sizeof(one), &one);
	lb_c2c_pick_pairs(&set);
	tap_ok(set.n == 0, "one CPU allowed: no pairs (got %zu)", set.n);
	sched_setaffinity(0, sizeof(allowed), &allowed);
	check_sparse_nodes();

	struct lb_c2c_pairs none = { .n = 0 };
	char *text = capture_print(&none);
	tap_ok(text && !*text, "no pairs: no line");
	free(text);

	struct lb_c2c_pairs four = {
		.pair = { { { 0, 1 }, { 0, 0 }, 101.4 }, { { 0, 4 }, { 0, 1 }, 250.6 },
			  { { 0, 8 }, { 0, 2 }, -1 }, { { 0, 12 }, { 0, 3 }, 399.0 } },
		.n = 4,
	};
	text = capture_print(&four);
	const char *want = "# cache-line round trip by CPU pair (before the runs): CPU0<->CPU1 (node 0) "
			   "101 ns; CPU0<->CPU4 (nodes 0-1) 251 ns; CPU0<->CPU8 (nodes 0-2) not "
			   "measured; CPU0<->CPU12 (nodes 0-3) 399 ns";
	/* Unwrap the continuation lines before comparing. */
	char flat[1024] = "";
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		snprintf(flat + strlen(flat), sizeof(flat) - strlen(flat), "%s%s", *flat ? " " : "",
			 *flat ? line + 4 : line);
	tap_ok(strcmp(flat, want) == 0, "the line: '%s'", flat);
	free(text);

	char *json = capture_json(&four);
	squeeze(json);
	const char *want_json = "{\"c2c_pairs\":[{\"cpus\":[0,1],\"nodes\":[0,0],\"round_trip_ns\":101.4},"
				"{\"cpus\":[0,4],\"nodes\":[0,1],\"round_trip_ns\":250.6},"
				"{\"cpus\":[0,8],\"nodes\":[0,2],\"round_trip_ns\":null},"
				"{\"cpus\":[0,12],\"nodes\":[0,3],\"round_trip_ns\":399}]}";
	tap_ok(json && strcmp(json, want_json) == 0, "the JSON: %s", json);
	free(json);
	return tap_failed ? 1 : 0;
}
