/* SPDX-License-Identifier: MIT */
/* broken_locks.c - the deliberately broken locks of broken_locks.h. */
#include "broken_locks.h"
#include "lb_atomic.h"
#include "lb_futex.h"
#if defined(LB_BROKEN_IN_TORTURE)
#include "perturb.h" /* the watchdog's spin count, as the real locks' copy has */
#define count_spin() lb_perturb_count_spin()
#else
#define count_spin() ((void)0)
#endif

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Acquisitions after which the per-thread bugs strike (the run is going). */
#define STRIKE_AFTER 200

struct broken_lock {
	_Atomic uint32_t word; /* 0 free, 1 held (tas); 0/1/2 for the futex mutex */
};

struct broken_ctx {
	unsigned int index; /* dense thread index: writer i is index i */
	unsigned long acquired;
	_Atomic uint32_t never; /* the word the stranded waiter sleeps on */
	bool starved;           /* starve_lock: the one long wait is over */
};

static int broken_init(void *lock)
{
	atomic_init(&((struct broken_lock *)lock)->word, 0);
	return 0;
}

static int ctx_init(void *tctx, unsigned int index)
{
	struct broken_ctx *c = tctx;
	c->index = index;
	c->acquired = 0;
	atomic_init(&c->never, 0);
	return 0;
}

/* Test-and-test-and-set acquire, correct in every copy below. */
static void tas_acquire(struct broken_lock *l)
{
	/* Acquire pairs with the holder's release in unlock. */
	while (atomic_exchange_explicit(&l->word, 1, memory_order_acquire)) {
		/* Spin on a plain load until it looks free (no RMW traffic). */
		while (atomic_load_explicit(&l->word, memory_order_relaxed))
			lb_cpu_relax();
	}
}

static void tas_lock(void *lock, void *tctx)
{
	(void)tctx;
	tas_acquire(lock);
}

static void tas_unlock(void *lock, void *tctx)
{
	(void)tctx;
	atomic_store_explicit(&((struct broken_lock *)lock)->word, 0, memory_order_release);
}

static bool tas_trylock(void *lock, void *tctx)
{
	(void)tctx;
	struct broken_lock *l = lock;
	return !atomic_exchange_explicit(&l->word, 1, memory_order_acquire);
}

/* BUG: takes the lock whatever state it is in. */
static bool trylock_ignores(void *lock, void *tctx)
{
	(void)tctx;
	atomic_store_explicit(&((struct broken_lock *)lock)->word, 1, memory_order_relaxed);
	return true;
}

/*
 * BUG: test, then set, as two steps: correct whenever it runs alone (fails
 * on a held lock, succeeds on a free one) but two racing callers, or a
 * caller racing lock(), can both get in.
 */
static bool trylock_racy(void *lock, void *tctx)
{
	(void)tctx;
	struct broken_lock *l = lock;
	if (atomic_load_explicit(&l->word, memory_order_acquire))
		return false;
	/* Widen the window between the test and the set, as preemption would. */
	for (int i = 0; i < 32; i++)
		lb_cpu_relax();
	atomic_store_explicit(&l->word, 1, memory_order_relaxed);
	return true;
}

/* BUG: relaxed instead of release: invisible on x86, a race under TSan. */
static void unlock_relaxed(void *lock, void *tctx)
{
	(void)tctx;
	atomic_store_explicit(&((struct broken_lock *)lock)->word, 0, memory_order_relaxed);
}

/* Read through a volatile so the compiler cannot see (and warn about) it. */
static volatile int *volatile wild_pointer = (volatile int *)(uintptr_t)16;

/* BUG: writer 3 dereferences a wild pointer after a while. */
static void lock_segv(void *lock, void *tctx)
{
	struct broken_ctx *c = tctx;
	if (c->index == 3 && ++c->acquired == STRIKE_AFTER)
		*wild_pointer = 1; /* SIGSEGV */
	tas_acquire(lock);
}

/* BUG: writer 2's unlock "detects misuse" and aborts, as a lock's own check would. */
static void unlock_abort(void *lock, void *tctx)
{
	struct broken_ctx *c = tctx;
	if (c->index == 2 && ++c->acquired == STRIKE_AFTER) {
		fputs("tas-abort: unlock of a lock this thread does not hold\n", stderr);
		abort();
	}
	tas_unlock(lock, tctx);
}

/*
 * A futex mutex (0 free, 1 held, 2 held with sleepers).  BUG: after
 * STRIKE_AFTER acquisitions, thread 1's next wait goes to a word that no
 * unlock ever wakes, as when a queue lock drops one waiter's wake-up.
 */
/* The futex mutex's fast path: true when the lock was free and is ours. */
static bool futex_mutex_try_fast(struct broken_lock *l)
{
	uint32_t free_word = 0;
	/* Acquire: pairs with the release exchange in strand_unlock. */
	return atomic_compare_exchange_strong_explicit(&l->word, &free_word, 1,
						       memory_order_acquire, memory_order_relaxed);
}

/* Its slow path: mark contended and sleep until an unlock wakes us. */
static void futex_mutex_wait(struct broken_lock *l)
{
	/* Acquire: as the fast path's. */
	while (atomic_exchange_explicit(&l->word, 2, memory_order_acquire) != 0)
		lb_futex_wait(&l->word, 2, NULL);
}

static void strand_lock(void *lock, void *tctx)
{
	struct broken_lock *l = lock;
	struct broken_ctx *c = tctx;
	if (!futex_mutex_try_fast(l)) {
		if (c->index == 1 && c->acquired >= STRIKE_AFTER)
			for (;;) /* stranded: asleep on a word no unlock wakes */
				lb_futex_wait(&c->never, 0, NULL);
		futex_mutex_wait(l);
	}
	c->acquired++;
}

/*
 * Not a bug: the same futex mutex, where thread 1's wait after STRIKE_AFTER
 * acquisitions lasts STARVE_S seconds once (a waiter passed over for that
 * long, as glibc's rwlock may), then goes on normally.  Flagged
 * LB_LOCK_F_NO_TURN: locktorture must call it starvation, not a stall.
 */
#define STARVE_S 6
static void starve_lock(void *lock, void *tctx)
{
	struct broken_lock *l = lock;
	struct broken_ctx *c = tctx;
	if (!futex_mutex_try_fast(l)) {
		if (c->index == 1 && c->acquired >= STRIKE_AFTER && !c->starved) {
			struct timespec left = { .tv_sec = STARVE_S };
			lb_futex_wait(&c->never, 0, &left); /* nobody wakes it: the timeout ends it */
			c->starved = true;
		}
		futex_mutex_wait(l);
	}
	c->acquired++;
}

static void strand_unlock(void *lock, void *tctx)
{
	(void)tctx;
	struct broken_lock *l = lock;
	/* Release: the critical section happens before the next acquire. */
	if (atomic_exchange_explicit(&l->word, 0, memory_order_release) == 2)
		lb_futex_wake(&l->word, 1);
}

/*
 * A ticket lock.  BUG: the unlock after writer 2's STRIKE_AFTER-th
 * acquisition forgets to serve the next ticket: writer 2 leaves, and every
 * waiter spins forever on a lock nobody holds (a lost hand-over, with every
 * waiter running at full speed).
 */
struct skip_lock {
	_Atomic uint32_t next;  /* the next ticket to hand out */
	_Atomic uint32_t owner; /* the ticket now served */
};

static int skip_init(void *lock)
{
	struct skip_lock *l = lock;
	atomic_init(&l->next, 0);
	atomic_init(&l->owner, 0);
	return 0;
}

static void skip_lock(void *lock, void *tctx)
{
	struct skip_lock *l = lock;
	struct broken_ctx *c = tctx;
	/* Relaxed: the ticket only places us in the queue; the load below acquires. */
	uint32_t me = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
	/* Spin until served; acquire pairs with the release store in skip_unlock.
	 * Each look is counted in locktorture, as lb_cpu_relax() counts in the
	 * real locks' copy there (this file is built without the hooks). */
	while (atomic_load_explicit(&l->owner, memory_order_acquire) != me) {
		count_spin();
		lb_cpu_relax();
	}
	c->acquired++;
}

static void skip_unlock(void *lock, void *tctx)
{
	struct skip_lock *l = lock;
	struct broken_ctx *c = tctx;
	if (c->index == 2 && c->acquired == STRIKE_AFTER)
		return; /* BUG: the hand-over to the next ticket is lost */
	/* Only the owner writes owner: relaxed read; release: the critical
	 * section happens before the next owner's. */
	atomic_store_explicit(&l->owner, atomic_load_explicit(&l->owner, memory_order_relaxed) + 1,
			      memory_order_release);
}

static const struct lb_lock_ops skip_ops = {
	.family = "test", .lock_size = sizeof(struct skip_lock),
	.lock_align = _Alignof(struct skip_lock), .init = skip_init,
	.name = "ticket-drop-one",
	.summary = "ticket lock whose unlock once forgets to serve the next ticket (a lost hand-over)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_THREAD_CTX,
	.thread_ctx_size = sizeof(struct broken_ctx), .thread_init = ctx_init,
	.lock = skip_lock, .unlock = skip_unlock,
};

#define TAS_BASE                                                                 \
	.family = "test", .lock_size = sizeof(struct broken_lock),              \
	.lock_align = _Alignof(struct broken_lock), .init = broken_init

static const struct lb_lock_ops trylock_ignores_ops = {
	TAS_BASE,
	.name = "tas-trylock-ignores",
	.summary = "tas whose trylock takes the lock without looking at it",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK,
	.lock = tas_lock, .unlock = tas_unlock, .trylock = trylock_ignores,
};

static const struct lb_lock_ops racy_trylock_ops = {
	TAS_BASE,
	.name = "tas-racy-trylock",
	.summary = "tas whose trylock tests, then sets, in two steps",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK,
	.lock = tas_lock, .unlock = tas_unlock, .trylock = trylock_racy,
};

static const struct lb_lock_ops relaxed_unlock_ops = {
	TAS_BASE,
	.name = "tas-relaxed-unlock",
	.summary = "tas whose unlock has relaxed order instead of release",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK,
	.lock = tas_lock, .unlock = unlock_relaxed, .trylock = tas_trylock,
};

static const struct lb_lock_ops strand_ops = {
	TAS_BASE,
	.name = "mutex-strand-one",
	.summary = "futex mutex that loses one waiter's wake-up for good",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX,
	.thread_ctx_size = sizeof(struct broken_ctx), .thread_init = ctx_init,
	.lock = strand_lock, .unlock = strand_unlock,
};

static const struct lb_lock_ops starve_ops = {
	TAS_BASE,
	.name = "mutex-starve-one-noturn",
	.summary = "futex mutex that passes one waiter over for 6 s, flagged noturn (no bug)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_SLEEPS | LB_LOCK_F_THREAD_CTX |
		 LB_LOCK_F_NO_TURN,
	.thread_ctx_size = sizeof(struct broken_ctx), .thread_init = ctx_init,
	.lock = starve_lock, .unlock = strand_unlock,
};

static const struct lb_lock_ops segv_ops = {
	TAS_BASE,
	.name = "tas-segv",
	.summary = "tas where writer 3 faults inside lock()",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_THREAD_CTX,
	.thread_ctx_size = sizeof(struct broken_ctx), .thread_init = ctx_init,
	.lock = lock_segv, .unlock = tas_unlock,
};

static const struct lb_lock_ops abort_ops = {
	TAS_BASE,
	.name = "tas-abort",
	.summary = "tas whose unlock aborts with its own message in writer 2",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_THREAD_CTX,
	.thread_ctx_size = sizeof(struct broken_ctx), .thread_init = ctx_init,
	.lock = tas_lock, .unlock = unlock_abort,
};

const struct lb_lock_ops *const lb_test_broken_locks[] = {
	&trylock_ignores_ops, &racy_trylock_ops, &relaxed_unlock_ops, &strand_ops, &starve_ops, &segv_ops, &abort_ops, &skip_ops, NULL,
};
