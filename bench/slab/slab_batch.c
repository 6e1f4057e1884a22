/* SPDX-License-Identifier: MIT */
/* slab_batch.c - one timed batch, redone while a probe saw a context switch
 * or a CPU change in it, and the host-speed gauge beside it (slab_batch.h). */
#include "slab_batch.h"
#include "lb_stats.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>

/* Eight dependent adds on one register: the chain runs at one add per
 * cycle of the core whatever else the batch did (no memory, no branch in
 * the chain), so its time per add follows the core's speed only. */
#if defined(__GNUC__) && defined(__x86_64__)
#define REF_ADD "add $1, %0\n\t"
#elif defined(__GNUC__) && defined(__aarch64__)
#define REF_ADD "add %0, %0, #1\n\t"
#endif

static uint64_t reference_chain(void)
{
	uint64_t x = 0;
	for (unsigned int i = 0; i < LB_SLAB_REF_ADDS / 8; i++) {
#ifdef REF_ADD
		__asm__ volatile(REF_ADD REF_ADD REF_ADD REF_ADD REF_ADD REF_ADD REF_ADD REF_ADD
				 : "+r"(x));
#else
		for (int k = 0; k < 8; k++) {
			x += 1;
			__asm__ volatile("" : "+r"(x)); /* keeps each add, in order */
		}
#endif
	}
	return x;
}

double lb_slab_reference(uint64_t (*clock)(void))
{
	uint64_t t0 = clock();
	uint64_t x = reference_chain();
	uint64_t t1 = clock();
	__asm__ volatile("" : : "r"(x));
	return (double)(t1 - t0) / (double)(LB_SLAB_REF_ADDS / 8 * 8);
}

void lb_slab_gauge_add(struct lb_slab_gauge *g, double units_per_add)
{
	long i = 0;
	if (units_per_add > LB_SLAB_GAUGE_LO)
		i = lround(floor(log(units_per_add / LB_SLAB_GAUGE_LO) / log(LB_SLAB_GAUGE_STEP)));
	if (i >= LB_SLAB_GAUGE_BINS)
		i = LB_SLAB_GAUGE_BINS - 1;
	if (g->bin[i] < UINT64_MAX) {
		g->bin[i]++;
		g->samples++;
	}
}

/* The middle of bin i (clock units per add), where a sample in it is read. */
static double bin_middle(long i)
{
	return LB_SLAB_GAUGE_LO * pow(LB_SLAB_GAUGE_STEP, (double)i + 0.5);
}

bool lb_slab_gauge_summarize(const struct lb_slab_gauge *g, struct lb_slab_gauge_summary *s)
{
	double per_ns = g->units_per_ns > 0 ? g->units_per_ns : 1;
	memset(s, 0, sizeof(*s));
	s->cost_ns = (double)g->cost / per_ns;
	if (!g->samples)
		return false;
	s->samples = g->samples;
	/* Nearest-rank quantiles (lib/lb_stats.h), read at their bins' middles. */
	double p10 = bin_middle(lb_bins_quantile(g->bin, LB_SLAB_GAUGE_BINS, 0.10));
	s->p10 = p10 / per_ns;
	s->median = bin_middle(lb_bins_quantile(g->bin, LB_SLAB_GAUGE_BINS, 0.50)) / per_ns;
	s->p90 = bin_middle(lb_bins_quantile(g->bin, LB_SLAB_GAUGE_BINS, 0.90)) / per_ns;
	s->ratio = s->p90 / s->p10;
	s->steady = s->ratio <= LB_SLAB_GAUGE_STEADY;
	uint64_t fast = 0;
	double fast_limit = p10 * LB_SLAB_GAUGE_STEADY;
	for (int i = 0; i < LB_SLAB_GAUGE_BINS; i++)
		if (bin_middle(i) <= fast_limit)
			fast += g->bin[i];
	s->fast_share = (double)fast / (double)g->samples;
	return true;
}

void lb_slab_probe_read(struct lb_slab_probe *p)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0)
		p->switches = ru.ru_nvcsw + ru.ru_nivcsw;
	else
		p->switches = -1;
	p->cpu = sched_getcpu();
}

bool lb_slab_probe_clean(const struct lb_slab_probe *before, const struct lb_slab_probe *after)
{
	return before->switches == after->switches && before->cpu == after->cpu;
}

double lb_slab_time_batch(void (*body)(void *arg, uint64_t n), void *arg, uint64_t n,
			  uint64_t (*clock)(void), struct lb_slab_batch_stats *st)
{
	double per = 0, ref = 0;
	for (int tries = 1;; tries++) {
		struct lb_slab_probe before, after;
		lb_slab_probe_read(&before);
		uint64_t t0 = clock();
		body(arg, n);
		uint64_t t1 = clock();
		/* the gauge: after the timed window, inside the probe's, so a
		 * switch during it redoes the batch with it */
		ref = lb_slab_reference(clock);
		st->gauge.cost += (uint64_t)(ref * (LB_SLAB_REF_ADDS / 8 * 8));
		lb_slab_probe_read(&after);
		per = (double)(t1 - t0) / (double)(n ? n : 1);
		if (lb_slab_probe_clean(&before, &after))
			break;
		if (tries == LB_SLAB_BATCH_TRIES) {
			st->kept_switched++;
			break;
		}
		st->redone++;
	}
	st->batches++;
	lb_slab_gauge_add(&st->gauge, ref);
	return per;
}
