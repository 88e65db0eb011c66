/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel addresses named from /proc/kallsyms. */
#ifndef JW_KSYMS_H
#define JW_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

struct jw_ksyms;

/* Loads @path (normally /proc/kallsyms). NULL with errno set on failure. */
struct jw_ksyms *jw_ksyms__load(const char *path);
void jw_ksyms__free(struct jw_ksyms *k);	/* NULL-safe */

/*
 * Builds a table from @n symbols (start address, name), as a raw capture records them: enough
 * to name the addresses they were recorded for. NULL with errno set.
 */
struct jw_ksyms *jw_ksyms__from_list(const uint64_t *addrs, const char *const *names, size_t n);

/*
 * Fills @fr for kernel address @pc (symbol NULL when unknown, or when the nearest symbol is too
 * far below to be the function: BPF programs and other code kallsyms does not list). @ks may be
 * NULL.
 */
void jw_ksyms__frame(const struct jw_ksyms *ks, uint64_t pc, struct jw_frame *fr);

/* Whether @pc is in the scheduler's own text (__sched_text_start.._end). */
bool jw_ksyms__in_sched(const struct jw_ksyms *ks, uint64_t pc);

/* The scheduler text's bounds (0, 0 when unknown), for a raw capture to carry. */
void jw_ksyms__sched_text(const struct jw_ksyms *ks, uint64_t *start, uint64_t *end);

#endif
