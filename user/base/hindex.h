/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An index of 64-bit keys (never 0) to 32-bit values: open addressing, linear probing, grown at
 * half full. For lookups that a linear search made quadratic (a pass over every statistics row).
 */
#ifndef JW_HINDEX_H
#define JW_HINDEX_H

#include <stddef.h>
#include <stdint.h>

struct jw_hindex {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

/* Empties @ix and frees its memory (a zeroed index is an empty one). */
void jw_hindex_free(struct jw_hindex *ix);

/* The value of @key, or NULL. The pointer lasts until the next put. */
uint32_t *jw_hindex_get(const struct jw_hindex *ix, uint64_t key);

/* Sets @key (0 counts as 1) to @val. 0 or -ENOMEM. */
int jw_hindex_put(struct jw_hindex *ix, uint64_t key, uint32_t val);

/* FNV-1a of @s and its NUL, chained from @h (0: the start). */
uint64_t jw_hash_str(uint64_t h, const char *s);

/* FNV-1a of the @n bytes at @p, chained from @h (0: the start). */
uint64_t jw_hash_bytes(uint64_t h, const void *p, size_t n);

#endif
