// SPDX-License-Identifier: GPL-2.0-only
/* jankwatch: main-thread jank monitor for unmodified Linux processes, with eBPF. */
#include <stdio.h>
#include <string.h>

#include "attach/kernel.h"
#include "base/caps.h"
#include "base/log.h"
#include "session/export.h"
#include "session/logreport.h"
#include "session/offline.h"
#include "config/options.h"
#include "session/session.h"
#include "session/statsock.h"

int main(int argc, char **argv)
{
	struct jw_capset caps;
	struct jw_config cfg;
	char err[1024];
	int status, ret, top;

	if (argc > 1 && strcmp(argv[1], "symbolize") == 0)
		return jw_symbolize_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stats") == 0)
		return jw_stats_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return jw_export_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return jw_report_main(argc - 1, argv + 1);
	/* top: a watch, shown as a table; its options are the watch's. */
	top = argc > 1 && strcmp(argv[1], "top") == 0;
	if (jw_options_parse(&cfg, argc - top, argv + top, err, sizeof(err))) {
		fprintf(stderr, "jankwatch%s: %s (--help for usage)\n", top ? " top" : "", err);
		return 2;
	}
	cfg.top = top;
	if (cfg.help) {
		jw_config_free(&cfg);
		return 0;
	}
	if (cfg.verbosity < 0)
		jw_log_set_level(JW_LOG_ERROR);
	else if (cfg.verbosity > 0)
		jw_log_set_level(JW_LOG_DEBUG);
	ret = jw_caps_own(&caps);
	if (ret)
		snprintf(err, sizeof(err), "cannot read this process's capabilities: %s",
			 strerror(-ret));
	/* The trial uprobe only where CAP_SYS_ADMIN, which always may make them, is missing. */
	if (ret || !jw_caps_enough(&caps, jw_caps_has(&caps, JW_CAP_SYS_ADMIN) ||
					   jw_kernel_uprobes_allowed(), err, sizeof(err))) {
		jw_log(JW_LOG_ERROR, "%s", err);
		jw_config_free(&cfg);
		return 1;
	}
	status = jw_session_run(&cfg);
	jw_config_free(&cfg);
	return status;
}
