// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/when.h"
#include "session/logargs.h"

int jw_range_option(struct jw_range *r, const char *cmd, int opt, const char *arg,
		    int64_t now_ns)
{
	char err[512], *end;

	if (opt == 'p') {
		errno = 0;
		r->pid = strtol(arg, &end, 10);
		if (errno || *end || end == arg || r->pid <= 0) {
			fprintf(stderr, "jankwatch: %s: --pid %s: not a process id\n", cmd, arg);
			return -EINVAL;
		}
		return 0;
	}
	if (jw_parse_when(arg, now_ns, opt == 's' ? &r->since_ns : &r->until_ns, err,
			  sizeof(err))) {
		fprintf(stderr, "jankwatch: %s: --%s: %s\n", cmd, opt == 's' ? "since" : "until",
			err);
		return -EINVAL;
	}
	return 0;
}

bool jw_range_has(const struct jw_range *r, int64_t begin_ns, long pid)
{
	return (!r->since_ns || begin_ns >= r->since_ns) &&
	       (!r->until_ns || begin_ns < r->until_ns) && (!r->pid || pid == r->pid);
}

int jw_logargs_bad_option(const char *cmd, int c, char *const *argv)
{
	if (c == ':')
		fprintf(stderr, "jankwatch: %s: %s needs a value (--help for usage)\n", cmd,
			argv[optind - 1]);
	else
		fprintf(stderr, "jankwatch: %s: bad option '%s' (--help for usage)\n", cmd,
			argv[optind - 1]);
	return -EINVAL;
}

int jw_logargs_finish(const struct jw_range *r, const char *cmd, int argc, char *const *argv,
		      const char **dir)
{
	if (optind != argc - 1) {
		fprintf(stderr, "jankwatch: %s: give one log directory (--help for usage)\n", cmd);
		return -EINVAL;
	}
	*dir = argv[optind];
	if (r->since_ns && r->until_ns && r->until_ns <= r->since_ns) {
		fprintf(stderr, "jankwatch: %s: --until is not after --since\n", cmd);
		return -EINVAL;
	}
	return 0;
}
