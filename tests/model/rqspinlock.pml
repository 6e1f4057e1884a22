/* SPDX-License-Identifier: MIT */
/*
 * rqspinlock.pml - Promela model of locks/include/lockbench/rqspinlock.h
 * (the resilient queued spinlock) for spin(1).
 *
 * Per lock: the qspinlock word's fields (the locked byte, which names the
 * owner thread, pending, tail) as in qspinlock.pml; per thread: one MCS
 * node (a thread waits on one lock at a time here: no signal-handler
 * nesting) and its wait stack of one entry (pushed on entry to the slow
 * path, popped when the wait ends).  Every
 * atomic RMW of the word is one atomic { }.  Spin-waits are blocking guards,
 * and a waiter that the code bounds (the pending waiter and the queue head)
 * has two ways out besides the lock coming free:
 *  - detection: DEADLOCK(me, lk), the AA and cycle checks of
 *    lb_rqspin__check_deadlock over the owners and wait stacks, run on entering
 *    the slow path and, as a guard, at any point of the wait (the periodic
 *    recheck);
 *  - the timeout: Promela's `timeout`, true only when no statement of any
 *    thread can run, i.e. the waiters would spin for ever: the deadline
 *    ends exactly the waits that nothing else ends.
 * A queued non-head waiter waits for its node only; a failing head passes
 * LB_RQSPIN_NODE_ABORT down the queue (lb_rqspin__unqueue).
 *
 * The schedule is chosen by init, so one search covers them all:
 *   0 deadlock-free: T0 and T1 take A then B, T2 takes B alone
 *   1 AA: T0 takes A and A again; T1 contends for A
 *   2 ABBA: T0 takes A then B, T1 B then A
 *   3 ABBCCA: T0 A then B, T1 B then C, T2 C then A
 * and then every thread takes its first lock once more, alone (the lock
 * stays usable after failures).
 *
 * Checked (spin -a, pan -DSAFETY): mutual exclusion per lock (the assert in
 * each critical section); no thread stuck for good (invalid end state): a
 * deadlock always ends in a detection or a timeout; schedule 0 sees no
 * failure at all (no false detection, no timeout); AA is always reported as
 * EDEADLK on entry; ABBA always as EDEADLK (never by timeout: the second
 * thread to wait sees the first one's wait); ABBCCA (a three-thread cycle,
 * which the kernel's two-thread check cannot see) always as EDEADLK too,
 * never by timeout: the check follows the wait-for chain; the retakes after
 * every schedule succeed.
 *
 * Simplifications: the detectors read the owners and wait stacks in one
 * atomic snapshot (the code reads them with relaxed loads, and rechecks every
 * millisecond, so a torn read only delays a detection); the (0,1,0)
 * pending re-read is left out (qspinlock.pml has it); the lock word's
 * fields are separate variables, each RMW of them atomic as on the word.
 *
 * Bugs (must fail):
 *   -DBUG=1  a failed acquisition keeps its wait entry (no
 *            lb_rqspin__wait_pop on the error path): the thread ends with
 *            a stale wait (assert), which a detector would take for a wait
 *            that is not there (a false cycle).
 *
 * Sanity of the search (checked by hand when the model was written, with
 * one assert changed each): ABBCCA does fail (by EDEADLK) in some
 * interleavings, and so does ABBA.
 *   -DBUG=2  the queue head and the pending waiter wait without a deadline
 *            (no timeout), and detection is the two-party check only (the
 *            kernel's): ABBCCA spins for ever (invalid end state).
 *   -DBUG=3  detection is the kernel's two-party check only (with the
 *            timeout): ABBCCA ends by timeout (the assert that it never
 *            does).
 *
 * Line references are to lb_rqspin_lock_slow, lb_rqspin__pending,
 * lb_rqspin__queue, lb_rqspin__head, lb_rqspin__unqueue and lb_rqspin_unlock
 * at the commit that added this model.
 */
#ifndef BUG
#define BUG 0
#endif

#define NPROC 3
#define NLOCK 3
#define NONE 255
#define OK 0
#define EDEADLK 1
#define ETIMEDOUT 2
#define ABORT 2                 /* node_locked: the predecessor failed */

byte owner[NLOCK];              /* the locked byte: owner thread + 1, 0 free */
bit pending[NLOCK];
byte tail[NLOCK];               /* thread + 1 of the tail node, 0 none */
byte node_next[NPROC];          /* thread + 1, 0 none */
byte node_locked[NPROC];        /* 0 wait, 1 head, ABORT */
byte cnt[NPROC];                /* waits pushed (0 or 1: no handlers here) */
byte waitfor[NPROC];            /* the wait stack's entry: lock + 1, 0 empty */
byte inside[NLOCK];
byte first[NPROC];              /* the schedule: the first lock, NONE */
byte second[NPROC];             /* the nested one, NONE */
byte sched;
bit started;

/* Thread o owns lk (its tag in lk's word) and waits for a lock whose
 * owner is thread p + 1 ... */
#define OWNS_WAITS_FOR(o, lk, p) \
	(owner[lk] == o + 1 && cnt[o] == 1 && waitfor[o] != 0 && owner[waitfor[o] - 1] == p + 1)
/* ABBA: o owns lk and waits for a lock we own (one hop of
 * lb_rqspin__cycle_once). */
#define ABBA(me, lk, o) (o != me && OWNS_WAITS_FOR(o, lk, me))
/* ABBCCA: o owns lk and waits for a lock p owns, and p waits for one we
 * own (two hops). */
#define CYCLE3(me, lk, o, p) \
	(o != me && p != me && o != p && OWNS_WAITS_FOR(o, lk, p) && \
	 OWNS_WAITS_FOR(p, waitfor[o] - 1, me))
/* lb_rqspin__check_deadlock for thread me waiting for lk: AA (the word
 * names us), then the cycles. */
#define DEADLOCK(me, lk) \
	(owner[lk] == me + 1 || ABBA(me, lk, 0) || ABBA(me, lk, 1) || ABBA(me, lk, 2) || \
	 CYCLE3(me, lk, 0, 1) || CYCLE3(me, lk, 0, 2) || CYCLE3(me, lk, 1, 0) || \
	 CYCLE3(me, lk, 1, 2) || CYCLE3(me, lk, 2, 0) || CYCLE3(me, lk, 2, 1))

#if BUG == 2 || BUG == 3
/* The kernel's check: AA and two-party cycles only. */
#undef DEADLOCK
#define DEADLOCK(me, lk) \
	(owner[lk] == me + 1 || ABBA(me, lk, 0) || ABBA(me, lk, 1) || ABBA(me, lk, 2))
#endif
#if BUG == 2
#define GIVE_UP(me, lk) DEADLOCK(me, lk) -> ret = EDEADLK
#else
#define GIVE_UP(me, lk) DEADLOCK(me, lk) -> ret = EDEADLK \
	:: timeout -> ret = ETIMEDOUT
#endif

/* Take lock lk: ret = OK, EDEADLK or ETIMEDOUT (then not held, entry gone). */
inline rq_lock(me, lk)
{
	ret = OK;
	/* the fast-path CAS (0,0,0) -> (0,0,tag) */
	atomic {
		if
		:: owner[lk] == 0 && pending[lk] == 0 && tail[lk] == 0 -> owner[lk] = me + 1; goto fast
		:: else -> vp = pending[lk]; vt = tail[lk]
		fi
	}
	/* lb_rqspin_lock_slow: lb_rqspin__wait_push, then detection on entry */
	d_step { waitfor[me] = lk + 1; cnt[me] = 1 };
	if
	:: DEADLOCK(me, lk) -> ret = EDEADLK; goto failed
	:: else -> skip
	fi;
	if
	:: vp || vt != 0 -> goto queue
	:: else -> skip
	fi;
	/* lb_rqspin__pending: fetch_or PENDING */
	atomic { vp = pending[lk]; vt = tail[lk]; pending[lk] = 1 };
	if
	:: vp || vt != 0 ->                     /* lost a race: undo our bit only */
		if
		:: !vp -> pending[lk] = 0
		:: else -> skip
		fi;
		goto queue
	:: else -> skip
	fi;
	if                                      /* wait for the owner, bounded */
	:: owner[lk] == 0 -> atomic { pending[lk] = 0; owner[lk] = me + 1 }; goto done
	:: GIVE_UP(me, lk)
	fi;
	pending[lk] = 0;                        /* give up: our pending bit goes */
	goto failed;

queue:
	/* lb_rqspin__queue */
	node_locked[me] = 0;
	node_next[me] = 0;
	atomic {
		if
		:: owner[lk] == 0 && pending[lk] == 0 && tail[lk] == 0 -> owner[lk] = me + 1; goto done
		:: else -> skip
		fi
	}
	atomic { prev = tail[lk]; tail[lk] = me + 1 };
	if
	:: prev != 0 ->
		node_next[prev - 1] = me + 1;
		node_locked[me] != 0;           /* bounded by the head's deadline */
		if
		:: node_locked[me] == ABORT -> ret = ETIMEDOUT; goto unqueue
		:: else -> skip
		fi
	:: else -> skip
	fi;
	/* lb_rqspin__head: wait for owner and pending to leave, bounded */
	if
	:: atomic { owner[lk] == 0 && pending[lk] == 0 -> vt = tail[lk] }
	:: GIVE_UP(me, lk); goto unqueue
	fi;
	atomic {
		if
		:: vt == me + 1 && tail[lk] == vt && owner[lk] == 0 && pending[lk] == 0 ->
			owner[lk] = me + 1; tail[lk] = 0; got = 1
		:: else -> got = 0
		fi
	};
	if
	:: got -> goto done
	:: else -> skip
	fi;
	owner[lk] = me + 1;
	node_next[me] != 0;
	node_locked[node_next[me] - 1] = 1;
	goto done;

unqueue:
	/* lb_rqspin__unqueue: withdraw our tail, or abort the successor */
	atomic {
		if
		:: tail[lk] == me + 1 -> tail[lk] = 0; got = 1
		:: else -> got = 0
		fi
	};
	if
	:: !got ->
		node_next[me] != 0;
		node_locked[node_next[me] - 1] = ABORT
	:: else -> skip
	fi;

failed:
	skip;
#if BUG != 1
	d_step { waitfor[me] = 0; cnt[me] = 0 };  /* lb_rqspin__wait_pop */
#endif
	goto fast;
done:
	skip;
	d_step { waitfor[me] = 0; cnt[me] = 0 };  /* lb_rqspin__wait_pop */
fast:
	skip
}

/* lb_rqspin_unlock: the locked byte goes; nothing else to undo */
inline rq_unlock(me, lk)
{
	owner[lk] = 0
}

inline section(lk)
{
	inside[lk]++;
	assert(inside[lk] == 1);
	inside[lk]--
}

proctype thread(byte me)
{
	byte ret, ret2, prev, vt;
	bit vp, got;

	started;
	if
	:: first[me] == NONE -> goto out
	:: else -> skip
	fi;
	rq_lock(me, first[me]);
	/* A lock nobody else holds nested in: only the first can be contended
	 * by a deadlock, and it never is here (a failure means a false one). */
	assert(ret == OK);
	section(first[me]);
	if
	:: second[me] != NONE ->
		ret2 = ret;
		rq_lock(me, second[me]);
		if
		:: ret == OK -> section(second[me]); rq_unlock(me, second[me])
		:: else -> skip
		fi;
		/* What each schedule may see on the nested acquisition. */
		assert(sched != 0 || ret == OK);
		assert(sched != 1 || me != 0 || ret == EDEADLK);
		assert(sched != 2 || ret != ETIMEDOUT);
		assert(sched != 3 || ret != ETIMEDOUT);
		ret = ret2
	:: else -> skip
	fi;
	rq_unlock(me, first[me]);
	/* The lock stays usable: a retake, alone, succeeds. */
	rq_lock(me, first[me]);
	assert(ret == OK);
	section(first[me]);
	rq_unlock(me, first[me]);
	assert(cnt[me] == 0);
out:
	skip
}

init {
	byte i;
	atomic {
		for (i : 0 .. NPROC - 1) {
			first[i] = NONE;
			second[i] = NONE
		}
		if
		:: sched = 0; first[0] = 0; second[0] = 1; first[1] = 0; second[1] = 1; first[2] = 1
		:: sched = 1; first[0] = 0; second[0] = 0; first[1] = 0
		:: sched = 2; first[0] = 0; second[0] = 1; first[1] = 1; second[1] = 0
		:: sched = 3; first[0] = 0; second[0] = 1; first[1] = 1; second[1] = 2;
			first[2] = 2; second[2] = 0
		fi;
		for (i : 0 .. NPROC - 1) {
			run thread(i)
		}
		started = 1
	}
}
