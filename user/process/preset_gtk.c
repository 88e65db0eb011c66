// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "process/preset_gtk.h"
#include "process/sites.h"
#include "process/target.h"

/* libgtk-4 has ~40000 functions; an emitting function is a few instructions. */
#define MAX_FUNCTIONS (1u << 17)
#define MAX_EMITTER 512

static const char *const phase_names[JW_GTK_PHASES] = {
	"GdkFrameClock::flush-events", "GdkFrameClock::before-paint", "GdkFrameClock::update",
	"GdkFrameClock::layout",       "GdkFrameClock::paint",        "GdkFrameClock::after-paint",
	"GdkFrameClock::resume-events",
};

struct emitter {
	uint64_t slot;		/* where its signal's id is */
	uint64_t at;		/* its entry, a file offset */
};

static int by_slot(const void *a, const void *b)
{
	const struct emitter *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The functions of @path (its .text @text, @size bytes, read into @code) that emit a signal. */
static size_t emitters(const char *path, const uint8_t *code, uint64_t text, uint64_t size,
		       uint64_t stub, struct emitter **out)
{
	uint64_t *starts = calloc(MAX_FUNCTIONS, sizeof(*starts));
	struct emitter *e = NULL;
	size_t n = 0, found = 0, k;

	if (!starts || (jw_elf_function_starts(path, starts, MAX_FUNCTIONS, &n) && !n) ||
	    !(e = calloc(n, sizeof(*e)))) {
		free(starts);
		return 0;
	}
	for (k = 0; k < n; k++) {
		uint64_t end = k + 1 < n ? starts[k + 1] : text + size;

		if (starts[k] < text || end > text + size || end <= starts[k] ||
		    end - starts[k] > MAX_EMITTER)
			continue;
		if (!jw_arch_signal_emitter(code + (starts[k] - text), end - starts[k], starts[k],
					    stub, &e[found].slot))
			e[found++].at = starts[k];
	}
	free(starts);
	*out = e;
	return found;
}

int jw_gtk_find_phases(const char *gtk, uint64_t at[JW_GTK_PHASES])
{
	uint64_t text, size, stub;
	struct emitter *e = NULL;
	size_t n, i, j, runs = 0;
	uint8_t *code;
	int ret = -ENOENT;

	if (jw_elf_plt_stub(gtk, "g_signal_emit", &stub) || jw_elf_section(gtk, ".text", &text, &size) ||
	    size > (64u << 20) || !(code = malloc(size)))
		return -ENOENT;
	if (jw_file_read_at(gtk, text, code, size)) {
		free(code);
		return -ENOENT;
	}
	n = emitters(gtk, code, text, size, stub, &e);
	free(code);
	qsort(e, n, sizeof(*e), by_slot);
	/* Runs of consecutive ids' slots, each emitted by one function: exactly one of seven. */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && e[j].slot == e[j - 1].slot + 4 &&
				(j + 1 == n || e[j + 1].slot != e[j].slot);
		     j++)
			;
		if ((i && e[i - 1].slot == e[i].slot) || j - i != JW_GTK_PHASES)
			continue;
		if (runs++)
			break;
		for (size_t k = 0; k < JW_GTK_PHASES; k++)
			at[k] = e[i + k].at;
		ret = 0;
	}
	free(e);
	return runs == 1 ? ret : -ENOENT;
}

/* The phase functions as nested sites: the one that runs longest names the frame. */
static void add_phases(struct jw_preset *out, const char *gtk, const uint64_t at[JW_GTK_PHASES])
{
	struct jw_code_names *cn = &out->code_names;
	uint64_t start, end;
	size_t k;

	if (out->n_probes + JW_GTK_PHASES > JW_MAX_PRESET_PROBES)
		return;
	snprintf(cn->file, sizeof(cn->file), "%s", gtk);
	for (k = 0; k < JW_GTK_PHASES; k++)
		if (jw_elf_function_bounds(gtk, at[k], &start, &end) || start != at[k] ||
		    jw_elf_code_vaddr(gtk, at[k], &cn->names[k].lo) ||
		    jw_elf_code_vaddr(gtk, end - 1, &cn->names[k].hi))
			return;
	for (k = 0; k < JW_GTK_PHASES; k++) {
		struct jw_preset_probe *p = &out->probes[out->n_probes++];

		memset(p, 0, sizeof(*p));
		snprintf(p->path, sizeof(p->path), "%s", gtk);
		p->entry = phase_names[k];
		p->offset = at[k];
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
	uint64_t at[JW_GTK_PHASES];

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
