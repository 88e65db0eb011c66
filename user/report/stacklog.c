// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stack log read back: each tree line (as frame_line_fmt() of stacktree.c writes it) or each
 * folded line's frames, named and owned as the writer's jw_frame_name() and jw_frame_owner()
 * gave them, by rebuilding the frame from the line's parts.
 *
 * A native line is "pc HEX MODULE(SYM+OFF)(BUILDID) SRC", each of the last three optional. A
 * module path may hold spaces and parentheses, a C++ symbol parentheses, spaces and '+', a src
 * spaces; a src always ends in ":LINE", a build-id is hex: the symbol's group is the first ')'
 * after a "+OFF" that a build-id, a src or the line's end follows, and opens at its balanced '('
 * (see native_split()). Every line is read in time linear in its length.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/text.h"
#include "report/stacklog.h"

#define TRUNCATED_NAME "[truncated]"
#define KERNEL_WHERE "[kernel]"
#define UNKNOWN_MODULE "[unknown]"
#define JIT_MARK " [jit]"

/* A piece of the line, not NUL-terminated. */
struct span {
	const char *p;
	size_t len;
};

/* The caller's buffer, strings placed one after the other. */
struct arena {
	char *p;
	size_t len;
	size_t pos;
};

/* A copy of @s in @a, NUL-terminated; NULL when @a is full. */
static const char *arena_put(struct arena *a, struct span s)
{
	char *d;

	if (a->len - a->pos < s.len + 1)
		return NULL;
	d = a->p + a->pos;
	memcpy(d, s.p, s.len);
	d[s.len] = '\0';
	a->pos += s.len + 1;
	return d;
}

/* @fr's jw_frame_name() in @a; NULL when @a is full. */
static const char *arena_name(struct arena *a, const struct jw_frame *fr)
{
	size_t avail = a->len - a->pos;
	char *d = a->p + a->pos;
	int n = jw_frame_name_n(fr, avail ? d : NULL, avail);

	if (n < 0 || (size_t)n >= avail)
		return NULL;
	a->pos += n + 1;
	return d;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads decimal digits at @p (before @end) into *@v; returns the byte after them, or NULL. */
static const char *parse_dec(const char *p, const char *end, uint64_t *v)
{
	const char *start = p;
	uint64_t x = 0;

	for (; p < end && is_digit(*p); p++) {
		if (x > (UINT64_MAX - (*p - '0')) / 10)
			return NULL;
		x = x * 10 + (*p - '0');
	}
	*v = x;
	return p > start ? p : NULL;
}

/* Reads 1 to 16 hex digits at @p into *@v; returns the byte after them, or NULL. */
static const char *parse_hex(const char *p, const char *end, uint64_t *v)
{
	const char *start = p;
	uint64_t x = 0;

	for (; p < end && jw_hex_digit(*p) >= 0; p++) {
		if (p - start == 16)
			return NULL;
		x = x << 4 | jw_hex_digit(*p);
	}
	*v = x;
	return p > start ? p : NULL;
}

/* Whether [@p, @end) is all decimal digits, at least one, that fit a uint64_t. */
static bool all_dec(const char *p, const char *end, uint64_t *v)
{
	return parse_dec(p, end, v) == end;
}

static bool starts_with(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && !memcmp(p, prefix, n);
}

static bool ends_with(const char *p, const char *end, const char *suffix)
{
	size_t n = strlen(suffix);

	return (size_t)(end - p) >= n && !memcmp(end - n, suffix, n);
}

/* The '(' that opens the ')' at @close, parentheses nested; NULL when none from @start. */
static const char *paren_open(const char *start, const char *close)
{
	unsigned long depth = 0;
	const char *p;

	for (p = close + 1; p-- > start;) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && !--depth)
			return p;
	}
	return NULL;
}

/*
 * The end of @s once up to @max ":DIGITS" groups are taken off its end ("app.js:10:18" ->
 * "app.js"); a group is taken only when something is left before it.
 */
static const char *position_strip(const char *p, const char *end, unsigned int max)
{
	const char *q;

	while (max--) {
		for (q = end; q > p && is_digit(q[-1]); q--)
			;
		if (q == end || q - p < 2 || q[-1] != ':')
			break;
		end = q - 1;
	}
	return end;
}

/* The parts after a native frame's module. */
struct native_tail {
	struct span sym;	/* .p NULL: no symbol */
	uint64_t sym_off;
	struct span src;	/* .p NULL: no source line */
};

/*
 * The ':' of the "FILE:LINE" a native frame's source line ends the line with, or NULL: a src
 * can start at @s when @s is before it. Found once a line, so that trying every split is linear.
 */
static const char *src_colon(const char *p, const char *end)
{
	const char *q = end;

	while (q > p && is_digit(q[-1]))
		q--;
	return q < end && q > p && q[-1] == ':' ? q - 1 : NULL;
}

/* The '+' of the "+OFF)" that ends a symbol's group at @close, its offset in *@off; or NULL. */
static const char *sym_end(const char *p, const char *close, uint64_t *off)
{
	const char *q = close;

	while (q > p && is_digit(q[-1]))
		q--;
	/* A module byte, '(' and a symbol byte before the '+' */
	if (q == close || q - p < 4 || q[-1] != '+' || !all_dec(q, close, off))
		return NULL;
	return q - 1;
}

/* Whether [@p, @end) reads as "(BUILDID) SRC", each part optional; the src into @t. */
static bool rest_parse(const char *p, const char *end, const char *colon,
		       struct native_tail *t)
{
	const char *q;

	t->src.p = NULL;
	t->src.len = 0;
	if (p < end && *p == '(') {
		for (q = p + 1; q < end && jw_hex_digit(*q) >= 0; q++)
			;
		if (q == p + 1 || q == end || *q != ')')
			return false;
		p = q + 1;
	}
	if (p == end)
		return true;
	if (*p != ' ' || !colon || colon <= p + 1)
		return false;
	t->src.p = p + 1;
	t->src.len = end - t->src.p;
	return true;
}

/*
 * Splits "MODULE(SYM+OFF)(BUILDID) SRC" (@p: the module's first byte) at the module's end, into
 * *@module_end and @t. The symbol's group ends at the first ')' after a "+OFF" that the rest
 * follows, and opens at its balanced '(' (else, a symbol with a stray parenthesis, at the first
 * '(' after the module's first byte); with no symbol, the module ends at the first '(' of a
 * build-id the rest follows; with neither, at the last space before a src.
 */
static bool native_split(const char *p, const char *end, const char **module_end,
			 struct native_tail *t)
{
	const char *colon = src_colon(p, end), *q, *plus, *open;

	memset(t, 0, sizeof(*t));
	for (q = p + 1; q < end; q++) {
		if (*q != ')')
			continue;
		plus = sym_end(p, q, &t->sym_off);
		if (!plus || !rest_parse(q + 1, end, colon, t))
			continue;
		open = paren_open(p + 1, q);
		if (!open || open >= plus - 1)
			open = memchr(p + 1, '(', plus - 1 - (p + 1));
		if (!open)
			break;
		t->sym.p = open + 1;
		t->sym.len = plus - t->sym.p;
		*module_end = open;
		return true;
	}
	for (q = p + 1; q < end; q++) {
		if (*q == '(' && rest_parse(q, end, colon, t)) {
			*module_end = q;
			return true;
		}
	}
	for (q = end; q-- > p + 1;) {
		if (*q == ' ' && colon && colon > q + 1)
			break;
	}
	*module_end = q > p ? q : end;
	return rest_parse(*module_end, end, colon, t);
}

/* Fills @out from @jf, its name by jw_frame_name(); -ERANGE when @a is full. */
static int frame_out(struct arena *a, const struct jw_frame *jf, const char *where,
		     struct jw_stacklog_frame *out)
{
	out->name = arena_name(a, jf);
	if (!out->name)
		return -ERANGE;
	out->where = where;
	out->owner = jw_frame_owner(jf);
	return 0;
}

/* "[kernel]" or "[kernel](SYM+0xOFF)" at @p. */
static int kernel_frame(const char *p, const char *end, uint64_t pc, struct arena *a,
			struct jw_stacklog_frame *out)
{
	struct jw_frame jf = { .kind = JW_FRAME_KERNEL, .pc = pc, .module = KERNEL_WHERE };
	const char *close = end - 1, *plus;

	p += strlen(KERNEL_WHERE);
	if (p < end) {
		if (*p != '(' || *close != ')')
			return -EINVAL;
		for (plus = close - 3; plus > p + 1 && !starts_with(plus, close, "+0x"); plus--)
			;
		if (plus <= p + 1 || parse_hex(plus + 3, close, &jf.sym_off) != close)
			return -EINVAL;
		jf.symbol = arena_put(a, (struct span){ p + 1, plus - p - 1 });
		if (!jf.symbol)
			return -ERANGE;
	}
	return frame_out(a, &jf, KERNEL_WHERE, out);
}

/* A native frame after "pc HEX ": in a module, or "[unknown]" (in none). */
static int native_frame(const char *p, const char *end, uint64_t pc, struct arena *a,
			struct jw_stacklog_frame *out)
{
	struct jw_frame jf = { .kind = JW_FRAME_NATIVE, .pc = pc };
	bool unknown = starts_with(p, end, UNKNOWN_MODULE);
	const char *module_end, *where = "";
	struct native_tail t;

	if (!native_split(p, end, &module_end, &t))
		return -EINVAL;
	if (unknown && module_end != p + strlen(UNKNOWN_MODULE))
		return -EINVAL;
	if (!unknown) {
		where = arena_put(a, (struct span){ p, module_end - p });
		if (!where)
			return -ERANGE;
		jf.module = where;
		jf.rel_pc = pc;
	}
	if (t.sym.p) {
		jf.symbol = arena_put(a, t.sym);
		if (!jf.symbol)
			return -ERANGE;
		jf.sym_off = t.sym_off;
	}
	return frame_out(a, &jf, where, out);
}

/* "pc HEX ..." at @p: the truncated root, a kernel or a native frame. */
static int pc_frame(const char *p, const char *end, struct arena *a,
		    struct jw_stacklog_frame *out)
{
	uint64_t pc;

	p = parse_hex(p, end, &pc);
	if (!p || p == end || *p++ != ' ' || p == end)
		return -EINVAL;
	if ((size_t)(end - p) == strlen(TRUNCATED_NAME) && starts_with(p, end, TRUNCATED_NAME)) {
		out->name = TRUNCATED_NAME;
		out->where = "";
		out->owner = JW_OWNER_COUNT;
		return 0;
	}
	if (starts_with(p, end, KERNEL_WHERE))
		return kernel_frame(p, end, pc, a, out);
	return native_frame(p, end, pc, a, out);
}

/* A CPython frame's file: a .py (.pyw) file, or a pseudo-file ("<frozen ...>", "<string>"). */
static bool python_file(const char *p, const char *end)
{
	if (ends_with(p, end, ".py") || ends_with(p, end, ".pyw"))
		return true;
	return end - p >= 2 && *p == '<' && end[-1] == '>';
}

/* "at NAME (SRC)" or "at NAME [jit]" after "at ": a Python or a JIT frame. */
static int at_frame(const char *p, const char *end, struct arena *a,
		    struct jw_stacklog_frame *out)
{
	struct jw_frame jf = { .kind = JW_FRAME_JIT };
	struct span name = { p, 0 }, src = { NULL, 0 };
	const char *open, *file_end, *where = "";

	if (ends_with(p, end, JIT_MARK)) {
		name.len = end - strlen(JIT_MARK) - p;
	} else {
		if (end - p < 4 || end[-1] != ')')
			return -EINVAL;
		/* The src's parentheses, balanced; else the last " (". */
		open = paren_open(p, end - 1);
		if (!open || open - p < 2 || open[-1] != ' ') {
			for (open = end - 2; open > p + 1 && !(open[0] == '(' && open[-1] == ' ');)
				open--;
			if (open <= p + 1)
				return -EINVAL;
		}
		name.len = open - 1 - p;
		src.p = open + 1;
		src.len = end - 1 - src.p;
		if (!src.len)
			return -EINVAL;
	}
	if (!name.len)
		return -EINVAL;
	if (src.p) {
		file_end = position_strip(src.p, src.p + src.len, 1);
		if (python_file(src.p, file_end))
			jf.kind = JW_FRAME_PYTHON;
		else
			file_end = position_strip(src.p, src.p + src.len, 2);
		where = arena_put(a, (struct span){ src.p, file_end - src.p });
		if (!where)
			return -ERANGE;
		jf.module = where;
	}
	jf.symbol = arena_put(a, name);
	if (!jf.symbol)
		return -ERANGE;
	return frame_out(a, &jf, where, out);
}

int jw_stacklog_parse_line(const char *line, struct jw_stacklog_frame *fr, char *buf, size_t len)
{
	struct arena a = { buf, len, 0 };
	const char *p = line, *end;
	uint64_t count, depth;

	while (*p == ' ')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	/* "<count> #<depth> " */
	p = parse_dec(p, end, &count);
	if (!p || !starts_with(p, end, " #"))
		return -EINVAL;
	p = parse_dec(p + 2, end, &depth);
	if (!p || depth > UINT_MAX || !starts_with(p, end, " "))
		return -EINVAL;
	memset(fr, 0, sizeof(*fr));
	fr->depth = depth;
	fr->count = count;
	p++;
	if (starts_with(p, end, "pc "))
		return pc_frame(p + 3, end, &a, fr);
	if (starts_with(p, end, "at "))
		return at_frame(p + 3, end, &a, fr);
	return -EINVAL;
}

/* A header line: "key: value" (or "key:"), the key a word. */
static bool header_line(const char *s)
{
	const char *p = s;

	while (*p == '_' || is_digit(*p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
		p++;
	return p > s && *p == ':' && (p[1] == ' ' || !p[1]);
}

/* What the body of the log is made of: the first frame line says. */
enum body_kind {
	BODY_UNKNOWN,
	BODY_TREE,
	BODY_FOLDED,
};

struct read_state {
	jw_stacklog_fn fn;
	void *ctx;
	enum body_kind body;
	bool seen;		/* a tree line was read: last_depth is its depth */
	unsigned int last_depth;
	uint64_t total;
	char *buf;		/* the frames' strings */
	size_t buf_len;
};

/* One tree line's frame: -EINVAL when its depth jumps; else @fn's. */
static int tree_frame(struct read_state *st, const struct jw_stacklog_frame *fr)
{
	if (fr->depth > (st->seen ? st->last_depth + 1 : 0))
		return -EINVAL;
	st->seen = true;
	st->last_depth = fr->depth;
	if (!fr->depth)
		st->total += fr->count;
	return st->fn(fr, st->ctx);
}

/* One "root;...;leaf N" line (@len bytes): each frame, root first; -EINVAL when it is none. */
static int folded_line(struct read_state *st, const char *line, size_t len)
{
	struct jw_stacklog_frame fr = { .where = "" };
	const char *space = memrchr(line, ' ', len);
	char *p, *semi;
	uint64_t n;
	int err;

	if (!space || space == line || !all_dec(space + 1, line + len, &n))
		return -EINVAL;
	memcpy(st->buf, line, space - line);
	st->buf[space - line] = '\0';
	/* Checked whole before the first call, so a damaged line gives no frame. */
	for (p = st->buf;; p = semi + 1) {
		semi = strchr(p, ';');
		if (semi == p || !*p)
			return -EINVAL;
		if (!semi)
			break;
	}
	st->total += n;
	fr.count = n;
	for (p = st->buf; p; p = semi ? semi + 1 : NULL, fr.depth++) {
		semi = strchr(p, ';');
		if (semi)
			*semi = '\0';
		fr.name = p;
		fr.owner = !fr.depth && !strcmp(p, TRUNCATED_NAME) ? JW_OWNER_COUNT
								  : JW_OWNER_UNKNOWN;
		err = st->fn(&fr, st->ctx);
		if (err)
			return err;
	}
	return 0;
}

/* One line of the body; the first frame line decides between tree and folded lines. */
static int body_line(struct read_state *st, const char *line, size_t len)
{
	struct jw_stacklog_frame fr;
	int err;

	if (st->body != BODY_FOLDED) {
		err = jw_stacklog_parse_line(line, &fr, st->buf, st->buf_len);
		if (!err) {
			st->body = BODY_TREE;
			return tree_frame(st, &fr);
		}
		if (st->body == BODY_TREE)
			return err;
	}
	st->body = BODY_FOLDED;
	return folded_line(st, line, len);
}

/* Grows the frames' buffer for a line of @len bytes. 0 or -ENOMEM. */
static int buf_fit(struct read_state *st, size_t len)
{
	size_t want = JW_STACKLOG_BUF(len);
	char *buf;

	if (want <= st->buf_len)
		return 0;
	buf = realloc(st->buf, want);
	if (!buf)
		return -ENOMEM;
	st->buf = buf;
	st->buf_len = want;
	return 0;
}

int jw_stacklog_read(FILE *f, jw_stacklog_fn fn, void *ctx, uint64_t *samples)
{
	struct read_state st = { .fn = fn, .ctx = ctx };
	bool header = true;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int err = 0;

	for (;;) {
		errno = 0;
		n = getline(&line, &cap, f);
		if (n < 0) {
			if (!feof(f) || ferror(f))
				err = errno ? -errno : -EIO;
			break;
		}
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (header) {
			if (!n)
				header = false;
			if (!n || header_line(line))
				continue;
			header = false;		/* no header: the body from the first line */
		}
		/* Blank lines, and the function a thread with no stack blocked in. */
		if (!n || !strncmp(line, "wchan:", 6))
			continue;
		err = buf_fit(&st, n);
		if (!err)
			err = body_line(&st, line, n);
		if (err)
			break;
	}
	free(st.buf);
	free(line);
	if (samples)
		*samples = st.total;
	return err;
}
