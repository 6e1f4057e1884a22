/* SPDX-License-Identifier: MIT */
/*
 * sim_fiber.c - ucontext coroutines with sanitizer annotations.  The
 * address sanitizer must hear of each switch (its fake stacks and stack
 * bounds), the thread sanitizer of each fiber: both publish an interface
 * for exactly this (sanitizer/common_interface_defs.h, tsan_interface.h).
 */
#include "sim_fiber.h"

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
	if (!f->stack || getcontext(&f->uc)) {
		free(f->stack);
		f->stack = NULL;
		return -1;
	}
	f->stack_size = stack_size;
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = stack_size;
	f->uc.uc_link = NULL;  /* entry never returns: it switches away for good */
	makecontext(&f->uc, entry, 0);
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
	__tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
	swapcontext(&from->uc, &to->uc);
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
