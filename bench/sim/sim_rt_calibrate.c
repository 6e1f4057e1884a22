/* SPDX-License-Identifier: MIT */
/*
 * sim_rt_calibrate.c - `lockbench sim --workload rt --calibrate FILE`: the
 * CPU time of each send and each receive of hackbench's shape on the
 * running kernel (sim_rt_costs.h's table; doc/sim.md, "The rt workload").
 *
 * hackbench's thread mode, as the simulated one is laid out: `groups`
 * groups of `fds` receivers, each reading its own AF_UNIX SOCK_STREAM
 * socketpair, and `fds` senders, each writing `loops` messages of
 * `datasize` bytes to every receiver of its group.  Each message's write()s
 * (send) and read()s (recv; a stream may hand a message over in pieces)
 * are bracketed by two reads of CLOCK_THREAD_CPUTIME_ID: the calling
 * thread's CPU time, so time spent asleep in a full or empty socket, or
 * preempted, is not counted, and what the kernel did for the call on its
 * CPU (the copy, the skb allocation and free, waking the peer) is.  That
 * clock is a system call (no vDSO for it), so a bracket costs about one
 * system call of its own: every 16th message each thread also times an
 * empty bracket, and the median of those, over all threads, is
 * subtracted from every call (floored at 0).
 */
#include "sim_rt_calibrate.h"
#include "lb_hostinfo.h"
#include "lb_textfile.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CAL_CLOCK_EVERY 16u
#define CAL_STACK (256u * 1024u)

struct cal_task {
	pthread_t th;
	bool sender, started;
	int in_fd;                  /* a receiver's end */
	const int *out_fds;         /* a sender's: its group's receivers' ends */
	uint32_t *ns, *clk;         /* per message; the empty brackets */
	size_t n, nclk, cap, capclk;
	char *buf;
};

static struct {
	const struct lb_simr_config *cfg;
	pthread_mutex_t gate;       /* the start: every task made, or a failure */
	pthread_cond_t open;
	bool go;
	int *fds;                   /* 2 per receiver: [2i] read end, [2i+1] write end */
	size_t nfds;
	atomic_bool failed;
	int fail_errno;
} C;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A failure: remember the first, and shut every socket down so no peer
 * waits for a message that will never come (read sees EOF, write EPIPE). */
static void fail(int err)
{
	bool was = false;
	/* Relaxed: the flag only picks the first failure; fail_errno is read
	 * after every task was joined (pthread_join orders it). */
	if (atomic_compare_exchange_strong_explicit(&C.failed, &was, true, memory_order_relaxed,
						    memory_order_relaxed)) {
		C.fail_errno = err ? err : EIO;
		for (size_t i = 0; i < C.nfds; i++)
			shutdown(C.fds[i], SHUT_RDWR);
	}
}

static void record_clock(struct cal_task *t)
{
	uint64_t a = thread_cpu_ns();
	uint64_t b = thread_cpu_ns();
	if (t->nclk < t->capclk)
		t->clk[t->nclk++] = (uint32_t)(b - a);
}

static void record(struct cal_task *t, uint64_t ns)
{
	t->ns[t->n++] = (uint32_t)(ns > UINT32_MAX ? UINT32_MAX : ns);
	if (t->n % CAL_CLOCK_EVERY == 0)
		record_clock(t);
}

static void send_all(struct cal_task *t)
{
	const struct lb_simr_config *cfg = C.cfg;
	for (unsigned int l = 0; l < cfg->loops; l++)
		for (unsigned int r = 0; r < cfg->fds; r++) {
			size_t done = 0;
			uint64_t t0 = thread_cpu_ns();
			while (done < cfg->datasize) {
				ssize_t w = write(t->out_fds[r], t->buf + done, cfg->datasize - done);
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					fail(errno);
					return;
				}
				done += (size_t)w;
			}
			record(t, thread_cpu_ns() - t0);
		}
}

static void recv_all(struct cal_task *t)
{
	const struct lb_simr_config *cfg = C.cfg;
	for (size_t m = 0; m < (size_t)cfg->fds * cfg->loops; m++) {
		size_t done = 0;
		uint64_t t0 = thread_cpu_ns();
		while (done < cfg->datasize) {
			ssize_t r = read(t->in_fd, t->buf + done, cfg->datasize - done);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				fail(r == 0 ? EPIPE : errno);
				return;
			}
			done += (size_t)r;
		}
		record(t, thread_cpu_ns() - t0);
	}
}

static void *task_main(void *arg)
{
	struct cal_task *t = arg;
	pthread_mutex_lock(&C.gate);
	while (!C.go)
		pthread_cond_wait(&C.open, &C.gate);
	pthread_mutex_unlock(&C.gate);
	/* Relaxed: a failure before the start was stored before the gate's
	 * mutex was released, which orders it. */
	if (atomic_load_explicit(&C.failed, memory_order_relaxed))
		return NULL; /* a task was never made: nobody runs */
	if (t->sender)
		send_all(t);
	else
		recv_all(t);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Quantile p of sorted x (linear between order statistics). */
static double quantile(const uint32_t *x, size_t n, double p)
{
	double at = p * (double)(n - 1);
	size_t i = (size_t)at;
	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (at - (double)i) * ((double)x[i + 1] - x[i]);
}

/* One side's table from every task of that side, less the bracket's cost. */
static int side_table(struct cal_task *tasks, size_t ntasks, bool sender, double clock_ns,
		      struct lb_simr_dist *d, uint64_t *floored)
{
	size_t n = 0;
	for (size_t i = 0; i < ntasks; i++)
		n += tasks[i].sender == sender ? tasks[i].n : 0;
	uint32_t *x = malloc((n ? n : 1) * sizeof(*x));
	if (!x || !n) {
		free(x);
		return ENOMEM;
	}
	size_t k = 0;
	double sum = 0;
	uint32_t sub = (uint32_t)(clock_ns + 0.5);
	for (size_t i = 0; i < ntasks; i++)
		for (size_t j = 0; tasks[i].sender == sender && j < tasks[i].n; j++) {
			uint32_t v = tasks[i].ns[j];
			*floored += v < sub;
			x[k] = v > sub ? v - sub : 0;
			sum += x[k++];
		}
	qsort(x, n, sizeof(*x), cmp_u32);
	d->count = n;
	d->mean = sum / (double)n;
	d->n = 0;
	d->p[d->n] = 0, d->ns[d->n++] = x[0];
	d->p[d->n] = 0.001, d->ns[d->n] = quantile(x, n, 0.001), d->n++;
	for (int q = 1; q <= 99; q++)
		d->p[d->n] = q / 100.0, d->ns[d->n] = quantile(x, n, q / 100.0), d->n++;
	/* The tail in finer steps: a draw above the last step lands anywhere
	 * up to the most (one preempted or interrupted call can read
	 * milliseconds), so the steps keep the draws' mean on the calls'. */
	static const double tail[] = { 0.995, 0.999, 0.9995, 0.9999, 0.99999 };
	for (size_t q = 0; q < sizeof(tail) / sizeof(tail[0]); q++)
		d->p[d->n] = tail[q], d->ns[d->n] = quantile(x, n, tail[q]), d->n++;
	d->p[d->n] = 1, d->ns[d->n++] = x[n - 1];
	free(x);
	return 0;
}

static int clock_cost(struct cal_task *tasks, size_t ntasks, struct lb_simr_costs *c)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < ntasks; i++)
		n += tasks[i].nclk;
	uint32_t *x = malloc((n ? n : 1) * sizeof(*x));
	if (!x || !n) {
		free(x);
		return ENOMEM;
	}
	double sum = 0;
	for (size_t i = 0; i < ntasks; i++)
		for (size_t j = 0; j < tasks[i].nclk; j++)
			sum += (x[k++] = tasks[i].clk[j]);
	qsort(x, n, sizeof(*x), cmp_u32);
	c->clock_p50_ns = quantile(x, n, 0.5);
	c->clock_mean_ns = sum / (double)n;
	free(x);
	return 0;
}

static void host_facts(struct lb_simr_costs *c, double load0, double others0)
{
	lb_textfile_host_facts(&c->host);
	snprintf(c->host_load, sizeof(c->host_load),
		 "%.2f before, %.2f after (1-min load average); %.0f runnable beside it before",
		 load0, lb_load_average_now(), others0);
}

static int make_tasks(struct cal_task *tasks, size_t ntasks)
{
	const struct lb_simr_config *cfg = C.cfg;
	size_t per = (size_t)cfg->fds * cfg->loops;
	for (size_t i = 0; i < ntasks; i++) {
		struct cal_task *t = &tasks[i];
		size_t g = i / (2u * cfg->fds), k = i / 2 % cfg->fds;
		t->sender = i % 2 == 0;
		t->cap = per;
		t->capclk = per / CAL_CLOCK_EVERY + 1;
		t->ns = malloc(t->cap * sizeof(*t->ns));
		t->clk = malloc(t->capclk * sizeof(*t->clk));
		t->buf = calloc(1, cfg->datasize);
		if (!t->ns || !t->clk || !t->buf)
			return ENOMEM;
		t->in_fd = C.fds[2 * (g * cfg->fds + k)];
		t->out_fds = NULL;
	}
	return 0;
}

static int run_tasks(struct cal_task *tasks, size_t ntasks, int *out_fds)
{
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);
	if (!err)
		err = pthread_attr_setstacksize(&attr, CAL_STACK);
	if (err)
		return err;
	size_t started = 0;
	for (size_t i = 0; i < ntasks && !err; i++) {
		size_t g = i / (2u * C.cfg->fds);
		tasks[i].out_fds = out_fds + g * C.cfg->fds;
		err = pthread_create(&tasks[i].th, &attr, task_main, &tasks[i]);
		started += !err;
	}
	pthread_attr_destroy(&attr);
	if (err)
		fail(err);
	pthread_mutex_lock(&C.gate);
	C.go = true;
	pthread_cond_broadcast(&C.open);
	pthread_mutex_unlock(&C.gate);
	for (size_t i = 0; i < started; i++)
		pthread_join(tasks[i].th, NULL);
	return err;
}

static int measure(struct lb_simr_costs *c, struct cal_task *tasks, size_t ntasks)
{
	const struct lb_simr_config *cfg = C.cfg;
	size_t nq = (size_t)cfg->groups * cfg->fds;
	int *out_fds = malloc(nq * sizeof(*out_fds));
	if (!out_fds)
		return ENOMEM;
	for (size_t q = 0; q < nq; q++)
		out_fds[q] = C.fds[2 * q + 1];
	int err = make_tasks(tasks, ntasks);
	if (!err)
		err = run_tasks(tasks, ntasks, out_fds);
	free(out_fds);
	/* Relaxed: every task was joined (pthread_join orders its stores). */
	if (!err && atomic_load_explicit(&C.failed, memory_order_relaxed))
		err = C.fail_errno;
	uint64_t floored[2] = { 0, 0 };
	if (!err)
		err = clock_cost(tasks, ntasks, c);
	if (!err)
		err = side_table(tasks, ntasks, true, c->clock_p50_ns, &c->send, &floored[0]);
	if (!err)
		err = side_table(tasks, ntasks, false, c->clock_p50_ns, &c->recv, &floored[1]);
	snprintf(c->method, sizeof(c->method),
		 "CPU time per message, CLOCK_THREAD_CPUTIME_ID read before and after its write()s "
		 "(send) or read()s (recv); less the clock pair's own cost, the median %.0f ns "
		 "(mean %.0f) of an empty pair timed after every %uth message in the same threads; "
		 "floored at 0 (send %llu, recv %llu calls)", c->clock_p50_ns, c->clock_mean_ns,
		 CAL_CLOCK_EVERY, (unsigned long long)floored[0], (unsigned long long)floored[1]);
	return err;
}

int lb_simr_calibrate(const struct lb_simr_config *cfg, struct lb_simr_costs *c, char *err,
		      size_t errlen)
{
	memset(c, 0, sizeof(*c));
	memset(&C, 0, sizeof(C));
	C.cfg = cfg;
	pthread_mutex_init(&C.gate, NULL);
	pthread_cond_init(&C.open, NULL);
	double load0 = lb_load_average_now(), others0 = lb_runnable_others();
	size_t nq = (size_t)cfg->groups * cfg->fds, ntasks = 2 * nq;
	C.fds = malloc(2 * nq * sizeof(*C.fds));
	struct cal_task *tasks = calloc(ntasks, sizeof(*tasks));
	int rc = C.fds && tasks ? 0 : ENOMEM;
	for (size_t q = 0; q < nq && !rc; q++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, &C.fds[2 * q]))
			rc = errno;
		else
			C.nfds += 2;
	}
	/* A failed peer's shutdown makes a writer's write() raise SIGPIPE:
	 * ignored while the tasks run, the old disposition restored. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	if (!rc)
		rc = measure(c, tasks, ntasks);
	sigaction(SIGPIPE, &old, NULL);
	for (size_t i = 0; i < C.nfds; i++)
		close(C.fds[i]);
	for (size_t i = 0; tasks && i < ntasks; i++) {
		free(tasks[i].ns);
		free(tasks[i].clk);
		free(tasks[i].buf);
	}
	free(tasks);
	free(C.fds);
	if (rc) {
		snprintf(err, errlen, "hackbench's sockets: %s", strerror(rc));
		return rc;
	}
	snprintf(c->shape, sizeof(c->shape),
		 "hackbench threads: %u groups x %u senders x %u receivers, %u loops, %u-byte "
		 "messages, AF_UNIX SOCK_STREAM socketpairs", cfg->groups, cfg->fds, cfg->fds,
		 cfg->loops, cfg->datasize);
	host_facts(c, load0, others0);
	return 0;
}
