/* SPDX-License-Identifier: MIT */
/*
 * sim_rt.c - `lockbench sim --workload rt` on the engine (sim_rt.h; doc/sim.md,
 * "The rt workload").  One world: an init thread makes the two caches of an
 * AF_UNIX send (bench/rt/rt_skb.c's geometry for the simulated CPU count;
 * the allocator's own code, its simulated copy); hackbench's groups of
 * `fds` senders and `fds` receivers (fair class, allowed the first `cpus`
 * CPUs) start together; each sender sends `loops` messages to every
 * receiver of its group: a head and a data head allocated, `send_ns` of
 * work, the message onto the receiver's socket queue; each receiver takes
 * them off, `recv_ns` of work, frees both.  A socket queue holds what an
 * AF_UNIX socket's default send buffer does (net.core.wmem_default, 212992
 * bytes, over the message's data and skb overhead); a full one blocks its
 * senders, an empty one its receiver, on futexes.  The socket's own locks
 * are not modelled: a queue operation costs its line and the futex calls.
 * One SCHED_FIFO thread per CPU wakes every `interval_ns` (cyclictest
 * -Smqp99, clock_nanosleep at an absolute time) and records how late it
 * ran.  hackbench's end stops the clock and the gauges; the invariants of
 * both caches are checked after every task gave its cpu slab back.
 */
#include "sim_rt.h"
#include "sim_cell.h"
#include "sim_hooks.h"
#include "sim_slub.h"
#include "rt_skb.h"
#include "lb_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIMR_SNDBUF 212992u         /* net.core.wmem_default */
#define SIMR_SKB_OVERHEAD 640u      /* the head object and its shared info (rt_skb.c) */
#define SIMR_START_NS 200000u       /* every task made its cpu records by then */
#define SIMR_POOL_BYTES ((size_t)1 << 30) /* reserved per cache, as lockbench rt's */
#define SIMR_MAGIC 0x6c62736d72747331ull

/* One receiver's socket; the counters are plain memory changed with no
 * yield point between a look and its change (the engine runs one virtual
 * thread at a time), after the line's cost was charged. */
struct simr_queue {
	uint32_t count, head, pushes, pops;
	uint32_t recv_waiting, send_waiting;
	void **slot;
} __attribute__((aligned(64)));

/* Each cpu record on lines of its own: the simulated coherence is keyed
 * by address, so records sharing a line by where the host's allocator put
 * them would make the same seed give other events. */
struct simr_task {
	struct lb_slub_cpu head __attribute__((aligned(64)));
	struct lb_slub_cpu data __attribute__((aligned(64)));
	unsigned int group, index, id;
	bool sender;
	uint64_t rng;                /* its cost draws' stream (--costs) */
	uint64_t spent_ns;           /* the socket path's work it charged */
};

static struct {
	const struct lb_simr_config *cfg;
	const struct lb_lock_ops *ops;
	struct lb_sim_world *world;
	struct lb_slub_cache head, data;
	struct lb_rt_skb_geometry geo;
	int init_err;
	bool caches_made;
	uint32_t ready;              /* the init thread is done (a futex word) */
	unsigned int qcap, receivers_left, tasks_done, cpu_list[LB_SIM_MAX_CPUS];
	unsigned int ntasks;
	struct simr_queue *queues;
	struct simr_task *tasks;
	uint64_t start, end;
	bool stop_rt;
	struct lb_sim_stats start_stats, end_stats;
	uint64_t bad_messages, alloc_failures;
	uint64_t *wake_ns;
	size_t nwake, capwake;
	bool wake_oom;
} S;

/* ---- the raw list_lock: qspinlock with preemption off around it ---- */

/* The list_lock's vtable (lb_simr_list_lock): a copy of the simulated
 * lock's, and for raw its lock and unlock inside preemption-off regions. */
static const struct lb_lock_ops *raw_inner;
static struct lb_lock_ops raw_ops;

static void raw_lock(void *lock, void *tctx)
{
	lb_sim_preempt_disable(); /* raw_spin_lock: preempt_disable, then the arch lock */
	raw_inner->lock(lock, tctx);
}

static void raw_unlock(void *lock, void *tctx)
{
	raw_inner->unlock(lock, tctx);
	lb_sim_preempt_enable(); /* a wake-up marked meanwhile preempts here */
}

static bool raw_trylock(void *lock, void *tctx)
{
	lb_sim_preempt_disable();
	if (raw_inner->trylock(lock, tctx))
		return true;
	lb_sim_preempt_enable();
	return false;
}

const struct lb_lock_ops *lb_simr_list_lock(const char *name)
{
	bool raw = !strcmp(name, "raw");
	const struct lb_lock_ops *ops = lb_simb_lock_find(raw ? "qspinlock"
							  : !strcmp(name, "pi") ? "rtmutex" : name);
	if (!ops)
		return NULL; /* raw, pi, or any lock the simulator runs (preemptible) */
	raw_inner = ops;
	raw_ops = *ops;
	/* On lines of its own, as sim_run.c places a cell's lock: the
	 * simulated coherence is keyed by address (same seed, same events). */
	if (raw_ops.lock_align < 64)
		raw_ops.lock_align = 64;
	if (raw) {
		raw_ops.lock = raw_lock;
		raw_ops.unlock = raw_unlock;
		raw_ops.trylock = raw_trylock;
		raw_ops.timedlock = NULL;
	}
	return &raw_ops;
}

/* ---- tasks ---- */

static void allow_cpus(void)
{
	lb_sim_set_affinity(S.cpu_list, S.cfg->cpus);
}

static void init_thread(void *arg)
{
	(void)arg;
	const struct lb_simr_config *cfg = S.cfg;
	allow_cpus();
	lb_rt_skb_geometry(cfg->datasize, cfg->cpus, &S.geo);
	struct lb_slub_cache *caches[2] = { &S.head, &S.data };
	const struct lb_rt_skb_cache *kc[2] = { &S.geo.head, &S.geo.data };
	struct lb_slub_tuning tuning = lb_slub_tuning_default();
	tuning.cpu_mode = LB_SLUB_PER_CPU; /* lockbench rt's default (--cpu-slab percpu) */
	for (int i = 0; i < 2 && !S.init_err; i++) {
		tuning.obj_stride = kc[i]->object_size;
		tuning.slab_bytes = (uint32_t)(4096u << kc[i]->order);
		S.init_err = lb_slub_cache_init_tuned(caches[i], S.ops, kc[i]->object_size - 16,
						      SIMR_POOL_BYTES, &tuning);
		if (S.init_err && i)
			lb_slub_cache_destroy(&S.head);
		/* The allocator's cycle counter reads virtual ns here
		 * (sim_slub_interpose.h): the running gauge's owner-held rule
		 * in virtual ns, not in the host's cycles. */
		if (!S.init_err)
			caches[i]->owner_gap_cycles = LB_SCHED_PREEMPT_GAP_NS;
	}
	S.caches_made = !S.init_err;
	/* Every other thread waits for this: the tasks' start is set from it
	 * (time for each to make its cpu records). */
	S.start = lb_sim_now() + SIMR_START_NS;
	S.ready = 1;
	lb_sim_futex_wake(&S.ready, UINT32_MAX);
}

static void wait_ready(void)
{
	while (!S.ready)
		lb_sim_futex_wait(&S.ready, 0, LB_SIM_NO_DEADLINE);
}

static void queue_push(struct simr_queue *q, void *msg)
{
	for (;;) {
		lb_sim_access(&q->count, LB_SIM_RMW);
		if (q->count < S.qcap) {
			q->slot[(q->head + q->count) % S.qcap] = msg;
			q->count++;
			q->pushes++;
			if (q->recv_waiting)
				lb_sim_futex_wake(&q->pushes, 1);
			return;
		}
		uint32_t seen = q->pops;
		q->send_waiting++;
		lb_sim_futex_wait(&q->pops, seen, LB_SIM_NO_DEADLINE);
		q->send_waiting--;
	}
}

static void *queue_pop(struct simr_queue *q)
{
	for (;;) {
		lb_sim_access(&q->count, LB_SIM_RMW);
		if (q->count) {
			void *msg = q->slot[q->head];
			q->head = (q->head + 1) % S.qcap;
			q->count--;
			q->pops++;
			if (q->send_waiting)
				lb_sim_futex_wake(&q->pops, 1);
			return msg;
		}
		uint32_t seen = q->pushes;
		q->recv_waiting = 1;
		lb_sim_futex_wait(&q->pushes, seen, LB_SIM_NO_DEADLINE);
		q->recv_waiting = 0;
	}
}

/* One message's socket-path work: a draw from the calibrated table, or
 * the constant.  Each task draws from a stream of its own, seeded from
 * the run's seed and its id (lb_simr_rng_seed): the same seed gives the
 * same draws, and a task's n-th message costs the same whichever list_lock
 * ran and whenever the scheduler let it run (raw and PI see one sample). */
static uint64_t socket_cost(struct simr_task *t, const struct lb_simr_dist *d, uint64_t constant)
{
	uint64_t ns = d ? lb_simr_dist_draw(d, &t->rng) : constant;
	t->spent_ns += ns;
	return ns;
}

static void sender(struct simr_task *t)
{
	const struct lb_simr_config *cfg = S.cfg;
	for (unsigned int l = 0; l < cfg->loops; l++)
		for (unsigned int r = 0; r < cfg->fds; r++) {
			/* As __alloc_skb: the head, then the data head it points at. */
			uint64_t *msg = lb_slub_alloc(&t->head);
			void *data = msg ? lb_slub_alloc(&t->data) : NULL;
			if (msg && !data) {
				lb_slub_free(&t->head, msg);
				msg = NULL;
			}
			/* A failed allocation (a pool a broken list_lock leaked)
			 * is counted, and the message still goes out, naming no
			 * object, as lockbench rt's sender does. */
			if (msg) {
				msg[0] = (uint64_t)(uintptr_t)data;
				msg[1] = (uint64_t)(uintptr_t)data ^ SIMR_MAGIC;
			} else {
				S.alloc_failures++;
			}
			lb_sim_spend(socket_cost(t, cfg->costs ? &cfg->costs->send : NULL,
						 cfg->send_ns));
			queue_push(&S.queues[t->group * cfg->fds + r], msg);
		}
}

static void receiver(struct simr_task *t)
{
	const struct lb_simr_config *cfg = S.cfg;
	struct simr_queue *q = &S.queues[t->group * cfg->fds + t->index];
	for (uint64_t n = 0; n < (uint64_t)cfg->fds * cfg->loops; n++) {
		uint64_t *msg = queue_pop(q);
		lb_sim_spend(socket_cost(t, cfg->costs ? &cfg->costs->recv : NULL, cfg->recv_ns));
		if (!msg)
			continue; /* counted by its sender */
		if ((msg[0] ^ SIMR_MAGIC) != msg[1]) {
			S.bad_messages++;
			continue;
		}
		/* consume_skb: the data head, then the head. */
		lb_slub_free(&t->data, (void *)(uintptr_t)msg[0]);
		lb_slub_free(&t->head, msg);
	}
	if (--S.receivers_left == 0) {
		S.end = lb_sim_now();
		S.end_stats = lb_sim_stats(S.world);
		S.stop_rt = true;
	}
}

static void task_main(void *arg)
{
	struct simr_task *t = arg;
	allow_cpus();
	wait_ready();
	if (S.init_err)
		return;
	if (lb_slub_cpu_init(&S.head, &t->head, t->id) ||
	    lb_slub_cpu_init(&S.data, &t->data, t->id)) {
		S.init_err = ENOMEM;
		return;
	}
	if (lb_sim_now() < S.start)
		lb_sim_sleep_until(S.start);
	if (t->sender)
		sender(t);
	else
		receiver(t);
	lb_slub_cpu_fini(&t->head);
	lb_slub_cpu_fini(&t->data);
	S.tasks_done++;
}

/* The gauges' start: a snapshot when the tasks leave their barrier. */
static void clock_thread(void *arg)
{
	(void)arg;
	wait_ready();
	lb_sim_sleep_until(S.start);
	S.start_stats = lb_sim_stats(S.world);
}

static void record_wake(uint64_t late)
{
	if (S.nwake == S.capwake) {
		size_t cap = S.capwake ? 2 * S.capwake : 4096;
		uint64_t *p = realloc(S.wake_ns, cap * sizeof(*p));
		if (!p) {
			S.wake_oom = true;
			return;
		}
		S.wake_ns = p;
		S.capwake = cap;
	}
	S.wake_ns[S.nwake++] = late;
}

/* cyclictest's thread on its CPU: absolute wake-ups one interval apart;
 * missed ones are skipped, as cyclictest does. */
static void rt_thread(void *arg)
{
	(void)arg;
	wait_ready();
	uint64_t next = S.start + S.cfg->interval_ns;
	while (!S.stop_rt) {
		lb_sim_sleep_until(next);
		uint64_t now = lb_sim_now();
		if (S.stop_rt)
			break;
		record_wake(now - next);
		while (next <= now)
			next += S.cfg->interval_ns;
	}
}

/* ---- the run ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(const uint64_t *sorted, size_t n, double p)
{
	if (!n)
		return 0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

static int setup(const struct lb_simr_config *cfg)
{
	unsigned int nq = cfg->groups * cfg->fds;
	S.ntasks = 2 * nq;
	/* An AF_UNIX stream socket's send buffer over a message's truesize. */
	S.qcap = SIMR_SNDBUF / (cfg->datasize + SIMR_SKB_OVERHEAD);
	if (S.qcap < 1)
		S.qcap = 1;
	S.queues = aligned_alloc(64, (size_t)nq * sizeof(*S.queues));
	S.tasks = aligned_alloc(64, S.ntasks * sizeof(*S.tasks));
	if (!S.queues || !S.tasks)
		return ENOMEM;
	memset(S.tasks, 0, S.ntasks * sizeof(*S.tasks));
	memset(S.queues, 0, (size_t)nq * sizeof(*S.queues));
	for (unsigned int i = 0; i < nq; i++)
		if (!(S.queues[i].slot = calloc(S.qcap, sizeof(void *))))
			return ENOMEM;
	for (unsigned int i = 0; i < cfg->cpus; i++)
		S.cpu_list[i] = i;
	S.receivers_left = nq;
	return 0;
}

static void teardown(unsigned int nq)
{
	for (unsigned int i = 0; S.queues && i < nq; i++)
		free(S.queues[i].slot);
	free(S.queues);
	if (S.tasks)
		for (unsigned int i = 0; i < S.ntasks; i++) {
			lb_slub_cpu_release(&S.tasks[i].head);
			lb_slub_cpu_release(&S.tasks[i].data);
		}
	free(S.tasks);
	free(S.wake_ns);
	if (S.caches_made) {
		lb_slub_cache_destroy(&S.head);
		lb_slub_cache_destroy(&S.data);
	}
	if (S.world)
		lb_sim_destroy(S.world);
	memset(&S, 0, sizeof(S));
}

static int spawn_all(const struct lb_simr_config *cfg)
{
	if (lb_sim_spawn(S.world, init_thread, NULL) < 0 ||
	    lb_sim_spawn(S.world, clock_thread, NULL) < 0)
		return ENOMEM;
	for (unsigned int i = 0; i < S.ntasks; i++) {
		struct simr_task *t = &S.tasks[i];
		t->id = i;
		t->sender = i % 2 == 0;
		t->group = i / (2 * cfg->fds);
		t->index = i / 2 % cfg->fds;
		t->rng = lb_simr_rng_seed(cfg->seed, i);
		if (lb_sim_spawn(S.world, task_main, t) < 0)
			return ENOMEM;
	}
	for (unsigned int c = 0; c < cfg->cpus; c++) {
		int tid = lb_sim_spawn(S.world, rt_thread, NULL);
		if (tid < 0 || lb_sim_thread_pin(S.world, tid, c) ||
		    lb_sim_thread_fifo(S.world, tid, cfg->rt_prio))
			return ENOMEM;
	}
	return 0;
}

static void fill(const struct lb_simr_config *cfg, struct lb_simr_result *out, unsigned alive)
{
	out->messages = (uint64_t)cfg->groups * cfg->fds * cfg->fds * cfg->loops;
	out->elapsed_ns = S.end > S.start ? S.end - S.start : 0;
	/* The gauges over hackbench's run, from its start to its last receiver. */
	struct lb_sim_stats *e = &out->stats, *a = &S.start_stats;
	*e = S.end_stats;
	e->events -= a->events;
	e->switches -= a->switches;
	e->transfers -= a->transfers;
	e->invalidations -= a->invalidations;
	e->wakeups -= a->wakeups;
	e->preemptions -= a->preemptions;
	e->migrations -= a->migrations;
	e->busy_ns -= a->busy_ns;
	double capacity = (double)cfg->cpus * (double)out->elapsed_ns;
	out->idle_share = capacity > 0 ? 1.0 - (double)e->busy_ns / capacity : 0;
	out->list_lock_acquires = atomic_load(&S.head.lock_acquires) +
				  atomic_load(&S.data.lock_acquires);
	_Static_assert(LB_SLUB_RUNNING_BINS == 3, "ll_running's bins are slub.c's");
	const struct lb_slub_cache *cache[2] = { &S.head, &S.data };
	double ns_per_cycle = lb_cycles_to_ns(1000000000u) / 1e9;
	for (int k = 0; k < 2; k++) {
		/* hold_ns_sum went through lb_cycles_to_ns() from virtual ns
		 * read as cycles: undo the host's factor. */
		out->ll_hold_ns += (uint64_t)((double)atomic_load(&cache[k]->hold_ns_sum) /
					      ns_per_cycle);
		out->ll_found_taken += atomic_load(&cache[k]->lock_contended);
		for (int b = 0; b < 3; b++)
			out->ll_running[b] += atomic_load(&cache[k]->running_lo[b]);
		out->ll_owner_off += atomic_load(&cache[k]->owner_off_announced) +
				     atomic_load(&cache[k]->owner_off_held);
	}
	if (S.nwake)
		qsort(S.wake_ns, S.nwake, sizeof(*S.wake_ns), cmp_u64);
	for (unsigned int i = 0; i < S.ntasks; i++)
		*(S.tasks[i].sender ? &out->send_total_ns : &out->recv_total_ns) +=
			S.tasks[i].spent_ns;
	out->rt_wakes = S.nwake;
	out->rt_p50_ns = pct(S.wake_ns, S.nwake, 0.50);
	out->rt_p99_ns = pct(S.wake_ns, S.nwake, 0.99);
	out->rt_max_ns = S.nwake ? S.wake_ns[S.nwake - 1] : 0;
	if (S.ops->counters) {
		struct lb_counter d[LB_MAX_COUNTERS];
		out->ncounters = S.ops->counters(S.head.list_lock, out->counters, LB_MAX_COUNTERS);
		size_t nd = S.ops->counters(S.data.list_lock, d, LB_MAX_COUNTERS);
		for (size_t i = 0; i < out->ncounters && i < nd; i++)
			out->counters[i].value += d[i].value; /* the same lock: the same names */
	}
	out->problems = lb_slub_check(&S.head, 0, stderr) + lb_slub_check(&S.data, 0, stderr);
	out->ok = !alive && !out->problems && !S.bad_messages && !S.alloc_failures &&
		  !S.wake_oom;
	if (S.bad_messages || S.alloc_failures)
		fprintf(stderr, "lockbench: sim: rt: %llu bad messages, %llu failed allocations\n",
			(unsigned long long)S.bad_messages, (unsigned long long)S.alloc_failures);
}

int lb_simr_run(const struct lb_simr_config *cfg, const struct lb_sim_machine *m,
		struct lb_simr_result *out)
{
	memset(out, 0, sizeof(*out));
	memset(&S, 0, sizeof(S));
	S.cfg = cfg;
	S.ops = lb_simr_list_lock(cfg->list_lock);
	if (!S.ops)
		return EINVAL;
	struct timespec h0, h1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &h0);
	int err = setup(cfg);
	S.world = err ? NULL : lb_sim_create(m, cfg->seed);
	if (!err && !S.world)
		err = ENOMEM;
	/* rtmutex's spinners ask the engine whether the owner is on a CPU
	 * (the kernel's owner_on_cpu rule); each task binds its record.
	 * rtmutex's hooks only: slub.c's running-contenders gauge stays on
	 * its stand-in, as in the native lockbench rt it is compared with. */
	lb_simi_set_sched_truth(LB_SIMI_TRUTH_RTMUTEX);
	if (!err)
		err = spawn_all(cfg);
	unsigned alive = 0;
	if (!err) {
		/* An hour of virtual time: a run still going then is reported as
		 * not finished (a task that never got list_lock). */
		alive = lb_sim_run(S.world, 3600ull * 1000000000ull);
		err = S.init_err;
	}
	if (!err && S.caches_made)
		fill(cfg, out, alive);
	lb_simi_set_sched_truth(0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &h1);
	out->host_cpu_s = (double)(h1.tv_sec - h0.tv_sec) + (double)(h1.tv_nsec - h0.tv_nsec) / 1e9;
	teardown(cfg->groups * cfg->fds);
	return err;
}
