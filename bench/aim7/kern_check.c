/* SPDX-License-Identifier: MIT */
/*
 * kern_check.c - aim_kernel_check(): every invariant of the simulated
 * kernel (see kern.h), checked once no child runs.  Every operation
 * double-checks what it finds and counts surprises in the object's
 * `errors`; this is where they, and the counts that must add up, are
 * reported.
 */
#include "kern_internal.h"

#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond)) {                                   \
			fprintf(err, "aim7: invariant: " __VA_ARGS__); \
			bad++;                                   \
		}                                                \
	} while (0)

/* Exclusion itself: nobody entered a lock somebody else was inside. */
static unsigned long check_exclusion(const struct aim_kernel *k, FILE *err)
{
	unsigned long bad = 0;
	uint64_t overlaps[AIM_NROLES] = { 0, 0, 0 };
	for (size_t i = 0; i < k->nlocks; i++)
		overlaps[k->locks[i]->role] += k->locks[i]->overlaps;
	for (int r = 0; r < AIM_NROLES; r++)
		CHECK(overlaps[r] == 0, "%s role (%s): %llu time(s) a lock was entered while "
		      "another thread was inside\n", aim_role_name(r), k->ops[r]->name,
		      (unsigned long long)overlaps[r]);
	return bad;
}

/*
 * Directory: chains hold nentries distinct names, each entry in use; per
 * inode, the entries naming it equal its link count.  Then the dentry
 * cache (exactly the directory's names, chains intact), the inode table
 * and the file table.
 */
static unsigned long check_fs(struct aim_kernel *k, FILE *err)
{
	unsigned long bad = 0;
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
	bad += aim_pool_check(&d->pool, "directory entries", err);
	if (links && chain_ok) {
		uint32_t wrong = 0;
		for (uint32_t i = 0; i < k->itable.pool.n; i++)
			wrong += k->itable.pool.owner[i] ? links[i] != k->itable.nlink[i] : links[i] != 0;
		CHECK(wrong == 0, "inodes: %u link count(s) disagree with the directory\n", wrong);
	}
	free(links);

	/* Dentry cache: exactly the directory's names, chains intact, and no
	 * update left half done (the sequence even, moved twice per update). */
	struct aim_dcache *dc = &k->dcache;
	uint32_t dn = 0, missing = 0;
	bool dc_ok = true;
	/* Relaxed loads: no child runs during the check. */
	for (int b = 0; b < AIM_DIR_BUCKETS && dc_ok; b++)
		for (uint32_t e = atomic_load_explicit(&dc->bucket[b], memory_order_relaxed);
		     e != AIM_NONE; e = atomic_load_explicit(&dc->ent[e].next, memory_order_relaxed)) {
			if (e >= dc->pool.n || dn > dc->pool.n || !dc->pool.owner[e]) {
				dc_ok = false;
				break;
			}
			dn++;
			uint64_t words[3];
			char name[sizeof(words) + 1];
			for (int w = 0; w < 3; w++)
				words[w] = atomic_load_explicit(&dc->ent[e].name[w], memory_order_relaxed);
			memcpy(name, words, sizeof(words));
			name[sizeof(words)] = '\0';
			missing += chain_ok && aim_dir_find(d, name, NULL) == AIM_NONE;
		}
	CHECK(dc_ok && dn == dc->n && dc->errors == 0,
	      "dentry cache: %u linked, %u counted, %llu inconsistencies seen\n", dn, dc->n,
	      (unsigned long long)dc->errors);
	CHECK(!dc_ok || !chain_ok || (dn == n && missing == 0),
	      "dentry cache: %u names cached, %u in the directory, %u stale\n", dn, n, missing);
	uint32_t seq = atomic_load_explicit(&dc->seq, memory_order_relaxed);
	CHECK(seq == (uint32_t)(2 * dc->updates),
	      "dentry cache: sequence %u after %llu updates (want twice as many: an update "
	      "overlapped another)\n", seq, (unsigned long long)dc->updates);
	bad += aim_pool_check(&dc->pool, "dentry cache", err);
	CHECK(k->itable.errors == 0, "inodes: %llu link/unlink of a free inode\n",
	      (unsigned long long)k->itable.errors);
	bad += aim_pool_check(&k->itable.pool, "inode table", err);
	/* Every truncate and eviction done: the orphan list is empty. */
	uint32_t marked = 0;
	for (uint32_t i = 0; i < k->itable.pool.n; i++)
		marked += k->orphans.on[i] != 0;
	CHECK(k->orphans.errors == 0 && k->orphans.n == 0 && marked == 0,
	      "orphan list: %u counted, %u marked, %llu add/del inconsistencies (want 0)\n",
	      k->orphans.n, marked, (unsigned long long)k->orphans.errors);
	bad += aim_pool_check(&k->files, "file table", err);
	CHECK(k->files.nfree == k->files.n, "file table: %u file(s) left open\n",
	      k->files.n - k->files.nfree);
	return bad;
}

/*
 * Pages: every page in use belongs to exactly the mm or file holding it;
 * per child, its mm, its file's page cache and its pipe; then the LRU.
 */
static unsigned long check_pages(const struct aim_kernel *k, FILE *err)
{
	unsigned long bad = 0;
	bad += aim_pool_check(&k->pages, "page allocator", err);
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
	return bad;
}

/* Tasks: the list holds nr tasks, linked both ways; then the port table,
 * shared memory and the signal queues. */
static unsigned long check_tasks_ipc(const struct aim_kernel *k, FILE *err)
{
	unsigned long bad = 0;
	const struct aim_tasklist *tl = &k->tasks;
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
	bad += aim_pool_check(&tl->pids, "pid map", err);

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

unsigned long aim_kernel_check(struct aim_kernel *k, FILE *err)
{
	/* In this order: the report reads from the locks to the objects. */
	unsigned long bad = check_exclusion(k, err);
	bad += check_fs(k, err);
	bad += check_pages(k, err);
	bad += check_tasks_ipc(k, err);
	return bad;
}
