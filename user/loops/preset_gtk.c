// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_gtk.h"
#include "loops/sites.h"
#include "process/target.h"

/* An emitting function is a few instructions. */
#define MAX_EMITTER 512

static const char *const phase_names[JW_GTK_PHASES] = {
	"GdkFrameClock::flush-events", "GdkFrameClock::before-paint", "GdkFrameClock::update",
	"GdkFrameClock::layout",       "GdkFrameClock::paint",        "GdkFrameClock::after-paint",
	"GdkFrameClock::resume-events",
};

struct emitter {
	uint64_t slot;			/* where its signal's id is */
	struct jw_elf_range at;		/* the function, file offsets */
};

struct emitters {
	uint64_t stub;		/* g_signal_emit's PLT stub */
	struct emitter *e;
	size_t n, max;
	bool short_of_memory;	/* the list is not whole: nothing is trusted */
};

static int by_slot(const void *a, const void *b)
{
	const struct emitter *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* A function that emits a signal, kept in @ctx (struct emitters). */
static int emitter(const uint8_t *code, size_t len, uint64_t at, void *ctx)
{
	struct emitters *es = ctx;
	struct emitter *grown;
	uint64_t slot;

	if (len > MAX_EMITTER || jw_arch_signal_emitter(code, len, at, es->stub, &slot))
		return 0;
	if (es->n == es->max) {
		es->max = es->max ? 2 * es->max : 256;
		grown = realloc(es->e, es->max * sizeof(*grown));
		if (!grown) {
			es->short_of_memory = true;
			return -ENOMEM;
		}
		es->e = grown;
	}
	es->e[es->n++] = (struct emitter){ .slot = slot, .at = { at, at + len } };
	return 0;
}

int jw_gtk_find_phases(const char *gtk, struct jw_elf_range at[JW_GTK_PHASES])
{
	struct emitters es = { .e = NULL };
	size_t i, j, k, runs = 0;
	struct emitter *e;

	if (jw_elf_plt_stub(gtk, "g_signal_emit", &es.stub) ||
	    jw_sites_each_function(gtk, emitter, &es) || es.short_of_memory) {
		free(es.e);
		return -ENOENT;
	}
	e = es.e;
	qsort(e, es.n, sizeof(*e), by_slot);
	/* Runs of consecutive ids' slots, each emitted by one function: exactly one of seven. */
	for (i = 0; i < es.n; i = j) {
		for (j = i + 1; j < es.n && e[j].slot == e[j - 1].slot + 4 &&
				(j + 1 == es.n || e[j + 1].slot != e[j].slot);
		     j++)
			;
		if ((i && e[i - 1].slot == e[i].slot) || j - i != JW_GTK_PHASES)
			continue;
		if (runs++)
			break;
		for (k = 0; k < JW_GTK_PHASES; k++)
			at[k] = e[i + k].at;
	}
	free(e);
	return runs == 1 ? 0 : -ENOENT;
}

/* The phase functions as nested sites: the one that runs longest names the frame. */
static void add_phases(struct jw_preset *out, const char *gtk,
		       const struct jw_elf_range at[JW_GTK_PHASES])
{
	struct jw_code_names *cn = &out->code_names;
	size_t k;

	if (out->n_probes + JW_GTK_PHASES > JW_MAX_PRESET_PROBES)
		return;
	snprintf(cn->file, sizeof(cn->file), "%s", gtk);
	for (k = 0; k < JW_GTK_PHASES; k++)
		if (jw_elf_code_vaddr(gtk, at[k].lo, &cn->names[k].lo) ||
		    jw_elf_code_vaddr(gtk, at[k].hi - 1, &cn->names[k].hi))
			return;
	for (k = 0; k < JW_GTK_PHASES; k++) {
		struct jw_preset_probe *p = &out->probes[out->n_probes++];

		memset(p, 0, sizeof(*p));
		snprintf(p->path, sizeof(p->path), "%s", gtk);
		p->entry = phase_names[k];
		p->offset = at[k].lo;
		p->exact = true;	/* where it stops is the handler: the phase's function */
		p->per_callback = true;
		p->name_arg = true;
		p->callee = JW_COOKIE_CALLEE;	/* nested in GLib's call of the frame's source */
		p->chain.kind = JW_HANDLER_CODE;
		p->chain.handler = (struct jw_reg_path){ .reg = JW_UREG_IP };
		p->chain.flags = JW_CHAIN_LONGEST;
		cn->names[k].hi++;
		cn->names[k].name = phase_names[k];
	}
	cn->n = JW_GTK_PHASES;
}

bool jw_gtk_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	char gtk[PATH_MAX], note[256];
	struct jw_elf_range at[JW_GTK_PHASES];

	(void)exe;
	snprintf(gtk, sizeof(gtk), "%s", out->where);
	out->n_probes = 0;
	/* GLib's sites: in its file, for the moment @where */
	if (!jw_target_find_mapping(pid, "libglib-2.0.so", out->where, sizeof(out->where)) &&
	    !jw_sites_glib(out, note, sizeof(note)))
		jw_sites_place_exits(out);
	else
		out->n_probes = 0;
	if (!jw_gtk_find_phases(gtk, at))
		add_phases(out, gtk, at);
	snprintf(out->where, sizeof(out->where), "%s", gtk);
	return true;
}

void jw_gtk_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	const char *file = strrchr(p->where, '/');

	file = file ? file + 1 : p->where;
	snprintf(why, len, "%s: %s runs GLib's loop; callbacks named where g_main_context_dispatch "
		 "calls them, %s (%zu sites)", how, file,
		 p->code_names.n ? "a frame by the frame clock's phase that took longest" :
				   "the frame clock's phases not found in its code",
		 p->n_probes);
}
