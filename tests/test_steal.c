/* SPDX-License-Identifier: MIT */
/*
 * test_steal.c - lib/lb_steal.h on fixed /proc/stat text: the aggregate
 * line's 8th field, whatever comes around it; the texts it must refuse; the
 * tick arithmetic; and one read of this machine's /proc/stat.
 */
#include "lb_steal.h"
#include "tap.h"

#include <unistd.h>

/* A 2-CPU guest of a busy host (Linux 6.1). */
static const char stat_busy[] =
	"cpu  1219897 171659 471486 760508 2294 0 12602 98765 0 0\n"
	"cpu0 614800 91222 233944 374993 463 0 3356 50000 0 0\n"
	"cpu1 605097 80437 237542 385514 1831 0 9245 48765 0 0\n"
	"intr 123456 0 0\n"
	"ctxt 987654\n"
	"btime 1764900000\n"
	"procs_running 3\n";

static void test_parse(void)
{
	uint64_t t = 0;
	int rc = lb_steal_parse(stat_busy, &t);
	tap_ok(rc == 0 && t == 98765,
	       "the aggregate line's 8th field: 98765 (got %llu)", (unsigned long long)t);

	t = 1;
	rc = lb_steal_parse("cpu  1 2 3 4 5 6 7 0 0 0\ncpu0 1 2 3 4 5 6 7 9 0 0\n", &t);
	tap_ok(rc == 0 && t == 0,
	       "zero steal reads as 0, not cpu0's 9 (got %llu)", (unsigned long long)t);

	/* Not first: a line of another name before it; tabs between fields. */
	t = 0;
	rc = lb_steal_parse("intr 1 2\ncpu\t10\t20 30 40 50 60 70 18446744073709551615\n", &t);
	tap_ok(rc == 0 && t == UINT64_MAX,
	       "the line found after others, tab separated, the largest value (got %llu)",
	       (unsigned long long)t);

	/* A per-CPU line alone is not the aggregate. */
	tap_ok(lb_steal_parse("cpu0 1 2 3 4 5 6 7 8\n", &t) == -1, "cpu0 alone: refused");
	/* Kernels before 2.6.11: seven fields, no steal. */
	tap_ok(lb_steal_parse("cpu  1 2 3 4 5 6 7\n", &t) == -1, "seven fields: refused");
	tap_ok(lb_steal_parse("cpu  1 2 3 4 5 6 7 x\n", &t) == -1, "a non-number: refused");
	tap_ok(lb_steal_parse("cpu  1 2 3 4 5 6 7 99999999999999999999\n", &t) == -1,
	       "a value past 64 bits: refused");
	tap_ok(lb_steal_parse("", &t) == -1, "empty text: refused");
}

static void test_seconds(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	tap_ok(lb_steal_seconds(100, 100 + 3 * hz) == 3.0, "3 s of ticks: 3.0 s");
	tap_ok(lb_steal_seconds(100, 100) == 0.0, "no change: 0");
	tap_ok(lb_steal_seconds(200, 100) == 0.0, "a counter that went back: 0");
	tap_ok(lb_steal_seconds(-1, 100) < 0 && lb_steal_seconds(100, -1) < 0, "a failed read: -1");
}

int main(void)
{
	test_parse();
	test_seconds();
	int64_t now = lb_steal_ticks_now();
	if (access("/proc/stat", R_OK) == 0)
		tap_ok(now >= 0, "this machine's /proc/stat reads (steal %lld ticks)", (long long)now);
	return tap_done();
}
