/* SPDX-License-Identifier: MIT */
/*
 * sim_measure.c - the probes of `lockbench sim --measure-machine`
 * (sim_measure.h).  Each is short (well under a second) and repeated; the
 * medians go into the file.  Run it in a quiet slot: a busy machine makes
 * every figure larger (doc/sim.md, "A machine measured here").
 */
#include "sim_measure.h"
#include "lb_c2c.h"
#include "lb_stats.h"
#include "lb_time.h"
#include "lb_topo.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define REPEATS 9        /* samples per probe (c2c: C2C_REPEATS) */
#define C2C_REPEATS 15   /* the host may move the vCPUs: more samples, spaced */
#define CHAIN_STEPS 1000000u
#define MEM_LINES (1u << 20) /* 64 MiB of lines: past any cache of this guest */
#define MEM_STEPS 500000u
#define SYSCALLS 100000u
#define PINGPONGS 1000u
#define PINGPONG_BUDGET_NS 2000000000ull /* a sample whose partner never ran is dropped */

struct line { _Alignas(64) _Atomic uint64_t v; char pad[56]; };

static double med_of(const struct lb_simb_probe *p)
{
	double med, lo, hi;
	lb_simb_probe_spread(p, &med, &lo, &hi);
	return med;
}

/* A chain of dependent loads on one private line: each address comes from
 * the previous load's value (always 0), so the loads cannot overlap. */
static double l1_hit_once(void)
{
	static struct line l[1];
	uint64_t idx = 0, t0 = lb_now_ns();
	for (unsigned int i = 0; i < CHAIN_STEPS; i++)
		idx = atomic_load_explicit(&l[idx].v, memory_order_relaxed);
	return (double)(lb_now_ns() - t0) / CHAIN_STEPS + (double)idx;
}

/* Locked adds on a private line held exclusive: the RMW's own cost is what
 * one takes beyond a hit (seq_cst: x86's lock xadd, a full barrier). */
static double rmw_once(void)
{
	static struct line l;
	uint64_t acc = 0, t0 = lb_now_ns();
	for (unsigned int i = 0; i < CHAIN_STEPS; i++)
		acc += atomic_fetch_add_explicit(&l.v, 1, memory_order_seq_cst);
	double ns = (double)(lb_now_ns() - t0) / CHAIN_STEPS;
	return ns + (double)(acc & 0); /* acc keeps the adds' results used */
}

/* A dependent walk over a random cycle of MEM_LINES lines: each load misses
 * every cache (and mostly the TLB: the figure includes the page walk). */
static double memory_once(struct line *buf)
{
	uint64_t idx = 0, t0 = lb_now_ns();
	for (unsigned int i = 0; i < MEM_STEPS; i++)
		idx = atomic_load_explicit(&buf[idx].v, memory_order_relaxed);
	return (double)(lb_now_ns() - t0) / MEM_STEPS + (double)(idx & 0);
}

static int memory_probe(struct lb_simb_probe *p)
{
	struct line *buf = aligned_alloc(64, (size_t)MEM_LINES * sizeof(*buf));
	uint32_t *order = malloc((size_t)MEM_LINES * sizeof(*order));
	if (!buf || !order) {
		free(buf);
		free(order);
		return -1;
	}
	uint64_t s = 0x9e3779b97f4a7c15ull; /* a fixed shuffle: the walk is the same every run */
	for (uint32_t i = 0; i < MEM_LINES; i++)
		order[i] = i;
	for (uint32_t i = MEM_LINES - 1; i > 0; i--) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t j = (uint32_t)((s >> 33) % (i + 1));
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < MEM_LINES; i++)
		atomic_store_explicit(&buf[order[i]].v, order[(i + 1) % MEM_LINES],
				      memory_order_relaxed);
	for (unsigned int r = 0; r < REPEATS; r++)
		p->samples[p->n++] = memory_once(buf);
	free(buf);
	free(order);
	return 0;
}

static double syscall_once(void)
{
	uint64_t t0 = lb_now_ns();
	for (unsigned int i = 0; i < SYSCALLS; i++)
		syscall(SYS_getppid);
	return (double)(lb_now_ns() - t0) / SYSCALLS;
}

/* Futex ping-pong: two threads, each sleeping until the other flips the
 * word.  Pinned to one CPU each wake-up is a switch; on two, a wake-up of a
 * sleeping thread on another CPU (IPI, idle exit, switch). */
struct pingpong {
	_Atomic uint32_t word;
	_Atomic int failed;
	int cpu;
	uint64_t deadline;
};

/* Sleep until pp->word != val; false past the deadline. */
static bool wait_flip(struct pingpong *pp, uint32_t val)
{
	/* acquire pairs with the partner's release store of the flip */
	while (atomic_load_explicit(&pp->word, memory_order_acquire) == val) {
		struct timespec ts = { 0, 50000000 }; /* recheck the deadline every 50 ms */
		syscall(SYS_futex, &pp->word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
		if (lb_now_ns() > pp->deadline || atomic_load_explicit(&pp->failed,
								       memory_order_relaxed))
			return false;
	}
	return true;
}

static void flip(struct pingpong *pp, uint32_t to)
{
	/* release pairs with the partner's acquire load in wait_flip */
	atomic_store_explicit(&pp->word, to, memory_order_release);
	syscall(SYS_futex, &pp->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	lb_pin_self(pp->cpu);
	for (unsigned int i = 0; i < PINGPONGS; i++) {
		if (!wait_flip(pp, 0)) {
			atomic_store_explicit(&pp->failed, 1, memory_order_relaxed);
			break;
		}
		flip(pp, 0);
	}
	return NULL;
}

/* One ping-pong sample: the mean round trip (ns), or -1. */
static double pingpong_once(int cpu_a, int cpu_b)
{
	struct pingpong pp = { .cpu = cpu_b, .deadline = lb_now_ns() + PINGPONG_BUDGET_NS };
	pthread_t t;
	cpu_set_t old;
	pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	lb_pin_self(cpu_a);
	if (pthread_create(&t, NULL, pong, &pp)) {
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
		return -1;
	}
	uint64_t t0 = lb_now_ns();
	bool ok = true;
	for (unsigned int i = 0; i < PINGPONGS && ok; i++) {
		flip(&pp, 1);
		ok = wait_flip(&pp, 1);
	}
	uint64_t t1 = lb_now_ns();
	if (!ok) {
		atomic_store_explicit(&pp.failed, 1, memory_order_relaxed);
		flip(&pp, 1); /* let the partner see the failure */
	}
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	if (!ok || atomic_load_explicit(&pp.failed, memory_order_relaxed))
		return -1;
	return (double)(t1 - t0) / PINGPONGS;
}

/* REPEATS samples of once(), each less `less`, and their median. */
static void sample(struct lb_simb_probe *p, double (*once)(void), double less)
{
	for (unsigned int r = 0; r < REPEATS; r++)
		p->samples[p->n++] = once() - less;
	p->value = med_of(p);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static void c2c_probe(struct lb_simb_measured *m, int a, int b)
{
	struct lb_simb_probe *ss = &m->p[LB_SIMB_P_SAME_SOCKET], *cs = &m->p[LB_SIMB_P_CROSS_SOCKET];
	for (unsigned int r = 0; r < C2C_REPEATS; r++) {
		double rt = lb_c2c_round_trip_ns(a, b, LB_C2C_ROUNDS, LB_C2C_BUDGET_NS);
		if (rt > 0)
			ss->samples[ss->n++] = rt / 2; /* a round trip is two transfers */
		sleep_ms(50); /* spaced: the host may move the vCPUs meanwhile */
	}
	ss->value = med_of(ss);
	/* cross_socket: the far half of the same samples (unused by this file's
	 * one-socket topology; kept so a 2-socket reading of it has a figure). */
	for (unsigned int i = 0; i < ss->n; i++)
		if (ss->samples[i] >= ss->value)
			cs->samples[cs->n++] = ss->samples[i];
	cs->value = med_of(cs);
}

static void switch_probes(struct lb_simb_measured *m, int a, int b)
{
	struct lb_simb_probe *sw = &m->p[LB_SIMB_P_CONTEXT_SWITCH], *wk = &m->p[LB_SIMB_P_WAKEUP];
	double sys = m->p[LB_SIMB_P_SYSCALL].value;
	for (unsigned int r = 0; r < REPEATS; r++) {
		double rt = pingpong_once(a, a);
		if (rt > 0)
			sw->samples[sw->n++] = rt / 2 - 2 * sys;
	}
	sw->value = med_of(sw);
	for (unsigned int r = 0; r < REPEATS; r++) {
		double rt = pingpong_once(a, b);
		if (rt > 0)
			wk->samples[wk->n++] = rt / 2 - 2 * sys - sw->value;
	}
	wk->value = med_of(wk);
}

static void name_probes(struct lb_simb_measured *m)
{
	static const char *const field[LB_SIMB_P_COUNT] = {
		"l1_hit", "rmw", "memory", "same_socket", "cross_socket", "syscall",
		"context_switch", "wakeup",
	};
	static const char *const how[LB_SIMB_P_COUNT] = {
		"a chain of 1e6 dependent relaxed loads on one private line, ns per load",
		"1e6 seq_cst fetch_adds on a private line, ns per add less l1_hit's median",
		"a dependent walk of 5e5 steps over a random cycle of 2^20 lines (64 MiB), "
		"ns per step (TLB misses included)",
		"lib/lb_c2c's cache-line round trip between the first two usable CPUs, / 2 "
		"(one transfer), 15 samples 50 ms apart",
		"the same samples' far half (at or above their median); unused by a "
		"one-socket file",
		"1e5 syscall(SYS_getppid), ns per call",
		"a futex ping-pong of 1000 round trips, both threads pinned to one CPU: "
		"half a round trip less 2 syscall medians (a wake and a wait)",
		"the same ping-pong across the two CPUs: half a round trip less 2 syscall "
		"medians and the context_switch median",
	};
	for (int i = 0; i < LB_SIMB_P_COUNT; i++) {
		m->p[i].field = field[i];
		m->p[i].how = how[i];
	}
}

int lb_simb_measure(struct lb_simb_measured *m)
{
	int a, b;
	struct utsname u;
	memset(m, 0, sizeof(*m));
	name_probes(m);
	if (uname(&u) == 0)
		snprintf(m->host, sizeof(m->host), "%.40s %.60s %.20s", u.nodename, u.release,
			 u.machine);
	cpu_set_t set;
	m->cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned int)CPU_COUNT(&set) : 1;
	if (lb_c2c_default_pair(&a, &b) < 0 || a < 0 || b < 0) {
		fprintf(stderr, "lockbench: sim: --measure-machine: needs two usable CPUs; "
			"this process may run on one\n");
		return -1;
	}
	struct lb_simb_probe *p = m->p;
	sample(&p[LB_SIMB_P_L1_HIT], l1_hit_once, 0);
	sample(&p[LB_SIMB_P_RMW], rmw_once, p[LB_SIMB_P_L1_HIT].value);
	if (memory_probe(&p[LB_SIMB_P_MEMORY])) {
		fprintf(stderr, "lockbench: sim: --measure-machine: out of memory for the "
			"memory probe (64 MiB)\n");
		return -1;
	}
	p[LB_SIMB_P_MEMORY].value = med_of(&p[LB_SIMB_P_MEMORY]);
	sample(&p[LB_SIMB_P_SYSCALL], syscall_once, 0);
	c2c_probe(m, a, b);
	switch_probes(m, a, b);
	for (int i = 0; i < LB_SIMB_P_COUNT; i++)
		if (!p[i].n) {
			fprintf(stderr, "lockbench: sim: --measure-machine: the %s probe got no "
				"sample (its threads never ran at once)\n", p[i].field);
			return -1;
		}
	return 0;
}
