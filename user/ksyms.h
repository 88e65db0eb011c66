/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel addresses named from /proc/kallsyms. */
#ifndef JW_KSYMS_H
#define JW_KSYMS_H

#include <stdint.h>

#include "frame.h"

struct jw_ksyms;

/* Loads @path (normally /proc/kallsyms). NULL with errno set on failure. */
struct jw_ksyms *jw_ksyms__load(const char *path);
void jw_ksyms__free(struct jw_ksyms *k);	/* NULL-safe */

/* Fills @fr for kernel address @pc (symbol NULL when unknown). @ks may be NULL. */
void jw_ksyms__frame(const struct jw_ksyms *ks, uint64_t pc, struct jw_frame *fr);

#endif
