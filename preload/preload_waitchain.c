/* SPDX-License-Identifier: MIT */
/*
 * preload_waitchain.c - LOCKBENCH_STATS_DUMP=USR1|USR2: on that signal,
 * write the wait chains on stderr, in the spirit of the kernel's hung-task
 * warnings (kernel/hung_task.c), which name the lock a blocked task waits
 * for and its owner:
 *
 *   lockbench-preload: wait-chain: thread 1235 waits 103.2 ms for mutex 0x5581d0 (class 0x55815a10) held by thread 1234 since 204.9 ms
 *
 * then, while the holder itself waits, one `-> thread U waits ...` line per
 * link (up to 16; a cycle is a deadlock and says so).  Needs LOCKBENCH_STATS
 * (the waits and owners are recorded by the statistics).  The handler is
 * async-signal-safe: it reads the thread pool and our lock slots with
 * relaxed loads (a snapshot; a wait may end while it is written) and
 * formats with its own integer printing into one write(2) per line, on a
 * copy of stderr taken at start-up.  The class is printed as the address of
 * its key (the first lock call's site, or a static mutex's own address):
 * naming it needs dladdr, which is not async-signal-safe; the JSON's
 * `site` and the lock_stat output's points give the same addresses their
 * names.  A program that installs its own handler for the signal replaces
 * ours.
 */
#include "preload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LBP_CHAIN_MAX 16

struct lbp_line {
	char buf[512];
	size_t n;
};

static void lbp_put(struct lbp_line *b, const char *s)
{
	while (*s && b->n + 1 < sizeof(b->buf))
		b->buf[b->n++] = *s++;
}

static void lbp_put_u(struct lbp_line *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	tmp[--i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	lbp_put(b, tmp + i);
}

static void lbp_put_x(struct lbp_line *b, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	tmp[--i] = '\0';
	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	lbp_put(b, tmp + i);
}

/* ns as "12.3 ms" */
static void lbp_put_ms(struct lbp_line *b, uint64_t ns)
{
	lbp_put_u(b, ns / 1000000);
	lbp_put(b, ".");
	lbp_put_u(b, ns / 100000 % 10);
	lbp_put(b, " ms");
}

static void lbp_emit(struct lbp_line *b)
{
	lbp_put(b, "\n");
	ssize_t ignored = write(lbp_cfg.dump_fd, b->buf, b->n);
	(void)ignored;
	b->n = 0;
}

static struct lbp_thread *lbp_thread_by_tid(uint32_t tid)
{
	size_t n = atomic_load_explicit(&lbp_thread_pool.used, memory_order_acquire);
	for (size_t i = 0; tid && i < n; i++) {
		struct lbp_thread *t = lbp_pool_slot(&lbp_thread_pool, i);
		if (atomic_load_explicit(&t->state, memory_order_relaxed) == LBP_SLOT_LIVE &&
		    atomic_load_explicit(&t->tid, memory_order_relaxed) == tid)
			return t;
	}
	return NULL;
}

/* "thread T waits W for mutex M (class C) held by thread U since S";
 * returns the holder's record, NULL when it waits for nothing we know. */
static struct lbp_thread *lbp_chain_line(struct lbp_line *b, struct lbp_thread *t, uint64_t now)
{
	struct lbp_lock *l = atomic_load_explicit(&t->waiting_on, memory_order_relaxed);
	if (!l)
		return NULL;
	struct lbp_lockstat *ls = lbp_lock_lockstat(l);
	uint64_t since = atomic_load_explicit(&t->wait_since_ns, memory_order_relaxed);
	const void *mutex = atomic_load_explicit(&l->mutex, memory_order_relaxed);
	const void *site = atomic_load_explicit(&l->st.site, memory_order_relaxed);
	uint32_t owner = atomic_load_explicit(&ls->owner_tid, memory_order_relaxed);
	lbp_put(b, "thread ");
	lbp_put_u(b, atomic_load_explicit(&t->tid, memory_order_relaxed));
	lbp_put(b, " waits ");
	lbp_put_ms(b, now > since ? now - since : 0);
	lbp_put(b, " for mutex ");
	lbp_put_x(b, (uintptr_t)mutex);
	lbp_put(b, " (class ");
	lbp_put_x(b, (uintptr_t)site);
	lbp_put(b, ") held by ");
	if (!owner) {
		lbp_put(b, "nobody (being handed over)");
		return NULL;
	}
	lbp_put(b, "thread ");
	lbp_put_u(b, owner);
	lbp_put(b, " since ");
	uint64_t held_since = l->st.hold_start_ns;
	lbp_put_ms(b, now > held_since ? now - held_since : 0);
	return lbp_thread_by_tid(owner);
}

static void lbp_waitchain_dump(int sig)
{
	(void)sig;
	int saved = errno;
	struct lbp_line b = { .n = 0 };
	uint64_t now = lbp_now_ns();
	unsigned int waiting = 0;
	size_t n = atomic_load_explicit(&lbp_thread_pool.used, memory_order_acquire);
	lbp_put(&b, "lockbench-preload: wait-chain: begin (pid ");
	lbp_put_u(&b, (uint64_t)getpid());
	lbp_put(&b, ")");
	lbp_emit(&b);
	for (size_t i = 0; i < n; i++) {
		struct lbp_thread *t = lbp_pool_slot(&lbp_thread_pool, i);
		if (atomic_load_explicit(&t->state, memory_order_relaxed) != LBP_SLOT_LIVE ||
		    !atomic_load_explicit(&t->waiting_on, memory_order_relaxed))
			continue;
		waiting++;
		lbp_put(&b, "lockbench-preload: wait-chain: ");
		struct lbp_thread *h = lbp_chain_line(&b, t, now);
		lbp_emit(&b);
		for (unsigned int hop = 0; h && hop < LBP_CHAIN_MAX; hop++) {
			if (h == t) {
				lbp_put(&b, "lockbench-preload: wait-chain:   -> back to the first "
					    "thread: a deadlock");
				lbp_emit(&b);
				break;
			}
			if (!atomic_load_explicit(&h->waiting_on, memory_order_relaxed))
				break;
			lbp_put(&b, "lockbench-preload: wait-chain:   -> ");
			h = lbp_chain_line(&b, h, now);
			lbp_emit(&b);
		}
	}
	lbp_put(&b, "lockbench-preload: wait-chain: end (");
	lbp_put_u(&b, waiting);
	lbp_put(&b, " threads waiting)");
	lbp_emit(&b);
	errno = saved;
}

void lbp_waitchain_setup(void)
{
	const char *env = getenv("LOCKBENCH_STATS_DUMP");
	if (!env || !*env)
		return;
	if (!strcmp(env, "USR1"))
		lbp_cfg.dump_signal = SIGUSR1;
	else if (!strcmp(env, "USR2"))
		lbp_cfg.dump_signal = SIGUSR2;
	else
		lbp_fatal("liblockbench-preload: LOCKBENCH_STATS_DUMP='%s': accepted: USR1, USR2",
			  env);
	if (!lbp_cfg.stats)
		lbp_fatal("liblockbench-preload: LOCKBENCH_STATS_DUMP=%s needs LOCKBENCH_STATS "
			  "(1 or a path): the waits are recorded by the statistics", env);
	lbp_cfg.dump_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100);
	if (lbp_cfg.dump_fd < 0)
		lbp_cfg.dump_fd = STDERR_FILENO;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lbp_waitchain_dump;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(lbp_cfg.dump_signal, &sa, NULL);
}
