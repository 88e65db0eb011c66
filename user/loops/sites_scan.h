/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the handler sites' finders share (sites.c: GLib, libuv, libevent, any loop's;
 * sites_servers.c: nginx, node; preset_looper.c: android's Looper): a library's code read, its
 * calls scanned, a timer's site and the callback sites added to a preset. Private to those
 * files.
 */
#ifndef JW_SITES_SCAN_H
#define JW_SITES_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "loops/preset.h"

/* The code of function @name in @path, or of its .text when @name is NULL. */
struct jw_site_code {
	uint8_t *bytes;
	uint64_t offset;	/* its file offset */
	uint64_t size;
};

/* Reads @size bytes of @path's code at file offset @offset into @c. 0, or -errno. */
int jw_site_read_range(const char *path, uint64_t offset, uint64_t size, struct jw_site_code *c);

/* Reads the code of function @name of @path (NULL: its .text) into @c. 0, or -errno. */
int jw_site_read_code(const char *path, const char *name, struct jw_site_code *c);

/*
 * Calls @cb on every call in function @fn of @path, with @base (in @cb's context) the file offset
 * of its code; says in @note when the code cannot be read. 0, or -errno.
 */
int jw_site_scan_named(const char *path, const char *fn, uint64_t *base,
		       int (*cb)(const struct jw_arch_call *call, void *ctx), void *ctx, char *note,
		       size_t len);

/*
 * A timer's site in @fn, from @entry to its return site @exit, added to @out's probes: argument
 * @arg of the call at @entry leads to the handler at @handler_off and, with @due, to the due
 * time (ms of CLOCK_MONOTONIC) at @due_off. False when @out has no room.
 */
bool jw_site_timer(struct jw_preset *out, const char *fn, uint64_t entry, uint64_t exit,
		   unsigned int arg, int32_t handler_off, bool due, int32_t due_off);

/* Whether @to (a file offset) is function @fn: fn[0] the function, fn[1] its PLT stub. */
bool jw_site_calls(const uint64_t fn[2], uint64_t to);

/* The file offsets at which @path's code calls @name: the function, and its PLT stub. */
void jw_site_call_targets(const char *path, const char *name, uint64_t out[2]);

/* The callback sites found in a scan (jw_site_callback_call) and added to @out. */
struct jw_callback_scan {
	struct jw_preset *out;
	uint64_t base;
	uint64_t skip;		/* the call the timer site covers */
	size_t found;
};

/* A jw_arch_scan_calls() callback: a call through a register or a field is a callback site. */
int jw_site_callback_call(const struct jw_arch_call *call, void *ctx);

/* The callback sites of the function of @path that @at is in (its extent from the unwind table). */
void jw_site_scan_function(struct jw_callback_scan *cs, const char *path, uint64_t at);

#endif
