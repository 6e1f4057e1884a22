#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkbroken.py - write a deliberately broken copy of a real lock header
(or of the allocator's or the preload's source).

    mkbroken.py BUG IN_HEADER OUT_HEADER

Each BUG below is a small, realistic slip (a wrong bit, a missing re-check,
a hand-over after the release) applied to the header the project ships, so
the broken copy follows the real lock as it changes.  Every edit must match
exactly once: when the real header is rewritten and an anchor no longer
fits, the build fails here (fix the anchor; do not drop the copy).  The
copies are compiled only into tests/harden/'s torture program.
"""
import os
import sys

BUGS = {
    # A stealer that tests the LOCKED bit instead of the whole locked byte:
    # during a slow unlock the byte is 2 (bit 0 clear, still held), so it
    # steals, and unlock_slow's clearing of the byte then frees the lock
    # under the stealer: two owners, only inside that window.
    "pv-steal-bit": [
        ("\tif (val & (LB_QSPIN_PV_LOCKED_MASK | LB_QSPIN_PV_HEAD_SPIN | LB_QSPIN_PV_PENDING))\n"
         "\t\treturn false;\n",
         "\tif (val & (LB_QSPIN_PV_LOCKED | LB_QSPIN_PV_HEAD_SPIN | LB_QSPIN_PV_PENDING))\n"
         "\t\treturn false;\n"),
    ],
    # A queued waiter that announces HALTED and goes to sleep without
    # looking at node->locked once more: a hand-over between its last spin
    # and the announcement sees RUNNING, kicks nobody, and the new queue
    # head sleeps for ever (a lost wake-up, only inside that window).
    "pv-halt-no-recheck": [
        ("\t\tif (atomic_load_explicit(&node->locked, memory_order_seq_cst)) {\n"
         "\t\t\tatomic_store_explicit(&node->state, LB_QSPIN_PV_RUNNING, memory_order_relaxed);\n"
         "\t\t\treturn;\n"
         "\t\t}\n",
         ""),
    ],
    # The tenure pass-on releases the lock first and then hands it to the
    # first waiter with a CAS loop that retries on whatever word it finds:
    # a stealer that took the free lock in between is overwritten, and it
    # and the first waiter both own the mutex.
    "mutex-pass-on-after-release": [
        ("\t\tif ((cur & LB_MUTEX_HANDOFF) || pass_on)\n"
         "\t\t\tbreak; /* keep it: it goes to the first waiter below */\n",
         "\t\tif (cur & LB_MUTEX_HANDOFF)\n"
         "\t\t\tbreak; /* keep it: it goes to the first waiter below */\n"),
        ("\t\t\tif (!token_to_give)\n\t\t\t\treturn;\n",
         "\t\t\tif (!token_to_give && !pass_on)\n\t\t\t\treturn;\n"),
    ],
    # A pshared mutex whose untimed waiter sleeps on a private futex while
    # its waker (and every other process) uses the shared one: the wake-up
    # names another futex key and the waiter sleeps for ever.  Within one
    # process both sides of a mutex made by init() are private, so only
    # processes (locktorture -P) can see it.
    "mutex-wait-private": [
        ("\t\t\tr = lb_futex_wait_scoped(&w->state, LB_MUTEX__SLEEPING, NULL,\n"
         "\t\t\t\t\t\t m->futex_scope);\n",
         "\t\t\tr = lb_futex_wait_scoped(&w->state, LB_MUTEX__SLEEPING, NULL,\n"
         "\t\t\t\t\t\t FUTEX_PRIVATE_FLAG);\n"),
    ],
    # A qrwlock reader parked behind a writer that reads its wake sequence
    # after checking the lock word, not before: a write unlock between the
    # two loads bumps rd_seq and wakes nobody yet asleep, and the reader then
    # sleeps on the new value (a lost wake-up; the window lies between two
    # loads on the wait path).
    "qrwlock-seq-after-word": [
        ("\t\tuint32_t seq = atomic_load_explicit(&lock->rd_seq, memory_order_seq_cst);\n"
         "\t\tif (!(atomic_load_explicit(&lock->cnts, memory_order_seq_cst) & LB_QRW_WLOCKED))\n"
         "\t\t\tbreak;\n",
         "\t\tif (!(atomic_load_explicit(&lock->cnts, memory_order_seq_cst) & LB_QRW_WLOCKED))\n"
         "\t\t\tbreak;\n"
         "\t\tuint32_t seq = atomic_load_explicit(&lock->rd_seq, memory_order_seq_cst);\n"),
    ],
    # A trylock that, having seen the lock free, claims it with a plain
    # store instead of the exchange: a lock() whose exchange lands between
    # the peek and the store also gets in (two owners, a few-instruction
    # window, no widening).  Every single-threaded trylock check passes.
    "tas-trylock-store": [
        ("\treturn !atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire);\n"
         "}\n",
         "\tatomic_store_explicit(&lock->locked, 1, memory_order_relaxed);\n"
         "\treturn true;\n"
         "}\n"),
    ],
    # engines/slub/slub.c: a remote free that decides the page empties from
    # the count it read before it waited for list_lock, and moves it with
    # that decision: an allocator that popped an object of the partial page
    # meanwhile (lb_slub_alloc_nocache) leaves it with one in use, and the
    # page goes to the empty pool with a stale count.  Once that object is
    # freed the count is right again, so the end-of-run check passes.
    "slub-stale-count": [
        ("\tbool moves, took = false;\n",
         "\tbool moves = false, took = false, decided = false;\n\tuint32_t seen_inuse = 0;\n"),
        ("\t\tmoves = !owner && (!prior || inuse == 1);\n",
         "\t\tif (!decided) {\n"
         "\t\t\tmoves = !owner && (!prior || inuse == 1);\n"
         "\t\t\tseen_inuse = inuse;\n"
         "\t\t\tdecided = true;\n"
         "\t\t}\n"),
        ("\t} else if (on == 1 && inuse - 1 == 0 &&\n",
         "\t} else if (on == 1 && seen_inuse - 1 == 0 &&\n"),
    ],
    # preload/preload_cond.c: the loser of the race to create a condition
    # variable's table entry on its first use does not take the winner's
    # entry (same key) but probes on and creates a second one: its waiter
    # sleeps on an entry no signal looks at (signal finds the first).
    "cond-first-use-dup": [
        ("\t\t\t\t\t\t\t\t    memory_order_acquire) ||\n"
         "\t\t\t    k == key)\n",
         "\t\t\t\t\t\t\t\t    memory_order_acquire))\n"),
    ],
}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in BUGS:
        sys.stderr.write("usage: mkbroken.py {%s} IN OUT\n" % "|".join(sorted(BUGS)))
        return 2
    bug, src, dst = sys.argv[1:]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    for old, new in BUGS[bug]:
        n = text.count(old)
        if n != 1:
            sys.stderr.write(f"mkbroken.py: {bug}: anchor found {n} times in {src} "
                             f"(want 1):\n{old}")
            return 1
        text = text.replace(old, new)
    with open(dst, "w", encoding="utf-8") as f:
        f.write(f"/* Generated by tests/harden/mkbroken.py {bug} from {os.path.basename(src)}: "
                "a deliberately broken copy, for tests only. */\n")
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
