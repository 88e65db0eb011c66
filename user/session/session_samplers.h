/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stacks' cpu-clock samplers: one per watched thread (samplers=0), one per CPU (samplers=1),
 * or (samplers=2, the default) whichever costs less at the rate the watched threads switch now,
 * chosen again as that rate moves (attach/samplermode.h says when and why), switching while the
 * loops run: the old kind taken off at once, then the new one attached (a moment without
 * samples, never one sampled twice).
 */
#ifndef JW_SESSION_SAMPLERS_H
#define JW_SESSION_SAMPLERS_H

#include <stdint.h>
#include <stdio.h>

#include "session/state.h"

/*
 * Before any thread is watched: the kind to start with (samplers=2: one per thread, which costs
 * nothing while the threads sleep), attached where it is the CPUs', and said at -v. 0, or
 * -errno with the reason said.
 */
int session_samplers_start(struct session *s);

/* From the loop: the watched threads' switches a second, and the other kind where it costs less. */
void session_samplers_tick(struct session *s, uint64_t now_ns);

/* What `jankwatch stats` says of them (its "hooks" request): which kind, since when, and why. */
void session_samplers_say(const struct session *s, FILE *f, uint64_t now_ns);

/* At the end: a line on the switches made, if any; frees what it kept. */
void session_samplers_finish(struct session *s);

#endif
