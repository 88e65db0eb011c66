// SPDX-License-Identifier: GPL-2.0-only
/* A raw capture for `jankwatch symbolize`: it may come from anywhere, damaged or crafted. */
#include "fuzz_common.h"
#include "output/rawfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jw_raw_reader *rd;
	struct jw_raw_header h;
	struct jw_raw_report r;
	char path[64], err[512];
	int fd, i;

	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	rd = jw_raw_open(path, &h, err, sizeof(err));
	/* Every report the reader accepts, up to a bound: a crafted file must not loop. */
	for (i = 0; rd && i < 1000 && jw_raw_next(rd, &r, err, sizeof(err)) == 1; i++)
		;
	jw_raw_close(rd);
	close(fd);
	return 0;
}
