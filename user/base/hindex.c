// SPDX-License-Identifier: GPL-2.0-only
/* An index of 64-bit keys to 32-bit values. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hindex.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

void jw_hindex_free(struct jw_hindex *ix)
{
	free(ix->keys);
	free(ix->vals);
	memset(ix, 0, sizeof(*ix));
}

uint32_t *jw_hindex_get(const struct jw_hindex *ix, uint64_t key)
{
	size_t i;

	if (!key)
		key = 1;
	if (!ix->cap)
		return NULL;
	for (i = key & (ix->cap - 1); ix->keys[i]; i = (i + 1) & (ix->cap - 1))
		if (ix->keys[i] == key)
			return &ix->vals[i];
	return NULL;
}

int jw_hindex_put(struct jw_hindex *ix, uint64_t key, uint32_t val)
{
	size_t i;

	if (!key)
		key = 1;
	if ((ix->n + 1) * 2 > ix->cap) {
		struct jw_hindex big = { .cap = ix->cap ? ix->cap * 2 : 64 };

		big.keys = calloc(big.cap, sizeof(*big.keys));
		big.vals = calloc(big.cap, sizeof(*big.vals));
		if (!big.keys || !big.vals) {
			jw_hindex_free(&big);
			return -ENOMEM;
		}
		for (i = 0; i < ix->cap; i++)
			if (ix->keys[i])
				jw_hindex_put(&big, ix->keys[i], ix->vals[i]);
		jw_hindex_free(ix);
		*ix = big;
	}
	for (i = key & (ix->cap - 1); ix->keys[i] && ix->keys[i] != key; i = (i + 1) & (ix->cap - 1))
		;
	if (!ix->keys[i])
		ix->n++;
	ix->keys[i] = key;
	ix->vals[i] = val;
	return 0;
}

uint64_t jw_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	if (!h)
		h = FNV_OFFSET;
	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

uint64_t jw_hash_str(uint64_t h, const char *s)
{
	return jw_hash_bytes(h, s, strlen(s) + 1);
}
