/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading one JSON object a line (RFC 8259), as events.jsonl holds them: the top-level fields
 * handed over one by one, strings unescaped; nested arrays and objects checked and skipped,
 * an array counted, its strings kept when it holds only strings.
 */
#ifndef JW_JSONREAD_H
#define JW_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

enum jw_json_type { JW_JSON_NULL, JW_JSON_BOOL, JW_JSON_NUM, JW_JSON_STR, JW_JSON_ARRAY,
		    JW_JSON_OBJECT };

struct jw_json_field {
	const char *key;		/* unescaped, NUL-terminated */
	enum jw_json_type type;
	bool b;				/* JW_JSON_BOOL */
	double num;			/* JW_JSON_NUM */
	const char *str;		/* JW_JSON_STR: unescaped, NUL-terminated (a NUL inside
					 * cuts it short) */
	size_t n_items;			/* JW_JSON_ARRAY: its length */
	const char *items;		/* JW_JSON_ARRAY of strings only (one at least): its
					 * n_items strings one after the other, each
					 * NUL-terminated; else NULL */
};

/*
 * Calls @cb(@ctx, field) for each top-level field of the one object @text (@len bytes; blanks
 * around it allowed), in order. The field's strings live until @cb returns. Stops at the first
 * non-zero return of @cb and returns it; else 0, -EINVAL when @text is not one JSON object
 * (nested deeper than 64 levels counts as not), -ENOMEM.
 */
int jw_json_fields(const char *text, size_t len,
		   int (*cb)(void *ctx, const struct jw_json_field *f), void *ctx);

#endif
