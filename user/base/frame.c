// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/frame.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

int jw_frame_name_n(const struct jw_frame *fr, char *buf, size_t len)
{
	if (fr->symbol)
		return snprintf(buf, len, "%s", fr->symbol);
	if (fr->kind == JW_FRAME_KERNEL)
		return snprintf(buf, len, "[kernel]+0x%" PRIx64, fr->pc);
	if (fr->kind != JW_FRAME_JIT && fr->module)
		return snprintf(buf, len, "%s+0x%" PRIx64, base_name(fr->module), fr->rel_pc);
	return snprintf(buf, len, "0x%" PRIx64, fr->pc);
}

char *jw_frame_name(const struct jw_frame *fr, char *buf, size_t len)
{
	jw_frame_name_n(fr, buf, len);
	return buf;
}
