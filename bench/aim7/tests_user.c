/* SPDX-License-Identifier: MIT */
/*
 * tests_user.c - re-aim's user-time tests: arithmetic, sieve, string,
 * memory, sort, numeric.  They take no lock (as in the original they make
 * no system call) and only keep the CPUs busy between the system tests.
 * Results are returned so the compiler must compute them.
 */
#include "task.h"

#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* add_*, mul_*, div_*: a dependent chain of operations of one type.  The
 * integer kinds compute in the unsigned type of the same width (wrapping,
 * as the hardware does) so an overflow is never undefined behaviour. */
#define ARITH(name, type, calc, op, iters)                           \
	static uint64_t t_##name(struct aim_task *t)                 \
	{                                                            \
		volatile type seed = (type)(t->index % 7 + 3);       \
		calc a = (calc)seed, b = (calc)1, acc = (calc)0;     \
		for (int i = 0; i < (iters); i++) {                  \
			acc = (calc)(type)(acc op a);                \
			acc = (calc)(type)(acc op b);                \
			if ((i & 255) == 255)                        \
				acc = (calc)(acc == 0 ? 7 : acc);    \
		}                                                    \
		return (uint64_t)acc;                                \
	}

ARITH(add_double, double, double, +, 60000)
ARITH(add_float, float, float, +, 60000)
ARITH(add_long, long, unsigned long, +, 60000)
ARITH(add_int, int, unsigned int, +, 60000)
ARITH(add_short, short, unsigned short, +, 60000)
ARITH(mul_double, double, double, *, 20000)
ARITH(mul_float, float, float, *, 20000)
ARITH(mul_long, long, unsigned long, *, 20000)
ARITH(mul_int, int, unsigned int, *, 20000)
ARITH(mul_short, short, unsigned short, *, 20000)
ARITH(div_double, double, double, /, 10000)
ARITH(div_float, float, float, /, 10000)
ARITH(div_long, long, unsigned long, /, 10000)
ARITH(div_int, int, unsigned int, /, 10000)
ARITH(div_short, short, unsigned short, /, 10000)

/* sieve: primes below 65536 (the original: 1000000, 5 rounds). */
static uint64_t t_sieve(struct aim_task *t)
{
	enum { N = 32768 };
	uint8_t *s = t->buf; /* 4096 bytes = 32768 bits */
	memset(s, 0, 4096);
	uint64_t primes = 0;
	for (uint32_t i = 2; i < N; i++) {
		if (s[i >> 3] & (1u << (i & 7)))
			continue;
		primes++;
		for (uint32_t j = 2 * i; j < N; j += i)
			s[j >> 3] |= (uint8_t)(1u << (j & 7));
	}
	return primes;
}

static uint64_t t_string_rtns(struct aim_task *t)
{
	char a[128], b[128];
	uint64_t r = 0;
	for (int n = 0; n < 400; n++) {
		snprintf(a, sizeof(a), "the quick brown fox %d jumps over %u", n, t->index);
		strcpy(b, a);
		strcat(b, " lazy dog");
		r += strlen(b) + (uint64_t)(strcmp(a, b) < 0) + (strchr(b, 'j') != NULL);
		r += strncmp(a, b, 10) == 0;
	}
	return r;
}

/* mem_rtns_1: allocate and free blocks from the child's own free list
 * (the original's malloc; a private allocator keeps glibc's arena locks,
 * which are not under test, out of the figures). */
static uint64_t t_mem_rtns_1(struct aim_task *t)
{
	uint16_t freelist[64];
	uint32_t nfree = 64;
	uint64_t r = 0;
	for (uint16_t i = 0; i < 64; i++)
		freelist[i] = i;
	for (int n = 0; n < 2000; n++) {
		if (nfree && (aim_rand(t) & 1)) {
			uint16_t blk = freelist[--nfree];
			t->buf[blk * 64] = (uint8_t)n;
			r += blk;
		} else if (nfree < 64) {
			freelist[nfree] = (uint16_t)(63 - nfree);
			nfree++;
		}
	}
	return r;
}

static uint64_t t_mem_rtns_2(struct aim_task *t)
{
	uint64_t r = 0;
	for (int n = 0; n < 200; n++) {
		memset(t->buf, n, sizeof(t->buf));
		memcpy(t->buf2, t->buf, sizeof(t->buf));
		memmove(t->buf2 + 1, t->buf2, sizeof(t->buf2) - 1);
		r += t->buf2[100];
	}
	return r;
}

static uint64_t t_ram_copy(struct aim_task *t)
{
	uint64_t r = 0;
	for (int n = 0; n < 300; n++) {
		memcpy(n & 1 ? t->buf : t->buf2, n & 1 ? t->buf2 : t->buf, 4096);
		r += t->buf[n];
	}
	return r;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static uint64_t t_sort_rtns_1(struct aim_task *t)
{
	uint32_t *v = (uint32_t *)(void *)t->buf;
	const size_t n = sizeof(t->buf) / sizeof(uint32_t);
	uint64_t r = 0;
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < n; i++)
			v[i] = (uint32_t)aim_rand(t);
		qsort(v, n, sizeof(uint32_t), cmp_u32);
		for (size_t i = 0; i < 64; i++)
			r += bsearch(&v[i * 7], v, n, sizeof(uint32_t), cmp_u32) != NULL;
	}
	return r;
}

/* array_rtns: Gaussian elimination of a small linear system. */
static uint64_t t_array_rtns(struct aim_task *t)
{
	enum { N = 24 };
	double a[N][N + 1];
	double sum = 0;
	for (int rep = 0; rep < 10; rep++) {
		for (int i = 0; i < N; i++) {
			for (int j = 0; j <= N; j++)
				a[i][j] = (double)((aim_rand(t) % 1000) + 1) / 100.0;
			a[i][i] += 100.0; /* diagonally dominant: no pivoting needed */
		}
		for (int k = 0; k < N; k++)
			for (int i = k + 1; i < N; i++) {
				double f = a[i][k] / a[k][k];
				for (int j = k; j <= N; j++)
					a[i][j] -= f * a[k][j];
			}
		for (int i = N - 1; i >= 0; i--) {
			double x = a[i][N];
			for (int j = i + 1; j < N; j++)
				x -= a[i][j] * a[j][N];
			a[i][N] = x / a[i][i];
			sum += a[i][N];
		}
	}
	return (uint64_t)fabs(sum * 1000);
}

static uint64_t t_matrix_rtns(struct aim_task *t)
{
	double m[4][4] = { { 1, 0, 0, 1 }, { 0, 0.8, -0.6, 2 }, { 0, 0.6, 0.8, 3 }, { 0, 0, 0, 1 } };
	double p[4] = { (double)t->index, 1, 2, 1 };
	for (int n = 0; n < 5000; n++) {
		double q[4];
		for (int i = 0; i < 4; i++)
			q[i] = m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2] + m[i][3] * p[3];
		memcpy(p, q, sizeof(p));
		p[3] = 1;
	}
	return (uint64_t)fabs(p[0] + p[1] + p[2]);
}

static uint64_t t_trig_rtns(struct aim_task *t)
{
	double s = 0;
	for (int n = 0; n < 3000; n++) {
		double x = (double)n * 0.001 + (double)t->index;
		s += sin(x) * cos(x) + atan(x) + tan(x * 0.1);
	}
	return (uint64_t)fabs(s);
}

/* new_raph: zeros of x^3 - a by Newton-Raphson. */
static uint64_t t_new_raph(struct aim_task *t)
{
	uint64_t found = 0;
	for (int n = 1; n <= 400; n++) {
		double a = (double)n + (double)(t->index % 3), x = a;
		for (int it = 0; it < 60; it++) {
			double fx = x * x * x - a;
			if (fabs(fx) < 1e-9)
				break;
			x -= fx / (3 * x * x);
		}
		found += fabs(x * x * x - a) < 1e-6;
	}
	return found;
}

static uint64_t t_num_rtns_1(struct aim_task *t)
{
	double s = 0;
	for (int n = 1; n < 3000; n++)
		s += sqrt((double)n) + log((double)n) + exp(-(double)n / 1000.0) + pow(1.0001, n);
	return (uint64_t)s + t->index;
}

/* series_1: a power series (e^x by its terms). */
static uint64_t t_series_1(struct aim_task *t)
{
	double total = 0;
	for (int rep = 0; rep < 200; rep++) {
		double x = 1.0 + rep * 0.001, term = 1, sum = 1;
		for (int k = 1; k < 50; k++) {
			term *= x / k;
			sum += term;
		}
		total += sum;
	}
	return (uint64_t)total + t->index;
}

/* Each child jumps to its own buffer. */
static _Thread_local jmp_buf *jmp_target;

static void jump_down(int depth);
/* Called through a pointer: frames the compiler cannot fold away. */
static void (*volatile jump_next)(int) = jump_down;

static void jump_down(int depth)
{
	if (depth > 0)
		jump_next(depth - 1); /* down through frames... */
	longjmp(*jmp_target, 1); /* ...then straight back to the setjmp */
}

/* One setjmp and its longjmp from 10 frames down.  In a function of its
 * own: no local of the caller's loop lives in the frame setjmp saves, so
 * none can be clobbered by the longjmp (gcc -Wclobbered at -O1). */
static void jump_once(void)
{
	jmp_buf buf;
	if (setjmp(buf) == 0) {
		jmp_target = &buf;
		jump_down(10);
	}
	jmp_target = NULL; /* buf dies with this frame */
}

static uint64_t t_jmp_test(struct aim_task *t)
{
	volatile uint64_t n = 0;
	(void)t;
	for (int i = 0; i < 1000; i++) {
		jump_once();
		n++;
	}
	return n;
}

static uint64_t call0(void) { return 1; }
static uint64_t call1(uint64_t a) { return a + 1; }
static uint64_t call2(uint64_t a, uint64_t b) { return a + b; }

static uint64_t t_fun_cal(struct aim_task *t)
{
	uint64_t (*volatile f)(void) = call0, r = t->index;
	for (int i = 0; i < 20000; i++)
		r += f();
	return r;
}

static uint64_t t_fun_cal1(struct aim_task *t)
{
	uint64_t (*volatile f)(uint64_t) = call1, r = t->index;
	for (int i = 0; i < 20000; i++)
		r = f(r);
	return r;
}

static uint64_t t_fun_cal2(struct aim_task *t)
{
	uint64_t (*volatile f)(uint64_t, uint64_t) = call2, r = t->index;
	for (int i = 0; i < 20000; i++)
		r = f(r, 1);
	return r;
}

#define USR(n, what) { #n, t_##n, false, what }
const struct aim_test aim_user_tests[] = {
	USR(add_double, "dependent additions"), USR(add_float, "dependent additions"),
	USR(add_long, "dependent additions"), USR(add_int, "dependent additions"),
	USR(add_short, "dependent additions"), USR(mul_double, "dependent multiplies"),
	USR(mul_float, "dependent multiplies"), USR(mul_long, "dependent multiplies"),
	USR(mul_int, "dependent multiplies"), USR(mul_short, "dependent multiplies"),
	USR(div_double, "dependent divides"), USR(div_float, "dependent divides"),
	USR(div_long, "dependent divides"), USR(div_int, "dependent divides"),
	USR(div_short, "dependent divides"),
	USR(sieve, "sieve of Eratosthenes below 32768"),
	USR(string_rtns, "str* functions on short strings"),
	USR(mem_rtns_1, "allocate/free blocks (a private allocator)"),
	USR(mem_rtns_2, "memset/memcpy/memmove of 4 KiB"),
	USR(ram_copy, "memory to memory copies of 4 KiB"),
	USR(sort_rtns_1, "qsort and bsearch of 1024 integers"),
	USR(array_rtns, "Gaussian elimination, 24x24"),
	USR(matrix_rtns, "4x4 point transformations"),
	USR(trig_rtns, "sin/cos/atan/tan"),
	USR(new_raph, "Newton-Raphson zeros of x^3 - a"),
	USR(num_rtns_1, "sqrt/log/exp/pow"),
	USR(series_1, "power series of e^x"),
	USR(jmp_test, "setjmp/longjmp through 10 frames"),
	USR(fun_cal, "function calls, no argument"),
	USR(fun_cal1, "function calls, one argument"),
	USR(fun_cal2, "function calls, two arguments"),
};
const size_t aim_nuser_tests = sizeof(aim_user_tests) / sizeof(aim_user_tests[0]);
