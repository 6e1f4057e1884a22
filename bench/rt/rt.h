/* SPDX-License-Identifier: MIT */
/*
 * rt.h - `lockbench rt`: a hackbench-alike whose message buffers come from a
 * SLUB-like allocator (slab.h) with the lock under test as its list_lock,
 * cyclictest-alike RT threads measuring wake-up and allocation latency
 * alongside, and perf-stat-like counters.  See doc/rt.md.
 */
#ifndef LB_RT_H
#define LB_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lb_lock_ops.h"
#include "slub.h" /* enum lb_slub_site */
#include "lb_stats.h"

#define LB_RT_MAX_LOCKS 16
#define LB_RT_MAX_TASKS 4000     /* hackbench threads per run */
#define LB_RT_MAX_RT_THREADS 64
#define LB_RT_MAX_REPEAT 100
/* Samples kept per RT thread and run, in order, for equal-count verdicts
 * (65536 wake-ups: 65 s at the default 1 ms interval). */
#define LB_RT_SAMPLE_CAP 65536u

struct lb_rt_config {
	const struct lb_lock_ops *locks[LB_RT_MAX_LOCKS];
	size_t nlocks;
	bool compare;
	/* hackbench */
	unsigned int groups, fds, loops, datasize;
	bool pipe;
	bool process_mode;           /* -P: senders and receivers are processes */
	unsigned int repeat;
	/* cyclictest */
	unsigned int rt_threads;
	int priority;                /* SCHED_FIFO priority of the RT threads */
	unsigned int interval_us, distance_us;
	bool mlockall;
	bool rt_alloc;
	unsigned int histogram_us;   /* 0: none */
	uint64_t duration_ns;        /* RT threads alone (groups == 0) */
	bool sched_other;            /* RT threads at normal priority on purpose */
	int load_prio;               /* >0: hackbench threads at SCHED_FIFO load_prio */
	uint64_t spin_budget_ns;
	/* allocator knobs (engines/slub/slub.h's tuning) */
	unsigned int cpu_partial, min_partial;
	unsigned int cpu_slab;       /* enum lb_slub_cpu_mode (--cpu-slab) */
	unsigned int slub_cpu_partial; /* enum lb_slub_partial_mode (--slub-cpu-partial) */
	unsigned int slab_caches;    /* enum lb_rt_skb_kernel (--slab-caches) */
	const char *preset;          /* --preset name, or NULL */
	/* safety */
	uint64_t watchdog_ns, run_timeout_ns;
	bool inject_hang;
	/* output */
	const char *json_path, *csv_path;
	bool quiet;
	bool wide;                   /* --wide: the text as it was, lines unbroken */
};

/* Facts printed in the header and stored in the JSON. */
struct lb_rt_facts {
	const char *command;         /* the command line (the driver's run record) */
	bool fifo_permitted;
	int fifo_errno;              /* why not */
	char preempt_model[96];
	long rt_runtime_us, rt_period_us;
	char clocksource[32];
	bool mlocked;
	int mlock_errno;
	int dma_latency_fd;          /* /dev/cpu_dma_latency held at 0 us, or -1 */
	double steal_s;              /* steal time over the run stage, s; < 0 unknown */
};

/* One RT thread's measures over a run (or merged over repeats). */
struct lb_rt_thread_stats {
	int tid, prio, cpu;
	unsigned int interval_us;
	uint64_t cycles;
	long wake_min_us, wake_act_us, wake_max_us;
	double wake_sum_us;
	uint64_t alloc_n;
	double alloc_min_us, alloc_act_us, alloc_max_us, alloc_sum_us;
	uint64_t alloc_failed;
	struct lb_hist *alloc_hist;  /* ns */
	struct lb_hist *wake_hist;   /* ns, every wake-up (p99/p99.9) */
	/* One run's samples in order (ns, saturated at 2^32-1), prefaulted;
	 * NULL in merged stats.  nwake_kept/nalloc_kept <= LB_RT_SAMPLE_CAP. */
	uint32_t *wake_samples, *alloc_samples;
	uint32_t nwake_kept, nalloc_kept;
	uint64_t *hist;              /* histogram_us buckets of wake latency, or NULL */
	uint64_t overflows;
	uint64_t *overflow_cycles;   /* the first histogram_us cycle numbers */
	uint64_t noverflow_kept;
};

/* Everything one run (one lock, one repeat) measured. */
/* Messages in flight (sent, not yet received) in the watchdog's samples
 * (every 50 ms while some were sent and not all received): hackbench's
 * socket queues, the depth `ss -x`'s Recv-Q shows (doc/rt.md). */
struct lb_rt_inflight {
	uint64_t samples, max;
	double mean;
};
struct lb_rt_run {
	const struct lb_lock_ops *ops;
	unsigned int repeat_index;
	double elapsed_s;            /* hackbench Time: release -> every task done */
	double perf_window_s;        /* the counters' own window (open -> read) */
	/* perf-stat counters (software), -1 when not counted */
	double task_clock_ms;
	int64_t context_switches, cpu_migrations, page_faults;
	bool hw_supported;
	uint64_t allocs, remote_frees, lock_acquires, budget_exhausted;
	double max_hold_us;
	/* The list_lock's gauges: time held in all (its utilisation is that
	 * over elapsed_s), acquisitions that found it taken and their mean
	 * time to acquire; gauged false for a lock without trylock. */
	bool lock_gauged;
	double hold_sum_s;
	uint64_t lock_contended;
	double contended_wait_us;
	uint64_t rt_lock_contended;  /* of those, taken by the RT threads */
	/* Per message: acquisitions of each cache's list_lock ([0] the head
	 * cache, [1] the data cache), their objects per slab, the messages. */
	uint64_t cache_acquires[2], messages;
	/* Acquisitions of both caches by why they were taken (enum lb_slub_site). */
	uint64_t site_acquires[LB_SLUB_SITES];
	/* Free objects each cache's partial slabs brought when taken ([0] head). */
	uint64_t partial_take_objs[2], partial_takes[2];
	uint64_t refills[2], cpu_partial_puts[2], cpu_partial_refills[2]; /* slub.h's, per cache */
	uint64_t slow_frees[2];      /* frees off the cpu slab's fast path (__slab_free), per cache */
	uint64_t sends_full;         /* sends that found the receiver's socket full */
	struct lb_rt_inflight inflight;
	uint64_t sender_cpu_ns, receiver_cpu_ns; /* the load tasks' CPU time, by role */
	uint32_t objs_per_slab[2];
	/* Contenders at an acquisition (holder + waiters): mean, maximum. */
	double contenders_mean;
	uint64_t contenders_max;
	/* Running contenders at the attempts that found list_lock taken, both
	 * caches (engines/slub/slub.h; doc/rt.md, "Running contenders"): bins
	 * 1 / 2 / 3+ with waiters that may sleep counted asleep (lo) and
	 * running (hi), and the owners seen off their CPU (announced, or held
	 * past LB_SCHED_PREEMPT_GAP_NS). */
	uint64_t running_lo[3], running_hi[3], owner_off_announced, owner_off_held;
	/* PER_CPU fast path: commits and restarts. */
	uint64_t fast_commits, fast_restarts;
	/* Raw-section emulation (raw_section.h): on for a raw list_lock. */
	bool raw_on;
	uint64_t raw_sections, raw_boost_failures, raw_rt_waits, raw_entry_yields;
	uint64_t raw_contended, raw_boost_calls; /* contended sections; sched_setscheduler calls */
	double raw_cost_ns;          /* per section in the run (wall: includes a
				      * preemption at the section's end) */
	double raw_cost_alone_ns;    /* median enter+exit pair, measured alone */
	double raw_wait_ns;          /* of raw_cost_ns: entry waits and unboost calls */
	double raw_rt_wait_max_us;   /* longest RT start delayed by a section */
	unsigned int nrt;
	struct lb_rt_thread_stats rt[LB_RT_MAX_RT_THREADS];
	char describe[LB_DESCRIBE_MAX];
};

/* Parse argv (argv[0] == "rt"); exits 2 on bad input, 0 after --help. */
void lb_rt_parse(int argc, char **argv, struct lb_rt_config *cfg);
struct lb_opt_cmd;
extern const struct lb_opt_cmd lb_rt_cmd; /* rt_opts.c */
extern const struct lb_workload_schema lb_schema_rt; /* rt_report.c */

/* Host facts; probes SCHED_FIFO and applies --mlockall. */
void lb_rt_facts_get(const struct lb_rt_config *cfg, struct lb_rt_facts *f);

/*
 * One run: a fresh allocator with `ops` as list_lock, the hackbench load
 * and the RT threads.  0, or -1 when the invariants failed (reported on
 * stderr; out is filled), or an errno value when it could not run.
 */
int lb_rt_run_one(const struct lb_rt_config *cfg, const struct lb_rt_facts *facts,
		  const struct lb_lock_ops *ops, unsigned int repeat_index, struct lb_rt_run *out);
void lb_rt_run_free(struct lb_rt_run *r);

/* Merge per-thread RT stats of src into dst (same threads, later repeat). */
void lb_rt_stats_merge(struct lb_rt_thread_stats *dst, const struct lb_rt_thread_stats *src,
		       unsigned int histogram_us);

/* Watchdog (watchdog.c): one thread for the whole command. */
struct lb_rt_task_info;
/* --watchdog under LB_RT_WATCHDOG_MIN_NS: exit 2 naming the floor.  Below
 * 1 s a busy 2-CPU guest (a SCHED_FIFO load, other jobs) stalls progress
 * long enough to fire it on a healthy run (100 ms did). */
#define LB_RT_WATCHDOG_MIN_NS 1000000000ull
void lb_rt_watchdog_check_floor(const struct lb_rt_config *cfg);
int lb_rt_watchdog_start(const struct lb_rt_config *cfg, bool fifo);
/* The current run's tasks, for progress and the thread dump; NULL between runs. */
void lb_rt_watchdog_arm(struct lb_rt_task_info *const *tasks, unsigned int ntasks, const char *lock);
/* -P: the run's child processes (pids[0..n), 0 for none), killed with
 * SIGKILL when the watchdog ends the command; cleared by disarm.  The run
 * stores 0 in a slot once it has reaped that child. */
void lb_rt_watchdog_children(_Atomic int *pids, unsigned int n);
/* Whether the watchdog is ending the command (its kills are not a child's failure). */
bool lb_rt_watchdog_fired(void);
/* -P, a task process died: what the watchdog does when it fires (dump, the
 * RT threads parked, the children killed and reaped, exit 1).  A dead child
 * may hold the list_lock: no RT thread of the run can go on safely. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void lb_rt_watchdog_end_command(const char *why);
/* Between runs; inflight (may be NULL) gets the run's samples. */
void lb_rt_watchdog_disarm(struct lb_rt_inflight *inflight);

/* What a task is doing, for the thread dump. */
enum lb_rt_task_role { LB_RT_SENDER, LB_RT_RECEIVER, LB_RT_RT };
struct lb_slub_cpu;
struct lb_rt_task_info {
	enum lb_rt_task_role role;
	unsigned int group, index;
	_Atomic int tid;
	_Atomic uint64_t done;       /* messages, or RT cycles */
	uint64_t total;              /* messages to do (0 for RT threads) */
	_Atomic int state;           /* enum lb_rt_task_state */
	struct lb_slub_cpu *slab;    /* for the list_lock state */
};
enum lb_rt_task_state {
	LB_RT_ST_START, LB_RT_ST_RUN, LB_RT_ST_WRITE, LB_RT_ST_READ, LB_RT_ST_SLEEP,
	LB_RT_ST_ALLOC, LB_RT_ST_DONE, LB_RT_ST_HUNG
};

/* Reports (rt_report.c). */
void lb_rt_print_header(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f);
void lb_rt_print_run_line(FILE *out, const struct lb_rt_run *r);
void lb_rt_print_lock_block(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f,
			    const struct lb_rt_run *runs, size_t nruns,
			    const struct lb_rt_thread_stats *merged, unsigned int nrt);
void lb_rt_print_histogram(FILE *out, const struct lb_rt_thread_stats *rt, unsigned int nrt,
			   unsigned int histogram_us);
void lb_rt_print_compare(FILE *out, const struct lb_rt_config *cfg,
			 struct lb_rt_run *const *runs_by_lock, size_t nrepeat,
			 struct lb_rt_thread_stats *const *merged_by_lock, unsigned int nrt);
void lb_rt_write_json(FILE *out, const struct lb_rt_config *cfg, const struct lb_rt_facts *f,
		      struct lb_rt_run *const *runs_by_lock, size_t nrepeat,
		      struct lb_rt_thread_stats *const *merged_by_lock, unsigned int nrt,
		      bool interrupted);
void lb_rt_write_csv(FILE *out, const struct lb_rt_config *cfg,
		     struct lb_rt_run *const *runs_by_lock, size_t nrepeat);

/* perf-stat style "X +- Y" over n samples: the standard error of the mean. */
double lb_rt_sem(const double *v, size_t n, double *mean);

/* The `T:` line of cyclictest for one thread (no newline). */
void lb_rt_format_t_line(char *buf, size_t len, unsigned int index,
			 const struct lb_rt_thread_stats *s);

#endif /* LB_RT_H */
