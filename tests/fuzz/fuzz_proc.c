// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the kernel writes but the target names: /proc/PID/stat (comm may hold anything, ')'
 * and newlines included) and /proc/PID/maps lines (file paths); /proc/PID/syscall besides.
 */
#include <limits.h>

#include "fuzz_common.h"
#include "process/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char comm[64], path[PATH_MAX], *text = fuzz_string(data, size), *line, *save = NULL;
	uint64_t start;

	if (!text)
		return 0;
	jw_proc_stat_parse(text, comm, sizeof(comm), &start);
	jw_syscall_is_wait(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		jw_maps_line_match(1234, line, "libglib-2.0.so", path, sizeof(path));
		jw_maps_line_match(1234, line, "/usr/bin/redis-server", path, sizeof(path));
	}
	free(text);
	return 0;
}
