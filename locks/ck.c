/* SPDX-License-Identifier: MIT */
/*
 * ck.c - Concurrency Kit locks as peer baselines (libck-dev), when found at
 * build time (LB_HAVE_CK); otherwise the same entries say why they cannot run.
 *
 *   ck-fas     fetch-and-store (xchg) test-and-set spinlock
 *   ck-ticket  ck's ticket spinlock
 *   ck-mcs     MCS queue lock; its queue node must live from lock to unlock,
 *              so the thread context keeps a small stack of nodes, one per
 *              ck-mcs lock the thread holds at the same time (nested locks
 *              are released in reverse order, so a stack is enough; lookup
 *              by lock address keeps it correct for any order).
 *   ck-rwlock  ck's writer-preferring reader/writer spinlock
 *
 * All four keep their whole state in the lock word(s) and, for ck-mcs, the
 * nodes of the caller's thread context: init_shared is init (processes).
 */
#include "lb_adapter.h"

#define LB_CK_MISSING "built without Concurrency Kit (install libck-dev, -Dck=enabled)"

#ifdef LB_HAVE_CK
#include <ck_rwlock.h>
#include <ck_spinlock.h>
#include <errno.h>

#define LB_CK_MCS_DEPTH 16
struct ck_mcs_ctx {
	unsigned int depth;
	void *held[LB_CK_MCS_DEPTH];
	struct ck_spinlock_mcs node[LB_CK_MCS_DEPTH];
};

LB_ADAPT_INIT(mcs_init, ck_spinlock_mcs_init)
static int mcs_thread_init(void *tctx, unsigned int index)
{
	(void)index;
	((struct ck_mcs_ctx *)tctx)->depth = 0;
	return 0;
}
static struct ck_spinlock_mcs *mcs_push(struct ck_mcs_ctx *c, void *lock)
{
	if (c->depth == LB_CK_MCS_DEPTH)
		lb_die(EOVERFLOW, "ck-mcs: too many ck-mcs locks held at once");
	c->held[c->depth] = lock;
	return &c->node[c->depth++];
}
static struct ck_spinlock_mcs *mcs_find(struct ck_mcs_ctx *c, void *lock)
{
	for (unsigned int i = c->depth; i-- > 0;)
		if (c->held[i] == lock)
			return &c->node[i];
	lb_die(EINVAL, "ck-mcs: unlock of a lock this thread does not hold");
}
/* Release order is LIFO (nested locks unwind in reverse), so the node
 * being released must be the top of the stack: a queued younger node cannot
 * be moved, so anything else is refused loudly. */
static void mcs_pop(struct ck_mcs_ctx *c, struct ck_spinlock_mcs *node)
{
	if (node != &c->node[c->depth - 1])
		lb_die(EINVAL, "ck-mcs: locks must be released in reverse order");
	c->depth--;
}
static void mcs_lock(void *lock, void *tctx)
{
	ck_spinlock_mcs_lock(lock, mcs_push(tctx, lock));
}
static bool mcs_trylock(void *lock, void *tctx)
{
	struct ck_mcs_ctx *c = tctx;
	struct ck_spinlock_mcs *node = mcs_push(c, lock);
	if (ck_spinlock_mcs_trylock(lock, node))
		return true;
	c->depth--;
	return false;
}
static void mcs_unlock(void *lock, void *tctx)
{
	struct ck_spinlock_mcs *node = mcs_find(tctx, lock);
	ck_spinlock_mcs_unlock(lock, node);
	mcs_pop(tctx, node);
}

LB_CTXFREE_LOCK_OPS(ck_fas, ck_spinlock_fas, ck_spinlock_fas_t,
	.name = "ck-fas", .family = "spin",
	.summary = "Concurrency Kit fetch-and-store spinlock (unfair)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_PSHARED,
	.init_shared = ck_fas_adapt_init);
LB_CTXFREE_LOCK_OPS(ck_ticket, ck_spinlock_ticket, ck_spinlock_ticket_t,
	.name = "ck-ticket", .family = "spin",
	.summary = "Concurrency Kit ticket spinlock (FIFO)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR | LB_LOCK_F_PSHARED,
	.init_shared = ck_ticket_adapt_init);
const struct lb_lock_ops lb_ck_mcs_ops = {
	.name = "ck-mcs", .family = "spin",
	.summary = "Concurrency Kit MCS queue spinlock (FIFO, local spinning)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR |
		 LB_LOCK_F_THREAD_CTX | LB_LOCK_F_PSHARED,
	LB_OPS_OBJECT(ck_spinlock_mcs_t),
	.thread_ctx_size = sizeof(struct ck_mcs_ctx),
	/* Shared: the nodes are in the context the caller allocates, and the
	 * lock's tail pointer names them at the mapping's common address. */
	.init = mcs_init, .init_shared = mcs_init, .thread_init = mcs_thread_init,
	.lock = mcs_lock, .unlock = mcs_unlock, .trylock = mcs_trylock,
};
LB_CTXFREE_RWLOCK_OPS(ck_rwlock, ck_rwlock, ck_rwlock_t,
	.name = "ck-rwlock", .family = "rwlock",
	.summary = "Concurrency Kit reader/writer spinlock (writer-preferring)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_RW | LB_LOCK_F_TRYLOCK | LB_LOCK_F_PSHARED,
	.init_shared = ck_rwlock_adapt_init);

#else /* !LB_HAVE_CK */

#define LB_CK_STUB(sym, cli, fam, what)                                        \
	const struct lb_lock_ops lb_##sym##_ops = {                            \
		.name = cli, .family = fam, .summary = what,                   \
		.unsupported = LB_CK_MISSING,                                  \
	};
LB_CK_STUB(ck_fas, "ck-fas", "spin", "Concurrency Kit fetch-and-store spinlock (unfair)")
LB_CK_STUB(ck_ticket, "ck-ticket", "spin", "Concurrency Kit ticket spinlock (FIFO)")
LB_CK_STUB(ck_mcs, "ck-mcs", "spin", "Concurrency Kit MCS queue spinlock (FIFO, local spinning)")
LB_CK_STUB(ck_rwlock, "ck-rwlock", "rwlock", "Concurrency Kit reader/writer spinlock (writer-preferring)")

#endif /* LB_HAVE_CK */
