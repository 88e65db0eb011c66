// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/csvread.h"

struct record {
	char **fields;
	size_t n, cap;
};

static int field_add(struct record *r, char *start)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		char **v = realloc(r->fields, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->fields = v;
		r->cap = cap;
	}
	r->fields[r->n++] = start;
	return 0;
}

int jw_csv_records(const char *text, size_t len,
		   int (*cb)(void *ctx, char **fields, size_t n), void *ctx)
{
	struct record r = { 0 };
	const char *p = text, *end = text + len;
	char *buf, *out, *start;
	bool quoted, blank;
	int ret = 0;

	/* The unquoted fields never outgrow their text (+1 for each terminator). */
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	while (!ret && p < end) {
		r.n = 0;
		out = buf;
		blank = true;
		for (;;) {
			start = out;
			quoted = p < end && *p == '"';
			if (quoted) {
				for (p++;; p++) {
					if (p >= end) {
						ret = -EINVAL;
						goto out;
					}
					if (*p == '"' && (p + 1 >= end || p[1] != '"'))
						break;
					if (*p == '"')
						p++;
					*out++ = *p;
				}
				p++;
				if (p < end && *p != ',' && *p != '\n' && *p != '\r') {
					ret = -EINVAL;
					goto out;
				}
			} else {
				while (p < end && *p != ',' && *p != '\n' && *p != '\r')
					*out++ = *p++;
			}
			*out++ = '\0';
			blank = blank && !quoted && !*start && (p >= end || *p != ',');
			ret = field_add(&r, start);
			if (ret || p >= end || *p != ',')
				break;
			p++;
		}
		if (ret)
			break;
		if (p < end && *p == '\r')
			p++;
		if (p < end && *p == '\n')
			p++;
		if (!blank)
			ret = cb(ctx, r.fields, r.n);
	}
out:
	free(r.fields);
	free(buf);
	return ret;
}
