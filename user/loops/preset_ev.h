/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libev: ev_run's iteration, bounded by the waits; ev_invoke_pending calls each pending watcher's
 * callback, w->cb(loop, w, revents): that call is the handler site, which names the callback and
 * the events it was called for (EV_READ, EV_TIMER, ...).
 */
#ifndef JW_PRESET_EV_H
#define JW_PRESET_EV_H

#include "loops/preset.h"

/* ev_watcher: its callback after active, pending, priority and data (ev.h, libev 4, 64-bit). */
#define JW_EV_WATCHER_CB 24

/* The callback calls in ev_invoke_pending, added to @out's probes. As jw_sites_glib(). */
int jw_sites_libev(struct jw_preset *out, char *note, size_t len);

#endif
