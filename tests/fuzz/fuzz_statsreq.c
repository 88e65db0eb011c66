// SPDX-License-Identifier: GPL-2.0-only
/* A request line on the stats socket (only root may send one, but still). */
#include "fuzz_common.h"
#include "session/statsock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jw_stats_req req;
	char *text = fuzz_string(data, size);

	if (text) {
		jw_stats_req_parse(text, &req);
		free(text);
	}
	return 0;
}
