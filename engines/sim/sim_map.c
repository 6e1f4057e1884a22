/* SPDX-License-Identifier: MIT */
/*
 * sim_map.c - an open-addressing map from a nonzero key (a line tag, a
 * futex address) to an object, for the line directory and the futex
 * queues.  Lookups never depend on host addresses' order, only equality.
 */
#include "sim_internal.h"

#include <stdlib.h>

static size_t slot_of(uintptr_t key, size_t cap)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

void *sim_map_get(const struct sim_map *mp, uintptr_t key)
{
	if (!mp->cap)
		return NULL;
	for (size_t i = slot_of(key, mp->cap);; i = (i + 1) & (mp->cap - 1)) {
		if (mp->keys[i] == key)
			return mp->vals[i];
		if (!mp->keys[i])
			return NULL;
	}
}

static int grow(struct sim_map *mp)
{
	size_t cap = mp->cap ? mp->cap * 2 : 64;
	uintptr_t *keys = calloc(cap, sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t j = 0; j < mp->cap; j++) {
		if (!mp->keys[j])
			continue;
		size_t i = slot_of(mp->keys[j], cap);
		while (keys[i])
			i = (i + 1) & (cap - 1);
		keys[i] = mp->keys[j];
		vals[i] = mp->vals[j];
	}
	free(mp->keys);
	free(mp->vals);
	mp->keys = keys;
	mp->vals = vals;
	mp->cap = cap;
	return 0;
}

int sim_map_put(struct sim_map *mp, uintptr_t key, void *val)
{
	if ((mp->used + 1) * 2 > mp->cap && grow(mp))
		return -1;
	size_t i = slot_of(key, mp->cap);
	while (mp->keys[i] && mp->keys[i] != key)
		i = (i + 1) & (mp->cap - 1);
	if (!mp->keys[i])
		mp->used++;
	mp->keys[i] = key;
	mp->vals[i] = val;
	return 0;
}

void sim_map_free(struct sim_map *mp, bool free_vals)
{
	for (size_t i = 0; free_vals && i < mp->cap; i++)
		if (mp->keys[i])
			free(mp->vals[i]);
	free(mp->keys);
	free(mp->vals);
	mp->keys = NULL;
	mp->vals = NULL;
	mp->cap = mp->used = 0;
}
