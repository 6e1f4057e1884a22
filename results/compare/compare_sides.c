/* SPDX-License-Identifier: MIT */
/* compare_sides.c - two sides inside one result file (see compare_sides.h). */
#include "compare_sides.h"
#include "lb_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const side_opt[2] = { "--side-a", "--side-b" };

/* "KEY=VALUE[,KEY=VALUE...]" into sel (the text stays as given). */
static void parse_selector(const char *opt, const char *arg, struct lb_cmp_selector *sel)
{
	memset(sel, 0, sizeof(*sel));
	if (strlen(arg) >= sizeof(sel->buf))
		lb_usage_error("%s: '%.40s...' is too long; accepted: KEY=VALUE[,KEY=VALUE...] under "
			       "%zu characters", opt, arg, sizeof(sel->buf));
	snprintf(sel->text, sizeof(sel->text), "%s", arg);
	snprintf(sel->buf, sizeof(sel->buf), "%s", arg);
	char *save = NULL;
	for (char *item = strtok_r(sel->buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq || eq == item || !eq[1])
			lb_usage_error("%s: '%s' is not KEY=VALUE; accepted: KEY=VALUE[,KEY=VALUE...] "
				       "with the file's params, e.g. lock=ticket", opt, item);
		if (sel->n == LB_CMP_MAX_SEL_KEYS)
			lb_usage_error("%s: '%s' names more than %d params; accepted: 1..%d KEY=VALUE "
				       "pairs", opt, arg, LB_CMP_MAX_SEL_KEYS, LB_CMP_MAX_SEL_KEYS);
		*eq = '\0';
		for (size_t i = 0; i < sel->n; i++)
			if (!strcmp(sel->key[i], item))
				lb_usage_error("%s: '%s' names %s twice; accepted: each param once", opt,
					       arg, item);
		sel->key[sel->n] = item;
		sel->value[sel->n++] = eq + 1;
	}
	if (sel->n == 0)
		lb_usage_error("%s: '%s' names no param; accepted: KEY=VALUE[,KEY=VALUE...]", opt, arg);
}

static bool selector_takes(const struct lb_cmp_selector *sel, const json_t *params)
{
	for (size_t i = 0; i < sel->n; i++) {
		char text[128];
		const json_t *v = json_object_get(params, sel->key[i]);
		if (!v)
			return false;
		lb_param_text(v, text, sizeof(text));
		if (strcmp(text, sel->value[i]))
			return false;
	}
	return true;
}

/* Comma-separated distinct texts: of the params' keys (key NULL) or of one
 * key's values, over every cell of f. */
static void list_texts(const struct lb_rfile *f, const char *key, char *buf, size_t len)
{
	json_t *seen = json_object();
	size_t used = 0;
	buf[0] = '\0';
	for (size_t c = 0; seen && c < f->ncells && used < len; c++) {
		const char *k;
		const json_t *v;
		json_object_foreach(f->cells[c].params, k, v) {
			char text[128];
			if (key && strcmp(k, key))
				continue;
			if (key)
				lb_param_text(v, text, sizeof(text));
			else
				snprintf(text, sizeof(text), "%s", k);
			if (json_object_get(seen, text))
				continue;
			json_object_set_new(seen, text, json_true());
			int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", text);
			if (w < 0 || (size_t)w >= len - used)
				break;
			used += (size_t)w;
		}
	}
	json_decref(seen);
	if (!buf[0])
		snprintf(buf, len, "none (the file has no cells)");
}

static bool file_has_key(const struct lb_rfile *f, const char *key)
{
	for (size_t c = 0; c < f->ncells; c++)
		if (json_object_get(f->cells[c].params, key))
			return true;
	return false;
}

/* The selectors checked against the file: known keys, the same keys on
 * both sides, other values, and at least one cell each. */
static void check_selectors(const struct lb_rfile *f, struct lb_cmp_within *w)
{
	char list[1024];
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < w->sel[s].n; i++)
			if (!file_has_key(f, w->sel[s].key[i])) {
				list_texts(f, NULL, list, sizeof(list));
				lb_usage_error("%s: %s has no param '%s'; accepted keys: %s", side_opt[s],
					       f->path, w->sel[s].key[i], list);
			}
	const struct lb_cmp_selector *a = &w->sel[0], *b = &w->sel[1];
	bool same_keys = a->n == b->n, same_values = true;
	for (size_t i = 0; i < b->n && same_keys; i++) {
		size_t k = 0;
		while (k < a->n && strcmp(a->key[k], b->key[i]))
			k++;
		same_keys = k < a->n;
		same_values &= same_keys && !strcmp(a->value[k], b->value[i]);
	}
	if (!same_keys)
		lb_usage_error("--side-b: '%s' does not name the params of --side-a '%s'; accepted: "
			       "the same keys with other values", b->text, a->text);
	if (same_values)
		lb_usage_error("--side-b: '%s' picks the cells of --side-a; accepted: the same keys "
			       "with other values", b->text);
	for (int s = 0; s < 2; s++) {
		size_t n = 0;
		for (size_t c = 0; c < f->ncells; c++)
			n += w->member[s][c];
		if (n)
			continue;
		/* Name the first key no cell has with that value. */
		const struct lb_cmp_selector *sel = &w->sel[s];
		size_t bad = 0;
		for (size_t i = 0; i < sel->n; i++) {
			struct lb_cmp_selector one = { .n = 1, .key = { sel->key[i] },
						       .value = { sel->value[i] } };
			bool any = false;
			for (size_t c = 0; c < f->ncells && !any; c++)
				any = selector_takes(&one, f->cells[c].params);
			if (!any) {
				bad = i;
				break;
			}
		}
		list_texts(f, sel->key[bad], list, sizeof(list));
		lb_usage_error("%s: no cell of %s has %s; accepted values of %s: %s", side_opt[s],
			       f->path, sel->text, sel->key[bad], list);
	}
}

static const char *config_string(const struct lb_rfile *f, const char *key)
{
	const json_t *v = json_object_get(json_object_get(f->root, "config"), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The sides a file names through its schema's hints (lb_sides_hints: an ab
 * file, aim7 --ab); false for a file without. */
static bool sides_of_file(const struct lb_rfile *f, struct lb_cmp_within *w, const char **lock_key)
{
	const struct lb_sides_hints *h = f->schema->sides;
	if (!h || (h->when_config && !config_string(f, h->when_config)))
		return false;
	const char *values[2] = { h->values[0], h->values[1] };
	const char *names[2] = { config_string(f, h->name_config[0]),
				 config_string(f, h->name_config[1]) };
	*lock_key = h->lock_param ? h->lock_param : config_string(f, h->lock_param_config);
	for (int s = 0; s < 2; s++) {
		struct lb_cmp_selector *sel = &w->sel[s];
		memset(sel, 0, sizeof(*sel));
		snprintf(sel->text, sizeof(sel->text), "side=%s", values[s]);
		sel->n = 1;
		sel->key[0] = h->side_param;
		sel->value[0] = values[s];
		if (names[s] && !h->label_value)
			snprintf(w->label[s], sizeof(w->label[s]), "%s", names[s]);
		else if (names[s])
			snprintf(w->label[s], sizeof(w->label[s]), "%s %s", values[s], names[s]);
		else
			snprintf(w->label[s], sizeof(w->label[s]), "%s", values[s]);
	}
	return true;
}

static void exclude(struct lb_cmp_within *w, const char *key)
{
	if (!lb_cmp_within_excludes(w, key) &&
	    w->nexcluded + 1 < sizeof(w->excluded) / sizeof(w->excluded[0]))
		w->excluded[w->nexcluded++] = key;
	w->excluded[w->nexcluded] = NULL;
}

void lb_cmp_within_setup(const struct lb_rfile *f, const char *a_arg, const char *b_arg,
			 struct lb_cmp_within *w)
{
	const char *lock_key = NULL;
	memset(w, 0, sizeof(*w));
	if (a_arg) {
		parse_selector("--side-a", a_arg, &w->sel[0]);
		parse_selector("--side-b", b_arg, &w->sel[1]);
		for (int s = 0; s < 2; s++) {
			const struct lb_cmp_selector *sel = &w->sel[s];
			/* One key: its value names the side ("ticket"); more: the text. */
			snprintf(w->label[s], sizeof(w->label[s]), "%s",
				 sel->n == 1 ? sel->value[0] : sel->text);
		}
	} else if (!sides_of_file(f, w, &lock_key)) {
		lb_usage_error("%s: one %s file has no sides of its own; accepted: two files or more, "
			       "one file with --side-a KEY=VALUE --side-b KEY=VALUE, or an aim7 --ab "
			       "or ab file alone", f->path, f->schema->name);
	}
	for (int s = 0; s < 2; s++) {
		w->member[s] = calloc(f->ncells ? f->ncells : 1, sizeof(bool));
		if (!w->member[s])
			lb_usage_error("out of memory");
		for (size_t c = 0; c < f->ncells; c++)
			w->member[s][c] = selector_takes(&w->sel[s], f->cells[c].params);
		for (size_t i = 0; i < w->sel[s].n; i++)
			exclude(w, w->sel[s].key[i]);
	}
	if (lock_key)
		exclude(w, lock_key);
	check_selectors(f, w);
}

void lb_cmp_within_free(struct lb_cmp_within *w)
{
	free(w->member[0]);
	free(w->member[1]);
	w->member[0] = w->member[1] = NULL;
}

bool lb_cmp_within_excludes(const struct lb_cmp_within *w, const char *key)
{
	for (size_t i = 0; i < w->nexcluded; i++)
		if (!strcmp(w->excluded[i], key))
			return true;
	return false;
}
