/* SPDX-License-Identifier: MIT */
/*
 * lb_lock_events.c - notes on the kernel lock-event names that qspinlock and
 * qspinlock-pv report (their headers' "Lock events" say where each is
 * counted; kernel/locking/lock_events_list.h, Linux v6.6, lists them).
 */
#include "lb_lock_events.h"

#include <stddef.h>
#include <string.h>

static const char lb_events_scope[] =
	"kernel lock-event names (CONFIG_LOCK_EVENT_COUNTS, Linux v6.6), counted at the "
	"kernel's places; per lock here, where the kernel's are per CPU summed over every "
	"qspinlock in the system";

struct lb_event_note {
	const char *lock; /* the CLI name */
	const char *event;
	const char *note;
};

static const struct lb_event_note lb_event_notes[] = {
	{ "qspinlock-pv", "pv_hash_hops",
	  "absent here (reads 0): no lock->node hash table, the head parks on the lock word" },
	{ "qspinlock-pv", "pv_wait_early",
	  "absent here (reads 0): waiters do not watch their predecessor's state" },
	{ "qspinlock-pv", "lock_use_node2",
	  "absent here (reads 0): one node per thread, no nesting" },
	{ "qspinlock-pv", "lock_use_node3",
	  "absent here (reads 0): one node per thread, no nesting" },
	{ "qspinlock-pv", "lock_use_node4",
	  "absent here (reads 0): one node per thread, no nesting" },
	{ "qspinlock-pv", "lock_no_node",
	  "absent here (reads 0): one node per thread, no nesting" },
	{ "qspinlock-pv", "lock_pending",
	  "our bounded pending spin; the kernel's pv lock has no pending path (0 there)" },
	{ "qspinlock-pv", "lock_slowpath",
	  "queue entries; the kernel's pv slow path jumps past this count (0 there)" },
	{ "qspinlock-pv", "pv_kick_unlock",
	  "FUTEX_WAKE of the head parked on the word (the kernel: a kick hypercall)" },
	{ "qspinlock-pv", "pv_latency_kick",
	  "average ns of that FUTEX_WAKE call, over pv_kick_unlock" },
	{ "qspinlock-pv", "pv_latency_wake",
	  "average ns from kick to the sleeper running again, over pv_kick_wake" },
	{ "qspinlock-pv", "pv_kick_handover",
	  "ours, no kernel event: the new owner woke its halted successor (the kernel "
	  "defers that kick to unlock)" },
	{ "qspinlock", "lock_use_node2",
	  "a nested acquisition (a signal handler here; irq/softirq/NMI in the kernel)" },
	{ "qspinlock", "lock_no_node",
	  "more than 4 nested acquisitions: spun on trylock without a node" },
};

const char *lb_lock_events_scope(const char *lock)
{
	if (lock && (!strcmp(lock, "qspinlock") || !strcmp(lock, "qspinlock-pv")))
		return lb_events_scope;
	return NULL;
}

const char *lb_lock_event_note(const char *lock, const char *event)
{
	if (!lb_lock_events_scope(lock) || !event)
		return NULL;
	for (size_t i = 0; i < sizeof(lb_event_notes) / sizeof(lb_event_notes[0]); i++)
		if (!strcmp(lb_event_notes[i].lock, lock) && !strcmp(lb_event_notes[i].event, event))
			return lb_event_notes[i].note;
	return NULL;
}

bool lb_lock_event_is_average(const char *event)
{
	return event && (!strcmp(event, "pv_latency_kick") || !strcmp(event, "pv_latency_wake"));
}
