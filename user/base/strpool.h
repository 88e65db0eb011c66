/* SPDX-License-Identifier: GPL-2.0-only */
/* Interned strings: one copy of each, alive until the pool is freed. */
#ifndef JW_STRPOOL_H
#define JW_STRPOOL_H

#include <stddef.h>

struct jw_strpool;

struct jw_strpool *jw_strpool__new(void);
void jw_strpool__free(struct jw_strpool *p);	/* NULL-safe */

/* The pool's copy of @s (NULL for NULL, or when out of memory). */
const char *jw_strpool__intern(struct jw_strpool *p, const char *s);

/* Number of distinct strings held. */
size_t jw_strpool__count(const struct jw_strpool *p);

#endif
