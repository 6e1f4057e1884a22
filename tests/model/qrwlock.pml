/* SPDX-License-Identifier: MIT */
/*
 * qrwlock.pml - Promela model of locks/qrwlock.h for spin(1).
 *
 * The word cnts is (readers, WAITING, WLOCKED); each atomic RMW of it is one
 * atomic { }.  wait_lock (a qspinlock_pv in the C code, modelled on its own
 * in qspinlock_pv.pml) is a plain test-and-set here: this model is about the
 * reader/writer counts and the parking handshakes.  Every thread chooses
 * read or write afresh each iteration, so all mixes are explored.  The
 * spin phases may end at any point (every budget).  FUTEX_WAIT compares the
 * sequence word and sleeps in one step; FUTEX_WAKE(1) wakes one sleeper on
 * wake_seq, FUTEX_WAKE(all) every sleeper on rd_seq.
 *
 * Checked (spin -a, pan -DSAFETY): a writer is alone, a reader sees no
 * writer (the asserts in the critical sections); no lost wake-up: a thread
 * asleep on a futex when every other thread is done is an invalid end state.
 *
 * Bug (-DBUG=1, must fail): write unlock looks at `sleeper` before its
 * fetch_sub instead of after it (L448-466), so a head that parks in
 * between is never woken: a lost wake-up.
 *
 * Line numbers are those of locks/qrwlock.h at the commit that added this
 * model.
 */
#ifndef NPROC
#define NPROC 3
#endif
#ifndef ITERS
#define ITERS 1
#endif

#define SLEEP_NONE 0
#define SLEEP_READER 1
#define SLEEP_WRITER 2

byte readers;             /* reader references (LB_QRW_BIAS units) */
bit waiting;              /* LB_QRW_WAITING */
bit wlocked;              /* LB_QRW_WLOCKED (0xff) */
byte sleeper;             /* LB_QRW_SLEEP_* of the parked head */
byte wake_seq;
byte rd_sleepers;
byte rd_seq;
bit wait_lock;
bit head_asleep[NPROC];   /* in FUTEX_WAIT on wake_seq */
bit rd_asleep[NPROC];     /* in FUTEX_WAIT on rd_seq */
byte in_w, in_r;

/* lb_qrwlock__ready, L200-205 */
#define READY(kind) (((kind) == SLEEP_WRITER && readers == 0 && waiting && !wlocked) || \
			 ((kind) != SLEEP_WRITER && !wlocked))

/* lb_qrwlock__wake, L212-219 (after an RMW; `now` = the word it left is ready) */
inline wake_head(now_ready) {
	if
	:: sleeper != SLEEP_NONE && now_ready ->
		wake_seq++;
		atomic {
			if
			:: head_asleep[0] -> head_asleep[0] = 0
			:: NPROC > 1 && head_asleep[1] -> head_asleep[1] = 0
			:: NPROC > 2 && head_asleep[2] -> head_asleep[2] = 0
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/* lb_qrwlock__sub_reader, L232-240: wake a writer head if only WAITING is left */
inline sub_reader() {
	atomic { readers--; ready = (readers == 0 && waiting && !wlocked) };
	if
	:: ready -> wake_head(1)
	:: else -> skip
	fi
}

/* lb_qrwlock__wait, L246-282: spin, then park on wake_seq */
inline head_wait(kind) {
	spun = 0;
	do
	:: READY(kind) -> spun = 1; break         /* L255-259: the spin phase sees it */
	:: true -> break                          /* budget spent */
	od;
	if
	:: !spun ->
		do
		:: sleeper = kind;                /* L272 */
		   seq = wake_seq;                /* L273 */
		   if
		   :: READY(kind) -> break        /* L274-276 */
		   :: else -> skip
		   fi;
		   atomic {                       /* L277: FUTEX_WAIT(wake_seq, seq) */
			if
			:: wake_seq == seq -> head_asleep[me] = 1
			:: else -> skip
			fi
		   };
		   !head_asleep[me]
		od;
		sleeper = SLEEP_NONE              /* L280 */
	:: else -> skip
	fi
}

proctype thread(byte me)
{
	byte it, seq, old_sleeper;
	bit ready, got, was_w, was_wait, spun, rdy_r, rdy_w;

	for (it : 1 .. ITERS) {
		if
		:: true -> goto reader
		:: true -> goto writer
		fi;

reader:
		/* lb_qrwlock_read_lock, L355-366: fetch_add BIAS */
		atomic { was_w = wlocked; was_wait = waiting; readers++ };
		if
		:: !was_w && !was_wait -> goto read_cs
		:: else -> skip
		fi;
		/* lb_qrwlock_read_lock_slow, L329-353 */
		if
		:: was_w && !was_wait ->
			/* lb_qrwlock__reader_wait_writer, L296-317 */
			do
			:: !wlocked -> goto read_cs
			:: true -> break
			od;
			rd_sleepers++;
			do
			:: seq = rd_seq;
			   if
			   :: !wlocked -> break
			   :: else -> skip
			   fi;
			   atomic {
				if
				:: rd_seq == seq -> rd_asleep[me] = 1
				:: else -> skip
				fi
			   };
			   !rd_asleep[me]
			od;
			rd_sleepers--;
			goto read_cs
		:: else -> skip
		fi;
		sub_reader();                            /* L338: give the reference back */
		atomic { wait_lock == 0 -> wait_lock = 1 }   /* L341 */
		readers++;                               /* L348 */
		head_wait(SLEEP_READER);                 /* L349 */
		wait_lock = 0;                           /* L352 */
read_cs:
		in_r++;
		assert(in_w == 0);
		in_r--;
		sub_reader();                            /* lb_qrwlock_read_unlock, L383-386 */
		goto next;

writer:
		/* lb_qrwlock_write_lock, L422-434: CAS 0 -> WLOCKED */
		atomic {
			if
			:: readers == 0 && !waiting && !wlocked -> wlocked = 1; goto write_cs
			:: else -> skip
			fi
		}
		/* lb_qrwlock_write_lock_slow, L391-419 */
		atomic { wait_lock == 0 -> wait_lock = 1 }
		atomic {
			if
			:: readers == 0 && !waiting && !wlocked -> wlocked = 1; got = 1
			:: else -> got = 0
			fi
		};
		if
		:: !got ->
			waiting = 1;                     /* L405 */
			do                               /* L414-416 */
			:: head_wait(SLEEP_WRITER);
			   atomic {
				if
				:: readers == 0 && waiting && !wlocked -> waiting = 0; wlocked = 1; break
				:: else -> skip
				fi
			   }
			od
		:: else -> skip
		fi;
		wait_lock = 0;                           /* L419 */
write_cs:
		in_w++;
		assert(in_w == 1 && in_r == 0);
		in_w--;
		/* lb_qrwlock_write_unlock, L448-466 */
#if BUG == 1
		old_sleeper = sleeper;                   /* BUG: looked at before the RMW */
		atomic { wlocked = 0; rdy_r = 1; rdy_w = (readers == 0 && waiting) };
		if
		:: old_sleeper != SLEEP_NONE ->
			ready = (sleeper == SLEEP_WRITER -> rdy_w : rdy_r);
			wake_head(ready)
		:: else -> skip
		fi;
#else
		/* fetch_sub 0xff (seq_cst): the word it leaves, for __ready */
		atomic { wlocked = 0; rdy_r = 1; rdy_w = (readers == 0 && waiting) };
		if
		:: sleeper != SLEEP_NONE ->
			ready = (sleeper == SLEEP_WRITER -> rdy_w : rdy_r);
			wake_head(ready)
		:: else -> skip
		fi;
#endif
		if
		:: rd_sleepers != 0 ->                   /* lb_qrwlock__wake_readers, L224-229 */
			atomic {
				rd_seq++;
				for (seq : 0 .. NPROC - 1) {
					rd_asleep[seq] = 0
				}
			}
		:: else -> skip
		fi;
next:
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
