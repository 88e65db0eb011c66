// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "process/elfsym.h"
#include "loops/preset_looper.h"
#include "loops/sites.h"
#include "loops/sites_scan.h"

#define POLL_ONCE "_ZN7android6Looper8pollOnceEiPiS1_PPv"
#define POLL_INNER "_ZN7android6Looper9pollInnerEi"
#define REMOVE_ITEMS_AT "_ZN7android10VectorImpl13removeItemsAtEmm"
#define SIMPLE_HANDLE_EVENT "_ZN7android20SimpleLooperCallback11handleEventEiiPv"

struct looper_scan {
	const uint64_t *remove;
	uint64_t base;
	uint64_t remove_at;		/* the last removeItemsAt(0, 1) not followed by a call yet */
	struct jw_looper_sites *out;
};

static bool arg_is(const struct jw_arch_call *call, int i, int64_t v)
{
	return call->arg_known[i] && call->arg_imm[i] == v;
}

/*
 * pollInner, for each due message: copies its handler and message, removeAt(0) (VectorImpl's
 * removeItemsAt(0, 1), the envelope still first), then handler->handleMessage(message), a
 * virtual call; for each ready fd with a callback: callback->handleEvent(fd, events, data), the
 * other virtual call. Its other calls are direct.
 */
static int looper_call(const struct jw_arch_call *call, void *ctx)
{
	struct looper_scan *ls = ctx;
	struct jw_looper_sites *o = ls->out;
	uint64_t at = ls->base + call->at;

	if (!call->indirect) {
		if (jw_site_calls(ls->remove, ls->base + (uint64_t)call->target) &&
		    arg_is(call, 1, 0) && arg_is(call, 2, 1))
			ls->remove_at = at;
		return 0;
	}
	if (call->via_global)
		return 0;
	o->calls++;
	if (ls->remove_at && !o->message) {
		o->message = ls->remove_at;
		o->message_exit = at + call->len;
		o->message_arg = (int)jw_arch_arg_reg(0);
	} else if (!o->fd) {
		o->fd = at;
		o->fd_exit = at + call->len;
		o->fd_slot = call->via_reg >= 0 ? call->via_disp : JW_LOOPER_VTABLE_SLOT;
	}
	ls->remove_at = 0;
	return 0;
}

int jw_looper_find_sites(const uint8_t *code, size_t len, uint64_t base, const uint64_t remove[2],
			 struct jw_looper_sites *out)
{
	struct looper_scan ls = { .remove = remove, .base = base, .out = out };

	memset(out, 0, sizeof(*out));
	jw_arch_scan_calls(code, len, looper_call, &ls);
	return out->message && out->fd && out->calls == 2 ? 0 : -ENOENT;
}

static int first_direct(const struct jw_arch_call *call, void *ctx)
{
	int64_t *target = ctx;

	if (call->indirect)
		return 0;
	*target = call->target;
	return 1;
}

/*
 * pollInner's code: by its name where the library exports it (Debian's), else the function
 * pollOnce calls (Android's keeps it hidden), to where its unwind table says the next begins.
 */
static int poll_inner_code(const char *path, struct jw_site_code *c)
{
	struct jw_site_code once;
	uint64_t start, end;
	int64_t target = -1;

	if (!jw_site_read_code(path, POLL_INNER, c))
		return 0;
	if (jw_site_read_code(path, POLL_ONCE, &once))
		return -ENOENT;
	jw_arch_scan_calls(once.bytes, once.size, first_direct, &target);
	start = once.offset + (uint64_t)target;
	free(once.bytes);
	if (target < 0 || jw_elf_function_bounds(path, start, &start, &end) || end - start > 65536)
		return -ENOENT;
	return jw_site_read_range(path, start, end - start, c);
}

/* A site of @out's, in its library, hooked as @entry from @at to @exit: a task of its own. */
static struct jw_preset_probe *add_site(struct jw_preset *out, const char *entry, uint64_t at,
					uint64_t exit)
{
	struct jw_preset_probe *p = &out->probes[out->n_probes++];

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	p->entry = entry;
	p->offset = at;
	p->exit_offset = exit;
	p->exact = true;
	p->own_task = true;
	p->name_arg = true;
	p->chain.kind = JW_HANDLER_CODE;
	p->chain.flags = JW_CHAIN_CLASS | JW_CHAIN_DETAIL;
	p->chain.detail_bits = 32;
	return p;
}

/*
 * The message's site, at removeItemsAt(&mMessageEnvelopes, 0, 1) to handleMessage's return: its
 * envelope, the Vector's first, gives the handler's vtable (its class, the row's key), the
 * message's what and its due time.
 */
static void hook_messages(struct jw_preset *out, const struct jw_looper_sites *s)
{
	struct jw_preset_probe *p = add_site(out, JW_LOOPER_MESSAGE, s->message, s->message_exit);
	struct jw_reg_path vptr = {
		.reg = (uint32_t)s->message_arg, .n_offsets = 3,
		.offsets = { JW_LOOPER_VECTOR_STORAGE, JW_LOOPER_ENV_HANDLER, 0 },
	};

	p->chain.handler = vptr;
	p->chain.klass = vptr;
	p->chain.detail = (struct jw_reg_path){
		.reg = (uint32_t)s->message_arg, .n_offsets = 2,
		.offsets = { JW_LOOPER_VECTOR_STORAGE, JW_LOOPER_ENV_WHAT } };
	p->chain.due = (struct jw_reg_path){
		.reg = (uint32_t)s->message_arg, .n_offsets = 2,
		.offsets = { JW_LOOPER_VECTOR_STORAGE, JW_LOOPER_ENV_UPTIME } };
	p->chain.due_unit_ns = 1;
}

/*
 * The fd callback's site, callback->handleEvent(fd, events, data): the function it calls from
 * the callback's vtable, the class, the events.
 */
static void hook_fds(struct jw_preset *out, const struct jw_looper_sites *s)
{
	struct jw_preset_probe *p = add_site(out, JW_LOOPER_FD, s->fd, s->fd_exit);

	p->chain.handler = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 2,
						 .offsets = { 0, s->fd_slot } };
	p->chain.klass = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 1 };
	p->chain.detail = (struct jw_reg_path){ .reg = jw_arch_arg_reg(2) };
}

/*
 * SimpleLooperCallback::handleEvent(fd, events, data), nested in the fd's site: a plain
 * function's callback (addFd with a Looper_callbackFunc), named by that function. It jumps to it
 * (no call to hook): its entry renames the site's dispatch.
 */
static void hook_simple(struct jw_preset *out)
{
	struct jw_preset_probe *p = &out->probes[out->n_probes];
	uint64_t size;
	char err[512];

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", out->where);
	if (jw_elf_func_offset(p->path, SIMPLE_HANDLE_EVENT, &p->offset, &size, err, sizeof(err)))
		return;
	p->entry = JW_LOOPER_SIMPLE;
	p->per_callback = true;
	p->name_arg = true;
	p->callee = JW_COOKIE_CALLEE;
	p->chain.kind = JW_HANDLER_CODE;
	p->chain.handler = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 1,
						 .offsets = { JW_LOOPER_SIMPLE_CALLBACK } };
	p->chain.klass = (struct jw_reg_path){ .reg = jw_arch_arg_reg(0), .n_offsets = 1 };
	p->chain.detail = (struct jw_reg_path){ .reg = jw_arch_arg_reg(2) };
	p->chain.flags = JW_CHAIN_CLASS | JW_CHAIN_DETAIL;
	p->chain.detail_bits = 32;
	out->n_probes++;
}

bool jw_looper_hook(pid_t pid, const char *exe, struct jw_preset *out)
{
	struct jw_looper_sites s;
	struct jw_site_code c;
	uint64_t remove[2];
	int ret;

	(void)pid;
	(void)exe;
	out->n_probes = 0;
	jw_site_call_targets(out->where, REMOVE_ITEMS_AT, remove);
	if (poll_inner_code(out->where, &c)) {
		snprintf(out->detail, sizeof(out->detail), "pollInner's code not found");
		return true;
	}
	ret = jw_looper_find_sites(c.bytes, c.size, c.offset, remove, &s);
	free(c.bytes);
	if (ret) {
		snprintf(out->detail, sizeof(out->detail), "pollInner's calls of a message's and an "
			 "fd's handler not found (%zu virtual calls)", s.calls);
		return true;
	}
	hook_messages(out, &s);
	hook_fds(out, &s);
	hook_simple(out);
	return true;
}

void jw_looper_why(const struct jw_preset *p, const char *how, char *why, size_t len)
{
	if (!p->n_probes)
		snprintf(why, len, "%s: %s has android::Looper::pollOnce; %s: tasks bounded by the "
			 "waits, handlers named from the stacks", how, p->where,
			 p->detail[0] ? p->detail : "handler_sites=0");
	else
		snprintf(why, len, "%s: %s has android::Looper::pollOnce: each message and fd "
			 "callback a task, named by its handler's class and the message's what, or "
			 "the callback and the fd's events", how, p->where);
}
