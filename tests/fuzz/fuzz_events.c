// SPDX-License-Identifier: GPL-2.0-only
/* A line of events.jsonl, as `jankwatch report` reads it (the log directory may hold anything). */
#include "base/jsonread.h"
#include "fuzz_common.h"

static int count(void *ctx, const struct jw_json_field *f)
{
	size_t *n = ctx;

	/* Touch what a reader would. */
	if (f->type == JW_JSON_STR)
		*n += strlen(f->str);
	*n += strlen(f->key);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;

	jw_json_fields((const char *)data, size, count, &n);
	return 0;
}
