/* SPDX-License-Identifier: MIT */
/* lb_schema.c - the common head of every result file (see lb_schema.h). */
#include "lb_schema.h"

#include "lb_cpulist.h"
#include "lb_hostinfo.h"
#include "lb_json.h"
#include "lb_stats.h"
#include "lb_time.h"
#include "lb_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *lb_better_name(enum lb_better b)
{
	switch (b) {
	case LB_BETTER_HIGHER: return "higher";
	case LB_BETTER_LOWER: return "lower";
	case LB_BETTER_NONE: break;
	}
	return "none";
}

const struct lb_metric_desc *lb_schema_metric(const struct lb_workload_schema *s, const char *key)
{
	for (size_t i = 0; i < s->nmetrics; i++)
		if (!strcmp(s->metrics[i].key, key))
			return &s->metrics[i];
	return NULL;
}

/* First line of a sysfs file, without its newline; "" where unreadable. */
static void read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	buf[0] = '\0';
	if (fp && !fgets(buf, (int)len, fp))
		buf[0] = '\0';
	if (fp)
		fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
}

/* "numa_cpus": {"0": "0-3", "1": "4-7", ...}: each online node's CPUs as
 * /sys/devices/system/node says (which CPU is on which node); {} where
 * that is unreadable.  Node numbers may have gaps ("online": "0,2"). */
static void write_numa_cpus(struct lb_json *j)
{
	char text[4096], path[96], key[16];
	cpu_set_t nodes;
	lb_json_key(j, "numa_cpus");
	lb_json_object_begin(j);
	read_sysfs("/sys/devices/system/node/online", text, sizeof(text));
	if (lb_cpulist_parse(text, &nodes) == 0) {
		for (int node = 0; node < CPU_SETSIZE; node++) {
			if (!CPU_ISSET(node, &nodes))
				continue;
			snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
			read_sysfs(path, text, sizeof(text));
			snprintf(key, sizeof(key), "%d", node);
			lb_json_kv_string(j, key, text);
		}
	}
	lb_json_object_end(j);
}

void lb_schema_write_host(struct lb_json *j, const struct lb_hostinfo *h)
{
	lb_json_key(j, "host");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "cpu_model", h->cpu_model);
	lb_json_kv_int(j, "cpus_online", h->ncpus_online);
	lb_json_kv_int(j, "cpus_allowed", h->ncpus_allowed);
	lb_json_kv_int(j, "numa_nodes", h->numa_nodes);
	write_numa_cpus(j);
	lb_json_kv_string(j, "kernel", h->kernel);
	lb_json_kv_string(j, "hostname", h->hostname);
	lb_json_kv_string(j, "compiler", h->compiler);
	lb_json_kv_string(j, "build_type", h->build_type);
	lb_json_kv_string(j, "git_revision", h->git_rev);
	lb_json_kv_string(j, "version", h->version);
	lb_json_kv_string(j, "cpufreq_governor", h->cpufreq_governor);
	lb_json_kv_string(j, "clocksource", h->clocksource);
	lb_json_kv_string(j, "cycle_counter", lb_cycles_source());
	/* Calibrations the run made; null when it never needed them (a 50 ms
	 * calibration only for the report would be waste, e.g. at a preloaded
	 * program's exit). */
	double cpn = lb_cycles_per_ns_if_known(), wpi = lb_work_ns_per_iter_if_known();
	if (cpn > 0)
		lb_json_kv_double(j, "cycles_per_ns", cpn);
	else
		lb_json_kv_string(j, "cycles_per_ns", NULL);
	if (wpi > 0)
		lb_json_kv_double(j, "work_ns_per_iter", wpi);
	else
		lb_json_kv_string(j, "work_ns_per_iter", NULL);
	lb_json_object_end(j);
}

void lb_schema_write_head(struct lb_json *j, const struct lb_workload_schema *s,
			  const struct lb_hostinfo *host)
{
	char full[96];
	snprintf(full, sizeof(full), "%s-%u", s->name, s->version);
	lb_json_kv_string(j, "schema", full);
	lb_json_kv_string(j, "schema_name", s->name);
	lb_json_kv_uint(j, "schema_version", s->version);
	lb_schema_write_host(j, host);
	lb_json_key(j, "metrics");
	lb_json_object_begin(j);
	for (size_t i = 0; i < s->nmetrics; i++) {
		const struct lb_metric_desc *m = &s->metrics[i];
		lb_json_key(j, m->key);
		lb_json_object_begin(j);
		lb_json_kv_string(j, "unit", m->unit);
		lb_json_kv_string(j, "better", lb_better_name(m->better));
		lb_json_kv_string(j, "title", m->title);
		lb_json_object_end(j);
	}
	lb_json_object_end(j);
}

void lb_schema_begin_file(struct lb_json *j, FILE *out, const struct lb_workload_schema *s,
			  const struct lb_hostinfo *host, const char *command)
{
	lb_json_init(j, out);
	lb_json_object_begin(j);
	lb_schema_write_head(j, s, host);
	lb_json_key(j, "config");
	lb_json_object_begin(j);
	lb_json_kv_string(j, "command", command);
}

void lb_schema_write_interrupted(struct lb_json *j, int signo)
{
	lb_json_kv_bool(j, "interrupted", signo != 0);
	if (signo) {
		char name[32];
		snprintf(name, sizeof(name), "SIG%s", sigabbrev_np(signo));
		lb_json_kv_string(j, "interrupted_by", name);
	}
}

void lb_schema_summary_fields(struct lb_json *j, const struct lb_summary *s)
{
	lb_json_kv_double(j, "mean", s->mean);
	lb_json_kv_double(j, "sd", s->sd);
	lb_json_kv_double(j, "sd_pct", s->mean != 0 ? 100.0 * s->sd / fabs(s->mean) : 0);
	lb_json_kv_double(j, "median", s->median);
	lb_json_kv_double(j, "min", s->min);
	lb_json_kv_double(j, "max", s->max);
	lb_json_kv_uint(j, "n", s->n);
}

void lb_schema_summary_of(struct lb_json *j, const char *key, const double *v, size_t n)
{
	struct lb_summary s;
	lb_summarize(v, n, &s);
	if (key)
		lb_json_key(j, key);
	lb_json_object_begin(j);
	lb_schema_summary_fields(j, &s);
	lb_json_object_end(j);
}
