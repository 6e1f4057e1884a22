/* SPDX-License-Identifier: MIT */
/*
 * qspinlock.pml - Promela model of locks/qspinlock.h (the native queued
 * spinlock) for spin(1).
 *
 * Word fields (locked byte, pending, tail) are variables; each atomic RMW of
 * the word or of a sub-word (LB_QSPIN_SUBWORD stores) is one atomic { }.  A
 * spin-wait is a blocking guard: a thread that can never leave one is an
 * invalid end state, as is any hang.  Bounded spins (the (0,1,0) re-read)
 * may stop at any point.  Nesting (node[idx] > 0) is not modelled: one node
 * per thread.
 *
 * Checked (spin -a, pan -DSAFETY): mutual exclusion (the assert in the
 * critical section); no thread stuck when the others are done.
 *
 * Bug (-DBUG=1, must fail): the queue head waits for the locked byte only,
 * not for locked and pending (LB_QSPIN_LOCKED_MASK instead of
 * LB_QSPIN_LOCKED_PENDING_MASK at L441): head and pending waiter both
 * take the lock.
 *
 * Line numbers are those of locks/qspinlock.h at the commit that added this
 * model.
 */
#ifndef NPROC
#define NPROC 3
#endif
#ifndef ITERS
#define ITERS 2
#endif

bit locked;              /* locked byte */
bit pending;             /* pending byte */
byte tail;               /* thread + 1 of the tail node, 0 none */
byte node_next[NPROC];
bit node_locked[NPROC];
byte inside;

proctype thread(byte me)
{
	byte it, prev, vt;
	bit vl, vp, got;

	for (it : 1 .. ITERS) {
		/* lb_qspin_lock, L475-487: (0,0,0) -> (0,0,1) */
		atomic {
			if
			:: locked == 0 && pending == 0 && tail == 0 -> locked = 1; goto cs
			:: else -> vl = locked; vp = pending; vt = tail
			fi
		}
		/* lb_qspin_lock_slow, L354-358: (0,1,0) re-read, bounded */
		do
		:: vl == 0 && vp == 1 && vt == 0 -> atomic { vl = locked; vp = pending; vt = tail }
		:: true -> break
		od;
		if
		:: vp || vt != 0 -> goto queue          /* L361-362 */
		:: else -> skip
		fi;
		/* L368: fetch_or PENDING, acquire */
		atomic { vl = locked; vp = pending; vt = tail; pending = 1 };
		if
		:: vp || vt != 0 ->                     /* L369-373: lost a race */
			if
			:: !vp -> pending = 0
			:: else -> skip
			fi;
			goto queue
		:: else -> skip
		fi;
		locked == 0;                            /* L380-382: wait for the owner */
		atomic { pending = 0; locked = 1 };     /* L385: clear_pending_set_locked */
		goto cs;

queue:
		node_locked[me] = 0;                    /* L408-409 */
		node_next[me] = 0;
		/* L412: trylock */
		atomic {
			if
			:: locked == 0 && pending == 0 && tail == 0 -> locked = 1; goto cs
			:: else -> skip
			fi
		}
		atomic { prev = tail; tail = me + 1 }   /* L416: xchg_tail */
		if
		:: prev != 0 ->
			node_next[prev - 1] = me + 1;   /* L425 */
			node_locked[me] == 1            /* L431-433 */
		:: else -> skip
		fi;
		/* L440-442: head waits for owner and pending waiter to leave */
#if BUG == 1
		atomic { locked == 0 -> vt = tail; vp = pending };
#else
		atomic { locked == 0 && pending == 0 -> vt = tail; vp = pending };
#endif
		/* L450-453: still the tail: take it and clear the tail in one CAS */
		atomic {
			if
			:: vt == me + 1 && tail == vt && locked == 0 && pending == vp ->
				locked = 1; tail = 0; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: got -> goto cs
		:: else -> skip
		fi;
		locked = 1;                             /* L456: set_locked */
		node_next[me] != 0;                     /* L462-463 */
		node_locked[node_next[me] - 1] = 1;     /* L466 */

cs:
		inside++;
		assert(inside == 1);
		inside--;
		locked = 0                              /* lb_qspin_unlock, L490-499 */
	}
}

init {
	byte i;
	atomic {
		for (i : 0 .. NPROC - 1) {
			run thread(i)
		}
	}
}
