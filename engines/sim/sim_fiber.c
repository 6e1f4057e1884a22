/* SPDX-License-Identifier: MIT */
/*
 * sim_fiber.c - coroutines with sanitizer annotations.  On x86-64 a
 * switch is a hand-written save of the callee-saved registers and the
 * stack pointer (no system call: swapcontext saves the signal mask with
 * sigprocmask on every switch, most of the simulator's host time);
 * elsewhere it is ucontext's swapcontext.  The address sanitizer must hear
 * of each switch (its fake stacks and stack bounds), the thread sanitizer
 * of each fiber: both publish an interface for exactly this
 * (sanitizer/common_interface_defs.h, sanitizer/tsan_interface.h).
 */
#include "sim_fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#endif
#endif

#ifdef SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef SIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#if SIM_FIBER_ASM
/*
 * sim_ctx_switch(&from->sp, to->sp), System V x86-64: push the callee-saved
 * registers and the SSE/x87 control words on the running stack, store the
 * stack pointer, load the other one and pop its registers; `ret` returns
 * into the other context (a new one's first frame returns into its entry).
 */
void sim_ctx_switch(void **save_sp, void *load_sp);
__asm__(".text\n"
	".globl sim_ctx_switch\n"
	".type sim_ctx_switch, @function\n"
	"sim_ctx_switch:\n"
	"\tpushq %rbp\n"
	"\tpushq %rbx\n"
	"\tpushq %r12\n"
	"\tpushq %r13\n"
	"\tpushq %r14\n"
	"\tpushq %r15\n"
	"\tsubq $8, %rsp\n"
	"\tstmxcsr (%rsp)\n"
	"\tfnstcw 4(%rsp)\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tldmxcsr (%rsp)\n"
	"\tfldcw 4(%rsp)\n"
	"\taddq $8, %rsp\n"
	"\tpopq %r15\n"
	"\tpopq %r14\n"
	"\tpopq %r13\n"
	"\tpopq %r12\n"
	"\tpopq %rbx\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size sim_ctx_switch, .-sim_ctx_switch\n"
	".section .note.GNU-stack,\"\",@progbits\n"
	".text\n");

/* A new stack whose first switch pops zeroed registers and the default
 * control words and returns into entry, with the stack aligned as after a
 * call (rsp + 8 a multiple of 16). */
static void *first_frame(void *stack, size_t size, void (*entry)(void))
{
	uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)top;
	*--sp = 0;                       /* entry's return address: it never returns */
	*--sp = (uint64_t)(uintptr_t)entry;
	for (int i = 0; i < 6; i++)
		*--sp = 0;               /* rbp rbx r12 r13 r14 r15 */
	*--sp = 0x1f80ull | (0x037full << 32);  /* MXCSR, x87 control word: the defaults */
	return sp;
}
#endif

#ifdef SIM_TSAN
/*
 * The thread sanitizer defers a signal that arrives outside a blocking call
 * and queues it on the current fiber's own state; it runs the handler only
 * when that fiber next leaves an intercepted libc call.  A virtual thread's
 * fiber runs lock code and switches with the calls above, none of them
 * intercepted, so a SIGINT that lands on one waited for ever (5 of 10 tries
 * of `sim ... -d 60s` never stopped).  Any intercepted call delivers the
 * queue on its way out: strlen through a volatile pointer, so that the
 * compiler cannot fold it, is the cheapest.  Thread sanitizer builds only.
 */
static size_t (*volatile tsan_intercepted_call)(const char *) = strlen;

static void tsan_deliver_pending_signals(void)
{
	(void)tsan_intercepted_call("");
}
#endif

void sim_fiber_main(struct sim_fiber *f)
{
	memset(f, 0, sizeof(*f));
#ifdef SIM_TSAN
	f->tsan_fiber = __tsan_get_current_fiber();
#endif
}

int sim_fiber_make(struct sim_fiber *f, size_t stack_size, void (*entry)(void))
{
	memset(f, 0, sizeof(*f));
	f->stack = malloc(stack_size);
	if (!f->stack)
		return -1;
#if SIM_FIBER_ASM
	f->sp = first_frame(f->stack, stack_size, entry);
#else
	if (getcontext(&f->uc)) {
		free(f->stack);
		f->stack = NULL;
		return -1;
	}
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = stack_size;
	f->uc.uc_link = NULL;  /* entry never returns: it switches away for good */
	makecontext(&f->uc, entry, 0);
#endif
	f->stack_size = stack_size;
	f->asan_bottom = f->stack;
	f->asan_size = stack_size;
#ifdef SIM_TSAN
	f->tsan_fiber = __tsan_create_fiber(0);
#endif
	return 0;
}

void sim_fiber_switch(struct sim_fiber *from, struct sim_fiber *to, bool from_ends)
{
#ifdef SIM_ASAN
	__sanitizer_start_switch_fiber(from_ends ? NULL : &from->asan_fake_stack,
				       to->asan_bottom, to->asan_size);
#else
	(void)from_ends;
#endif
#ifdef SIM_TSAN
	tsan_deliver_pending_signals();
	__tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
#if SIM_FIBER_ASM
	sim_ctx_switch(&from->sp, to->sp);
#else
	swapcontext(&from->uc, &to->uc);
#endif
#ifdef SIM_ASAN
	__sanitizer_finish_switch_fiber(from->asan_fake_stack, NULL, NULL);
#endif
}

void sim_fiber_started(struct sim_fiber *main_fiber)
{
#ifdef SIM_ASAN
	/* Learn the host stack's bounds: the first switch back needs them. */
	__sanitizer_finish_switch_fiber(NULL, &main_fiber->asan_bottom, &main_fiber->asan_size);
#else
	(void)main_fiber;
#endif
}

void sim_fiber_free(struct sim_fiber *f)
{
#ifdef SIM_TSAN
	if (f->stack && f->tsan_fiber)
		__tsan_destroy_fiber(f->tsan_fiber);
#endif
	free(f->stack);
	f->stack = NULL;
}
