/* SPDX-License-Identifier: GPL-2.0-only */
/* `jankwatch report LOGDIR`: what a log directory's events say, by jank group. */
#ifndef JW_LOGREPORT_H
#define JW_LOGREPORT_H

/* Runs the subcommand on its own arguments (argv[0] is "report"). Returns the exit status. */
int jw_report_main(int argc, char **argv);

#endif
