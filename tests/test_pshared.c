/* SPDX-License-Identifier: MIT */
/*
 * test_pshared.c - every lock with init_shared (LB_LOCK_F_PSHARED) excludes
 * across processes: the lock object and one context per process in a
 * MAP_SHARED mapping made before the fork, two forked processes each doing
 * ITERS read-pause-write increments of one plain counter under the lock
 * while an in-section flag catches overlaps.  `busted` must fail it (the
 * proof the check bites); a lock whose wait outlives the deadline (a private
 * futex nobody else can wake, say) fails as a hang and its processes are
 * killed.  What `lockbench rt -P` relies on (doc/rt.md, "Process mode").
 */
#include "lb_registry.h"
#include "lb_atomic.h"
#include "lb_time.h"
#include "tap.h"
#include "test_reap.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPROC 2
#define ITERS 20000u
#define CTX_BYTES 4096u /* room for any context, each on its own page */
#define DEADLINE_NS (20 * LB_NS_PER_S)

struct shared {
	_Atomic uint32_t in_section;  /* 1 while a holder is inside */
	_Atomic uint64_t overlaps;    /* entries that found it set */
	volatile uint64_t counter;    /* plain read-pause-write under the lock */
	_Atomic uint32_t go;          /* both children ready */
	char pad[64];
	_Alignas(64) unsigned char lock[CTX_BYTES];
	_Alignas(64) unsigned char ctx[NPROC][CTX_BYTES];
};

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void child(const struct lb_lock_ops *ops, struct shared *s, unsigned int index)
{
	void *ctx = ops->thread_ctx_size ? s->ctx[index] : NULL;
	if (ops->thread_init && ops->thread_init(ctx, index))
		_exit(3);
	atomic_fetch_add_explicit(&s->go, 1, memory_order_relaxed);
	/* Start together (a spin: two processes on at most two CPUs, briefly). */
	while (atomic_load_explicit(&s->go, memory_order_relaxed) < NPROC)
		lb_cpu_relax();
	for (unsigned int i = 0; i < ITERS; i++) {
		ops->lock(s->lock, ctx);
		/* Relaxed: the lock orders the section; the flag only detects overlap. */
		if (atomic_exchange_explicit(&s->in_section, 1, memory_order_relaxed))
			atomic_fetch_add_explicit(&s->overlaps, 1, memory_order_relaxed);
		uint64_t v = s->counter;
		for (int k = 0; k < 20; k++)
			lb_cpu_relax(); /* widen the window a broken lock lets overlap */
		s->counter = v + 1;
		atomic_store_explicit(&s->in_section, 0, memory_order_relaxed);
		ops->unlock(s->lock, ctx);
	}
	if (ops->thread_fini)
		ops->thread_fini(ctx);
	_exit(0);
}

static bool reap(pid_t *pids, bool *hung)
{
	return lb_test_reap(pids, NPROC, DEADLINE_NS, hung);
}

/* One round: both processes through ITERS increments each; false when the
 * round could not start (reported). */
struct round {
	uint64_t got, overlaps;
	bool clean, hung;
};

static bool run_round(const struct lb_lock_ops *ops, struct round *r)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		tap_ok(false, "%s: shared mapping", ops->name);
		return false;
	}
	bool fits = ops->lock_size <= CTX_BYTES && ops->lock_align <= 64 &&
		    ops->thread_ctx_size <= CTX_BYTES;
	int err = fits ? ops->init_shared(s->lock) : EINVAL;
	if (err) {
		tap_ok(false, "%s: init_shared (%s)", ops->name, fits ? strerror(err) : "too big");
		munmap(s, sizeof(*s));
		return false;
	}
	pid_t pids[NPROC] = { 0 };
	fflush(stdout); /* nothing buffered is written twice */
	for (unsigned int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child(ops, s, i);
	}
	r->clean = reap(pids, &r->hung);
	r->got = s->counter;
	r->overlaps = atomic_load_explicit(&s->overlaps, memory_order_relaxed);
	if (ops->destroy)
		ops->destroy(s->lock);
	munmap(s, sizeof(*s));
	return true;
}

/* The busted lock's rounds: an overlap needs both processes on a CPU at
 * once, which a loaded machine may not grant in one round (40000 of 40000,
 * 0 overlaps at load 63): more rounds, up to this long, until one shows. */
#define BUSTED_BUDGET_NS (15 * LB_NS_PER_S)

static void check_lock(const struct lb_lock_ops *ops)
{
	uint64_t want = (uint64_t)NPROC * ITERS, t0 = lb_now_ns();
	struct round r;
	unsigned int rounds = 0;
	bool excluded;
	do {
		if (!run_round(ops, &r))
			return;
		rounds++;
		excluded = r.clean && r.got == want && !r.overlaps;
	} while ((ops->flags & LB_LOCK_F_BUSTED) && excluded && lb_now_ns() - t0 < BUSTED_BUDGET_NS);
	if (ops->flags & LB_LOCK_F_BUSTED)
		tap_ok(!excluded, "%s: the check bites across processes (round %u: %llu of %llu, "
		       "%llu overlaps)", ops->name, rounds, (unsigned long long)r.got,
		       (unsigned long long)want, (unsigned long long)r.overlaps);
	else
		tap_ok(excluded, "%s: %d processes x %u increments: %llu of %llu, %llu overlaps%s",
		       ops->name, NPROC, ITERS, (unsigned long long)r.got, (unsigned long long)want,
		       (unsigned long long)r.overlaps, r.hung ? " (HUNG: killed)" : r.clean ? "" :
		       " (a child failed)");
}

int main(void)
{
	const struct lb_lock_ops *const *table = lb_lock_table();
	unsigned int tested = 0;
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lb_lock_ops *ops = table[i];
		if (ops->unsupported || !ops->init_shared)
			continue;
		check_lock(ops);
		tested++;
	}
	tap_ok(tested >= 8, "%u locks with init_shared tested", tested);
	return tap_done();
}
