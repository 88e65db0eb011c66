// SPDX-License-Identifier: GPL-2.0-only
/* What jankwatch says of itself: --version and --help's text (the parameters' from params.c). */
#include <stdio.h>
#include <string.h>

#include "base/buildid.h"
#include "config/cli.h"
#include "config/options.h"
#include "config/params.h"
#include "loops/presets.h"

void jw_options_version(void *out)
{
	char id[2 * 64 + 1];

	if (jw_own_build_id(id, sizeof(id)))
		snprintf(id, sizeof(id), "none");
	fprintf(out, "jankwatch %s (build-id %s, %s%s)\n", JW_VERSION, id, JW_ARCH_NAME,
		JW_STATIC ? ", static" : "");
}

void jw_options_usage(void *out)
{
	const struct jw_cli_cmd *cmds;
	char names[512];
	size_t i, n;
	FILE *f = out;

	cmds = jw_cli_cmds(&n);
	for (i = 0; i < n; i++) {
		jw_cli_synopsis(&cmds[i], f, !i);
		jw_cli_wrap(f, cmds[i].about, 0, 11, 78);
	}
	fputc('\n', f);
	jw_cli_options_help(&cmds[0], f);
	jw_loop_names(names, sizeof(names));
	fputs("\nLoops (--loop NAME):\n", f);
	jw_cli_wrap(f, names, 0, 2, 78);
	fputs("\nParameters (--set KEY=VALUE, or one a line in --config FILE):\n", f);
	jw_params_usage(f);
}
