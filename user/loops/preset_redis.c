// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_redis.h"

bool jw_redis_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[0];
	uint8_t code[512];
	uint64_t size;
	char err[512];

	(void)pid;
	(void)exe;
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = "call";
	if (jw_elf_func_offset(p->path, "call", &p->offset, &size, err, sizeof(err)))
		return false;
	/* One call per command: hooked, counted and dropped with the handler sites. */
	p->per_callback = true;
	p->name_arg = jw_file_read_at(p->path, p->offset, code, sizeof(code)) == 0 &&
		      jw_arch_derive_call_chain(code, sizeof(code), &p->chain) == 0;
	out->n_probes = 1;
	return true;
}

void jw_redis_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	snprintf(why, len, "%s: %s exports aeMain, processCommand and call%s", how, p->where,
		 p->probes[0].name_arg ? "; handlers named from c->cmd->proc" :
					 "; call's code not understood: handler 'call'");
}
