/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PipeWire: its loops are libspa-support's (loop.c), a stripped plugin that libpipewire opens
 * with dlopen. Each iteration calls every ready source's func(source): that call is the handler
 * site. The sources the loop made itself (pw_loop_add_io, _idle, _event, _timer, _signal) have a
 * wrapper there that calls the program's callback from a field of the source: those calls, and
 * the entries of the two wrappers that jump to it, name the callback instead (the first to run).
 */
#ifndef JW_PRESET_PIPEWIRE_H
#define JW_PRESET_PIPEWIRE_H

#include "loops/preset.h"

/* struct spa_source (spa/support/loop.h): its func after the loop it is in. */
#define JW_PW_SOURCE_FUNC 8

/*
 * The handler sites of the loop in @out->where (libspa-support.so), added to @out's probes;
 * true, also when there are none (the stacks name the handlers then; said by jw_pipewire_why()).
 */
bool jw_pipewire_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why the preset was picked (@how: "auto", "as asked"), and what names its handlers. */
void jw_pipewire_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
