// SPDX-License-Identifier: GPL-2.0-only
/* A line of events.jsonl, as `jankwatch report` reads it (the log directory may hold anything). */
#include "base/jsonread.h"
#include "fuzz_common.h"

static int count(void *ctx, const struct jw_json_field *f)
{
	size_t *n = ctx, i;
	const char *p;

	/* Touch what a reader would: strings, and an array's (report --html reads external_log's). */
	if (f->type == JW_JSON_STR)
		*n += strlen(f->str);
	for (i = 0, p = f->items; p && i < f->n_items; i++, p += strlen(p) + 1)
		*n += strlen(p);
	*n += strlen(f->key);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;

	jw_json_fields((const char *)data, size, count, &n);
	return 0;
}
