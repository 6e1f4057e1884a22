/* SPDX-License-Identifier: MIT */
/* list.c - `lockbench list [--json]`: the registry as a table or JSON. */
#include "workload.h"
#include "lb_cli.h"
#include "lb_json.h"
#include "lb_opt.h"
#include "lb_registry.h"

#include <stdio.h>
#include <string.h>

struct list_args {
	bool json;
};

static const struct lb_opt list_opts[] = {
	{ .name = "json", .kind = LB_OPT_FLAG, .help = "the registry as JSON on stdout",
	  .offset = LB_OPT_AT(struct list_args, json, bool) },
	LB_OPT_ROW_HELP,
	LB_OPT_ROW_END,
};

static const struct lb_opt_cmd list_cmd = {
	.name = "lockbench list",
	.usage = "usage: lockbench list [--json]\n\n"
		 "The registered locks: name, family, flags, summary.\n\n",
	.opts = list_opts,
	.help_alone = true,
};

/* The flags, then "spin-only" for a lock that needs threads <= CPUs. */
static const char *list_flags(const struct lb_lock_ops *o, char *buf, size_t len)
{
	lb_lock_flags_str(o->flags, buf, len);
	if (lb_lock_spin_only(o)) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%sspin-only", used ? "," : "");
	}
	return buf;
}

static int lb_cmd_list(int argc, char **argv)
{
	struct list_args args = { 0 };
	struct lb_opt_seen seen;
	lb_opt_parse(&list_cmd, argc, argv, &args, &seen);
	bool json = args.json;
	const struct lb_lock_ops *const *table = lb_lock_table();
	char flags[160];
	if (json) {
		struct lb_json j;
		lb_json_init(&j, stdout);
		lb_json_array_begin(&j);
		for (size_t i = 0; i < lb_lock_count(); i++) {
			const struct lb_lock_ops *o = table[i];
			lb_json_object_begin(&j);
			lb_json_kv_string(&j, "name", o->name);
			lb_json_kv_string(&j, "family", o->family);
			lb_json_key(&j, "flags");
			lb_json_array_begin(&j);
			list_flags(o, flags, sizeof(flags));
			for (char *tok = strtok(flags, ","); tok; tok = strtok(NULL, ","))
				lb_json_string(&j, tok);
			lb_json_array_end(&j);
			lb_json_kv_string(&j, "summary", o->summary);
			lb_json_kv_bool(&j, "available", o->unsupported == NULL);
			lb_json_kv_string(&j, "unsupported", o->unsupported);
			lb_json_kv_uint(&j, "lock_size", o->lock_size);
			lb_json_kv_uint(&j, "thread_ctx_size", o->thread_ctx_size);
			lb_json_object_end(&j);
		}
		lb_json_array_end(&j);
		putchar('\n');
		return 0;
	}
	printf("%-18s %-9s %-46s %s\n", "name", "family", "flags", "description");
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lb_lock_ops *o = table[i];
		printf("%-18s %-9s %-46s %s%s%s%s\n", o->name, o->family,
		       o->unsupported ? "-" : list_flags(o, flags, sizeof(flags)),
		       o->summary, o->unsupported ? " [unavailable: " : "",
		       o->unsupported ? o->unsupported : "", o->unsupported ? "]" : "");
	}
	return 0;
}

const struct lb_workload lb_workload_list = {
	.name = "list",
	.summary = "the registered locks (--json for machine-readable)",
	.main = lb_cmd_list,
};
