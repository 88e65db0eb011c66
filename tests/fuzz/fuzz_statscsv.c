// SPDX-License-Identifier: GPL-2.0-only
/* stats.csv, as `jankwatch report --html` reads it from a log directory (it may hold anything). */
#include "base/csvread.h"
#include "fuzz_common.h"

static int touch(void *ctx, char **fields, size_t n)
{
	size_t *total = ctx, i;

	for (i = 0; i < n; i++)
		*total += strlen(fields[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t total = 0;

	jw_csv_records((const char *)data, size, touch, &total);
	return 0;
}
