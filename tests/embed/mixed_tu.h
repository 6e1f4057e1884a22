/* SPDX-License-Identifier: MIT */
/*
 * mixed_tu.h - the interface between test_mixed_tu.c and the three builds of
 * mixed_tu.c, each compiled with different flags:
 *
 *   | variant | flags                                                        |
 *   |---------|--------------------------------------------------------------|
 *   | strict  | -std=c11, no feature-test macro (the pure-C11 spinlocks only) |
 *   | plain   | -std=c11 -D_GNU_SOURCE, LB_LOCK_COUNTERS=0, LB_USDT=0         |
 *   | gnu     | -std=gnu11, LB_LOCK_COUNTERS=1, LB_USDT=1 where sys/sdt.h is, |
 *   |         | LB_QSPIN_SUBWORD=1                                           |
 *   | cxx     | C++17 (std::atomic through lb_atomic.h), when a C++ compiler |
 *   |         | is found; otherwise its functions are stubs that say so      |
 *
 * Locks are allocated with the sizes the `plain` build reports and are
 * initialised by it; threads of every variant then use the same objects.
 * Only pointers cross the boundary, so no file needs another's types.
 */
#ifndef MIXED_TU_H
#define MIXED_TU_H

#include <stddef.h>

/* Locks, then node domains (arrays of one slot per thread), then contexts. */
enum { MIXED_TAS, MIXED_TICKET, MIXED_QSPIN, MIXED_QSPIN_PV, MIXED_QRW, MIXED_MUTEX,
       MIXED_RTMUTEX, MIXED_FUTEX_PI, MIXED_NLOCKS,
       MIXED_QSPIN_SLOT = MIXED_NLOCKS, MIXED_QSPIN_PV_SLOT, MIXED_NSHARED,
       MIXED_QSPIN_CTX = MIXED_NSHARED, MIXED_QSPIN_PV_CTX, MIXED_MUTEX_THREAD, MIXED_RT_TASK,
       MIXED_NTYPES };

struct mixed_layout {
	size_t size[MIXED_NTYPES];  /* 0: not available in this build */
	size_t align[MIXED_NTYPES];
};

struct mixed_shared {
	void *lock[MIXED_NSHARED];             /* locks and node domains */
	unsigned long count[MIXED_NLOCKS];     /* each written under its lock */
	unsigned long qrw_a, qrw_b;            /* equal while no writer holds it */
	unsigned long torn_reads;              /* atomically incremented */
};

#define MIXED_VARIANT_DECL(v)                                                         \
	void mixed_##v##_layout(struct mixed_layout *out);                             \
	void mixed_##v##_init(struct mixed_shared *s);                                  \
	void mixed_##v##_run(struct mixed_shared *s, unsigned int index, unsigned int iters); \
	const char *mixed_##v##_initializer_mismatch(void)

#ifdef __cplusplus
extern "C" {
#endif
MIXED_VARIANT_DECL(strict);
MIXED_VARIANT_DECL(plain);
MIXED_VARIANT_DECL(gnu);
MIXED_VARIANT_DECL(cxx);
#ifdef __cplusplus
}
#endif

#endif
