/* SPDX-License-Identifier: MIT */
/*
 * kern_fs.c - the file-system objects of the simulated kernel (see kern.h):
 * inodes, the directory and its dentry cache, the file table.
 */
#include "kern_internal.h"
#include "lb_cpu.h"

#include <string.h>
#include <time.h>

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

/* Drop a link; true when it was the last (the caller evicts the inode). */
static bool inode_drop_link(struct aim_ctx *c, uint32_t ino)
{
	struct aim_itable *it = &c->k->itable;
	bool last = false;
	aim_lock(c, &it->lock);
	if (ino >= it->pool.n || it->pool.owner[ino] == 0 || it->nlink[ino] == 0)
		it->errors++;
	else
		last = --it->nlink[ino] == 0;
	aim_unlock(c, &it->lock);
	return last;
}

/* Free an inode whose last link is gone (the end of eviction). */
static void inode_free(struct aim_ctx *c, uint32_t ino)
{
	struct aim_itable *it = &c->k->itable;
	aim_lock(c, &it->lock);
	if (ino >= it->pool.n || it->pool.owner[ino] == 0 || it->nlink[ino] != 0)
		it->errors++;
	else
		aim_pool_put(&it->pool, ino, it->pool.owner[ino]);
	aim_unlock(c, &it->lock);
}

static void inode_unlink(struct aim_ctx *c, uint32_t ino)
{
	if (inode_drop_link(c, ino))
		inode_free(c, ino);
}

/* ------------------------------------------------------- orphan list */

/* xorshift64: the orphan sections' sleep draws, per thread. */
static double orphan_draw(struct aim_ctx *c)
{
	uint64_t x = c->rng ? c->rng : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->rng = x;
	return (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
}

/*
 * One ext4_orphan_add (add) or ext4_orphan_del under the filesystem's
 * s_orphan_lock (v3.14 fs/ext4/namei.c: the lock is held across the
 * journal's get-write-access of the superblock buffer and the superblock
 * and inode updates).  The section's CPU is the sized AIM_K_ORPHAN; with
 * the calibrated probability the owner then sleeps for the calibrated
 * off-CPU time, as a journal wait does (an owner off the CPU: spinners on
 * a v3.14 mutex see it not running and stop spinning).
 */
static void orphan_section(struct aim_ctx *c, uint32_t ino, bool add)
{
	struct aim_orphans *o = &c->k->orphans;
	const struct aim_sizing *sz = c->k->sizing;
	aim_lock(c, &o->lock);
	if (ino >= c->k->itable.pool.n || (o->on[ino] != 0) == add) {
		o->errors++;
	} else {
		o->on[ino] = add;
		o->n += add ? 1u : (uint32_t)-1;
	}
	aim_kwork(c, AIM_K_ORPHAN);
	if (sz && sz->on && sz->orphan_sleep_p > 0 && orphan_draw(c) < sz->orphan_sleep_p) {
		uint64_t ns = (uint64_t)sz->orphan_sleep_ns;
		struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
		/* Say so to locks whose spinners ask whether the owner runs
		 * (owner->on_cpu in the kernel): they stop, as for a journal wait. */
		const struct lb_lock_ops *ops = c->k->ops[o->lock.role];
		if (ops->offcpu)
			ops->offcpu(c->tctx[o->lock.role], true);
		nanosleep(&ts, NULL);
		if (ops->offcpu)
			ops->offcpu(c->tctx[o->lock.role], false);
		c->orphan_sleeps++;
	}
	aim_unlock(c, &o->lock);
}

/* ext4_truncate of a linked inode: orphan_add, the (empty) truncate, orphan_del. */
static void ext4_truncate_like(struct aim_ctx *c, uint32_t ino)
{
	orphan_section(c, ino, true);
	orphan_section(c, ino, false);
}

/* --------------------------------------------------------- directory */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % AIM_DIR_BUCKETS;
}

/* A name as the dcache keeps it: three zero-padded words. */
static void d_key(const char *name, uint64_t key[3])
{
	char buf[24] = { 0 };
	snprintf(buf, sizeof(buf), "%s", name); /* as the directory keeps it */
	memcpy(key, buf, sizeof(buf));
}

/* The chain of a key: its words mixed (a multiplicative hash). */
static uint32_t d_bucket(const uint64_t key[3])
{
	uint64_t h = (key[0] ^ (key[1] * 31) ^ (key[2] * 961)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) % AIM_DIR_BUCKETS;
}

static bool d_match(const struct aim_dcache_ent *e, const uint64_t key[3])
{
	/* Acquire (plain loads on x86): pairs with the updaters' release
	 * stores, so a reader that sees an edit also sees the odd sequence
	 * count stored before it, and the re-read of the count cannot move
	 * ahead of these loads -- a seqlock without fences, which
	 * ThreadSanitizer can follow (it does not model atomic_thread_fence). */
	for (int i = 0; i < 3; i++)
		if (atomic_load_explicit(&e->name[i], memory_order_acquire) != key[i])
			return false;
	return true;
}

/*
 * A chain walk, bounded by the pool size.  *consistent turns false when the
 * walk met a stray index or a cycle: for a lock-free reader that means an
 * update raced it (retry); under the lock it is a corruption (counted by
 * the caller).  Acquire loads throughout: see d_match.
 */
static uint32_t d_walk(const struct aim_dcache *dc, const uint64_t key[3], uint32_t *prevp,
		       bool *consistent)
{
	uint32_t prev = AIM_NONE;
	uint32_t e = atomic_load_explicit(&dc->bucket[d_bucket(key)], memory_order_acquire);
	*consistent = true;
	for (uint32_t steps = 0; e != AIM_NONE; steps++) {
		if (e >= dc->pool.n || steps > dc->pool.n) {
			*consistent = false;
			return AIM_NONE;
		}
		if (d_match(&dc->ent[e], key))
			break;
		prev = e;
		e = atomic_load_explicit(&dc->ent[e].next, memory_order_acquire);
	}
	if (prevp)
		*prevp = prev;
	return e;
}

/* d_lookup: the path walk's step, lock-free (see struct aim_dcache). */
static bool d_lookup(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	uint64_t key[3];
	bool ok;
	d_key(name, key);
	for (int tries = 0; tries < AIM_DCACHE_RETRIES; tries++) {
		/* acquire: the walk's loads come after this read of the
		 * sequence, so an update that began before it is seen as odd
		 * here or as a changed count below. */
		uint32_t s0 = atomic_load_explicit(&dc->seq, memory_order_acquire);
		if (s0 & 1) { /* an updater is editing: wait for it (it holds a spin lock) */
			c->dcache_retries++;
			lb_cpu_pause();
			continue;
		}
		/* The walk's loads are acquire: the re-read below stays after
		 * them, so a changed sequence covers any update they saw. */
		uint32_t e = d_walk(dc, key, NULL, &ok);
		if (ok && atomic_load_explicit(&dc->seq, memory_order_relaxed) == s0)
			return e != AIM_NONE;
		c->dcache_retries++;
	}
	/* Too many updates in the way: look it up under the lock. */
	c->dcache_locked++;
	aim_lock(c, &dc->lock);
	uint32_t e = d_walk(dc, key, NULL, &ok);
	if (!ok)
		dc->errors++;
	aim_unlock(c, &dc->lock);
	return e != AIM_NONE;
}

/* An update: the lock, then the sequence odd while editing. */
static void d_write_begin(struct aim_ctx *c, struct aim_dcache *dc)
{
	aim_lock(c, &dc->lock);
	/* Relaxed: the edits below are release stores, so a reader that sees
	 * any of them also sees this odd count (write_seqcount_begin). */
	atomic_fetch_add_explicit(&dc->seq, 1, memory_order_relaxed);
}

static void d_write_end(struct aim_ctx *c, struct aim_dcache *dc)
{
	/* release: the edits happen before the count turns even. */
	atomic_fetch_add_explicit(&dc->seq, 1, memory_order_release);
	dc->updates++;
	aim_unlock(c, &dc->lock);
}

static void d_add(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	uint64_t key[3];
	bool ok;
	d_key(name, key);
	d_write_begin(c, dc);
	if (d_walk(dc, key, NULL, &ok) == AIM_NONE && ok) {
		uint32_t e = aim_pool_get(&dc->pool, 1);
		if (e != AIM_NONE) {
			_Atomic uint32_t *head = &dc->bucket[d_bucket(key)];
			/* Release (plain stores on x86): each edit carries the odd
			 * count to a reader that sees it (d_match). */
			for (int i = 0; i < 3; i++)
				atomic_store_explicit(&dc->ent[e].name[i], key[i], memory_order_release);
			atomic_store_explicit(&dc->ent[e].next,
					      atomic_load_explicit(head, memory_order_relaxed),
					      memory_order_release);
			atomic_store_explicit(head, e, memory_order_release);
			dc->n++;
		}
	} else if (!ok) {
		dc->errors++;
	}
	d_write_end(c, dc);
}

static void d_drop(struct aim_ctx *c, const char *name)
{
	struct aim_dcache *dc = &c->k->dcache;
	uint64_t key[3];
	uint32_t prev;
	bool ok;
	d_key(name, key);
	d_write_begin(c, dc);
	uint32_t e = d_walk(dc, key, &prev, &ok);
	if (e != AIM_NONE) {
		uint32_t next = atomic_load_explicit(&dc->ent[e].next, memory_order_relaxed);
		/* Release: as in d_add. */
		if (prev == AIM_NONE)
			atomic_store_explicit(&dc->bucket[d_bucket(key)], next,
					      memory_order_release);
		else
			atomic_store_explicit(&dc->ent[prev].next, next, memory_order_release);
		dc->n--;
		aim_pool_put(&dc->pool, e, 1);
	} else {
		dc->errors++; /* every name in the directory is cached */
	}
	d_write_end(c, dc);
}

/* Find `name` in its chain; *prevp gets the predecessor (AIM_NONE = head).
 * Bounded by the pool size: a cycle made by a broken lock is counted. */
uint32_t aim_dir_find(struct aim_dir *d, const char *name, uint32_t *prevp)
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

/*
 * The entry scan a filesystem without a hashed directory index does under
 * i_mutex on creat, link and unlink (ext2's find_entry / add_link walk
 * every entry): cost proportional to the directory's size.  Returns how
 * many entries carry `name`; the callers check it against the hashed find
 * (a mismatch is a corruption, counted), which also keeps the work real.
 */
static uint32_t dir_scan(struct aim_dir *d, const char *name)
{
	uint32_t seen = 0, matches = 0;
	for (int b = 0; b < AIM_DIR_BUCKETS; b++)
		for (uint32_t e = d->bucket[b]; e != AIM_NONE; e = d->ent[e].next) {
			if (e >= d->pool.n || seen > d->pool.n) {
				d->errors++;
				return matches;
			}
			seen++;
			matches += !strncmp(d->ent[e].name, name, sizeof(d->ent[e].name));
		}
	return matches;
}

/* The scan agrees with the hashed lookup: found (1 entry) or not (0). */
static void dir_scan_check(struct aim_dir *d, const char *name, bool found)
{
	if (dir_scan(d, name) != (found ? 1u : 0u))
		d->errors++;
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
	aim_kwork(c, AIM_K_CREAT_WALK);
	d_lookup(c, name); /* the path walk */
	aim_lock(c, &d->i_mutex);
	uint32_t e = aim_dir_find(d, name, NULL);
	dir_scan_check(d, name, e != AIM_NONE);
	uint32_t existing = e == AIM_NONE ? AIM_NONE : d->ent[e].ino;
	/* lookup_open under the directory's i_mutex; ->create for a new name */
	aim_kwork(c, e == AIM_NONE ? AIM_K_CREAT_NEW_DIR : AIM_K_CREAT_DIR);
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
	/* O_TRUNC of an existing name, after the i_mutex (do_last ->
	 * handle_truncate): the file's own i_mutex keeps it alive meanwhile
	 * in the kernel; here only its creator truncates or unlinks it. */
	if (existing != AIM_NONE)
		ext4_truncate_like(c, existing);
	return rc;
}

int aim_sys_link(struct aim_ctx *c, const char *old, const char *new_name)
{
	struct aim_dir *d = &c->k->dir;
	int rc = -1;
	aim_kwork(c, AIM_K_LINK_WALK);
	d_lookup(c, old);
	aim_lock(c, &d->i_mutex);
	uint32_t e = aim_dir_find(d, old, NULL), taken = aim_dir_find(d, new_name, NULL);
	dir_scan_check(d, new_name, taken != AIM_NONE);
	aim_kwork(c, AIM_K_LINK_DIR); /* lookup + vfs_link under i_mutex */
	if (e != AIM_NONE && taken == AIM_NONE) {
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
	aim_kwork(c, AIM_K_UNLINK_WALK);
	d_lookup(c, name);
	aim_lock(c, &d->i_mutex);
	uint32_t e = aim_dir_find(d, name, &prev);
	dir_scan_check(d, name, e != AIM_NONE);
	aim_kwork(c, AIM_K_UNLINK_DIR); /* lookup_hash + vfs_unlink under i_mutex */
	bool last = false;
	if (e != AIM_NONE) {
		d_drop(c, name);
		if (prev == AIM_NONE)
			d->bucket[name_hash(name)] = d->ent[e].next;
		else
			d->ent[prev].next = d->ent[e].next;
		ino = d->ent[e].ino;
		d->nentries--;
		aim_pool_put(&d->pool, e, 1);
		last = inode_drop_link(c, ino);
		if (last) /* ext4_unlink: the inode goes on the orphan list */
			orphan_section(c, ino, true);
	}
	aim_unlock(c, &d->i_mutex);
	if (last) { /* iput after the unlock: ext4_evict_inode's orphan_del */
		orphan_section(c, ino, false);
		inode_free(c, ino);
	}
	return e == AIM_NONE ? -1 : 0;
}

/* readdir: walk every chain under i_mutex, as vfs_readdir did; the count
 * must match the directory's own. */
uint32_t aim_sys_readdir(struct aim_ctx *c)
{
	struct aim_dir *d = &c->k->dir;
	uint32_t n = 0;
	aim_lock(c, &d->i_mutex);
	aim_kwork(c, AIM_K_READDIR); /* iterate_dir holds i_mutex */
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
	aim_kwork(c, AIM_K_LOOKUP);
	if (d_lookup(c, name))
		return true; /* a dcache hit: no i_mutex */
	aim_lock(c, &d->i_mutex);
	bool found = aim_dir_find(d, name, NULL) != AIM_NONE;
	aim_unlock(c, &d->i_mutex);
	return found;
}

/* -------------------------------------------------------- file table */

uint32_t aim_sys_open_file(struct aim_ctx *c, uint32_t tag)
{
	return aim_pool_get_locked(c, &c->k->files_lock, &c->k->files, tag);
}

void aim_sys_close_file(struct aim_ctx *c, uint32_t f, uint32_t tag)
{
	aim_pool_put_locked(c, &c->k->files_lock, &c->k->files, f, tag);
}
