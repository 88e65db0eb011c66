// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonread.h"

#define MAX_DEPTH 64

struct reader {
	const char *p, *end;
	char *scratch;		/* unescaped strings, each at most as long as its text */
	size_t used;
};

static void blanks(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static bool take(struct reader *r, char c)
{
	blanks(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

static int hex4(struct reader *r, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	if (r->end - r->p < 4)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		char c = *r->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Code point @cp as UTF-8 at @dst; returns the bytes written. */
static size_t utf8(uint32_t cp, char *dst)
{
	if (cp < 0x80) {
		dst[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		dst[0] = (char)(0xc0 | cp >> 6);
		dst[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		dst[0] = (char)(0xe0 | cp >> 12);
		dst[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		dst[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	dst[0] = (char)(0xf0 | cp >> 18);
	dst[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	dst[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	dst[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A \u escape, its "\u" taken: a surrogate pair joined; a lone surrogate becomes U+FFFD. */
static int unicode_escape(struct reader *r, uint32_t *cp)
{
	uint32_t lo;

	if (hex4(r, cp))
		return -EINVAL;
	if (*cp < 0xd800 || *cp > 0xdfff)
		return 0;
	if (*cp <= 0xdbff && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
		r->p += 2;
		if (hex4(r, &lo))
			return -EINVAL;
		if (lo >= 0xdc00 && lo <= 0xdfff) {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
			return 0;
		}
	}
	*cp = 0xfffd;
	return 0;
}

/* A string, its opening quote taken, unescaped into the scratch; @out its start. */
static int string(struct reader *r, const char **out)
{
	char *dst = r->scratch + r->used;
	size_t n = 0;
	uint32_t cp;

	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p++;

		if (c < 0x20)
			return -EINVAL;
		if (c != '\\') {
			dst[n++] = (char)c;
			continue;
		}
		if (r->p >= r->end)
			return -EINVAL;
		switch (*r->p++) {
		case '"': dst[n++] = '"'; break;
		case '\\': dst[n++] = '\\'; break;
		case '/': dst[n++] = '/'; break;
		case 'b': dst[n++] = '\b'; break;
		case 'f': dst[n++] = '\f'; break;
		case 'n': dst[n++] = '\n'; break;
		case 'r': dst[n++] = '\r'; break;
		case 't': dst[n++] = '\t'; break;
		case 'u':
			if (unicode_escape(r, &cp))
				return -EINVAL;
			/* Six or twelve bytes of text make at most four. */
			n += utf8(cp, dst + n);
			break;
		default:
			return -EINVAL;
		}
	}
	if (r->p >= r->end)
		return -EINVAL;
	r->p++;
	dst[n] = '\0';
	r->used += n + 1;
	*out = dst;
	return 0;
}

static int number(struct reader *r, double *out)
{
	const char *start = r->p;
	char buf[64], *end;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p >= r->end || *r->p < '0' || *r->p > '9')
		return -EINVAL;
	while (r->p < r->end && ((*r->p >= '0' && *r->p <= '9') || *r->p == '.' || *r->p == 'e' ||
				 *r->p == 'E' || *r->p == '+' || *r->p == '-'))
		r->p++;
	if ((size_t)(r->p - start) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, start, r->p - start);
	buf[r->p - start] = '\0';
	*out = strtod(buf, &end);
	return *end ? -EINVAL : 0;
}

static bool word(struct reader *r, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n))
		return false;
	r->p += n;
	return true;
}

static int value(struct reader *r, struct jw_json_field *f, int depth);

/*
 * An array or object, its opening bracket taken: checked, its length counted; an array's strings
 * kept one after the other in the scratch while it holds nothing else (@items, else NULL).
 */
static int container(struct reader *r, bool object, size_t *n, const char **items, int depth)
{
	struct jw_json_field inner;
	size_t mark = r->used;
	bool strings = !object;
	const char *key;
	int ret;

	*n = 0;
	*items = NULL;
	if (depth > MAX_DEPTH)
		return -EINVAL;
	if (take(r, object ? '}' : ']'))
		return 0;
	do {
		if (object && (!take(r, '"') || string(r, &key) || !take(r, ':')))
			return -EINVAL;
		ret = value(r, &inner, depth + 1);
		if (ret)
			return ret;
		(*n)++;
		strings = strings && inner.type == JW_JSON_STR;
		if (!strings)
			r->used = mark;	/* nested values' strings are not kept */
	} while (take(r, ','));
	if (!take(r, object ? '}' : ']'))
		return -EINVAL;
	*items = strings ? r->scratch + mark : NULL;
	return 0;
}

static int value(struct reader *r, struct jw_json_field *f, int depth)
{
	blanks(r);
	if (r->p >= r->end)
		return -EINVAL;
	switch (*r->p) {
	case '"':
		r->p++;
		f->type = JW_JSON_STR;
		return string(r, &f->str);
	case '[':
		r->p++;
		f->type = JW_JSON_ARRAY;
		return container(r, false, &f->n_items, &f->items, depth);
	case '{':
		r->p++;
		f->type = JW_JSON_OBJECT;
		return container(r, true, &f->n_items, &f->items, depth);
	case 't':
	case 'f':
		f->type = JW_JSON_BOOL;
		f->b = *r->p == 't';
		return word(r, f->b ? "true" : "false") ? 0 : -EINVAL;
	case 'n':
		f->type = JW_JSON_NULL;
		return word(r, "null") ? 0 : -EINVAL;
	default:
		f->type = JW_JSON_NUM;
		return number(r, &f->num);
	}
}

int jw_json_fields(const char *text, size_t len,
		   int (*cb)(void *ctx, const struct jw_json_field *f), void *ctx)
{
	struct reader r = { .p = text, .end = text + len };
	struct jw_json_field f;
	int ret = 0;

	/* Unescaped strings never outgrow their text (+1 for each terminator). */
	r.scratch = malloc(len + 1);
	if (!r.scratch)
		return -ENOMEM;
	if (!take(&r, '{')) {
		ret = -EINVAL;
		goto out;
	}
	if (take(&r, '}'))
		goto end;
	do {
		size_t mark = r.used;

		memset(&f, 0, sizeof(f));
		if (!take(&r, '"') || string(&r, &f.key) || !take(&r, ':')) {
			ret = -EINVAL;
			goto out;
		}
		ret = value(&r, &f, 1);
		if (ret)
			goto out;
		ret = cb(ctx, &f);
		if (ret)
			goto out;
		r.used = mark;
	} while (take(&r, ','));
	if (!take(&r, '}'))
		ret = -EINVAL;
end:
	blanks(&r);
	if (!ret && r.p != r.end)
		ret = -EINVAL;
out:
	free(r.scratch);
	return ret;
}
