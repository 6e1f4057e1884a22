/* SPDX-License-Identifier: MIT */
/*
 * sim_hooks.c - the simulated side of sim_interpose.h: the locks' atomics,
 * spin waits and system calls as the engine's thread-side calls
 * (engines/sim/sim.h, doc/sim.md "Interposition").  Compiled natively
 * (it is not force-included): its own accesses are the engine's.
 */
#include "sim_hooks.h"
#include "sim.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A lock call the simulator cannot model: one line, and the run ends
 * (a half-simulated run would report nonsense). */
static _Noreturn void hooks_die(const char *what)
{
	fprintf(stderr, "lockbench: sim: %s\n", what);
	exit(1);
}

static void need_inside(const char *call)
{
	if (!lb_sim_inside()) {
		fprintf(stderr, "lockbench: sim: %s called outside a virtual thread\n", call);
		exit(1);
	}
}

void *lb_simi_access(const volatile void *p, int kind)
{
	/* The hook's kinds are the engine's (one call per simulated access:
	 * no mapping, and the engine itself ignores a host-side access). */
	_Static_assert(LB_SIM_LOAD == 0 && LB_SIM_STORE == 1 && LB_SIM_RMW == 2,
		       "sim_interpose.h's LB_SIMI_*_ kinds are lb_sim_access_kind's");
	lb_sim_access((const void *)(uintptr_t)p, (enum lb_sim_access_kind)kind);
	return (void *)(uintptr_t)p;
}

void lb_simi_cond_wait(const void *p)
{
	need_inside("a spin wait");
	lb_sim_cond_wait(p, LB_SIM_NO_DEADLINE);
}

void lb_simi_cond_wait_until(const void *p)
{
	need_inside("a spin wait");
	lb_sim_cond_wait(p, lb_sim_now() + lb_sim_machine_running()->tick);
}

void lb_simi_cond_wait_pauses(const void *p, uint32_t n)
{
	need_inside("a spin wait");
	/* One pause is one pause: a store could cut it short by less than a
	 * pause's time, and a park costs the host a switch a pause does not
	 * (the same events and figures as the bare pause it replaced). */
	if (n <= 1) {
		lb_sim_pause();
		return;
	}
	/* A pause costs l1_hit (lb_sim_pause): n of them are the loop's
	 * native wait, which a store to the line may only cut short. */
	uint64_t start = lb_sim_now();
	lb_sim_cond_wait(p, start + (uint64_t)n * lb_sim_machine_running()->l1_hit);
	/* Written before we parked (or n was 0): the native wait is still at
	 * least one pause, and a loop must not look again at the same
	 * instant. */
	if (lb_sim_now() == start)
		lb_sim_pause();
}

void lb_simi_pause(void)
{
	need_inside("a pause");
	lb_sim_pause();
}

_Atomic(unsigned int) *lb_simi_spin_ps_slot(void)
{
	need_inside("a spin budget");
	return lb_sim_spin_cache();
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* FUTEX_WAIT (relative timeout) and FUTEX_WAIT_BITSET (absolute, on the
 * virtual clock): 0, or -1 with EAGAIN / ETIMEDOUT as the kernel's. */
static long futex_wait(const uint32_t *uaddr, uint32_t val, const struct timespec *timeout,
		       int absolute)
{
	uint64_t deadline = LB_SIM_NO_DEADLINE;
	if (timeout)
		deadline = absolute ? ts_ns(timeout) : lb_sim_now() + ts_ns(timeout);
	int r = lb_sim_futex_wait(uaddr, val, deadline);
	if (r == 0)
		return 0;
	errno = r == 1 ? EAGAIN : ETIMEDOUT;
	return -1;
}

/* A PI futex call's result as the kernel's: 0, or -1 with its errno. */
static long pi_result(int r)
{
	switch (r) {
	case LB_SIM_PI_OK:
		return 0;
	case LB_SIM_PI_TIMEDOUT:
		errno = ETIMEDOUT;
		break;
	case LB_SIM_PI_DEADLOCK:
		errno = EDEADLK;
		break;
	case LB_SIM_PI_NOOWNER:
		errno = ESRCH;
		break;
	default:
		errno = EPERM;
		break;
	}
	return -1;
}

long lb_simi_syscall(long nr, ...)
{
	need_inside("a system call");
	if (nr == SYS_gettid)
		return lb_sim_self() + 1; /* never 0: futex-owner words hold it */
	if (nr != SYS_futex)
		hooks_die("a lock made a system call the simulator does not model");
	va_list ap;
	va_start(ap, nr);
	const uint32_t *uaddr = va_arg(ap, const uint32_t *);
	int op = va_arg(ap, int);
	uint32_t val = va_arg(ap, uint32_t);
	const struct timespec *timeout = va_arg(ap, const struct timespec *);
	va_end(ap);
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		return futex_wait(uaddr, val, timeout, 0);
	case FUTEX_WAIT_BITSET:
		return futex_wait(uaddr, val, timeout, 1);
	case FUTEX_WAKE:
		return (long)lb_sim_futex_wake(uaddr, val);
	case FUTEX_LOCK_PI:
		/* The kernel's timeout here is absolute (CLOCK_REALTIME):
		 * every clock is the virtual one. */
		return pi_result(lb_sim_futex_lock_pi((uint32_t *)(uintptr_t)uaddr,
						      timeout ? ts_ns(timeout) : LB_SIM_NO_DEADLINE));
	case FUTEX_UNLOCK_PI:
		return pi_result(lb_sim_futex_unlock_pi((uint32_t *)(uintptr_t)uaddr));
	default:
		hooks_die("a futex operation other than WAIT, WAIT_BITSET, WAKE, LOCK_PI and "
			  "UNLOCK_PI (not modelled)");
	}
}

int lb_simi_sched_yield(void)
{
	need_inside("sched_yield");
	lb_sim_yield();
	return 0;
}

int lb_simi_sched_getcpu(void)
{
	need_inside("sched_getcpu");
	return (int)lb_sim_getcpu();
}

int lb_simi_clock_gettime(clockid_t clk, struct timespec *ts)
{
	(void)clk; /* every clock is the virtual one */
	need_inside("clock_gettime");
	uint64_t now = lb_sim_now();
	ts->tv_sec = (time_t)(now / 1000000000u);
	ts->tv_nsec = (long)(now % 1000000000u);
	return 0;
}

int lb_simi_nanosleep(const struct timespec *req, struct timespec *rem)
{
	need_inside("nanosleep");
	lb_sim_sleep(ts_ns(req));
	if (rem)
		rem->tv_sec = rem->tv_nsec = 0;
	return 0;
}

int lb_simi_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	(void)pid; /* the caller's own: the locks ask about themselves only */
	need_inside("sched_getaffinity");
	unsigned int n = lb_sim_machine_cpus(lb_sim_machine_running());
	CPU_ZERO_S(size, set);
	for (unsigned int c = 0; c < n && c < size * 8; c++)
		if (lb_sim_allowed(c))
			CPU_SET_S(c, size, set);
	return 0;
}

long lb_simi_sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) {
		need_inside("sysconf(CPUs)");
		return (long)lb_sim_machine_cpus(lb_sim_machine_running());
	}
	return sysconf(name);
}

/*
 * Task records -> virtual threads: an open-addressing table keyed by the
 * record's address, filled as each thread initialises its lock context
 * (one world at a time; lb_simi_set_sched_truth empties it).  A record
 * not found (more than the table holds) reads as running: the stand-in's
 * answer for an owner that announced nothing.
 */
#define TASKS_CAP 16384u /* a power of two, above aim7's 2 x 1000 + 1 threads */
static struct {
	const void *rec;
	int tid;
} tasks[TASKS_CAP];
static unsigned int sched_truth; /* LB_SIMI_TRUTH_* */

static size_t task_slot(const void *rec)
{
	uintptr_t h = (uintptr_t)rec / 64u * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 40) & (TASKS_CAP - 1);
}

void lb_simi_set_sched_truth(unsigned int on)
{
	sched_truth = on;
	memset(tasks, 0, sizeof(tasks));
}

void lb_simi_task_bind(const void *t)
{
	if (!sched_truth || !lb_sim_inside())
		return;
	/* Linear probing; bounded by the table, so a full one binds nothing. */
	for (size_t i = task_slot(t), n = 0; n < TASKS_CAP; i = (i + 1) & (TASKS_CAP - 1), n++) {
		if (!tasks[i].rec || tasks[i].rec == t) {
			tasks[i].rec = t;
			tasks[i].tid = lb_sim_self();
			return;
		}
	}
}

int lb_simi_owner_running(const void *t, unsigned int who)
{
	if (!(sched_truth & who))
		return -1;
	need_inside("the owner-running hook");
	for (size_t i = task_slot(t), n = 0; n < TASKS_CAP && tasks[i].rec;
	     i = (i + 1) & (TASKS_CAP - 1), n++)
		if (tasks[i].rec == t)
			return lb_sim_on_cpu(tasks[i].tid);
	return 1;
}

void lb_simi_lock_preempt(int off)
{
	if (!(sched_truth & LB_SIMI_TRUTH_SCHED))
		return;
	need_inside("a lock's preempt-off region");
	if (off)
		lb_sim_preempt_disable();
	else
		lb_sim_preempt_enable();
}

int lb_simi_need_resched(unsigned int who)
{
	if (!(sched_truth & who))
		return -1;
	need_inside("the need_resched hook");
	return lb_sim_need_resched();
}

uint64_t lb_simi_now_ns(void)
{
	need_inside("a clock read");
	return lb_sim_now();
}

void lb_simi_preempt(int off)
{
	need_inside("a preempt-off section");
	if (off)
		lb_sim_preempt_disable();
	else
		lb_sim_preempt_enable();
}

/* A pid of the locks' scheduling calls: 0 (the caller) or a simulated TID
 * (lb_sim_self() + 1, what SYS_gettid returns here); the engine's id. */
static int sched_target(pid_t pid)
{
	return pid == 0 ? lb_sim_self() : (int)pid - 1;
}

int lb_simi_sched_setscheduler(pid_t pid, int policy, const struct sched_param *sp)
{
	need_inside("sched_setscheduler");
	int rt = (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ||
		 (policy & ~SCHED_RESET_ON_FORK) == SCHED_RR;
	int prio = sp ? sp->sched_priority : -1;
	/* The kernel's rule: 1..99 for FIFO/RR, 0 for the others (EINVAL). */
	if ((rt && (prio < 1 || prio > 99)) || (!rt && prio != 0)) {
		errno = EINVAL;
		return -1;
	}
	if (lb_sim_setscheduler(sched_target(pid), prio) != 0) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

int lb_simi_sched_getscheduler(pid_t pid)
{
	need_inside("sched_getscheduler");
	if (pid != 0)
		hooks_die("sched_getscheduler of another thread (not modelled)");
	return lb_sim_own_prio() > 0 ? SCHED_FIFO : SCHED_OTHER;
}

int lb_simi_sched_getparam(pid_t pid, struct sched_param *sp)
{
	need_inside("sched_getparam");
	if (pid != 0)
		hooks_die("sched_getparam of another thread (not modelled)");
	sp->sched_priority = lb_sim_own_prio();
	return 0;
}

int lb_simi_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			   void *arg)
{
	need_inside("pthread_create");
	int policy = SCHED_OTHER;
	struct sched_param sp = { 0 };
	if (attr && (pthread_attr_getschedpolicy(attr, &policy) != 0 ||
		     pthread_attr_getschedparam(attr, &sp) != 0))
		return EINVAL;
	if ((policy == SCHED_FIFO || policy == SCHED_RR) &&
	    (sp.sched_priority < 1 || sp.sched_priority > 99))
		return EINVAL;
	/* The simulated kernel permits every policy (it runs as root): the
	 * thread (rtmutex's SCHED_FIFO probe) runs to its end at once on the
	 * caller, in no virtual time. */
	fn(arg);
	*th = pthread_self();
	return 0;
}

int lb_simi_pthread_join(pthread_t th, void **ret)
{
	(void)th; /* it ended in lb_simi_pthread_create */
	if (ret)
		*ret = NULL;
	return 0;
}

static uint32_t *mutex_word(pthread_mutex_t *m)
{
	_Static_assert(sizeof(pthread_mutex_t) >= sizeof(uint32_t), "a mutex holds a word");
	return (uint32_t *)(void *)m;
}

int lb_simi_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	(void)attr; /* always PI: the allocator's local locks are PTHREAD_PRIO_INHERIT */
	memset(m, 0, sizeof(*m));
	return 0;
}

int lb_simi_mutex_destroy(pthread_mutex_t *m)
{
	(void)m;
	return 0;
}

int lb_simi_mutex_lock(pthread_mutex_t *m)
{
	need_inside("pthread_mutex_lock");
	uint32_t z = 0;
	/* User space first, as glibc's PI mutex: CAS 0 -> TID, else the kernel. */
	if (lb_sim_cas_u32(mutex_word(m), &z, (uint32_t)lb_sim_self() + 1))
		return 0;
	int r = lb_sim_futex_lock_pi(mutex_word(m), LB_SIM_NO_DEADLINE);
	return r == LB_SIM_PI_OK ? 0 : r == LB_SIM_PI_DEADLOCK ? EDEADLK : EINVAL;
}

int lb_simi_mutex_unlock(pthread_mutex_t *m)
{
	need_inside("pthread_mutex_unlock");
	uint32_t me = (uint32_t)lb_sim_self() + 1;
	if (lb_sim_cas_u32(mutex_word(m), &me, 0))
		return 0;
	return lb_sim_futex_unlock_pi(mutex_word(m)) == LB_SIM_PI_OK ? 0 : EPERM;
}

uint64_t lb_simi_cycles(void)
{
	need_inside("the cycle counter");
	return lb_sim_now();
}

void *lb_simi_calloc_lines(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	size_t bytes = (n * size + LB_SIM_LINE - 1) / LB_SIM_LINE * LB_SIM_LINE;
	void *p = aligned_alloc(LB_SIM_LINE, bytes ? bytes : LB_SIM_LINE);
	if (p)
		memset(p, 0, bytes);
	return p;
}
