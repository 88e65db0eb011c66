// SPDX-License-Identifier: GPL-2.0-only
/*
 * A perf map's text, parsed: its lines ("START SIZE name"), the parts of a JIT's name (V8's
 * code tag, the function, its source position), and the process's pid in its own namespace
 * (which names the map file). Pure functions: the unit tests and the fuzzer call them directly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/text.h"
#include "stacks/perfmap.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Parses a hex number, 0x optional, at *p (before @end), up to a blank; advances *p. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (s == end || is_blank(*s))
		return -EINVAL;
	for (; s < end && !is_blank(*s); s++) {
		d = jw_hex_digit(*s);
		if (d < 0 || v > (UINT64_MAX >> 4))
			return -EINVAL;
		v = v << 4 | d;
	}
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

int jw_perfmap_parse_line(const char *line, size_t len, struct jw_perfmap_line *out)
{
	const char *p = line, *end = line + len;

	p = skip_blanks(p, end);
	if (parse_hex(&p, end, &out->start))
		return -EINVAL;
	p = skip_blanks(p, end);
	if (parse_hex(&p, end, &out->size))
		return -EINVAL;
	if (!out->size || out->size > JW_PERFMAP_SIZE_MAX || out->start > UINT64_MAX - out->size)
		return -EINVAL;
	p = skip_blanks(p, end);
	while (end > p && is_blank(end[-1]))
		end--;
	if (p == end)
		return -EINVAL;
	out->name = p;
	out->name_len = end - p;
	return 0;
}

/* Length of a "Type:" prefix at @s: letters then ':' (V8's code tags), else 0. */
static size_t type_prefix_len(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
		i++;
	return i > 0 && i < len && s[i] == ':' ? i + 1 : 0;
}

/* Whether @s ends in ":DIGITS", optionally twice (":LINE:COL"), after at least one byte. */
static bool ends_with_position(const char *s, size_t len)
{
	size_t i = len, groups = 0;

	while (groups < 2) {
		size_t digits_end = i;

		while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
			i--;
		if (i == digits_end || i < 2 || s[i - 1] != ':')
			break;
		i--;
		groups++;
	}
	return groups > 0;
}

void jw_perfmap_split_name(const char *name, size_t len, struct jw_perfmap_name *out)
{
	size_t skip = type_prefix_len(name, len);
	const char *space;

	name += skip;
	len -= skip;
	/* V8's tier marks: optimized, interpreted, baseline (Sparkplug), Maglev. */
	if (len && *name && strchr("*~^+", *name)) {
		name++;
		len--;
	}
	out->func = name;
	out->func_len = len;
	out->src = NULL;
	out->src_len = 0;
	/* The source is the last word: function names may hold spaces ("get foo"), paths rarely. */
	space = memrchr(name, ' ', len);
	if (!space)
		return;
	if (!ends_with_position(space + 1, name + len - space - 1))
		return;
	out->src = space + 1;
	out->src_len = name + len - out->src;
	while (space > name && space[-1] == ' ')
		space--;
	out->func_len = space - name;
}

/* The rest of the line of /proc/PID/status that starts with @key, or NULL. */
static const char *status_field(const char *status, const char *key)
{
	size_t len = strlen(key);
	const char *line = status;

	while (line) {
		if (!strncmp(line, key, len))
			return line + len;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int jw_perfmap_parse_nspid(const char *status, pid_t *nspid)
{
	const char *p = status_field(status, "NSpid:"), *last = NULL;
	long v;

	if (!p)
		p = status_field(status, "Pid:");
	if (!p)
		return -EINVAL;
	/* The pid as each nested namespace sees it, outermost first: the target's own is last. */
	for (; *p && *p != '\n'; p++)
		if ((*p == ' ' || *p == '\t') && p[1] >= '0' && p[1] <= '9')
			last = p + 1;
	if (!last)
		return -EINVAL;
	v = strtol(last, NULL, 10);
	if (v <= 0 || v > INT32_MAX)
		return -EINVAL;
	*nspid = (pid_t)v;
	return 0;
}

