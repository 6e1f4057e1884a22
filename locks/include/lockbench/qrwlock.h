/* SPDX-License-Identifier: MIT */
/*
 * qrwlock.h - queued reader/writer lock: one counter word, a fair queue.
 *
 * Design
 * ------
 * After the Linux qrwlock (Waiman Long, 2013).  The fast paths are one
 * atomic on one 32-bit word: a reader adds a reference, a writer CASes
 * 0 -> locked.  Whoever cannot get in on the fast path joins a queue, the
 * `wait_lock` (an embedded qspinlock_pv.h lock: arrival order while its
 * head runs, each queued waiter spins on its own node for a bounded time
 * and then sleeps on a futex of its own).  Only the thread at the head of
 * that queue, i.e. the holder of wait_lock, watches the word:
 *
 *  - a head reader adds its reference, waits until no writer holds the lock,
 *    and releases wait_lock at once, so a run of queued readers enters
 *    together, one hand-over apart;
 *  - a head writer sets the "writer waiting" bit, which turns every newly
 *    arriving reader away from the fast path into the queue behind it, waits
 *    until the active readers have drained, takes the lock, and only then
 *    releases wait_lock.
 *
 * Fairness: waiters are served in queue (arrival) order; a waiting writer
 * stops new readers, so writers do not starve, and a writer that holds the
 * lock is followed by the queued readers, so readers do not starve either.
 * It is fair only as far as wait_lock is (the kernel says the same): the pv
 * wait_lock lets a running slow-path thread overtake a queue head that is
 * asleep or not yet back on a CPU (once per such wake-up; see
 * qspinlock_pv.h), the kernel's own trade when it runs as a guest.  A
 * waiting writer (WAITING set, wait_lock held) is never overtaken.
 * Threads that arrive while the lock is free, or readers arriving while only
 * readers hold it and nobody waits, get in on the fast path without
 * queueing.
 *
 * The kernel's interrupt-context reader exception, and what we do instead:
 * in the kernel a reader running in interrupt context never queues.  It
 * keeps its reference and spins until no writer *holds* the lock, ignoring
 * a writer that merely waits.  The reason is recursion: the interrupted
 * task may itself hold the lock for reading (rwlocks such as tasklist_lock
 * are read-locked from interrupts without every reader disabling them), and
 * an interrupt reader queued behind a waiting writer, which in turn waits
 * for that interrupted reader, would deadlock.  The price is writer
 * unfairness under interrupt-reader load.  Userspace has no interrupt
 * context; the analogue is a signal handler.  We keep the half of the
 * exception that costs writers nothing and drop the other half: a reader
 * that finds a writer *holding* the lock with no writer *waiting* keeps its
 * reference and waits for that writer to leave without queueing (no writer
 * can take the lock while the reference stands, and a writer that queues
 * later sets WAITING and waits for this reader like any other, so writers
 * still do not starve; this batches the readers that pile up behind one
 * writer into one wake-up instead of one queue hand-over each); a reader
 * that finds a writer *waiting* queues.  Consequence, stated as a rule: a
 * thread must not take the read lock recursively, including from a signal
 * handler that interrupts a read-side critical section of the same lock, or
 * it can deadlock once a writer waits (block the signal around the critical
 * section instead).
 *
 * Waiting policy (one protocol, whatever the feature-test macros): this
 * tree runs with more threads than CPUs, where a waiter that spins while a
 * critical section runs steals CPU from the very thread it waits for.
 *  - Threads queued behind the head wait in wait_lock, which spins for
 *    LB_QSPIN_PV_SPIN_NS and then sleeps (FUTEX_WAIT on the node's own
 *    word); a parked head never keeps them spinning.
 *  - The head waits in two phases:
 *    1. spin: re-read the word for LB_QRWLOCK_SPIN_NS (a time, converted by
 *       the shared calibration in lockbench/lb_spin_budget.h);
 *    2. park: publish what it waits for in `sleeper` (READER: no writer
 *       holds the lock; WRITER: the word is exactly "writer waiting"), read
 *       `wake_seq`, re-read the word, and FUTEX_WAIT on `wake_seq`, a word of
 *       its own, not on `cnts`, which every fast path hammers (a FUTEX_WAIT
 *       on it fails with EAGAIN whenever any reader comes or goes).
 * Readers waiting behind a holding writer (above) spin for the same time,
 * then count themselves in `rd_sleepers` and sleep on `rd_seq`; write
 * unlock wakes them all.
 * Every operation that can make a parked head's condition true checks
 * `sleeper` after its atomic on the word and, if the condition now holds,
 * bumps `wake_seq` and issues FUTEX_WAKE: write unlock always looks; a
 * reader's decrement (unlock, or the undo of a failed fast path/trylock)
 * looks only when it leaves the word at exactly "writer waiting".  At most
 * one thread is ever parked there (the wait_lock holder), so a wake wakes
 * one.  Always futex waiting, through the raw syscall (lockbench/lb_futex.h), so
 * the header needs _GNU_SOURCE and every translation unit runs the same
 * protocol: two files can no longer build different waiting policies and
 * lose each other's wake-ups (the old LB_QRWLOCK_FUTEX macro, chosen per
 * file from feature-test macros, is gone).
 *
 * Lock word `cnts` (32 bits):
 *
 *   | bits | mask       | meaning                                           |
 *   |------|------------|---------------------------------------------------|
 *   | 0-7  | 0x000000ff | 0xff: a writer holds the lock (LB_QRW_WLOCKED)     |
 *   | 8    | 0x00000100 | a writer waits at the queue head (LB_QRW_WAITING)  |
 *   | 9-31 | 0xfffffe00 | reader references, LB_QRW_BIAS (1 << 9) each       |
 *
 *   Readers include transient references from fast-path attempts that are
 *   about to be undone.  `sleeper`: 0 nobody parked, LB_QRW_SLEEP_READER or
 *   LB_QRW_SLEEP_WRITER: the queue head is parked.  `wake_seq`: the parked
 *   head's futex word, bumped by each wake.
 *
 * Transitions (R = reader count, '.' = unchanged):
 *
 *   read fast      (R, 0, 0)   -> (R+1, 0, 0)         fetch_add, acquire
 *   read behind W  (R+1, 0, ff) kept; wait for wlocked == 0 (no queue)
 *   read slow      undo, queue, (R+1, ., .) then wait for wlocked == 0
 *   read unlock    (R+1, w, .) -> (R, w, .)           fetch_sub, release
 *   write fast     (0, 0, 0)   -> (0, 0, ff)          CAS, acquire
 *   write slow     queue, (R, 0, x) -> (R, 1, x), wait (0, 1, 0) -> (0, 0, ff)
 *   write unlock   (R, w, ff)  -> (R, w, 0)           fetch_sub 0xff, release
 *
 * Memory-order pairing:
 *
 *   | acquire side                              | pairs with (release side)         |
 *   |-------------------------------------------|-----------------------------------|
 *   | read fast-path fetch_add                  | write unlock's fetch_sub          |
 *   | head reader's wait for wlocked == 0       | write unlock's fetch_sub          |
 *   | reader behind a writer: same wait; parked:| write unlock: RMW cnts, load      |
 *   |   add rd_sleepers, load rd_seq, load cnts |   rd_sleepers, bump rd_seq        |
 *   |   (seq_cst, Dekker as below)              |   (seq_cst), wake all             |
 *   | write CAS 0 -> ff / waiting -> ff          | read unlocks and write unlock     |
 *   |                                           | (RMWs on one word: one release    |
 *   |                                           | sequence, so all of them)         |
 *   | parking: store sleeper, load wake_seq,    | unlock: RMW cnts, load sleeper,   |
 *   |   load cnts (seq_cst, Dekker-style:      |   bump wake_seq (seq_cst); the    |
 *   |   either the head sees the new word or    |   bump comes after the head's     |
 *   |   the unlocker sees the head parked)      |   wake_seq read, so FUTEX_WAIT    |
 *   |                                           |   returns at once if it is late   |
 *
 * Port notes: the kernel releases a writer with a byte store to the locked
 * byte; here it is fetch_sub(0xff), legal because only the writer holds
 * 0xff (as the kernel's qrwlock does), and it also gives the full ordering
 * the parking handshake needs.  The kernel's contention tracepoints are not
 * part of this header.
 */
#ifndef LB_QRWLOCK_H
#define LB_QRWLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "lb_atomic.h"
#include "lb_cond_load.h"
#include "lb_probe.h"

#include "lb_futex.h" /* #errors without _GNU_SOURCE: one protocol for all */
#include "lb_spin_budget.h"
#include "qspinlock_pv.h"

/* Lock word fields (see the table above). */
#define LB_QRW_WLOCKED 0x000000ffu
#define LB_QRW_WAITING 0x00000100u
#define LB_QRW_WMASK   0x000001ffu
#define LB_QRW_BIAS    (1u << 9)

/* Values of `sleeper`: what a parked queue head is waiting for. */
#define LB_QRW_SLEEP_NONE   0u
#define LB_QRW_SLEEP_READER 1u /* wlocked == 0 */
#define LB_QRW_SLEEP_WRITER 2u /* cnts == LB_QRW_WAITING */

/*
 * Head spin budget before parking, in ns: a few microseconds, about what a
 * FUTEX_WAIT/FUTEX_WAKE round trip costs; a time, not a loop count, so it
 * is the same on every CPU whatever its pause costs.
 */
#ifndef LB_QRWLOCK_SPIN_NS
#define LB_QRWLOCK_SPIN_NS 4000u
#endif

/* Unlock-side RMW order: seq_cst, the parking handshake needs it. */
#define LB_QRW__UNLOCK_ORDER memory_order_seq_cst

/*
 * The slow paths' per-thread context is the wait_lock's (a node of the
 * domain, see qspinlock_pv.h).
 */
typedef struct lb_qspin_pv_ctx lb_qrwlock_ctx_t;

typedef struct lb_qrwlock {
	_Atomic(uint32_t) cnts;        /* the word above */
	_Atomic(uint32_t) sleeper;     /* LB_QRW_SLEEP_*: parked head */
	_Atomic(uint32_t) wake_seq;    /* the parked head's futex word */
	_Atomic(uint32_t) rd_sleepers; /* readers parked behind a holding writer */
	_Atomic(uint32_t) rd_seq;      /* their futex word */
	lb_qspin_pv_t wait_lock;      /* queue of slow-path waiters */
} lb_qrwlock_t;

#define LB_QRWLOCK_INITIALIZER { 0, 0, 0, 0, 0, LB_QSPIN_PV_INITIALIZER }

static inline void lb_qrwlock_init(lb_qrwlock_t *lock)
{
	atomic_init(&lock->cnts, 0);
	atomic_init(&lock->sleeper, LB_QRW_SLEEP_NONE);
	atomic_init(&lock->wake_seq, 0);
	atomic_init(&lock->rd_sleepers, 0);
	atomic_init(&lock->rd_seq, 0);
	lb_qspin_pv_init(&lock->wait_lock);
}

/* Bind a thread's context to slot `index` of the wait_lock's node domain
 * (lb_qspin_pv_ctx_init); false if the index cannot be encoded. */
static inline bool lb_qrwlock_ctx_init(lb_qrwlock_ctx_t *ctx, struct lb_qspin_pv_slot *slots,
				       uint32_t index)
{
	return lb_qspin_pv_ctx_init(ctx, slots, index);
}

/* ---- helpers ------------------------------------------------------------ */

/* Does word `cnts` satisfy what a head parked as `kind` waits for? */
static inline bool lb_qrwlock__ready(uint32_t kind, uint32_t cnts)
{
	if (kind == LB_QRW_SLEEP_WRITER)
		return cnts == LB_QRW_WAITING;
	return !(cnts & LB_QRW_WLOCKED);
}

/*
 * Called after an RMW left the word at `cnts`: wake the parked head if that
 * value is what it waits for.  seq_cst load and bump: the other half of the
 * parking handshake (see lb_qrwlock__wait).  Out of line: rare, a syscall.
 */
LB_SLOWPATH void lb_qrwlock__wake(lb_qrwlock_t *lock, uint32_t cnts)
{
	uint32_t kind = atomic_load_explicit(&lock->sleeper, memory_order_seq_cst);

	if (kind != LB_QRW_SLEEP_NONE && lb_qrwlock__ready(kind, cnts)) {
		atomic_fetch_add_explicit(&lock->wake_seq, 1, memory_order_seq_cst);
		lb_futex_wake(&lock->wake_seq, 1);
	}
}

/* Wake every reader parked behind a writer that just left.  seq_cst bump:
 * ordered after our RMW of the word and our load of rd_sleepers. */
LB_SLOWPATH void lb_qrwlock__wake_readers(lb_qrwlock_t *lock)
{
	atomic_fetch_add_explicit(&lock->rd_seq, 1, memory_order_seq_cst);
	lb_futex_wake(&lock->rd_seq, INT32_MAX);
}

/* (R+1, ., .) -> (R, ., .): drop a reader reference, waking a parked writer
 * head if this left only its "waiting" bit. */
static inline void lb_qrwlock__sub_reader(lb_qrwlock_t *lock)
{
	/* Release: the read-side critical section (if any) happens before the
	 * writer's acquire CAS; seq_cst for the parking handshake, see above. */
	uint32_t cnts = atomic_fetch_sub_explicit(&lock->cnts, LB_QRW_BIAS, LB_QRW__UNLOCK_ORDER) -
			LB_QRW_BIAS;
	if (LB_UNLIKELY(cnts == LB_QRW_WAITING))
		lb_qrwlock__wake(lock, cnts);
}

/*
 * The queue head's wait: return the first word (loaded with acquire) that
 * satisfies `kind` (LB_QRW_SLEEP_READER or _WRITER).  Spin, then park.
 */
LB_SLOWPATH uint32_t lb_qrwlock__wait(lb_qrwlock_t *lock, uint32_t kind)
{
	uint32_t cnts, n = lb_spin_loops(LB_QRWLOCK_SPIN_NS); /* >= 1 */

	/*
	 * Phase 1: spin loop for LB_QRWLOCK_SPIN_NS (n looks, a pause after
	 * each).  Acquire pairs with the releasing RMW (read or write unlock)
	 * that produced the value we accept.
	 */
	lb_cond_load_acquire_until(cnts, &lock->cnts, lb_qrwlock__ready(kind, cnts), --n == 0);
	if (lb_qrwlock__ready(kind, cnts))
		return cnts;
	lb_cond_load_pause(&lock->cnts); /* the budget's last pause */
	/*
	 * Phase 2: park on wake_seq.  seq_cst store of `sleeper`, then seq_cst
	 * loads of wake_seq and of the word, pair with the unlockers' seq_cst
	 * RMW of the word, load of `sleeper` and bump of wake_seq: either we
	 * see their new word here, or they see us parked and bump wake_seq
	 * after we read it, so FUTEX_WAIT (which re-checks wake_seq in the
	 * kernel) does not sleep through their wake.  seq_cst includes
	 * acquire for the value we return.  Loop: EINTR, EAGAIN and wakes for
	 * a condition that no longer holds only re-check.
	 */
	for (;;) {
		atomic_store_explicit(&lock->sleeper, kind, memory_order_seq_cst);
		uint32_t seq = atomic_load_explicit(&lock->wake_seq, memory_order_seq_cst);
		cnts = atomic_load_explicit(&lock->cnts, memory_order_seq_cst);
		if (lb_qrwlock__ready(kind, cnts))
			break;
		lb_futex_wait(&lock->wake_seq, seq, NULL);
	}
	/* Only the wait_lock holder parks, and that is us: plain reset. */
	atomic_store_explicit(&lock->sleeper, LB_QRW_SLEEP_NONE, memory_order_relaxed);
	return cnts;
}

/* ---- read side ---------------------------------------------------------- */

/*
 * A reader that kept its reference while a writer holds the lock (and none
 * waits): wait for the writer to leave.  Spin for LB_QRWLOCK_SPIN_NS, then
 * park on rd_seq.  Handshake (seq_cst throughout): we count ourselves in
 * rd_sleepers, read rd_seq, re-read the word; write unlock RMWs the word,
 * reads rd_sleepers and, if non-zero, bumps rd_seq and wakes all.  Either we
 * see the writer gone or it sees us and bumps rd_seq after our read, so
 * FUTEX_WAIT returns at once.  The seq_cst load of the word that sees the
 * writer gone is our acquire (pairs with write unlock's release RMW).
 */
LB_SLOWPATH void lb_qrwlock__reader_wait_writer(lb_qrwlock_t *lock)
{
	uint32_t cnts, n = lb_spin_loops(LB_QRWLOCK_SPIN_NS); /* >= 1 */

	/* Spin phase: spin loop bounded in time (n looks, a pause after
	 * each); acquire as described above. */
	lb_cond_load_acquire_until(cnts, &lock->cnts, !(cnts & LB_QRW_WLOCKED), --n == 0);
	if (!(cnts & LB_QRW_WLOCKED))
		return;
	lb_cond_load_pause(&lock->cnts); /* the budget's last pause */
	atomic_fetch_add_explicit(&lock->rd_sleepers, 1, memory_order_seq_cst);
	/* Park loop: EINTR, EAGAIN and stale wakes only re-check. */
	for (;;) {
		uint32_t seq = atomic_load_explicit(&lock->rd_seq, memory_order_seq_cst);
		if (!(atomic_load_explicit(&lock->cnts, memory_order_seq_cst) & LB_QRW_WLOCKED))
			break;
		lb_futex_wait(&lock->rd_seq, seq, NULL);
	}
	atomic_fetch_sub_explicit(&lock->rd_sleepers, 1, memory_order_relaxed);
}

/*
 * Reader slow path (a writer holds or waits for the lock; `cnts` is the
 * word our fast-path fetch_add saw).  Out of line so the inlined read_lock
 * stays one fetch_add and a branch, and so profiles name the time spent
 * waiting.
 *
 * A writer holds and none waits: keep our reference and wait for it to
 * leave, without queueing (the kernel lets interrupt-context readers do
 * this; here every reader may).  No writer can take the lock while our
 * reference stands, so we are in as soon as this one leaves; a writer that
 * queues after us sets WAITING and waits for us to drain, as for any
 * reader, so writers still do not starve.  Otherwise (a writer waits)
 * queue in arrival order.
 */
LB_SLOWPATH void lb_qrwlock_read_lock_slow(lb_qrwlock_t *lock, const lb_qrwlock_ctx_t *ctx,
					   uint32_t cnts)
{
	if ((cnts & LB_QRW_WMASK) == LB_QRW_WLOCKED) {
		lb_qrwlock__reader_wait_writer(lock);
		return;
	}

	/* Give back the fast path's reference: we queue instead. */
	lb_qrwlock__sub_reader(lock);

	/* Wait our turn in arrival order. */
	lb_qspin_pv_lock(&lock->wait_lock, ctx);

	/*
	 * At the head: take our reference now (a writer may not take the lock
	 * from here on), then wait for an active writer to leave.  Relaxed:
	 * the wait below does the acquire.
	 */
	atomic_fetch_add_explicit(&lock->cnts, LB_QRW_BIAS, memory_order_relaxed);
	lb_qrwlock__wait(lock, LB_QRW_SLEEP_READER);

	/* In: let the next waiter (often another reader) come to the head. */
	lb_qspin_pv_unlock(&lock->wait_lock);
}

static inline void lb_qrwlock_read_lock(lb_qrwlock_t *lock, const lb_qrwlock_ctx_t *ctx)
{
	/* Acquire pairs with the release in lb_qrwlock_write_unlock. */
	uint32_t cnts = atomic_fetch_add_explicit(&lock->cnts, LB_QRW_BIAS, memory_order_acquire);

	if (LB_LIKELY(!(cnts & LB_QRW_WMASK)))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_READ, lb_qrwlock_read_lock_slow(lock, ctx, cnts));
}

/* Succeeds only if no writer holds or waits for the lock; never queues. */
static inline bool lb_qrwlock_read_trylock(lb_qrwlock_t *lock)
{
	/* Relaxed peek: do not touch the line for ownership if a writer is visible. */
	uint32_t cnts = atomic_load_explicit(&lock->cnts, memory_order_relaxed);

	if (cnts & LB_QRW_WMASK)
		return false;
	/* Acquire pairs with the release in lb_qrwlock_write_unlock. */
	cnts = atomic_fetch_add_explicit(&lock->cnts, LB_QRW_BIAS, memory_order_acquire);
	if (LB_LIKELY(!(cnts & LB_QRW_WMASK)))
		return true;
	lb_qrwlock__sub_reader(lock); /* a writer got there first: undo */
	return false;
}

static inline void lb_qrwlock_read_unlock(lb_qrwlock_t *lock)
{
	lb_qrwlock__sub_reader(lock);
}

/* ---- write side --------------------------------------------------------- */

/* Writer slow path; out of line for the same reasons as the reader's. */
LB_SLOWPATH void lb_qrwlock_write_lock_slow(lb_qrwlock_t *lock, const lb_qrwlock_ctx_t *ctx)
{
	uint32_t cnts = 0;

	/* Wait our turn in arrival order. */
	lb_qspin_pv_lock(&lock->wait_lock, ctx);

	/* The lock may have drained while we queued.  Acquire as in the fast path. */
	if (atomic_load_explicit(&lock->cnts, memory_order_relaxed) == 0 &&
	    atomic_compare_exchange_strong_explicit(&lock->cnts, &cnts, LB_QRW_WLOCKED,
						    memory_order_acquire, memory_order_relaxed))
		goto unlock;

	/* (R, 0, x) -> (R, 1, x): from now on arriving readers queue behind us. */
	atomic_fetch_or_explicit(&lock->cnts, LB_QRW_WAITING, memory_order_relaxed);

	/*
	 * (0, 1, 0) -> (0, 0, ff): wait for the readers and any fast-path
	 * writer to leave, then take it.  The CAS fails if a reader's fast
	 * path added a transient reference; it will undo it and, leaving the
	 * word at "waiting" again, wake us if we parked.  Acquire pairs with
	 * every read unlock and write unlock (one release sequence).
	 */
	do
		cnts = lb_qrwlock__wait(lock, LB_QRW_SLEEP_WRITER);
	while (!atomic_compare_exchange_weak_explicit(&lock->cnts, &cnts, LB_QRW_WLOCKED,
						      memory_order_acquire, memory_order_relaxed));
unlock:
	lb_qspin_pv_unlock(&lock->wait_lock);
}

static inline void lb_qrwlock_write_lock(lb_qrwlock_t *lock, const lb_qrwlock_ctx_t *ctx)
{
	uint32_t cnts = 0;

	/* Acquire pairs with the release in read and write unlock. */
	if (LB_LIKELY(lb_cas_acquire(&lock->cnts, &cnts, LB_QRW_WLOCKED)))
		return;
	LB_PROBE_CONTENDED(lock, LB_CONTENTION_WRITE, lb_qrwlock_write_lock_slow(lock, ctx));
}

/* Succeeds only on a completely free word; never queues. */
static inline bool lb_qrwlock_write_trylock(lb_qrwlock_t *lock)
{
	/* Acquire pairs with the release in read and write unlock. */
	return lb_cas_acquire_if_zero(&lock->cnts, LB_QRW_WLOCKED);
}

static inline void lb_qrwlock_write_unlock(lb_qrwlock_t *lock)
{
	/*
	 * (R, w, ff) -> (R, w, 0).  Release: the critical section happens
	 * before the next reader's or writer's acquire.  seq_cst: first half
	 * of the parking handshake's unlock side.
	 */
	uint32_t cnts = atomic_fetch_sub_explicit(&lock->cnts, LB_QRW_WLOCKED, LB_QRW__UNLOCK_ORDER) -
			LB_QRW_WLOCKED;
	/* Second half: anyone parked?  (Usually not: loads on the same line.) */
	if (LB_UNLIKELY(atomic_load_explicit(&lock->sleeper, memory_order_seq_cst) !=
			LB_QRW_SLEEP_NONE))
		lb_qrwlock__wake(lock, cnts);
	/* Readers parked behind us (see lb_qrwlock__reader_wait_writer). */
	if (LB_UNLIKELY(atomic_load_explicit(&lock->rd_sleepers, memory_order_seq_cst) != 0))
		lb_qrwlock__wake_readers(lock);
}

/* ---- snapshots for assertions and statistics (not synchronisation) ------ */

static inline bool lb_qrwlock_is_locked(const lb_qrwlock_t *lock)
{
	uint32_t cnts = atomic_load_explicit(&lock->cnts, memory_order_relaxed);

	return (cnts & LB_QRW_WLOCKED) || cnts >= LB_QRW_BIAS;
}

static inline bool lb_qrwlock_is_write_locked(const lb_qrwlock_t *lock)
{
	return (atomic_load_explicit(&lock->cnts, memory_order_relaxed) & LB_QRW_WLOCKED) != 0;
}

/* Somebody waits in the queue (the kernel's queued_rwlock_is_contended). */
static inline bool lb_qrwlock_is_contended(const lb_qrwlock_t *lock)
{
	return atomic_load_explicit(&((lb_qrwlock_t *)lock)->wait_lock.val, memory_order_relaxed) != 0;
}

/*
 * In a fork() child (one thread left, nothing runs concurrently): forget
 * the wait_lock queue, a parked head and parked readers, which were other
 * threads.  A write lock held stays held (by the forking thread, or for
 * ever by a vanished one, as glibc leaves a mutex); a writer WAITING at the
 * queue head was a vanished thread.  Reader counts are kept as they are (a
 * vanished reader's bias holds the lock for reading for ever): the preload,
 * the one caller, uses the write side only.
 */
static inline void lb_qrwlock_atfork_child(lb_qrwlock_t *lock)
{
	uint32_t cnts = atomic_load_explicit(&lock->cnts, memory_order_relaxed);
	atomic_store_explicit(&lock->cnts, cnts & ~LB_QRW_WAITING, memory_order_relaxed);
	atomic_store_explicit(&lock->sleeper, LB_QRW_SLEEP_NONE, memory_order_relaxed);
	atomic_store_explicit(&lock->rd_sleepers, 0, memory_order_relaxed);
	atomic_store_explicit(&lock->wait_lock.val, 0, memory_order_relaxed);
}

#endif /* LB_QRWLOCK_H */
