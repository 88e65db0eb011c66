/* SPDX-License-Identifier: GPL-2.0-only */
/* --dry-run: what a watch would hook, printed on stdout; nothing attached. */
#ifndef JW_DRYRUN_H
#define JW_DRYRUN_H

#include "session/state.h"

/*
 * Prints the plan of session @s, whose -p targets are resolved (its --exe and --name processes
 * are looked for now): the kernel's plan, then each process with every hook as a watch would
 * attach it, then the log directory and the budgets. 0, or -errno where a watch would fail
 * (said on stderr).
 */
int session_dry_run(struct session *s);

#endif
