// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>

#include "process/elfsym.h"
#include "loops/preset_wayland.h"
#include "loops/sites.h"

struct wl_scan {
	struct jw_preset *out;
	uint64_t stub;		/* ffi_call's PLT stub */
	size_t found;
};

/* "ffi_call(&cif, implementation[opcode], NULL, ffi_args)" */
static int wl_call(const struct jw_arch_call *call, uint64_t base, void *ctx)
{
	struct wl_scan *w = ctx;
	struct jw_preset_probe *p;
	unsigned int args = jw_arch_arg_reg(3);

	if (call->indirect || base + (uint64_t)call->target != w->stub)
		return 0;
	w->found++;
	p = jw_sites_add(w->out, "wl_closure_invoke", base + call->at, call->len,
			 (int)jw_arch_arg_reg(1), false, 0);
	if (!p)
		return 0;
	/* *args[1] is the target object: its interface, and its implementation */
	p->chain.klass = (struct jw_reg_path){
		.reg = args, .n_offsets = 3,
		.offsets = { JW_WL_FFI_ARG_TARGET, 0, JW_WL_OBJECT_INTERFACE } };
	p->chain.detail = (struct jw_reg_path){
		.reg = args, .n_offsets = 3,
		.offsets = { JW_WL_FFI_ARG_TARGET, 0, JW_WL_OBJECT_IMPLEMENTATION } };
	p->chain.flags = JW_CHAIN_CLASS | JW_CHAIN_DETAIL;
	return 0;
}

int jw_sites_wayland(struct jw_preset *out, char *note, size_t len)
{
	struct wl_scan w = { .out = out };
	size_t before = out->n_probes;
	int ret = jw_elf_plt_stub(out->where, "ffi_call", &w.stub);

	if (ret) {
		snprintf(note, len, "%s calls no ffi_call through its PLT", out->where);
		return ret;
	}
	ret = jw_sites_scan(out->where, NULL, false, wl_call, &w, note, len);
	if (ret)
		return ret;
	if (!w.found || out->n_probes - before != w.found) {
		out->n_probes = before;
		snprintf(note, len, "%zu calls of ffi_call found", w.found);
		return -ENOENT;
	}
	snprintf(note, len, "requests named by their interface and name where wl_closure_invoke "
		 "calls their handler (%zu site%s)", w.found, w.found == 1 ? "" : "s");
	return 0;
}
