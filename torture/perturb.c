/* SPDX-License-Identifier: MIT */
/* perturb.c - the delays behind locktorture --perturb (see perturb.h). */
#include "perturb.h"
#include "clock.h"
#include "random.h"
#include "lb_atomic.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Written once by main before the workers start (see perturb.h). */
bool lb_perturb_enabled;
static uint32_t perturb_rate_ppm;
static uint64_t perturb_seed;

/* Action counts: only perturbed points touch them, so the shared line costs
 * little next to the delay itself.  Relaxed: statistics only. */
struct perturb_tally {
	_Atomic uint64_t points, spins, yields, sleeps;
	_Atomic uint64_t published, holds, contended, long_ones;
	_Atomic uint64_t rare, polls;
};
static struct perturb_tally perturb_local;
/* Where the counts go: this process's, or (locktorture -P) a shared
 * mapping every worker process adds to; set before any worker starts. */
static struct perturb_tally *tally = &perturb_local;

/* Per thread: the generator, whether it was seeded, this phase's rate (ppm)
 * and the decisions left before the next phase. */
static _Thread_local uint64_t perturb_state;
static _Thread_local bool perturb_seeded;
static _Thread_local uint32_t perturb_thread_ppm;
static _Thread_local uint32_t perturb_phase_left;
/* Decisions since lb_perturb_acquire_begin(): two per hooked operation. */
static _Thread_local uint32_t perturb_acquire_ops;
/* The writer's behaviour phase: its own generator (a stream apart from the
 * hooks', so that the time-based phases leave the hooks' decision streams
 * as --seed replays them), when the phase ends (CLOCK_MONOTONIC ns; 0 = not
 * drawn yet) and whether it is a polling one. */
static _Thread_local uint64_t perturb_poll_state;
static _Thread_local uint64_t perturb_poll_phase_end;
static _Thread_local bool perturb_polling;

/* Longest spin in lb_cpu_relax() calls (a pause is ~10..140 cycles), and the
 * sleep range: a few µs, so that thousands of them fit a second. */
#define PERTURB_MAX_SPIN 512u
#define PERTURB_MAX_SLEEP_NS 20000u
/* One sleep in LONG_SLEEP_EVERY is a lost time slice: 50..550 µs. */
#define PERTURB_LONG_SLEEP_EVERY 16u
#define PERTURB_LONG_SLEEP_NS 50000u
#define PERTURB_LONG_SLEEP_SPAN_NS 500000u
/* One yield in YIELD_BURST_EVERY is a burst of 2..5 yields. */
#define PERTURB_YIELD_BURST_EVERY 8u
/* How much more often the point after a publishing atomic is perturbed. */
#define PERTURB_PUBLISH_BOOST 16u
/* How much more often a critical section is perturbed than a plain point:
 * a second owner is seen only if it meets the first one inside. */
#define PERTURB_HOLD_BOOST 20u
/* One perturbed critical section in LONG_HOLD_EVERY is a long hold:
 * the holder sleeps 1..2 ms, as if preempted for a couple of ticks. */
#define PERTURB_LONG_HOLD_EVERY 64u
#define PERTURB_LONG_HOLD_NS 1000000u
/* More hooked operations than this from lb_perturb_acquire_begin() to the
 * critical section: the lock took a slow path (a fast path is a CAS or an
 * exchange, perhaps after a load: at most 2).  Such a critical section is
 * perturbed CONTENDED_PPM of a million times (the fast ones: at the rate). */
#define PERTURB_CONTENDED_OPS 2u
#define PERTURB_CONTENDED_PPM 100000u
/* The spins inside a critical section: 1..40 µs; its sleeps: 20..40 µs. */
#define PERTURB_HOLD_SPIN_NS 39000u
#define PERTURB_HOLD_SLEEP_NS 20000u
/* A store or read-modify-write call site that has run n times on a thread
 * is perturbed (besides the rate) RARE_K / n of the time: its first RARE_K
 * runs always, then less and less.  Over a run every site gets about
 * RARE_K * (1 + ln(n / RARE_K)) delays per thread, whatever its frequency,
 * so the rare paths (a slow unlock, a hand-over, a pass-on: where the
 * windows of a broken lock are) get as many as the fast path does. */
#define PERTURB_RARE_K 16u
/* Writer behaviour phases last POLL_PHASE_MIN_NS + up to POLL_PHASE_SPAN_NS;
 * one in POLL_PHASE_EVERY polls: each acquisition tries trylock for
 * POLL_MIN_NS + up to POLL_SPAN_NS before its blocking op. */
#define PERTURB_POLL_PHASE_EVERY 4u
#define PERTURB_POLL_PHASE_MIN_NS 2000000u
#define PERTURB_POLL_PHASE_SPAN_NS 18000000u
#define PERTURB_POLL_MIN_NS 20000u
#define PERTURB_POLL_SPAN_NS 480000u
/* A phase lasts PHASE_MIN + up to PHASE_SPAN decisions of its thread. */
#define PERTURB_PHASE_MIN 4096u
#define PERTURB_PHASE_SPAN 16384u

/* A 64-bit mix of the seed and a stream number, so nearby streams differ. */
static uint64_t stream_seed(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream + 1) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

void lb_perturb_configure(uint32_t rate_ppm, uint64_t seed)
{
	perturb_rate_ppm = rate_ppm;
	perturb_seed = seed;
	lb_perturb_enabled = rate_ppm > 0;
}

/* The polling phases' streams: the seed mixed with this, so that none is
 * a hook stream. */
#define PERTURB_POLL_SEED_MIX 0x706f6c6c696e6721ull

static void seed_thread(uint64_t stream)
{
	perturb_state = stream_seed(perturb_seed, stream);
	perturb_poll_state = stream_seed(perturb_seed ^ PERTURB_POLL_SEED_MIX, stream);
	perturb_seeded = true;
	perturb_phase_left = 0; /* the first decision draws a phase */
}

_Thread_local _Atomic uint64_t *lb_perturb_spin_counter;

void lb_perturb_thread_start(unsigned int index)
{
	seed_thread(index);
	/* Short sleeps need a short timer slack (default 50 µs); 1 µs. */
	if (lb_perturb_enabled)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
}

size_t lb_perturb_tally_size(void)
{
	return sizeof(struct perturb_tally);
}

void lb_perturb_share_tally(void *mem)
{
	/* Zeroed by the caller: every count starts at 0.  NULL: back to ours. */
	tally = mem ? mem : &perturb_local;
}

void lb_perturb_read_counts(struct lb_perturb_counts *out)
{
	out->points = atomic_load_explicit(&tally->points, memory_order_relaxed);
	out->spins = atomic_load_explicit(&tally->spins, memory_order_relaxed);
	out->yields = atomic_load_explicit(&tally->yields, memory_order_relaxed);
	out->sleeps = atomic_load_explicit(&tally->sleeps, memory_order_relaxed);
	out->published = atomic_load_explicit(&tally->published, memory_order_relaxed);
	out->holds = atomic_load_explicit(&tally->holds, memory_order_relaxed);
	out->contended = atomic_load_explicit(&tally->contended, memory_order_relaxed);
	out->rare = atomic_load_explicit(&tally->rare, memory_order_relaxed);
	out->long_ones = atomic_load_explicit(&tally->long_ones, memory_order_relaxed);
	out->polls = atomic_load_explicit(&tally->polls, memory_order_relaxed);
}

static void count(_Atomic uint64_t *what)
{
	atomic_fetch_add_explicit(what, 1, memory_order_relaxed);
}

/* Whether this point is perturbed: this phase's rate times boost (or, with
 * base, the configured rate times boost). */
static bool draw_rate(uint32_t boost, bool base)
{
	if (!perturb_seeded) /* not a worker (main, a helper): its own stream */
		seed_thread(1000000u + (uint64_t)gettid());
	if (perturb_phase_left == 0) {
		/* A new phase: 0, 1/2, 1 or 5/2 times the rate (mean 1). */
		static const uint32_t halves[4] = { 0, 1, 2, 5 };
		uint32_t r = lb_torture_random_step(&perturb_state);
		perturb_thread_ppm = perturb_rate_ppm * halves[r % 4] / 2;
		perturb_phase_left = PERTURB_PHASE_MIN + (r >> 8) % PERTURB_PHASE_SPAN;
	}
	perturb_phase_left--;
	perturb_acquire_ops++;
	uint64_t ppm = (uint64_t)(base ? perturb_rate_ppm : perturb_thread_ppm) * boost;
	return lb_torture_random_step(&perturb_state) % 1000000u < ppm;
}

static bool draw(uint32_t boost)
{
	return draw_rate(boost, false);
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
	nanosleep(&ts, NULL);
}

/* Descheduled: a yield (now and then a burst), or a sleep of a few µs (now
 * and then a lost time slice). */
static void deschedule(uint32_t kind, uint32_t amount)
{
	if (kind % 2) {
		count(&tally->yields);
		unsigned int n = amount % PERTURB_YIELD_BURST_EVERY ? 1 : 2 + amount / 8 % 4;
		while (n--)
			sched_yield();
		return;
	}
	count(&tally->sleeps);
	if (amount % PERTURB_LONG_SLEEP_EVERY == 0) {
		count(&tally->long_ones);
		sleep_ns(PERTURB_LONG_SLEEP_NS + (long)(amount / 16 % PERTURB_LONG_SLEEP_SPAN_NS));
	} else {
		sleep_ns(1000 + (long)(amount % PERTURB_MAX_SLEEP_NS));
	}
}

static void spin(uint32_t amount)
{
	count(&tally->spins);
	for (uint32_t i = 1 + amount % PERTURB_MAX_SPIN; i; i--)
		lb_cpu_relax(); /* spin-wait hint: the delay is the point */
}

void lb_perturb_slow(void)
{
	if (!draw(1))
		return;
	count(&tally->points);
	uint32_t how = lb_torture_random_step(&perturb_state);
	uint32_t kind = how % 16, amount = how >> 8;
	if (kind < 6)
		spin(amount); /* as if an interrupt or a slower core got here */
	else
		deschedule(kind, amount); /* preemption: others get the CPU */
}

/* One random delay: a short spin in `spin_in_16` of 16 draws, else a
 * yield or a brief sleep (deschedule picks which from the same draw). */
static void delay_mostly_descheduled(uint32_t spin_in_16)
{
	uint32_t how = lb_torture_random_step(&perturb_state);
	uint32_t kind = how % 16, amount = how >> 8;
	if (kind < spin_in_16)
		spin(amount);
	else
		deschedule(kind, amount);
}

void lb_perturb_slow_published(void)
{
	/* The configured rate, not the phase's: the threads that release
	 * most are those of a quiet phase (they run fastest). */
	if (!draw_rate(PERTURB_PUBLISH_BOOST, true))
		return;
	count(&tally->points);
	count(&tally->published);
	/* Mostly descheduled: others act on the state just published while
	 * this thread has not done what comes after it. */
	delay_mostly_descheduled(2);
}

void lb_perturb_slow_site(uint32_t *hits, bool after, bool publishes, int mo)
{
	uint32_t n = *hits + (*hits < UINT32_MAX);
	*hits = n;
	/* The rare-site boost: before and after a store or read-modify-write,
	 * and after a load (or a failed compare-exchange): a wait path's loads
	 * run rarely too, and the window a broken waiter has often lies
	 * between two of them (a state read, then the futex word read). */
	if (publishes || after) {
		if (!perturb_seeded)
			seed_thread(1000000u + (uint64_t)gettid());
		if (lb_torture_random_step(&perturb_state) % n < PERTURB_RARE_K) {
			perturb_acquire_ops++; /* a decision, as draw_rate() counts */
			count(&tally->points);
			count(&tally->rare);
			delay_mostly_descheduled(4);
			return;
		}
		if (publishes && after && mo >= __ATOMIC_RELEASE) {
			lb_perturb_slow_published();
			return;
		}
	}
	lb_perturb_slow();
}

void lb_perturb_slow_before_wait(void)
{
	/* The configured rate, boosted as after a publishing store: a waiter
	 * has published that it will sleep and not yet slept. */
	if (!draw_rate(PERTURB_PUBLISH_BOOST, true))
		return;
	count(&tally->points);
	count(&tally->published);
	/* Mostly descheduled: the waker runs in the window. */
	delay_mostly_descheduled(2);
}

void lb_perturb_acquire_begin_slow(void)
{
	perturb_acquire_ops = 0;
}

void lb_perturb_slow_hold(bool reader)
{
	bool contended = !reader && perturb_acquire_ops > 2 * PERTURB_CONTENDED_OPS;
	if (reader) {
		if (!draw_rate(1, true))
			return;
	} else if (contended) {
		if (lb_torture_random_step(&perturb_state) % 1000000u >= PERTURB_CONTENDED_PPM)
			return;
		count(&tally->contended);
	} else if (!draw_rate(PERTURB_HOLD_BOOST, true)) {
		/* The configured rate, not the phase's: the threads of a quiet
		 * phase run fastest and so hold most critical sections. */
		return;
	}
	count(&tally->points);
	count(&tally->holds);
	uint32_t how = lb_torture_random_step(&perturb_state);
	uint32_t kind = how % 16, amount = how >> 8;
	if (amount % PERTURB_LONG_HOLD_EVERY == 0) {
		/* A long hold: preempted for a tick or two inside. */
		count(&tally->sleeps);
		count(&tally->long_ones);
		sleep_ns(PERTURB_LONG_HOLD_NS + (long)(amount / 32 % PERTURB_LONG_HOLD_NS));
	} else if (contended || kind < 12) {
		/* Held on the CPU for 1..40 µs, longer than the waiters' spin
		 * budgets (~15 µs) half the time: they give up and sleep, so
		 * the unlock takes its slow path; a second owner let in meets
		 * this one.  A spin, not a sleep: the others keep going. */
		count(&tally->spins);
		lb_torture_spin_ns(1000 + amount % PERTURB_HOLD_SPIN_NS);
	} else if (kind < 14) {
		count(&tally->yields);
		sched_yield();
	} else {
		count(&tally->sleeps);
		sleep_ns(PERTURB_HOLD_SLEEP_NS + (long)(amount % PERTURB_HOLD_SLEEP_NS));
	}
}

uint64_t lb_perturb_poll_ns_slow(void)
{
	if (!perturb_seeded)
		seed_thread(1000000u + (uint64_t)gettid());
	uint64_t now = lb_torture_now_ns();
	if (now >= perturb_poll_phase_end) {
		uint32_t r = lb_torture_random_step(&perturb_poll_state);
		perturb_polling = r % PERTURB_POLL_PHASE_EVERY == 0;
		perturb_poll_phase_end = now + PERTURB_POLL_PHASE_MIN_NS +
					 (r >> 8) % PERTURB_POLL_PHASE_SPAN_NS;
	}
	if (!perturb_polling)
		return 0;
	count(&tally->polls);
	return PERTURB_POLL_MIN_NS + lb_torture_random_step(&perturb_poll_state) % PERTURB_POLL_SPAN_NS;
}
