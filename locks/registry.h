/* SPDX-License-Identifier: MIT */
/*
 * registry.h - the one list of lock implementations.
 *
 * Adding a lock: one header (the algorithm), one adapter file defining
 * `const struct lb_lock_ops lb_<sym>_ops`, one X() line here, and the adapter
 * in locks/meson.build.  The order here is the order `lockbench list` prints
 * and the default comparison runs.
 */
#ifndef LB_LOCKS_REGISTRY_H
#define LB_LOCKS_REGISTRY_H

#define LB_LOCKS(X)           \
	X(none)               \
	X(busted)             \
	X(tas)                \
	X(ticket)             \
	X(qspinlock)          \
	X(qspinlock_pv)       \
	X(pthread_spin)       \
	X(mutex)              \
	X(mutex_nospin)       \
	X(mutex_v3_14)        \
	X(mutex_v3_15)        \
	X(pthread_mutex)      \
	X(pthread_adaptive)   \
	X(pthread_pi)         \
	X(rtmutex)            \
	X(futex_pi)           \
	X(pthread_rwlock)     \
	X(pthread_rwlock_wp)  \
	X(qrwlock)            \
	X(ck_fas)             \
	X(ck_ticket)          \
	X(ck_mcs)             \
	X(ck_rwlock)          \
	X(urcu)

#endif /* LB_LOCKS_REGISTRY_H */
