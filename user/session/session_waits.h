/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Syscall mode's waits, seen the way that costs the machine least at the rate its loops run now:
 * uprobes on the C library's wait functions (a trap pair per wait, paid by the watched loop
 * alone) or the wait system calls' tracepoints (a fraction of that per wait, and the tracing
 * path's entry for every system call of the machine). wait_tracepoints=0 and 1 fix one;
 * wait_tracepoints=2 chooses at start by what it measures (attach/waitcost.h), then again as the
 * watched threads' waits a second move (attach/waitmode.h says when and which), switching while
 * the loops run: the new kind attached first, then counted (the BPF object's wait_hooks), then
 * the old one taken off in the background.
 */
#ifndef JW_SESSION_WAITS_H
#define JW_SESSION_WAITS_H

#include <stdint.h>
#include <stdio.h>

#include "session/state.h"

/*
 * Before any thread is watched: the first choice, attached and said. 0, or -errno with the
 * reason said.
 */
int session_waits_choose(struct session *s);

/* From the loop: the watched threads' rate of waits, and a new choice when it moved. */
void session_waits_tick(struct session *s, uint64_t now_ns);

/* What `jankwatch stats` says of it (its "hooks" request): which kind, since when, and why. */
void session_waits_say(const struct session *s, FILE *f, uint64_t now_ns);

/* At the end: a line on the switches made, if any; frees what it kept. */
void session_waits_finish(struct session *s);

#endif
