// SPDX-License-Identifier: GPL-2.0-only
/* The uprobes a dispatch probe or a wait function takes, placed (hookplan.h). */
#include <stdio.h>

#include "attach/hookplan.h"
#include "loops/placement.h"

const char *jw_hook_kind_name(enum jw_hook_kind kind)
{
	switch (kind) {
	case JW_HOOK_SESSION:
		return "uprobe session";
	case JW_HOOK_RETURN:
		return "return probe";
	default:
		return "uprobe";
	}
}

/* A hook at @offset of @path, moved past what would be single-stepped unless @exact. */
static void hook_at(struct jw_hook *h, enum jw_hook_kind kind, const char *path, const char *name,
		    uint64_t offset, bool args_read, bool exact)
{
	struct jw_placement place = { .skip = 0, .why = "a handler site: where it is" };

	if (!exact)
		jw_probe_place_file(path, offset, args_read, &place);
	*h = (struct jw_hook){ .kind = kind, .path = path, .name = name,
			       .offset = offset + place.skip };
	snprintf(h->why, sizeof(h->why), "%s", place.why);
}

size_t jw_hookplan_dispatch(bool session, const struct jw_dispatch_probe *p, struct jw_hook *out)
{
	bool args_read = p->name_chain != NULL;

	/* A return probe's place is its entry's: one session holds both. */
	if (session && !p->exit_offset && !p->site && !p->exact) {
		hook_at(&out[0], JW_HOOK_SESSION, p->path, p->entry_name, p->entry_offset, args_read,
			false);
		return 1;
	}
	/* The exit first: an entry seen without its exit would leave a task open. */
	if (p->exit_offset)
		hook_at(&out[0], JW_HOOK_EXIT, p->path, p->exit_name, p->exit_offset, false,
			p->exact);
	else
		hook_at(&out[0], JW_HOOK_RETURN, p->path, p->entry_name, p->entry_offset, args_read,
			false);
	hook_at(&out[1], JW_HOOK_ENTRY, p->path, p->entry_name, p->entry_offset, args_read,
		p->exact);
	return 2;
}

size_t jw_hookplan_wait(bool session, const char *path, const char *name, uint64_t offset,
			struct jw_hook *out)
{
	if (session) {
		hook_at(&out[0], JW_HOOK_SESSION, path, name, offset, false, false);
		return 1;
	}
	/* The entry, which ends a task, first; then the return, which begins one. */
	hook_at(&out[0], JW_HOOK_ENTRY, path, name, offset, false, false);
	hook_at(&out[1], JW_HOOK_RETURN, path, name, offset, false, false);
	return 2;
}
