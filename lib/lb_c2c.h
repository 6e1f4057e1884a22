/* SPDX-License-Identifier: MIT */
/*
 * lb_c2c.h - the cache-line round trip between two CPUs.
 *
 * Every contended figure (throughput, acquire latency, fairness) is paid in
 * cache-line transfers between the CPUs the threads run on.  On bare metal
 * that cost is a property of the machine; in a virtual machine it is not:
 * the host moves the vCPUs between SMT siblings, cores and dies, and the
 * round trip between two vCPUs can change several-fold every few seconds,
 * contended figures with it (what was seen on the development guest:
 * doc/lockbench.md, "cache-line round trip").  `lockbench bench` measures it
 * before and after every run so that a table can say when the machine, not
 * the lock, changed (doc/lockbench.md, "cache-line round trip").
 */
#ifndef LB_C2C_H
#define LB_C2C_H

#include <stdint.h>

/* Round trips one measurement times (after LB_C2C_WARMUP untimed ones). */
#define LB_C2C_ROUNDS 2000
#define LB_C2C_WARMUP 100
/* The longest one measurement may take: the partner thread must be running
 * at the same time, which another busy or real-time thread can prevent. */
#define LB_C2C_BUDGET_NS 20000000u

/*
 * The first two CPUs this process may run on, in *a and *b; -1 (and both
 * set to -1) when it may run on only one.
 */
int lb_c2c_default_pair(int *a, int *b);

/*
 * Bounce one cache line between the calling thread, pinned to cpu_a for the
 * measurement, and a helper thread pinned to cpu_b, `rounds` times (at most
 * 102,400).  Returns the round trip in ns: the median over batches of 100
 * of their mean, so that a batch in which a thread was preempted does not
 * count.  -1 when a CPU cannot be used or the measurement ran past
 * budget_ns (the two threads did not run at once).  The caller's CPU
 * affinity is restored before it returns.
 */
double lb_c2c_round_trip_ns(int cpu_a, int cpu_b, unsigned int rounds, uint64_t budget_ns);

#endif /* LB_C2C_H */
