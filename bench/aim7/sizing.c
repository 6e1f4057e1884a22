/* SPDX-License-Identifier: MIT */
/* sizing.c - the kernel's work sized from a cost table (sizing.h has the formula). */
#include "sizing.h"
#include "aim7.h"
#include "costs.h"
#include "lb_time.h"

#include <string.h>
#include <time.h>

static const char *const kop_names[AIM_NKOPS] = {
	"creat_walk", "creat_dir", "creat_new_dir", "link_walk", "link_dir", "unlink_walk",
	"unlink_dir", "lookup", "readdir", "brk", "fault", "fork_exit", "fork_exec", "signal",
	"shm_copy", "pipe_rt", "stream_rt", "dgram_rt", "tcp_rt", "udp_rt", "tcp_setup",
	"udp_setup", "pipeline", "file_read", "file_write", "fsync", "getpid", "orphan",
};

const char *aim_kop_name(int kop)
{
	return kop >= 0 && kop < AIM_NKOPS ? kop_names[kop] : "?";
}

static double pos(double x)
{
	return x > 0 ? x : 0;
}

/*
 * Where the kernel holds its locks (v3.14, as a model).  fs/namei.c
 * do_last() holds the directory's i_mutex only around lookup_open(): the
 * lookup, and ->create for a new name.  The O_TRUNC of an existing name
 * runs after it, outside the i_mutex: handle_truncate() -> do_truncate()
 * -> ext4_setattr(), which in v3.14 calls ext4_truncate() even for a file
 * already empty (a later commit, "ext4: in ext4_setattr(), only call
 * ext4_truncate() if there is no data to drop", stopped that), and
 * ext4_truncate() takes the superblock-global s_orphan_lock twice,
 * ext4_orphan_add() and ext4_orphan_del() (fs/ext4/namei.c), each across
 * the journal's get-write-access and the superblock / inode updates.  The
 * last unlink takes it in ext4_unlink() (orphan_add, under the directory's
 * i_mutex) and in ext4_evict_inode() (orphan_del, after it).  The table
 * times whole calls (CPU time where it has it); the parts come from
 * differences:
 *   lookup        = stat - getpid            (walk and lookup, no entry)
 *   truncate      = creat_existing - open_close; each orphan section half
 *                   of it (an upper bound: the journal handle's start and
 *                   stop run outside the lock)
 *   creat, outside = open_close - lookup;  inside = lookup
 *                   (new name: + creat_new - creat_existing, the ->create:
 *                   v3.14 do_last() holds the parent's i_mutex around
 *                   lookup_open() only, which runs vfs_create() ->
 *                   ext4_create(): the new inode, the directory entry,
 *                   the journal handle; the walk to the parent, the open
 *                   and the close run outside it, so the hold is this
 *                   part of the creat, not the whole call)
 *   link, inside  = link - stat;      outside: stat
 *   unlink, inside = unlink - getpid - 2 orphan sections; outside: getpid
 */
void aim_sizing_real_ns(const struct aim_costs *c, double *real)
{
	const double *ns = aim_costs_sizing_ns(c);
	double lookup = pos(ns[AIM_COST_STAT] - ns[AIM_COST_GETPID]);
	double orphan = pos(ns[AIM_COST_CREAT_EXISTING] - ns[AIM_COST_OPEN_CLOSE]) / 2;
	real[AIM_K_ORPHAN] = orphan;
	real[AIM_K_CREAT_WALK] = pos(ns[AIM_COST_CREAT_EXISTING] - lookup - 2 * orphan);
	real[AIM_K_CREAT_DIR] = lookup;
	real[AIM_K_CREAT_NEW_DIR] = lookup + pos(ns[AIM_COST_CREAT_NEW] - ns[AIM_COST_CREAT_EXISTING]);
	real[AIM_K_LINK_WALK] = ns[AIM_COST_STAT];
	real[AIM_K_LINK_DIR] = pos(ns[AIM_COST_LINK] - ns[AIM_COST_STAT]);
	real[AIM_K_UNLINK_WALK] = ns[AIM_COST_GETPID];
	real[AIM_K_UNLINK_DIR] = pos(ns[AIM_COST_UNLINK] - ns[AIM_COST_GETPID] - 2 * orphan);
	real[AIM_K_LOOKUP] = ns[AIM_COST_STAT];
	real[AIM_K_READDIR] = ns[AIM_COST_READDIR];
	real[AIM_K_BRK] = ns[AIM_COST_BRK];
	real[AIM_K_FAULT] = ns[AIM_COST_FAULT];
	real[AIM_K_FORK_EXIT] = ns[AIM_COST_FORK_EXIT];
	real[AIM_K_FORK_EXEC] = ns[AIM_COST_FORK_EXEC];
	real[AIM_K_SIGNAL] = ns[AIM_COST_SIGNAL];
	real[AIM_K_SHM_COPY] = ns[AIM_COST_SHM_COPY];
	real[AIM_K_PIPE_RT] = ns[AIM_COST_PIPE_RT];
	real[AIM_K_STREAM_RT] = ns[AIM_COST_STREAM_RT];
	real[AIM_K_DGRAM_RT] = ns[AIM_COST_DGRAM_RT];
	real[AIM_K_TCP_RT] = ns[AIM_COST_TCP_RT];
	real[AIM_K_UDP_RT] = ns[AIM_COST_UDP_RT];
	real[AIM_K_TCP_SETUP] = ns[AIM_COST_TCP_SETUP];
	real[AIM_K_UDP_SETUP] = ns[AIM_COST_UDP_SETUP];
	real[AIM_K_PIPELINE] = ns[AIM_COST_PIPELINE];
	real[AIM_K_FILE_READ] = ns[AIM_COST_FILE_READ];
	real[AIM_K_FILE_WRITE] = ns[AIM_COST_FILE_WRITE];
	real[AIM_K_FSYNC] = ns[AIM_COST_FSYNC];
	real[AIM_K_GETPID] = ns[AIM_COST_GETPID];
}

int aim_sizing_compute(const struct aim_workfile *wf, const struct aim_costs *c,
		       const double *native_ns, const double *count, double min_share,
		       struct aim_sizing *out)
{
	double real[AIM_NKOPS];
	double loops = out->loops_per_ns;
	memset(out, 0, sizeof(*out));
	out->loops_per_ns = loops;
	aim_sizing_real_ns(c, real);
	double scale = 0, total = 0;
	size_t n = wf->ntests < AIM_SIZING_MAX_TESTS ? wf->ntests : AIM_SIZING_MAX_TESTS;
	for (size_t t = 0; t < n; t++) {
		double r = 0;
		for (int op = 0; op < AIM_NKOPS; op++)
			r += count[t * AIM_NKOPS + op] * real[op];
		out->real_ns[t] = r;
		out->native_ns[t] = native_ns[t];
		total += wf->hits[t] * r;
	}
	/* The scale: from the tests that carry a real part of the time. */
	for (size_t t = 0; t < n; t++) {
		double r = out->real_ns[t];
		if (r > 0 && wf->hits[t] * r >= min_share * total &&
		    native_ns[t] / r > scale)
			scale = native_ns[t] / r;
	}
	if (scale <= 0)
		return -1;
	/* Never faster than the table's kernel: a lock section lasts as long
	 * as the real one (sizing.h, AIM_SIZING_MIN_SCALE). */
	if (scale < AIM_SIZING_MIN_SCALE)
		scale = AIM_SIZING_MIN_SCALE;
	out->on = true;
	out->scale = scale;
	out->from_cpu = c->have_cpu;
	/* Two orphan sections per truncating creat: a creat that slept slept
	 * in one of them. */
	if (c->have_sleep) {
		out->orphan_sleep_p = c->creat_sleep_frac / 2;
		out->orphan_sleep_ns = c->creat_offcpu_ns;
	}
	for (int op = 0; op < AIM_NKOPS; op++)
		out->kwork_ns[op] = scale * real[op];
	/* The table's view at this scale: a system test takes s R_t, a
	 * user-time test (no kernel op) its native time, as it would there. */
	double ideal_total = 0;
	for (size_t t = 0; t < n; t++) {
		double target = scale * out->real_ns[t];
		out->pad_frac[t] = target > 0 ? pos(1 - native_ns[t] / target) : 0;
		out->target_ns[t] = target > native_ns[t] ? target : native_ns[t];
		out->share_table[t] = wf->hits[t] * (target > 0 ? target : native_ns[t]);
		ideal_total += out->share_table[t];
	}
	for (size_t t = 0; t < n; t++)
		out->share_table[t] = ideal_total > 0 ? out->share_table[t] / ideal_total : 0;
	return 0;
}

void aim_sizing_shares(const struct aim_workfile *wf, const struct aim_sizing *sz,
		       const double *ns, double *shares)
{
	double sum = 0;
	size_t n = wf->ntests < AIM_SIZING_MAX_TESTS ? wf->ntests : AIM_SIZING_MAX_TESTS;
	for (size_t t = 0; t < n; t++) {
		shares[t] = ns ? wf->hits[t] * ns[t] : sz->share_table[t];
		sum += shares[t];
	}
	for (size_t t = 0; t < n; t++)
		shares[t] = sum > 0 ? shares[t] / sum : 0;
}

/* The burn loop: a dependent multiply-add chain the compiler cannot fold
 * (the result goes to a volatile sink). */
static uint64_t burn(uint64_t loops)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (uint64_t i = 0; i < loops; i++)
		x = x * 6364136223846793005ull + i;
	return x;
}

/* This thread's CPU time: the loop's rate without the time other threads
 * ran on its CPU (a wall clock would undercount it on a loaded machine and
 * every padding would then come out short). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return lb_now_ns();
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double aim_kwork_calibrate(void)
{
	double best = 0;
	const uint64_t loops = 1u << 20;
	volatile uint64_t sink;
	for (int i = 0; i < 7; i++) {
		uint64_t t0 = cpu_ns();
		sink = burn(loops);
		uint64_t dt = cpu_ns() - t0;
		double rate = dt ? (double)loops / (double)dt : 0;
		best = rate > best ? rate : best; /* the least disturbed try */
	}
	(void)sink;
	return best > 0 ? best : 1;
}

uint64_t aim_kwork_burn(double ns, double loops_per_ns)
{
	return ns >= 1 ? burn((uint64_t)(ns * loops_per_ns)) : 0;
}
