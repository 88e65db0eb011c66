// SPDX-License-Identifier: GPL-2.0-only
/* The config file and --set KEY=VALUE: any text, read as a config file and line by line. */
#include "fuzz_common.h"
#include "config/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jw_params params;
	char path[64], err[512], *text, *line, *save = NULL;
	int fd;

	jw_params_defaults(&params);
	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd >= 0) {
		if (!jw_params_load_file(&params, path, err, sizeof(err)))
			jw_params_finish(&params, err, sizeof(err));
		close(fd);
	}
	text = fuzz_string(data, size);
	if (!text)
		return 0;
	jw_params_defaults(&params);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		jw_params_set(&params, line, err, sizeof(err));
	jw_params_finish(&params, err, sizeof(err));
	free(text);
	return 0;
}
