// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "process/preset_python.h"

int jw_python_version(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int major, minor;

	base = base ? base + 1 : path;
	/* python3.11, libpython3.11.so.1.0; not python3 alone */
	for (p = strstr(base, "python"); p; p = strstr(p + 1, "python"))
		if (sscanf(p, "python%u.%u", &major, &minor) == 2 && major < 10 && minor < 100)
			return major * 100 + minor;
	return -1;
}

int jw_python_chain(int version, struct jw_arg_chain *chain)
{
	memset(chain, 0, sizeof(*chain));
	if (version != 311)
		return -ENOTSUP;
	/* _PyEval_EvalFrameDefault(PyThreadState *, _PyInterpreterFrame *frame, int) */
	chain->handler.reg = jw_arch_arg_reg(1);
	chain->handler.n_offsets = 1;
	chain->handler.offsets[0] = 0x20;	/* frame->f_code */
	chain->kind = JW_HANDLER_PY_CODE;
	chain->py_filename = 112;		/* PyCodeObject */
	chain->py_qualname = 128;
	chain->py_firstlineno = 72;
	chain->py_str_state = 32;		/* PyASCIIObject */
	chain->py_str_ascii_data = 48;		/* sizeof(PyASCIIObject) */
	chain->py_str_utf8 = 56;		/* PyCompactUnicodeObject.utf8 */
	chain->py_frame_previous = 48;		/* _PyInterpreterFrame */
	chain->py_frame_local0 = 72;		/* localsplus[0] */
	chain->py_ob_type = 8;			/* PyObject */
	chain->py_tp_name = 24;			/* PyTypeObject */
	/* asyncio.TimerHandle's slots after Handle's eight (sorted; __weakref__ last): _when */
	chain->py_timer_when = 88;
	chain->py_float_value = 16;		/* PyFloatObject.ob_fval */
	return 0;
}

bool jw_python_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[0];
	char err[512];
	uint64_t size;
	int version;

	(void)pid;
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = "_PyEval_EvalFrameDefault";
	if (jw_elf_func_offset(p->path, p->entry, &p->offset, &size, err, sizeof(err)))
		return false;
	version = jw_python_version(out->where);
	if (version < 0)
		version = jw_python_version(exe);
	p->name_arg = jw_python_chain(version, &p->chain) == 0;
	out->version = version;
	out->n_probes = 1;
	return true;
}

void jw_python_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	if (p->probes[0].name_arg)
		snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault (Python %d.%d); handlers "
			 "named from their code objects", how, p->where, p->version / 100,
			 p->version % 100);
	else
		snprintf(why, len, "%s: %s has _PyEval_EvalFrameDefault, but the code objects of this "
			 "Python are not known: handlers unnamed", how, p->where);
}
