/* SPDX-License-Identifier: MIT */
/*
 * urcu.c - the read-mostly ceiling: liburcu (memb flavour) readers, writers
 * serialised by a pthread mutex and waiting for a grace period.
 *
 *   read_lock    urcu_memb_read_lock(): a few instructions, never blocks,
 *                never writes a shared cache line
 *   read_unlock  urcu_memb_read_unlock()
 *   lock         pthread_mutex_lock(writer mutex)
 *   unlock       urcu_memb_synchronize_rcu(), then unlock the mutex: the
 *                grace period completes before the next writer may reuse
 *                what the previous one retired
 *
 * This is NOT reader/writer exclusion: readers run concurrently with a
 * writer (LB_LOCK_F_RCU).  Writers must publish new versions (copy, then a
 * release store of the pointer) and readers must follow the pointer with
 * an acquire load; `lockbench bench --read-pct` does exactly that for this
 * lock.  Every thread registers with liburcu in thread_init and unregisters
 * in thread_fini.  liburcu's read-side calls are used out of line (no
 * _LGPL_SOURCE), which costs a call each.
 */
#include "lb_adapter.h"

#include <pthread.h>
#include <urcu/urcu-memb.h>

struct lb_urcu_lock {
	pthread_mutex_t writer;
};

struct lb_urcu_thread {
	int registered;
};

static int urcu_init(void *lock)
{
	return pthread_mutex_init(&((struct lb_urcu_lock *)lock)->writer, NULL);
}

static void urcu_destroy(void *lock)
{
	pthread_mutex_destroy(&((struct lb_urcu_lock *)lock)->writer);
}

static int urcu_thread_init(void *tctx, unsigned int index)
{
	(void)index;
	urcu_memb_register_thread();
	((struct lb_urcu_thread *)tctx)->registered = 1;
	return 0;
}

static void urcu_thread_fini(void *tctx)
{
	struct lb_urcu_thread *t = tctx;
	if (t->registered)
		urcu_memb_unregister_thread();
	t->registered = 0;
}

static void urcu_lock(void *lock, void *tctx)
{
	(void)tctx;
	int err = pthread_mutex_lock(&((struct lb_urcu_lock *)lock)->writer);
	if (LB_UNLIKELY(err))
		lb_die(err, "pthread_mutex_lock");
}

static bool urcu_trylock(void *lock, void *tctx)
{
	(void)tctx;
	return pthread_mutex_trylock(&((struct lb_urcu_lock *)lock)->writer) == 0;
}

static void urcu_unlock(void *lock, void *tctx)
{
	(void)tctx;
	/* Wait for every reader that might still see the old version. */
	urcu_memb_synchronize_rcu();
	int err = pthread_mutex_unlock(&((struct lb_urcu_lock *)lock)->writer);
	if (LB_UNLIKELY(err))
		lb_die(err, "pthread_mutex_unlock");
}

static void urcu_read_lock(void *lock, void *tctx)
{
	(void)lock;
	(void)tctx;
	urcu_memb_read_lock();
}

static bool urcu_read_trylock(void *lock, void *tctx)
{
	urcu_read_lock(lock, tctx); /* readers never wait */
	return true;
}

static void urcu_read_unlock(void *lock, void *tctx)
{
	(void)lock;
	(void)tctx;
	urcu_memb_read_unlock();
}

const struct lb_lock_ops lb_urcu_ops = {
	.name = "urcu",
	.family = "rcu",
	.summary = "liburcu readers; writers: mutex + synchronize_rcu (not r/w exclusion)",
	LB_OPS_CTX_RWLOCK(struct lb_urcu_lock, struct lb_urcu_thread, urcu,
			  LB_LOCK_F_SLEEPS | LB_LOCK_F_RCU),
	.destroy = urcu_destroy,
	.thread_fini = urcu_thread_fini,
};
