// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "process/elfsym.h"
#include "loops/preset_sdevent.h"
#include "loops/sites.h"

#define GET_DESCRIPTION "sd_event_source_get_description"

struct sd_scan {
	struct jw_preset *out;
	int32_t description;
	size_t found;
};

/* "callback(s, ...)": through a field of the source, the source the first argument. */
static int sd_call(const struct jw_arch_call *call, uint64_t base, void *ctx)
{
	struct sd_scan *sd = ctx;
	struct jw_preset_probe *p;
	int s = call->via_reg;

	if (!call->indirect || s < 0 ||
	    (call->arg_copy[0] != s && (unsigned int)s != jw_arch_arg_reg(0)))
		return 0;
	sd->found++;
	p = jw_sites_add(sd->out, "sd_event_dispatch", base + call->at, call->len, s, true,
			 call->via_disp);
	if (p) {
		p->chain.klass = (struct jw_reg_path){ .reg = (uint32_t)s, .n_offsets = 1,
						       .offsets = { sd->description } };
		p->chain.flags = JW_CHAIN_CLASS;
	}
	return 0;
}

int jw_sites_sdevent(struct jw_preset *out, char *note, size_t len)
{
	struct sd_scan sd = { .out = out };
	size_t before = out->n_probes;
	uint64_t at, size;
	uint8_t code[128];
	char err[256];
	int ret;

	if (jw_elf_func_offset(out->where, GET_DESCRIPTION, &at, &size, err, sizeof(err)) ||
	    jw_file_read_at(out->where, at, code, sizeof(code)) ||
	    jw_arch_first_field_load(code, size && size < sizeof(code) ? size : sizeof(code),
				     &sd.description)) {
		snprintf(note, len, "%s's code not understood: no descriptions", GET_DESCRIPTION);
		return -ENOENT;
	}
	ret = jw_sites_scan(out->where, "sd_event_dispatch", true, sd_call, &sd, note, len);
	if (ret)
		return ret;
	if (!sd.found || out->n_probes - before != sd.found) {
		out->n_probes = before;
		snprintf(note, len, "%zu calls of a source's callback found under sd_event_dispatch",
			 sd.found);
		return -ENOENT;
	}
	snprintf(note, len, "callbacks named with their sources' descriptions where "
		 "sd_event_dispatch calls them (%zu sites)", sd.found);
	return 0;
}
