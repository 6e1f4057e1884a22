/* SPDX-License-Identifier: MIT */
/*
 * mutex.pml - Promela model of locks/mutex.h (the sleeping mutex) for spin(1).
 *
 * The owner word is (own, W, H, P, K): own = thread + 1 or 0, and the
 * WAITERS, HANDOFF, PICKUP and WOKEN flags.  Every CAS or fetch_and/or of the
 * word is one atomic { }.  wait_lock is a spinlock (a blocking guard), the
 * wait list a FIFO array under it.  Each waiter's state word (QUEUED,
 * SLEEPING, AWAKE, TOKEN) is a futex: FUTEX_WAIT is "compare and sleep" in
 * one step, FUTEX_WAKE clears the sleeper's flag.  What depends on time or
 * load -- the spin budget, whether the lock is crowded, whether a tenure or a
 * token is old, whether the first waiter is starving -- is a
 * nondeterministic choice, so every combination is explored.  The OSQ (it
 * only orders the spinners) and timeouts are left out.
 *
 * Checked (spin -a, pan -DSAFETY): mutual exclusion (the assert in the
 * critical section); unlock only by the owner (the lock's own misuse check);
 * no lost wake-up: a waiter asleep when every other thread is done is an
 * invalid end state.
 *
 * Bugs (-DBUG=n, each must fail):
 *   1  tenure pass-on releases the lock and then hands it over: a stealer
 *      that took it in between is overwritten (two owners).
 *   2  the unlock that gives the wake token forgets the futex wake (it
 *      tests the state it saw before its CAS): a lost wake-up.
 *
 * Line numbers are those of locks/mutex.h at the commit that added this model.
 */
#ifndef NPROC
#define NPROC 3
#endif
#ifndef ITERS
#define ITERS 1
#endif

#define QUEUED 1
#define SLEEPING 2
#define AWAKE 0
#define TOKEN 3

byte own;                 /* owner: thread + 1, 0 free */
bit fW, fH, fP, fK;       /* WAITERS, HANDOFF, PICKUP, WOKEN */
bit wait_lock;
byte wq[NPROC];           /* wait list, FIFO: thread + 1 */
byte nq;
byte state[NPROC];        /* waiter->state, the futex word */
bit fsleep[NPROC];        /* asleep in FUTEX_WAIT on state[i] */
byte inside;

inline wl_lock() { atomic { wait_lock == 0 -> wait_lock = 1 } }   /* L471-487 */
inline wl_unlock() { wait_lock = 0 }                             /* L489-493 */

/* lb_mutex__trylock_common, L575-616: res = taken; handoff asks for HANDOFF. */
inline trylock_common(handoff, has_token, res) {
	atomic {
		if
		:: own == 0 -> own = me + 1; res = 1;
			if :: has_token -> fK = 0 :: else -> skip fi
		:: own == me + 1 && fP -> fP = 0; res = 1;
			if :: has_token -> fK = 0 :: else -> skip fi
		:: own != 0 && !(own == me + 1 && fP) && handoff && !fH && !fP -> fH = 1; res = 0
		:: else -> res = 0
		fi
	}
}

/* lb_mutex__wake_waiter, L539-559 (wait_lock held): res = owes a futex wake. */
inline wake_waiter(w, token, res) {
	atomic {
		res = 0;
		if
		:: token && state[w] != TOKEN -> res = (state[w] == SLEEPING); state[w] = TOKEN
		:: !token && (state[w] == QUEUED || state[w] == SLEEPING) ->
			res = (state[w] == SLEEPING); state[w] = AWAKE
		:: else -> skip
		fi
	}
}

proctype thread(byte me)
{
	byte it, i, first, st;
	bit res, starving, tok, pass_on, stale, give, kept, need_wake, waited;
	int r;

	for (it : 1 .. ITERS) {
		/* lb_mutex_lock, L1153-1168: 0,{W?,K?} -> self,{W?,K?} */
		atomic {
			if
			:: own == 0 && !fH && !fP -> own = me + 1; goto cs
			:: else -> skip
			fi
		}
		/* lb_mutex__lock_slow, L961-1046.  1. optimistic spin (L973-978) */
		do
		:: trylock_common(0, 0, res); if :: res -> goto cs :: else -> skip fi
		:: true -> break
		od;
		/* 2. queue up unless it came free (L982-984) */
		wl_lock();
		trylock_common(0, 0, res);
		if
		:: res -> wl_unlock(); goto cs
		:: else -> skip
		fi;
		/* lb_mutex__enqueue, L495-514 */
		state[me] = QUEUED;
		wq[nq] = me + 1;
		nq++;
		if
		:: nq == 1 -> fW = 1
		:: else -> skip
		fi;
		/* 3. sleep until we take it (L988-1028) */
		do
		:: true ->
			if    /* L991-994: give back an unused token */
			:: state[me] == TOKEN -> fK = 0; state[me] = AWAKE
			:: else -> skip
			fi;
			trylock_common(0, 0, res);
			if
			:: res -> break
			:: else -> skip
			fi;
			state[me] = QUEUED;
			wl_unlock();
			/* lb_mutex__sleep, L919-949 */
			atomic {
				if
				:: state[me] == QUEUED -> state[me] = SLEEPING; waited = 1
				:: else -> waited = 0
				fi
			};
			do
			:: waited ->
				atomic {
					if
					:: state[me] == SLEEPING -> fsleep[me] = 1
					:: else -> skip
					fi
				};
				!fsleep[me];
				if
				:: state[me] != SLEEPING -> break
				:: else -> skip
				fi
			:: !waited -> break
			od;
			st = state[me];
			/* L1005-1025: woken; the first waiter spins for it */
			first = (nq > 0 && wq[0] == me + 1);
			if
			:: first -> if :: starving = 1 :: starving = 0 fi
			:: else -> starving = 0
			fi;
			r = 0;
			if
			:: first ->
				/* lb_mutex__waiter_spin, L872-917 */
				if
				:: true -> r = -1;      /* spin_enter succeeded */
					do
					:: tok = (state[me] == TOKEN);
					   trylock_common(1, tok, res);
					   if :: res -> r = 1; break :: else -> skip fi
					:: true -> break    /* spin_on_owner: budget spent */
					od;
					if
					:: r < 0 && !starving ->
						fH = 0;         /* L893-903: withdraw HANDOFF */
						tok = (state[me] == TOKEN);
						trylock_common(0, tok, res);
						if :: res -> r = 1 :: else -> skip fi
					:: else -> skip
					fi
				:: true -> skip         /* spin_enter refused: r = 0 */
				fi
			:: else -> skip
			fi;
			if
			:: r > 0 -> wl_lock(); break
			:: r == 0 ->
				trylock_common(starving, st == TOKEN, res);
				if :: res -> wl_lock(); break :: else -> skip fi
			:: else -> skip
			fi;
			wl_lock()
		od;
		/* lb_mutex__dequeue, L517-533 (L1032), then AWAKE */
		i = 0;
		do
		:: i < nq && wq[i] != me + 1 -> i++
		:: i < nq && wq[i] == me + 1 -> break
		:: i >= nq -> assert(false)
		od;
		do
		:: i + 1 < nq -> wq[i] = wq[i + 1]; i++
		:: else -> break
		od;
		nq--;
		wq[nq] = 0;
		if
		:: nq == 0 -> atomic { fW = 0; fH = 0 }
		:: else -> skip
		fi;
		state[me] = AWAKE;
		wl_unlock();

cs:
		inside++;
		assert(inside == 1);
		inside--;

		/* lb_mutex_unlock, L1200-1225: self,{W?,K} or self,{} -> 0,{W?,K} */
		atomic {
			assert(own == me + 1 && !fP);     /* misuse: unlock by a non-owner */
			if
			:: !fH && !fW -> own = 0; goto done         /* self,{K?} -> 0,{K?} */
			:: !fH && fW && fK -> own = 0; goto done   /* quiet unlock */
			:: !fH && fW && fK -> skip                  /* every N-th: the slow path */
			:: else -> skip
			fi
		}
		/* lb_mutex__unlock_slow, L1048-1150 */
		pass_on = 0;
		if
		:: fW && !fH -> if :: pass_on = 1 :: pass_on = 0 fi   /* L1065-1074: crowded, tenure old */
		:: else -> skip
		fi;
		give = 0;
		stale = 0;
		kept = 0;
		do
		:: atomic {
			assert(own == me + 1 && !fP);  /* L1078-1079 */
			if
			:: fH -> kept = 1      /* L1080-1081: keep it for the first waiter */
#if BUG != 1
			:: !fH && pass_on -> kept = 1
#else
			:: !fH && pass_on -> own = 0; kept = 1   /* BUG: release, then hand over */
#endif
			:: else ->
				if
				:: fW && fK -> if :: stale = 1 :: stale = 0 fi   /* L1085-1091 */
				:: else -> stale = 0
				fi;
				give = fW && (!fK || stale);        /* L1095 */
				own = 0;                            /* L1103-1109: CAS, release */
				if :: give -> fK = 1 :: else -> skip fi
			fi
		   };
		   if
		   :: kept -> break
		   :: !kept && !give -> goto done
		   :: else -> break
		   fi
		od;
		wl_lock();                                  /* L1112 */
		need_wake = 0;
		first = (nq > 0 -> wq[0] - 1 : 255);
		if
		:: kept ->
			/* L1115-1135: self,{H?,*} -> first,{P,*} (or 0,{*} if none) */
			atomic {
				fH = 0;
				if
				:: first != 255 -> own = first + 1; fP = 1
				:: else -> own = 0
				fi
			};
			if
			:: first != 255 -> wake_waiter(first, 0, need_wake)
			:: else -> skip
			fi
		:: !kept && first != 255 ->
			wake_waiter(first, 1, need_wake);        /* L1136-1140 */
#if BUG == 2
			need_wake = 0;
#endif
			need_wake = need_wake || stale
		:: !kept && first == 255 -> fK = 0          /* L1141-1144 */
		fi;
		wl_unlock();
		if
		:: need_wake -> fsleep[first] = 0          /* L1147-1148: FUTEX_WAKE */
		:: else -> skip
		fi;
done:
		skip
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
