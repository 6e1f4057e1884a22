/* SPDX-License-Identifier: MIT */
/*
 * slab_rseq.h - restartable sequences on x86-64 for `lockbench slab`: the
 * per-CPU stock's pop and push, a per-CPU counter update (the empty
 * section), and a section that spins inside (tests force its abort).
 *
 * glibc (2.35+) registers an rseq area for every thread; __rseq_offset is
 * its place from the thread pointer.  Each section below stores the address
 * of its descriptor (struct rseq_cs: start, length, abort address) into the
 * area's rseq_cs field, reads cpu_id, works on that CPU's slot and ends in
 * one commit store.  If the thread is preempted, migrated or interrupted by
 * a signal between the start and the commit, the kernel moves it to the
 * abort address instead of resuming, and nothing was written that counts.
 * The abort address must follow the 4-byte signature glibc registered
 * (RSEQ_SIG).  Each function returns LB_RSEQ_OK, LB_RSEQ_ABORT (retry) or
 * LB_RSEQ_EMPTY / LB_RSEQ_FULL (take the slow path).
 */
#ifndef LB_SLAB_RSEQ_H
#define LB_SLAB_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { LB_RSEQ_OK = 0, LB_RSEQ_ABORT = 1, LB_RSEQ_EMPTY = 2, LB_RSEQ_FULL = 3 };

/* A stock slot of the rseq, lock, signal-mask and no-protection modes:
 * count objects in objs[0..count-1]; 512 bytes, one per CPU (or thread). */
#define LB_STOCK_CAP 63
#define LB_STOCK_SLOT_SHIFT 9
struct lb_stock_slot {
	uint64_t count;
	void *objs[LB_STOCK_CAP];
};
_Static_assert(sizeof(struct lb_stock_slot) == (1u << LB_STOCK_SLOT_SHIFT), "slot stride");

/* Per-CPU counters of the empty sections: one cache line each. */
#define LB_COUNTER_SHIFT 6

#if defined(__x86_64__) && defined(__GNUC__) && __has_include(<sys/rseq.h>)
#define LB_HAVE_RSEQ_ASM 1
#include <sys/rseq.h>

static inline struct rseq *lb_rseq_area(void)
{
	char *tp;
	__asm__("movq %%fs:0, %0" : "=r"(tp)); /* the thread pointer */
	return (struct rseq *)(tp + __rseq_offset);
}

/*
 * The descriptor and the abort stub: labels 1 (start), 2 (end of the
 * commit), 3 (descriptor), 4 (abort address, after the signature).  The
 * section starts *before* the store of rseq_cs, so an interruption anywhere
 * from the store on restarts the whole section, store included (an
 * interruption before the store finds rseq_cs empty or left over from an
 * earlier section: no restart, or a needless one; nothing was done yet).
 */
#define LB_RSEQ_PROLOGUE                                                   \
	".pushsection __rseq_cs, \"aw\"\n\t"                               \
	".balign 32\n\t"                                                   \
	"3:\n\t"                                                           \
	".long 0x0, 0x0\n\t"                                               \
	".quad 1f, (2f - 1f), 4f\n\t"                                      \
	".popsection\n\t"                                                  \
	"1:\n\t"                                                           \
	"leaq 3b(%%rip), %%rax\n\t"                                        \
	"movq %%rax, %c[cs_off](%[rs])\n\t"
#define LB_RSEQ_EPILOGUE                                                   \
	".pushsection __rseq_failure, \"ax\"\n\t"                          \
	".long %c[sig]\n\t"                                                \
	"4:\n\t"                                                           \
	"jmp %l[aborted]\n\t"                                              \
	".popsection\n\t"
#define LB_RSEQ_INPUTS(rs)                                                 \
	[rs] "r"(rs), [cs_off] "i"(offsetof(struct rseq, rseq_cs)),        \
	[cpu_off] "i"(offsetof(struct rseq, cpu_id)), [sig] "i"(RSEQ_SIG)

/* The counter sections' body: ctrs[cpu << 3] += 1 (rax: the offset, rcx:
 * the count); its last store is the commit. */
#define LB_RSEQ_COUNTER_INC                                                \
	"movl %c[cpu_off](%[rs]), %%eax\n\t"                               \
	"shlq %[shift], %%rax\n\t"                                         \
	"movq (%[ctrs], %%rax), %%rcx\n\t"                                 \
	"incq %%rcx\n\t"                                                   \
	"movq %%rcx, (%[ctrs], %%rax)\n\t"

/* ctrs[cpu << 3] += 1, the commit. */
static inline int lb_rseq_counter_inc(uint64_t *ctrs)
{
	struct rseq *rs = lb_rseq_area();
	__asm__ __volatile__ goto(
		LB_RSEQ_PROLOGUE
		LB_RSEQ_COUNTER_INC
		"2:\n\t"
		LB_RSEQ_EPILOGUE
		: : LB_RSEQ_INPUTS(rs), [ctrs] "r"(ctrs), [shift] "i"(LB_COUNTER_SHIFT)
		: "rax", "rcx", "memory", "cc" : aborted);
	return LB_RSEQ_OK;
aborted:
	return LB_RSEQ_ABORT;
}

/* The same, after `spins` pause instructions inside the section: long
 * enough, a timer signal or preemption lands inside and forces the abort. */
static inline int lb_rseq_counter_inc_slow(uint64_t *ctrs, uint64_t spins)
{
	struct rseq *rs = lb_rseq_area();
	__asm__ __volatile__ goto(
		LB_RSEQ_PROLOGUE
		"movq %[spins], %%rdx\n\t"
		"5:\n\t"
		"pause\n\t"
		"decq %%rdx\n\t"
		"jnz 5b\n\t"
		LB_RSEQ_COUNTER_INC
		"2:\n\t"
		LB_RSEQ_EPILOGUE
		: : LB_RSEQ_INPUTS(rs), [ctrs] "r"(ctrs), [shift] "i"(LB_COUNTER_SHIFT),
		  [spins] "r"(spins ? spins : 1)
		: "rax", "rcx", "rdx", "memory", "cc" : aborted);
	return LB_RSEQ_OK;
aborted:
	return LB_RSEQ_ABORT;
}

/*
 * *out = slots[cpu].objs[--count]; the count store commits.  `window` is
 * asm text placed between reading the object and the commit: empty in the
 * fast path, a spin in the test variant (it holds the section open there so
 * a signal lands in that window).
 *
 * *out is written only after the commit (label 2), outside the section: a
 * result stored before the commit survives an abort.  That was issue 23's
 * lost/doubled object: the section stored objs[count-1] to *out, a signal
 * arrived before the commit, the handler popped that same object (so the
 * slot, holding one, was empty), the section aborted and restarted, found
 * the slot empty and returned LB_RSEQ_EMPTY -- and the caller, seeing a
 * non-NULL *out from the aborted try, handed out the object the handler
 * already owned.  Two threads sharing a CPU's slot hit the same window (the
 * other thread pops the object while this one is preempted).  Now *out is
 * written only for a committed pop: after LB_RSEQ_ABORT or LB_RSEQ_EMPTY
 * it holds what it held before the call.  A signal between the commit and
 * the store is harmless: the object is already this thread's, in %rdx,
 * which the signal frame saves and restores.
 */
#define LB_RSEQ_STOCK_POP(window)                                          \
	LB_RSEQ_PROLOGUE                                                   \
	"movl %c[cpu_off](%[rs]), %%eax\n\t"                               \
	"shlq %[shift], %%rax\n\t"                                         \
	"addq %[slots], %%rax\n\t"                                         \
	"movq (%%rax), %%rcx\n\t"                                          \
	"testq %%rcx, %%rcx\n\t"                                           \
	"jz %l[empty]\n\t"                                                 \
	"movq (%%rax, %%rcx, 8), %%rdx\n\t" /* objs[count - 1] */          \
	"decq %%rcx\n\t"                                                   \
	window                                                             \
	"movq %%rcx, (%%rax)\n\t"                                          \
	"2:\n\t"                                                           \
	"movq %%rdx, (%[out])\n\t" /* committed: now it is ours */         \
	LB_RSEQ_EPILOGUE

static inline int lb_rseq_stock_pop(struct lb_stock_slot *slots, void **out)
{
	struct rseq *rs = lb_rseq_area();
	__asm__ __volatile__ goto(
		LB_RSEQ_STOCK_POP("")
		: : LB_RSEQ_INPUTS(rs), [slots] "r"(slots), [out] "r"(out),
		  [shift] "i"(LB_STOCK_SLOT_SHIFT)
		: "rax", "rcx", "rdx", "memory", "cc" : aborted, empty);
	return LB_RSEQ_OK;
aborted:
	return LB_RSEQ_ABORT;
empty:
	return LB_RSEQ_EMPTY;
}

/* The same pop, after `spins` pause instructions between reading the object
 * and the commit (tests: a signal lands in that window and its handler can
 * take the object first). */
static inline int lb_rseq_stock_pop_window(struct lb_stock_slot *slots, void **out,
					   uint64_t spins)
{
	struct rseq *rs = lb_rseq_area();
	__asm__ __volatile__ goto(
		LB_RSEQ_STOCK_POP("movq %[spins], %%r8\n\t"
				  "5:\n\t"
				  "pause\n\t"
				  "decq %%r8\n\t"
				  "jnz 5b\n\t")
		: : LB_RSEQ_INPUTS(rs), [slots] "r"(slots), [out] "r"(out),
		  [shift] "i"(LB_STOCK_SLOT_SHIFT), [spins] "r"(spins ? spins : 1)
		: "rax", "rcx", "rdx", "r8", "memory", "cc" : aborted, empty);
	return LB_RSEQ_OK;
aborted:
	return LB_RSEQ_ABORT;
empty:
	return LB_RSEQ_EMPTY;
}

/* slots[cpu].objs[count++] = obj; the count store commits. */
static inline int lb_rseq_stock_push(struct lb_stock_slot *slots, void *obj)
{
	struct rseq *rs = lb_rseq_area();
	__asm__ __volatile__ goto(
		LB_RSEQ_PROLOGUE
		"movl %c[cpu_off](%[rs]), %%eax\n\t"
		"shlq %[shift], %%rax\n\t"
		"addq %[slots], %%rax\n\t"
		"movq (%%rax), %%rcx\n\t"
		"cmpq %[cap], %%rcx\n\t"
		"jae %l[full]\n\t"
		"movq %[obj], 8(%%rax, %%rcx, 8)\n\t" /* objs[count], not yet counted */
		"incq %%rcx\n\t"
		"movq %%rcx, (%%rax)\n\t"
		"2:\n\t"
		LB_RSEQ_EPILOGUE
		: : LB_RSEQ_INPUTS(rs), [slots] "r"(slots), [obj] "r"(obj),
		  [shift] "i"(LB_STOCK_SLOT_SHIFT), [cap] "i"(LB_STOCK_CAP)
		: "rax", "rcx", "memory", "cc" : aborted, full);
	return LB_RSEQ_OK;
aborted:
	return LB_RSEQ_ABORT;
full:
	return LB_RSEQ_FULL;
}

/* The CPU glibc's rseq area says this thread runs on; -1 when unregistered. */
static inline int lb_rseq_cpu(void)
{
	if (!__rseq_size)
		return -1;
	return (int)(int32_t)__atomic_load_n(&lb_rseq_area()->cpu_id, __ATOMIC_RELAXED);
}
#else
#define LB_HAVE_RSEQ_ASM 0
static inline int lb_rseq_cpu(void)
{
	return -1;
}
#endif

#endif /* LB_SLAB_RSEQ_H */
