/* SPDX-License-Identifier: MIT */
/*
 * lb_json.h - a small streaming JSON writer.  Tracks nesting and commas so
 * callers just say what comes next; strings are escaped per RFC 8259;
 * non-finite doubles are written as null.  Pretty-prints with 2-space indent.
 */
#ifndef LB_JSON_H
#define LB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LB_JSON_MAX_DEPTH 32

struct lb_json {
	FILE *out;
	int depth;
	bool first[LB_JSON_MAX_DEPTH]; /* no element written yet at this level */
	bool after_key;                /* a key was just written: no comma/indent */
};

void lb_json_init(struct lb_json *j, FILE *out);
void lb_json_object_begin(struct lb_json *j);
void lb_json_object_end(struct lb_json *j);
void lb_json_array_begin(struct lb_json *j);
void lb_json_array_end(struct lb_json *j);
void lb_json_key(struct lb_json *j, const char *key); /* next value belongs to it */
void lb_json_string(struct lb_json *j, const char *s); /* NULL -> null */
void lb_json_int(struct lb_json *j, int64_t v);
void lb_json_uint(struct lb_json *j, uint64_t v);
void lb_json_double(struct lb_json *j, double v);
void lb_json_bool(struct lb_json *j, bool v);
void lb_json_null(struct lb_json *j);

/* Shorthands: key + value. */
void lb_json_kv_string(struct lb_json *j, const char *key, const char *s);
void lb_json_kv_int(struct lb_json *j, const char *key, int64_t v);
void lb_json_kv_uint(struct lb_json *j, const char *key, uint64_t v);
void lb_json_kv_double(struct lb_json *j, const char *key, double v);
void lb_json_kv_bool(struct lb_json *j, const char *key, bool v);
/* key + an array of v[0..n), e.g. a config's list of thread counts. */
void lb_json_kv_uint_array(struct lb_json *j, const char *key, const unsigned int *v, size_t n);

#endif /* LB_JSON_H */
