// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strpool.h"

/* Open addressing, linear probing, kept at most half full. */
struct jw_strpool {
	char **slots;
	size_t cap;	/* a power of two */
	size_t count;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

struct jw_strpool *jw_strpool__new(void)
{
	struct jw_strpool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->cap = 256;
	p->slots = calloc(p->cap, sizeof(*p->slots));
	if (!p->slots) {
		free(p);
		return NULL;
	}
	return p;
}

void jw_strpool__free(struct jw_strpool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->cap; i++)
		free(p->slots[i]);
	free(p->slots);
	free(p);
}

static char **find_slot(char **slots, size_t cap, const char *s)
{
	size_t i = hash_str(s) & (cap - 1);

	while (slots[i] && strcmp(slots[i], s) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct jw_strpool *p)
{
	size_t cap = p->cap * 2, i;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < p->cap; i++)
		if (p->slots[i])
			*find_slot(slots, cap, p->slots[i]) = p->slots[i];
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
	return 0;
}

const char *jw_strpool__intern(struct jw_strpool *p, const char *s)
{
	char **slot;

	if (!s)
		return NULL;
	slot = find_slot(p->slots, p->cap, s);
	if (*slot)
		return *slot;
	if (2 * (p->count + 1) > p->cap) {
		if (grow(p))
			return NULL;
		slot = find_slot(p->slots, p->cap, s);
	}
	*slot = strdup(s);
	if (!*slot)
		return NULL;
	p->count++;
	return *slot;
}

size_t jw_strpool__count(const struct jw_strpool *p)
{
	return p->count;
}
