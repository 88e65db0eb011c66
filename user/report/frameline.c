// SPDX-License-Identifier: GPL-2.0-only
/* One frame as the stack log writes it, and whose code it is (frameline.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/frameline.h"

/* snprintf() into a fixed buffer that keeps counting past its end, so callers learn the size. */
struct strbuf {
	char *p;
	size_t len;
	size_t pos;
};

static void sb_init(struct strbuf *sb, char *buf, size_t len)
{
	sb->p = buf;
	sb->len = len;
	sb->pos = 0;
	if (len)
		buf[0] = '\0';
}

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	size_t avail = sb->pos < sb->len ? sb->len - sb->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(avail ? sb->p + sb->pos : NULL, avail, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->pos += n;
}

/* A frame's name (jw_frame_name()) appended to @sb. */
static void frame_name_fmt(const struct jw_frame *fr, struct strbuf *sb)
{
	size_t avail = sb->pos < sb->len ? sb->len - sb->pos : 0;
	int n = jw_frame_name_n(fr, avail ? sb->p + sb->pos : NULL, avail);

	if (n > 0)
		sb->pos += n;
}

static void native_line_fmt(const struct jw_frame *fr, struct strbuf *sb)
{
	if (fr->module)
		sb_printf(sb, "pc %08" PRIx64 " %s", fr->rel_pc, fr->module);
	else
		sb_printf(sb, "pc %08" PRIx64 " [unknown]", fr->pc);
	if (fr->symbol)
		sb_printf(sb, "(%s+%" PRIu64 ")", fr->symbol, fr->sym_off);
	if (fr->build_id)
		sb_printf(sb, "(%s)", fr->build_id);
	/* The source line, where the module has line tables. */
	if (fr->src)
		sb_printf(sb, " %s", fr->src);
}

static void frame_line_fmt(const struct jw_frame *fr, uint64_t count, unsigned int depth,
			   struct strbuf *sb)
{
	sb_printf(sb, "%" PRIu64 " #%02u ", count, depth);
	switch (fr->kind) {
	case JW_FRAME_KERNEL:
		sb_printf(sb, "pc %016" PRIx64 " [kernel]", fr->pc);
		if (fr->symbol)
			sb_printf(sb, "(%s+0x%" PRIx64 ")", fr->symbol, fr->sym_off);
		break;
	case JW_FRAME_JIT:
	case JW_FRAME_PYTHON:
		sb_printf(sb, "at ");
		frame_name_fmt(fr, sb);
		if (fr->src)
			sb_printf(sb, " (%s)", fr->src);
		else
			sb_printf(sb, " [jit]");
		break;
	default:
		native_line_fmt(fr, sb);
		break;
	}
}

size_t jw_frame_line_n(const struct jw_frame *fr, uint64_t count, unsigned int depth, char *buf,
		       size_t len)
{
	struct strbuf sb;

	sb_init(&sb, buf, len);
	frame_line_fmt(fr, count, depth, &sb);
	return sb.pos;
}

char *jw_frame_line(const struct jw_frame *fr, uint64_t count, unsigned int depth, char *buf,
		    size_t len)
{
	jw_frame_line_n(fr, count, depth, buf, len);
	return buf;
}

/*
 * A shared object under the system's library directories: the distribution's, not the program's
 * (on Android the platform's and the vendor's: an app's own are under /data/app/).
 */
static bool distribution_library(const char *path, const char *base)
{
	static const char *const dirs[] = { "/lib/", "/lib32/", "/lib64/", "/usr/lib/",
					    "/usr/lib32/", "/usr/lib64/", "/system/", "/apex/",
					    "/vendor/" };
	size_t i;

	if (!strstr(base, ".so"))
		return false;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return true;
	return false;
}

enum jw_frame_owner jw_frame_owner(const struct jw_frame *fr)
{
	const char *base;

	if (fr->kind == JW_FRAME_KERNEL)
		return JW_OWNER_KERNEL;
	if (fr->kind == JW_FRAME_PYTHON)
		return JW_OWNER_PYTHON;
	if (fr->kind == JW_FRAME_JIT)
		return JW_OWNER_JIT;
	if (!fr->module)
		return JW_OWNER_UNKNOWN;	/* the vdso of a process we could not read, or junk */
	base = strrchr(fr->module, '/');
	base = base ? base + 1 : fr->module;
	/* glibc's, musl's (ld-musl-<arch>.so.1 is its libc.so) and bionic's C library and loader */
	if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	    !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-", 3) ||
	    !strcmp(base, "linker") || !strcmp(base, "linker64") ||
	    !strncmp(base, "linux-vdso", 10) || !strcmp(base, "[vdso]"))
		return JW_OWNER_LIBC;
	/* CPython's interpreter, in its executable or its library: the program is Python */
	if (!strncmp(base, "python", 6) || !strncmp(base, "libpython", 9))
		return JW_OWNER_INTERPRETER;
	return distribution_library(fr->module, base) ? JW_OWNER_LIBRARY : JW_OWNER_PROGRAM;
}

bool jw_frame_is_system(const struct jw_frame *fr)
{
	enum jw_frame_owner o = jw_frame_owner(fr);

	return o != JW_OWNER_PROGRAM && o != JW_OWNER_PYTHON && o != JW_OWNER_JIT;
}
