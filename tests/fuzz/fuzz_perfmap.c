// SPDX-License-Identifier: GPL-2.0-only
/*
 * A JIT's perf map (/tmp/perf-PID.map, written by the target): every line parsed and its name
 * split, the whole file loaded and looked up, and /proc/PID/status's NSpid line.
 */
#include "fuzz_common.h"
#include "stacks/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct jw_perfmap *map;
	char path[64], *text;
	pid_t nspid;
	int fd;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = (nl ? nl : end) - p;
		struct jw_perfmap_line line;
		struct jw_perfmap_name name;

		if (!jw_perfmap_parse_line(p, len, &line))
			jw_perfmap_split_name(line.name, line.name_len, &name);
		p += len + 1;
	}
	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd >= 0) {
		map = jw_perfmap__open_file(path, 4096);
		if (map) {
			jw_perfmap__lookup(map, 0x1000);
			jw_perfmap__lookup(map, ~0ULL);
			jw_perfmap__free(map);
		}
		close(fd);
	}
	text = fuzz_string(data, size);
	if (text) {
		jw_perfmap_parse_nspid(text, &nspid);
		free(text);
	}
	return 0;
}
