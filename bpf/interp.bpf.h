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

#endif
