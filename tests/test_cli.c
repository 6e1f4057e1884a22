/* SPDX-License-Identifier: MIT */
/* test_cli.c - the strict option-value parsers in lb_cli.c. */
#include "lb_cli.h"
#include "lb_time.h"
#include "tap.h"

#include <string.h>

static void test_u64(void)
{
	uint64_t v = 7;
	tap_ok(lb_parse_u64("0", 0, UINT64_MAX, &v) == 0 && v == 0, "u64: 0");
	tap_ok(lb_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX, "u64: max");
	v = 7;
	tap_ok(lb_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) != 0 && v == 7,
	       "u64: max + 1 overflows, out untouched");
	tap_ok(lb_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v) != 0, "u64: far overflow");
	tap_ok(lb_parse_u64("-1", 0, UINT64_MAX, &v) != 0, "u64: -1 rejected");
	tap_ok(lb_parse_u64("+1", 0, UINT64_MAX, &v) != 0, "u64: +1 rejected");
	tap_ok(lb_parse_u64("", 0, UINT64_MAX, &v) != 0, "u64: empty rejected");
	tap_ok(lb_parse_u64(NULL, 0, UINT64_MAX, &v) != 0, "u64: NULL rejected");
	tap_ok(lb_parse_u64("12x", 0, UINT64_MAX, &v) != 0, "u64: trailing junk rejected");
	tap_ok(lb_parse_u64(" 1", 0, UINT64_MAX, &v) != 0, "u64: leading space rejected");
	tap_ok(lb_parse_u64("1 ", 0, UINT64_MAX, &v) != 0, "u64: trailing space rejected");
	tap_ok(lb_parse_u64("5", 6, 10, &v) != 0 && lb_parse_u64("11", 6, 10, &v) != 0, "u64: range enforced");
	tap_ok(lb_parse_u64("10", 6, 10, &v) == 0 && v == 10, "u64: range inclusive");

	unsigned int u;
	tap_ok(lb_parse_uint("4294967295", 0, UINT32_MAX, &u) == 0 && u == UINT32_MAX, "uint: max");
	tap_ok(lb_parse_uint("4294967296", 0, UINT32_MAX, &u) != 0, "uint: max + 1 rejected");
}

static void test_duration(void)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{ "5", 5 * LB_NS_PER_S },	  { "5s", 5 * LB_NS_PER_S },	{ "500ms", 500000000 }, { "2.5s", 2500000000 },
		{ "10us", 10000 },	  { "1m", 60 * LB_NS_PER_S },	{ "1h", 3600 * LB_NS_PER_S },	{ "250ns", 250 },
		{ "0.5", LB_NS_PER_S / 2 },	  { ".5s", LB_NS_PER_S / 2 },	{ "0", 0 },
	};
	static const char *const bad[] = { "5x", "5 s", "5S", "5sec", "-1", "-1s", "", "s", "1e3", "1.2.3s",
					   "5ss", " 5" };
	uint64_t ns;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ns = 1;
		int r = lb_parse_duration_ns(good[i].s, LB_NS_PER_S, 0, UINT64_MAX / 2, &ns);
		tap_ok(r == 0 && ns == good[i].ns, "duration \"%s\" = %llu ns (got %llu)", good[i].s,
		       (unsigned long long)good[i].ns, (unsigned long long)ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(lb_parse_duration_ns(bad[i], LB_NS_PER_S, 0, UINT64_MAX / 2, &ns) != 0, "duration \"%s\" rejected",
		       bad[i]);
	tap_ok(lb_parse_duration_ns("5", 1000000, 0, UINT64_MAX / 2, &ns) == 0 && ns == 5000000,
	       "duration: bare number uses the default unit (ms)");
	tap_ok(lb_parse_duration_ns("2s", LB_NS_PER_S, 0, LB_NS_PER_S, &ns) != 0, "duration above max rejected");
	tap_ok(lb_parse_duration_ns("1ms", LB_NS_PER_S, LB_NS_PER_S / 100, LB_NS_PER_S, &ns) != 0, "duration below min rejected");
}

static bool list_is(const char *s, const unsigned int *want, size_t nwant)
{
	unsigned int out[64];
	size_t n = 0;
	if (lb_parse_uint_list(s, 0, 1000, out, 64, &n))
		return false;
	return n == nwant && memcmp(out, want, n * sizeof(*out)) == 0;
}

static bool list_rejects(const char *s)
{
	unsigned int out[64];
	size_t n = 99;
	return lb_parse_uint_list(s, 0, 1000, out, 64, &n) != 0 && n == 99;
}

static void test_list(void)
{
	static const unsigned int a[] = { 1, 2, 8 }, b[] = { 1, 2, 3, 4 }, c[] = { 2, 4, 6, 8, 10, 12, 14, 16 },
				  d[] = { 7 }, e[] = { 0, 3, 4, 5, 9 }, f[] = { 1, 4 };
	unsigned int out[4];
	size_t n = 99;
	tap_ok(list_is("1,2,8", a, 3), "list 1,2,8");
	tap_ok(list_is("1-4", b, 4), "list 1-4");
	tap_ok(list_is("2-16:2", c, 8), "list 2-16:2");
	tap_ok(list_is("7", d, 1) && list_is("7-7", d, 1), "list single value and 7-7");
	tap_ok(list_is("0,3-5,9", e, 5), "list mixed 0,3-5,9");
	tap_ok(list_is("1-5:3", f, 2), "list step not landing on the end");
	tap_ok(list_rejects("4-1"), "list 4-1 rejected (reversed range)");
	tap_ok(list_rejects("1,,2"), "list 1,,2 rejected");
	tap_ok(list_rejects("1,") && list_rejects(",1") && list_rejects(""),
	       "list trailing/leading comma and empty rejected");
	tap_ok(list_rejects("1-4:0") && list_rejects("1-") && list_rejects("-1"),
	       "list zero step, open range, negative rejected");
	tap_ok(list_rejects("1 ,2") && list_rejects("a"), "list junk rejected");
	tap_ok(lb_parse_uint_list("1-5", 0, 1000, out, 4, &n) != 0, "list over cap (5 > 4) rejected");
	tap_ok(lb_parse_uint_list("1-4", 0, 1000, out, 4, &n) == 0 && n == 4, "list exactly at cap accepted");
	tap_ok(lb_parse_uint_list("0,1", 1, 8, out, 4, &n) != 0, "list value below min rejected");
	tap_ok(lb_parse_uint_list("7-9", 1, 8, out, 4, &n) != 0, "list range above max rejected");
	tap_ok(lb_parse_uint_list("4294967296", 0, UINT32_MAX, out, 4, &n) != 0, "list value beyond uint rejected");
}

/* Issue 15 item 1: no form wraps around.  Each case failed before the fix
 * (the range step wrapped below the start; a duration of 2^64 ns converted
 * with undefined behaviour). */
static void test_wrap_around(void)
{
	unsigned int out[64];
	size_t n = 99;
	/* Range with a step of UINT64_MAX: v += step wraps to v - 1. */
	tap_ok(lb_parse_uint_list("1-2:18446744073709551615", 1, 1024, out, 64, &n) == 0 && n == 1 &&
		       out[0] == 1,
	       "list 1-2:UINT64_MAX is just 1 (step never wraps below the start; got n=%zu)", n);
	n = 99;
	tap_ok(lb_parse_uint_list("1-1024:18446744073709551615", 1, 1024, out, 64, &n) == 0 && n == 1 &&
		       out[0] == 1,
	       "list 1-1024:UINT64_MAX is just 1");
	n = 99;
	tap_ok(lb_parse_uint_list("3-5:18446744073709551614", 1, 1024, out, 64, &n) == 0 && n == 1 &&
		       out[0] == 3,
	       "list 3-5:UINT64_MAX-1 is just 3");
	bool all_ge_min = true;
	if (lb_parse_uint_list("2-9:9223372036854775808", 2, 1024, out, 64, &n) == 0)
		for (size_t i = 0; i < n; i++)
			all_ge_min &= out[i] >= 2;
	tap_ok(all_ge_min, "list 2-9:2^63: every value at least the minimum");
	tap_ok(lb_parse_uint_list("1-2:18446744073709551616", 1, 1024, out, 64, &n) != 0,
	       "list step 2^64 (overflow) rejected");
	tap_ok(lb_parse_uint_list("18446744073709551615-18446744073709551615", 0, 1024, out, 64, &n) != 0,
	       "list range at UINT64_MAX rejected by max");
	tap_ok(lb_parse_uint_list("0-18446744073709551616", 0, 1024, out, 64, &n) != 0,
	       "list range end 2^64 (overflow) rejected");
	n = 0;
	tap_ok(lb_parse_uint_list("1023-1023:1", 0, 1023, out, 64, &n) == 0 && n == 1 && out[0] == 1023,
	       "list range at max with step");
	/* uint: a value beyond unsigned int must not truncate into range. */
	unsigned int u = 7;
	tap_ok(lb_parse_uint("4294967297", 0, 4294967295u, &u) != 0 && u == 7,
	       "uint: 2^32 + 1 rejected, not truncated to 1");
	/* Durations: the product with the unit must not wrap or overflow. */
	uint64_t ns = 7;
	tap_ok(lb_parse_duration_ns("18446744073709551616ns", 1, 0, UINT64_MAX, &ns) != 0 && ns == 7,
	       "duration 2^64 ns rejected (no undefined conversion)");
	tap_ok(lb_parse_duration_ns("18446744073709551615ns", 1, 0, UINT64_MAX, &ns) != 0,
	       "duration UINT64_MAX ns (rounds to 2^64 as a double) rejected");
	tap_ok(lb_parse_duration_ns("5124095576030432h", LB_NS_PER_S, 0, UINT64_MAX, &ns) != 0,
	       "duration hours beyond 2^64 ns rejected");
	tap_ok(lb_parse_duration_ns("99999999999999999999999999999999999999999s", LB_NS_PER_S, 0, UINT64_MAX,
				    &ns) != 0,
	       "duration 1e41 s rejected");
	tap_ok(lb_parse_duration_ns("1e400", LB_NS_PER_S, 0, UINT64_MAX, &ns) != 0, "duration 1e400 rejected");
	tap_ok(lb_parse_duration_ns("9223372036.854775807s", LB_NS_PER_S, 0, UINT64_MAX, &ns) == 0 &&
		       ns > 9223372036000000000ull,
	       "duration near 2^63 ns accepted when max allows");
	tap_ok(lb_parse_duration_ns("0.4ns", 1, 1, UINT64_MAX, &ns) != 0,
	       "duration 0.4ns rounds to 0, below min 1, rejected");
	/* Doubles: huge and tiny. */
	double d;
	tap_ok(lb_parse_double("1e308", 0, 1e300, &d) != 0, "double: exponent form rejected");
	tap_ok(lb_parse_double("18446744073709551616", 0, 100, &d) != 0, "double: 2^64 above max rejected");
}

static void test_names(void)
{
	char s1[] = "ticket,mcs,pthread", s2[] = "one", s3[] = "a,,b", s4[] = "a,b,c", s5[] = "a,", s6[] = "";
	char *out[2];
	char *out3[3];
	size_t n = 0;
	tap_ok(lb_split_names(s1, out3, 3, &n) == 0 && n == 3 && !strcmp(out3[0], "ticket") &&
		       !strcmp(out3[1], "mcs") && !strcmp(out3[2], "pthread"),
	       "names: ticket,mcs,pthread split in order");
	tap_ok(lb_split_names(s2, out, 2, &n) == 0 && n == 1 && !strcmp(out[0], "one"), "names: single name");
	tap_ok(lb_split_names(s3, out, 2, &n) != 0, "names: empty item rejected");
	tap_ok(lb_split_names(s4, out, 2, &n) != 0, "names: over cap rejected");
	tap_ok(lb_split_names(s5, out, 2, &n) != 0, "names: trailing comma rejected");
	tap_ok(lb_split_names(s6, out, 2, &n) != 0 && lb_split_names(NULL, out, 2, &n) != 0,
	       "names: empty string and NULL rejected");
}

int main(void)
{
	tap_diag("test_cli: lb_parse_u64, lb_parse_duration_ns, lb_parse_uint_list, lb_split_names");
	test_u64();
	test_duration();
	test_list();
	test_wrap_around();
	test_names();
	return tap_done();
}
