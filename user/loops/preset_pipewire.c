// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_pipewire.h"
#include "loops/sites.h"

/* The wrappers' entries are read this far. */
#define ENTRY_BYTES 64
/* More of either than this: not the loop this preset knows. */
#define MAX_DISPATCH 2
#define MAX_WRAPPED 6
#define MAX_TAIL 4

struct pw_scan {
	struct jw_preset *out;
	int32_t cb_field;	/* the wrappers' field of the program's callback; 0: none found */
	size_t dispatch, wrapped;
};

struct tail_scan {
	uint64_t at[MAX_TAIL];
	int32_t field;
	size_t found;
	bool refused;		/* two layouts, or too many: none is trusted */
};

static int tail_wrapper(const uint8_t *code, size_t len, uint64_t at, void *ctx)
{
	struct tail_scan *t = ctx;
	int32_t f;

	if (jw_arch_tail_call_field(code, len < ENTRY_BYTES ? len : ENTRY_BYTES, &f))
		return 0;
	if ((t->found && f != t->field) || t->found == MAX_TAIL) {
		t->refused = true;
		return 1;
	}
	t->field = f;
	t->at[t->found++] = at;
	return 0;
}

/*
 * The wrappers that jump to the program's callback from their entry (an I/O and an idle
 * source's): their entries, into @at (at most MAX_TAIL), and the field they read it from, the
 * same for all. How many, or 0.
 */
static size_t tail_wrappers(const char *path, uint64_t at[MAX_TAIL], int32_t *field)
{
	struct tail_scan t = { .found = 0 };

	if (jw_sites_each_function(path, tail_wrapper, &t) || t.refused)
		return 0;
	memcpy(at, t.at, t.found * sizeof(*at));
	*field = t.field;
	return t.found;
}

/*
 * The loop's call of a source's func with the source as its argument, "source->func(source)";
 * and the wrappers' calls of the program's callback at the field the jumping wrappers use.
 */
static int pw_call(const struct jw_arch_call *call, uint64_t base, void *ctx)
{
	struct pw_scan *s = ctx;
	struct jw_preset_probe *p;
	int src = call->via_reg;

	if (!call->indirect || src < 0)
		return 0;
	if (call->via_disp == JW_PW_SOURCE_FUNC &&
	    (call->arg_copy[0] == src || (unsigned int)src == jw_arch_arg_reg(0))) {
		s->dispatch++;
		jw_sites_add(s->out, "pw_loop_iterate", base + call->at, call->len, src, true,
			     JW_PW_SOURCE_FUNC);
	} else if (s->cb_field && call->via_disp == s->cb_field) {
		s->wrapped++;
		p = jw_sites_add(s->out, "spa_source_callback", base + call->at, call->len, src,
				 true, s->cb_field);
		if (p)
			p->chain.flags = JW_CHAIN_FIRST;
	}
	return 0;
}

/* A wrapper's entry at @at that jumps to the callback at @field of its source: renames. */
static void add_entry(struct jw_preset *out, uint64_t at, int32_t field)
{
	struct jw_preset_probe *p = &out->probes[out->n_probes++];

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = "spa_source_callback";
	p->offset = at;
	p->name_arg = true;
	p->per_callback = true;
	p->callee = JW_COOKIE_CALLEE;	/* nested in the loop's call: its chain says */
	p->chain.kind = JW_HANDLER_CODE;
	p->chain.handler = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 1,
						 .offsets = { field } };
	p->chain.flags = JW_CHAIN_FIRST;
}

bool jw_pipewire_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct pw_scan s = { .out = out };
	uint64_t tail[MAX_TAIL];
	size_t n_tail, k;
	char note[256];

	(void)pid;
	(void)exe;
	out->n_probes = 0;
	n_tail = tail_wrappers(out->where, tail, &s.cb_field);
	if (!n_tail)
		s.cb_field = 0;
	if (jw_sites_scan(out->where, NULL, false, pw_call, &s, note, sizeof(note))) {
		out->n_probes = 0;
		snprintf(out->detail, sizeof(out->detail), "%.*s", (int)sizeof(out->detail) - 1,
			 note);
		return true;
	}
	if (!s.dispatch || s.dispatch > MAX_DISPATCH || s.wrapped > MAX_WRAPPED ||
	    s.dispatch + s.wrapped != out->n_probes ||
	    out->n_probes + n_tail > JW_MAX_PRESET_PROBES) {
		snprintf(out->detail, sizeof(out->detail),
			 "%zu calls of a source's func and %zu of a callback in its code, not the "
			 "loop's", s.dispatch, s.wrapped);
		out->n_probes = 0;
		return true;
	}
	for (k = 0; k < n_tail; k++)
		add_entry(out, tail[k], s.cb_field);
	jw_sites_place_exits(out);
	return true;
}

void jw_pipewire_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	const char *file = strrchr(p->where, '/');

	file = file ? file + 1 : p->where;
	if (p->detail[0])
		snprintf(why, len, "%s: %s runs PipeWire's loops; handlers named from the stacks "
			 "alone: %s", how, file, p->detail);
	else if (!p->n_probes)
		snprintf(why, len, "%s: %s runs PipeWire's loops; handler_sites=0: handlers named "
			 "from the stacks", how, file);
	else
		snprintf(why, len, "%s: %s runs PipeWire's loops; callbacks named where the loop "
			 "or a source's wrapper calls them (%zu sites)", how, file, p->n_probes);
}
