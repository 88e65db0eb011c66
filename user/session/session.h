/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jankwatch's own loop: watched processes set up and attached, the ring buffer drained, the
 * samples of each thread's current task held until the task's end, signals and --duration.
 */
#ifndef JW_SESSION_H
#define JW_SESSION_H

#include "config/options.h"

/*
 * Watches what @cfg names until Ctrl-C, --duration, or every target's exit. SIGHUP reloads the
 * parameters (--config and --set again) into @cfg. Returns the process exit status: 0 after a
 * clean run, 1 after a failure.
 */
int jw_session_run(struct jw_config *cfg);

#endif
