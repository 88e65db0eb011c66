/* SPDX-License-Identifier: GPL-2.0-only */
/* `jankwatch export --format pprof LOGDIR -o FILE`: a log directory's profiles merged into one. */
#ifndef JW_EXPORT_H
#define JW_EXPORT_H

/* Runs the subcommand on its own arguments (argv[0] is "export"). Returns the exit status. */
int jw_export_main(int argc, char **argv);

#endif
