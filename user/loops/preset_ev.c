// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>

#include "loops/preset_ev.h"
#include "loops/sites.h"

struct ev_scan {
	struct jw_preset *out;
	size_t found;
};

/* "w->cb(loop, w, revents)": through the watcher's cb, the watcher the second argument. */
static int ev_call(const struct jw_arch_call *call, uint64_t base, void *ctx)
{
	struct ev_scan *e = ctx;
	struct jw_preset_probe *p;
	int w = call->via_reg;

	if (!call->indirect || w < 0 || call->via_disp != JW_EV_WATCHER_CB ||
	    (call->arg_copy[1] != w && (unsigned int)w != jw_arch_arg_reg(1)))
		return 0;
	e->found++;
	p = jw_sites_add(e->out, "ev_invoke_pending", base + call->at, call->len, w, true,
			 JW_EV_WATCHER_CB);
	if (p) {
		p->chain.detail = (struct jw_reg_path){ .reg = jw_arch_arg_reg(2) };
		p->chain.flags = JW_CHAIN_DETAIL;
	}
	return 0;
}

int jw_sites_libev(struct jw_preset *out, char *note, size_t len)
{
	struct ev_scan e = { .out = out };
	size_t before = out->n_probes;
	int ret = jw_sites_scan(out->where, "ev_invoke_pending", false, ev_call, &e, note, len);

	if (ret)
		return ret;
	if (!e.found || out->n_probes - before != e.found) {
		out->n_probes = before;
		snprintf(note, len, "ev_invoke_pending makes %zu calls through a watcher's callback",
			 e.found);
		return -ENOENT;
	}
	snprintf(note, len, "callbacks named, with their events, where ev_invoke_pending calls them "
		 "(%zu site%s)", e.found, e.found == 1 ? "" : "s");
	return 0;
}
