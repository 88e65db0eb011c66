// SPDX-License-Identifier: GPL-2.0-only
/* jankwatch: main-thread jank monitor for unmodified Linux processes, with eBPF. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "session/offline.h"
#include "config/options.h"
#include "session/session.h"
#include "session/statsock.h"

int main(int argc, char **argv)
{
	struct jw_config cfg;
	char err[1024];
	int status;

	if (argc > 1 && strcmp(argv[1], "symbolize") == 0)
		return jw_symbolize_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stats") == 0)
		return jw_stats_main(argc - 1, argv + 1);
	if (jw_options_parse(&cfg, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "jankwatch: %s (--help for usage)\n", err);
		return 2;
	}
	if (cfg.help) {
		jw_config_free(&cfg);
		return 0;
	}
	if (cfg.verbosity < 0)
		jw_log_set_level(JW_LOG_ERROR);
	else if (cfg.verbosity > 0)
		jw_log_set_level(JW_LOG_DEBUG);
	if (geteuid() != 0) {
		jw_log(JW_LOG_ERROR, "must run as root (BPF programs and uprobes need CAP_BPF, "
				     "CAP_PERFMON and CAP_SYS_ADMIN)");
		jw_config_free(&cfg);
		return 1;
	}
	status = jw_session_run(&cfg);
	jw_config_free(&cfg);
	return status;
}
