/* SPDX-License-Identifier: MIT */
/*
 * kern.c - the simulated kernel's objects and system calls (see kern.h).
 *
 * Locks are taken only through the registry vtable, timed with the cycle
 * counter so --explain can say how much of a child's time went to waiting
 * on each role.  Every operation double-checks what it finds (a free page
 * must be free, an entry must be in its chain) and counts surprises in the
 * object's `errors`, which aim_kernel_check() reports.
 */
#include "kern.h"
#include "lb_futex.h"
#include "lb_registry.h"
#include "lb_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- locks */

void aim_lock(struct aim_ctx *c, struct aim_lock *l)
{
	const struct lb_lock_ops *ops = c->k->ops[l->role];
	uint64_t t0 = lb_cycles();
	ops->lock(l->obj, c->tctx[l->role]);
	c->wait_cycles[l->role] += lb_cycles() - t0;
	c->acquires[l->role]++;
	/* Relaxed: under a working lock no reader is inside; the lock's own
	 * acquire ordering covers everything else. */
	if (l->writers || atomic_load_explicit(&l->readers, memory_order_relaxed))
		l->overlaps++;
	l->writers++;
}

void aim_unlock(struct aim_ctx *c, struct aim_lock *l)
{
	l->writers--;
	c->k->ops[l->role]->unlock(l->obj, c->tctx[l->role]);
}

void aim_read_lock(struct aim_ctx *c, struct aim_lock *l)
{
	const struct lb_lock_ops *ops = c->k->ops[l->role];
	uint64_t t0 = lb_cycles();
	if (ops->read_lock)
		ops->read_lock(l->obj, c->tctx[l->role]);
	else
		ops->lock(l->obj, c->tctx[l->role]);
	c->wait_cycles[l->role] += lb_cycles() - t0;
	c->acquires[l->role]++;
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

/* Walk the free stack: every entry free and listed once; used + free = n. */
static unsigned long pool_check(const struct aim_pool *p, const char *what, FILE *err)
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

static int new_lock(struct aim_kernel *k, struct aim_lock *l, int role)
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
	l->writers = 0;
	l->overlaps = 0;
	atomic_init(&l->readers, 0);
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
	k->tasks.next = calloc(k->tasks.pids.n + 1, sizeof(uint32_t));
	k->tasks.prev = calloc(k->tasks.pids.n + 1, sizeof(uint32_t));
	if (!k->dir.ent || !k->itable.nlink || !k->tasks.next || !k->tasks.prev)
		return ENOMEM;
	for (int b = 0; b < AIM_DIR_BUCKETS; b++)
		k->dir.bucket[b] = k->dcache.bucket[b] = AIM_NONE;
	uint32_t head = k->tasks.pids.n;
	k->tasks.next[head] = k->tasks.prev[head] = head;

	if ((e = new_lock(k, &k->dir.i_mutex, AIM_ROLE_MUTEX)) ||
	    (e = new_lock(k, &k->dcache.lock, AIM_ROLE_RW)) ||
	    (e = new_lock(k, &k->itable.lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->files_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->zone_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->lru_lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->tasks.lock, AIM_ROLE_RW)) ||
	    (e = new_lock(k, &k->ports.lock, AIM_ROLE_SPIN)) ||
	    (e = new_lock(k, &k->shm.sem, AIM_ROLE_MUTEX)))
		return e;
	for (unsigned int i = 0; i < 2 * users; i++) {
		struct aim_mm *mm = &k->mm[i];
		mm->tag = 2 * i + 1;
		if ((e = new_lock(k, &mm->mmap_lock, AIM_ROLE_RW)) ||
		    (e = new_lock(k, &mm->ptl, AIM_ROLE_SPIN)) ||
		    (e = new_lock(k, &k->pipe[i].mutex, AIM_ROLE_MUTEX)) ||
		    (e = new_lock(k, &k->fdata[i].i_mutex, AIM_ROLE_MUTEX)) ||
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
	free(k->tasks.next);
	free(k->tasks.prev);
	free(k->mm);
	free(k->pipe);
	free(k->sig);
	free(k->fdata);
	memset(k, 0, sizeof(*k));
}

size_t aim_kernel_counters(const struct aim_kernel *k, int role, struct lb_counter *out,
			   size_t max)
{
	const struct lb_lock_ops *ops = k->ops[role];
	size_t n = 0;
	if (!ops->counters)
		return 0;
	for (size_t i = 0; i < k->nlocks; i++) {
		if (k->locks[i]->role != role)
			continue;
		struct lb_counter c[LB_MAX_COUNTERS];
		size_t m = ops->counters(k->locks[i]->obj, c, LB_MAX_COUNTERS);
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

/* ------------------------------------------------------------ inodes */

static uint32_t inode_alloc(struct aim_ctx *c, uint32_t tag)
{
	struct aim_itable *it = &c->k->itable;
	aim_lock(c, &it->lock);
	uint32_t ino = aim_pool_get(&it->pool, tag);
	if (ino != AIM_NONE)
		it->nlink[ino] = 1;
	aim_unlock(c, &it->lock);
	return ino;
}

static void inode_link(struct aim_ctx *c, uint32_t ino)
{
	struct aim_itable *it = &c->k->itable;
	aim_lock(c, &it->lock);
	if (ino >= it->pool.n || it->pool.owner[ino] == 0)
		it->errors++;
	else
		it->nlink[ino]++;
	aim_unlock(c, &it->lock);
}

static void inode_unlink(struct aim_ctx *c, uint32_t ino)
{
	struct aim_itable *it = &c->k->itable;
	aim_lock(c, &it->lock);
	if (ino >= it->pool.n || it->pool.owner[ino] == 0 || it->nlink[ino] == 0) {
		it->errors++;
	} else if (--it->nlink[ino] == 0) {
		aim_pool_put(&it->pool, ino, it->pool.owner[ino]);
	}
	aim_unlock(c, &it->lock);
}

/* --------------------------------------------------------- directory */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % AIM_DIR_BUCKETS;
}

/* A dcache chain walk, bounded like dir_find; the entry or AIM_NONE. */
static uint32_t d_find(struct aim_dcache *dc, const char *name, uint32_t *prevp)
{
	uint32_t prev = AIM_NONE, e = dc->bucket[name_hash(name)];
	for (uint32_t steps = 0; e != AIM_NONE; steps++) {
		if (e >= dc->pool.n || steps > dc->pool.n) {
			dc->errors++;
			return AIM_NONE;
		}
		if (!strncmp(dc->ent[e].name, name, sizeof(dc->ent[e].name)))
			break;
		prev = e;
		e = dc->ent[e].next;
	}
	if (prevp)
		*prevp = prev;
	return e;
}

/* d_lookup: the path walk's step, on the read side. */
static bool d_lookup(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	aim_read_lock(c, &dc->lock);
	bool hit = d_find(dc, name, NULL) != AIM_NONE;
	aim_read_unlock(c, &dc->lock);
	return hit;
}

static void d_add(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	aim_lock(c, &dc->lock);
	if (d_find(dc, name, NULL) == AIM_NONE) {
		uint32_t e = aim_pool_get(&dc->pool, 1);
		if (e != AIM_NONE) {
			uint32_t b = name_hash(name);
			snprintf(dc->ent[e].name, sizeof(dc->ent[e].name), "%s", name);
			dc->ent[e].next = dc->bucket[b];
			dc->bucket[b] = e;
			dc->n++;
		}
	}
	aim_unlock(c, &dc->lock);
}

static void d_drop(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	uint32_t prev;
	aim_lock(c, &dc->lock);
	uint32_t e = d_find(dc, name, &prev);
	if (e != AIM_NONE) {
		if (prev == AIM_NONE)
			dc->bucket[name_hash(name)] = dc->ent[e].next;
		else
			dc->ent[prev].next = dc->ent[e].next;
		dc->n--;
		aim_pool_put(&dc->pool, e, 1);
	} else {
		dc->errors++; /* every name in the directory is cached */
	}
	aim_unlock(c, &dc->lock);
}

/* Find `name` in its chain; *prevp gets the predecessor (AIM_NONE = head).
 * Bounded by the pool size: a cycle made by a broken lock is counted. */
static uint32_t dir_find(struct aim_dir *d, const char *name, uint32_t *prevp)
{
	uint32_t prev = AIM_NONE, e = d->bucket[name_hash(name)];
	for (uint32_t steps = 0; e != AIM_NONE; steps++) {
		if (e >= d->pool.n || steps > d->pool.n) {
			d->errors++;
			return AIM_NONE;
		}
		if (!strncmp(d->ent[e].name, name, sizeof(d->ent[e].name)))
			break;
		prev = e;
		e = d->ent[e].next;
	}
	if (prevp)
		*prevp = prev;
	return e;
}

static int dir_insert(struct aim_ctx *c, struct aim_dir *d, const char *name, uint32_t ino)
{
	uint32_t e = aim_pool_get(&d->pool, 1);
	if (e == AIM_NONE)
		return -1;
	snprintf(d->ent[e].name, sizeof(d->ent[e].name), "%s", name);
	d->ent[e].ino = ino;
	uint32_t b = name_hash(name);
	d->ent[e].next = d->bucket[b];
	d->bucket[b] = e;
	d->nentries++;
	(void)c;
	return 0;
}

int aim_sys_creat(struct aim_ctx *c, const char *name, uint32_t tag)
{
	struct aim_dir *d = &c->k->dir;
	int rc = 0;
	d_lookup(c, name); /* the path walk */
	aim_lock(c, &d->i_mutex);
	uint32_t e = dir_find(d, name, NULL);
	if (e == AIM_NONE) {
		uint32_t ino = inode_alloc(c, tag);
		if (ino == AIM_NONE || dir_insert(c, d, name, ino)) {
			if (ino != AIM_NONE)
				inode_unlink(c, ino);
			rc = -1;
		} else {
			d_add(c, name);
		}
	}
	aim_unlock(c, &d->i_mutex);
	return rc;
}

int aim_sys_link(struct aim_ctx *c, const char *old, const char *new_name)
{
	struct aim_dir *d = &c->k->dir;
	int rc = -1;
	d_lookup(c, old);
	aim_lock(c, &d->i_mutex);
	uint32_t e = dir_find(d, old, NULL);
	if (e != AIM_NONE && dir_find(d, new_name, NULL) == AIM_NONE) {
		uint32_t ino = d->ent[e].ino;
		if (dir_insert(c, d, new_name, ino) == 0) {
			inode_link(c, ino);
			d_add(c, new_name);
			rc = 0;
		}
	}
	aim_unlock(c, &d->i_mutex);
	return rc;
}

int aim_sys_unlink(struct aim_ctx *c, const char *name)
{
	struct aim_dir *d = &c->k->dir;
	uint32_t prev, ino = AIM_NONE;
	d_lookup(c, name);
	aim_lock(c, &d->i_mutex);
	uint32_t e = dir_find(d, name, &prev);
	if (e != AIM_NONE) {
		d_drop(c, name);
		if (prev == AIM_NONE)
			d->bucket[name_hash(name)] = d->ent[e].next;
		else
			d->ent[prev].next = d->ent[e].next;
		ino = d->ent[e].ino;
		d->nentries--;
		aim_pool_put(&d->pool, e, 1);
		inode_unlink(c, ino);
	}
	aim_unlock(c, &d->i_mutex);
	return e == AIM_NONE ? -1 : 0;
}

/* readdir: walk every chain under i_mutex, as vfs_readdir did; the count
 * must match the directory's own. */
uint32_t aim_sys_readdir(struct aim_ctx *c)
{
	struct aim_dir *d = &c->k->dir;
	uint32_t n = 0;
	aim_lock(c, &d->i_mutex);
	for (int b = 0; b < AIM_DIR_BUCKETS; b++)
		for (uint32_t e = d->bucket[b]; e != AIM_NONE; e = d->ent[e].next) {
			if (e >= d->pool.n || n > d->pool.n) {
				d->errors++;
				b = AIM_DIR_BUCKETS;
				break;
			}
			n++;
		}
	if (n != d->nentries)
		d->errors++;
	aim_unlock(c, &d->i_mutex);
	return n;
}

bool aim_sys_lookup(struct aim_ctx *c, const char *name)
{
	struct aim_dir *d = &c->k->dir;
	if (d_lookup(c, name))
		return true; /* a dcache hit: no i_mutex */
	aim_lock(c, &d->i_mutex);
	bool found = dir_find(d, name, NULL) != AIM_NONE;
	aim_unlock(c, &d->i_mutex);
	return found;
}

/* -------------------------------------------------------- file table */

uint32_t aim_sys_open_file(struct aim_ctx *c, uint32_t tag)
{
	struct aim_kernel *k = c->k;
	aim_lock(c, &k->files_lock);
	uint32_t f = aim_pool_get(&k->files, tag);
	aim_unlock(c, &k->files_lock);
	return f;
}

void aim_sys_close_file(struct aim_ctx *c, uint32_t f, uint32_t tag)
{
	struct aim_kernel *k = c->k;
	if (f == AIM_NONE)
		return;
	aim_lock(c, &k->files_lock);
	aim_pool_put(&k->files, f, tag);
	aim_unlock(c, &k->files_lock);
}

/* ------------------------------------------------------------- pages */

uint32_t aim_page_alloc(struct aim_ctx *c, uint32_t tag)
{
	struct aim_kernel *k = c->k;
	aim_lock(c, &k->zone_lock);
	uint32_t p = aim_pool_get(&k->pages, tag);
	aim_unlock(c, &k->zone_lock);
	return p;
}

void aim_page_free(struct aim_ctx *c, uint32_t page, uint32_t tag)
{
	struct aim_kernel *k = c->k;
	if (page == AIM_NONE)
		return;
	aim_lock(c, &k->zone_lock);
	aim_pool_put(&k->pages, page, tag);
	aim_unlock(c, &k->zone_lock);
}

/* ---------------------------------------------------------------- mm */

/* The heap is the last VMA; resident pages are kept in page order. */
static void mm_free_pages_from(struct aim_ctx *c, struct aim_mm *mm, uint32_t keep)
{
	aim_lock(c, &mm->ptl);
	uint32_t n = mm->npages > AIM_MM_MAX_PAGES ? AIM_MM_MAX_PAGES : mm->npages;
	uint32_t drop[AIM_MM_MAX_PAGES];
	uint32_t ndrop = 0;
	if (keep < n) {
		for (uint32_t i = keep; i < n; i++)
			drop[ndrop++] = mm->page[i];
		mm->npages = keep;
	}
	aim_unlock(c, &mm->ptl);
	for (uint32_t i = 0; i < ndrop; i++)
		aim_page_free(c, drop[i], mm->tag);
}

void aim_mm_exec(struct aim_ctx *c, struct aim_mm *mm)
{
	aim_lock(c, &mm->mmap_lock);
	mm_free_pages_from(c, mm, 0);
	/* text, data, heap, stack */
	static const struct aim_vma image[] = { { 16, 48 }, { 48, 56 }, { 56, 64 }, { 4096, 4112 } };
	mm->nvma = 0;
	mm->total_vm = 0;
	for (size_t i = 0; i < sizeof(image) / sizeof(image[0]); i++) {
		mm->vma[mm->nvma++] = image[i];
		mm->total_vm += image[i].end - image[i].start;
	}
	/* the stack VMA sorts last; keep the heap (index 2) as "brk" VMA */
	aim_unlock(c, &mm->mmap_lock);
	/* The loader touches a few pages: faults under the read side. */
	for (uint32_t a = 16; a < 20; a++)
		aim_mm_fault(c, mm, a);
}

int aim_mm_brk(struct aim_ctx *c, struct aim_mm *mm, int delta)
{
	int rc = 0;
	aim_lock(c, &mm->mmap_lock);
	if (mm->nvma < 3 || mm->nvma > AIM_MM_MAX_VMAS) {
		mm->errors++;
		aim_unlock(c, &mm->mmap_lock);
		return -1;
	}
	struct aim_vma *heap = &mm->vma[2];
	int64_t end = (int64_t)heap->end + delta;
	if (end < heap->start || end > mm->vma[3].start || end - heap->start > AIM_MM_MAX_PAGES) {
		rc = -1;
	} else {
		mm->total_vm = mm->total_vm - (heap->end - heap->start) + (uint32_t)(end - heap->start);
		heap->end = (uint32_t)end;
		if (delta < 0) {
			/* Unmap what lay above the new break. */
			aim_lock(c, &mm->ptl);
			uint32_t keep = 0, n = mm->npages;
			while (keep < n && keep < AIM_MM_MAX_PAGES && keep < heap->end - heap->start)
				keep++;
			aim_unlock(c, &mm->ptl);
			mm_free_pages_from(c, mm, keep);
		}
	}
	aim_unlock(c, &mm->mmap_lock);
	return rc;
}

/* A page fault on the heap: read side of the mmap lock, a page from the
 * zone, installed under the page table lock. */
void aim_mm_fault(struct aim_ctx *c, struct aim_mm *mm, uint32_t addr)
{
	aim_read_lock(c, &mm->mmap_lock);
	bool ok = false;
	for (uint32_t i = 0; i < mm->nvma && i < AIM_MM_MAX_VMAS; i++)
		ok |= addr >= mm->vma[i].start && addr < mm->vma[i].end;
	if (ok) {
		uint32_t p = aim_page_alloc(c, mm->tag);
		aim_lock(c, &mm->ptl);
		if (p != AIM_NONE && mm->npages < AIM_MM_MAX_PAGES) {
			mm->page[mm->npages++] = p;
			p = AIM_NONE;
		}
		aim_unlock(c, &mm->ptl);
		aim_page_free(c, p, mm->tag);
	}
	aim_read_unlock(c, &mm->mmap_lock);
}

void aim_mm_exit(struct aim_ctx *c, struct aim_mm *mm)
{
	aim_lock(c, &mm->mmap_lock);
	mm_free_pages_from(c, mm, 0);
	mm->nvma = 0;
	mm->total_vm = 0;
	aim_unlock(c, &mm->mmap_lock);
}

/* fork: dup_mmap holds the parent's mmap lock for writing and copies its
 * VMAs; the child gets its own copies of a few pages (stack, dirty data). */
void aim_mm_dup(struct aim_ctx *c, struct aim_mm *parent, struct aim_mm *child)
{
	aim_lock(c, &parent->mmap_lock);
	aim_lock(c, &child->mmap_lock);
	uint32_t n = parent->nvma > AIM_MM_MAX_VMAS ? AIM_MM_MAX_VMAS : parent->nvma;
	memcpy(child->vma, parent->vma, n * sizeof(child->vma[0]));
	child->nvma = n;
	child->total_vm = parent->total_vm;
	aim_unlock(c, &child->mmap_lock);
	aim_unlock(c, &parent->mmap_lock);
	for (uint32_t a = 4096; a < 4099; a++)
		aim_mm_fault(c, child, a);
}

/* ps: read another task's VMAs and check they are consistent. */
void aim_mm_inspect(struct aim_ctx *c, struct aim_mm *mm)
{
	aim_read_lock(c, &mm->mmap_lock);
	uint32_t sum = 0, n = mm->nvma;
	bool bad = n > AIM_MM_MAX_VMAS;
	for (uint32_t i = 0; !bad && i < n; i++) {
		bad |= mm->vma[i].end < mm->vma[i].start;
		bad |= i > 0 && mm->vma[i].start < mm->vma[i - 1].end;
		sum += mm->vma[i].end - mm->vma[i].start;
	}
	if (bad || sum != mm->total_vm)
		mm->errors++;
	aim_read_unlock(c, &mm->mmap_lock);
}

/* ------------------------------------------------------------- tasks */

uint32_t aim_task_fork(struct aim_ctx *c, uint32_t tag)
{
	struct aim_tasklist *tl = &c->k->tasks;
	aim_lock(c, &tl->lock);
	uint32_t pid = aim_pool_get(&tl->pids, tag);
	if (pid != AIM_NONE) {
		uint32_t head = tl->pids.n, last = tl->prev[head];
		if (last > head) {
			tl->errors++;
		} else {
			tl->next[pid] = head;
			tl->prev[pid] = last;
			tl->next[last] = pid;
			tl->prev[head] = pid;
			tl->nr++;
		}
	}
	aim_unlock(c, &tl->lock);
	return pid;
}

void aim_task_exit(struct aim_ctx *c, uint32_t pid, uint32_t tag)
{
	struct aim_tasklist *tl = &c->k->tasks;
	if (pid == AIM_NONE)
		return;
	aim_lock(c, &tl->lock);
	uint32_t head = tl->pids.n, n = tl->next[pid], p = tl->prev[pid];
	if (n > head || p > head || tl->next[p] != pid || tl->prev[n] != pid) {
		tl->errors++;
	} else {
		tl->next[p] = n;
		tl->prev[n] = p;
		tl->nr--;
		aim_pool_put(&tl->pids, pid, tag);
	}
	aim_unlock(c, &tl->lock);
}

uint32_t aim_task_walk(struct aim_ctx *c)
{
	struct aim_tasklist *tl = &c->k->tasks;
	uint32_t count = 0, head = tl->pids.n;
	aim_read_lock(c, &tl->lock);
	for (uint32_t t = tl->next[head]; t != head; t = tl->next[t]) {
		if (t > head || count > head) {
			tl->errors++;
			break;
		}
		count++;
	}
	if (count != tl->nr)
		tl->errors++;
	aim_read_unlock(c, &tl->lock);
	return count;
}

/* ------------------------------------------------------------- pipes */

void aim_pipe_reset(struct aim_pipe *p)
{
	pipe_init_data(p);
}

/*
 * Sleep until *event moves past `seen`, the way pipe_wait() sleeps on the
 * pipe's wait queue: the event word was read under the pipe mutex, so a
 * wake-up that happens after we dropped it changes the word and the futex
 * wait returns at once.  Bounded (20 ms) so a lost wake-up from a broken
 * lock costs time, never a hang; the stop flag ends the wait for good.
 */
static void pipe_sleep(struct aim_ctx *c, _Atomic uint32_t *event, uint32_t seen)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	if (!aim_stopping(c->k))
		lb_futex_wait(event, seen, &ts);
}

static void pipe_wake(_Atomic uint32_t *event)
{
	lb_futex_wake(event, 1);
}

size_t aim_pipe_write(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		bool wake = false;
		uint32_t seen = 0;
		aim_lock(c, &p->mutex);
		uint64_t used = p->head - p->tail;
		size_t room = used > AIM_PIPE_SIZE ? 0 : AIM_PIPE_SIZE - (size_t)used;
		if (used > AIM_PIPE_SIZE)
			p->errors++;
		size_t chunk = n - done < room ? n - done : room;
		for (size_t i = 0; i < chunk; i++)
			p->buf[(p->head + i) % AIM_PIPE_SIZE] = p->wseq++;
		p->head += chunk;
		done += chunk;
		if (chunk && p->reader_waits) {
			p->reader_waits = false;
			/* Relaxed: the futex word is only a wake-up ticket; the
			 * data is published by the pipe mutex. */
			atomic_fetch_add_explicit(&p->rd_event, 1, memory_order_relaxed);
			wake = true;
		}
		if (done < n) {
			p->writer_waits = true;
			seen = atomic_load_explicit(&p->wr_event, memory_order_relaxed);
		}
		aim_unlock(c, &p->mutex);
		if (wake)
			pipe_wake(&p->rd_event);
		if (done < n) {
			if (aim_stopping(c->k))
				break;
			pipe_sleep(c, &p->wr_event, seen);
		}
	}
	return done;
}

size_t aim_pipe_read(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		bool wake = false;
		uint32_t seen = 0;
		aim_lock(c, &p->mutex);
		uint64_t avail = p->head - p->tail;
		if (avail > AIM_PIPE_SIZE) {
			p->errors++;
			avail = 0;
		}
		size_t chunk = n - done < avail ? n - done : (size_t)avail;
		for (size_t i = 0; i < chunk; i++)
			if (p->buf[(p->tail + i) % AIM_PIPE_SIZE] != p->rseq++)
				p->errors++;
		p->tail += chunk;
		done += chunk;
		if (chunk && p->writer_waits) {
			p->writer_waits = false;
			/* Relaxed: a wake-up ticket, as in aim_pipe_write. */
			atomic_fetch_add_explicit(&p->wr_event, 1, memory_order_relaxed);
			wake = true;
		}
		if (done < n) {
			p->reader_waits = true;
			seen = atomic_load_explicit(&p->rd_event, memory_order_relaxed);
		}
		aim_unlock(c, &p->mutex);
		if (wake)
			pipe_wake(&p->wr_event);
		if (done < n) {
			if (aim_stopping(c->k))
				break;
			pipe_sleep(c, &p->rd_event, seen);
		}
	}
	return done;
}

/* ----------------------------------------------------------- signals */

void aim_sig_send(struct aim_ctx *c, struct aim_sighand *s, uint8_t signo)
{
	aim_lock(c, &s->siglock);
	if (s->qtail - s->qhead >= AIM_SIGQ) {
		s->errors++;
	} else {
		s->q[s->qtail++ % AIM_SIGQ] = signo;
		s->pending |= UINT64_C(1) << (signo & 63);
		s->sent++;
	}
	aim_unlock(c, &s->siglock);
}

int aim_sig_deliver(struct aim_ctx *c, struct aim_sighand *s)
{
	int signo = -1;
	aim_lock(c, &s->siglock);
	if (s->qtail != s->qhead) {
		if (s->qtail - s->qhead > AIM_SIGQ) {
			s->errors++;
		} else {
			signo = s->q[s->qhead++ % AIM_SIGQ];
			if (!(s->pending & (UINT64_C(1) << (signo & 63))))
				s->errors++;
			if (s->qtail == s->qhead)
				s->pending = 0;
			s->delivered++;
		}
	}
	aim_unlock(c, &s->siglock);
	return signo;
}

/* ---------------------------------------------------------------- shm */

void aim_shm_write(struct aim_ctx *c, const uint8_t *src, uint32_t size)
{
	struct aim_shm *s = &c->k->shm;
	if (size > sizeof(s->buf))
		size = sizeof(s->buf);
	aim_lock(c, &s->sem);
	memcpy(s->buf, src, size);
	s->size = size;
	s->fill = src[0];
	aim_unlock(c, &s->sem);
}

/* The reader copies out what the last writer left and checks it is one
 * writer's data: every byte the writer's fill byte. */
void aim_shm_read(struct aim_ctx *c, uint8_t *dst)
{
	struct aim_shm *s = &c->k->shm;
	aim_lock(c, &s->sem);
	uint32_t size = s->size > sizeof(s->buf) ? (uint32_t)sizeof(s->buf) : s->size;
	memcpy(dst, s->buf, size);
	uint8_t fill = s->fill;
	aim_unlock(c, &s->sem);
	for (uint32_t i = 0; i < size; i++)
		if (dst[i] != fill) {
			/* Counted under the semaphore like everything else. */
			aim_lock(c, &s->sem);
			s->errors++;
			aim_unlock(c, &s->sem);
			break;
		}
}

/* -------------------------------------------------------------- ports */

uint32_t aim_port_bind(struct aim_ctx *c, uint32_t tag)
{
	struct aim_ports *pt = &c->k->ports;
	uint32_t port = AIM_NONE;
	aim_lock(c, &pt->lock);
	for (uint32_t i = 0, p = (tag * 7919u) % AIM_PORTS; i < AIM_PORTS;
	     i++, p = (p + 1) % AIM_PORTS)
		if (pt->owner[p] == 0) {
			pt->owner[p] = tag;
			pt->bound++;
			port = p;
			break;
		}
	aim_unlock(c, &pt->lock);
	return port;
}

void aim_port_release(struct aim_ctx *c, uint32_t port, uint32_t tag)
{
	struct aim_ports *pt = &c->k->ports;
	if (port == AIM_NONE)
		return;
	aim_lock(c, &pt->lock);
	if (port >= AIM_PORTS || pt->owner[port] != tag || pt->bound == 0) {
		pt->errors++;
	} else {
		pt->owner[port] = 0;
		pt->bound--;
	}
	aim_unlock(c, &pt->lock);
}

/* --------------------------------------------------------- page cache */

static void lru_add(struct aim_ctx *c, int64_t delta)
{
	struct aim_kernel *k = c->k;
	aim_lock(c, &k->lru_lock);
	if (delta < 0 && k->lru_pages < (uint64_t)-delta)
		k->lru_errors++;
	else
		k->lru_pages += (uint64_t)delta;
	aim_unlock(c, &k->lru_lock);
}

/* write(2) through the page cache: i_mutex, then per page: find or add
 * under tree_lock (a new page comes from the zone and joins the LRU). */
void aim_file_write(struct aim_ctx *c, struct aim_fdata *f, uint32_t pgoff, uint32_t npages,
		    uint8_t *scratch)
{
	aim_lock(c, &f->i_mutex);
	for (uint32_t i = 0; i < npages; i++) {
		uint32_t idx = (pgoff + i) % AIM_FILE_PAGES;
		aim_lock(c, &f->tree_lock);
		bool present = f->page[idx] != AIM_NONE;
		aim_unlock(c, &f->tree_lock);
		if (!present) {
			uint32_t p = aim_page_alloc(c, f->tag);
			aim_lock(c, &f->tree_lock);
			if (p != AIM_NONE && f->page[idx] == AIM_NONE) {
				f->page[idx] = p;
				f->cached++;
				p = AIM_NONE;
				present = true;
			}
			aim_unlock(c, &f->tree_lock);
			aim_page_free(c, p, f->tag);
			if (present)
				lru_add(c, 1);
		}
		/* copy_from_user into the page */
		memset(scratch, (int)(idx + 1), 4096);
		aim_lock(c, &f->tree_lock);
		if (f->page[idx] != AIM_NONE && !f->dirty[idx]) {
			f->dirty[idx] = 1;
			f->ndirty++;
		}
		aim_unlock(c, &f->tree_lock);
	}
	aim_unlock(c, &f->i_mutex);
}

/* read(2): find each page under tree_lock, mark it accessed on the LRU
 * (one lru_lock round trip per 14 pages, like a pagevec). */
void aim_file_read(struct aim_ctx *c, struct aim_fdata *f, uint32_t pgoff, uint32_t npages,
		   uint8_t *scratch)
{
	uint32_t batch = 0;
	for (uint32_t i = 0; i < npages; i++) {
		uint32_t idx = (pgoff + i) % AIM_FILE_PAGES;
		aim_lock(c, &f->tree_lock);
		bool present = f->page[idx] != AIM_NONE;
		aim_unlock(c, &f->tree_lock);
		if (present) {
			memset(scratch, (int)idx, 4096); /* copy_to_user */
			if (++batch == 14) {
				lru_add(c, 0);
				batch = 0;
			}
		}
	}
	if (batch)
		lru_add(c, 0);
}

/* fsync: clean every dirty page (the I/O itself is not simulated). */
void aim_file_sync(struct aim_ctx *c, struct aim_fdata *f)
{
	aim_lock(c, &f->i_mutex);
	aim_lock(c, &f->tree_lock);
	uint32_t cleaned = 0;
	for (uint32_t i = 0; i < AIM_FILE_PAGES; i++)
		if (f->dirty[i]) {
			f->dirty[i] = 0;
			cleaned++;
		}
	if (cleaned != f->ndirty)
		f->errors++;
	f->ndirty = 0;
	aim_unlock(c, &f->tree_lock);
	aim_unlock(c, &f->i_mutex);
}

void aim_file_truncate(struct aim_ctx *c, struct aim_fdata *f)
{
	uint32_t drop[AIM_FILE_PAGES], n = 0;
	aim_lock(c, &f->i_mutex);
	aim_lock(c, &f->tree_lock);
	for (uint32_t i = 0; i < AIM_FILE_PAGES; i++)
		if (f->page[i] != AIM_NONE) {
			drop[n++] = f->page[i];
			f->page[i] = AIM_NONE;
			f->ndirty -= f->dirty[i];
			f->dirty[i] = 0;
		}
	if (n != f->cached)
		f->errors++;
	f->cached = 0;
	aim_unlock(c, &f->tree_lock);
	for (uint32_t i = 0; i < n; i++)
		aim_page_free(c, drop[i], f->tag);
	aim_unlock(c, &f->i_mutex);
	if (n)
		lru_add(c, -(int64_t)n);
}

/* ------------------------------------------------------------ checks */

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			fprintf(err, "aim7: invariant: " __VA_ARGS__); \
			bad++;                                   \
		}                                                \
	} while (0)

unsigned long aim_kernel_check(struct aim_kernel *k, FILE *err)
{
	unsigned long bad = 0;

	/* Exclusion itself: nobody entered a lock somebody else was inside. */
	uint64_t overlaps[AIM_NROLES] = { 0, 0, 0 };
	for (size_t i = 0; i < k->nlocks; i++)
		overlaps[k->locks[i]->role] += k->locks[i]->overlaps;
	for (int r = 0; r < AIM_NROLES; r++)
		CHECK(overlaps[r] == 0, "%s role (%s): %llu time(s) a lock was entered while "
		      "another thread was inside\n", aim_role_name(r), k->ops[r]->name,
		      (unsigned long long)overlaps[r]);

	/* Directory: chains hold nentries distinct names, each entry in use;
	 * per inode, the entries naming it equal its link count. */
	struct aim_dir *d = &k->dir;
	uint32_t *links = calloc(k->itable.pool.n, sizeof(uint32_t));
	uint32_t n = 0;
	bool chain_ok = true;
	for (int b = 0; b < AIM_DIR_BUCKETS && chain_ok; b++)
		for (uint32_t e = d->bucket[b]; e != AIM_NONE; e = d->ent[e].next) {
			if (e >= d->pool.n || n > d->pool.n || !d->pool.owner[e]) {
				chain_ok = false;
				break;
			}
			for (uint32_t o = d->ent[e].next; o != AIM_NONE && o < d->pool.n;
			     o = d->ent[o].next)
				if (!strncmp(d->ent[o].name, d->ent[e].name, sizeof(d->ent[e].name))) {
					chain_ok = false;
					break;
				}
			n++;
			if (links && d->ent[e].ino < k->itable.pool.n)
				links[d->ent[e].ino]++;
		}
	CHECK(chain_ok, "directory: hash chains corrupt (cycle, stray or duplicate entry)\n");
	CHECK(!chain_ok || n == d->nentries, "directory: %u entries in the chains, %u counted\n", n,
	      d->nentries);
	CHECK(d->errors == 0, "directory: %llu inconsistencies seen by lookups/readdir\n",
	      (unsigned long long)d->errors);
	CHECK(!chain_ok || n == d->pool.n - d->pool.nfree,
	      "directory: %u entries linked, %u allocated\n", n, d->pool.n - d->pool.nfree);
	bad += pool_check(&d->pool, "directory entries", err);
	if (links && chain_ok) {
		uint32_t wrong = 0;
		for (uint32_t i = 0; i < k->itable.pool.n; i++)
			wrong += k->itable.pool.owner[i] ? links[i] != k->itable.nlink[i] : links[i] != 0;
		CHECK(wrong == 0, "inodes: %u link count(s) disagree with the directory\n", wrong);
	}
	free(links);

	/* Dentry cache: exactly the directory's names, chains intact. */
	struct aim_dcache *dc = &k->dcache;
	uint32_t dn = 0, missing = 0;
	bool dc_ok = true;
	for (int b = 0; b < AIM_DIR_BUCKETS && dc_ok; b++)
		for (uint32_t e = dc->bucket[b]; e != AIM_NONE; e = dc->ent[e].next) {
			if (e >= dc->pool.n || dn > dc->pool.n || !dc->pool.owner[e]) {
				dc_ok = false;
				break;
			}
			dn++;
			missing += chain_ok && dir_find(d, dc->ent[e].name, NULL) == AIM_NONE;
		}
	CHECK(dc_ok && dn == dc->n && dc->errors == 0,
	      "dentry cache: %u linked, %u counted, %llu inconsistencies seen\n", dn, dc->n,
	      (unsigned long long)dc->errors);
	CHECK(!dc_ok || !chain_ok || (dn == n && missing == 0),
	      "dentry cache: %u names cached, %u in the directory, %u stale\n", dn, n, missing);
	bad += pool_check(&dc->pool, "dentry cache", err);
	CHECK(k->itable.errors == 0, "inodes: %llu link/unlink of a free inode\n",
	      (unsigned long long)k->itable.errors);
	bad += pool_check(&k->itable.pool, "inode table", err);
	bad += pool_check(&k->files, "file table", err);
	CHECK(k->files.nfree == k->files.n, "file table: %u file(s) left open\n",
	      k->files.n - k->files.nfree);

	/* Pages: every page in use belongs to exactly the mm or file holding it. */
	bad += pool_check(&k->pages, "page allocator", err);
	uint64_t held = 0, cached = 0;
	uint32_t misowned = 0;
	for (unsigned int i = 0; i < 2 * k->users; i++) {
		struct aim_mm *mm = &k->mm[i];
		CHECK(mm->errors == 0, "mm %u: %llu inconsistent VMA list(s) seen\n", i,
		      (unsigned long long)mm->errors);
		uint32_t np = mm->npages > AIM_MM_MAX_PAGES ? AIM_MM_MAX_PAGES : mm->npages;
		for (uint32_t j = 0; j < np; j++)
			misowned += mm->page[j] >= k->pages.n || k->pages.owner[mm->page[j]] != mm->tag;
		held += np;
		struct aim_fdata *f = &k->fdata[i];
		uint32_t fc = 0;
		for (uint32_t j = 0; j < AIM_FILE_PAGES; j++)
			if (f->page[j] != AIM_NONE) {
				fc++;
				misowned += f->page[j] >= k->pages.n ||
					    k->pages.owner[f->page[j]] != f->tag;
			}
		CHECK(fc == f->cached && f->errors == 0, "file %u: page cache count %u != %u\n", i,
		      fc, f->cached);
		held += fc;
		cached += fc;
		CHECK(k->pipe[i].errors == 0, "pipe %u: %llu corrupt byte(s)/count(s)\n", i,
		      (unsigned long long)k->pipe[i].errors);
		CHECK(k->pipe[i].head - k->pipe[i].tail <= AIM_PIPE_SIZE,
		      "pipe %u: %llu bytes buffered\n", i,
		      (unsigned long long)(k->pipe[i].head - k->pipe[i].tail));
	}
	CHECK(misowned == 0, "pages: %u page(s) held by one owner but marked for another\n",
	      misowned);
	CHECK(held == (uint64_t)(k->pages.n - k->pages.nfree),
	      "pages: %llu held by mms and files, %u allocated\n", (unsigned long long)held,
	      k->pages.n - k->pages.nfree);
	CHECK(k->lru_pages == cached && k->lru_errors == 0, "LRU: %llu pages listed, %llu cached\n",
	      (unsigned long long)k->lru_pages, (unsigned long long)cached);

	/* Tasks: the list holds nr tasks, linked both ways. */
	struct aim_tasklist *tl = &k->tasks;
	uint32_t head = tl->pids.n, cnt = 0;
	bool list_ok = true;
	for (uint32_t t = tl->next[head]; t != head; t = tl->next[t]) {
		if (t > head || cnt > head || tl->prev[tl->next[t]] != t) {
			list_ok = false;
			break;
		}
		cnt++;
	}
	CHECK(list_ok && cnt == tl->nr && tl->errors == 0,
	      "task list: %u linked, %u counted, %llu inconsistencies seen\n", cnt, tl->nr,
	      (unsigned long long)tl->errors);
	CHECK(cnt == tl->pids.n - tl->pids.nfree, "task list: %u linked, %u pids allocated\n", cnt,
	      tl->pids.n - tl->pids.nfree);
	bad += pool_check(&tl->pids, "pid map", err);

	uint32_t bound = 0;
	for (int p = 0; p < AIM_PORTS; p++)
		bound += k->ports.owner[p] != 0;
	CHECK(bound == k->ports.bound && k->ports.errors == 0,
	      "port table: %u bound, %u counted, %llu inconsistencies\n", bound, k->ports.bound,
	      (unsigned long long)k->ports.errors);
	CHECK(k->shm.errors == 0, "shared memory: %llu torn copies under the semaphore\n",
	      (unsigned long long)k->shm.errors);
	for (unsigned int i = 0; i < k->users; i++) {
		struct aim_sighand *s = &k->sig[i];
		CHECK(s->errors == 0 && s->sent - s->delivered == s->qtail - s->qhead,
		      "signals %u: %llu sent, %llu delivered, %u queued\n", i,
		      (unsigned long long)s->sent, (unsigned long long)s->delivered,
		      s->qtail - s->qhead);
	}
	return bad;
}
