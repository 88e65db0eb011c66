// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_python.h"

void jw_python_chain(const struct jw_py_layout *l, struct jw_arg_chain *chain)
{
	memset(chain, 0, sizeof(*chain));
	/* _PyEval_EvalFrameDefault(PyThreadState *, _PyInterpreterFrame *frame, int) */
	chain->handler.reg = jw_arch_arg_reg(1);
	chain->handler.n_offsets = 1;
	chain->handler.offsets[0] = l->frame_code;
	jw_py_layout_chain(l, chain);
}

bool jw_python_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[0];
	struct jw_py_layout layout;
	char err[512];
	uint64_t size;

	(void)pid;
	(void)exe;
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = "_PyEval_EvalFrameDefault";
	if (jw_elf_func_offset(p->path, p->entry, &p->offset, &size, err, sizeof(err)))
		return false;
	out->version = -1;
	p->name_arg = jw_py_layout_read(p->path, &layout, out->detail, sizeof(out->detail)) == 0;
	if (p->name_arg) {
		out->version = 300 + layout.minor;
		jw_python_chain(&layout, &p->chain);
	}
	out->n_probes = 1;
	return true;
}

void jw_python_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	if (p->probes[0].name_arg)
		snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault (Python %d.%d); handlers "
			 "named from their code objects, Python frames in the stacks", how, p->where,
			 p->version / 100, p->version % 100);
	else
		snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault, but %s: handlers unnamed, "
			 "native stacks only", how, p->where, p->detail);
}
