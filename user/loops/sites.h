/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Handler sites: the instructions where a loop library calls the program's callbacks, found in
 * its code. Each is hooked as one of the preset's naming dispatches, from the call to its return
 * site, and names the callback it runs there; where the loop keeps the timer's due time, the
 * task's delay is how late the timer ran. Every task of the loop then has a statistics row of
 * its handler, not only those the stacks name.
 */
#ifndef JW_SITES_H
#define JW_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#include "loops/preset.h"

/*
 * The struct layouts the sites read, from the libraries' public headers, ABI-stable in their
 * major versions (64-bit; test_sites checks them against the installed headers).
 */
#define JW_UV_TIMER_CB 96		/* uv_timer_t: timer_cb (uv.h, libuv 1.x) */
#define JW_UV_TIMER_TIMEOUT 128		/* uv_timer_t: timeout, the due time in loop ms */
#define JW_G_SOURCE_PRIV 0x58		/* GSource: priv (gmain.h) */
#define JW_G_SOURCE_PRIV_READY_TIME 0x10	/* GSourcePrivate: ready_time, µs (GLib 2.36 on) */
#define JW_NGX_EVENT_HANDLER 0x10	/* ngx_event_t: handler (nginx 1.x, no IOCP) */
#define JW_NGX_EVENT_TIMER 0x28		/* ngx_event_t: timer, a node whose key is the due time */
					/* (ms of the monotonic clock) */

/*
 * GLib: the calls of a source's dispatch function in g_main_context_dispatch (the callback is its
 * second argument, else the dispatch function names it; a timeout's ready time is its due time).
 * Adds them to @out's probes and says what it found in @note. 0, or -ENOENT.
 */
int jw_sites_glib(struct jw_preset *out, char *note, size_t len);

/*
 * libuv's shared library: the call of a timer's callback in uv__run_timers, from the
 * uv_timer_stop that begins it (the handle's callback, and its due time before uv_timer_again
 * moves it), and every other call of a callback in the library, as callback sites (their callee
 * is the handler). As jw_sites_glib().
 */
int jw_sites_libuv(struct jw_preset *out, char *note, size_t len);

/*
 * libevent 2.1: the calls of the events' callbacks in the function that runs its active queues
 * (the one event_base_loop calls that calls through an event's field), as callback sites. As
 * jw_sites_glib().
 */
int jw_sites_libevent(struct jw_preset *out, char *note, size_t len);

/*
 * libuv linked into node (with symbols): the calls of the timers' callbacks in uv__run_timers
 * (a timer that does not repeat still has its due time in its timeout), and as callback sites
 * those of libuv's functions that run the other callbacks; node's callbacks are its own code.
 * As jw_sites_glib().
 */
int jw_sites_node(struct jw_preset *out, char *note, size_t len);

/*
 * nginx: the call of a timer's handler in ngx_event_expire_timers, from the ngx_rbtree_delete
 * that takes it from the timers (its due time, the timer node's key, which that zeroes), and as callback sites the calls of the events' handlers in
 * ngx_event_process_posted and in the function that calls epoll_wait. As jw_sites_glib().
 */
int jw_sites_nginx(struct jw_preset *out, char *note, size_t len);

/* A call found by jw_sites_scan(), at file offset @base + @call->at of the file. */
typedef int (*jw_site_fn)(const struct jw_arch_call *call, uint64_t base, void *ctx);

/*
 * Calls @fn on every call in function @name of @path (NULL: in its whole .text) and, with
 * @callees, in each function of @path that @name calls directly (read to where the unwind table
 * says the next one begins: a stripped library's static functions). 0, or -errno with why in
 * @note.
 */
int jw_sites_scan(const char *path, const char *name, bool callees, jw_site_fn fn, void *ctx,
		  char *note, size_t len);

/*
 * Calls @fn with each function of @path's .text that its unwind table knows (a stripped
 * library's static ones too): its code, @len bytes to where the next one begins, at file
 * offset @at; until @fn returns nonzero. 0, or -errno (-ENOENT: no .text or no such table).
 */
int jw_sites_each_function(const char *path,
			   int (*fn)(const uint8_t *code, size_t len, uint64_t at, void *ctx),
			   void *ctx);

/*
 * A preset's probe for a site in @fn of @out's file at file offset @call (@len bytes) whose
 * callback is register @reg, or with @mem read through @reg + @disp (its cookie's callee, and
 * the chain's handler), from the call to its return site. NULL when @out has no room.
 */
struct jw_preset_probe *jw_sites_add(struct jw_preset *out, const char *fn, uint64_t call,
				     size_t len, int reg, bool mem, int32_t disp);

/*
 * Moves each return site of @out's sites where a probe costs least: past instructions that leave
 * the stack pointer alone, to one the kernel emulates (placement.h), but never onto a site's
 * call. A return site is where the callback's frame closes: a few instructions later it still
 * is, and the single-stepped probe there was half of a site's cost.
 */
void jw_sites_place_exits(struct jw_preset *out);

#endif
