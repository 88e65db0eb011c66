/* SPDX-License-Identifier: GPL-2.0-only */
/* This program's own GNU build-id, for --version: which build a report came from. */
#ifndef JW_BUILDID_H
#define JW_BUILDID_H

#include <stddef.h>

/*
 * Writes the running executable's GNU build-id (its NT_GNU_BUILD_ID note, as the linker wrote
 * it) as lowercase hex to @hex of @len bytes. Returns 0, or -ENOENT when it has none (linked
 * with --build-id=none), -ENOSPC when @len is too small.
 */
int jw_own_build_id(char *hex, size_t len);

#endif
