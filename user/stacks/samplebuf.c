// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/samplebuf.h"

int jw_samplebuf_init(struct jw_samplebuf *b, size_t max_kept)
{
	memset(b, 0, sizeof(*b));
	if (max_kept < 2)
		max_kept = 2;
	b->max_kept = (max_kept + 1) & ~(size_t)1;
	b->items = calloc(b->max_kept, sizeof(*b->items));
	b->stride = 1;
	return b->items ? 0 : -ENOMEM;
}

void jw_samplebuf_clear(struct jw_samplebuf *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->items[i]);
	b->n = 0;
	b->offered = 0;
	b->stride = 1;
}

void jw_samplebuf_free(struct jw_samplebuf *b)
{
	if (!b->items)
		return;
	jw_samplebuf_clear(b);
	free(b->items);
	b->items = NULL;
}

/* Keeps items 0, 2, 4, ...: those whose offered index is a multiple of the doubled stride. */
static void halve(struct jw_samplebuf *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (i % 2)
			free(b->items[i]);
		else
			b->items[i / 2] = b->items[i];
	}
	b->n = (b->n + 1) / 2;
	b->stride *= 2;
}

int jw_samplebuf_add(struct jw_samplebuf *b, uint64_t seq, const void *data, size_t size)
{
	void *copy;

	if (seq != b->seq) {
		jw_samplebuf_clear(b);
		b->seq = seq;
	}
	if (b->offered++ % b->stride)
		return 0;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	if (b->n == b->max_kept) {
		halve(b);
		/* The new sample's offered index is a multiple of the old stride only. */
		if ((b->offered - 1) % b->stride) {
			free(copy);
			return 0;
		}
	}
	b->items[b->n++] = copy;
	return 0;
}
