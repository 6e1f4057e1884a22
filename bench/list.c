/* SPDX-License-Identifier: MIT */
/* list.c - `lockbench list [--json]`: the registry as a table or JSON. */
#include "micro/micro.h"
#include "lb_cli.h"
#include "lb_json.h"
#include "lb_registry.h"

#include <string.h>

int lb_cmd_list(int argc, char **argv)
{
	bool json = false, help = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			help = true;
		else
			lb_usage_error("list: unknown argument '%s'; accepted: --json, --help", argv[i]);
	}
	if (help) {
		if (argc > 2) /* --help with anything else: refuse, as for every command */
			lb_usage_error("list: --help takes no other arguments; accepted: "
				       "'lockbench list --help' alone");
		printf("usage: lockbench list [--json]\n");
		return 0;
	}
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
			lb_lock_flags_str(o->flags, flags, sizeof(flags));
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
	printf("%-18s %-9s %-34s %s\n", "name", "family", "flags", "description");
	for (size_t i = 0; i < lb_lock_count(); i++) {
		const struct lb_lock_ops *o = table[i];
		printf("%-18s %-9s %-34s %s%s%s%s\n", o->name, o->family,
		       o->unsupported ? "-" : lb_lock_flags_str(o->flags, flags, sizeof(flags)),
		       o->summary, o->unsupported ? " [unavailable: " : "",
		       o->unsupported ? o->unsupported : "", o->unsupported ? "]" : "");
	}
	return 0;
}
