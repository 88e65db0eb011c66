/* SPDX-License-Identifier: GPL-2.0-only */
/* The tasks still running: hangs and trace windows. */
#ifndef JW_SESSION_TASKS_H
#define JW_SESSION_TASKS_H

#include <stdint.h>

#include "session/state.h"

/* Reports the hangs of the tasks still running, and opens the trace windows they call for. */
void session_check_running(struct session *s, uint64_t now);

#endif
