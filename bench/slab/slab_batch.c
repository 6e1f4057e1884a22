/* SPDX-License-Identifier: MIT */
/* slab_batch.c - one timed batch, redone while a probe saw a context switch
 * or a CPU change in it (slab_batch.h). */
#include "slab_batch.h"

#include <sched.h>
#include <sys/resource.h>

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
	double per = 0;
	for (int tries = 1;; tries++) {
		struct lb_slab_probe before, after;
		lb_slab_probe_read(&before);
		uint64_t t0 = clock();
		body(arg, n);
		uint64_t t1 = clock();
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
	return per;
}
