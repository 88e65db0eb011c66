/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sd-event, systemd's loop (journald, logind, networkd, resolved and every daemon on
 * libsystemd): sd_event_run's iteration, bounded by the waits; sd_event_dispatch runs the
 * pending source, whose callback it calls with the source first, callback(s, ...): those calls
 * are the handler sites, named by the callback and by the source's description
 * (sd_event_source_set_description), read through the source at the field
 * sd_event_source_get_description reads (the struct is private to libsystemd).
 */
#ifndef JW_PRESET_SDEVENT_H
#define JW_PRESET_SDEVENT_H

#include "loops/preset.h"

/* The callback calls under sd_event_dispatch, added to @out's probes. As jw_sites_glib(). */
int jw_sites_sdevent(struct jw_preset *out, char *note, size_t len);

#endif
