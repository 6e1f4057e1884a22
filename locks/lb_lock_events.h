/* SPDX-License-Identifier: MIT */
/*
 * lb_lock_events.h - what a lock's kernel lock-event counters mean here:
 * the scope of the counts and, per event, why it reads 0 or how it differs
 * from the kernel's (CONFIG_LOCK_EVENT_COUNTS, Linux v6.6).
 */
#ifndef LB_LOCK_EVENTS_H
#define LB_LOCK_EVENTS_H

#include <stdbool.h>

/*
 * The scope line for a lock whose counters carry the kernel's lock-event
 * names (qspinlock, qspinlock-pv), NULL for any other lock.
 */
const char *lb_lock_events_scope(const char *lock);

/* The note on one of that lock's events, NULL when it needs none. */
const char *lb_lock_event_note(const char *lock, const char *event);

/* True if the event's value is an average in ns, not a count (the kernel's
 * debugfs files read pv_latency_kick and pv_latency_wake so). */
bool lb_lock_event_is_average(const char *event);

#endif /* LB_LOCK_EVENTS_H */
