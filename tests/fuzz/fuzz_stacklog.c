// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stack log, as `jankwatch report --html` reads it back from a log directory (copied off a
 * device, it may hold anything): read, merged into a flame graph, cut to the page's bounds.
 */
#include "fuzz_common.h"
#include "report/flamemerge.h"
#include "report/stacklog.h"

static int merge(const struct jw_stacklog_frame *fr, void *ctx)
{
	return jw_flamemerge__add(ctx, fr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jw_flamemerge *m = jw_flamemerge__new();
	struct jw_flame fl = { 0 };
	uint64_t samples;
	size_t cut;
	FILE *f;

	f = size ? fmemopen((void *)data, size, "r") : NULL;
	if (f && m) {
		/* Twice, as two stack logs of one group. */
		jw_stacklog_read(f, merge, m, &samples);
		jw_flamemerge__next(m);
		rewind(f);
		jw_stacklog_read(f, merge, m, &samples);
		jw_flamemerge__next(m);
		if (!jw_flamemerge__flame(m, 1, 50, &fl, &cut))
			jw_flame__free(&fl);
	}
	if (f)
		fclose(f);
	jw_flamemerge__free(m);
	return 0;
}
