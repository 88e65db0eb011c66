/* SPDX-License-Identifier: GPL-2.0-only */
/* `jankwatch symbolize RAW`: the logs of a raw capture written again, on any machine. */
#ifndef JW_OFFLINE_H
#define JW_OFFLINE_H

/* Runs the subcommand on its own arguments (argv[0] is "symbolize"). Returns the exit status. */
int jw_symbolize_main(int argc, char **argv);

#endif
