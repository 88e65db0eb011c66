/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wayland: a compositor (libwayland-server), its iteration bounded by the waits. Every request a
 * client sends is dispatched through libffi: wl_closure_invoke calls ffi_call(cif, handler, NULL,
 * args) with the handler the target object's implementation gives for the request's opcode and
 * args[1] pointing to the target. That call is the handler site: the handler, the target's
 * wl_interface (its first field) and its implementation (its second), from which user space
 * names the interface and the request (report/loopnames.h: "wl_surface.commit").
 */
#ifndef JW_PRESET_WAYLAND_H
#define JW_PRESET_WAYLAND_H

#include "loops/preset.h"

/* struct wl_object: its interface, then its implementation (wayland-private.h, 1.x) */
#define JW_WL_OBJECT_INTERFACE 0
#define JW_WL_OBJECT_IMPLEMENTATION 8
/* ffi_call's avalue: args[1] points to the target object (wl_closure_invoke) */
#define JW_WL_FFI_ARG_TARGET 8

/* The calls of ffi_call in @out->where, added to @out's probes. As jw_sites_glib(). */
int jw_sites_wayland(struct jw_preset *out, char *note, size_t len);

#endif
