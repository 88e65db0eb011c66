// SPDX-License-Identifier: GPL-2.0-only
/* The handler sites of servers' loops: nginx's event handlers, and libuv's callbacks in node. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/sites.h"
#include "loops/sites_scan.h"

/* ---- nginx ---- */

/* The offsets in @path's code of its direct calls of @stub. */
struct calls_of {
	uint64_t base, stub;
	uint64_t at[8];
	size_t n;
};

static int call_of(const struct jw_arch_call *call, void *ctx)
{
	struct calls_of *co = ctx;

	if (!call->indirect && co->base + (uint64_t)call->target == co->stub && co->n < 8)
		co->at[co->n++] = co->base + call->at;
	return 0;
}

/*
 * Where nginx calls a timer's handler: ngx_rbtree_delete(tree, &ev->timer), which zeroes the
 * timer's key, then ev->handler(ev) through a field.
 */
struct timer_call {
	uint64_t base;
	uint64_t del[2];	/* ngx_rbtree_delete: the function, its PLT stub */
	uint64_t del_at;	/* the last call of it (0: none pending) */
	uint64_t entry, exit, cb_at;
	size_t found;
};

static int timer_call(const struct jw_arch_call *call, void *ctx)
{
	struct timer_call *t = ctx;
	uint64_t to = call->indirect ? 0 : t->base + (uint64_t)call->target;

	if (!call->indirect && jw_site_calls(t->del, to)) {
		t->del_at = t->base + call->at;
	} else if (call->indirect && call->mem && !call->via_global && t->del_at) {
		t->found++;
		t->entry = t->del_at;
		t->cb_at = t->base + call->at;
		t->exit = t->cb_at + call->len;
		t->del_at = 0;
	} else {
		t->del_at = 0;
	}
	return 0;
}

/*
 * nginx calls an event's handler, ev->handler(ev): for each timer due in
 * ngx_event_expire_timers (from the ngx_rbtree_delete before it, while the timer's key is still
 * its due time), for each posted event in
 * ngx_event_process_posted, and for each ready one in the event module's process_events, static:
 * the function that calls epoll_wait. Its handlers are nginx's own code.
 */
int jw_sites_nginx(struct jw_preset *out, char *note, size_t len)
{
	struct jw_callback_scan cs = { .out = out };
	struct timer_call t = { 0 };
	struct calls_of co = { 0 };
	struct jw_site_code c;
	size_t k;
	int ret;

	jw_site_call_targets(out->where, "ngx_rbtree_delete", t.del);
	ret = jw_site_scan_named(out->where, "ngx_event_expire_timers", &t.base, timer_call, &t,
				 note, len);
	if (ret)
		return ret;
	if (t.found != 1) {
		snprintf(note, len, "ngx_event_expire_timers makes %zu calls through a field after "
			 "ngx_rbtree_delete, not the one of the timer's handler", t.found);
		return -ENOENT;
	}
	out->n_callbacks = 0;
	jw_site_scan_named(out->where, "ngx_event_process_posted", &cs.base, jw_site_callback_call,
			   &cs, note, len);
	if (!jw_elf_plt_stub(out->where, "epoll_wait", &co.stub) &&
	    !jw_site_read_code(out->where, NULL, &c)) {
		co.base = c.offset;
		jw_arch_scan_calls(c.bytes, c.size, call_of, &co);
		free(c.bytes);
		for (k = 0; k < co.n; k++)
			jw_site_scan_function(&cs, out->where, co.at[k]);
	}
	if (cs.found > JW_MAX_CALLBACK_SITES)
		out->n_callbacks = 0;
	/* At the ngx_rbtree_delete call, its second argument is &ev->timer, its key not yet 0. */
	if (!jw_site_timer(out, "ngx_event_expire_timers", t.entry, t.exit, 1,
			JW_NGX_EVENT_HANDLER - JW_NGX_EVENT_TIMER, true, 0)) {
		snprintf(note, len, "no room for the timers' site");
		return -ENOSPC;
	}
	out->callbacks_named = "ngx event handler";
	out->own_handlers = true;
	snprintf(note, len, "event handlers named where nginx calls them (timers in "
		 "ngx_event_expire_timers, the others at %zu sites)", out->n_callbacks);
	return 0;
}

/* ---- libuv linked into node ---- */

/* The calls of the timers' callbacks in uv__run_timers, at most 2. */
struct node_timers {
	uint64_t base;
	uint64_t start[2];		/* uv_timer_start: a repeating timer restarted */
	bool restarted;			/* since the last callback's call */
	struct jw_preset *out;
	size_t found;
};

static int node_timer_call(const struct jw_arch_call *call, void *ctx)
{
	struct node_timers *nt = ctx;
	uint64_t at = nt->base + call->at;

	if (!call->indirect) {
		nt->restarted = jw_site_calls(nt->start, nt->base + (uint64_t)call->target);
		return 0;
	}
	if (call->via_global)
		return 0;
	nt->found++;
	/* A repeating timer's timeout already is its next due time: no lateness then. */
	jw_site_timer(nt->out, "uv__run_timers", at, at + call->len, 0, JW_UV_TIMER_CB,
		   !nt->restarted, JW_UV_TIMER_TIMEOUT);
	nt->restarted = false;
	return 0;
}

/* libuv's functions that call the handles' and watchers' callbacks, in node's symbols. */
static const char *const uv_runners[] = {
	"uv__io_poll", "uv__async_io", "uv__stream_io", "uv__server_io", "uv__udp_io",
	"uv__run_check", "uv__run_idle", "uv__run_prepare", "uv__work_done", "uv__signal_event",
	"uv__poll_io",
};

int jw_sites_node(struct jw_preset *out, char *note, size_t len)
{
	struct node_timers nt = { .out = out };
	struct jw_callback_scan cs = { .out = out };
	size_t before = out->n_probes, k, n;
	char none[8];
	int ret;

	jw_site_call_targets(out->where, "uv_timer_start", nt.start);
	ret = jw_site_scan_named(out->where, "uv__run_timers", &nt.base, node_timer_call, &nt, note,
				 len);
	if (ret)
		return ret;
	if (!nt.found || nt.found > 2 || out->n_probes - before != nt.found) {
		out->n_probes = before;
		snprintf(note, len, "uv__run_timers makes %zu calls through a register or a field, "
			 "not the timers' callbacks known", nt.found);
		return -ENOENT;
	}
	out->n_callbacks = 0;
	for (k = 0, n = 0; k < sizeof(uv_runners) / sizeof(uv_runners[0]); k++) {
		char part[64];

		n += !jw_site_scan_named(out->where, uv_runners[k], &cs.base,
					 jw_site_callback_call, &cs, none, sizeof(none));
		/* The body GCC split off, which the function tail-calls (uv__async_io's). */
		snprintf(part, sizeof(part), "%s.part.0", uv_runners[k]);
		jw_site_scan_named(out->where, part, &cs.base, jw_site_callback_call, &cs, none,
				   sizeof(none));
	}
	if (cs.found > JW_MAX_CALLBACK_SITES)
		out->n_callbacks = 0;
	out->callbacks_named = "uv callback";
	out->own_handlers = true;
	snprintf(note, len, "callbacks named where libuv calls them (timers in uv__run_timers, "
		 "the others at %zu sites in %zu functions)", out->n_callbacks, n);
	return 0;
}
