/* SPDX-License-Identifier: MIT */
/*
 * kern_core.c - the simulated kernel's frame (see kern.h): the timed lock
 * wrappers every subsystem takes its locks through, the index pools its
 * objects come from, and setting the kernel up and down.  Locks are taken
 * only through the registry vtable, timed with the cycle counter so
 * --explain can say how much of a child's time went to waiting on each
 * role.
 */
#include "kern_internal.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- locks */

const char *aim_class_name(int cls)
{
	static const char *const names[AIM_NCLASSES] = {
		"s_orphan_lock", "dir_i_mutex", "file_i_mutex", "pipe_mutex", "shm_sem", "spin_role", "rw_role",
	};
	return cls >= 0 && cls < AIM_NCLASSES ? names[cls] : "?";
}

static double cycles_ns(const struct aim_ctx *c, uint64_t cycles)
{
	return c->cycles_per_ns > 0 ? (double)cycles / c->cycles_per_ns : (double)cycles;
}

/* The log2 bucket of ns: bucket b holds [2^b, 2^(b+1)), 0 holds [0, 2). */
static int log2_bucket(double ns)
{
	int b = 0;
	while (b + 1 < AIM_WAIT_BUCKETS && ns >= (double)(2ull << b))
		b++;
	return b;
}

/* Account one acquisition that waited `cycles` to the lock's class. */
static void account_wait(struct aim_ctx *c, const struct aim_lock *l, uint64_t cycles)
{
	struct aim_class_acc *a = &c->cls[l->cls];
	double ns = cycles_ns(c, cycles);
	a->acquires++;
	a->wait_cycles += cycles;
	a->wait_hist[log2_bucket(ns)]++;
	a->slow += ns > AIM_SLOW_WAIT_NS;
	c->wait_cycles[l->role] += cycles;
	c->acquires[l->role]++;
	aim_progress(c);
}

/*
 * The waiters gauge: threads inside lock() on l.  Relaxed: a count for a
 * histogram, ordering nothing (the lock orders the data).  It is one more
 * shared write per acquisition on the wrapper's line, not the lock's.
 */
static void waiting_enter(struct aim_lock *l)
{
	atomic_fetch_add_explicit(&l->waiting, 1, memory_order_relaxed);
}

static void waiting_leave(struct aim_ctx *c, struct aim_lock *l)
{
	uint32_t others = atomic_fetch_sub_explicit(&l->waiting, 1, memory_order_relaxed) - 1;
	c->cls[l->cls].waiters_hist[others < AIM_WAITERS_BINS ? others : AIM_WAITERS_BINS - 1]++;
}

/*
 * A kernel spinlock or rwlock_t holds preemption off from lock() to
 * unlock() (spin_lock() is preempt_disable() and the arch lock).  A
 * userspace thread cannot, so natively these are nothing; the simulator's
 * compile (bench/sim/sim_aim7_interpose.h) makes them the engine's
 * preempt-off region for the roles it names (doc/sim.md, "aim7 on the
 * simulator").
 */
#ifndef AIM_PREEMPT_OFF
#define AIM_PREEMPT_OFF(role) ((void)(role))
#define AIM_PREEMPT_ON(role) ((void)(role))
#endif

void aim_lock(struct aim_ctx *c, struct aim_lock *l)
{
	const struct lb_lock_ops *ops = c->k->ops[l->role];
	AIM_PREEMPT_OFF(l->role);
	waiting_enter(l);
	atomic_store_explicit(&c->in_lock, 1, memory_order_relaxed); /* watchdog evidence */
	uint64_t t0 = lb_cycles();
	ops->lock(l->obj, c->tctx[l->role]);
	uint64_t t1 = lb_cycles();
	atomic_store_explicit(&c->in_lock, 0, memory_order_relaxed);
	waiting_leave(c, l);
	account_wait(c, l, t1 - t0);
	l->acquired_at = t1; /* we hold it: nobody else writes it */
	/* Relaxed: under a working lock no reader is inside; the lock's own
	 * acquire ordering covers everything else. */
	if (l->writers || atomic_load_explicit(&l->readers, memory_order_relaxed))
		l->overlaps++;
	l->writers++;
}

void aim_unlock(struct aim_ctx *c, struct aim_lock *l)
{
	l->writers--;
	uint64_t held = lb_cycles() - l->acquired_at;
	c->cls[l->cls].held_cycles += held;
	c->cls[l->cls].hold_hist[log2_bucket(cycles_ns(c, held))]++;
	c->k->ops[l->role]->unlock(l->obj, c->tctx[l->role]);
	AIM_PREEMPT_ON(l->role);
}

void aim_read_lock(struct aim_ctx *c, struct aim_lock *l)
{
	const struct lb_lock_ops *ops = c->k->ops[l->role];
	AIM_PREEMPT_OFF(l->role);
	waiting_enter(l);
	atomic_store_explicit(&c->in_lock, 1, memory_order_relaxed); /* watchdog evidence */
	uint64_t t0 = lb_cycles();
	if (ops->read_lock)
		ops->read_lock(l->obj, c->tctx[l->role]);
	else
		ops->lock(l->obj, c->tctx[l->role]);
	uint64_t t1 = lb_cycles();
	atomic_store_explicit(&c->in_lock, 0, memory_order_relaxed);
	waiting_leave(c, l);
	account_wait(c, l, t1 - t0);
	/* Relaxed: a count of readers inside, ordered by the lock itself. */
	atomic_fetch_add_explicit(&l->readers, 1, memory_order_relaxed);
	if (l->writers)
		l->overlaps++;
}

void aim_read_unlock(struct aim_ctx *c, struct aim_lock *l)
{
	const struct lb_lock_ops *ops = c->k->ops[l->role];
	atomic_fetch_sub_explicit(&l->readers, 1, memory_order_relaxed);
	if (ops->read_unlock)
		ops->read_unlock(l->obj, c->tctx[l->role]);
	else
		ops->unlock(l->obj, c->tctx[l->role]);
	AIM_PREEMPT_ON(l->role);
}

void aim_kwork_n(struct aim_ctx *c, int kop, unsigned int n)
{
	const struct aim_sizing *sz = c->k->sizing;
	c->kop_count[kop] += n;
	if (!sz || !sz->on || c->pad_frac <= 0)
		return;
	double ns = c->pad_frac * sz->kwork_ns[kop] * n;
	if (!c->alarm_ns) {
		c->kwork_sink += aim_kwork_burn(ns, sz->loops_per_ns);
		return;
	}
	/* re-aim's SIGALRM ends a child inside its job: here the burn that
	 * stands for the job's kernel work stops at the next slice, and the
	 * job's remaining burns are skipped (the caller drops the job). */
	while (ns > 0 && !c->cut) {
		if (lb_now_ns() >= c->alarm_ns) {
			c->cut = true;
			break;
		}
		double slice = ns < AIM_KWORK_SLICE_NS ? ns : AIM_KWORK_SLICE_NS;
		c->kwork_sink += aim_kwork_burn(slice, sz->loops_per_ns);
		ns -= slice;
	}
}

void aim_kwork(struct aim_ctx *c, int kop)
{
	aim_kwork_n(c, kop, 1);
}

bool aim_stopping(const struct aim_kernel *k)
{
	/* Relaxed: the flag only ends waits early; it publishes nothing. */
	return atomic_load_explicit(k->stop, memory_order_relaxed) != 0;
}

/* ---------------------------------------------------------------- pools */

static int pool_init(struct aim_pool *p, uint32_t n)
{
	p->n = n;
	p->nfree = n;
	p->errors = 0;
	p->stack = calloc(n, sizeof(*p->stack));
	p->owner = calloc(n, sizeof(*p->owner));
	if (!p->stack || !p->owner)
		return ENOMEM;
	/* Hand out low indices first. */
	for (uint32_t i = 0; i < n; i++)
		p->stack[i] = n - 1 - i;
	return 0;
}

static void pool_free(struct aim_pool *p)
{
	free(p->stack);
	free(p->owner);
}

uint32_t aim_pool_get(struct aim_pool *p, uint32_t tag)
{
	uint32_t nf = p->nfree;
	if (nf == 0)
		return AIM_NONE; /* exhausted: the caller copes */
	if (nf > p->n) {
		p->errors++;
		return AIM_NONE;
	}
	uint32_t idx = p->stack[nf - 1];
	p->nfree = nf - 1;
	if (idx >= p->n) {
		p->errors++;
		return AIM_NONE;
	}
	if (p->owner[idx] != 0) /* handed out twice */
		p->errors++;
	p->owner[idx] = tag;
	return idx;
}

void aim_pool_put(struct aim_pool *p, uint32_t idx, uint32_t tag)
{
	if (idx >= p->n || p->owner[idx] != tag) { /* double free or a stranger's */
		p->errors++;
		return;
	}
	p->owner[idx] = 0;
	uint32_t nf = p->nfree;
	if (nf >= p->n) {
		p->errors++;
		return;
	}
	p->stack[nf] = idx;
	p->nfree = nf + 1;
}

uint32_t aim_pool_get_locked(struct aim_ctx *c, struct aim_lock *l, struct aim_pool *p,
			     uint32_t tag)
{
	aim_lock(c, l);
	uint32_t idx = aim_pool_get(p, tag);
	aim_unlock(c, l);
	return idx;
}

void aim_pool_put_locked(struct aim_ctx *c, struct aim_lock *l, struct aim_pool *p,
			 uint32_t idx, uint32_t tag)
{
	if (idx == AIM_NONE)
		return;
	aim_lock(c, l);
	aim_pool_put(p, idx, tag);
	aim_unlock(c, l);
}

/* Walk the free stack: every entry free and listed once; used + free = n. */
unsigned long aim_pool_check(const struct aim_pool *p, const char *what, FILE *err)
{
	unsigned long bad = 0;
	uint32_t used = 0;
	if (p->errors) {
		fprintf(err, "aim7: invariant: %s: %llu double allocation(s)/free(s) seen\n", what,
			(unsigned long long)p->errors);
		bad++;
	}
	for (uint32_t i = 0; i < p->n; i++)
		used += p->owner[i] != 0;
	if (p->nfree > p->n || used + p->nfree != p->n) {
		fprintf(err, "aim7: invariant: %s: %u in use + %u free != %u\n", what, used,
			p->nfree, p->n);
		return bad + 1;
	}
	uint8_t *seen = calloc(p->n, 1);
	for (uint32_t i = 0; seen && i < p->nfree; i++) {
		uint32_t idx = p->stack[i];
		if (idx >= p->n || seen[idx] || p->owner[idx]) {
			fprintf(err, "aim7: invariant: %s: free list entry %u corrupt\n", what, i);
			bad++;
			break;
		}
		seen[idx] = 1;
	}
	free(seen);
	return bad;
}

/* ------------------------------------------------------- lock creation */

static int new_lock_class(struct aim_kernel *k, struct aim_lock *l, int role, int cls)
{
	const struct lb_lock_ops *ops = k->ops[role];
	if (k->nlocks == k->cap_locks) {
		size_t cap = k->cap_locks ? 2 * k->cap_locks : 256;
		struct aim_lock **nl = realloc(k->locks, cap * sizeof(*nl));
		if (!nl)
			return ENOMEM;
		k->locks = nl;
		k->cap_locks = cap;
	}
	l->obj = lb_lock_alloc(ops);
	l->role = (uint8_t)role;
	l->cls = (uint8_t)cls;
	l->acquired_at = 0;
	l->writers = 0;
	l->overlaps = 0;
	atomic_init(&l->readers, 0);
	atomic_init(&l->waiting, 0);
	if (!l->obj)
		return ENOMEM;
	int e = ops->init(l->obj);
	if (e) {
		lb_lock_free(l->obj);
		l->obj = NULL;
		return e;
	}
	k->locks[k->nlocks++] = l;
	return 0;
}

/* Spin and rw role locks form one class each; mutex-role locks name theirs. */
static int new_lock(struct aim_kernel *k, struct aim_lock *l, int role)
{
	return new_lock_class(k, l, role, role == AIM_ROLE_SPIN ? AIM_CLASS_SPIN : AIM_CLASS_RW);
}

static void pipe_init_data(struct aim_pipe *p)
{
	p->head = p->tail = 0;
	p->wseq = p->rseq = 0;
	p->reader_waits = p->writer_waits = false;
	atomic_init(&p->rd_event, 0);
	atomic_init(&p->wr_event, 0);
}

int aim_kernel_init(struct aim_kernel *k, const struct lb_lock_ops *const *ops,
		    unsigned int users, _Atomic int *stop)
{
	int e = 0;
	memset(k, 0, sizeof(*k));
	for (int r = 0; r < AIM_NROLES; r++)
		k->ops[r] = ops[r];
	k->users = users;
	k->stop = stop;
	uint32_t per = users + 16;
	k->mm = calloc(2 * (size_t)users, sizeof(*k->mm));
	k->pipe = calloc(2 * (size_t)users, sizeof(*k->pipe));
	k->sig = calloc(users, sizeof(*k->sig));
	k->fdata = calloc(2 * (size_t)users, sizeof(*k->fdata));
	if (!k->mm || !k->pipe || !k->sig || !k->fdata)
		return ENOMEM;
	/* Pools sized so a correct run never runs dry. */
	if ((e = pool_init(&k->dir.pool, 24 * per)) || (e = pool_init(&k->itable.pool, 24 * per)) ||
	    (e = pool_init(&k->files, 8 * per)) ||
	    (e = pool_init(&k->pages, (2 * AIM_MM_MAX_PAGES + 2 * AIM_FILE_PAGES) * per)) ||
	    (e = pool_init(&k->tasks.pids, 4 * per)))
		return e;
	if ((e = pool_init(&k->dcache.pool, k->dir.pool.n)))
		return e;
	k->dcache.ent = calloc(k->dcache.pool.n, sizeof(*k->dcache.ent));
	if (!k->dcache.ent)
		return ENOMEM;
	k->dir.ent = calloc(k->dir.pool.n, sizeof(*k->dir.ent));
	k->itable.nlink = calloc(k->itable.pool.n, sizeof(*k->itable.nlink));
	k->orphans.on = calloc(k->itable.pool.n, sizeof(*k->orphans.on));
	if (!k->orphans.on)
		return ENOMEM;
	k->tasks.next = calloc(k->tasks.pids.n + 1, sizeof(uint32_t));
	k->tasks.prev = calloc(k->tasks.pids.n + 1, sizeof(uint32_t));
	if (!k->dir.ent || !k->itable.nlink || !k->tasks.next || !k->tasks.prev)
		return ENOMEM;
	for (int b = 0; b < AIM_DIR_BUCKETS; b++) {
		k->dir.bucket[b] = AIM_NONE;
		atomic_init(&k->dcache.bucket[b], AIM_NONE);
	}
	atomic_init(&k->dcache.seq, 0);
	uint32_t head = k->tasks.pids.n;
	k->tasks.next[head] = k->tasks.prev[head] = head;

	if ((e = new_lock_class(k, &k->dir.i_mutex, AIM_ROLE_MUTEX, AIM_CLASS_DIR)) ||
	    (e = new_lock_class(k, &k->orphans.lock, AIM_ROLE_MUTEX, AIM_CLASS_ORPHAN)) ||
	    (e = new_lock(k, &k->dcache.lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->itable.lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->files_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->zone_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->lru_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->tasks.lock, AIM_ROLE_RW)) ||
	    (e = new_lock(k, &k->ports.lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock_class(k, &k->shm.sem, AIM_ROLE_MUTEX, AIM_CLASS_SHM)))
		return e;
	for (unsigned int i = 0; i < 2 * users; i++) {
		struct aim_mm *mm = &k->mm[i];
		mm->tag = 2 * i + 1;
		if ((e = new_lock(k, &mm->mmap_lock, AIM_ROLE_RW)) ||
		    (e = new_lock(k, &mm->ptl, AIM_ROLE_SPIN)) ||
		    (e = new_lock_class(k, &k->pipe[i].mutex, AIM_ROLE_MUTEX, AIM_CLASS_PIPE)) ||
		    (e = new_lock_class(k, &k->fdata[i].i_mutex, AIM_ROLE_MUTEX, AIM_CLASS_FILE)) ||
		    (e = new_lock(k, &k->fdata[i].tree_lock, AIM_ROLE_SPIN)))
			return e;
		pipe_init_data(&k->pipe[i]);
		k->fdata[i].tag = 2 * i + 2;
		for (int p = 0; p < AIM_FILE_PAGES; p++)
			k->fdata[i].page[p] = AIM_NONE;
	}
	for (unsigned int i = 0; i < users; i++)
		if ((e = new_lock(k, &k->sig[i].siglock, AIM_ROLE_SPIN)))
			return e;
	return 0;
}

void aim_kernel_destroy(struct aim_kernel *k)
{
	for (size_t i = 0; i < k->nlocks; i++) {
		const struct lb_lock_ops *ops = k->ops[k->locks[i]->role];
		if (ops->destroy)
			ops->destroy(k->locks[i]->obj);
		lb_lock_free(k->locks[i]->obj);
	}
	free(k->locks);
	pool_free(&k->dir.pool);
	pool_free(&k->dcache.pool);
	free(k->dcache.ent);
	pool_free(&k->itable.pool);
	pool_free(&k->files);
	pool_free(&k->pages);
	pool_free(&k->tasks.pids);
	free(k->dir.ent);
	free(k->itable.nlink);
	free(k->orphans.on);
	free(k->tasks.next);
	free(k->tasks.prev);
	free(k->mm);
	free(k->pipe);
	free(k->sig);
	free(k->fdata);
	memset(k, 0, sizeof(*k));
}

/* Sum the counters of the locks that `keep` selects (role, or class). */
static size_t sum_counters(const struct aim_kernel *k, int role, int cls, struct lb_counter *out,
			   size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < k->nlocks; i++) {
		const struct aim_lock *l = k->locks[i];
		if ((role >= 0 && l->role != role) || (cls >= 0 && l->cls != cls))
			continue;
		const struct lb_lock_ops *ops = k->ops[l->role];
		if (!ops->counters)
			continue;
		struct lb_counter c[LB_MAX_COUNTERS];
		size_t m = ops->counters(l->obj, c, LB_MAX_COUNTERS);
		for (size_t j = 0; j < m; j++) {
			size_t s = 0;
			while (s < n && strcmp(out[s].name, c[j].name))
				s++;
			if (s == n) {
				if (n == max)
					continue;
				out[n].name = c[j].name;
				out[n++].value = 0;
			}
			out[s].value += c[j].value;
		}
	}
	return n;
}

size_t aim_kernel_counters(const struct aim_kernel *k, int role, struct lb_counter *out,
			   size_t max)
{
	return sum_counters(k, role, -1, out, max);
}

size_t aim_kernel_class_counters(const struct aim_kernel *k, int cls, struct lb_counter *out,
				 size_t max)
{
	return sum_counters(k, -1, cls, out, max);
}
