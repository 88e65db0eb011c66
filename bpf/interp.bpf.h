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

/* Room past a sample's stack copy for its Python frames. */
#define PY_ROOM (JW_MAX_PY_FRAMES * sizeof(struct jw_py_frame))

/*
 * A frame's field offsets, masked where they are used: a kernel that does not keep a spilled
 * register's bounds (5.10) sees them bounded so. They are below JW_PY_FRAME_WINDOW.
 */
#define PY_FIELD_MASK 127
_Static_assert(JW_PY_FRAME_WINDOW <= PY_FIELD_MASK + 1, "a frame's fields within the mask");

/*
 * Where a sample's Python frames are read, per CPU: the top of the thread's data stack, then
 * room for one frame read alone. One for the sampler, one for the scheduler's program, which a
 * sample may interrupt.
 */
struct py_stack {
	__u8 b[JW_PY_STACK_READ + PY_FIELD_MASK + 1 + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct py_stack);
} py_stacks SEC(".maps");

/*
 * Reads the thread's data stack (chunk @chunk) from at most JW_PY_STACK_READ bytes below its frame
 * @frame to just past it into @buf: never past its top, whose pages may never have been touched
 * (a read of one of them fails whole). Returns the address read from, its length in @len; 0 when
 * the frame is not in the chunk or the read fails: the frames are then read one by one.
 */
static __always_inline __u64 read_py_stack(__u8 *buf, __u64 chunk, __u64 frame, __u64 *len)
{
	__u64 size = 0, lo, hi, base, n;

	if (!chunk || bpf_probe_read_user(&size, sizeof(size), (void *)(chunk + 8)))
		return 0;
	lo = chunk + 24;
	hi = chunk + size;
	if (size < 24 + JW_PY_FRAME_WINDOW || frame < lo || frame + JW_PY_FRAME_WINDOW > hi)
		return 0;
	base = frame + JW_PY_FRAME_WINDOW - JW_PY_STACK_READ;
	if (base < lo || base > frame)
		base = lo;
	n = frame + JW_PY_FRAME_WINDOW - base;
	barrier_var(n);
	if (n > JW_PY_STACK_READ || bpf_probe_read_user(buf, n, (void *)base))
		return 0;
	*len = n;
	return base;
}

/* Where a frame's fields are in its bytes, and what tells its kind (read_py_frames()). */
struct py_layout {
	__u64 tag;		/* the bits of a code reference that are not its address */
	__u64 want;		/* an entry frame's owner byte */
	__u32 code_at, instr_at, prev_at, entry_at;	/* the fields' offsets in a frame */
};

/*
 * Writes frame *@frame at @f, moves *@frame to its caller; false at the walk's end. @buf holds
 * the data stack's top (@len bytes read from @base; @base 0: nothing read), then room for one
 * frame. No branch but the walk's end and where a frame is read from: a frame's fields are
 * picked out of its bytes at offsets the chain bounds, its entry byte's match turned into a bit
 * arithmetically.
 */
static __always_inline bool py_frame_at(struct jw_py_frame *f, __u8 *buf, __u64 base, __u64 len,
					const struct py_layout *l, __u64 *frame)
{
	__u64 off = *frame - base, d;
	__u32 ca, ia, pa, ea;
	__u8 *win;

	if (!*frame)
		return false;
	/* In the data stack's top as read, or alone into the room after it. */
	if (!base || *frame < base || off > len - JW_PY_FRAME_WINDOW) {
		off = JW_PY_STACK_READ;
		if (bpf_probe_read_user(buf + JW_PY_STACK_READ, JW_PY_FRAME_WINDOW,
					(void *)*frame))
			return false;
	}
	barrier_var(off);
	if (off > JW_PY_STACK_READ)
		return false;
	win = buf + off;
	/* Opaque, so that the compiler keeps the masks it could prove needless. */
	ca = l->code_at;
	ia = l->instr_at;
	pa = l->prev_at;
	ea = l->entry_at;
	barrier_var(ca);
	barrier_var(ia);
	barrier_var(pa);
	barrier_var(ea);
	d = win[ea & PY_FIELD_MASK] ^ l->want;
	/* (d - 1) >> 63: 1 when d is 0, else 0 (d is a byte) */
	f->code = (*(__u64 *)(win + (ca & PY_FIELD_MASK)) & ~l->tag & ~JW_PY_FRAME_ENTRY) |
		  ((d - 1) >> 63);
	f->instr = *(__u64 *)(win + (ia & PY_FIELD_MASK));
	*frame = *(__u64 *)(win + (pa & PY_FIELD_MASK));
	return true;
}

#if !JW_COMPAT
/* A walk under bpf_loop: what read_py_frames() set up, and where it stands. */
struct py_walk {
	struct jw_py_frame *f;
	__u8 *buf;
	__u64 base, len, frame;
	struct py_layout l;
	__u32 n;	/* frames written */
};

static long py_walk_step(__u32 i, struct py_walk *w)
{
	__u64 k = i;

	/* Opaque, so that the compiler indexes with the value checked here. */
	barrier_var(k);
	if (k >= JW_MAX_PY_FRAMES ||
	    !py_frame_at(&w->f[k], w->buf, w->base, w->len, &w->l, &w->frame))
		return 1;
	w->n = k + 1;
	return 0;
}
#endif

/*
 * Writes the Python frames of the thread of state @s into sample @rec, past its stack copy
 * (room for PY_ROOM bytes), innermost first; returns how many. Where the copy ends is read back
 * from the record, not passed in: the verifier then sees one way into this function, not one for
 * each page the copy may end at (with the compatible build's bounded copy, 387004 instructions of
 * on_sample's walk at 16384 stack bytes, refused at 49152; now 34125 and 35341 at 65536). The frames of calls lie one after the other in the thread's
 * data stack: its top, where the innermost are, is read at once (scratch @which of py_stacks),
 * and a frame outside it alone (a generator's, a call's own entry frame on the C stack). A
 * bpf_loop where the kernel has it, so that the verifier looks at one frame, not at each of the
 * walk's (that was a third of the object's load); the compatible build walks a bounded loop.
 */
static __noinline __u32 read_py_frames(const struct jw_task_state *s, struct jw_sample_rec *rec,
					__u32 which)
{
	__u32 id = s->py_probe - 1, n = 0, off = *(volatile __u32 *)&rec->stack_size;
	struct jw_py_frame *f;
	const struct jw_arg_chain *c;
	__u64 frame, base = 0, chunk = 0, len = 0;
	struct py_layout l;
	__u8 *buf;

	/* Room: the CHUNK past the stack copy, or PY_ROOM where there is none. */
	if (!s->py_probe || !s->py_tstate || off > stack_bytes)
		return 0;
	f = (struct jw_py_frame *)(rec->stack + off);
	c = bpf_map_lookup_elem(&arg_chains, &id);
	buf = bpf_map_lookup_elem(&py_stacks, &which);
	if (!c || !buf || c->kind != JW_HANDLER_PY_CODE)
		return 0;
	l.code_at = c->py_frame_code;
	l.instr_at = c->py_frame_instr;
	l.prev_at = c->py_frame_previous;
	l.entry_at = c->py_frame_entry;
	if (l.code_at > JW_PY_FRAME_WINDOW - 8 || l.instr_at > JW_PY_FRAME_WINDOW - 8 ||
	    l.prev_at > JW_PY_FRAME_WINDOW - 8 || l.entry_at > JW_PY_FRAME_WINDOW - 1)
		return 0;
	l.tag = c->py_ref_tag;
	l.want = c->py_entry_value;
	frame = py_current_frame(c, s->py_tstate);
	if (c->py_tstate_chunk != JW_PY_NONE &&
	    !bpf_probe_read_user(&chunk, sizeof(chunk), (void *)(s->py_tstate + c->py_tstate_chunk)))
		base = read_py_stack(buf, chunk, frame, &len);
#if JW_COMPAT
	for (int i = 0; i < JW_MAX_PY_FRAMES; i++) {
		if (!py_frame_at(&f[i], buf, base, len, &l, &frame))
			break;
		n = i + 1;
	}
#else
	{
		struct py_walk w = { .f = f, .buf = buf, .base = base, .len = len, .frame = frame,
				     .l = l };

		bpf_loop(JW_MAX_PY_FRAMES, py_walk_step, &w, 0);
		n = w.n;
	}
#endif
	return n;
}

#endif
