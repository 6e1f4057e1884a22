/* SPDX-License-Identifier: MIT */
/*
 * ticket.c - vtable adapter for ticket.h: FIFO ticket spinlock with separate
 * 32-bit next/owner counters (see the port note in the header).
 */
#include "lb_lock_ops.h"
#include "ticket.h"

static int ticket_init(void *lock)
{
	lb_ticket_init(lock);
	return 0;
}

static void ticket_lock(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_lock(lock);
}

static void ticket_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_unlock(lock);
}

static bool ticket_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_ticket_trylock(lock);
}

static void ticket_atfork_child(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_atfork_child(lock);
}

const struct lb_lock_ops lb_ticket_ops = {
	.name = "ticket",
	.family = "spin",
	.summary = "ticket spinlock, 32-bit next/owner counters (FIFO, global spinning)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR,
	.lock_size = sizeof(lb_ticket_t),
	.lock_align = _Alignof(lb_ticket_t),
	.init = ticket_init,
	.lock = ticket_lock,
	.unlock = ticket_unlock,
	.trylock = ticket_trylock,
	.atfork_child = ticket_atfork_child,
};
