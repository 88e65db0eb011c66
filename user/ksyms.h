/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel addresses named from /proc/kallsyms. */
#ifndef JW_KSYMS_H
#define JW_KSYMS_H

#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

struct jw_ksyms;

/* Loads @path (normally /proc/kallsyms). NULL with errno set on failure. */
struct jw_ksyms *jw_ksyms__load(const char *path);
void jw_ksyms__free(struct jw_ksyms *k);	/* NULL-safe */

/*
 * Fills @fr for kernel address @pc (symbol NULL when unknown, or when the nearest symbol is too
 * far below to be the function: BPF programs and other code kallsyms does not list). @ks may be
 * NULL.
 */
void jw_ksyms__frame(const struct jw_ksyms *ks, uint64_t pc, struct jw_frame *fr);

/* Whether @pc is in the scheduler's own text (__sched_text_start.._end). */
bool jw_ksyms__in_sched(const struct jw_ksyms *ks, uint64_t pc);

#endif
