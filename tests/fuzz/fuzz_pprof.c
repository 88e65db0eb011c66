// SPDX-License-Identifier: GPL-2.0-only
/* A profile file merged by `jankwatch export` (any file named profile-*.pb.gz in a log dir). */
#include "fuzz_common.h"
#include "output/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jw_pprof *p = jw_pprof__new(10000000);
	char err[256];
	FILE *f;

	if (!p)
		return 0;
	/* Merged, it must also write: what export does next. */
	if (jw_pprof__merge(p, data, size, 0, 0, err, sizeof(err)) == 1) {
		f = fopen("/dev/null", "w");
		if (f) {
			jw_pprof__write(p, f);
			fclose(f);
		}
	}
	jw_pprof__free(p);
	return 0;
}
