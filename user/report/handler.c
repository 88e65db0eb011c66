// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/demangle.h"
#include "base/text.h"
#include "loops/preset.h"
#include "loops/preset_looper.h"
#include "loops/presets.h"
#include "report/handler.h"
#include "report/loopnames.h"
#include "report/qtnames.h"
#include "report/stacktree.h"

const char *jw_handler_hooked(const struct jw_proc *p, uint32_t probe_id, uint32_t inner_probe,
			      char *buf, size_t len)
{
	const char *hooked = NULL;

	if (inner_probe && inner_probe <= JW_MAX_PROBES)
		hooked = p->handlers[inner_probe - 1];
	if (!hooked && probe_id < JW_MAX_PROBES)
		hooked = p->handlers[probe_id];
	if (!hooked)
		return "unknown";
	/* A C++ function given by its mangled name (--probe BIN:_ZN...). */
	return jw_demangle(hooked, buf, len) ? buf : hooked;
}

/* "name file:line" from what the kernel read, printable. */
static const char *read_name(const struct jw_handler_facts *f, char *buf, size_t len)
{
	size_t n;

	jw_printable_copy(buf, len, f->name, f->name_len);
	if (!f->file || !f->file_len || !f->file[0])
		return buf;
	n = strlen(buf);
	if (n + 2 >= len)
		return buf;
	buf[n++] = ' ';
	jw_printable_copy(buf + n, len - n, f->file, f->file_len);
	n = strlen(buf);
	snprintf(buf + n, len - n, ":%" PRIu32, f->line);
	return buf;
}

/*
 * Whether @s is UTF-8 without control characters: a name a program gave, not the bytes of memory
 * that held one once (a source destroyed after its dispatch, its description freed).
 */
static bool plausible_name(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int more = 0;

	for (; *p; p++) {
		if (more) {
			if ((*p & 0xc0) != 0x80)
				return false;
			more--;
		} else if (*p < 0x20 || *p == 0x7f) {
			return false;
		} else if (*p >= 0x80) {
			more = (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
			       (*p & 0xf8) == 0xf0 ? 3 : -1;
			if (more < 0)
				return false;
		}
	}
	return !more && s[0];
}

/* A Qt event's type is 16 bits; a slot object's function is an address. */
#define QT_EVENT_TYPES 0x10000

const char *jw_handler_class(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			     size_t len)
{
	struct jw_frame fr;
	char text[256];

	/* A C++ object's class: a Qt receiver's, a Looper handler's or callback's */
	if ((p->names == JW_NAMES_QT || p->names == JW_NAMES_LOOPER) && f->klass) {
		if (jw_qt_class_name(p->target.pid, f->klass, buf, len))
			return buf;
		/* Its memory gone: the vtable's symbol, where the program has one, names the class. */
		jw_symbolizer__frame(p->sym, f->klass, false, &fr);
		if (fr.symbol && !strncmp(fr.symbol, "vtable for ", 11)) {
			snprintf(buf, len, "%s", fr.symbol + 11);
			return buf;
		}
		return jw_frame_name(&fr, buf, len);
	}
	if (p->names == JW_NAMES_WAYLAND && f->klass &&
	    jw_wl_interface_name(p->target.pid, f->klass, text, sizeof(text))) {
		jw_printable_copy(buf, len, text, strlen(text));
		return buf;
	}
	/* sd-event: the source's description; a source without one, the function hooked */
	if (p->names == JW_NAMES_SDEVENT && f->klass &&
	    !jw_target_read_string(p->target.pid, f->klass, text, sizeof(text)) &&
	    plausible_name(text)) {
		jw_printable_copy(buf, len, text, strlen(text));
		return buf;
	}
	return jw_handler_hooked(p, f->probe_id, f->inner_probe, buf, len);
}

static const char *code_name(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			     size_t len);

/*
 * A Looper's task: a message by its what, as LooperStats names one ("0x2a"); an fd callback by
 * its function (the callback's handleEvent, or a SimpleLooperCallback's function) and events.
 */
static const char *looper_name(const struct jw_proc *p, const struct jw_handler_facts *f,
			       char *buf, size_t len)
{
	const char *site = f->inner_probe <= JW_MAX_PROBES ? p->handlers[f->inner_probe - 1] : NULL;
	/* The function as it is, module+offset when unnamed: not a stack's guess past it */
	struct jw_handler_facts code = *f;
	char name[512], events[128];

	if (site && !strcmp(site, JW_LOOPER_MESSAGE)) {
		snprintf(buf, len, "0x%" PRIx32, (uint32_t)f->detail);
		return buf;
	}
	code.from_stacks = NULL;
	snprintf(buf, len, "%s (%s)", code_name(p, &code, name, sizeof(name)),
		 jw_looper_events_name((uint32_t)f->detail, events, sizeof(events)));
	return buf;
}

const char *jw_handler_name(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			    size_t len)
{
	char name[512], mask[128];
	const char *base;

	if (p->names == JW_NAMES_WAYLAND && f->inner_probe && f->klass &&
	    jw_wl_request_name(p->target.pid, f->klass, f->detail, f->handler_addr, name,
			       sizeof(name))) {
		jw_printable_copy(buf, len, name, strlen(name));
		return buf;
	}
	if (p->names == JW_NAMES_LOOPER && f->inner_probe && f->klass)
		return looper_name(p, f, buf, len);
	if (p->names != JW_NAMES_EV || !f->inner_probe || !f->handler_addr)
		return code_name(p, f, buf, len);
	/* libev: the callback, and the events it ran for */
	base = code_name(p, f, name, sizeof(name));
	snprintf(buf, len, "%s (%s)", base, jw_ev_mask_name((uint32_t)f->detail, mask, sizeof(mask)));
	return buf;
}

/* The rule of handler.h, for a handler that is code (or named by the kernel, or Qt's). */
static const char *code_name(const struct jw_proc *p, const struct jw_handler_facts *f, char *buf,
			     size_t len)
{
	struct jw_frame fr;

	if (f->name && f->name_len && f->name[0])
		return read_name(f, buf, len);
	if (p->names == JW_NAMES_QT && f->klass && f->handler_addr < QT_EVENT_TYPES)
		return jw_qt_event_name((unsigned int)f->handler_addr, buf, len);
	if (p->names == JW_NAMES_QT && f->klass)
		return jw_qt_slot_name(p, f->klass, f->handler_addr, f->detail, buf, len);
	/* A site's callee may be a wrapper the stacks see past (node's C++ around the JS). */
	if (f->handler_addr && !p->handler_addr_is_data &&
	    !(f->from_stacks && p->handler_rule && p->handler_rule->jit)) {
		jw_symbolizer__frame(p->sym, f->handler_addr, false, &fr);
		if (fr.symbol)
			return fr.symbol;
		/* Unnamed code: its module and offset, as the stacks show it ("0x..." outside any). */
		if (!f->from_stacks)
			return jw_frame_name(&fr, buf, len);
	}
	if (f->from_stacks)
		return f->from_stacks;
	return jw_handler_hooked(p, f->probe_id, f->inner_probe, buf, len);
}

void jw_handler_tally_add(struct jw_handler_tally *t, const struct jw_stack_rule *rule,
			  const struct jw_frame *frames, size_t n, uint32_t count)
{
	int j = jw_stack_rule_handler(rule, frames, n);
	size_t k;

	if (j < 0)
		return;
	for (k = 0; k < t->n && t->name[k] != frames[j].symbol; k++)
		;
	if (k == t->n) {
		if (t->n == JW_HANDLER_TALLY_MAX)
			return;
		t->name[t->n] = frames[j].symbol;
		t->count[t->n++] = 0;
	}
	t->count[k] += count;
}

const char *jw_handler_tally_top(const struct jw_handler_tally *t)
{
	size_t k, best = 0;

	for (k = 1; k < t->n; k++)
		if (t->count[k] > t->count[best])
			best = k;
	return t->n ? t->name[best] : NULL;
}
