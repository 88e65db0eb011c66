// SPDX-License-Identifier: GPL-2.0-only
/* Where a uprobe on a function's entry costs least: past what would be single-stepped. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "loops/placement.h"

#define CODE_BYTES 64	/* enough for the instructions passed and the one after */
#define MAX_SKIPPED 4
#define MAX_SKIPPED_RETURN 8

enum place_for {
	AT_ENTRY,		/* a function's entry, its arguments unread */
	AT_ENTRY_ARGS,		/* ... read */
	AT_RETURN,		/* a return site: only the stack pointer matters */
};

/* Whether the probe may go past @in: it changes nothing the probe or the function needs. */
static bool passable(const struct jw_arch_insn *in, enum place_for at)
{
	if (at == AT_RETURN)
		return in->kind == JW_INSN_SKIPPABLE || in->kind == JW_INSN_STORES;
	return in->kind == JW_INSN_SKIPPABLE && !(in->writes_arg && at == AT_ENTRY_ARGS);
}

static void place(const uint8_t *code, size_t len, enum place_for at, struct jw_placement *out)
{
	bool args_read = at == AT_ENTRY_ARGS;
	struct jw_arch_insn first, in;
	size_t off = 0;
	int n;

	memset(out, 0, sizeof(*out));
	jw_arch_decode_entry(code, len, &first);
	if (first.kind == JW_INSN_EMULATED) {
		out->emulated = true;
		snprintf(out->why, sizeof(out->why), "on the entry: %s is emulated", first.text);
		return;
	}
	in = first;
	for (n = 0; n < (at == AT_RETURN ? MAX_SKIPPED_RETURN : MAX_SKIPPED) && passable(&in, at);
	     n++) {
		off += in.len;
		jw_arch_decode_entry(code + off, len - off, &in);
	}
	if (off && in.kind == JW_INSN_EMULATED && in.jumps &&
	    (int64_t)off + (int64_t)in.len + in.rel >= 0 &&
	    (int64_t)off + (int64_t)in.len + in.rel <= (int64_t)off) {
		/* A loop back over the probe would hit it again in the same call. */
		snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped, and the "
			 "%s after it jumps back to the entry", first.text, in.text);
		return;
	}
	if (off && in.kind == JW_INSN_EMULATED) {
		out->skip = off;
		out->emulated = true;
		snprintf(out->why, sizeof(out->why), "+%zu: past %s%s to %s, which is emulated "
			 "(%s is single-stepped)", off, first.text, n > 1 ? " and what follows" : "",
			 in.text, first.text);
		return;
	}
	if (in.kind == JW_INSN_SKIPPABLE && in.writes_arg && args_read) {
		if (off)
			snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped, and "
				 "%s after it writes an argument register the probe reads",
				 first.text, in.text);
		else
			snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped; it "
				 "writes an argument register the probe reads", first.text);
		return;
	}
	snprintf(out->why, sizeof(out->why), "on the entry: %s is single-stepped, and no emulated "
		 "instruction follows what can be passed", first.text);
}

void jw_probe_place(const uint8_t *code, size_t len, bool args_read, struct jw_placement *out)
{
	place(code, len, args_read ? AT_ENTRY_ARGS : AT_ENTRY, out);
}

void jw_probe_place_return(const uint8_t *code, size_t len, struct jw_placement *out)
{
	place(code, len, AT_RETURN, out);
}

static int place_file(const char *path, uint64_t offset, enum place_for at,
		      struct jw_placement *out)
{
	uint8_t code[CODE_BYTES];
	ssize_t n = -1;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, code, sizeof(code), (off_t)offset);
		if (n < 0)
			ret = -errno;
		close(fd);
	} else {
		ret = -errno;
	}
	place(code, n > 0 ? (size_t)n : 0, at, out);
	return ret;
}

int jw_probe_place_file(const char *path, uint64_t offset, bool args_read,
			struct jw_placement *out)
{
	return place_file(path, offset, args_read ? AT_ENTRY_ARGS : AT_ENTRY, out);
}

int jw_probe_place_return_file(const char *path, uint64_t offset, struct jw_placement *out)
{
	return place_file(path, offset, AT_RETURN, out);
}
