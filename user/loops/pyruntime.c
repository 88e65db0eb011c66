// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "process/elfdata.h"
#include "process/elfparts.h"
#include "loops/pyruntime.h"

/* PyTypeObject: the same from 3.11 to 3.14 (a heap type's tail aside). */
#define TP_NAME 24
#define TP_BASICSIZE 32
#define TP_MEMBERS 0xf0

/* PyMemberDef: name, type, offset, flags, doc. */
#define MEMBER_SIZE 40
#define MEMBER_OFFSET 16
#define MAX_MEMBERS 64

/*
 * 3.11 and 3.12 publish no offsets: these are their headers' (Include/internal/pycore_frame.h,
 * cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h), the same on x86-64 and arm64.
 */
static const struct jw_py_layout tables[] = {
	{
		.minor = 11,
		.tstate_frame = 56, .cframe_frame = 8,	/* tstate->cframe->current_frame */
		.tstate_chunk = 296,
		.frame_code = 32, .frame_previous = 48, .frame_instr = 56, .frame_localsplus = 72,
		.frame_entry = 68, .entry_value = 1,	/* is_entry */
		.code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_firstlineno = 72, .code_linetable = 136, .code_adaptive = 184,
		.str_ascii_size = 48, .str_compact_size = 72, .str_utf8 = 56,
	},
	{
		.minor = 12,
		.tstate_frame = 56, .cframe_frame = 0, .tstate_chunk = 232,
		.frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_localsplus = 72,
		.frame_entry = 70, .entry_value = 3,	/* owner: FRAME_OWNED_BY_CSTACK */
		.entry_is_own_frame = true,
		.code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_firstlineno = 68, .code_linetable = 136, .code_adaptive = 192,
		.str_ascii_size = 40, .str_compact_size = 56, .str_utf8 = 48,
	},
};

/*
 * Where the fields jankwatch reads are in _Py_DebugOffsets (Include/internal/
 * pycore_debug_offsets.h), which grows between versions: the start of its thread state,
 * interpreter frame and code object parts (each begins with the struct's size). The object
 * parts after them hold values that have not moved since 3.12; they are checked, not read.
 */
struct debug_parts {
	unsigned int minor;
	uint32_t thread_state;	/* size, prev, next, interp, current_frame, ... */
	uint32_t frame;		/* size, previous, executable, instr_ptr, localsplus, owner */
	uint32_t code;		/* size, filename, name, qualname, linetable, firstlineno, ... */
	uint32_t code_adaptive;	/* the code part's co_code_adaptive, from its start */
	uint16_t entry_value;	/* the owner of a call's own frame */
	uint64_t ref_tag;
};

static const struct debug_parts debug_parts[] = {
	{ .minor = 13, .thread_state = 152, .frame = 224, .code = 272, .code_adaptive = 72,
	  .entry_value = 3 /* FRAME_OWNED_BY_CSTACK */ },
	{ .minor = 14, .thread_state = 176, .frame = 248, .code = 312, .code_adaptive = 72,
	  .entry_value = 3 /* FRAME_OWNED_BY_INTERPRETER */, .ref_tag = 7 },
};


static uint64_t u64_at(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* The fields of the objects every version from 3.12 lays out alike. */
static void object_fields(struct jw_py_layout *l)
{
	l->ob_type = 8;
	l->tp_name = TP_NAME;
	l->tp_basicsize = TP_BASICSIZE;
	l->str_length = 16;
	l->str_state = 32;
	l->bytes_size = 16;
	l->bytes_data = 32;
	l->float_value = 16;
}

int jw_py_layout_from_debug(const uint8_t *d, struct jw_py_layout *l, char *why, size_t len)
{
	const struct debug_parts *p = NULL;
	uint64_t v[8];
	size_t i;

	for (i = 0; i < sizeof(debug_parts) / sizeof(debug_parts[0]); i++)
		if (debug_parts[i].minor == l->minor)
			p = &debug_parts[i];
	if (!p) {
		snprintf(why, len, "Python 3.%u's _Py_DebugOffsets are not known to jankwatch",
			 l->minor);
		return -ENOTSUP;
	}
	if (memcmp(d, "xdebugpy", 8) || u64_at(d, 8) != l->hexversion) {
		snprintf(why, len, "Python 3.%u's _PyRuntime does not begin with its "
			 "_Py_DebugOffsets", l->minor);
		return -ENOTSUP;
	}
	if (u64_at(d, 16)) {
		snprintf(why, len, "Python 3.%ut is free-threaded", l->minor);
		return -ENOTSUP;
	}
	/* thread state: size, prev, next, interp, current_frame, thread_id, native_thread_id,
	 * datastack_chunk, as in every version */
	for (i = 0; i < 8; i++)
		v[i] = u64_at(d, p->thread_state + 8 * i);
	if (v[1] != 0 || v[2] != 8 || v[3] != 16 || !v[4] || v[4] >= v[0] || !v[7] ||
	    v[7] >= v[0]) {
		snprintf(why, len, "Python 3.%u's thread state offsets are not as expected",
			 l->minor);
		return -ENOTSUP;
	}
	l->tstate_frame = v[4];
	l->tstate_chunk = v[7];
	l->cframe_frame = JW_PY_NONE;
	for (i = 0; i < 6; i++)
		v[i] = u64_at(d, p->frame + 8 * i);
	if (v[2] != 0 || v[1] != 8 || v[0] < 64 || v[3] > JW_PY_FRAME_WINDOW - 8 ||
	    v[4] > v[0] || v[5] > JW_PY_FRAME_WINDOW - 1) {
		snprintf(why, len, "Python 3.%u's frame offsets are not as expected", l->minor);
		return -ENOTSUP;
	}
	l->frame_previous = v[1];
	l->frame_code = v[2];
	l->frame_instr = v[3];
	l->frame_localsplus = v[4];
	l->frame_entry = v[5];
	l->entry_value = p->entry_value;
	l->entry_is_own_frame = true;
	l->ref_tag = p->ref_tag;
	for (i = 0; i < 6; i++)
		v[i] = u64_at(d, p->code + 8 * i);
	l->code_filename = v[1];
	l->code_name = v[2];
	l->code_qualname = v[3];
	l->code_linetable = v[4];
	l->code_firstlineno = v[5];
	l->code_adaptive = u64_at(d, p->code + p->code_adaptive);
	if (!v[0] || l->code_adaptive > v[0] || v[0] - l->code_adaptive > 8 ||
	    l->code_filename >= v[0] ||
	    l->code_qualname >= v[0] || l->code_linetable >= v[0]) {
		snprintf(why, len, "Python 3.%u's code object offsets are not as expected",
			 l->minor);
		return -ENOTSUP;
	}
	object_fields(l);
	l->str_ascii_size = 40;
	l->str_compact_size = 56;
	l->str_utf8 = 48;
	return 0;
}

/*
 * Whether PyCode_Type of @e says what @l says: its size (where the instructions begin), and its
 * members co_filename, co_name, co_qualname, co_firstlineno, co_linetable at @l's offsets.
 * 0, or -ENOTSUP with @why said.
 */
static int check_members(struct jw_elf_data *e, const struct jw_py_layout *l, char *why,
			 size_t len)
{
	const struct {
		const char *name;
		uint32_t off;
	} want[] = {
		{ "co_filename", l->code_filename }, { "co_name", l->code_name },
		{ "co_qualname", l->code_qualname }, { "co_firstlineno", l->code_firstlineno },
		{ "co_linetable", l->code_linetable },
	};
	const unsigned int all = (1u << (sizeof(want) / sizeof(want[0]))) - 1;
	uint64_t type, size, basicsize, members, name, off;
	unsigned int seen = 0;
	char member[32];
	size_t i, k;

	if (jw_elf_data__symbol(e, "PyCode_Type", &type, &size) ||
	    jw_elf_data__read(e, type + TP_BASICSIZE, &basicsize, sizeof(basicsize)) ||
	    jw_elf_data__pointer(e, type + TP_MEMBERS, &members) || !members) {
		snprintf(why, len, "Python 3.%u's PyCode_Type cannot be read", l->minor);
		return -ENOTSUP;
	}
	for (k = 0; k < MAX_MEMBERS && seen != all; k++) {
		if (jw_elf_data__pointer(e, members + k * MEMBER_SIZE, &name) || !name ||
		    jw_elf_data__string(e, name, member, sizeof(member)) ||
		    jw_elf_data__read(e, members + k * MEMBER_SIZE + MEMBER_OFFSET, &off,
				      sizeof(off)))
			break;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			if (strcmp(member, want[i].name))
				continue;
			if (off != want[i].off) {
				snprintf(why, len, "Python 3.%u's code objects are not laid out as "
					 "jankwatch knows 3.%u's (%s at %llu, not %u)", l->minor,
					 l->minor, member, (unsigned long long)off, want[i].off);
				return -ENOTSUP;
			}
			seen |= 1u << i;
		}
	}
	if (seen != all || basicsize != l->code_adaptive) {
		snprintf(why, len, "Python 3.%u's code objects are not laid out as jankwatch knows "
			 "3.%u's", l->minor, l->minor);
		return -ENOTSUP;
	}
	return 0;
}

/* 3.11, 3.12: the version's table, if PyCode_Type says the same (check_members()). */
static int from_table(struct jw_elf_data *e, struct jw_py_layout *l, char *why, size_t len)
{
	uint32_t hexversion = l->hexversion;
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].minor == l->minor)
			break;
	if (i == sizeof(tables) / sizeof(tables[0]))
		return -ENOTSUP;
	*l = tables[i];
	l->hexversion = hexversion;
	object_fields(l);
	return check_members(e, l, why, len);
}

bool jw_py_in_eval(const struct jw_py_layout *l, uint64_t addr)
{
	size_t i;

	for (i = 0; i < l->n_eval; i++)
		if (addr >= l->eval[i].lo && addr < l->eval[i].hi)
			return true;
	return false;
}

int jw_py_layout_read(const char *path, struct jw_py_layout *out, char *why, size_t len)
{
	struct jw_elf_data *e = jw_elf_data__open(path);
	uint8_t debug[JW_PY_DEBUG_READ];
	uint64_t addr, size, version = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!e) {
		err = -errno;
		snprintf(why, len, "%s cannot be read: %s", path, strerror(errno));
		return err;
	}
	if (jw_elf_data__symbol(e, "Py_Version", &addr, &size) ||
	    jw_elf_data__read(e, addr, &version, size == 4 ? 4 : 8)) {
		/* Py_Version came with 3.11; an older one has no frames of this kind either. */
		snprintf(why, len, "it has no Py_Version (a Python before 3.11)");
		err = -ENOTSUP;
		goto out;
	}
	out->hexversion = version;
	out->minor = (version >> 16) & 0xff;
	if ((version >> 24) != 3 || out->minor < 11) {
		snprintf(why, len, "Python %u.%u is not one jankwatch reads (3.11 and later)",
			 (unsigned int)(version >> 24), out->minor);
		err = -ENOTSUP;
		goto out;
	}
	if (out->minor <= 12) {
		*why = '\0';
		err = from_table(e, out, why, len);
		goto out;
	}
	if ((jw_elf_data__section(e, ".PyRuntime", &addr, &size) &&
	     jw_elf_data__symbol(e, "_PyRuntime", &addr, &size)) ||
	    jw_elf_data__read(e, addr, debug, sizeof(debug))) {
		snprintf(why, len, "Python 3.%u has no _PyRuntime to read its offsets from",
			 out->minor);
		err = -ENOTSUP;
		goto out;
	}
	err = jw_py_layout_from_debug(debug, out, why, len);
out:
	jw_elf_data__close(e);
	if (!err)
		out->n_eval = jw_elf_function_parts(path, "_PyEval_EvalFrameDefault", out->eval,
						    JW_PY_EVAL_PARTS);
	return err;
}

void jw_py_layout_chain(const struct jw_py_layout *l, struct jw_arg_chain *chain)
{
	chain->kind = JW_HANDLER_PY_CODE;
	chain->py_qualname = l->code_qualname;
	chain->py_filename = l->code_filename;
	chain->py_firstlineno = l->code_firstlineno;
	chain->py_str_state = l->str_state;
	chain->py_str_ascii_data = l->str_ascii_size;
	chain->py_str_utf8 = l->str_utf8;
	chain->py_frame_previous = l->frame_previous;
	chain->py_frame_local0 = l->frame_localsplus;
	chain->py_ob_type = l->ob_type;
	chain->py_tp_name = l->tp_name;
	chain->py_tp_basicsize = l->tp_basicsize;
	chain->py_float_value = l->float_value;
	chain->py_tstate_frame = l->tstate_frame;
	chain->py_cframe_frame = l->cframe_frame;
	chain->py_frame_code = l->frame_code;
	chain->py_frame_instr = l->frame_instr;
	chain->py_frame_entry = l->frame_entry;
	chain->py_entry_value = l->entry_value;
	chain->py_ref_tag = l->ref_tag;
	chain->py_tstate_chunk = l->tstate_chunk ? l->tstate_chunk : JW_PY_NONE;
}
