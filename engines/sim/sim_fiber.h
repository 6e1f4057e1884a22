/* SPDX-License-Identifier: MIT */
/*
 * sim_fiber.h - coroutines for the simulator's virtual threads: a
 * hand-written register switch on x86-64, ucontext (makecontext/
 * swapcontext) elsewhere, with the address and thread sanitizers told
 * about every stack switch, so the quick suite runs clean under both.
 */
#ifndef LB_SIM_FIBER_H
#define LB_SIM_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__) && !defined(LB_SIM_UCONTEXT)
#define SIM_FIBER_ASM 1
#else
#define SIM_FIBER_ASM 0
#include <ucontext.h>
#endif

struct sim_fiber {
#if SIM_FIBER_ASM
	void *sp;                 /* the saved stack pointer while switched out */
#else
	ucontext_t uc;
#endif
	void *stack;              /* NULL for the host thread's own context */
	size_t stack_size;
	void *asan_fake_stack;    /* the address sanitizer's per-switch state */
	const void *asan_bottom;  /* this context's stack, as the sanitizer knows it */
	size_t asan_size;
	void *tsan_fiber;         /* the thread sanitizer's fiber */
};

/* The host thread's context, to switch back to. */
void sim_fiber_main(struct sim_fiber *f);
/* A new context that runs entry() on its own stack; 0, or -1 (no memory). */
int sim_fiber_make(struct sim_fiber *f, size_t stack_size, void (*entry)(void));
/* Switch from `from` (the running context) to `to`.  `from_ends` says
 * `from` never runs again (its sanitizer state is released). */
void sim_fiber_switch(struct sim_fiber *from, struct sim_fiber *to, bool from_ends);
/* First thing a new context's entry does. */
void sim_fiber_started(struct sim_fiber *main_fiber);
void sim_fiber_free(struct sim_fiber *f);

#endif /* LB_SIM_FIBER_H */
