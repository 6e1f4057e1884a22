/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - aim_costs_measure(): time, on the running kernel, the real
 * system calls behind re-aim's system tests (costs.h lists them), in a
 * temporary directory of dir_entries files, each op for a slice of the
 * budget, the least disturbed batch kept (the machine may be loaded).
 * Everything it creates (files, SysV objects, children, sockets) is
 * removed before it returns; the signal handler it sets is restored.
 */

#include "costs.h"
#include "lb_hostinfo.h"
#include "lb_textfile.h"
#include "lb_outfile.h"
#include "lb_time.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAL_DIR_ENTRIES 256u
#define CAL_PAGE 4096

/* re-aim's IPC transfer sizes (as tests_sys.c). */
static const uint16_t cal_sizes[] = { 1, 3, 5, 7, 16, 32, 64, 512, 1024, 2048, 4096, 32, 512,
				      2048 };
#define CAL_NSIZES (sizeof(cal_sizes) / sizeof(cal_sizes[0]))

struct cal {
	char dir[4096];
	char *err;
	size_t errlen;
	int fail;                 /* errno of the first failure */
	unsigned int names;       /* counter for fresh names */
	int pfd[2], sfd[2], dfd[2], tcp_c, tcp_s, udp_a, udp_b;
	struct sockaddr_in udp_b_addr;
	int semid, shmid;
	uint8_t *shm;
	int file_fd;
	pid_t reader;             /* the pipeline's other process */
	int pipe_to[2], ack[2];
	uint8_t buf[24 * 1024];
	bool cpu_clock;           /* cal_now: CPU time instead of wall */
};

static volatile sig_atomic_t cal_signals;

static void cal_on_usr2(int sig)
{
	(void)sig;
	cal_signals = cal_signals + 1;
}

static int cal_fail(struct cal *s, const char *what)
{
	if (!s->fail) {
		s->fail = errno ? errno : EIO;
		snprintf(s->err, s->errlen, "%s: %s", what, strerror(s->fail));
	}
	return -1;
}

static void path_of(const struct cal *s, char *buf, size_t len, const char *kind, unsigned int i)
{
	snprintf(buf, len, "%s/%s%u", s->dir, kind, i);
}

/* Move exactly n bytes (a short transfer is a failure). */
static int xfer(struct cal *s, int wfd, int rfd, size_t n)
{
	if (write(wfd, s->buf, n) != (ssize_t)n)
		return cal_fail(s, "write");
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(rfd, s->buf + got, n - got);
		if (r <= 0)
			return cal_fail(s, "read");
		got += (size_t)r;
	}
	return 0;
}

/* CPU ns of this thread and of the children it has reaped (a fork's child
 * runs on another CPU clock; the pipeline's reader, never reaped while the
 * ops run, is not counted: its share is wall time only). */
static uint64_t cpu_now(void)
{
	struct timespec ts;
	struct rusage ru;
	uint64_t ns = 0;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		ns += ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
		      ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
	return ns;
}

/* The clock the ops time their region with: wall, or CPU on the second pass. */
static uint64_t cal_now(const struct cal *s)
{
	return s->cpu_clock ? cpu_now() : lb_now_ns();
}

/* ---- the ops: each runs n of its op and returns the ns they took ---- */

static uint64_t op_getpid(struct cal *s, unsigned int n)
{
	(void)s;
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++)
		(void)syscall(SYS_getpid);
	return cal_now(s) - t0;
}

static uint64_t op_stat(struct cal *s, unsigned int n)
{
	char p[4200];
	struct stat st;
	uint64_t el = 0;
	for (unsigned int i = 0; i < n; i++) {
		path_of(s, p, sizeof(p), "f", i % CAL_DIR_ENTRIES);
		uint64_t t0 = cal_now(s);
		int rc = stat(p, &st);
		el += cal_now(s) - t0;
		if (rc)
			cal_fail(s, "stat");
	}
	return el;
}

static uint64_t op_open_close(struct cal *s, unsigned int n)
{
	char p[4200];
	path_of(s, p, sizeof(p), "f", 0);
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			cal_fail(s, "open");
		else
			close(fd);
	}
	return cal_now(s) - t0;
}

static uint64_t op_creat_existing(struct cal *s, unsigned int n)
{
	char p[4200];
	path_of(s, p, sizeof(p), "f", 1);
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		int fd = creat(p, 0600);
		if (fd < 0)
			cal_fail(s, "creat");
		else
			close(fd);
	}
	return cal_now(s) - t0;
}

/*
 * The off-CPU part of a truncating creat: n calls, each timed on both
 * clocks, with this thread's voluntary context switches around it (a call
 * that switched voluntarily slept: on ext4 a journal wait in the orphan
 * updates of the truncate, v3.14 fs/ext4/namei.c ext4_orphan_add/del).
 */
static void creat_sleeps(struct cal *s, unsigned int n, double *frac, double *offcpu_ns)
{
	char p[4200];
	path_of(s, p, sizeof(p), "f", 2);
	unsigned int slept = 0;
	double off = 0;
	for (unsigned int i = 0; i < n && !s->fail; i++) {
		struct rusage r0, r1;
		getrusage(RUSAGE_THREAD, &r0);
		uint64_t w0 = lb_now_ns(), c0 = cpu_now();
		int fd = creat(p, 0600);
		uint64_t c1 = cpu_now(), w1 = lb_now_ns();
		getrusage(RUSAGE_THREAD, &r1);
		if (fd < 0) {
			cal_fail(s, "creat");
			break;
		}
		close(fd);
		if (r1.ru_nvcsw > r0.ru_nvcsw) {
			slept++;
			off += (double)(w1 - w0) - (double)(c1 - c0);
		}
	}
	*frac = n ? (double)slept / n : 0;
	*offcpu_ns = slept ? off / slept : 0;
	if (*offcpu_ns < 0)
		*offcpu_ns = 0;
}

/* creat n new names (timed), then unlink them (timed into *unlink_ns). */
static uint64_t creat_unlink(struct cal *s, unsigned int n, uint64_t *unlink_ns)
{
	char p[4200];
	unsigned int base = s->names;
	s->names += n;
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		path_of(s, p, sizeof(p), "n", base + i);
		int fd = creat(p, 0600);
		if (fd < 0)
			cal_fail(s, "creat");
		else
			close(fd);
	}
	uint64_t t1 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		path_of(s, p, sizeof(p), "n", base + i);
		if (unlink(p))
			cal_fail(s, "unlink");
	}
	*unlink_ns = cal_now(s) - t1;
	return t1 - t0;
}

static uint64_t op_creat_new(struct cal *s, unsigned int n)
{
	uint64_t u;
	return creat_unlink(s, n, &u);
}

static uint64_t op_unlink(struct cal *s, unsigned int n)
{
	uint64_t u;
	creat_unlink(s, n, &u);
	return u;
}

static uint64_t op_link(struct cal *s, unsigned int n)
{
	char old[4200], p[4200];
	path_of(s, old, sizeof(old), "f", 2);
	unsigned int base = s->names;
	s->names += n;
	uint64_t el = 0;
	for (unsigned int i = 0; i < n; i++) {
		path_of(s, p, sizeof(p), "l", base + i);
		uint64_t t0 = cal_now(s);
		int rc = link(old, p);
		el += cal_now(s) - t0;
		if (rc)
			cal_fail(s, "link");
	}
	for (unsigned int i = 0; i < n; i++) {
		path_of(s, p, sizeof(p), "l", base + i);
		unlink(p);
	}
	return el;
}

static uint64_t op_readdir(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		DIR *d = opendir(s->dir);
		if (!d) {
			cal_fail(s, "opendir");
			continue;
		}
		while (readdir(d))
			;
		closedir(d);
	}
	return cal_now(s) - t0;
}

static uint64_t op_brk(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++)
		if (sbrk(i % 2 ? -CAL_PAGE : CAL_PAGE) == (void *)-1)
			cal_fail(s, "sbrk");
	if (n % 2)
		sbrk(-CAL_PAGE);
	return cal_now(s) - t0;
}

/* n first touches: 16 pages at a time added by sbrk, touched, given back. */
static uint64_t op_fault(struct cal *s, unsigned int n)
{
	uint64_t el = 0;
	for (unsigned int done = 0; done < n; done += 16) {
		char *p = sbrk(16 * CAL_PAGE);
		if (p == (void *)-1) {
			cal_fail(s, "sbrk");
			break;
		}
		uint64_t t0 = cal_now(s);
		for (int i = 0; i < 16; i++)
			((volatile char *)p)[i * CAL_PAGE] = 1;
		el += cal_now(s) - t0;
		sbrk(-16 * CAL_PAGE);
	}
	return el * n / ((n + 15) / 16 * 16);
}

static uint64_t fork_wait(struct cal *s, unsigned int n, bool exec)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			if (exec) {
				char *argv[] = { (char *)"true", NULL };
				char *envp[] = { NULL };
				execve("/bin/true", argv, envp);
			}
			_exit(exec ? 127 : 0);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			errno = pid < 0 ? errno : ENOEXEC;
			cal_fail(s, exec ? "fork+exec /bin/true" : "fork");
			break;
		}
	}
	return cal_now(s) - t0;
}

static uint64_t op_fork_exit(struct cal *s, unsigned int n)
{
	return fork_wait(s, n, false);
}

static uint64_t op_fork_exec(struct cal *s, unsigned int n)
{
	return fork_wait(s, n, true);
}

static uint64_t op_signal(struct cal *s, unsigned int n)
{
	sig_atomic_t before = cal_signals;
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++)
		kill(getpid(), SIGUSR2);
	uint64_t el = cal_now(s) - t0;
	if ((unsigned int)(cal_signals - before) != n) {
		errno = EINTR;
		cal_fail(s, "kill(self, SIGUSR2): signals lost");
	}
	return el;
}

static uint64_t op_shm_copy(struct cal *s, unsigned int n)
{
	struct sembuf down = { 0, -1, 0 }, up = { 0, 1, 0 };
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		size_t size = cal_sizes[i % CAL_NSIZES];
		if (semop(s->semid, &down, 1))
			cal_fail(s, "semop");
		if (i % 2)
			memcpy(s->buf, s->shm, size);
		else
			memcpy(s->shm, s->buf, size);
		semop(s->semid, &up, 1);
	}
	return cal_now(s) - t0;
}

static uint64_t rt(struct cal *s, unsigned int n, int wfd, int rfd)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n && !s->fail; i++)
		xfer(s, wfd, rfd, cal_sizes[i % CAL_NSIZES]);
	return cal_now(s) - t0;
}

static uint64_t op_pipe_rt(struct cal *s, unsigned int n)
{
	return rt(s, n, s->pfd[1], s->pfd[0]);
}

static uint64_t op_stream_rt(struct cal *s, unsigned int n)
{
	return rt(s, n, s->sfd[0], s->sfd[1]);
}

static uint64_t op_dgram_rt(struct cal *s, unsigned int n)
{
	return rt(s, n, s->dfd[0], s->dfd[1]);
}

static uint64_t op_tcp_rt(struct cal *s, unsigned int n)
{
	return rt(s, n, s->tcp_c, s->tcp_s);
}

static uint64_t op_udp_rt(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		size_t size = cal_sizes[i % CAL_NSIZES];
		if (sendto(s->udp_a, s->buf, size, 0, (struct sockaddr *)&s->udp_b_addr,
			   sizeof(s->udp_b_addr)) != (ssize_t)size ||
		    recv(s->udp_b, s->buf, sizeof(s->buf), 0) != (ssize_t)size) {
			cal_fail(s, "udp send/recv");
			break;
		}
	}
	return cal_now(s) - t0;
}

static int loopback_socket(int type, struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(*addr);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) ||
			getsockname(fd, (struct sockaddr *)addr, &len))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A connected loopback TCP pair: *c the client, *srv the accepted end. */
static int tcp_pair(struct cal *s, int *c, int *srv)
{
	struct sockaddr_in addr;
	int l = loopback_socket(SOCK_STREAM, &addr);
	*c = *srv = -1;
	if (l < 0 || listen(l, 1))
		goto fail;
	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0 || connect(*c, (struct sockaddr *)&addr, sizeof(addr)))
		goto fail;
	*srv = accept(l, NULL, NULL);
	if (*srv < 0)
		goto fail;
	close(l);
	return 0;
fail:
	cal_fail(s, "loopback TCP");
	if (l >= 0)
		close(l);
	if (*c >= 0)
		close(*c);
	*c = -1;
	return -1;
}

static uint64_t op_tcp_setup(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n && !s->fail; i++) {
		int c, srv;
		if (tcp_pair(s, &c, &srv) == 0) {
			close(c);
			close(srv);
		}
	}
	return cal_now(s) - t0;
}

static uint64_t op_udp_setup(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		struct sockaddr_in a, b;
		int x = loopback_socket(SOCK_DGRAM, &a), y = loopback_socket(SOCK_DGRAM, &b);
		if (x < 0 || y < 0)
			cal_fail(s, "loopback UDP");
		if (x >= 0)
			close(x);
		if (y >= 0)
			close(y);
	}
	return cal_now(s) - t0;
}

static uint64_t op_pipeline(struct cal *s, unsigned int n)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n && !s->fail; i++) {
		char ack;
		if (write(s->pipe_to[1], s->buf, sizeof(s->buf)) != (ssize_t)sizeof(s->buf) ||
		    read(s->ack[0], &ack, 1) != 1)
			cal_fail(s, "pipeline to a child");
	}
	return cal_now(s) - t0;
}

/* n page reads or writes over the file's first 16 pages (page cache hits). */
static uint64_t file_io(struct cal *s, unsigned int n, bool write_it)
{
	uint64_t t0 = cal_now(s);
	for (unsigned int i = 0; i < n; i++) {
		off_t at = (off_t)(i % 16) * CAL_PAGE;
		ssize_t got = write_it ? pwrite(s->file_fd, s->buf, CAL_PAGE, at)
				       : pread(s->file_fd, s->buf, CAL_PAGE, at);
		if (got != CAL_PAGE)
			cal_fail(s, write_it ? "pwrite" : "pread");
	}
	return cal_now(s) - t0;
}

static uint64_t op_file_read(struct cal *s, unsigned int n)
{
	return file_io(s, n, false);
}

static uint64_t op_file_write(struct cal *s, unsigned int n)
{
	return file_io(s, n, true);
}

/* fsync after each page write; the write is timed apart and left out. */
static uint64_t op_fsync(struct cal *s, unsigned int n)
{
	uint64_t el = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (pwrite(s->file_fd, s->buf, CAL_PAGE, (off_t)(i % 16) * CAL_PAGE) != CAL_PAGE)
			cal_fail(s, "pwrite");
		uint64_t t0 = cal_now(s);
		if (fsync(s->file_fd))
			cal_fail(s, "fsync");
		el += cal_now(s) - t0;
	}
	return el;
}

typedef uint64_t (*cal_op_fn)(struct cal *s, unsigned int n);
static const cal_op_fn cal_ops[AIM_NCOSTS] = {
	[AIM_COST_GETPID] = op_getpid,
	[AIM_COST_STAT] = op_stat,
	[AIM_COST_OPEN_CLOSE] = op_open_close,
	[AIM_COST_CREAT_EXISTING] = op_creat_existing,
	[AIM_COST_CREAT_NEW] = op_creat_new,
	[AIM_COST_UNLINK] = op_unlink,
	[AIM_COST_LINK] = op_link,
	[AIM_COST_READDIR] = op_readdir,
	[AIM_COST_BRK] = op_brk,
	[AIM_COST_FAULT] = op_fault,
	[AIM_COST_FORK_EXIT] = op_fork_exit,
	[AIM_COST_FORK_EXEC] = op_fork_exec,
	[AIM_COST_SIGNAL] = op_signal,
	[AIM_COST_SHM_COPY] = op_shm_copy,
	[AIM_COST_PIPE_RT] = op_pipe_rt,
	[AIM_COST_STREAM_RT] = op_stream_rt,
	[AIM_COST_DGRAM_RT] = op_dgram_rt,
	[AIM_COST_TCP_RT] = op_tcp_rt,
	[AIM_COST_UDP_RT] = op_udp_rt,
	[AIM_COST_TCP_SETUP] = op_tcp_setup,
	[AIM_COST_UDP_SETUP] = op_udp_setup,
	[AIM_COST_PIPELINE] = op_pipeline,
	[AIM_COST_FILE_READ] = op_file_read,
	[AIM_COST_FILE_WRITE] = op_file_write,
	[AIM_COST_FSYNC] = op_fsync,
};

/*
 * ns per op: batches doubling from 1 op until one takes an eighth of the
 * slice, then such batches until the slice is used (at least 3); the
 * cheapest batch per op is kept -- on a loaded machine the others include
 * other processes' time.
 */
static double measure_op(struct cal *s, int op, double slice_s)
{
	uint64_t slice = (uint64_t)(slice_s * 1e9), used = 0;
	unsigned int n = 1;
	double best = 0;
	int batches = 0;
	while (!s->fail) {
		uint64_t t = cal_ops[op](s, n);
		used += t;
		if (t < slice / 8 && n < (1u << 20)) {
			n *= 2;
			continue;
		}
		double per = (double)t / n;
		best = batches == 0 || per < best ? per : best;
		batches++;
		if (batches >= 3 && used >= slice)
			break;
		if (batches >= 12)
			break;
	}
	return best > 0 ? best : 0.1; /* a clock that did not move: the floor */
}

static int setup(struct cal *s, const char *tmpdir)
{
	char p[4200];
	snprintf(s->dir, sizeof(s->dir), "%s/lockbench-aim7-cal.XXXXXX", tmpdir);
	if (!mkdtemp(s->dir)) {
		s->dir[0] = '\0';
		return cal_fail(s, "mkdtemp");
	}
	for (unsigned int i = 0; i < CAL_DIR_ENTRIES; i++) {
		path_of(s, p, sizeof(p), "f", i);
		int fd = creat(p, 0600);
		if (fd < 0)
			return cal_fail(s, "creat");
		close(fd);
	}
	path_of(s, p, sizeof(p), "data", 0);
	s->file_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->file_fd < 0 || ftruncate(s->file_fd, 16 * CAL_PAGE))
		return cal_fail(s, "data file");
	if (pipe2(s->pfd, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->sfd) ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, s->dfd))
		return cal_fail(s, "pipe/socketpair");
	if (tcp_pair(s, &s->tcp_c, &s->tcp_s))
		return -1;
	struct sockaddr_in a;
	s->udp_a = loopback_socket(SOCK_DGRAM, &a);
	s->udp_b = loopback_socket(SOCK_DGRAM, &s->udp_b_addr);
	if (s->udp_a < 0 || s->udp_b < 0)
		return cal_fail(s, "loopback UDP");
	s->semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (s->semid < 0)
		return cal_fail(s, "semget");
	if (semctl(s->semid, 0, SETVAL, 1))
		return cal_fail(s, "semctl");
	s->shmid = shmget(IPC_PRIVATE, CAL_PAGE, IPC_CREAT | 0600);
	if (s->shmid < 0)
		return cal_fail(s, "shmget");
	s->shm = shmat(s->shmid, NULL, 0);
	if (s->shm == (void *)-1) {
		s->shm = NULL;
		return cal_fail(s, "shmat");
	}
	if (pipe2(s->pipe_to, O_CLOEXEC) || pipe2(s->ack, O_CLOEXEC))
		return cal_fail(s, "pipe");
	s->reader = fork();
	if (s->reader < 0)
		return cal_fail(s, "fork");
	if (s->reader == 0) { /* the pipeline's reader: drain 24 KiB, ack, again */
		close(s->pipe_to[1]);
		for (;;) {
			size_t got = 0;
			while (got < sizeof(s->buf)) {
				ssize_t r = read(s->pipe_to[0], s->buf, sizeof(s->buf) - got);
				if (r <= 0)
					_exit(0);
				got += (size_t)r;
			}
			if (write(s->ack[1], "", 1) != 1)
				_exit(0);
		}
	}
	close(s->pipe_to[0]);
	s->pipe_to[0] = -1;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void teardown(struct cal *s)
{
	int *fds[] = { &s->pfd[0], &s->pfd[1], &s->sfd[0], &s->sfd[1], &s->dfd[0], &s->dfd[1],
		       &s->tcp_c, &s->tcp_s, &s->udp_a, &s->udp_b, &s->file_fd, &s->pipe_to[0],
		       &s->pipe_to[1], &s->ack[0], &s->ack[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close_fd(fds[i]);
	if (s->reader > 0)
		waitpid(s->reader, NULL, 0); /* it sees EOF on pipe_to and exits */
	if (s->shm)
		shmdt(s->shm);
	if (s->shmid >= 0)
		shmctl(s->shmid, IPC_RMID, NULL);
	if (s->semid >= 0)
		semctl(s->semid, 0, IPC_RMID);
	if (!s->dir[0])
		return;
	DIR *d = opendir(s->dir);
	struct dirent *e;
	char p[4400];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", s->dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(s->dir);
}

static void host_facts(struct aim_costs *c)
{
	lb_textfile_host_facts(&c->host);
	double l1 = lb_load_average_now();
	if (l1 < 0)
		snprintf(c->host_load, sizeof(c->host_load), "unknown");
	else
		snprintf(c->host_load, sizeof(c->host_load), "%.2f (1-min load average)", l1);
}

int aim_costs_measure(struct aim_costs *c, const char *tmpdir, double budget_s, char *err,
		      size_t errlen)
{
	struct cal *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	memset(c, 0, sizeof(*c));
	s->err = err;
	s->errlen = errlen;
	int *fds[] = { &s->pfd[0], &s->pfd[1], &s->sfd[0], &s->sfd[1], &s->dfd[0], &s->dfd[1],
		       &s->tcp_c, &s->tcp_s, &s->udp_a, &s->udp_b, &s->file_fd, &s->pipe_to[0],
		       &s->pipe_to[1], &s->ack[0], &s->ack[1] };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		*fds[i] = -1;
	s->semid = s->shmid = -1;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cal_on_usr2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, &old);
	/*
	 * The command-ending signals wait while the scratch directory, the
	 * System V semaphore and shared memory and the reader child exist (a
	 * signal then left all of them behind, and --calibrate's FILE.tmp.*):
	 * checked between the operations (each runs budget_s / AIM_NCOSTS),
	 * delivered to the caller's handlers once everything is torn down.
	 */
	sigset_t stops, before, pending;
	lb_stop_signal_set(&stops);
	sigprocmask(SIG_BLOCK, &stops, &before);
	bool stopped = false;
	host_facts(c);
	c->dir_entries = CAL_DIR_ENTRIES;
	bool setup_ok = setup(s, tmpdir) == 0;
	if (setup_ok)
		aim_cal_fs_facts(s->dir, c->host_fs, sizeof(c->host_fs));
	if (setup_ok)
		for (int op = 0; op < AIM_NCOSTS && !s->fail && !stopped; op++) {
			/* Wall, then CPU over the same timed regions: half the
			 * budget each. */
			s->cpu_clock = false;
			c->ns[op] = measure_op(s, op, budget_s / AIM_NCOSTS / 2);
			s->cpu_clock = true;
			c->cpu_ns[op] = measure_op(s, op, budget_s / AIM_NCOSTS / 2);
			s->cpu_clock = false;
			sigpending(&pending);
			for (int sig = 1; sig < NSIG && !stopped; sig++)
				stopped = sigismember(&stops, sig) == 1 && sigismember(&pending, sig) == 1;
		}
	if (setup_ok && !s->fail && !stopped) {
		c->have_cpu = true;
		creat_sleeps(s, 2000, &c->creat_sleep_frac, &c->creat_offcpu_ns);
		c->have_sleep = !s->fail;
	}
	teardown(s);
	sigaction(SIGUSR2, &old, NULL);
	int rc = s->fail;
	if (stopped && !rc) {
		snprintf(err, errlen, "interrupted by a signal");
		rc = EINTR;
	}
	free(s);
	sigprocmask(SIG_SETMASK, &before, NULL); /* a pending signal is delivered here */
	return rc;
}
