/* SPDX-License-Identifier: MIT */
/* stats.c - locktorture's statistics lines and banners, kernel format. */
#include "stats.h"
#include "out.h"
#include "lb_cpulist.h"

#include <stdio.h>

void lb_torture_collect(const struct lb_torture_run *run, bool write,
			struct lb_torture_totals *out)
{
	int first = write ? 0 : run->cfg.nwriters_stress;
	int n = write ? run->cfg.nwriters_stress : run->cfg.nreaders_stress;

	*out = (struct lb_torture_totals){ 0 };
	for (int i = 0; i < n; i++) {
		const struct lb_torture_thread *t = &run->threads[first + i];
		/* Racy snapshot, as the kernel's data_race() reads. */
		long cur = atomic_load_explicit(&t->n_lock_acquired, memory_order_relaxed);
		long fails = atomic_load_explicit(&t->n_lock_fail, memory_order_relaxed);
		if (fails)
			out->fail = true;
		out->fails += fails;
		out->sum += cur;
		if (i == 0 || cur > out->max)
			out->max = cur;
		if (i == 0 || cur < out->min)
			out->min = cur;
	}
}

int lb_torture_format_stats(char *buf, size_t len, bool write,
			    const struct lb_torture_totals *t, bool onoff)
{
	return snprintf(buf, len, "%s:  Total: %lld  Max/Min: %ld/%ld %s  Fail: %d %s\n",
			write ? "Writes" : "Reads ", t->sum, t->max, t->min,
			!onoff && t->max / 2 > t->min ? "???" : "", t->fail ? 1 : 0,
			t->fail ? "!!!" : "");
}

int lb_torture_format_banner(char *buf, size_t len, const struct lb_torture_config *cfg,
			     const char *tag, bool debug)
{
	char rd[1024], wr[1024];
	lb_cpulist_format(&cfg->bind_readers, rd, sizeof(rd));
	lb_cpulist_format(&cfg->bind_writers, wr, sizeof(wr));
	return snprintf(buf, len,
			"%s" LB_TORTURE_FLAG "--- %s%s: acq_writer_lim=%d bind_readers=%s "
			"bind_writers=%s call_rcu_chains=%d long_hold=%d nested_locks=%d "
			"nreaders_stress=%d nwriters_stress=%d onoff_holdoff=%d "
			"onoff_interval=%d rt_boost=%d rt_boost_factor=%d shuffle_interval=%d "
			"shutdown_secs=%d stat_interval=%d stutter=%d verbose=%d "
			"writer_fifo=%d\n",
			cfg->type, tag, debug ? " [debug]" : "", cfg->acq_writer_lim, rd, wr,
			cfg->call_rcu_chains, cfg->long_hold, cfg->nested_locks,
			cfg->nreaders_stress, cfg->nwriters_stress, cfg->onoff_holdoff,
			cfg->onoff_interval, cfg->rt_boost, cfg->rt_boost_factor,
			cfg->shuffle_interval, cfg->duration, cfg->stat_interval, cfg->stutter,
			cfg->verbose, cfg->writer_fifo);
}

bool lb_torture_print_stats(const struct lb_torture_run *run)
{
	char buf[256];
	struct lb_torture_totals t;
	bool onoff = run->cfg.onoff_interval != 0, failed;

	lb_torture_collect(run, true, &t);
	lb_torture_format_stats(buf, sizeof(buf), true, &t, onoff);
	failed = t.fail;
	if (run->ops->read_lock) {
		size_t used = 0;
		while (buf[used])
			used++;
		lb_torture_collect(run, false, &t);
		lb_torture_format_stats(buf + used, sizeof(buf) - used, false, &t, onoff);
		failed |= t.fail;
	}
	/* One write so the lines stay together when workers print too. */
	lb_torture_printf("%s", buf);
	fflush(stdout);
	return failed;
}

void lb_torture_print_banner(const struct lb_torture_run *run, const char *tag)
{
	char buf[4096];
#ifdef NDEBUG
	bool debug = false;
#else
	bool debug = true; /* assertions on: the port's analogue of lock debugging */
#endif
	lb_torture_format_banner(buf, sizeof(buf), &run->cfg, tag, debug);
	lb_torture_printf("%s", buf);
	fflush(stdout);
}
