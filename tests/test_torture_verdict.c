/* SPDX-License-Identifier: MIT */
/*
 * test_torture_verdict.c - the watchdog's verdict (torture/verdict.c) on
 * scripted thread states, and the /proc parsers that feed it
 * (torture/evidence.c): a lost hand-over, a lost wake-up and a lock never
 * released must be FAILUREs named as such; waiters or a holder that were not
 * running (run delay, a spin rate far below normal as under an emulator,
 * steal) must not be called lost.  Issue 37 item 3.
 */
#include "tap.h"
#include "../torture/evidence.h"
#include "../torture/verdict.h"
#include "lb_tasksched.h"

#include <string.h>

#define MS 1000000ull
#define SEC (1000 * MS)
/* The scripted machine's normal spin rate: 50 M lb_cpu_relax() a CPU second. */
#define RATE 50e6

/* A waiter spinning at the normal rate with cpu_ns of CPU. */
static struct lb_verdict_thread spinner(int id, uint64_t cpu_ns, uint64_t delay_ns)
{
	return (struct lb_verdict_thread){ .writer = true, .id = id, .run_state = 'R',
					   .sched_known = true, .cpu_ns = cpu_ns,
					   .delay_ns = delay_ns,
					   .spins = (uint64_t)(RATE * (double)cpu_ns / 1e9) };
}

static struct lb_verdict_evidence evidence(const struct lb_verdict_thread *t, int n)
{
	return (struct lb_verdict_evidence){ .window_ns = 7500 * MS, .acquisitions = 0,
					     .steal_s = 0, .ncpus = 2,
					     .normal_spins_per_s = RATE, .nthreads = n,
					     .threads = t };
}

/* The verdict and its wording; checks the kind, failure and a phrase. */
static void expect(const char *what, const struct lb_verdict_evidence *e,
		   enum lb_verdict_kind kind, bool failure, int culprit, const char *phrase)
{
	struct lb_verdict v = lb_verdict_judge(e);
	char line[1024];
	lb_verdict_format(line, sizeof(line), e, &v);
	bool lost_words = strstr(line, "lost hand-over") != NULL;
	tap_ok(v.kind == kind && v.failure == failure && (culprit < -1 || v.culprit == culprit) &&
	       strstr(line, phrase) && (kind == LB_VERDICT_LOST_HANDOVER ||
					kind == LB_VERDICT_UNKNOWN || !lost_words),
	       "%s: %s%s (got %s, culprit %d)", what, lb_verdict_name(kind),
	       failure ? ", FAILURE" : ", no failure", lb_verdict_name(v.kind), v.culprit);
	tap_diag("%s", line);
}

static void test_lost(void)
{
	/* A ticket lock that skipped a ticket: four waiters spin at the normal
	 * rate on 2 CPUs (half a CPU each), nobody holds it, nobody gets it. */
	struct lb_verdict_thread w[4];
	for (int i = 0; i < 4; i++)
		w[i] = spinner(i, 3700 * MS, 3800 * MS);
	w[2].cpu_ns = 3 * SEC; /* the least-run one is named */
	w[2].spins = (uint64_t)(RATE * 3);
	struct lb_verdict_evidence e = evidence(w, 4);
	expect("spinning waiters, no holder, no acquisition", &e, LB_VERDICT_LOST_HANDOVER, true, 2,
	       "a lost hand-over: no holder");
	/* Run delay as large as the CPU time (oversubscribed) does not excuse
	 * it: each waiter still re-read the lock millions of times. */
	for (int i = 0; i < 4; i++)
		w[i].delay_ns = 3 * w[i].cpu_ns;
	expect("the same at 3x run delay", &e, LB_VERDICT_LOST_HANDOVER, true, -2, "lost hand-over");
	/* ... and the lock changed hands meanwhile: slow, not stuck. */
	e.acquisitions = 3;
	expect("the same with 3 acquisitions", &e, LB_VERDICT_PROGRESS, false, -2, "changed hands 3");
	/* ... or a holder let go during it: the waiters' spinning may all
	 * predate the release; judged again over the next window. */
	e.acquisitions = 0;
	e.released = 1;
	expect("the same with a holder gone meanwhile", &e, LB_VERDICT_RELEASED, false, -2,
	       "judging again");
	e.released = 0;
	/* A waiter that spun plenty, then stopped 3 s before the end and is
	 * runnable, waiting for a CPU: it may have taken the lock word and
	 * been preempted before lock() returned (issue 37's guest). */
	w[1].still_ns = 3 * SEC;
	expect("one waiter stopped spinning, waiting for a CPU", &e, LB_VERDICT_PREEMPTED, false, 1,
	       "none in the last 3.00 s");
	/* ... stopped spinning but ran on, 3.7 s of CPU (a loop without
	 * lb_cpu_relax, a livelock): still a lost hand-over. */
	w[1].delay_ns = MS;
	expect("one waiter stopped spinning but ran on", &e, LB_VERDICT_LOST_HANDOVER, true, -2,
	       "lost hand-over");
	w[1].still_ns = 0;
	/* A wait loop without lb_cpu_relax (no spin count): CPU time proves it. */
	for (int i = 0; i < 4; i++)
		w[i].spins = 0;
	e.acquisitions = 0;
	expect("no spin count, 3.7 s of CPU each", &e, LB_VERDICT_LOST_HANDOVER, true, -2,
	       "lost hand-over");
	/* ... unless the hypervisor stole CPU time meanwhile. */
	e.steal_s = 1.0;
	expect("no spin count, 1 s of steal", &e, LB_VERDICT_PREEMPTED, false, -2,
	       "the hypervisor took time");
}

static void test_preempted(void)
{
	/* Issue 37's guest: 64 writers on 16 vCPUs under TCG; each is charged
	 * 0.6 s of CPU in the window and waited 4 s for a CPU, but spun at 5 %
	 * of the normal rate: its vCPU was not running. */
	struct lb_verdict_thread w[3];
	for (int i = 0; i < 3; i++) {
		w[i] = spinner(i, 600 * MS, 4 * SEC);
		w[i].spins = (uint64_t)(RATE * 0.03);
	}
	struct lb_verdict_evidence e = evidence(w, 3);
	expect("TCG: charged CPU at 5 % of the spin rate", &e, LB_VERDICT_PREEMPTED, false, -2,
	       "the CPU did not really give it");
	/* One waiter among runners got 5 ms of CPU and waited 7 s for one: the
	 * hand-over may be waiting for exactly it. */
	struct lb_verdict_thread x[4] = { spinner(0, 2 * SEC, SEC), spinner(1, 2 * SEC, SEC),
					  spinner(2, 5 * MS, 7 * SEC), spinner(3, 2 * SEC, SEC) };
	e = evidence(x, 4);
	expect("one waiter starved of CPU", &e, LB_VERDICT_PREEMPTED, false, 2,
	       "a waiter was waiting for a CPU");
	/* A holder that was runnable but hardly ran. */
	struct lb_verdict_thread h[3] = { spinner(0, 2 * SEC, SEC), spinner(1, 2 * SEC, SEC),
					  spinner(2, 0, 0) };
	h[2] = (struct lb_verdict_thread){ .writer = true, .id = 2, .holding = true,
					   .run_state = 'R', .sched_known = true, .cpu_ns = MS,
					   .delay_ns = 7 * SEC };
	e = evidence(h, 3);
	expect("holder preempted", &e, LB_VERDICT_PREEMPTED, false, 2, "the holder was waiting");
	/* A sleeper and a preempted waiter: the wake-up may be on its way. */
	struct lb_verdict_thread m[2] = { spinner(0, 0, 0), spinner(1, 3 * MS, 6 * SEC) };
	m[0] = (struct lb_verdict_thread){ .id = 0, .writer = true, .run_state = 'S',
					   .sched_known = true };
	m[1].spins = 0;
	e = evidence(m, 2);
	expect("one asleep, one runnable without CPU", &e, LB_VERDICT_PREEMPTED, false, 1,
	       "waiting for a CPU");
}

static void test_failures(void)
{
	/* A sleeping lock's lost wake-up: waiters asleep, nobody holds it. */
	struct lb_verdict_thread s[2];
	for (int i = 0; i < 2; i++)
		s[i] = (struct lb_verdict_thread){ .writer = true, .id = i, .run_state = 'S',
						   .sched_known = true, .cpu_ns = 20000 };
	struct lb_verdict_evidence e = evidence(s, 2);
	expect("waiters asleep, no holder", &e, LB_VERDICT_LOST_WAKEUP, true, 0, "a lost wake-up");
	/* A holder that ran 2 s in the window and kept the lock. */
	struct lb_verdict_thread h[2] = { spinner(0, 2 * SEC, SEC), spinner(1, 0, 0) };
	h[1] = (struct lb_verdict_thread){ .writer = true, .id = 1, .holding = true,
					   .run_state = 'R', .sched_known = true, .cpu_ns = 2 * SEC,
					   .delay_ns = SEC };
	e = evidence(h, 2);
	expect("holder ran and kept it", &e, LB_VERDICT_NOT_RELEASED, true, 1, "never released");
	/* --inject_hang: whatever the scheduler did. */
	h[1].hung = true;
	h[1].cpu_ns = 0;
	h[1].run_state = 'S';
	expect("inject_hang", &e, LB_VERDICT_NOT_RELEASED, true, 1, "hung on purpose");
	/* Nothing readable (no schedstat, no spin count): FAILURE, old words. */
	struct lb_verdict_thread u[1] = { { .writer = true, .id = 0, .run_state = '?' } };
	e = evidence(u, 1);
	expect("no evidence", &e, LB_VERDICT_UNKNOWN, true, 0, "a lost hand-over or a livelock");
	/* No calibration (rate 0) and 3 s of CPU: CPU time proves running. */
	struct lb_verdict_thread c[1] = { spinner(0, 3 * SEC, SEC) };
	e = evidence(c, 1);
	e.normal_spins_per_s = 0;
	expect("no calibration, 3 s of CPU", &e, LB_VERDICT_LOST_HANDOVER, true, 0, "lost hand-over");
}

/* The early verdict (issue 39): every worker asleep in the lock over a
 * 1.5 s window, nobody holding it, is a lost wake-up before the limit; any
 * sign that the wake may still be on its way is not. */
static void test_all_asleep(void)
{
	struct lb_verdict_thread s[3];
	for (int i = 0; i < 3; i++)
		s[i] = (struct lb_verdict_thread){ .writer = i != 2, .id = i, .run_state = 'S',
						   .run_state0 = 'S', .sched_known = true,
						   .cpu_ns = 30000, .delay_ns = 5000 };
	struct lb_verdict_evidence e = evidence(s, 3);
	e.window_ns = 1500 * MS;
	tap_ok(lb_verdict_all_asleep(&e, 3) && lb_verdict_judge(&e).kind == LB_VERDICT_LOST_WAKEUP,
	       "all asleep: three workers asleep over 1.5 s, no holder: conclusive lost wake-up");
	tap_ok(!lb_verdict_all_asleep(&e, 4), "all asleep: not when a fourth worker is elsewhere");
	e.window_ns = 900 * MS;
	tap_ok(!lb_verdict_all_asleep(&e, 3), "all asleep: not over a window under 1 s");
	e.window_ns = 1500 * MS;
	/* A waker preempted between its release and its wake: runnable now,
	 * or it was and has run (run delay), or it was on its way at the
	 * start (a short --perturb sleep, then a run). */
	struct {
		const char *what;
		char state, state0;
		uint64_t cpu, delay, spins;
		bool holding, known;
	} no[] = {
		{ "a worker runnable at the end", 'R', 'S', 30000, 0, 0, false, true },
		{ "a worker runnable at the start", 'S', 'R', 30000, 0, 0, false, true },
		{ "a worker that waited 5 ms for a CPU", 'S', 'S', 30000, 5 * MS, 0, false, true },
		{ "a worker that ran 2 ms", 'S', 'S', 2 * MS, 0, 0, false, true },
		{ "a worker that spun", 'S', 'S', 30000, 0, 100, false, true },
		{ "a holder asleep", 'S', 'S', 0, 0, 0, true, true },
		{ "a worker without scheduler figures", 'S', 'S', 0, 0, 0, false, false },
	};
	for (size_t k = 0; k < sizeof(no) / sizeof(no[0]); k++) {
		struct lb_verdict_thread keep = s[1];
		s[1].run_state = no[k].state;
		s[1].run_state0 = no[k].state0;
		s[1].cpu_ns = no[k].cpu;
		s[1].delay_ns = no[k].delay;
		s[1].spins = no[k].spins;
		s[1].holding = no[k].holding;
		s[1].sched_known = no[k].known;
		tap_ok(!lb_verdict_all_asleep(&e, 3), "all asleep: not with %s", no[k].what);
		s[1] = keep;
	}
	e.acquisitions = 1;
	tap_ok(!lb_verdict_all_asleep(&e, 3), "all asleep: not after an acquisition");
	e.acquisitions = 0;
	e.released = 1;
	tap_ok(!lb_verdict_all_asleep(&e, 3), "all asleep: not after a holder let go");
}

static void test_parsers(void)
{
	tap_ok(lb_tasksched_parse_stat("4242 (lock (a) b) R 1 2 3") == 'R' &&
	       lb_tasksched_parse_stat("7 (x) S 0") == 'S' && lb_tasksched_parse_stat("7 (x)") == '?' &&
	       lb_tasksched_parse_stat("garbage") == '?',
	       "stat: the state after the last ')', '?' when malformed");
	uint64_t cpu = 0, delay = 0;
	bool good = lb_tasksched_parse_schedstat("5971981067 1603852389 101\n", &cpu, &delay);
	tap_ok(good && cpu == 5971981067ull && delay == 1603852389ull,
	       "schedstat: on-CPU and run delay ns");
	tap_ok(!lb_tasksched_parse_schedstat("", &cpu, &delay) &&
	       !lb_tasksched_parse_schedstat("12\n", &cpu, &delay), "schedstat: malformed refused");
}

int main(void)
{
	test_lost();
	test_preempted();
	test_failures();
	test_all_asleep();
	test_parsers();
	return tap_done();
}
