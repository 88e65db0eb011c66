/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the commands over a log directory (jankwatch report, jankwatch export) take alike: the
 * range of janks (--since, --until, -p) and one LOGDIR, each bad value said in one line.
 */
#ifndef JW_LOGARGS_H
#define JW_LOGARGS_H

#include <stdbool.h>
#include <stdint.h>

/* The janks taken: begun in [since_ns, until_ns) (0: no bound), of process pid (0: any). */
struct jw_range {
	int64_t since_ns, until_ns;	/* ns since the epoch */
	long pid;
};

/*
 * Takes option @opt ('s', 'u' or 'p') with @arg into @r, times relative to @now_ns. 0, or
 * -EINVAL said on stderr as subcommand @cmd's.
 */
int jw_range_option(struct jw_range *r, const char *cmd, int opt, const char *arg,
		    int64_t now_ns);

/* Whether a jank begun at @begin_ns (ns since the epoch) in process @pid is in @r. */
bool jw_range_has(const struct jw_range *r, int64_t begin_ns, long pid);

/*
 * Says getopt_long's @c (':' a value missing, else an unknown option) for @cmd, the option at
 * argv[optind - 1]. Returns -EINVAL.
 */
int jw_logargs_bad_option(const char *cmd, int c, char *const *argv);

/*
 * After the options: the one LOGDIR left (argv[optind]) into @dir, and --until after --since.
 * 0, or -EINVAL said.
 */
int jw_logargs_finish(const struct jw_range *r, const char *cmd, int argc, char *const *argv,
		      const char **dir);

#endif
