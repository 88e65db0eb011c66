// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strpool.h"
#include "process/target.h"
#include "stacks/pycode.h"

#define NAME_MAX_CHARS 256	/* of a qualified name */
#define FILE_MAX_CHARS 1024	/* of a file name */
#define TABLE_MAX 65536		/* bytes of a line table */
#define HEAD_MAX 256		/* bytes of a code object read to name it (its fields lie within) */

/* A code object of the process, as last read. */
struct code_ent {
	uint64_t code;			/* 0: a free slot */
	uint64_t qualname, filename, linetable;	/* its fields, to see it is still the same */
	const char *name;		/* interned */
	const char *file;		/* interned */
	uint32_t first;			/* co_firstlineno */
	uint8_t *table;
	size_t table_len;
};

struct jw_pycode {
	pid_t pid;
	const char *module;		/* interned */
	struct jw_py_layout l;
	struct jw_strpool *strings;
	uint64_t code_type;		/* the type object of code objects, once one was seen */
	struct code_ent *ents;		/* open addressing by code address */
	size_t cap, used;
	struct jw_raw_pyname *names;	/* a raw capture's, sorted by (code, instr) */
	size_t n_names;
};

static uint64_t field(const uint8_t *head, uint32_t off)
{
	uint64_t v;

	memcpy(&v, head + off, sizeof(v));
	return v;
}

struct jw_pycode *jw_pycode__new(pid_t pid, const char *module, const struct jw_py_layout *l)
{
	struct jw_pycode *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->l = *l;
	p->strings = jw_strpool__new();
	p->module = p->strings ? jw_strpool__intern(p->strings, module) : NULL;
	if (!p->module) {
		jw_pycode__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static int name_cmp(const void *a, const void *b)
{
	const struct jw_raw_pyname *x = a, *y = b;

	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->instr < y->instr ? -1 : x->instr > y->instr;
}

struct jw_pycode *jw_pycode__new_names(const struct jw_raw_pyname *names, size_t n,
				       const char *module, bool entry_own,
				       const struct jw_raw_range *eval, size_t n_eval)
{
	struct jw_pycode *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	p->strings = jw_strpool__new();
	p->names = calloc(n + 1, sizeof(*p->names));
	if (!p->strings || !p->names)
		goto err;
	p->module = jw_strpool__intern(p->strings, module ? module : "");
	if (!p->module)
		goto err;
	if (n_eval > JW_PY_EVAL_PARTS)
		n_eval = JW_PY_EVAL_PARTS;
	for (i = 0; i < n_eval; i++)
		p->l.eval[i] = (struct jw_elf_range){ eval[i].lo, eval[i].hi };
	p->l.n_eval = n_eval;
	for (i = 0; i < n; i++) {
		p->names[i] = names[i];
		p->names[i].name = jw_strpool__intern(p->strings, names[i].name);
		p->names[i].file = jw_strpool__intern(p->strings, names[i].file);
		if ((names[i].name && !p->names[i].name) || (names[i].file && !p->names[i].file))
			goto err;
	}
	p->n_names = n;
	p->l.entry_is_own_frame = entry_own;
	qsort(p->names, n, sizeof(*p->names), name_cmp);
	return p;
err:
	jw_pycode__free(p);
	errno = ENOMEM;
	return NULL;
}

bool jw_pycode__entry_own(const struct jw_pycode *p)
{
	return p->l.entry_is_own_frame;
}

bool jw_pycode__is_eval(const struct jw_pycode *p, const struct jw_frame *fr)
{
	if (fr->kind != JW_FRAME_NATIVE)
		return false;
	if (fr->symbol && !strcmp(fr->symbol, JW_PY_EVAL_FUNCTION))
		return true;
	/* A return address may be just past a part's last call. */
	return fr->module && !strcmp(fr->module, p->module) &&
	       (jw_py_in_eval(&p->l, fr->rel_pc) || jw_py_in_eval(&p->l, fr->rel_pc - 1));
}

const char *jw_pycode__module(const struct jw_pycode *p)
{
	return p->module;
}

const struct jw_elf_range *jw_pycode__eval(const struct jw_pycode *p, size_t *n)
{
	*n = p->l.n_eval;
	return p->l.eval;
}

void jw_pycode__free(struct jw_pycode *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->cap; i++)
		free(p->ents[i].table);
	free(p->ents);
	free(p->names);
	jw_strpool__free(p->strings);
	free(p);
}

/* 6-bit chunks, the 7th bit saying another follows. */
static uint64_t read_varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 56)
			return v;
		b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int64_t read_svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t u = read_varint(t, len, i);

	return (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

uint32_t jw_py_line(const uint8_t *table, size_t len, uint32_t first, uint64_t index)
{
	int64_t line = first;
	uint64_t at = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t b = table[i++];
		unsigned int code = (b >> 3) & 15;
		uint64_t units = (b & 7) + 1;

		if (!(b & 0x80))
			continue;	/* not an entry's first byte: damage; resynchronize */
		switch (code) {
		case 15:		/* no location */
			break;
		case 14:		/* long form: line, end line, columns */
			line += read_svarint(table, len, &i);
			read_varint(table, len, &i);
			read_varint(table, len, &i);
			read_varint(table, len, &i);
			break;
		case 13:		/* no columns */
			line += read_svarint(table, len, &i);
			break;
		case 10: case 11: case 12:	/* one line: the delta is the code's */
			line += code - 10;
			i += 2;
			break;
		default:		/* short form: the same line, a column byte */
			i += 1;
			break;
		}
		if (index < at + units)
			return line > 0 ? (uint32_t)line : first;
		at += units;
	}
	return first;
}

/* The UTF-8 of CPython str @str, at most @max characters, into @out (room 4 * @max + 1). */
static int read_str(struct jw_pycode *p, uint64_t str, char *out, size_t max)
{
	const struct jw_py_layout *l = &p->l;
	uint8_t head[64], raw[4 * FILE_MAX_CHARS];
	uint64_t n;
	uint32_t state, kind, k;
	size_t o = 0;
	int err;

	if (!str)
		return -EINVAL;
	err = jw_target_read(p->pid, str, head, l->str_ascii_size);
	if (err)
		return err;
	n = field(head, l->str_length);
	memcpy(&state, head + l->str_state, sizeof(state));
	kind = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;		/* not compact: not what a code object's names are */
	if (n > max)
		n = max;
	if (state & (1 << 6)) {		/* ASCII */
		err = jw_target_read(p->pid, str + l->str_ascii_size, out, n);
		out[err ? 0 : n] = '\0';
		return err;
	}
	err = jw_target_read(p->pid, str + l->str_compact_size, raw, n * kind);
	if (err)
		return err;
	for (k = 0; k < n; k++) {
		uint32_t c = kind == 1 ? raw[k] : kind == 2 ? ((uint16_t *)raw)[k] :
			     ((uint32_t *)raw)[k];

		if (c < 0x80) {
			out[o++] = c;
		} else if (c < 0x800) {
			out[o++] = 0xc0 | (c >> 6);
			out[o++] = 0x80 | (c & 63);
		} else if (c < 0x10000) {
			out[o++] = 0xe0 | (c >> 12);
			out[o++] = 0x80 | ((c >> 6) & 63);
			out[o++] = 0x80 | (c & 63);
		} else {
			out[o++] = 0xf0 | ((c >> 18) & 7);
			out[o++] = 0x80 | ((c >> 12) & 63);
			out[o++] = 0x80 | ((c >> 6) & 63);
			out[o++] = 0x80 | (c & 63);
		}
	}
	out[o] = '\0';
	return 0;
}

/* Whether @obj's type is the code type (named "code"; remembered once seen). */
static bool is_code(struct jw_pycode *p, uint64_t type)
{
	uint64_t name;
	char tn[8];

	if (!type)
		return false;
	if (p->code_type)
		return type == p->code_type;
	if (jw_target_read(p->pid, type + p->l.tp_name, &name, sizeof(name)) ||
	    jw_target_read(p->pid, name, tn, 5) || memcmp(tn, "code", 5))
		return false;
	p->code_type = type;
	return true;
}

static struct code_ent *slot_of(struct jw_pycode *p, uint64_t code)
{
	size_t i = (code >> 4) * 0x9e3779b97f4a7c15ULL >> 7;

	for (;; i++) {
		struct code_ent *e = &p->ents[i & (p->cap - 1)];

		if (!e->code || e->code == code)
			return e;
	}
}

static int grow(struct jw_pycode *p)
{
	struct code_ent *old = p->ents;
	size_t i, cap = p->cap;

	p->cap = cap ? cap * 2 : 256;
	p->ents = calloc(p->cap, sizeof(*p->ents));
	if (!p->ents) {
		p->ents = old;
		p->cap = cap;
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		if (old[i].code)
			*slot_of(p, old[i].code) = old[i];
	free(old);
	return 0;
}

/* Reads code object @code's names and line table into @e (whose fields @head has). */
static int read_code(struct jw_pycode *p, uint64_t code, const uint8_t *head, struct code_ent *e)
{
	const struct jw_py_layout *l = &p->l;
	char name[4 * NAME_MAX_CHARS + 1], file[4 * FILE_MAX_CHARS + 1];
	uint8_t bh[64];
	uint64_t n;
	int32_t first;
	int err;

	err = read_str(p, field(head, l->code_qualname), name, NAME_MAX_CHARS);
	if (!err)
		err = read_str(p, field(head, l->code_filename), file, FILE_MAX_CHARS);
	if (err)
		return err;
	memcpy(&first, head + l->code_firstlineno, sizeof(first));
	free(e->table);
	e->table = NULL;
	e->table_len = 0;
	e->code = code;
	e->qualname = field(head, l->code_qualname);
	e->filename = field(head, l->code_filename);
	e->linetable = field(head, l->code_linetable);
	e->name = jw_strpool__intern(p->strings, name);
	e->file = jw_strpool__intern(p->strings, file);
	e->first = first > 0 ? first : 0;
	if (!e->name || !e->file)
		return -ENOMEM;
	if (!e->linetable || jw_target_read(p->pid, e->linetable, bh, l->bytes_data))
		return 0;	/* named, no lines: the first line stands */
	n = field(bh, l->bytes_size);
	if (!n || n > TABLE_MAX)
		return 0;
	e->table = malloc(n);
	if (e->table && !jw_target_read(p->pid, e->linetable + l->bytes_data, e->table, n))
		e->table_len = n;
	return 0;
}

/* The cache entry of code object @code, read or checked now; NULL when it is none. */
static struct code_ent *code_entry(struct jw_pycode *p, uint64_t code)
{
	const struct jw_py_layout *l = &p->l;
	uint8_t head[HEAD_MAX];
	struct code_ent *e;
	bool fresh;

	if (!code || l->code_adaptive > HEAD_MAX ||
	    jw_target_read(p->pid, code, head, l->code_adaptive) || !is_code(p, field(head, l->ob_type)))
		return NULL;
	if ((p->used + 1) * 2 > p->cap && grow(p))
		return NULL;
	e = slot_of(p, code);
	fresh = !e->code;
	if (!fresh && e->qualname == field(head, l->code_qualname) &&
	    e->filename == field(head, l->code_filename) &&
	    e->linetable == field(head, l->code_linetable))
		return e;
	if (read_code(p, code, head, e)) {
		if (!fresh)
			e->name = NULL;	/* keep the slot, named again next time */
		return e->name ? e : NULL;
	}
	p->used += fresh;
	return e;
}

static void fill_frame(struct jw_pycode *p, uint64_t code, const char *name, const char *file,
		       uint32_t line, struct jw_frame *fr)
{
	char src[4 * FILE_MAX_CHARS + 16];

	snprintf(src, sizeof(src), "%s:%" PRIu32, file ? file : "?", line);
	*fr = (struct jw_frame){
		.kind = JW_FRAME_PYTHON,
		.pc = code,
		.rel_pc = line,
		.module = file,
		.symbol = name,
		.src = jw_strpool__intern(p->strings, src),
	};
}

bool jw_pycode__frame(struct jw_pycode *p, uint64_t code, uint64_t instr, struct jw_frame *fr)
{
	struct jw_raw_pyname key = { .code = code, .instr = instr }, *hit;
	struct code_ent *e;
	uint64_t base;

	if (!p)
		return false;
	if (p->names) {
		hit = p->n_names ? bsearch(&key, p->names, p->n_names, sizeof(key), name_cmp) : NULL;
		if (!hit || !hit->name)
			return false;
		fill_frame(p, code, hit->name, hit->file, hit->line, fr);
		return true;
	}
	e = code_entry(p, code);
	if (!e || !e->name)
		return false;
	base = code + p->l.code_adaptive;
	fill_frame(p, code, e->name, e->file,
		   instr >= base ? jw_py_line(e->table, e->table_len, e->first, (instr - base) / 2) :
				   e->first, fr);
	return true;
}
