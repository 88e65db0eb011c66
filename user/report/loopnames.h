/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names the loops' own data gives a handler besides its function: libev's event masks (the
 * revents a callback ran for) and android's Looper's (an fd's events); a Wayland request's interface and name, read from the program's
 * wl_interface tables.
 */
#ifndef JW_LOOPNAMES_H
#define JW_LOOPNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* libev's @revents as "EV_READ|EV_WRITE" (unknown bits as hex); "0" for none. */
const char *jw_ev_mask_name(uint32_t revents, char *buf, size_t len);

/* android::Looper's fd @events as "EVENT_INPUT|EVENT_HANGUP", as jw_ev_mask_name(). */
const char *jw_looper_events_name(uint32_t events, char *buf, size_t len);

/* The name of the wl_interface at @iface of process @pid ("wl_surface"); false if unread. */
bool jw_wl_interface_name(pid_t pid, uint64_t iface, char *buf, size_t len);

/*
 * The request of interface @iface whose handler in the implementation @impl (an array of
 * functions, one per request) is @fn: "wl_surface.commit"; false when none is, or unread.
 */
bool jw_wl_request_name(pid_t pid, uint64_t iface, uint64_t impl, uint64_t fn, char *buf,
			size_t len);

#endif
