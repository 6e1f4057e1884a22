/* SPDX-License-Identifier: MIT */
/*
 * kern.h - the simulated kernel the aim7 tests run their "system calls" on.
 *
 * Every object is plain data guarded by a lock of one role (aim7.h), taken
 * through the registry vtable.  Nothing here is atomic except the futex
 * words of the pipe waits: a lock that fails to exclude lets two threads
 * edit the same lists and counters, which the operations notice on the
 * spot (a page handed out twice, an entry missing from its chain) and the
 * invariant check notices at the end (counts that do not add up).
 * Everything is index-based and bounds-checked, so corruption stays inside
 * the objects: it is counted, never followed out of bounds or round a loop.
 *
 *   object          lock (role)              shared by       re-aim tests
 *   directory       i_mutex (mutex)          every child     creat_clo, link_test,
 *                                                            dir_rtns_1, disk_src, shell
 *   dentry cache    lock-free lookups;       every child     every path walk
 *                   updates: d_lock (spin)                   creat/link/unlink
 *   orphan list     s_orphan_lock (mutex)    every child     creat_clo (O_TRUNC), last
 *                   (one per filesystem)                     unlink: link_test, shell
 *   inode table     inode_lock (spin)        every child     creat/link/unlink
 *   file table      files_lock (spin)        every child     open/close everywhere
 *   page allocator  zone lock (spin)         every child     page_test, exec, fork, disk
 *   LRU list        lru_lock (spin)          every child     disk_* (page cache)
 *   task list       tasklist_lock (rw)       every child     fork_test, exec_test, shell (ps)
 *   port table      port_lock (spin)         every child     tcp_test, udp_test
 *   SysV shm + sem  the semaphore (mutex)    every child     shared_memory
 *   mm (VMA list)   mmap lock (rw) + page    one child, read brk_test, page_test, exec
 *                   table lock (spin)        by others (ps)
 *   pipe / socket   pipe mutex (mutex)       a child and its pipe_cpy, stream/dgram_pipe,
 *                   + futex wait/wake        helper          tcp/udp, shell pipelines
 *   signal queue    siglock (spin)           one child       signal_test
 *   file pages      i_mutex (mutex) +        one child       disk_*, sync_disk_*
 *                   tree_lock (spin)
 */
#ifndef LB_AIM7_KERN_H
#define LB_AIM7_KERN_H

#include "aim7.h"
#include "sizing.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define AIM_NONE UINT32_MAX

/*
 * A lock object of one role, with the kernel's debug check of who is
 * inside: a writer finding anyone inside, or a reader finding a writer,
 * counts an overlap (plain fields written only by the exclusive holder;
 * the reader count is atomic since readers share the lock legitimately).
 */
struct aim_class_acc {
	uint64_t acquires;
	uint64_t wait_cycles;       /* in lock() / read_lock() */
	uint64_t held_cycles;       /* exclusive holds only (readers overlap) */
	uint64_t slow;              /* waits over AIM_SLOW_WAIT_NS */
	uint64_t wait_hist[AIM_WAIT_BUCKETS];
	uint64_t hold_hist[AIM_WAIT_BUCKETS];     /* exclusive holds, wall ns, log2 */
	uint64_t waiters_hist[AIM_WAITERS_BINS]; /* others waiting at each acquisition */
};

struct aim_lock {
	void *obj;
	uint8_t role;
	uint8_t cls;                /* enum aim_lock_class */
	uint64_t acquired_at;       /* cycles; written by the exclusive holder */
	_Atomic uint32_t waiting;   /* threads inside lock() now (the gauge) */
	uint32_t writers;
	_Atomic uint32_t readers;
	uint64_t overlaps;
};

/* Whoever runs kernel code: a child, or its helper (the other end of its
 * shell pipelines).  Per-role lock contexts and wait accounting. */
struct aim_kernel;
struct aim_ctx {
	struct aim_kernel *k;
	void *tctx[AIM_NROLES];
	uint64_t wait_cycles[AIM_NROLES];
	uint64_t acquires[AIM_NROLES];
	double cycles_per_ns;       /* for the wait histogram */
	struct aim_class_acc cls[AIM_NCLASSES];
	/* Sizing (sizing.h): the padding fraction of the test running, how
	 * often each kernel op was passed, and the burn loop's sink. */
	double pad_frac;
	double kop_count[AIM_NKOPS];
	uint64_t kwork_sink;
	/* re-aim's alarm (fixed window): the lb_now_ns() at which it rings,
	 * 0 for none; cut is set when a burn saw it ring, and the rest of the
	 * job's burns are skipped (the job ends its loop iteration and
	 * cleans up: aim_job_ending in task.h). */
	uint64_t alarm_ns;
	bool cut;
	/* dcache lookups retried / done under the lock: per thread, so the
	 * debug counts add no shared write to the lock-free path. */
	uint64_t dcache_retries, dcache_locked;
	uint64_t rng;               /* the orphan sections' sleep draws */
	uint64_t orphan_sleeps;
	/* For the watchdog (stall.h), written by this thread only and read
	 * by the watchdog (relaxed both sides: evidence, ordering nothing):
	 * lock acquisitions and ended jobs, whether it is inside lock(), and
	 * its thread id for /proc. */
	_Atomic uint64_t progress;
	_Atomic int in_lock;
	_Atomic int tid;
};

/* One more unit of progress for the watchdog: its own counter, so a load
 * and a store, no read-modify-write. */
static inline void aim_progress(struct aim_ctx *c)
{
	atomic_store_explicit(&c->progress,
			      atomic_load_explicit(&c->progress, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* A point where the real kernel does work the model does not: count it,
 * and burn its sized share of the table's time (nothing when unsized).
 * With an alarm set the burn goes in slices of AIM_KWORK_SLICE_NS and the
 * alarm is read before each: once it rang the job is cut (c->cut). */
#define AIM_KWORK_SLICE_NS 50000.0
void aim_kwork(struct aim_ctx *c, int kop);
void aim_kwork_n(struct aim_ctx *c, int kop, unsigned int n);

void aim_lock(struct aim_ctx *c, struct aim_lock *l);
void aim_unlock(struct aim_ctx *c, struct aim_lock *l);
/* Read side where the lock has one, else the exclusive side. */
void aim_read_lock(struct aim_ctx *c, struct aim_lock *l);
void aim_read_unlock(struct aim_ctx *c, struct aim_lock *l);

/* A stack of free indices with a used flag per index: allocators of
 * inodes, dentries, pages, tasks, files.  The caller holds the lock. */
struct aim_pool {
	uint32_t n, nfree;
	uint32_t *stack;
	uint32_t *owner;      /* 0 = free, else the holder's tag */
	uint64_t errors;
};

struct aim_dentry {
	uint32_t next, ino;
	char name[24];
};

#define AIM_DIR_BUCKETS 256
struct aim_dir {
	struct aim_lock i_mutex;
	struct aim_pool pool;
	struct aim_dentry *ent;
	uint32_t bucket[AIM_DIR_BUCKETS];
	uint32_t nentries;
	uint64_t errors;
};

/*
 * The dentry cache, as the kernel's: lookups are lock-free (a seqcount read
 * section, retried when an update ran meanwhile, and after
 * AIM_DCACHE_RETRIES failed tries done under the lock, like rcu-walk
 * falling back to ref-walk); adds and drops take a spin-role lock and bump
 * the sequence (odd while they edit).  Entries are type-stable (the pool is
 * never freed while children run), so a racing reader only ever reads an
 * old or new name and the sequence tells it to retry.
 */
#define AIM_DCACHE_RETRIES 64
struct aim_dcache_ent {
	_Atomic uint32_t next;
	_Atomic uint64_t name[3];   /* the name, 24 bytes zero-padded */
};

struct aim_dcache {
	struct aim_lock lock;       /* spin role: updates only */
	_Atomic uint32_t seq;       /* even: stable; odd: an update is editing */
	struct aim_pool pool;
	struct aim_dcache_ent *ent;
	_Atomic uint32_t bucket[AIM_DIR_BUCKETS];
	uint32_t n;
	uint64_t updates;           /* under the lock: the sequence moves by 2 per update */
	uint64_t errors;
};

/*
 * ext4's orphan list and its superblock-global s_orphan_lock (v3.14
 * fs/ext4/namei.c ext4_orphan_add/del): an inode is on the list while a
 * truncate or a last unlink is in flight.  on[ino] marks it; n counts it.
 */
struct aim_orphans {
	struct aim_lock lock;       /* mutex role */
	uint8_t *on;                /* per inode */
	uint32_t n;
	uint64_t sleeps;            /* sections whose owner slept on "journal I/O" */
	uint64_t errors;            /* added twice, or deleted when absent */
};

struct aim_itable {
	struct aim_lock lock;
	struct aim_pool pool;
	uint32_t *nlink;
	uint64_t errors;
};

struct aim_vma {
	uint32_t start, end; /* pages, [start, end) */
};

#define AIM_MM_MAX_VMAS 8
#define AIM_MM_MAX_PAGES 512
struct aim_mm {
	struct aim_lock mmap_lock;  /* rw role */
	struct aim_lock ptl;        /* spin role: page table */
	struct aim_vma vma[AIM_MM_MAX_VMAS];
	uint32_t nvma;
	uint32_t total_vm;          /* sum of VMA lengths */
	uint32_t page[AIM_MM_MAX_PAGES]; /* resident pages (allocator index) */
	uint32_t npages;
	uint32_t tag;               /* owner tag of its pages */
	uint64_t errors;
};

#define AIM_PIPE_SIZE 8192
struct aim_pipe {
	struct aim_lock mutex;      /* mutex role */
	uint8_t buf[AIM_PIPE_SIZE];
	uint64_t head, tail;        /* bytes written / read so far */
	uint8_t wseq, rseq;         /* the byte pattern writer and reader follow */
	bool reader_waits, writer_waits;
	_Atomic uint32_t rd_event, wr_event; /* futex words */
	uint64_t errors;
};

#define AIM_SIGQ 64
struct aim_sighand {
	struct aim_lock siglock;
	uint8_t q[AIM_SIGQ];
	uint32_t qhead, qtail;
	uint64_t pending;           /* bitmask */
	uint64_t sent, delivered;
	uint64_t errors;
};

#define AIM_FILE_PAGES 64
struct aim_fdata {                  /* a file's page cache */
	struct aim_lock i_mutex;    /* mutex role */
	struct aim_lock tree_lock;  /* spin role */
	uint32_t page[AIM_FILE_PAGES];
	uint8_t dirty[AIM_FILE_PAGES];
	uint32_t cached, ndirty;
	uint32_t tag;
	uint64_t errors;
};

struct aim_shm {
	struct aim_lock sem;        /* mutex role: the SysV semaphore */
	uint8_t buf[4096];
	uint32_t size;
	uint8_t fill;
	uint64_t errors;
};

struct aim_tasklist {
	struct aim_lock lock;       /* rw role */
	struct aim_pool pids;
	uint32_t *next, *prev;      /* circular, sentinel = pids.n */
	uint32_t nr;
	uint64_t errors;
};

#define AIM_PORTS 1024
struct aim_ports {
	struct aim_lock lock;       /* spin role */
	uint32_t owner[AIM_PORTS];  /* 0 free, else tag */
	uint32_t bound;
	uint64_t errors;
};

struct aim_kernel {
	const struct lb_lock_ops *ops[AIM_NROLES];
	unsigned int users;
	struct aim_dir dir;
	struct aim_dcache dcache;
	struct aim_itable itable;
	struct aim_orphans orphans;
	struct aim_pool files;      /* guarded by files_lock */
	struct aim_lock files_lock;
	uint64_t files_errors;
	struct aim_pool pages;      /* guarded by zone_lock */
	struct aim_lock zone_lock;
	struct aim_lock lru_lock;
	uint64_t lru_pages, lru_errors;
	struct aim_tasklist tasks;
	struct aim_ports ports;
	struct aim_shm shm;
	/* per child (index = child): */
	struct aim_mm *mm;          /* 2 per child: its own, and a fork's */
	struct aim_pipe *pipe;      /* 2 per child: private, and the shell pipe */
	struct aim_sighand *sig;
	struct aim_fdata *fdata;    /* 2 per child */
	struct aim_lock **locks;    /* every lock, for counters/checks/free */
	size_t nlocks, cap_locks;
	_Atomic int *stop;          /* set by the watchdog / on error */
	const struct aim_sizing *sizing; /* NULL or off: no padding */
};

/* Build the kernel for `users` children (0 or an errno value). */
int aim_kernel_init(struct aim_kernel *k, const struct lb_lock_ops *const *ops,
		    unsigned int users, _Atomic int *stop);
void aim_kernel_destroy(struct aim_kernel *k);
/* Check every invariant; print each violation to err (prefixed); returns the
 * number of violations.  Only with no child running. */
unsigned long aim_kernel_check(struct aim_kernel *k, FILE *err);
/* Counters of the role's locks, summed by name. */
/* The counters of the locks of one class, summed (as aim_kernel_counters). */
size_t aim_kernel_class_counters(const struct aim_kernel *k, int cls, struct lb_counter *out,
				 size_t max);
size_t aim_kernel_counters(const struct aim_kernel *k, int role, struct lb_counter *out,
			   size_t max);

/* ---- system calls (kern_core/fs/mm/task/ipc.c) ---- */
uint32_t aim_pool_get(struct aim_pool *p, uint32_t tag);
void aim_pool_put(struct aim_pool *p, uint32_t idx, uint32_t tag);
/* The same under l (a pool with a lock of its own: pages, the file
 * table); put of AIM_NONE does nothing, without taking l. */
uint32_t aim_pool_get_locked(struct aim_ctx *c, struct aim_lock *l, struct aim_pool *p,
			     uint32_t tag);
void aim_pool_put_locked(struct aim_ctx *c, struct aim_lock *l, struct aim_pool *p,
			 uint32_t idx, uint32_t tag);

/* Directory: 0 / -1 (ENOENT, EEXIST...). creat truncates an existing file. */
int aim_sys_creat(struct aim_ctx *c, const char *name, uint32_t tag);
int aim_sys_link(struct aim_ctx *c, const char *old, const char *new_name);
int aim_sys_unlink(struct aim_ctx *c, const char *name);
uint32_t aim_sys_readdir(struct aim_ctx *c);
bool aim_sys_lookup(struct aim_ctx *c, const char *name);
/* File table: a struct file per open. */
uint32_t aim_sys_open_file(struct aim_ctx *c, uint32_t tag);
void aim_sys_close_file(struct aim_ctx *c, uint32_t f, uint32_t tag);
/* Pages. */
uint32_t aim_page_alloc(struct aim_ctx *c, uint32_t tag);
void aim_page_free(struct aim_ctx *c, uint32_t page, uint32_t tag);
/* mm. */
void aim_mm_exec(struct aim_ctx *c, struct aim_mm *mm);     /* fresh image */
int aim_mm_brk(struct aim_ctx *c, struct aim_mm *mm, int delta_pages);
void aim_mm_fault(struct aim_ctx *c, struct aim_mm *mm, uint32_t addr_page);
void aim_mm_exit(struct aim_ctx *c, struct aim_mm *mm);
void aim_mm_dup(struct aim_ctx *c, struct aim_mm *parent, struct aim_mm *child);
void aim_mm_inspect(struct aim_ctx *c, struct aim_mm *mm);  /* ps: read and check */
/* Tasks. */
uint32_t aim_task_fork(struct aim_ctx *c, uint32_t tag);
void aim_task_exit(struct aim_ctx *c, uint32_t pid, uint32_t tag);
uint32_t aim_task_walk(struct aim_ctx *c);                 /* ps / wait */
/* Pipes: write/read n bytes; blocking waits on futexes when full/empty.
 * Return bytes moved (less when the run is stopping). */
size_t aim_pipe_write(struct aim_ctx *c, struct aim_pipe *p, size_t n);
size_t aim_pipe_read(struct aim_ctx *c, struct aim_pipe *p, size_t n);
/* Signals to a sighand. */
void aim_sig_send(struct aim_ctx *c, struct aim_sighand *s, uint8_t signo);
int aim_sig_deliver(struct aim_ctx *c, struct aim_sighand *s);
/* SysV shm guarded by one semaphore. */
void aim_shm_write(struct aim_ctx *c, const uint8_t *src, uint32_t size);
void aim_shm_read(struct aim_ctx *c, uint8_t *dst);
/* Sockets: a port for the connection. */
uint32_t aim_port_bind(struct aim_ctx *c, uint32_t tag);
void aim_port_release(struct aim_ctx *c, uint32_t port, uint32_t tag);
/* Page cache of a file. */
void aim_file_write(struct aim_ctx *c, struct aim_fdata *f, uint32_t pgoff, uint32_t npages,
		    uint8_t *scratch);
void aim_file_read(struct aim_ctx *c, struct aim_fdata *f, uint32_t pgoff, uint32_t npages,
		   uint8_t *scratch);
void aim_file_sync(struct aim_ctx *c, struct aim_fdata *f);
void aim_file_truncate(struct aim_ctx *c, struct aim_fdata *f);

/* Has the run been told to stop (watchdog, error)? */
bool aim_stopping(const struct aim_kernel *k);

#endif /* LB_AIM7_KERN_H */
