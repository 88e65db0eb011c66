/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * android: AOSP's native Looper (libutils.so: Android's own, or Debian's android-libutils).
 * android::Looper::pollInner() dispatches each due message to its MessageHandler and each ready
 * fd to its LooperCallback; each is a task of its own, found where pollInner calls it, and named
 * by its handler's class (its vtable's RTTI, which survives strip) and the message's what, or
 * the callback and the fd's events (a SimpleLooperCallback by the function it holds). The
 * message's due time (its envelope's uptime) gives its delay. What runs between pollOnce's
 * return and its next call (a Java main thread's message) is a task of the waits.
 */
#ifndef JW_PRESET_LOOPER_H
#define JW_PRESET_LOOPER_H

#include <stddef.h>
#include <stdint.h>

#include "loops/preset.h"

/*
 * The layouts the sites read, from libutils' headers (utils/Looper.h, utils/VectorImpl.h; 64-bit,
 * the same from AOSP 4 to 15): a Vector's storage after its vtable, and a MessageEnvelope's
 * uptime (ns of CLOCK_MONOTONIC), handler (an sp<>: its pointer) and message (its what, an int).
 */
#define JW_LOOPER_VECTOR_STORAGE 8
#define JW_LOOPER_ENV_UPTIME 0
#define JW_LOOPER_ENV_HANDLER 8
#define JW_LOOPER_ENV_WHAT 16
#define JW_LOOPER_SIMPLE_CALLBACK 8	/* SimpleLooperCallback: mCallback, after its vtable */
/*
 * handleMessage's and handleEvent's place in their classes' vtables (after the destructor's two
 * entries), where the call's code does not say it (arm64: "ldr x8, [x8, #16]; blr x8")
 */
#define JW_LOOPER_VTABLE_SLOT 16

/* What its probes are hooked as, the names the writers tell them apart by (report/handler.c). */
#define JW_LOOPER_MESSAGE "android::MessageHandler::handleMessage"
#define JW_LOOPER_FD "android::LooperCallback::handleEvent"
#define JW_LOOPER_SIMPLE "android::SimpleLooperCallback::handleEvent"

/* The sites found in pollInner's code (@len bytes at file offset @base): 0 when not found. */
struct jw_looper_sites {
	uint64_t message;		/* the removeItemsAt(0, 1) call that takes the message */
	uint64_t message_exit;		/* the return site of its handleMessage call */
	int message_arg;		/* the register of the envelopes' Vector at the first */
	uint64_t fd;			/* the handleEvent call */
	uint64_t fd_exit;
	int32_t fd_slot;		/* handleEvent's place in the callback's vtable */
	size_t calls;			/* virtual calls seen, for the message when not 2 */
};

/*
 * Finds the sites in @code: @remove[2] is removeItemsAt (the function and its PLT stub, as file
 * offsets). 0, or -ENOENT.
 */
int jw_looper_find_sites(const uint8_t *code, size_t len, uint64_t base, const uint64_t remove[2],
			 struct jw_looper_sites *out);

/* Hooks the sites of the Looper in @out->where, and SimpleLooperCallback's function. */
bool jw_looper_hook(pid_t pid, const char *exe, struct jw_preset *out);

/* Why it is android, for the log line. */
void jw_looper_why(const struct jw_preset *p, const char *how, char *why, size_t len);

#endif
