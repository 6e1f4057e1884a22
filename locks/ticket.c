/* SPDX-License-Identifier: MIT */
/*
 * ticket.c - vtable adapter for ticket.h: FIFO ticket spinlock with separate
 * 32-bit next/owner counters (see the port note in the header).
 */
#include "lb_adapter.h"
#include <lockbench/ticket.h>

LB_ADAPT_VOID(ticket_atfork_child, lb_ticket_atfork_child)

LB_CTXFREE_LOCK_OPS(ticket, lb_ticket, lb_ticket_t,
	.name = "ticket",
	.family = "spin",
	.summary = "ticket spinlock, 32-bit next/owner counters (FIFO, global spinning)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR | LB_LOCK_F_PSHARED,
	.atfork_child = ticket_atfork_child,
	/* Two counters, no context: the same init works in a shared mapping. */
	.init_shared = ticket_adapt_init);
