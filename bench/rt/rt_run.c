/* SPDX-License-Identifier: MIT */
/*
 * rt_run.c - one run of `lockbench rt`: a fresh allocator with the lock
 * under test as list_lock, the hackbench-alike load (-g groups of -f
 * senders and -f receivers over socketpairs or pipes; every message is an
 * object the sender allocated and the receiver frees), the cyclictest-alike
 * RT threads running alongside, and the perf counters around it all.
 *
 * Threaded mode (-T, the default): the load is threads of this process.
 * Process mode (-P): every sender and receiver is a forked process, the RT
 * threads stay threads of this one; all they share (the allocator, its
 * list_lock and every lock context, the raw-section marks, the tasks'
 * progress and counters, the start gate) lies in one MAP_SHARED arena
 * (shared_arena.h) mapped before the fork, at the same address in every
 * process.  Children end with _exit; a child that dies or fails is a run
 * error, and the watchdog kills them all when it ends the command.
 */
#include "rt.h"
#include "perf_counters.h"
#include "slub.h"
#include "rt_skb.h"
#include "lb_atomic.h"
#include "lb_thread.h"
#include "lb_time.h"
#include "lb_topo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

_Static_assert(LB_SLUB_RUNNING_BINS == 3, "struct lb_rt_run keeps 3 running-contender bins");

#define RLX memory_order_relaxed
#define MSG_MAGIC UINT64_C(0x6c6f636b62656e63) /* "lockbenc" */
#define TASK_STACK (512u * 1024u)
/* The pool reserves address space only; pages are touched when used. */
#define POOL_BYTES ((size_t)1 << 30)

struct run_state;

struct task {
	struct run_state *rs;
	struct lb_rt_task_info info;
	struct lb_slub_cpu slab;      /* the data cache (kmalloc-like) */
	struct lb_slub_cpu head_slab; /* the head cache (skbuff_head_cache-like) */
	int rfd;                 /* receivers: the read end */
	const int *wfds;         /* senders: the group's receivers' write ends */
	unsigned int thread_index;
	int err;
	uint64_t start_ns, end_ns; /* the run's time: first start to last end */
	uint64_t cpu0_ns;        /* this thread's CPU time when the barrier let it go */
};

struct rt_worker {
	struct run_state *rs;
	unsigned int index;
	int cpu;
	struct lb_rt_task_info info;
	struct lb_slub_cpu slab;
	struct lb_rt_thread_stats st;
	int err;
};

struct run_state {
	struct lb_arena *arena;      /* -P: where this struct, the tasks and the allocator live */
	const struct lb_rt_config *cfg;
	const struct lb_rt_facts *facts;
	struct lb_slub_cache cache;  /* the data heads (the RT threads' too) */
	struct lb_slub_cache head;   /* the sk_buff heads */
	struct lb_rt_skb_geometry geo;
	struct lb_raw_sections raw;  /* used when cache.raw points here */
	struct lb_barrier start;
	_Atomic int stop_rt;
	_Atomic uint64_t bad_messages, io_errors, alloc_failures;
	_Atomic uint64_t sends_full;  /* sends that found the socket full */
	_Atomic uint64_t sender_cpu_ns, receiver_cpu_ns; /* the tasks' CPU time, by role */
};

/* All len bytes of buf written to fd (write_it) or read from it, through
 * short transfers and signals; -1 on an error or end of file. */
static int transfer_full(int fd, char *buf, size_t len, bool write_it)
{
	char *p = buf;
	while (len) {
		ssize_t n = write_it ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One message's first send attempt on a socket, not waiting for room
 * (MSG_DONTWAIT): 0 when all len bytes went, 1 when the socket was full
 * and nothing went (the kernel's sock_alloc_send_pskb() would wait there),
 * -1 on an error.  A short send writes the rest waiting, as write() would:
 * the message is out by then.
 */
static int send_nowait(int fd, char *buf, size_t len)
{
	ssize_t n;
	do
		n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
	return (size_t)n == len ? 0 : transfer_full(fd, buf + n, len - (size_t)n, true);
}

/* --load-fifo: the load runs at a low SCHED_FIFO priority, so a thread is
 * never preempted by another load thread while it holds or waits for
 * list_lock (only by the RT threads) - the nearest userspace gets to the
 * kernel's preemption-disabled spinlock sections. */
static int load_sched(struct task *t)
{
	const struct lb_rt_config *cfg = t->rs->cfg;
	int prio = 0;
	if (cfg->load_prio && t->rs->facts->fifo_permitted) {
		struct sched_param sp = { .sched_priority = cfg->load_prio };
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
			prio = cfg->load_prio;
	}
	int err = lb_slub_cpu_init(&t->rs->cache, &t->slab, t->thread_index);
	if (!err) {
		err = lb_slub_cpu_init(&t->rs->head, &t->head_slab, t->thread_index);
		if (err) {
			lb_slub_cpu_fini(&t->slab);
			lb_slub_cpu_release(&t->slab);
		}
	}
	if (!err && prio) {
		lb_slub_cpu_set_prio(&t->slab, prio);
		lb_slub_cpu_set_prio(&t->head_slab, prio);
	}
	return err;
}

/*
 * A load task's start: its -s byte message buffer (filled with `fill`
 * unless 0), its tid for the watchdog, its scheduling and allocator
 * context, then the start barrier.  The buffer, or NULL when the start
 * failed (t->err says why; nothing is left allocated).
 */
static char *task_start(struct task *t, char fill)
{
	size_t size = t->rs->cfg->datasize;
	char *buf = malloc(size);
	if (buf && fill)
		memset(buf, fill, size);
	atomic_store_explicit(&t->info.tid, (int)gettid(), RLX);
	t->err = buf ? load_sched(t) : ENOMEM;
	lb_barrier_wait(&t->rs->start);
	if (t->err) {
		free(buf);
		return NULL;
	}
	t->cpu0_ns = lb_thread_cpu_ns();
	return buf;
}

/* A load task's end, after a task_start() that returned buf: the end time
 * and state for the report and the watchdog, its allocator caches flushed
 * back, its buffer freed. */
static void *task_end(struct task *t, char *buf)
{
	t->end_ns = lb_now_ns();
	/* The task's CPU time over its messages, by role (doc/rt.md, "On a
	 * quiet host": which side of the socket the work-alike slows). */
	uint64_t cpu = lb_thread_cpu_ns() - t->cpu0_ns;
	atomic_fetch_add_explicit(t->info.role == LB_RT_SENDER ? &t->rs->sender_cpu_ns
							       : &t->rs->receiver_cpu_ns,
				  cpu, RLX);
	atomic_store_explicit(&t->info.state, LB_RT_ST_DONE, RLX);
	lb_slub_cpu_fini(&t->slab);
	lb_slub_cpu_fini(&t->head_slab);
	free(buf);
	return NULL;
}

/* The two objects one send allocates (as __alloc_skb: the head, then its
 * data head, which the head points at, skb->head); NULL when the pool ran
 * out (counted). */
static uint64_t *alloc_message(struct task *t)
{
	uint64_t *msg = lb_slub_alloc(&t->head_slab);
	void *data = msg ? lb_slub_alloc(&t->slab) : NULL;
	if (msg && !data) {
		lb_slub_free(&t->head_slab, msg);
		msg = NULL;
	}
	if (!msg) {
		atomic_fetch_add_explicit(&t->rs->alloc_failures, 1, RLX);
		return NULL;
	}
	memcpy(msg + 2, &data, sizeof(data));
	return msg;
}

/*
 * One message to fd: allocate, stamp, send.  On a socket the first attempt
 * does not wait, so that a full socket is counted in *full: there the
 * sender waits holding the message's two objects, where the kernel's
 * unix_stream_sendmsg() waits in sock_alloc_send_pskb() before
 * __alloc_skb() (doc/rt.md, "On a quiet host": 0.1-0.3 % of the sends
 * there).  0, or -1 on an error (the objects then freed).
 */
static int send_one(struct task *t, int fd, char *out, uint64_t *full)
{
	const struct lb_rt_config *cfg = t->rs->cfg;
	atomic_store_explicit(&t->info.state, LB_RT_ST_ALLOC, RLX);
	uint64_t *msg = alloc_message(t);
	/* A failed allocation (a pool a broken list_lock leaked) is counted,
	 * and the message still goes out, naming no object: its receiver must
	 * not wait for it (the run then ends in the invariant report, not in
	 * the watchdog).  The message carries the object's address (the
	 * receiver frees it) and a check word; the object is stamped with the
	 * same two words (the sender touches what it allocated). */
	uint64_t word[2] = { (uint64_t)(uintptr_t)msg, (uint64_t)(uintptr_t)msg ^ MSG_MAGIC };
	if (msg)
		memcpy(msg, word, sizeof(word));
	memcpy(out, word, sizeof(word));
	atomic_store_explicit(&t->info.state, LB_RT_ST_WRITE, RLX);
	int e = cfg->pipe ? transfer_full(fd, out, cfg->datasize, true)
			  : send_nowait(fd, out, cfg->datasize);
	if (e == 1) {
		(*full)++;
		e = transfer_full(fd, out, cfg->datasize, true);
	}
	if (e && msg) {
		void *data;
		memcpy(&data, msg + 2, sizeof(data));
		lb_slub_free(&t->slab, data);
		lb_slub_free(&t->head_slab, msg);
	}
	return e ? -1 : 0;
}

static void *sender_main(void *arg)
{
	struct task *t = arg;
	struct run_state *rs = t->rs;
	const struct lb_rt_config *cfg = rs->cfg;
	/* As hackbench's sender: every write goes out of one private buffer
	 * of -s bytes filled with '-' (hot in this thread's cache), not out of
	 * the freshly allocated object, whose cold lines would add a cache
	 * miss per line to every write that the real tool does not pay. */
	char *out = task_start(t, '-');
	if (!out)
		return NULL;
	uint64_t sent = 0, full = 0;
	/* Relaxed: set before the barrier released us (a failed start). */
	t->start_ns = lb_now_ns();
	if (atomic_load_explicit(&rs->stop_rt, RLX))
		goto end;
	atomic_store_explicit(&t->info.state, LB_RT_ST_RUN, RLX);
	for (unsigned int l = 0; l < cfg->loops; l++) {
		for (unsigned int r = 0; r < cfg->fds; r++) {
			int e = send_one(t, t->wfds[r], out, &full);
			if (e) {
				atomic_fetch_add_explicit(&rs->io_errors, 1, RLX);
				goto end;
			}
			/* Only this thread writes its count: a store, not an RMW. */
			atomic_store_explicit(&t->info.done, ++sent, RLX);
		}
	}
end:
	atomic_fetch_add_explicit(&rs->sends_full, full, RLX);
	return task_end(t, out);
}

static void *receiver_main(void *arg)
{
	struct task *t = arg;
	struct run_state *rs = t->rs;
	const struct lb_rt_config *cfg = rs->cfg;
	char *buf = task_start(t, 0);
	if (!buf)
		return NULL;
	/* Relaxed: set before the barrier released us (a failed start). */
	uint64_t todo = atomic_load_explicit(&rs->stop_rt, RLX) ? 0 : t->info.total;
	t->start_ns = lb_now_ns();
	for (uint64_t n = 0; n < todo; n++) {
		uint64_t word[2];
		atomic_store_explicit(&t->info.state, LB_RT_ST_READ, RLX);
		if (transfer_full(t->rfd, buf, cfg->datasize, false)) {
			atomic_fetch_add_explicit(&rs->io_errors, 1, RLX);
			break;
		}
		memcpy(word, buf, sizeof(word));
		atomic_store_explicit(&t->info.state, LB_RT_ST_RUN, RLX);
		if ((word[0] ^ MSG_MAGIC) != word[1])
			atomic_fetch_add_explicit(&rs->bad_messages, 1, RLX);
		else if (word[0]) { /* 0: the sender's allocation failed (counted there) */
			/* consume_skb: the data head, then the head. */
			uint64_t *head = (uint64_t *)(uintptr_t)word[0];
			void *data;
			memcpy(&data, head + 2, sizeof(data));
			lb_slub_free(&t->slab, data);
			lb_slub_free(&t->head_slab, head);
		}
		/* Only this thread writes its count (the watchdog's progress
		 * is the receivers' sum): a store, not a shared RMW. */
		atomic_store_explicit(&t->info.done, n + 1, RLX);
		if (cfg->inject_hang && t->info.group == 0 && t->info.index == 0) {
			atomic_store_explicit(&t->info.state, LB_RT_ST_HUNG, RLX);
			lb_slub_debug_hold_lock(&t->slab); /* never returns */
		}
	}
	return task_end(t, buf);
}

/* ---- the cyclictest-alike -------------------------------------------- */

static void ts_add_ns(struct timespec *ts, uint64_t ns)
{
	uint64_t t = (uint64_t)ts->tv_nsec + ns;
	ts->tv_sec += (time_t)(t / LB_NS_PER_S);
	ts->tv_nsec = (long)(t % LB_NS_PER_S);
}

static int64_t ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(a->tv_sec - b->tv_sec) * (int64_t)LB_NS_PER_S + (a->tv_nsec - b->tv_nsec);
}

static void rt_record_wake(struct rt_worker *w, long us, unsigned int hist_us)
{
	struct lb_rt_thread_stats *s = &w->st;
	if (!s->cycles || us < s->wake_min_us)
		s->wake_min_us = us;
	if (us > s->wake_max_us)
		s->wake_max_us = us;
	s->wake_act_us = us;
	s->wake_sum_us += (double)us;
	if (hist_us) {
		if ((unsigned long)us >= hist_us) {
			if (s->noverflow_kept < hist_us)
				s->overflow_cycles[s->noverflow_kept++] = s->cycles;
			s->overflows++;
		} else {
			s->hist[us]++;
		}
	}
	s->cycles++;
}

static uint32_t sat32(uint64_t ns)
{
	return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static void rt_record_alloc(struct rt_worker *w, uint64_t ns)
{
	struct lb_rt_thread_stats *s = &w->st;
	if (s->alloc_samples && s->nalloc_kept < LB_RT_SAMPLE_CAP)
		s->alloc_samples[s->nalloc_kept++] = sat32(ns);
	double us = (double)ns / 1000.0;
	if (!s->alloc_n || us < s->alloc_min_us)
		s->alloc_min_us = us;
	if (us > s->alloc_max_us)
		s->alloc_max_us = us;
	s->alloc_act_us = us;
	s->alloc_sum_us += us;
	s->alloc_n++;
	lb_hist_record(s->alloc_hist, ns);
}

static void *rt_main(void *arg)
{
	struct rt_worker *w = arg;
	struct run_state *rs = w->rs;
	const struct lb_rt_config *cfg = rs->cfg;
	int prio = 0;

	lb_pin_self(w->cpu);
	atomic_store_explicit(&w->info.tid, (int)gettid(), RLX);
	if (rs->facts->fifo_permitted && !cfg->sched_other) {
		struct sched_param sp = { .sched_priority = cfg->priority };
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
			prio = cfg->priority;
	}
	/* Prefault the stack the loop will use (as cyclictest does), so its
	 * first wake-ups take no page fault; volatile so it is not elided. */
	volatile char stack_touch[64 * 1024];
	for (size_t off = 0; off < sizeof(stack_touch); off += 4096)
		stack_touch[off] = 0;
	w->st.prio = prio;
	w->st.tid = atomic_load_explicit(&w->info.tid, RLX);
	w->st.cpu = w->cpu;
	/* The lock context after the priority change, so a PI lock records
	 * the right base priority; and told explicitly as well. */
	w->err = lb_slub_cpu_init(&rs->cache, &w->slab, w->info.index);
	if (!w->err) {
		lb_slub_cpu_set_prio(&w->slab, prio);
		if (prio)
			lb_slub_cpu_set_spin_budget(&w->slab, cfg->spin_budget_ns);
	}
	lb_barrier_wait(&rs->start);
	if (w->err)
		return NULL;

	uint64_t interval_ns = (uint64_t)w->st.interval_us * 1000u;
	/* Alone (no load), each thread keeps its own --duration, as cyclictest
	 * -D: the main thread may be kept off the CPU by other work. */
	uint64_t end_ns = cfg->groups ? UINT64_MAX : lb_now_ns() + cfg->duration_ns;
	struct timespec next, now, end = { (time_t)(end_ns / 1000000000u),
					   (long)(end_ns % 1000000000u) };
	clock_gettime(CLOCK_MONOTONIC, &next);
	ts_add_ns(&next, interval_ns);
	/* Relaxed: the flag only ends the loop; the stats are read after join. */
	while (!atomic_load_explicit(&rs->stop_rt, RLX)) {
		atomic_store_explicit(&w->info.state, LB_RT_ST_SLEEP, RLX);
		/* Until the next period or the deadline, whichever comes first:
		 * a period longer than the run (-d 1000000) must not hold it. */
		bool to_end = end_ns != UINT64_MAX && ts_diff_ns(&next, &end) > 0;
		int e;
		while ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, to_end ? &end : &next,
					    NULL)) == EINTR)
			if (atomic_load_explicit(&rs->stop_rt, RLX))
				break; /* lb_rt_kick: the run is over */
		if (to_end || e == EINTR)
			break; /* the deadline or the end of the load, not a wake-up */
		clock_gettime(CLOCK_MONOTONIC, &now);
		atomic_store_explicit(&w->info.state, LB_RT_ST_RUN, RLX);
		/* A raw section open on this CPU runs to its end first, as with
		 * preemption off; that wait is part of the wake-up latency. */
		if (rs->cache.raw && lb_raw_wait_cpu(rs->cache.raw, w->cpu))
			clock_gettime(CLOCK_MONOTONIC, &now);
		/* cyclictest's µs difference: truncated. */
		int64_t diff = ts_diff_ns(&now, &next);
		rt_record_wake(w, diff > 0 ? (long)(diff / 1000) : 0, cfg->histogram_us);
		lb_hist_record(w->st.wake_hist, diff > 0 ? (uint64_t)diff : 0);
		if (w->st.nwake_kept < LB_RT_SAMPLE_CAP)
			w->st.wake_samples[w->st.nwake_kept++] = sat32(diff > 0 ? (uint64_t)diff : 0);
		if (cfg->rt_alloc) {
			atomic_store_explicit(&w->info.state, LB_RT_ST_ALLOC, RLX);
			uint64_t t0 = lb_now_ns();
			void *p = lb_slub_alloc_nocache(&w->slab);
			if (p)
				lb_slub_free_nocache(&w->slab, p);
			else
				w->st.alloc_failed++;
			rt_record_alloc(w, lb_now_ns() - t0);
			clock_gettime(CLOCK_MONOTONIC, &now);
		}
		atomic_fetch_add_explicit(&w->info.done, 1, RLX);
		if ((uint64_t)now.tv_sec * LB_NS_PER_S + (uint64_t)now.tv_nsec >= end_ns)
			break;
		ts_add_ns(&next, interval_ns);
		/* Missed wake-ups (a long stall) are skipped, as cyclictest does. */
		while (ts_diff_ns(&now, &next) > 0)
			ts_add_ns(&next, interval_ns);
	}
	atomic_store_explicit(&w->info.state, LB_RT_ST_DONE, RLX);
	if (prio) {
		/* Back to normal before the context is torn down. */
		struct sched_param sp = { .sched_priority = 0 };
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
		lb_slub_cpu_set_prio(&w->slab, 0);
	}
	lb_slub_cpu_fini(&w->slab);
	return NULL;
}

/* ---- the run --------------------------------------------------------- */

/*
 * The end of a run must not wait for an RT thread's next period (up to
 * 1000 s with -d): once stop_rt is set, LB_RT_KICK_SIGNAL (a no-op handler,
 * so clock_nanosleep returns EINTR and the thread sees stop_rt) is sent
 * every 2 ms until the thread is joined.  Repeated because a kick that
 * lands between the thread's stop_rt check and its sleep is lost.
 */
#define LB_RT_KICK_SIGNAL SIGUSR1
#define LB_RT_KICK_EVERY_NS 2000000u

static void on_kick(int sig)
{
	(void)sig; /* only interrupts the sleep */
}

static void kick_handler_install(void)
{
	struct sigaction sa = { .sa_handler = on_kick }; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(LB_RT_KICK_SIGNAL, &sa, NULL);
}

static void join_rt_thread(pthread_t tid)
{
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		ts_add_ns(&until, LB_RT_KICK_EVERY_NS);
		if (pthread_timedjoin_np(tid, NULL, &until) == 0)
			return;
		pthread_kill(tid, LB_RT_KICK_SIGNAL);
	}
}

static int spawn(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TASK_STACK);
	int err = pthread_create(tid, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

/* The CPUs this process may use, in order; how many. */
static unsigned int allowed_cpus(int *out, unsigned int cap)
{
	cpu_set_t set;
	unsigned int n = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
			if (CPU_ISSET(c, &set))
				out[n++] = c;
	if (!n)
		out[n++] = -1;
	return n;
}

static int stats_alloc(struct lb_rt_thread_stats *s, unsigned int hist_us)
{
	s->alloc_hist = malloc(sizeof(*s->alloc_hist));
	s->wake_hist = malloc(sizeof(*s->wake_hist));
	if (!s->alloc_hist || !s->wake_hist)
		return ENOMEM;
	lb_hist_init(s->alloc_hist);
	lb_hist_init(s->wake_hist);
	s->wake_samples = malloc(LB_RT_SAMPLE_CAP * sizeof(uint32_t));
	s->alloc_samples = malloc(LB_RT_SAMPLE_CAP * sizeof(uint32_t));
	if (!s->wake_samples || !s->alloc_samples)
		return ENOMEM;
	/* Prefaulted here: no page fault in the RT thread's loop. */
	memset(s->wake_samples, 0, LB_RT_SAMPLE_CAP * sizeof(uint32_t));
	memset(s->alloc_samples, 0, LB_RT_SAMPLE_CAP * sizeof(uint32_t));
	if (hist_us) {
		s->hist = calloc(hist_us, sizeof(uint64_t));
		s->overflow_cycles = calloc(hist_us, sizeof(uint64_t));
		if (!s->hist || !s->overflow_cycles)
			return ENOMEM;
	}
	return 0;
}

static void stats_free(struct lb_rt_thread_stats *s)
{
	free(s->alloc_hist);
	free(s->wake_hist);
	s->wake_hist = NULL;
	free(s->wake_samples);
	free(s->alloc_samples);
	s->wake_samples = s->alloc_samples = NULL;
	free(s->hist);
	free(s->overflow_cycles);
	s->alloc_hist = NULL;
	s->hist = NULL;
	s->overflow_cycles = NULL;
}

void lb_rt_run_free(struct lb_rt_run *r)
{
	for (unsigned int i = 0; i < r->nrt; i++)
		stats_free(&r->rt[i]);
	r->nrt = 0;
}

/* One latency gauge of src into dst: <g>_min_us, _max_us, _act_us (the last
 * sample) and _sum_us over `count` samples; a side with none has no
 * minimum or last sample.  A macro: the wake-up gauge is in whole µs (long,
 * cyclictest's), the allocation gauge in fractions (double). */
#define MERGE_GAUGE(dst, src, g, count)                                                   \
	do {                                                                               \
		if (!(dst)->count || ((src)->count && (src)->g##_min_us < (dst)->g##_min_us)) \
			(dst)->g##_min_us = (src)->g##_min_us;                                 \
		if ((src)->g##_max_us > (dst)->g##_max_us)                                     \
			(dst)->g##_max_us = (src)->g##_max_us;                                 \
		if ((src)->count)                                                              \
			(dst)->g##_act_us = (src)->g##_act_us;                                 \
		(dst)->g##_sum_us += (src)->g##_sum_us;                                        \
	} while (0)

void lb_rt_stats_merge(struct lb_rt_thread_stats *dst, const struct lb_rt_thread_stats *src,
		       unsigned int histogram_us)
{
	MERGE_GAUGE(dst, src, wake, cycles);
	MERGE_GAUGE(dst, src, alloc, alloc_n);
	dst->alloc_failed += src->alloc_failed;
	if (dst->alloc_hist && src->alloc_hist)
		lb_hist_merge(dst->alloc_hist, src->alloc_hist);
	if (dst->wake_hist && src->wake_hist)
		lb_hist_merge(dst->wake_hist, src->wake_hist);
	for (unsigned int b = 0; dst->hist && src->hist && b < histogram_us; b++)
		dst->hist[b] += src->hist[b];
	for (uint64_t k = 0; dst->overflow_cycles && k < src->noverflow_kept &&
			     dst->noverflow_kept < histogram_us; k++)
		dst->overflow_cycles[dst->noverflow_kept++] = dst->cycles + src->overflow_cycles[k];
	dst->overflows += src->overflows;
	dst->alloc_n += src->alloc_n;
	dst->cycles += src->cycles;
	dst->tid = src->tid;
	dst->prio = src->prio;
	dst->cpu = src->cpu;
	dst->interval_us = src->interval_us;
}

/* Enough descriptors for every socketpair: raise the soft limit to the hard one. */
static int ensure_fds(unsigned int need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return errno;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need + 64) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need + 64 ? need + 64
										 : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return errno;
		if (rl.rlim_cur < need + 64)
			return EMFILE;
	}
	return 0;
}

/* Receivers and senders of every group: receiver r reads fds[2r], its
 * group's senders write the group's wfds. */
static void init_tasks(struct run_state *rs, struct task *tasks, const int *fds, int *wfds)
{
	const struct lb_rt_config *cfg = rs->cfg;
	for (unsigned int g = 0; g < cfg->groups; g++) {
		for (unsigned int i = 0; i < cfg->fds; i++) {
			struct task *rcv = &tasks[2 * (g * cfg->fds + i)];
			struct task *snd = rcv + 1;
			*rcv = (struct task){ .rs = rs, .rfd = fds[2 * (g * cfg->fds + i)],
					      .thread_index = 2 * (g * cfg->fds + i) };
			rcv->info.role = LB_RT_RECEIVER;
			rcv->info.group = g;
			rcv->info.index = i;
			rcv->info.total = (uint64_t)cfg->fds * cfg->loops;
			rcv->info.slab = &rcv->slab;
			*snd = (struct task){ .rs = rs, .wfds = &wfds[g * cfg->fds],
					      .thread_index = 2 * (g * cfg->fds + i) + 1 };
			snd->info.role = LB_RT_SENDER;
			snd->info.group = g;
			snd->info.index = i;
			snd->info.total = (uint64_t)cfg->fds * cfg->loops;
			snd->info.slab = &snd->slab;
		}
	}
}

/* The earliest start and latest end the tasks stamped themselves. */
static void task_span(const struct task *tasks, unsigned int created, uint64_t *t0, uint64_t *t1)
{
	*t0 = UINT64_MAX;
	*t1 = 0;
	for (unsigned int i = 0; i < created; i++) {
		*t0 = tasks[i].start_ns && tasks[i].start_ns < *t0 ? tasks[i].start_ns : *t0;
		*t1 = tasks[i].end_ns > *t1 ? tasks[i].end_ns : *t1;
	}
	if (*t1 < *t0)
		*t1 = *t0;
}

/* A finished run's figures into out, and its invariants: 0, or -1 when one
 * failed (reported on stderr).  The RT threads' statistics move to out. */
static int collect_run(struct run_state *rs, const struct lb_lock_ops *ops,
		       unsigned int repeat_index, struct rt_worker *rtw, unsigned int nrt,
		       const int64_t *pv, uint64_t elapsed_ns, struct lb_rt_run *out)
{
	int err = 0;
	out->elapsed_s = (double)elapsed_ns / LB_NS_PER_S;
	out->task_clock_ms = pv[LB_PERF_TASK_CLOCK] >= 0 ? (double)pv[LB_PERF_TASK_CLOCK] / 1e6 : -1.0;
	out->context_switches = pv[LB_PERF_CONTEXT_SWITCHES];
	out->cpu_migrations = pv[LB_PERF_CPU_MIGRATIONS];
	out->page_faults = pv[LB_PERF_PAGE_FAULTS];
	out->hw_supported = pv[LB_PERF_CYCLES] >= 0;
	const struct lb_slub_cache *cs[2] = { &rs->head, &rs->cache };
	uint64_t cw = 0, hold = 0, csum = 0;
	out->sends_full = atomic_load_explicit(&rs->sends_full, RLX);
	out->sender_cpu_ns = atomic_load_explicit(&rs->sender_cpu_ns, RLX);
	out->receiver_cpu_ns = atomic_load_explicit(&rs->receiver_cpu_ns, RLX);
	for (int i = 0; i < 2; i++) {
		const struct lb_slub_cache *c = cs[i];
		out->allocs += atomic_load_explicit(&c->allocs, RLX);
		out->slow_frees[i] = atomic_load_explicit(&c->remote_frees, RLX);
		out->remote_frees += out->slow_frees[i];
		out->cache_acquires[i] = atomic_load_explicit(&c->lock_acquires, RLX);
		out->lock_acquires += out->cache_acquires[i];
		for (int k = 0; k < LB_SLUB_SITES; k++)
			out->site_acquires[k] += atomic_load_explicit(&c->site_acquires[k], RLX);
		out->partial_take_objs[i] = atomic_load_explicit(&c->partial_take_objs, RLX);
		out->partial_takes[i] =
			atomic_load_explicit(&c->site_acquires[LB_SLUB_SITE_PARTIAL_TAKE], RLX);
		out->refills[i] = atomic_load_explicit(&c->refills, RLX);
		out->cpu_partial_puts[i] = atomic_load_explicit(&c->cpu_partial_puts, RLX);
		out->cpu_partial_refills[i] = atomic_load_explicit(&c->cpu_partial_refills, RLX);
		out->budget_exhausted += atomic_load_explicit(&c->budget_exhausted, RLX);
		double mh = (double)atomic_load_explicit(&c->max_hold_ns, RLX) / 1e3;
		out->max_hold_us = mh > out->max_hold_us ? mh : out->max_hold_us;
		hold += atomic_load_explicit(&c->hold_ns_sum, RLX);
		out->lock_contended += atomic_load_explicit(&c->lock_contended, RLX);
		cw += atomic_load_explicit(&c->contended_wait_ns, RLX);
		csum += atomic_load_explicit(&c->contenders_sum, RLX);
		uint64_t cmax = atomic_load_explicit(&c->contenders_max, RLX);
		out->contenders_max = cmax > out->contenders_max ? cmax : out->contenders_max;
		for (int b = 0; b < LB_SLUB_RUNNING_BINS; b++) {
			out->running_lo[b] += atomic_load_explicit(&c->running_lo[b], RLX);
			out->running_hi[b] += atomic_load_explicit(&c->running_hi[b], RLX);
		}
		out->owner_off_announced += atomic_load_explicit(&c->owner_off_announced, RLX);
		out->owner_off_held += atomic_load_explicit(&c->owner_off_held, RLX);
		out->fast_commits += atomic_load_explicit(&c->fast_commits, RLX);
		out->fast_restarts += atomic_load_explicit(&c->fast_restarts, RLX);
		out->objs_per_slab[i] = c->objs_per_page;
	}
	out->messages = (uint64_t)rs->cfg->groups * rs->cfg->fds * rs->cfg->fds * rs->cfg->loops;
	out->contenders_mean = out->lock_acquires ? (double)csum / (double)out->lock_acquires : 0;
	out->lock_gauged = ops->trylock != NULL;
	out->hold_sum_s = (double)hold / LB_NS_PER_S;
	out->contended_wait_us = out->lock_contended ? (double)cw / 1e3 / (double)out->lock_contended
						     : 0;
	if (rs->cache.raw) {
		out->raw_on = true;
		out->raw_sections = atomic_load_explicit(&rs->raw.sections, RLX);
		uint64_t cost = atomic_load_explicit(&rs->raw.cost_ns, RLX);
		out->raw_cost_ns = out->raw_sections ? (double)cost / (double)out->raw_sections : 0;
		uint64_t waited = atomic_load_explicit(&rs->raw.wait_ns, RLX);
		out->raw_wait_ns = out->raw_sections ? (double)waited / (double)out->raw_sections : 0;
		out->raw_boost_failures = atomic_load_explicit(&rs->raw.boost_failures, RLX);
		out->raw_entry_yields = atomic_load_explicit(&rs->raw.entry_yields, RLX);
		out->raw_contended = atomic_load_explicit(&rs->raw.contended, RLX);
		out->raw_boost_calls = atomic_load_explicit(&rs->raw.boost_calls, RLX);
		out->raw_rt_waits = atomic_load_explicit(&rs->raw.rt_waits, RLX);
		out->raw_rt_wait_max_us = (double)atomic_load_explicit(&rs->raw.rt_wait_max_ns, RLX) / 1e3;
	}
	if (ops->describe)
		ops->describe(rs->cache.list_lock, out->describe, sizeof(out->describe));
	/* The invariants: exit status 1 when any fails. */
	unsigned long problems = lb_slub_check(&rs->cache, 0, stderr) +
				 lb_slub_check(&rs->head, 0, stderr);
	uint64_t bad = atomic_load_explicit(&rs->bad_messages, RLX);
	uint64_t ioe = atomic_load_explicit(&rs->io_errors, RLX);
	uint64_t af = atomic_load_explicit(&rs->alloc_failures, RLX);
	if (bad)
		fprintf(stderr, "  invariant: %llu message(s) arrived damaged\n",
			(unsigned long long)bad);
	if (ioe || af)
		fprintf(stderr, "  %llu I/O error(s), %llu failed allocation(s)\n",
			(unsigned long long)ioe, (unsigned long long)af);
	if (problems || bad || ioe || af) {
		fprintf(stderr, "%s: rt: list_lock '%s' repeat %u: allocator invariants FAILED "
			"(%lu problem(s))\n", "lockbench", ops->name, repeat_index + 1,
			problems + (bad != 0) + (ioe || af));
		err = -1;
	}
	out->nrt = nrt;
	out->rt_lock_contended = 0;
	for (unsigned int i = 0; i < nrt; i++) {
		out->rt_lock_contended += rtw[i].slab.lock_contended;
		out->rt[i] = rtw[i].st;
		rtw[i].st.alloc_hist = NULL;
		rtw[i].st.wake_hist = NULL;
		rtw[i].st.wake_samples = rtw[i].st.alloc_samples = NULL;
		rtw[i].st.hist = NULL;
		rtw[i].st.overflow_cycles = NULL;
	}
	return err;
}

/*
 * The run's allocator with the knobs asked for and, for a raw list_lock,
 * its non-preemptible-section emulation (its own cost measured before any
 * thread of the run exists).  0, or an errno value with nothing left set up.
 */
static int setup_cache(struct run_state *rs, const struct lb_lock_ops *ops, struct lb_rt_run *out)
{
	const struct lb_rt_config *cfg = rs->cfg;
	struct lb_slub_tuning tuning = lb_slub_tuning_default();
	tuning.cpu_partial = cfg->cpu_partial;
	tuning.min_partial = cfg->min_partial;
	tuning.cpu_mode = (enum lb_slub_cpu_mode)cfg->cpu_slab;
	tuning.partial_mode = (enum lb_slub_partial_mode)cfg->slub_cpu_partial;
	/* The kernel's two caches of an AF_UNIX send (rt_skb.c), their objects
	 * per slab from calculate_order() for this machine's CPUs. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	lb_rt_skb_geometry_of(cfg->datasize, ncpu > 0 ? (unsigned int)ncpu : 1,
			      (enum lb_rt_skb_kernel)cfg->slab_caches, &rs->geo);
	struct lb_slub_cache *caches[2] = { &rs->head, &rs->cache };
	const struct lb_rt_skb_cache *kc[2] = { &rs->geo.head, &rs->geo.data };
	int err = 0;
	for (int i = 0; i < 2 && !err; i++) {
		tuning.obj_stride = kc[i]->object_size;
		tuning.slab_bytes = (uint32_t)(4096u << kc[i]->order);
		size_t payload = kc[i]->object_size - 16; /* the allocator's header */
		err = rs->arena ? lb_slub_cache_init_shared(caches[i], ops, payload, POOL_BYTES,
							   &tuning, rs->arena)
				: lb_slub_cache_init_tuned(caches[i], ops, payload, POOL_BYTES, &tuning);
		if (err && i)
			lb_slub_cache_destroy(&rs->head);
	}
	if (err || !lb_raw_lock_is_raw(ops))
		return err;
	/* Raw sections run just below the RT threads (or mark only, without
	 * SCHED_FIFO). */
	int boost = rs->facts->fifo_permitted && !cfg->sched_other && cfg->priority > 1
			    ? cfg->priority - 1 : 0;
	if (rs->arena ? lb_raw_sections_init_shared(&rs->raw, boost, rs->arena)
		      : lb_raw_sections_init(&rs->raw, boost)) {
		lb_slub_cache_destroy(&rs->cache);
		lb_slub_cache_destroy(&rs->head);
		return ENOMEM;
	}
	rs->cache.raw = &rs->raw;
	rs->head.raw = &rs->raw;
	out->raw_cost_alone_ns = (double)lb_raw_calibrate(&rs->raw, 2000);
	return 0;
}

/* ---- process mode (-P) ------------------------------------------------ */

/* A child's exit status besides 0: its start failed (task->err says why). */
#define CHILD_START_FAILED 3
#define CHILD_ORPHANED 4

/*
 * One task as a process: the sender's or receiver's body, then _exit (no
 * atexit handlers, no flush of the stdio buffers inherited from the parent).
 * The terminal's signals and the ones the parent's output cleanup catches
 * get their default action back (the parent removes its own files); and
 * the child dies with the parent, whatever ends it.
 */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void child_main(struct task *t, pid_t parent)
{
	static const int reset[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		signal(reset[i], reset[i] == SIGPIPE ? SIG_IGN : SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(CHILD_ORPHANED); /* the parent died before the line above */
	if (t->info.role == LB_RT_SENDER)
		sender_main(t);
	else
		receiver_main(t);
	_exit(t->err ? CHILD_START_FAILED : 0);
}

/* Fork task t; its pid, or -1 with errno set. */
static pid_t fork_task(struct task *t)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		child_main(t, parent);
	return pid;
}

static const char *role_word(enum lb_rt_task_role r)
{
	return r == LB_RT_SENDER ? "sender" : "receiver";
}

/* Which of the n children pid is; n when none. */
static unsigned int child_index(_Atomic int *pids, unsigned int n, int pid)
{
	for (unsigned int i = 0; i < n; i++)
		if (atomic_load_explicit(&pids[i], RLX) == pid)
			return i;
	return n;
}

/*
 * Reap every child, in the order they end (a crash is seen at once, not
 * after the tasks that wait for it).  A child killed by a signal or exiting
 * with a status other than 0 or CHILD_START_FAILED voids the run: said on
 * stderr, and the command ends as when the watchdog fires (the RT threads
 * parked, the other children killed and reaped, exit 1): the dead child may
 * have held the list_lock, and an RT thread handed a PI lock from a dead
 * owner, or spinning on a ticket never served, cannot go on.
 */
static void reap_children(_Atomic int *pids, const struct task *tasks, unsigned int n,
			  const struct lb_lock_ops *ops, unsigned int repeat_index)
{
	for (unsigned int left = n; left;) {
		int st = 0;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0 && errno == EINTR)
			continue; /* a signal for this thread: wait on */
		if (pid < 0)
			break; /* ECHILD: none left (the watchdog may have reaped some) */
		unsigned int i = child_index(pids, n, (int)pid);
		if (i == n)
			continue; /* not one of the run's */
		/* Relaxed: the watchdog kills no reaped pid (see watchdog.c). */
		atomic_store_explicit(&pids[i], 0, RLX);
		left--;
		bool clean = WIFEXITED(st) && (WEXITSTATUS(st) == 0 ||
					       WEXITSTATUS(st) == CHILD_START_FAILED);
		if (clean)
			continue;
		if (lb_rt_watchdog_fired())
			continue; /* its kill: the watchdog reports and ends the command */
		char how[64];
		if (WIFSIGNALED(st))
			snprintf(how, sizeof(how), "was killed by signal %d (%s)", WTERMSIG(st),
				 strsignal(WTERMSIG(st)));
		else
			snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(st));
		fprintf(stderr, "lockbench: rt: list_lock '%s' repeat %u: %s g%u/%u (pid %d) %s; "
			"the run is void\n", ops->name, repeat_index + 1, role_word(tasks[i].info.role),
			tasks[i].info.group, tasks[i].info.index, (int)pid, how);
		lb_rt_watchdog_end_command("a task process died, the run is void");
	}
}

/* Bytes of arena a -P run needs (reserved only: MAP_NORESERVE). */
static size_t arena_bytes(const struct lb_lock_ops *ops, unsigned int ntasks, unsigned int nrt)
{
	size_t ctx = (ops->thread_ctx_size + 63) / 64 * 64 + 64;
	return ((size_t)64 << 20) + sizeof(struct run_state) + ntasks * sizeof(struct task) +
	       nrt * sizeof(struct rt_worker) + 2 * (ntasks + nrt + 1) * ctx +
	       2 * (POOL_BYTES / 4096 * sizeof(struct lb_slub_page)) +
	       2 * LB_SLUB_MAX_SLOTS * sizeof(struct lb_slub_pcpu);
}

/* The run's shared state: in an arena with -P, on the heap otherwise. */
static int alloc_state(const struct lb_rt_config *cfg, const struct lb_lock_ops *ops,
		       unsigned int ntasks, unsigned int nrt, struct run_state **rs,
		       struct task **tasks, struct rt_worker **rtw)
{
	if (!cfg->process_mode) {
		*rs = calloc(1, sizeof(**rs));
		*tasks = calloc(ntasks ? ntasks : 1, sizeof(**tasks));
		*rtw = calloc(nrt ? nrt : 1, sizeof(**rtw));
		return *rs && *tasks && *rtw ? 0 : ENOMEM;
	}
	struct lb_arena *arena = lb_arena_create(arena_bytes(ops, ntasks, nrt));
	if (!arena)
		return ENOMEM;
	*rs = lb_arena_alloc(arena, sizeof(**rs), 64);
	*tasks = lb_arena_alloc(arena, (ntasks ? ntasks : 1) * sizeof(**tasks), 64);
	*rtw = lb_arena_alloc(arena, (nrt ? nrt : 1) * sizeof(**rtw), 64);
	if (!*rs || !*tasks || !*rtw) {
		lb_arena_destroy(arena);
		*rs = NULL;
		*tasks = NULL;
		*rtw = NULL;
		return ENOMEM;
	}
	(*rs)->arena = arena;
	return 0;
}

static void free_state(struct run_state *rs, struct task *tasks, struct rt_worker *rtw)
{
	if (rs && rs->arena) {
		lb_arena_destroy(rs->arena); /* rs, tasks and rtw with it */
		return;
	}
	free(rtw);
	free(tasks);
	free(rs);
}

/* One pipe (or socketpair) per receiver into fds[2r], fds[2r+1]; *nopen
 * counts the ones open, for the caller to close.  0 or an errno value. */
static int open_channels(const struct lb_rt_config *cfg, int *fds, unsigned int nrecv,
			 unsigned int *nopen)
{
	for (; *nopen < nrecv; (*nopen)++) {
		int *p = &fds[2 * *nopen];
		int e = cfg->pipe ? pipe2(p, O_CLOEXEC)
				  : socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p);
		if (e)
			return errno;
	}
	return 0;
}

/* The RT threads' workers, spread over the allowed CPUs, each with its
 * statistics allocated.  0 or an errno value (the caller frees them all). */
static int init_rt_workers(struct run_state *rs, struct rt_worker *rtw, unsigned int ntasks)
{
	const struct lb_rt_config *cfg = rs->cfg;
	int cpus[LB_RT_MAX_RT_THREADS];
	unsigned int ncpus = allowed_cpus(cpus, LB_RT_MAX_RT_THREADS);
	for (unsigned int i = 0; i < cfg->rt_threads; i++) {
		rtw[i].rs = rs;
		rtw[i].index = i;
		rtw[i].cpu = cpus[i % ncpus];
		rtw[i].info.role = LB_RT_RT;
		rtw[i].info.index = ntasks + i;
		rtw[i].info.group = i;
		rtw[i].info.slab = &rtw[i].slab;
		rtw[i].st.interval_us = cfg->interval_us + (cfg->histogram_us ? 0 : i * cfg->distance_us);
		int err = stats_alloc(&rtw[i].st, cfg->histogram_us);
		if (err)
			return err;
	}
	return 0;
}

/* What the run started: its children's pids (-P) or threads, and how many. */
struct started {
	pthread_t *tids;    /* the load threads, then the RT threads */
	_Atomic int *pids;  /* -P: the children */
	unsigned int created, rt_created;
};

/*
 * The load tasks (children first with -P, while this process has no RT
 * thread yet; threads after the RT threads otherwise) and the RT threads.
 * On a failure the ones never started are stood in for at the start
 * barrier; the others see it through stop_rt and finish.  0 or an errno.
 */
static int start_tasks(struct run_state *rs, struct task *tasks, unsigned int ntasks,
		       struct rt_worker *rtw, unsigned int nrt, struct started *s)
{
	const struct lb_rt_config *cfg = rs->cfg;
	int err = 0;
	if (cfg->process_mode) {
		/* The children first, while this process has no RT thread yet. */
		lb_rt_watchdog_children(s->pids, ntasks);
		fflush(NULL); /* nothing buffered is written twice */
		for (; s->created < ntasks; s->created++) {
			pid_t pid = fork_task(&tasks[s->created]);
			if (pid < 0) {
				err = errno;
				break;
			}
			atomic_store_explicit(&s->pids[s->created], (int)pid, RLX);
		}
	}
	for (; !err && s->rt_created < nrt; s->rt_created++)
		if ((err = spawn(&s->tids[ntasks + s->rt_created], rt_main, &rtw[s->rt_created])))
			break;
	for (; !err && !cfg->process_mode && s->created < ntasks; s->created++)
		if ((err = spawn(&s->tids[s->created], tasks[s->created].info.role == LB_RT_SENDER
							       ? sender_main : receiver_main,
				 &tasks[s->created])))
			break;
	if (err) {
		/* Stand in for the threads never created; the others see the
		 * error through stop_rt / their own failures and finish. */
		atomic_store_explicit(&rs->stop_rt, 1, RLX);
		for (unsigned int i = s->created + s->rt_created; i < ntasks + nrt; i++)
			lb_barrier_arrive(&rs->start);
	}
	return err;
}

/*
 * From the start barrier to the last task's end (with no groups: the
 * --duration sleep, unless the start failed), then the RT threads stopped
 * and joined: the measured window in *t0, *t1.
 */
static void await_tasks(struct run_state *rs, const struct task *tasks, unsigned int ntasks,
			const struct lb_lock_ops *ops, unsigned int repeat_index, int err,
			const struct started *s, uint64_t *t0, uint64_t *t1)
{
	const struct lb_rt_config *cfg = rs->cfg;
	lb_barrier_wait(&rs->start);
	/* Each task stamps its own start and end: the main thread may not run
	 * at all while a SCHED_FIFO load does. */
	*t0 = lb_now_ns();
	*t1 = *t0;
	if (cfg->process_mode)
		reap_children(s->pids, tasks, s->created, ops, repeat_index);
	else
		for (unsigned int i = 0; i < s->created; i++)
			pthread_join(s->tids[i], NULL);
	if (s->created)
		task_span(tasks, s->created, t0, t1);
	if (!cfg->groups && !err) {
		struct timespec ts = { (time_t)(cfg->duration_ns / LB_NS_PER_S),
				       (long)(cfg->duration_ns % LB_NS_PER_S) };
		*t0 = lb_now_ns();
		/* nanosleep, not clock_nanosleep: Linux times both on
		 * CLOCK_MONOTONIC, but ThreadSanitizer delivers a signal only in
		 * a call it intercepts as blocking, and it does not intercept
		 * clock_nanosleep: a SIGINT waited out the whole --duration. */
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		*t1 = lb_now_ns();
	}
	atomic_store_explicit(&rs->stop_rt, 1, RLX);
	for (unsigned int i = 0; i < s->rt_created; i++)
		join_rt_thread(s->tids[ntasks + i]);
}

int lb_rt_run_one(const struct lb_rt_config *cfg, const struct lb_rt_facts *facts,
		  const struct lb_lock_ops *ops, unsigned int repeat_index, struct lb_rt_run *out)
{
	unsigned int nrecv = cfg->groups * cfg->fds, ntasks = 2 * nrecv, nrt = cfg->rt_threads;
	struct run_state *rs = NULL;
	struct task *tasks = NULL;
	struct rt_worker *rtw = NULL;
	int err = alloc_state(cfg, ops, ntasks, nrt, &rs, &tasks, &rtw);
	int *fds = malloc(sizeof(int) * 2 * (nrecv ? nrecv : 1));
	struct started s = { .tids = calloc(ntasks + nrt + 1, sizeof(pthread_t)),
			     .pids = calloc(ntasks + 1, sizeof(_Atomic int)) };
	struct lb_rt_task_info **infos = calloc(ntasks + nrt + 1, sizeof(*infos));
	unsigned int nfds_open = 0;
	kick_handler_install();
	int *wfds = NULL;

	memset(out, 0, sizeof(*out));
	out->ops = ops;
	out->repeat_index = repeat_index;
	if (!err && (!fds || !s.tids || !s.pids || !infos))
		err = ENOMEM;
	if (err)
		goto free_mem;
	rs->cfg = cfg;
	rs->facts = facts;
	err = ensure_fds(2 * nrecv);
	if (err)
		goto free_mem;
	err = setup_cache(rs, ops, out);
	if (err)
		goto free_mem;
	err = open_channels(cfg, fds, nrecv, &nfds_open);
	if (err)
		goto close_fds;
	/* Receivers read fds[2r], senders write fds[2r+1] (pipe order). */
	wfds = malloc(sizeof(int) * (nrecv ? nrecv : 1));
	if (!wfds) {
		err = ENOMEM;
		goto close_fds;
	}
	for (unsigned int r = 0; r < nrecv; r++)
		wfds[r] = fds[2 * r + 1];
	init_tasks(rs, tasks, fds, wfds);
	err = init_rt_workers(rs, rtw, ntasks);
	if (err)
		goto free_stats;
	for (unsigned int i = 0; i < ntasks; i++)
		infos[i] = &tasks[i].info;
	for (unsigned int i = 0; i < nrt; i++)
		infos[ntasks + i] = &rtw[i].info;

	if (cfg->process_mode)
		lb_barrier_init_shared(&rs->start, ntasks + nrt + 1);
	else
		lb_barrier_init(&rs->start, ntasks + nrt + 1);
	struct lb_perf_counters pc;
	/* Before any thread or child of the run: inherit counts them all
	 * (a child's counts join ours when it exits, before the read). */
	lb_perf_open(&pc);
	uint64_t perf_t0 = lb_now_ns();
	err = start_tasks(rs, tasks, ntasks, rtw, nrt, &s);
	lb_rt_watchdog_arm(infos, ntasks + nrt, ops->name);
	uint64_t t0, t1;
	await_tasks(rs, tasks, ntasks, ops, repeat_index, err, &s, &t0, &t1);
	struct lb_rt_inflight inflight;
	lb_rt_watchdog_disarm(&inflight);
	int64_t pv[LB_PERF_NEVENTS];
	lb_perf_read_close(&pc, pv);
	uint64_t perf_t1 = lb_now_ns();

	/* Every thread is joined (every child reaped): no lock can touch a
	 * context any more. */
	for (unsigned int i = 0; i < s.created; i++)
{
		lb_slub_cpu_release(&tasks[i].slab);
		lb_slub_cpu_release(&tasks[i].head_slab);
	}
	for (unsigned int i = 0; i < s.rt_created; i++)
		lb_slub_cpu_release(&rtw[i].slab);
	for (unsigned int i = 0; i < s.created && !err; i++)
		err = tasks[i].err;
	for (unsigned int i = 0; i < s.rt_created && !err; i++)
		err = rtw[i].err;
	if (!err) {
		err = collect_run(rs, ops, repeat_index, rtw, nrt, pv, t1 - t0, out);
		out->perf_window_s = (double)(perf_t1 - perf_t0) / LB_NS_PER_S;
		out->inflight = inflight;
	}
free_stats:
	for (unsigned int i = 0; i < nrt; i++)
		stats_free(&rtw[i].st);
	free(wfds);
close_fds:
	for (unsigned int i = 0; i < nfds_open; i++) {
		close(fds[2 * i]);
		close(fds[2 * i + 1]);
	}
	lb_slub_cache_destroy(&rs->cache);
	lb_slub_cache_destroy(&rs->head);
	lb_raw_sections_destroy(&rs->raw);
free_mem:
	free(infos);
	free((void *)s.pids);
	free(s.tids);
	free(fds);
	free_state(rs, tasks, rtw);
	return err;
}
