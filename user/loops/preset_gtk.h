/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * GTK 4: GLib's loop (the glib preset's handler sites), and the frame clock's phases. Its idle
 * source paints a frame by emitting one GdkFrameClock signal per phase (flush-events,
 * before-paint, update, layout, paint, after-paint, resume-events), each from a small function
 * of its own that loads the signal's id from the class's table; libgtk-4 is stripped, so those
 * functions are found by that code: seven functions each emitting the id of one of seven
 * consecutive slots. Each is hooked as a nested site, and the phase that ran longest names the
 * frame ("GdkFrameClock::paint").
 */
#ifndef JW_PRESET_GTK_H
#define JW_PRESET_GTK_H

#include "process/elfparts.h"
#include "loops/preset.h"

/* GdkFrameClock's signals, in the order of its table of ids (GdkFrameClockPhase's). */
#define JW_GTK_PHASES 7

/*
 * GLib's handler sites, from the libglib process @pid maps, and the frame clock's phases in
 * @out->where (libgtk-4.so). True, also without either (said by jw_gtk_why()).
 */
bool jw_gtk_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why the preset was picked (@how: "auto", "as asked"), and what names its handlers. */
void jw_gtk_why(const struct jw_preset *p, const char *how, char *why, size_t len);

/*
 * The phases' functions in @gtk's code: each one's file offsets (from its entry to where the
 * next function begins) into @at, in the signals' order. 0, or -ENOENT when no one run of seven
 * is there.
 */
int jw_gtk_find_phases(const char *gtk, struct jw_elf_range at[JW_GTK_PHASES]);

#endif
