/* SPDX-License-Identifier: MIT */
/*
 * qspinlock_pv.pml - Promela model of locks/qspinlock_pv.h for spin(1).
 *
 * The lock word's fields (locked byte, HEAD_SPIN, PENDING, tail) are
 * separate variables; every atomic read-modify-write of the word in the C
 * code is one atomic { } here, every plain load one snapshot.  Spin loops
 * bounded by a budget become a loop whose exit is a nondeterministic choice
 * (every budget at once).  FUTEX_WAIT is "compare the word and sleep" in one
 * step, FUTEX_WAKE clears one sleeper's flag.
 *
 * Checked (spin -a, pan -DSAFETY): mutual exclusion (the assert in the
 * critical section) and no lost wake-up: a thread asleep on a futex when
 * every other thread has finished is an invalid end state.
 *
 * Bugs (-DBUG=n, each must fail):
 *   1  the stealer tests the LOCKED bit (0x01) instead of the locked byte,
 *      so it steals while a slow unlock has the byte at 2: two owners.
 *   2  the slow unlock wakes the parked head before it clears the byte:
 *      the head re-parks on a lock that then goes free, a lost wake-up.
 *
 * Line numbers are those of locks/qspinlock_pv.h at the commit that added
 * this model.
 */
#ifndef NPROC
#define NPROC 3
#endif
#ifndef ITERS
#define ITERS 1
#endif

#define RUNNING 0
#define HALTED 1
#define SLOW 3

byte locked;             /* locked byte: 0 free, 1 held, 3 held + head parked, 2 releasing */
bit head_spin;           /* HEAD_SPIN */
bit pending;             /* PENDING */
byte tail;               /* thread + 1 of the last queued node, 0 none */
byte node_next[NPROC];   /* node->next: thread + 1, 0 none */
bit node_locked[NPROC];  /* node->locked: you are the head */
bit node_state[NPROC];   /* node->state: RUNNING / HALTED (futex word) */
bit sleep_word[NPROC];   /* asleep in FUTEX_WAIT on the lock word */
bit sleep_node[NPROC];   /* asleep in FUTEX_WAIT on its node's state */
byte inside;             /* threads in the critical section */

/* FUTEX_WAKE(word, 1): wake one sleeper, if any. */
inline wake_word() {
	atomic {
		if
		:: sleep_word[0] -> sleep_word[0] = 0
		:: NPROC > 1 && sleep_word[1] -> sleep_word[1] = 0
		:: NPROC > 2 && sleep_word[2] -> sleep_word[2] = 0
		:: else -> skip
		fi
	}
}

proctype thread(byte me)
{
	byte it, prev, nxt, vl, vt, want;
	bit vh, vp, last, got;

	for (it : 1 .. ITERS) {
		/* lb_qspin_pv_lock, L439-452: fast path (0,0,0) -> (0,0,1) */
		atomic {
			if
			:: locked == 0 && !head_spin && !pending && tail == 0 -> locked = 1; goto cs
			:: else -> skip
			fi
		}
		/* lb_qspin_pv__steal, L223-230: free, no running head, no pending spinner */
		atomic {
			if
#if BUG == 1
			:: (locked & 1) == 0 && !head_spin && !pending -> locked = locked | 1; goto cs
#else
			:: locked == 0 && !head_spin && !pending -> locked = 1; goto cs
#endif
			:: else -> skip
			fi
		}
		/* lb_qspin_pv__pending_spin, L297-336: claim PENDING (L317), spin on the word */
		atomic {
			if
			:: tail == 0 && !pending && !head_spin -> pending = 1; got = 1
			:: else -> got = 0
			fi
		}
		if
		:: got ->
			do
			:: atomic { locked == 0 -> pending = 0; locked = 1 }; goto cs /* L324-329 */
			:: head_spin -> break          /* L332: a queue formed, its head runs */
			:: true -> break               /* budget spent */
			od;
			pending = 0                    /* L335: give PENDING back */
		:: else -> skip
		fi;

		/* lb_qspin_pv_lock_slow, L352-366: init the node, swap the tail, link in */
		node_locked[me] = 0;
		node_next[me] = 0;
		node_state[me] = RUNNING;
		atomic { prev = tail; tail = me + 1 }   /* xchg_tail, L238-247 */
		if
		:: prev != 0 ->
			node_next[prev - 1] = me + 1;   /* L363 */
			/* lb_qspin_pv__wait_node, L264-287 */
			do
			:: node_locked[me] -> break     /* L270: the predecessor made us head */
			:: true ->                      /* budget spent: announce the halt, L275 */
				node_state[me] = HALTED;
				if
				:: node_locked[me] -> node_state[me] = RUNNING; break   /* L276-279 */
				:: else ->
					do   /* L282-283: sleep while HALTED */
					:: atomic {
						if
						:: node_state[me] == HALTED -> sleep_node[me] = 1
						:: else -> skip
						fi
					   };
					   !sleep_node[me];
					   if
					   :: node_state[me] != HALTED -> break
					   :: else -> skip
					   fi
					od
				fi
			od
		:: else -> skip
		fi;

		/* Queue head, L369-438. */
		nxt = 0;
head_spin_loop:
		do
		:: true ->
			atomic { vl = locked; vh = head_spin; vp = pending; vt = tail };   /* L375 */
			last = (vt == me + 1);
			if
			:: !last && nxt == 0 -> nxt = node_next[me]    /* L379 */
			:: else -> skip
			fi;
			if
			:: vl == 0 && (last || nxt != 0) ->
				/* L378-391: take it; keep PENDING, drop the tail if last */
				atomic {
					if
					:: locked == vl && head_spin == vh && pending == vp && tail == vt ->
						locked = 1; head_spin = 0;
						if
						:: last -> tail = 0
						:: else -> skip
						fi;
						got = 1
					:: else -> got = 0
					fi
				};
				if
				:: got ->
					if
					:: !last ->     /* lb_qspin_pv__hand_over, L254-260 */
						node_locked[nxt - 1] = 1;
						atomic {
							if
							:: node_state[nxt - 1] == HALTED ->
								node_state[nxt - 1] = RUNNING; sleep_node[nxt - 1] = 0
							:: else -> node_state[nxt - 1] = RUNNING
							fi
						}
					:: else -> skip
					fi;
					goto cs
				:: else -> skip
				fi
			:: (last || nxt != 0) && !(vl == 0) && !vh -> head_spin = 1   /* L393-396 */
			:: !(last || nxt != 0) && vh -> head_spin = 0                  /* L397-401 */
			:: else -> skip
			fi
		:: true -> break      /* budget spent: park */
		od;

		/* Park on the word, L409-437. */
		atomic { vl = locked; vh = head_spin; vp = pending; vt = tail };
		do
		:: vl == 0 -> goto head_spin_loop          /* L416-421: free: spin again */
		:: vl != 0 ->
			/* L423-429: (t,*,1|2) -> (t,0,3) */
			atomic {
				if
				:: locked == vl && head_spin == vh && pending == vp && tail == vt ->
					locked = SLOW; head_spin = 0; got = 1
				:: else -> vl = locked; vh = head_spin; vp = pending; vt = tail; got = 0
				fi
			};
			if
			:: got ->
				/* L430: FUTEX_WAIT(word, want) */
				atomic {
					if
					:: locked == SLOW && !head_spin && pending == vp && tail == vt ->
						sleep_word[me] = 1
					:: else -> skip
					fi
				};
				!sleep_word[me];
				atomic { vl = locked; vh = head_spin; vp = pending; vt = tail };
				if
				:: vl != SLOW -> goto head_spin_loop   /* L432-433 */
				:: else -> skip
				fi
			:: else -> skip
			fi
		od;

cs:
		inside++;
		assert(inside == 1);
		inside--;

		/* lb_qspin_pv_unlock, L465-472: fetch_sub 1; SLOW -> 2 -> slow unlock */
		atomic { want = locked; locked = locked - 1 };
		if
		:: want != 1 ->
			/* lb_qspin_pv_unlock_slow, L458-463 */
#if BUG == 2
			wake_word();
			locked = 0
#else
			locked = 0;                 /* fetch_and ~LOCKED_MASK, release */
			wake_word()
#endif
		:: else -> skip
		fi
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
