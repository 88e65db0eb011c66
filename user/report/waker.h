/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What ended a task's longest block, from the wakeup the kernel recorded (JW_WAKER_KNOWN): the
 * event's "waker" field and the stack log's waker stack.
 */
#ifndef JW_WAKER_H
#define JW_WAKER_H

#include <stddef.h>

#include "base/jsonbuf.h"
#include "jankwatch/abi.h"
#include "stacks/ksyms.h"

/*
 * "timer" or "irq" when an interrupt ended the block (seen in the waking context's kernel
 * stack, or the idle task was running), else the waking thread as "name:tid" in @buf (@len).
 * NULL when the task never slept. @ks may be NULL (then only the idle task says "irq").
 */
const char *jw_waker_describe(const struct jw_ksyms *ks, const struct jw_task_rec *t, char *buf,
			      size_t len);

/*
 * Appends the waking context's kernel stack to @b, leaf first, "<-"-joined, without the
 * tracepoint's and the BPF program's own frames.
 */
void jw_waker_stack(const struct jw_ksyms *ks, const struct jw_task_rec *t, struct jw_buf *b);

#endif
