// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_qt.h"

#define NOTIFY "_ZN16QCoreApplication15notifyInternal2EP7QObjectP6QEvent"
#define PLACE_META_CALL "_ZN14QMetaCallEvent13placeMetaCallEP7QObject"
#define SLOT_CALLS "slot calls"
#define QT_CALL 1			/* QSlotObjectBase::Call */

struct slot_scan {
	const uint8_t *code;
	size_t len;
	uint64_t base;
	struct jw_preset_probe *site;
	size_t n, max, seen;
};

/*
 * "m_impl(Call, this, receiver, args, ret)": a call of the ImplFn read from 8 of the slot object,
 * a register the second argument is (or is a copy of), with 1 as the first.
 */
static int slot_call(const struct jw_arch_call *call, void *ctx)
{
	struct slot_scan *s = ctx;
	struct jw_preset_probe *p;
	size_t n, k;

	int obj = call->via_reg;

	if (!call->indirect || obj < 0 || call->via_disp != JW_QT_SLOT_IMPL ||
	    !call->arg_known[0] || call->arg_imm[0] != QT_CALL ||
	    (call->arg_copy[1] != obj && (unsigned int)obj != jw_arch_arg_reg(1)))
		return 0;
	s->seen++;
	if (s->n == s->max)
		return 0;
	p = &s->site[s->n++];
	memset(p, 0, sizeof(*p));
	p->entry = SLOT_CALLS;
	p->offset = s->base + call->at;
	p->exit_offset = s->base + call->at + call->len;
	/*
	 * The return site drops the slot object's reference with a locked instruction, which a
	 * uprobe cannot be put on: the exit is the instruction after it, which every path passes.
	 */
	n = call->at + call->len;
	if (n < s->len && jw_arch_unprobeable(s->code + n, s->len - n) &&
	    (k = jw_arch_insn_len(s->code + n, s->len - n)))
		p->exit_offset += k;
	p->exact = true;
	p->name_arg = true;
	p->callee = JW_COOKIE_CALLEE | (uint64_t)(obj + 1) << JW_CALLEE_REG_SHIFT |
		    JW_CALLEE_MEM | (uint64_t)(uint16_t)JW_QT_SLOT_IMPL << JW_CALLEE_DISP_SHIFT;
	p->chain.kind = JW_HANDLER_CODE;
	p->chain.handler = (struct jw_reg_path){ .reg = (uint32_t)obj, .n_offsets = 1,
						 .offsets = { JW_QT_SLOT_IMPL } };
	p->chain.detail = (struct jw_reg_path){ .reg = (uint32_t)obj, .n_offsets = 1,
						.offsets = { JW_QT_SLOT_FUNC } };
	p->chain.klass = (struct jw_reg_path){ .reg = jw_arch_arg_reg(2), .n_offsets = 1 };
	p->chain.flags = JW_CHAIN_CLASS | JW_CHAIN_DETAIL | JW_CHAIN_FIRST;
	return 0;
}

size_t jw_qt_slot_calls(const uint8_t *code, size_t len, uint64_t base, struct jw_preset_probe *site,
			size_t max)
{
	struct slot_scan s = { .code = code, .len = len, .base = base, .site = site, .max = max };

	jw_arch_scan_calls(code, len, slot_call, &s);
	return s.n;
}

/* The slot calls in @out->where's .text, added to its probes. */
static void hook_slot_calls(struct jw_preset *out)
{
	size_t room = JW_MAX_PRESET_PROBES - out->n_probes, n, k;
	uint64_t offset, size;
	uint8_t *code;

	if (jw_elf_section(out->where, ".text", &offset, &size) || !size || size > (256u << 20))
		return;
	code = malloc(size);
	if (!code)
		return;
	if (!jw_file_read_at(out->where, offset, code, size)) {
		n = jw_qt_slot_calls(code, size, offset, &out->probes[out->n_probes], room);
		for (k = 0; k < n; k++)
			snprintf(out->probes[out->n_probes + k].path,
				 sizeof(out->probes[0].path), "%s", out->where);
		out->n_probes += n;
	}
	free(code);
}

/*
 * A queued call's event, QMetaCallEvent::placeMetaCall(object): it jumps to its slot object's
 * function (a tail call: no call site to hook), so its entry names the slot, from the slot object
 * at the field its code loads (none for a call by method index: the event names the task).
 */
static void hook_place_meta_call(struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[out->n_probes];
	uint8_t code[256];
	uint64_t size;
	int32_t field;
	char err[512];

	if (out->n_probes >= JW_MAX_PRESET_PROBES)
		return;
	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	if (jw_elf_func_offset(p->path, PLACE_META_CALL, &p->offset, &size, err, sizeof(err)) ||
	    jw_file_read_at(p->path, p->offset, code, sizeof(code)) ||
	    jw_arch_derive_member_call(code, size && size < sizeof(code) ? size : sizeof(code),
				       JW_QT_SLOT_IMPL, &field))
		return;
	p->entry = PLACE_META_CALL;
	p->name_arg = true;
	p->per_callback = true;
	/* Nested in the event's dispatch: a renaming site whose chain says (no callee of its own). */
	p->callee = JW_COOKIE_CALLEE;
	p->chain.kind = JW_HANDLER_CODE;
	p->chain.handler = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 2,
						 .offsets = { field, JW_QT_SLOT_IMPL } };
	p->chain.detail = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 2,
						.offsets = { field, JW_QT_SLOT_FUNC } };
	p->chain.klass = (struct jw_reg_path){ .reg = jw_arch_arg_reg(1), .n_offsets = 1 };
	p->chain.flags = JW_CHAIN_CLASS | JW_CHAIN_DETAIL | JW_CHAIN_FIRST;
	out->n_probes++;
}

bool jw_qt_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[0];
	const char *base = strrchr(out->where, '/');
	uint64_t size;
	char err[512];

	(void)pid;
	(void)exe;
	base = base ? base + 1 : out->where;
	out->version = strstr(base, "Qt6") ? 6 : 5;
	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = NOTIFY;
	if (jw_elf_func_offset(p->path, NOTIFY, &p->offset, &size, err, sizeof(err)))
		return false;
	p->name_arg = true;
	p->per_callback = true;
	p->chain.kind = JW_HANDLER_CODE;
	/* notifyInternal2(QObject *receiver, QEvent *event): the event's type, the receiver's class */
	p->chain.handler = (struct jw_reg_path){
		.reg = jw_arch_arg_reg(1), .n_offsets = 1,
		.offsets = { out->version == 6 ? JW_QT6_EVENT_TYPE : JW_QT5_EVENT_TYPE } };
	p->chain.handler_bits = 16;
	p->chain.klass = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 1 };
	p->chain.flags = JW_CHAIN_CLASS;
	out->n_probes = 1;
	hook_place_meta_call(out);
	hook_slot_calls(out);
	return true;
}

void jw_qt_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	size_t slots = p->n_probes ? p->n_probes - 1 : 0;

	if (!p->n_probes) {
		snprintf(why, len, "%s: %s has QCoreApplication::notifyInternal2 (Qt %d); "
			 "handler_sites=0: handlers named from the stacks", how, p->where,
			 p->version);
		return;
	}
	snprintf(why, len, "%s: %s has QCoreApplication::notifyInternal2 (Qt %d): handlers named by "
		 "the receiver's class and the event's type%s", how, p->where, p->version,
		 slots ? ", and by the slot where an event calls one" :
			 "; no slot object call found: slots named from the stacks");
}
