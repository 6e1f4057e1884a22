/* SPDX-License-Identifier: MIT */
/*
 * kern_mm.c - memory of the simulated kernel (see kern.h): the page
 * allocator, each child's mm (VMA list and page table), and the page
 * cache of its file with the LRU.
 */
#include "kern_internal.h"

#include <string.h>

/* ------------------------------------------------------------- pages */

uint32_t aim_page_alloc(struct aim_ctx *c, uint32_t tag)
{
	return aim_pool_get_locked(c, &c->k->zone_lock, &c->k->pages, tag);
}

void aim_page_free(struct aim_ctx *c, uint32_t page, uint32_t tag)
{
	aim_pool_put_locked(c, &c->k->zone_lock, &c->k->pages, page, tag);
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
	aim_kwork(c, AIM_K_BRK); /* do_brk / do_munmap under mmap_sem */
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
	aim_kwork(c, AIM_K_FAULT); /* clear the page, set up its PTE */
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
		aim_kwork(c, AIM_K_FILE_WRITE);
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
			aim_kwork(c, AIM_K_FILE_READ);
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
	aim_kwork(c, AIM_K_FSYNC);
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
