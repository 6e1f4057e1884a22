/* SPDX-License-Identifier: MIT */
/*
 * result_index.c - finding cells fast in big result files (see
 * result_file.h): which params vary, and a hash of params for matching.
 * A 20 locks x 1,000 thread counts file is 20,000 cells; asking "does this
 * key vary?" or "which cell matches?" by scanning every cell per cell was
 * quadratic (4,000 cells 63 s, 20,000 never ended on a loaded 2-CPU guest).
 * jansson's objects are the hash tables.
 */
#include "result_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key_state {
	char first[128]; /* the text of the key in the first cell that has it */
	size_t seen;     /* cells that have the key */
	bool varies;
};

json_t *lb_rfile_varying_keys(const struct lb_rfile *files, size_t nfiles)
{
	json_t *slot_of = json_object(), *out = json_object();
	struct key_state *st = NULL;
	size_t nkeys = 0, cap = 0, cells = 0;
	if (!slot_of || !out)
		goto fail;
	for (size_t f = 0; f < nfiles; f++)
		for (size_t c = 0; c < files[f].ncells; c++, cells++) {
			const char *key;
			json_t *v;
			json_object_foreach(files[f].cells[c].params, key, v) {
				char text[128];
				lb_param_text(v, text, sizeof(text));
				json_t *slot = json_object_get(slot_of, key);
				if (!slot) {
					if (nkeys == cap) {
						struct key_state *grown =
							realloc(st, (cap = cap ? 2 * cap : 16) * sizeof(*st));
						if (!grown)
							goto fail;
						st = grown;
					}
					struct key_state *k = &st[nkeys];
					snprintf(k->first, sizeof(k->first), "%s", text);
					k->seen = 0;
					/* Cells before this one lack the key: they read "null". */
					k->varies = cells > 0 && strcmp(text, "null") != 0;
					if (json_object_set_new(slot_of, key, json_integer((json_int_t)nkeys++)))
						goto fail;
					slot = json_object_get(slot_of, key);
				}
				struct key_state *k = &st[json_integer_value(slot)];
				k->seen++;
				if (!k->varies && strcmp(text, k->first) != 0)
					k->varies = true;
			}
		}
	const char *key;
	json_t *slot;
	json_object_foreach(slot_of, key, slot) {
		const struct key_state *k = &st[json_integer_value(slot)];
		/* Cells after the last one with the key read "null" too. */
		bool varies = k->varies || (k->seen < cells && strcmp(k->first, "null") != 0);
		if (varies && json_object_set_new(out, key, json_true()))
			goto fail;
	}
	json_decref(slot_of);
	free(st);
	return out;
fail:
	json_decref(slot_of);
	json_decref(out);
	free(st);
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The signature of params over keys (NULL: all its keys), or NULL. */
static char *signature(const json_t *params, const char *const *keys)
{
	const char *own[64], *const *list = keys;
	size_t n = 0;
	if (!keys) {
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)params, key, v) {
			if (n == sizeof(own) / sizeof(own[0]) - 1)
				return NULL; /* more keys than any schema has: no fast path */
			own[n++] = key;
		}
		qsort(own, n, sizeof(own[0]), by_name);
		own[n] = NULL;
		list = own;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&buf, &len);
	if (!s)
		return NULL;
	for (size_t i = 0; list[i]; i++) {
		const json_t *v = json_object_get(params, list[i]);
		/* \x1f (unit separator) and \x1e keep "a"+"bc" apart from "ab"+"c". */
		fprintf(s, "%s\x1f", list[i]);
		if (!v)
			fputs("-", s);
		else if (json_is_string(v))
			fprintf(s, "s%zu:%s", json_string_length(v), json_string_value(v));
		else if (json_is_integer(v))
			fprintf(s, "i%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			fputs("r", s);
		else if (json_is_boolean(v))
			fputs(json_is_true(v) ? "t" : "f", s);
		else if (json_is_null(v))
			fputs("n", s);
		else
			fputs("?", s); /* objects, arrays: json_equal decides, within the bucket */
		fputc('\x1e', s);
	}
	if (fclose(s)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int lb_rfile_index_build(const struct lb_rfile *f, const char *const *keys, struct lb_rindex *ix)
{
	ix->map = json_object();
	if (!ix->map)
		return -1;
	for (size_t c = 0; c < f->ncells; c++) {
		char *sig = signature(f->cells[c].params, keys);
		if (!sig)
			goto fail;
		json_t *list = json_object_get(ix->map, sig);
		if (!list) {
			list = json_array();
			if (!list || json_object_set_new(ix->map, sig, list)) {
				free(sig);
				goto fail;
			}
		}
		free(sig);
		if (json_array_append_new(list, json_integer((json_int_t)c)))
			goto fail;
	}
	return 0;
fail:
	lb_rfile_index_free(ix);
	return -1;
}

const json_t *lb_rfile_index_lookup(const struct lb_rindex *ix, const json_t *params,
				    const char *const *keys)
{
	char *sig = signature(params, keys);
	const json_t *list = sig ? json_object_get(ix->map, sig) : NULL;
	free(sig);
	return list;
}

void lb_rfile_index_free(struct lb_rindex *ix)
{
	json_decref(ix->map);
	ix->map = NULL;
}

/* Bit 1: an integer somewhere under the key, bit 2: a real. */
static json_t *number_kinds(const struct lb_rfile *f)
{
	json_t *kinds = json_object();
	for (size_t c = 0; kinds && c < f->ncells; c++) {
		const char *key;
		json_t *v;
		json_object_foreach(f->cells[c].params, key, v) {
			if (!json_is_number(v))
				continue;
			json_int_t bits = json_integer_value(json_object_get(kinds, key));
			bits |= json_is_integer(v) ? 1 : 2;
			json_object_set_new(kinds, key, json_integer(bits));
		}
	}
	return kinds;
}

bool lb_rfile_index_mixed(const struct lb_rfile *a, const struct lb_rfile *b,
			  const char *const *keys)
{
	json_t *ka = number_kinds(a), *kb = number_kinds(b);
	bool mixed = !ka || !kb;
	const char *key;
	json_t *v;
	if (!mixed)
		json_object_foreach(ka, key, v) {
			bool wanted = !keys;
			for (size_t i = 0; keys && keys[i] && !wanted; i++)
				wanted = !strcmp(keys[i], key);
			json_int_t both = json_integer_value(v) | json_integer_value(json_object_get(kb, key));
			if (wanted && both == 3)
				mixed = true;
		}
	json_decref(ka);
	json_decref(kb);
	return mixed;
}
