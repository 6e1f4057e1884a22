/* SPDX-License-Identifier: MIT */
/*
 * tests_sys.c - re-aim's system tests, each doing on the simulated kernel
 * what the original does with real system calls (doc/aim7.md has the
 * side-by-side).  Loop counts follow the originals' arguments.
 */
#include "task.h"

#include <stdio.h>
#include <string.h>

/* re-aim's transfer sizes for the IPC tests (pipe_test.c), a fact. */
static const uint16_t ipc_sizes[] = { 1,  3,  5,   7,   16,  32,  64,  512,  1024, 2048, 4096,
				      1,  3,  5,   7,   16,  32,  64,  512,  1024, 2048, 4096,
				      32, 32, 32,  32,  32,  32,  512, 512,  512,  512,  512,
				      2048, 2048, 2048, 2048 };
#define NSIZES (sizeof(ipc_sizes) / sizeof(ipc_sizes[0]))

static void tmpname(struct aim_task *t, char *buf, size_t len, const char *what, unsigned int i)
{
	snprintf(buf, len, "%s%u.%u.%u", what, t->index, t->seq, i);
}

static struct aim_pipe *private_pipe(struct aim_task *t)
{
	return &t->k->pipe[t->index];
}

/* creat_clo: creat() and close() one file 1000 times, then unlink it. */
static uint64_t t_creat_clo(struct aim_task *t)
{
	char name[24];
	tmpname(t, name, sizeof(name), "cc", 0);
	t->seq++;
	for (int n = 0; n < 1000 && !aim_job_ending(t); n++) {
		aim_sys_creat(&t->ctx, name, t->tag);
		uint32_t f = aim_sys_open_file(&t->ctx, t->tag);
		aim_sys_close_file(&t->ctx, f, t->tag);
	}
	return (uint64_t)aim_sys_unlink(&t->ctx, name);
}

/* link_test: a file and 7 links; 9 rounds of unlink+relink of each link. */
static uint64_t t_link_test(struct aim_task *t)
{
	char names[8][24];
	for (unsigned int i = 0; i < 8; i++)
		tmpname(t, names[i], sizeof(names[i]), "ln", i);
	t->seq++;
	uint64_t r = 0;
	aim_sys_creat(&t->ctx, names[0], t->tag);
	uint32_t f = aim_sys_open_file(&t->ctx, t->tag);
	for (int i = 1; i < 8; i++)
		r += (uint64_t)aim_sys_link(&t->ctx, names[0], names[i]);
	for (int n = 0; n < 9; n++)
		for (int i = 1; i < 8; i++) {
			r += (uint64_t)aim_sys_unlink(&t->ctx, names[i]);
			r += (uint64_t)aim_sys_link(&t->ctx, names[0], names[i]);
		}
	for (int i = 0; i < 8; i++)
		r += (uint64_t)aim_sys_unlink(&t->ctx, names[i]);
	aim_sys_close_file(&t->ctx, f, t->tag);
	return r;
}

static struct aim_mm *own_mm(struct aim_task *t)
{
	return &t->k->mm[t->index];
}

/* brk_test: sbrk(1 MiB), then 1000 x (give back 16 pages, take them back
 * one brk at a time), then the old break. */
static uint64_t t_brk_test(struct aim_task *t)
{
	struct aim_mm *mm = own_mm(t);
	uint64_t r = (uint64_t)aim_mm_brk(&t->ctx, mm, 256);
	for (int n = 0; n < 1000 && !aim_job_ending(t); n++) {
		r += (uint64_t)aim_mm_brk(&t->ctx, mm, -16);
		for (int i = 0; i < 16; i++)
			r += (uint64_t)aim_mm_brk(&t->ctx, mm, 1);
	}
	r += (uint64_t)aim_mm_brk(&t->ctx, mm, -256);
	return r;
}

/* page_test: as brk_test, 100 rounds, and each new page is dirtied (a
 * fault: read side of the mmap lock, a page from the zone). */
static uint64_t t_page_test(struct aim_task *t)
{
	struct aim_mm *mm = own_mm(t);
	uint64_t r = (uint64_t)aim_mm_brk(&t->ctx, mm, 256);
	uint32_t heap_end = mm->vma[2].end; /* our own mm: read without the lock */
	for (int n = 0; n < 100 && !aim_job_ending(t); n++) {
		r += (uint64_t)aim_mm_brk(&t->ctx, mm, -16);
		for (uint32_t i = 0; i < 16; i++) {
			r += (uint64_t)aim_mm_brk(&t->ctx, mm, 1);
			aim_mm_fault(&t->ctx, mm, heap_end - 16 + i);
		}
	}
	r += (uint64_t)aim_mm_brk(&t->ctx, mm, -256);
	return r;
}

/* signal_test: kill(getpid(), SIGUSR2) and take it, 1000 times. */
static uint64_t t_signal_test(struct aim_task *t)
{
	struct aim_sighand *s = &t->k->sig[t->index];
	uint64_t got = 0;
	for (int n = 0; n < 1000; n++) {
		aim_kwork(&t->ctx, AIM_K_SIGNAL);
		aim_sig_send(&t->ctx, s, 12);
		got += aim_sig_deliver(&t->ctx, s) == 12;
	}
	return got;
}

/* One fork + (exec) + exit + wait of a child process. */
static void fork_one(struct aim_task *t, bool exec)
{
	struct aim_mm *child = &t->k->mm[t->k->users + t->index];
	aim_kwork(&t->ctx, exec ? AIM_K_FORK_EXEC : AIM_K_FORK_EXIT);
	uint32_t pid = aim_task_fork(&t->ctx, t->tag);
	aim_mm_dup(&t->ctx, own_mm(t), child);
	uint32_t f = aim_sys_open_file(&t->ctx, t->tag); /* inherited descriptors */
	if (exec) {
		uint32_t bin = aim_sys_open_file(&t->ctx, t->tag);
		aim_mm_exec(&t->ctx, child);
		aim_sys_close_file(&t->ctx, bin, t->tag);
	}
	aim_sys_close_file(&t->ctx, f, t->tag);
	aim_mm_exit(&t->ctx, child);
	aim_task_exit(&t->ctx, pid, t->tag);
	aim_sig_send(&t->ctx, &t->k->sig[t->index], 17); /* SIGCHLD */
	aim_sig_deliver(&t->ctx, &t->k->sig[t->index]);
}

static uint64_t t_fork_test(struct aim_task *t)
{
	for (int n = 0; n < 100 && !aim_job_ending(t); n++)
		fork_one(t, false);
	return 1;
}

static uint64_t t_exec_test(struct aim_task *t)
{
	for (int n = 0; n < 5; n++)
		fork_one(t, true);
	return 1;
}

/* dir_rtns_1: directory reads and name lookups in the shared directory. */
static uint64_t t_dir_rtns_1(struct aim_task *t)
{
	uint64_t r = 0;
	char name[24];
	for (int n = 0; n < 5; n++)
		r += aim_sys_readdir(&t->ctx);
	for (unsigned int n = 0; n < 20; n++) {
		tmpname(t, name, sizeof(name), "ln", n % 8);
		r += aim_sys_lookup(&t->ctx, name);
	}
	return r;
}

/* misc_rtns_1: getpid(), getuid(), umask()...: calls that take no lock. */
static uint64_t t_misc_rtns_1(struct aim_task *t)
{
	volatile uint32_t v = 0;
	aim_kwork_n(&t->ctx, AIM_K_GETPID, 1000);
	for (int n = 0; n < 1000; n++)
		v += t->pid + t->index + (uint32_t)n;
	return v;
}

/* shared_memory: 100 x (semop -1, copy in, semop +1; the same to copy out)
 * on ONE segment and semaphore for every child (re-aim's fixed keys). */
static uint64_t t_shared_memory(struct aim_task *t)
{
	uint64_t r = 0;
	for (unsigned int n = 0; n < 100; n++) {
		uint32_t size = ipc_sizes[(t->seq + n) % NSIZES];
		memset(t->buf, (int)(t->index + n), size);
		aim_kwork(&t->ctx, AIM_K_SHM_COPY); /* semop -1 / +1 around the copy */
		aim_shm_write(&t->ctx, t->buf, size);
		aim_kwork(&t->ctx, AIM_K_SHM_COPY);
		aim_shm_read(&t->ctx, t->buf2);
		r += t->buf2[0];
	}
	t->seq++;
	return r;
}

/* The pipe/socket tests: write then read back each size in one process. */
static uint64_t ipc_loop(struct aim_task *t, unsigned int loops, bool dgram, int kop)
{
	struct aim_pipe *p = private_pipe(t);
	uint64_t r = 0;
	uint32_t fds[2] = { aim_sys_open_file(&t->ctx, t->tag), aim_sys_open_file(&t->ctx, t->tag) };
	for (unsigned int n = 1; n < loops && !aim_job_ending(t); n++) {
		size_t size = ipc_sizes[(t->seq + n) % NSIZES];
		aim_kwork(&t->ctx, kop); /* the real round trip's copies and wake-ups */
		if (dgram) { /* a datagram keeps its boundary: a 2-byte header */
			r += aim_pipe_write(&t->ctx, p, 2);
			r += aim_pipe_read(&t->ctx, p, 2);
		}
		r += aim_pipe_write(&t->ctx, p, size);
		r += aim_pipe_read(&t->ctx, p, size);
	}
	aim_sys_close_file(&t->ctx, fds[0], t->tag);
	aim_sys_close_file(&t->ctx, fds[1], t->tag);
	t->seq++;
	return r;
}

static uint64_t t_pipe_cpy(struct aim_task *t)
{
	return ipc_loop(t, 100, false, AIM_K_PIPE_RT);
}

static uint64_t t_stream_pipe(struct aim_task *t)
{
	return ipc_loop(t, 100, false, AIM_K_STREAM_RT);
}

static uint64_t t_dgram_pipe(struct aim_task *t)
{
	return ipc_loop(t, 100, true, AIM_K_DGRAM_RT);
}

static uint64_t t_fifo_test(struct aim_task *t)
{
	char name[24];
	tmpname(t, name, sizeof(name), "ff", 0);
	aim_sys_creat(&t->ctx, name, t->tag); /* mkfifo */
	uint64_t r = ipc_loop(t, 100, false, AIM_K_PIPE_RT);
	aim_sys_unlink(&t->ctx, name);
	return r;
}

/* tcp/udp: bind a port in the shared port table, talk over loopback. */
static uint64_t loopback_test(struct aim_task *t, int setup_kop, unsigned int loops, bool dgram,
			      int rt_kop)
{
	aim_kwork(&t->ctx, setup_kop);
	uint32_t port = aim_port_bind(&t->ctx, t->tag);
	uint64_t r = ipc_loop(t, loops, dgram, rt_kop);
	aim_port_release(&t->ctx, port, t->tag);
	return r;
}

static uint64_t t_tcp_test(struct aim_task *t)
{
	return loopback_test(t, AIM_K_TCP_SETUP, 90, false, AIM_K_TCP_RT);
}

static uint64_t t_udp_test(struct aim_task *t)
{
	return loopback_test(t, AIM_K_UDP_SETUP, 100, true, AIM_K_UDP_RT);
}

/* ps: walk the task list and read a few other processes' mms. */
static uint64_t ps(struct aim_task *t)
{
	uint64_t r = aim_task_walk(&t->ctx);
	for (unsigned int i = 0; i < 4; i++)
		aim_mm_inspect(&t->ctx, &t->k->mm[aim_rand(t) % t->k->users]);
	return r;
}

/*
 * The shell scripts (aim_1.sh...): a shell forks and execs a handful of
 * commands, some in pipelines (`cmd | cmd`: the helper is the reader, both
 * sides block on the pipe and wake each other), creates and removes
 * temporary files in the shared directory, lists it, runs ps.
 */
static uint64_t shell(struct aim_task *t, unsigned int cmds, unsigned int pipelines,
		      unsigned int files)
{
	uint64_t r = 0;
	char name[24];
	for (unsigned int i = 0; i < cmds && !aim_job_ending(t); i++)
		fork_one(t, true);
	for (unsigned int i = 0; i < pipelines && !aim_job_ending(t); i++) {
		aim_kwork(&t->ctx, AIM_K_PIPELINE);
		aim_shell_pipeline(t, 3 * AIM_PIPE_SIZE);
	}
	for (unsigned int i = 0; i < files; i++) {
		tmpname(t, name, sizeof(name), "sh", i);
		aim_sys_creat(&t->ctx, name, t->tag);
	}
	r += aim_sys_readdir(&t->ctx);
	r += ps(t);
	for (unsigned int i = 0; i < files; i++) {
		tmpname(t, name, sizeof(name), "sh", i);
		aim_sys_unlink(&t->ctx, name);
	}
	t->seq++;
	return r;
}

static uint64_t t_shell_rtns_1(struct aim_task *t)
{
	return shell(t, 9, 3, 4);
}

static uint64_t t_shell_rtns_2(struct aim_task *t)
{
	return shell(t, 6, 2, 8);
}

static uint64_t t_shell_rtns_3(struct aim_task *t)
{
	return shell(t, 12, 4, 2);
}

/*
 * The disk tests on the page cache of the child's two files (FILESIZE is
 * AIM_FILE_PAGES pages).  No I/O: the cost modelled is the kernel's, the
 * locks on the path from write(2)/read(2) to the page.
 */
static struct aim_fdata *file_of(struct aim_task *t, int which)
{
	return &t->k->fdata[2 * t->index % (2 * t->k->users) + (unsigned int)which];
}

static uint64_t disk(struct aim_task *t, char kind, bool sync)
{
	struct aim_fdata *a = file_of(t, 0), *b = file_of(t, 1);
	uint32_t f = aim_sys_open_file(&t->ctx, t->tag);
	switch (kind) {
	case 'w': /* sequential write */
		aim_file_truncate(&t->ctx, a);
		for (uint32_t p = 0; p < AIM_FILE_PAGES; p += 8) {
			aim_file_write(&t->ctx, a, p, 8, t->buf);
			if (sync)
				aim_file_sync(&t->ctx, a);
		}
		break;
	case 'r': /* sequential read */
		if (!a->cached)
			aim_file_write(&t->ctx, a, 0, AIM_FILE_PAGES, t->buf);
		aim_file_read(&t->ctx, a, 0, AIM_FILE_PAGES, t->buf);
		break;
	case 'R': /* random reads */
		for (int n = 0; n < 64; n++)
			aim_file_read(&t->ctx, a, (uint32_t)(aim_rand(t) % AIM_FILE_PAGES), 1, t->buf);
		break;
	case 'W': /* random writes */
		for (int n = 0; n < 64; n++) {
			aim_file_write(&t->ctx, a, (uint32_t)(aim_rand(t) % AIM_FILE_PAGES), 1, t->buf);
			if (sync)
				aim_file_sync(&t->ctx, a);
		}
		break;
	case 'c': /* copy a to b */
		aim_file_truncate(&t->ctx, b);
		for (uint32_t p = 0; p < AIM_FILE_PAGES; p += 8) {
			aim_file_read(&t->ctx, a, p, 8, t->buf);
			aim_file_write(&t->ctx, b, p, 8, t->buf);
			if (sync)
				aim_file_sync(&t->ctx, b);
		}
		break;
	case 'u': /* update in place, synced */
		for (int n = 0; n < 32; n++) {
			uint32_t p = (uint32_t)(aim_rand(t) % AIM_FILE_PAGES);
			aim_file_read(&t->ctx, a, p, 1, t->buf);
			aim_file_write(&t->ctx, a, p, 1, t->buf);
			aim_file_sync(&t->ctx, a);
		}
		break;
	}
	aim_sys_close_file(&t->ctx, f, t->tag);
	return a->cached;
}

static uint64_t t_disk_rd(struct aim_task *t) { return disk(t, 'r', false); }
static uint64_t t_disk_wrt(struct aim_task *t) { return disk(t, 'w', false); }
static uint64_t t_disk_rr(struct aim_task *t) { return disk(t, 'R', false); }
static uint64_t t_disk_rw(struct aim_task *t) { return disk(t, 'W', false); }
static uint64_t t_disk_cp(struct aim_task *t) { return disk(t, 'c', false); }
static uint64_t t_sync_disk_rw(struct aim_task *t) { return disk(t, 'W', true); }
static uint64_t t_sync_disk_wrt(struct aim_task *t) { return disk(t, 'w', true); }
static uint64_t t_sync_disk_cp(struct aim_task *t) { return disk(t, 'c', true); }
static uint64_t t_sync_disk_update(struct aim_task *t) { return disk(t, 'u', true); }

/* disk_src: directory searches: list the directory, look names up. */
static uint64_t t_disk_src(struct aim_task *t)
{
	uint64_t r = aim_sys_readdir(&t->ctx);
	char name[24];
	for (unsigned int n = 0; n < 50; n++) {
		snprintf(name, sizeof(name), "cc%u.%u.0", (unsigned int)(aim_rand(t) % t->k->users),
			 n);
		r += aim_sys_lookup(&t->ctx, name);
	}
	return r;
}

#define SYS(n, what) { #n, t_##n, true, what }
const struct aim_test aim_sys_tests[] = {
	SYS(creat_clo, "creat+close one name 1000x in the shared directory, unlink"),
	SYS(link_test, "a file + 7 links, 9 rounds of unlink/relink, in the shared directory"),
	SYS(page_test, "sbrk 1 MiB; 100 x (shrink 16 pages, regrow page by page, fault each)"),
	SYS(brk_test, "sbrk 1 MiB; 1000 x (shrink 16 pages, regrow page by page)"),
	SYS(signal_test, "1000 x send self a signal and take it (siglock)"),
	SYS(exec_test, "5 x fork + exec + exit + wait (task list, mm, pages, files)"),
	SYS(fork_test, "100 x fork + exit + wait"),
	SYS(dir_rtns_1, "5 readdirs of the shared directory and 20 lookups"),
	SYS(misc_rtns_1, "getpid-like calls that take no lock"),
	SYS(shared_memory, "100 x write+read one shared segment under one semaphore"),
	SYS(pipe_cpy, "99 x write then read back a pipe, re-aim's sizes"),
	SYS(stream_pipe, "as pipe_cpy on a stream socket pair"),
	SYS(dgram_pipe, "as pipe_cpy with datagram boundaries"),
	SYS(fifo_test, "as pipe_cpy through a named fifo in the shared directory"),
	SYS(tcp_test, "bind a port; 89 loopback transfers"),
	SYS(udp_test, "bind a port; 99 loopback datagrams"),
	SYS(shell_rtns_1, "shell: 9 fork+exec, 3 pipelines to the helper, 4 temp files, ls, ps"),
	SYS(shell_rtns_2, "shell: 6 fork+exec, 2 pipelines, 8 temp files, ls, ps"),
	SYS(shell_rtns_3, "shell: 12 fork+exec, 4 pipelines, 2 temp files, ls, ps"),
	SYS(disk_rd, "sequential read of the child's file through the page cache"),
	SYS(disk_wrt, "truncate + sequential write (i_mutex, tree_lock, zone, LRU)"),
	SYS(disk_rr, "64 random page reads"),
	SYS(disk_rw, "64 random page writes"),
	SYS(disk_cp, "copy file A to file B"),
	SYS(disk_src, "directory search: readdir + 50 lookups"),
	{ "disk_brd", t_disk_rd, true, "disk_rd through the buffer cache (same path here)" },
	{ "disk_bwrt", t_disk_wrt, true, "disk_wrt through the buffer cache" },
	{ "disk_brr", t_disk_rr, true, "disk_rr through the buffer cache" },
	{ "disk_brw", t_disk_rw, true, "disk_rw through the buffer cache" },
	{ "disk_bcp", t_disk_cp, true, "disk_cp through the buffer cache" },
	SYS(sync_disk_rw, "disk_rw with an fsync after every write"),
	SYS(sync_disk_wrt, "disk_wrt with an fsync after every 8 pages"),
	SYS(sync_disk_cp, "disk_cp with an fsync after every 8 pages"),
	SYS(sync_disk_update, "32 x read, rewrite and fsync one page"),
};
const size_t aim_nsys_tests = sizeof(aim_sys_tests) / sizeof(aim_sys_tests[0]);
