/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jankwatch top: the watch shown as a table of the loops' handlers (report/toptable.h), redrawn
 * every second on a terminal's alternate screen, q to quit; printed once at the end, from the
 * run's last read, whether or not standard output is a terminal.
 */
#ifndef JW_SESSION_TOP_H
#define JW_SESSION_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report_event.h"
#include "session/state.h"

/*
 * Whether top will draw on the terminal (cfg->top, stdout and stdin a terminal): a program it
 * starts must write elsewhere. Then @output (of @len; NULL: not wanted) is the file its stdout
 * and stderr go to, LOGDIR/NAME.out.
 */
bool session_top_screen(const struct jw_config *cfg, char *output, size_t len);

/* With cfg->top: the table, and on a terminal its screen and keys. 0 or -errno. */
int session_top_start(struct session *s);

/* Every turn of the loop: a key read, a frame each second. True when q asks to stop. */
bool session_top_tick(struct session *s, uint64_t now);

/* A jank or hang reported: counted against its row, kept among the last. */
void session_top_event(struct session *s, const struct jw_event *e);

/* The terminal given back as it was, then the table of the run's last read on stdout. */
void session_top_finish(struct session *s);

/* Frees it; the terminal given back if it was not yet. */
void session_top_free(struct session *s);

#endif
