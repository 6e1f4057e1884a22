/* SPDX-License-Identifier: MIT */
/*
 * ticket_plugin.c - the ticket lock as a plugin (locks/include/lockbench/lb_plugin.h), and the
 * adapter scripts/build-plugin compiles against any tree's ticket.h: the
 * same file built from HEAD and from a patched tree gives two plugins that
 * differ only in the header they included and the name set with
 * -DLB_PLUGIN_NAME, so both run side by side in one lockbench process.
 *
 * -DLB_PLUGIN_EXTRA_WORK=N adds N iterations of a dependent busy loop to the
 * lock path after the acquisition: a copy that is slower on purpose, for
 * checking that `lockbench ab` flags a slowdown.  One iteration (a volatile
 * load, add and store: one store-forwarding round) costs ~0.8 ns at 1
 * thread on the development guest, ~6 % of the ticket lock's ~13 ns
 * harness figure there: ticket-5pct has 1, the copy for the "a ~5 %
 * slowdown is found" check; ticket-slow's 40 make it ~8x slower, a
 * slowdown nothing can miss (measured with `lockbench ab`, doc/ab.md).
 */
#include "lb_plugin.h"
#include "ticket.h"

#ifndef LB_PLUGIN_NAME
#define LB_PLUGIN_NAME "ticket-plugin"
#endif
#ifndef LB_PLUGIN_EXTRA_WORK
#define LB_PLUGIN_EXTRA_WORK 0
#endif

static int plugin_init(void *lock)
{
	lb_ticket_init(lock);
	return 0;
}

#if LB_PLUGIN_EXTRA_WORK > 0
/* Volatile steps the compiler cannot fold: the deliberate slowdown. */
static inline void extra_work(void)
{
	for (volatile unsigned int i = 0; i < LB_PLUGIN_EXTRA_WORK; i++)
		;
}
#endif

static void plugin_lock(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_lock(lock);
#if LB_PLUGIN_EXTRA_WORK > 0
	extra_work();
#endif
}

static void plugin_unlock(void *lock, void *tctx)
{
	(void)tctx;
	lb_ticket_unlock(lock);
}

static bool plugin_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return lb_ticket_trylock(lock);
}

LB_PLUGIN_EXPORT_OPS(
	.name = LB_PLUGIN_NAME,
	.family = "spin",
	.summary = "ticket spinlock built as a plugin (tests/plugin/ticket_plugin.c)",
	.flags = LB_LOCK_F_EXCLUSIVE | LB_LOCK_F_TRYLOCK | LB_LOCK_F_FAIR,
	.lock_size = sizeof(lb_ticket_t),
	.lock_align = _Alignof(lb_ticket_t),
	.init = plugin_init,
	.lock = plugin_lock,
	.unlock = plugin_unlock,
	.trylock = plugin_trylock,
);
