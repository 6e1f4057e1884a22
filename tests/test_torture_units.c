/* SPDX-License-Identifier: MIT */
/*
 * test_torture_units.c - locktorture's pure parts against fixed expectations:
 * the torture RNG (LCG constants, half-word swap, refresh period) and the
 * byte-exact kernel-format statistics line and banners.
 */
#include "tap.h"
#include "../torture/random.h"
#include "../torture/stats.h"
#include "../torture/delay.h"
#include "../torture/deadlock_verdict.h"

#include <errno.h>

#include <string.h>

static void test_random(void)
{
	/* From state 0: reference values computed independently (Python). */
	static const uint32_t expect[] = { 0xfc651c8cu, 0x41ca3613u, 0xd02f688fu };
	uint64_t state = 0;
	bool all = true;
	for (int i = 0; i < 3; i++)
		all &= lb_torture_random_step(&state) == expect[i];
	tap_ok(all, "rng: three steps from 0 give fc651c8c 41ca3613 d02f688f");
	tap_ok(state == 0x1f8101fb688fd02full, "rng: 64-bit state after three steps");

	state = 0xdeadbeefcafef00dull;
	uint32_t v = lb_torture_random_step(&state);
	tap_ok(v == 0xfd72e029u && state == 0x57c9530fe029fd72ull,
	       "rng: 64-bit wrap-around and half-word swap (got %08x)", v);

	/* Between stirs the generator is exactly the pure step. */
	struct lb_torture_random r = { .state = 12345, .left = 5 };
	uint64_t shadow = 12345;
	all = true;
	for (int i = 0; i < 5; i++)
		all &= lb_torture_random(&r) == lb_torture_random_step(&shadow);
	tap_ok(all && r.left == 0, "rng: no stir until the refresh count runs out");
	lb_torture_random(&r);
	tap_ok(r.left == LB_TORTURE_RANDOM_REFRESH - 1, "rng: stir resets the count to %d",
	       LB_TORTURE_RANDOM_REFRESH);
	struct lb_torture_random fresh;
	lb_torture_random_init(&fresh);
	lb_torture_random(&fresh);
	tap_ok(fresh.left == LB_TORTURE_RANDOM_REFRESH - 1 && fresh.state != 479001701u,
	       "rng: the first draw stirs with the clock and CPU");
}

static void expect_line(const char *got, const char *want, const char *what)
{
	if (!tap_ok(strcmp(got, want) == 0, "%s", what)) {
		tap_diag("got  '%s'", got);
		tap_diag("want '%s'", want);
	}
}

static void test_stats_lines(void)
{
	char buf[256];
	struct lb_torture_totals t = { .sum = 75575274, .max = 1085187, .min = 396665 };

	lb_torture_format_stats(buf, sizeof(buf), true, &t, false);
	expect_line(buf, "Writes:  Total: 75575274  Max/Min: 1085187/396665 ???  Fail: 0 \n",
		    "stats: the kernel's real Writes line, with ??? and the trailing space");
	lb_torture_format_stats(buf, sizeof(buf), true, &t, true);
	expect_line(buf, "Writes:  Total: 75575274  Max/Min: 1085187/396665   Fail: 0 \n",
		    "stats: onoff_interval != 0 suppresses ???");

	struct lb_torture_totals r = { .sum = 30, .max = 10, .min = 5, .fail = true };
	lb_torture_format_stats(buf, sizeof(buf), false, &r, false);
	expect_line(buf, "Reads :  Total: 30  Max/Min: 10/5   Fail: 1 !!!\n",
		    "stats: Reads line, max/2 == min is not ???, failure shows 1 !!!");
	r.min = 4;
	lb_torture_format_stats(buf, sizeof(buf), false, &r, false);
	expect_line(buf, "Reads :  Total: 30  Max/Min: 10/4 ???  Fail: 1 !!!\n",
		    "stats: max/2 > min gives ???");
	struct lb_torture_totals zero = { 0 };
	lb_torture_format_stats(buf, sizeof(buf), false, &zero, false);
	expect_line(buf, "Reads :  Total: 0  Max/Min: 0/0   Fail: 0 \n",
		    "stats: no readers prints zeros");
}

static void test_banner(void)
{
	char buf[2048];
	struct lb_torture_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.type = "pthread-mutex";
	CPU_ZERO(&cfg.bind_readers);
	for (int cpu = 0; cpu < 64; cpu++)
		CPU_SET(cpu, &cfg.bind_readers);
	CPU_ZERO(&cfg.bind_writers);
	CPU_SET(0, &cfg.bind_writers);
	for (int cpu = 2; cpu < 4; cpu++)
		CPU_SET(cpu, &cfg.bind_writers);
	CPU_SET(8, &cfg.bind_writers);
	cfg.long_hold = 100;
	cfg.nwriters_stress = 4;
	cfg.rt_boost = 2;
	cfg.rt_boost_factor = 50;
	cfg.shuffle_interval = 3;
	cfg.duration = 30;
	cfg.stat_interval = 60;
	cfg.stutter = 5;
	cfg.verbose = 1;

	lb_torture_format_banner(buf, sizeof(buf), &cfg, "Start of test", false);
	expect_line(buf,
		    "pthread-mutex-torture:--- Start of test: acq_writer_lim=0 bind_readers=0-63 "
		    "bind_writers=0,2-3,8 call_rcu_chains=0 long_hold=100 nested_locks=0 "
		    "nreaders_stress=0 nwriters_stress=4 onoff_holdoff=0 onoff_interval=0 "
		    "rt_boost=2 rt_boost_factor=50 shuffle_interval=3 shutdown_secs=30 "
		    "stat_interval=60 stutter=5 verbose=1 writer_fifo=0\n",
		    "banner: Start line, parameters in the kernel's order, cpulists as ranges");
	lb_torture_format_banner(buf, sizeof(buf), &cfg, "End of test: FAILURE", true);
	static const char end_head[] =
		"pthread-mutex-torture:--- End of test: FAILURE [debug]: acq_writer_lim=0 ";
	tap_ok(strncmp(buf, end_head, strlen(end_head)) == 0,
	       "banner: End line with verdict and [debug] tag");
}

/* Hold times follow the lock's role, not how its waiters wait. */
static void test_delay_model(void)
{
	static const struct {
		unsigned int flags;
		const char *model;
	} cases[] = {
		{ LB_LOCK_F_EXCLUSIVE, "spin_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_SLEEPS, "mutex_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_SLEEPS | LB_LOCK_F_SPIN_ROLE, "spin_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_SLEEPS | LB_LOCK_F_PI, "rtmutex_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW, "rw_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_SLEEPS, "rwsem_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_SLEEPS | LB_LOCK_F_SPIN_ROLE,
		  "rw_lock" },
		{ LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_BUSTED, "lock_busted" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_lock_ops ops = { .name = "x", .flags = cases[i].flags };
		const char *got = lb_torture_delay_model_name(lb_torture_delay_model_for(&ops));
		tap_ok(strcmp(got, cases[i].model) == 0, "delay model: flags %#x -> %s (got %s)",
		       cases[i].flags, cases[i].model, got);
	}
}

/* --deadlock: an injected cycle round judged from what its members saw. */
static void test_deadlock_round(void)
{
	int r1[] = { EDEADLK, 0 }, u1[] = { 0, 0 };
	tap_ok(lb_dl_judge_round(r1, u1, 2) == LB_DL_DETECTED, "deadlock round: EDEADLK is detected");
	int r2[] = { ETIMEDOUT, 0 }, u2[] = { 1, 0 };
	tap_ok(lb_dl_judge_round(r2, u2, 2) == LB_DL_TIMEOUT_ONLY,
	       "deadlock round: a timeout before the other member asked: timeout-only");
	int r3[] = { ETIMEDOUT, 0 }, u3[] = { 0, 0 };
	tap_ok(lb_dl_judge_round(r3, u3, 2) == LB_DL_MISSED,
	       "deadlock round: a timeout while every member waited: missed");
	int r4[] = { 0, ETIMEDOUT, ETIMEDOUT }, u4[] = { 0, 0, 1 };
	tap_ok(lb_dl_judge_round(r4, u4, 3) == LB_DL_TIMEOUT_ONLY,
	       "deadlock round, three members: one timeout saw a member not yet asking");
	int r5[] = { 0, 0, 0 }, u5[] = { 0, 0, 0 };
	tap_ok(lb_dl_judge_round(r5, u5, 3) == LB_DL_UNBROKEN,
	       "deadlock round: every member got its lock: unbroken");
	int r6[] = { ETIMEDOUT, EDEADLK }, u6[] = { 1, 0 };
	tap_ok(lb_dl_judge_round(r6, u6, 2) == LB_DL_DETECTED,
	       "deadlock round: EDEADLK beside a timeout is detected");
}

int main(void)
{
	test_deadlock_round();
	test_delay_model();
	test_random();
	test_stats_lines();
	test_banner();
	return tap_done();
}
