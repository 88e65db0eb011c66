// SPDX-License-Identifier: GPL-2.0-only
/*
 * Handler sites (sites.h): the code they are found in, read and scanned (sites_scan.h); GLib's,
 * libuv's and libevent's; any loop's calls; return sites placed. nginx's and node's:
 * sites_servers.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/placement.h"
#include "loops/sites.h"
#include "loops/sites_scan.h"

int jw_site_read_range(const char *path, uint64_t offset, uint64_t size, struct jw_site_code *c)
{
	int ret;

	c->offset = offset;
	c->size = size;
	c->bytes = NULL;
	if (!size || size > (256u << 20))
		return -ENOENT;
	c->bytes = malloc(size);
	if (!c->bytes)
		return -ENOMEM;
	ret = jw_file_read_at(path, offset, c->bytes, size);
	if (ret) {
		free(c->bytes);
		c->bytes = NULL;
	}
	return ret;
}

int jw_site_read_code(const char *path, const char *name, struct jw_site_code *c)
{
	uint64_t offset, size;
	char err[512];
	int ret;

	memset(c, 0, sizeof(*c));
	ret = name ? jw_elf_func_offset(path, name, &offset, &size, err, sizeof(err)) :
		     jw_elf_section(path, ".text", &offset, &size);
	return ret ? ret : jw_site_read_range(path, offset, size, c);
}

/*
 * Calls @cb on every call in function @fn of @path, with @base (in @cb's context) the file offset
 * of its code; says in @note when the code cannot be read. 0, or -errno.
 */
int jw_site_scan_named(const char *path, const char *fn, uint64_t *base,
		       int (*cb)(const struct jw_arch_call *call, void *ctx), void *ctx, char *note,
		       size_t len)
{
	struct jw_site_code c;
	int ret = jw_site_read_code(path, fn, &c);

	if (ret) {
		snprintf(note, len, "%s's code not read (%s)", fn ? fn : ".text", strerror(-ret));
		return ret;
	}
	*base = c.offset;
	jw_arch_scan_calls(c.bytes, c.size, cb, ctx);
	free(c.bytes);
	return 0;
}

/* The next probe of @out, for a site in @fn of its library; NULL when they are all taken. */
static struct jw_preset_probe *new_site(struct jw_preset *out, const char *fn)
{
	struct jw_preset_probe *p;

	if (out->n_probes >= JW_MAX_PRESET_PROBES)
		return NULL;
	p = &out->probes[out->n_probes];
	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = fn;
	p->exact = true;
	p->name_arg = true;
	p->chain.kind = JW_HANDLER_CODE;
	return p;
}

/*
 * A timer's site in @fn, from @entry to its return site @exit, added to @out's probes: argument
 * @arg of the call at @entry leads to the handler at @handler_off and, with @due, to the due
 * time (ms of CLOCK_MONOTONIC) at @due_off. False when @out has no room.
 */
bool jw_site_timer(struct jw_preset *out, const char *fn, uint64_t entry, uint64_t exit,
		   unsigned int arg, int32_t handler_off, bool due, int32_t due_off)
{
	struct jw_preset_probe *p = new_site(out, fn);

	if (!p)
		return false;
	p->offset = entry;
	p->exit_offset = exit;
	p->chain.handler.reg = jw_arch_arg_reg(arg);
	p->chain.handler.n_offsets = 1;
	p->chain.handler.offsets[0] = handler_off;
	if (due) {
		p->chain.due.reg = jw_arch_arg_reg(arg);
		p->chain.due.n_offsets = 1;
		p->chain.due.offsets[0] = due_off;
		p->chain.due_unit_ns = 1000000;
	}
	out->n_probes++;
	return true;
}

/* ---- GLib ---- */

struct glib_scan {
	struct jw_preset *out;
	uint64_t base;
	size_t found;
};

/*
 * g_main_context_dispatch calls each ready source's dispatch(source, callback, user_data)
 * through a register; its other indirect calls (the callback functions' ref, unref and get)
 * go through memory.
 */
static int glib_call(const struct jw_arch_call *call, void *ctx)
{
	struct glib_scan *g = ctx;
	struct jw_preset_probe *p;

	if (!call->indirect || call->mem || call->reg < 0)
		return 0;
	g->found++;
	p = new_site(g->out, "g_main_context_dispatch");
	if (!p)
		return 0;
	p->offset = g->base + call->at;
	p->exit_offset = g->base + call->at + call->len;
	p->chain.handler.reg = jw_arch_arg_reg(1);	/* the callback */
	p->chain.handler_else = (uint32_t)call->reg + 1;	/* else the source's dispatch */
	p->chain.due.reg = jw_arch_arg_reg(0);		/* source->priv->ready_time */
	p->chain.due.n_offsets = 2;
	p->chain.due.offsets[0] = JW_G_SOURCE_PRIV;
	p->chain.due.offsets[1] = JW_G_SOURCE_PRIV_READY_TIME;
	p->chain.due_unit_ns = 1000;
	g->out->n_probes++;
	return 0;
}

int jw_sites_glib(struct jw_preset *out, char *note, size_t len)
{
	struct glib_scan g = { .out = out };
	size_t before = out->n_probes;
	int ret = jw_site_scan_named(out->where, "g_main_context_dispatch", &g.base, glib_call,
				     &g, note, len);

	if (ret)
		return ret;
	if (!g.found || g.found > JW_MAX_PRESET_PROBES - before) {
		out->n_probes = before;
		snprintf(note, len, "g_main_context_dispatch makes %zu calls through a register, "
			 "not the dispatch calls known", g.found);
		return -ENOENT;
	}
	snprintf(note, len, "callbacks named where g_main_context_dispatch calls them (%zu site%s)",
		 g.found, g.found == 1 ? "" : "s");
	return 0;
}

/* ---- libuv ---- */

struct uv_scan {
	uint64_t base;
	uint64_t stop[2], again[2];	/* uv_timer_stop and uv_timer_again: function, PLT stub */
	uint64_t stop_at;		/* the last call of uv_timer_stop (0: none pending) */
	bool again_seen;		/* ... followed by one of uv_timer_again */
	uint64_t entry, exit, cb_at;
	size_t found;
};

bool jw_site_calls(const uint64_t fn[2], uint64_t to)
{
	return to && (to == fn[0] || to == fn[1]);
}

/*
 * uv__run_timers, for each timer due: uv_timer_stop(handle); uv_timer_again(handle);
 * handle->timer_cb(handle). Its site begins at the uv_timer_stop call, while handle->timeout
 * still is the due time.
 */
static int uv_call(const struct jw_arch_call *call, void *ctx)
{
	struct uv_scan *u = ctx;
	uint64_t to = call->indirect ? 0 : u->base + (uint64_t)call->target;

	if (!call->indirect && jw_site_calls(u->stop, to)) {
		u->stop_at = u->base + call->at;
		u->again_seen = false;
	} else if (!call->indirect && jw_site_calls(u->again, to) && u->stop_at) {
		u->again_seen = true;
	} else if (call->indirect && u->again_seen) {
		u->found++;
		u->entry = u->stop_at;
		u->exit = u->base + call->at + call->len;
		u->cb_at = u->base + call->at;
		u->stop_at = 0;
		u->again_seen = false;
	} else {
		u->stop_at = 0;
		u->again_seen = false;
	}
	return 0;
}

/* The file offsets at which @path's code calls @name: the function, and its PLT stub. */
void jw_site_call_targets(const char *path, const char *name, uint64_t out[2])
{
	char err[512];
	uint64_t size;

	out[0] = out[1] = 0;
	if (jw_elf_func_offset(path, name, &out[0], &size, err, sizeof(err)))
		out[0] = 0;
	if (jw_elf_plt_stub(path, name, &out[1]))
		out[1] = 0;
}

/* The cookie bits that tell a callback site where call @c's callee is; 0 when they cannot. */
static uint64_t callee_bits(const struct jw_arch_call *c)
{
	if (!c->indirect || c->reg < 0 || c->reg >= JW_UREG_MAX ||
	    (c->mem && (c->disp < INT16_MIN || c->disp > INT16_MAX)))
		return 0;
	return JW_COOKIE_CALLEE | (uint64_t)(c->reg + 1) << JW_CALLEE_REG_SHIFT |
	       (c->mem ? JW_CALLEE_MEM | (uint64_t)(uint16_t)c->disp << JW_CALLEE_DISP_SHIFT : 0);
}

/*
 * Every call through a register or a field in libuv calls a handle's callback, or an I/O
 * watcher's function (which calls the handle's); in libevent's queue runner, an event's. A call
 * through a global table of functions (libevent's locks) is the library's own.
 */
int jw_site_callback_call(const struct jw_arch_call *call, void *ctx)
{
	struct jw_callback_scan *cs = ctx;
	struct jw_preset *out = cs->out;
	uint64_t bits = callee_bits(call), at = cs->base + call->at;

	if (!bits || call->via_global || at == cs->skip)
		return 0;
	cs->found++;
	if (out->n_callbacks < JW_MAX_CALLBACK_SITES)
		out->callbacks[out->n_callbacks++] = (struct jw_callback_site){
			.call = at, .ret = at + call->len, .callee = bits,
		};
	return 0;
}

int jw_sites_libuv(struct jw_preset *out, char *note, size_t len)
{
	struct uv_scan u = { 0 };
	struct jw_callback_scan cs = { .out = out };
	bool whole;
	struct jw_site_code c;
	int ret;

	jw_site_call_targets(out->where, "uv_timer_stop", u.stop);
	jw_site_call_targets(out->where, "uv_timer_again", u.again);
	if ((!u.stop[0] && !u.stop[1]) || (!u.again[0] && !u.again[1])) {
		snprintf(note, len, "no uv_timer_stop and uv_timer_again to find timers by");
		return -ENOENT;
	}
	/* uv__run_timers is named where libuv is built with symbols; not in Debian's library. */
	ret = jw_site_read_code(out->where, "uv__run_timers", &c);
	whole = ret != 0;
	if (whole)
		ret = jw_site_read_code(out->where, NULL, &c);
	if (ret) {
		snprintf(note, len, "the code of %s not read (%s)", out->where, strerror(-ret));
		return ret;
	}
	u.base = c.offset;
	jw_arch_scan_calls(c.bytes, c.size, uv_call, &u);
	/* The library's code is libuv's alone: every other callback is called at a site of its own. */
	cs.base = c.offset;
	cs.skip = u.found == 1 ? u.cb_at : 0;
	out->n_callbacks = 0;
	if (whole)
		jw_arch_scan_calls(c.bytes, c.size, jw_site_callback_call, &cs);
	free(c.bytes);
	if (u.found != 1) {
		out->n_callbacks = 0;
		snprintf(note, len, "%zu places call a callback after uv_timer_stop and "
			 "uv_timer_again, not the one of uv__run_timers", u.found);
		return -ENOENT;
	}
	/* handle->timer_cb, and handle->timeout */
	if (!jw_site_timer(out, "uv__run_timers", u.entry, u.exit, 0, JW_UV_TIMER_CB, true,
			JW_UV_TIMER_TIMEOUT)) {
		snprintf(note, len, "no room for the timers' site");
		return -ENOSPC;
	}
	out->callbacks_named = "uv callback";
	if (cs.found > JW_MAX_CALLBACK_SITES)
		out->n_callbacks = 0;
	if (out->n_callbacks)
		snprintf(note, len, "callbacks named where libuv calls them (timers in "
			 "uv__run_timers, the others at %zu sites)", out->n_callbacks);
	else
		snprintf(note, len, "timer callbacks named where uv__run_timers calls them%s",
			 cs.found > JW_MAX_CALLBACK_SITES ? " (the others: too many sites)" : "");
	return 0;
}

/* The callback sites of the function of @path that @at is in (its extent from the unwind table). */
void jw_site_scan_function(struct jw_callback_scan *cs, const char *path, uint64_t at)
{
	uint64_t start, end;
	struct jw_site_code c;

	if (jw_elf_function_bounds(path, at, &start, &end) || end - start > (1u << 16) ||
	    jw_site_read_range(path, start, end - start, &c))
		return;
	cs->base = c.offset;
	jw_arch_scan_calls(c.bytes, c.size, jw_site_callback_call, cs);
	free(c.bytes);
}

/* ---- libevent ---- */

#define MAX_LOOP_CALLEES 16

/* The library's functions event_base_loop calls directly. */
struct loop_callees {
	uint64_t base, text_lo, text_hi;
	uint64_t fn[MAX_LOOP_CALLEES];
	size_t n;
};

static int loop_callee(const struct jw_arch_call *call, void *ctx)
{
	struct loop_callees *lc = ctx;
	uint64_t to = lc->base + (uint64_t)call->target;
	size_t k;

	if (call->indirect || to < lc->text_lo || to >= lc->text_hi || to == lc->base)
		return 0;
	for (k = 0; k < lc->n; k++)
		if (lc->fn[k] == to)
			return 0;
	if (lc->n < MAX_LOOP_CALLEES)
		lc->fn[lc->n++] = to;
	return 0;
}

/*
 * libevent 2.1 runs its active queues in event_process_active_single_queue, static, which
 * event_base_loop calls directly: its calls through a register or an event's field are the
 * events' callbacks; its calls through the global lock and condition tables are not. The
 * library is stripped: each function event_base_loop calls is read to where the unwind table
 * says the next one begins. event_base_loop's own indirect calls (the backend's dispatch, which
 * holds the wait) are no sites.
 */
int jw_sites_libevent(struct jw_preset *out, char *note, size_t len)
{
	struct loop_callees lc = { 0 };
	struct jw_callback_scan cs = { .out = out };
	uint64_t text_size;
	size_t k;
	int ret = jw_elf_section(out->where, ".text", &lc.text_lo, &text_size);

	if (ret) {
		snprintf(note, len, "no .text in %s (%s)", out->where, strerror(-ret));
		return ret;
	}
	lc.text_hi = lc.text_lo + text_size;
	ret = jw_site_scan_named(out->where, "event_base_loop", &lc.base, loop_callee, &lc, note,
				 len);
	if (ret)
		return ret;
	out->n_callbacks = 0;
	for (k = 0; k < lc.n; k++)
		jw_site_scan_function(&cs, out->where, lc.fn[k]);
	if (!cs.found || cs.found > JW_MAX_CALLBACK_SITES) {
		out->n_callbacks = 0;
		snprintf(note, len, "%zu calls of a callback found in the %zu functions "
			 "event_base_loop calls", cs.found, lc.n);
		return -ENOENT;
	}
	out->callbacks_named = "libevent callback";
	snprintf(note, len, "callbacks named where libevent's queues call them (%zu sites)",
		 out->n_callbacks);
	return 0;
}

/* ---- Any loop's: the calls in a function and in those it calls ---- */

struct site_scan {
	jw_site_fn fn;
	void *ctx;
	uint64_t base;
	struct loop_callees *callees;
};

static int site_call(const struct jw_arch_call *call, void *ctx)
{
	struct site_scan *ss = ctx;

	if (ss->callees) {
		ss->callees->base = ss->base;
		loop_callee(call, ss->callees);
	}
	return ss->fn(call, ss->base, ss->ctx);
}

int jw_sites_scan(const char *path, const char *name, bool callees, jw_site_fn fn, void *ctx,
		  char *note, size_t len)
{
	struct loop_callees lc = { 0 };
	struct site_scan ss = { .fn = fn, .ctx = ctx, .callees = callees ? &lc : NULL };
	uint64_t text_size, start, end;
	struct jw_site_code c;
	size_t k;
	int ret = jw_elf_section(path, ".text", &lc.text_lo, &text_size);

	if (ret) {
		snprintf(note, len, "no .text in %s (%s)", path, strerror(-ret));
		return ret;
	}
	lc.text_hi = lc.text_lo + text_size;
	ret = jw_site_scan_named(path, name, &ss.base, site_call, &ss, note, len);
	if (ret || !callees)
		return ret;
	ss.callees = NULL;
	for (k = 0; k < lc.n; k++) {
		if (jw_elf_function_bounds(path, lc.fn[k], &start, &end) ||
		    end - start > (1u << 16) || jw_site_read_range(path, start, end - start, &c))
			continue;
		ss.base = c.offset;
		jw_arch_scan_calls(c.bytes, c.size, site_call, &ss);
		free(c.bytes);
	}
	return 0;
}

/* A stripped library has thousands of functions (libgtk-4: ~40000). */
#define MAX_FUNCTIONS (1u << 17)

int jw_sites_each_function(const char *path,
			   int (*fn)(const uint8_t *code, size_t len, uint64_t at, void *ctx),
			   void *ctx)
{
	uint64_t *starts = calloc(MAX_FUNCTIONS, sizeof(*starts)), end;
	size_t n = 0, k;
	struct jw_site_code c;
	int ret;

	if (!starts)
		return -ENOMEM;
	ret = jw_site_read_code(path, NULL, &c);
	if (!ret && jw_elf_function_starts(path, starts, MAX_FUNCTIONS, &n) && !n)
		ret = -ENOENT;
	for (k = 0; !ret && k < n; k++) {
		end = k + 1 < n ? starts[k + 1] : c.offset + c.size;
		if (starts[k] < c.offset || end > c.offset + c.size || end <= starts[k])
			continue;
		if (fn(c.bytes + (starts[k] - c.offset), end - starts[k], starts[k], ctx))
			break;
	}
	free(c.bytes);
	free(starts);
	return ret;
}

struct jw_preset_probe *jw_sites_add(struct jw_preset *out, const char *fn, uint64_t call,
				     size_t len, int reg, bool mem, int32_t disp)
{
	struct jw_preset_probe *p = new_site(out, fn);

	if (!p)
		return NULL;
	p->offset = call;
	p->exit_offset = call + len;	/* placed with the others' (jw_sites_place_exits) */
	p->callee = JW_COOKIE_CALLEE | (uint64_t)(reg + 1) << JW_CALLEE_REG_SHIFT;
	if (mem)
		p->callee |= JW_CALLEE_MEM | (uint64_t)(uint16_t)disp << JW_CALLEE_DISP_SHIFT;
	p->chain.handler = (struct jw_reg_path){ .reg = (uint32_t)reg, .n_offsets = mem,
						 .offsets = { mem ? disp : 0 } };
	out->n_probes++;
	return p;
}

/* ---- Return sites, placed ---- */

/* Whether a site of @out begins at file offset @at. */
static bool is_entry(const struct jw_preset *out, uint64_t at)
{
	size_t k;

	for (k = 0; k < out->n_probes; k++)
		if (out->probes[k].exact && out->probes[k].offset == at)
			return true;
	for (k = 0; k < out->n_callbacks; k++)
		if (out->callbacks[k].call == at)
			return true;
	return false;
}

/* Where the return site @ret of a site of @out is cheapest to hook (placement.h). */
static uint64_t place_exit(const struct jw_preset *out, uint64_t ret)
{
	struct jw_placement pl;

	if (jw_probe_place_return_file(out->where, ret, &pl) || !pl.skip ||
	    is_entry(out, ret + pl.skip))
		return ret;
	return ret + pl.skip;
}

void jw_sites_place_exits(struct jw_preset *out)
{
	size_t k;

	for (k = 0; k < out->n_probes; k++)
		if (out->probes[k].exact && out->probes[k].exit_offset)
			out->probes[k].exit_offset = place_exit(out, out->probes[k].exit_offset);
	for (k = 0; k < out->n_callbacks; k++)
		out->callbacks[k].ret = place_exit(out, out->callbacks[k].ret);
}
