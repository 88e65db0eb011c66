/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interpreters: a CPython code object's name, file and line, read from the target.
 * Part of jankwatch.bpf.c, the one BPF object: included there, after the parts it uses.
 */
#ifndef JW_BPF_INTERP_H
#define JW_BPF_INTERP_H

/* Reads CPython str @str into @dst: a compact one's characters, else its UTF-8 copy. */
static void read_py_str(const struct jw_arg_chain *c, __u64 str, char *dst, __u32 len)
{
	__u32 state = 0;
	__u64 utf8 = 0;

	if (!str || bpf_probe_read_user(&state, sizeof(state), (void *)(str + c->py_str_state)))
		return;
	/* state: interned:2, kind:3, compact:1, ascii:1, ready:1 */
	if (!(state & (1 << 5)))
		return;
	if (state & (1 << 6)) {
		bpf_probe_read_user_str(dst, len, (void *)(str + c->py_str_ascii_data));
		return;
	}
	if (!bpf_probe_read_user(&utf8, sizeof(utf8), (void *)(str + c->py_str_utf8)) && utf8)
		bpf_probe_read_user_str(dst, len, (void *)utf8);
}

/*
 * The qualified name, file and first line of CPython code object @code, as probe @inner_probe
 * (its id + 1) finds handlers; nothing when that probe's handlers are not code objects. A few
 * reads, done only for reported tasks and new statistics rows, while the object surely lives.
 */
static void name_py_code(__u32 inner_probe, __u64 code, char *name, char *file, __u32 *line)
{
	__u32 id = inner_probe - 1;
	struct jw_arg_chain *c;
	__u64 str = 0;

	if (!inner_probe || !code)
		return;
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c || c->kind != JW_HANDLER_PY_CODE)
		return;
	if (!bpf_probe_read_user(&str, sizeof(str), (void *)(code + c->py_qualname)))
		read_py_str(c, str, name, JW_HANDLER_NAME_LEN);
	str = 0;
	if (!bpf_probe_read_user(&str, sizeof(str), (void *)(code + c->py_filename)))
		read_py_str(c, str, file, JW_HANDLER_FILE_LEN);
	bpf_probe_read_user(line, sizeof(*line), (void *)(code + c->py_firstlineno));
}

/*
 * The thread's current CPython frame, from its PyThreadState @tstate as chain @c says; 0 when it
 * cannot be read. At _PyEval_EvalFrameDefault's entry: the frame of the caller.
 */
static __always_inline __u64 py_current_frame(const struct jw_arg_chain *c, __u64 tstate)
{
	__u64 p = 0;

	if (!tstate || bpf_probe_read_user(&p, sizeof(p), (void *)(tstate + c->py_tstate_frame)) ||
	    !p)
		return 0;
	if (c->py_cframe_frame != JW_PY_NONE &&
	    bpf_probe_read_user(&p, sizeof(p), (void *)(p + c->py_cframe_frame)))
		return 0;
	return p;
}

/* Room past a sample's stack copy for its Python frames, and for reading one frame. */
#define PY_ROOM (JW_MAX_PY_FRAMES * sizeof(struct jw_py_frame) + JW_PY_FRAME_WINDOW)

/*
 * Writes the Python frames of the thread of state @s at @out (room for PY_ROOM bytes: the
 * frames, then the window each is read into), innermost first; returns how many. One read per
 * frame, and no branch but the walk's end, so that the verifier's walk of the loop stays one
 * path long: a frame's fields are picked out of its window at offsets the chain bounds, its
 * entry byte's match turned into a bit arithmetically.
 */
static __noinline __u32 read_py_frames(const struct jw_task_state *s, __u8 *out)
{
	__u32 id = s->py_probe - 1, code_at, instr_at, prev_at, entry_at, n = 0;
	__u8 *win = out + JW_MAX_PY_FRAMES * sizeof(struct jw_py_frame);
	struct jw_py_frame *f = (struct jw_py_frame *)out;
	const struct jw_arg_chain *c;
	__u64 frame, tag, want;

	if (!s->py_probe || !s->py_tstate)
		return 0;
	c = bpf_map_lookup_elem(&arg_chains, &id);
	if (!c || c->kind != JW_HANDLER_PY_CODE)
		return 0;
	code_at = c->py_frame_code;
	instr_at = c->py_frame_instr;
	prev_at = c->py_frame_previous;
	entry_at = c->py_frame_entry;
	if (code_at > JW_PY_FRAME_WINDOW - 8 || instr_at > JW_PY_FRAME_WINDOW - 8 ||
	    prev_at > JW_PY_FRAME_WINDOW - 8 || entry_at > JW_PY_FRAME_WINDOW - 1)
		return 0;
	tag = c->py_ref_tag;
	want = c->py_entry_value;
	frame = py_current_frame(c, s->py_tstate);
	for (int i = 0; i < JW_MAX_PY_FRAMES; i++) {
		__u64 d;

		if (!frame || bpf_probe_read_user(win, JW_PY_FRAME_WINDOW, (void *)frame))
			break;
		d = win[entry_at] ^ want;
		/* (d - 1) >> 63: 1 when d is 0, else 0 (d is a byte) */
		f[i].code = (*(__u64 *)(win + code_at) & ~tag & ~JW_PY_FRAME_ENTRY) |
			    ((d - 1) >> 63);
		f[i].instr = *(__u64 *)(win + instr_at);
		frame = *(__u64 *)(win + prev_at);
		n = i + 1;
	}
	return n;
}

#endif
