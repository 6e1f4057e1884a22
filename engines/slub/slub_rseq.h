/* SPDX-License-Identifier: MIT */
/*
 * slub_rseq.h - the PER_CPU cpu slab's commit: a compare-and-swap of a
 * slot's (freelist, tid) word inside a restartable sequence that also
 * checks the task still runs on the slot's CPU (the approach of
 * bench/slab/slab_rseq.h: glibc 2.35+ registers each thread's rseq area at
 * __rseq_offset from the thread pointer; the section stores its descriptor
 * into rseq_cs and the kernel moves a task preempted, migrated or signalled
 * inside it to the abort address, after glibc's RSEQ_SIG).
 *
 * The kernel commits with this_cpu_cmpxchg_double on (freelist, tid), a
 * compare-and-swap without the lock prefix that is safe because the tid
 * names the CPU and every task on that CPU is interrupted, never
 * overlapped.  Here the slow path's local-lock holder may run on another
 * CPU than the slot's (userspace cannot forbid migration), so the swap
 * keeps its lock prefix, and the rseq section adds the kernel's other
 * property: a task moved between reading the word and committing restarts
 * instead of committing to a slot it no longer runs on.
 *
 * Without the asm (another architecture, no <sys/rseq.h>, ThreadSanitizer,
 * which does not see inline-asm stores, or lockbench sim's copy, whose
 * virtual threads share one host thread and its rseq area) the caller re-reads the CPU before
 * a C11 compare-and-swap: the same restarts except for a migration in the
 * few instructions between the two, which the swap still keeps correct.
 */
#ifndef LB_SLUB_RSEQ_H
#define LB_SLUB_RSEQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { LB_SLUB_COMMIT_OK = 0, LB_SLUB_COMMIT_MOVED = 1, LB_SLUB_COMMIT_CHANGED = 2 };

#if defined(__SANITIZE_THREAD__)
#define LB_SLUB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LB_SLUB_TSAN 1
#endif
#endif

#if defined(__x86_64__) && defined(__GNUC__) && __has_include(<sys/rseq.h>) && \
	!defined(LB_SLUB_TSAN) && !defined(LB_SIM_INTERPOSE)
#define LB_SLUB_RSEQ_ASM 1
#include <sys/rseq.h>

static inline struct rseq *lb_slub_rseq_area(void)
{
	char *tp;
	__asm__("movq %%fs:0, %0" : "=r"(tp)); /* the thread pointer */
	return (struct rseq *)(tp + __rseq_offset);
}

/* Whether this thread has an rseq area glibc registered. */
static inline int lb_slub_rseq_usable(void)
{
	return __rseq_size != 0;
}

/*
 * On CPU `cpu` only: if *word == expect, *word = desired (lock cmpxchg, a
 * full barrier: it orders the links written before it and the object read
 * after it).  Labels: 1 start, 2 end (just after the commit), 3 the
 * descriptor, 4 the abort address.  MOVED when the task was on another CPU
 * or the section was interrupted before the commit, CHANGED when the word
 * had changed.
 */
static inline int lb_slub_rseq_cas(uint32_t cpu, _Atomic uint64_t *word, uint64_t expect,
				   uint64_t desired)
{
	struct rseq *rs = lb_slub_rseq_area();
	__asm__ __volatile__ goto(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0x0, 0x0\n\t"
		".quad 1f, (2f - 1f), 4f\n\t"
		".popsection\n\t"
		"1:\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %c[cs_off](%[rs])\n\t"
		"cmpl %[cpu], %c[cpu_off](%[rs])\n\t"
		"jne %l[moved]\n\t"
		"movq %[expect], %%rax\n\t"
		"lock cmpxchgq %[desired], (%[word])\n\t"
		"2:\n\t"
		"jne %l[changed]\n\t"
		".pushsection __rseq_failure, \"ax\"\n\t"
		".long %c[sig]\n\t"
		"4:\n\t"
		"jmp %l[moved]\n\t"
		".popsection\n\t"
		: : [rs] "r"(rs), [cs_off] "i"(offsetof(struct rseq, rseq_cs)),
		  [cpu_off] "i"(offsetof(struct rseq, cpu_id)), [sig] "i"(RSEQ_SIG),
		  [cpu] "r"(cpu), [word] "r"(word), [expect] "r"(expect), [desired] "r"(desired)
		: "rax", "memory", "cc" : moved, changed);
	return LB_SLUB_COMMIT_OK;
moved:
	return LB_SLUB_COMMIT_MOVED;
changed:
	return LB_SLUB_COMMIT_CHANGED;
}
#else
#define LB_SLUB_RSEQ_ASM 0
static inline int lb_slub_rseq_usable(void)
{
	return 0;
}
#endif

#endif /* LB_SLUB_RSEQ_H */
