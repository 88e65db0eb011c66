/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixture test_report_trace.c and test_report_perf.c share: Perfetto's line grammar and parser, events of every kind. */
#ifndef JW_TEST_REPORT_TRACE_FIXTURE_H
#define JW_TEST_REPORT_TRACE_FIXTURE_H
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "report/report_trace.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define HEADER_LINES	4
#define MAX_LINES	32

/*
 * Perfetto's systrace line grammar (src/trace_processor/importers/systrace/
 * systrace_line_tokenizer.cc in google/perfetto), in POSIX ERE: \d as [0-9], \s as [[:space:]],
 * \S as [^[:space:]]. Two versions, since traces meet both: the 2020 one takes at most four flag
 * characters; the current one three letters or dots then one or two hex digits or dots.
 */
struct grammar {
	const char *what;
	const char *re;
	int pid, tgid, cpu, ts, event;	/* group numbers */
	regex_t rx;
};

static __attribute__((unused)) struct grammar grammars[] = {
	{
		.what = "perfetto 2020",
		.re = "-([0-9]+)[[:space:]]+\\(?[[:space:]]*([0-9]+|-+)?\\)?[[:space:]]?"
		      "\\[([0-9]+)][[:space:]]*[a-zA-Z0-9.]{0,4}[[:space:]]+"
		      "([0-9]+\\.[0-9]+):[[:space:]]+([^[:space:]]+):",
		.pid = 1, .tgid = 2, .cpu = 3, .ts = 4, .event = 5,
	},
	{
		.what = "perfetto 2026",
		.re = "-([0-9]+)[[:space:]]+\\(?[[:space:]]*([0-9]+|-+)?\\)?[[:space:]]?"
		      "\\[([0-9]+)][[:space:]]*([a-zA-Z.]{3}[0-9a-f.]{1,2}[[:space:]]*)?"
		      "([0-9]+\\.[0-9]+):[[:space:]]+([^[:space:]]+):",
		.pid = 1, .tgid = 2, .cpu = 3, .ts = 5, .event = 6,
	},
};

/* A line as Perfetto's tokenizer splits it. */
struct line {
	char task[64];		/* before the match, trimmed */
	char tgid[16];		/* "" when absent */
	char ts[32];
	char event[32];
	char args[512];		/* after the match, trimmed */
	uint32_t pid;
	uint32_t cpu;
};

/* key=value pairs as Perfetto's line parser splits them. */
struct args {
	struct {
		char key[32];
		char value[64];
	} kv[16];
	size_t n;
};

static inline int group_setup(void **state)
{
	size_t i;

	(void)state;
	/* Every expected file name below is UTC; the name is in local time. */
	if (setenv("TZ", "UTC", 1))
		return -1;
	tzset();
	for (i = 0; i < ARRAY_SIZE(grammars); i++) {
		if (regcomp(&grammars[i].rx, grammars[i].re, REG_EXTENDED)) {
			while (i--)
				regfree(&grammars[i].rx);
			return -1;
		}
	}
	return 0;
}

static inline int group_teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(grammars); i++)
		regfree(&grammars[i].rx);
	return 0;
}

/* Copies @len bytes of @s to @dst, trimmed of whitespace at both ends as SubstrTrim() does. */
static inline void copy_trimmed(char *dst, size_t dstlen, const char *s, size_t len)
{
	while (len && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || (s[len - 1] >= '\t' && s[len - 1] <= '\r')))
		len--;
	assert_true(len < dstlen);
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static inline void copy_group(char *dst, size_t dstlen, const char *s, regmatch_t m)
{
	size_t len = m.rm_so < 0 ? 0 : (size_t)(m.rm_eo - m.rm_so);

	assert_true(len < dstlen);
	memcpy(dst, s + (m.rm_so < 0 ? 0 : m.rm_so), len);
	dst[len] = '\0';
}

/* base::StringToUInt32 / StringToInt32 / StringToInt64: all of a non-empty decimal string. */
static inline bool to_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static inline bool to_i64(const char *s, int64_t *out)
{
	long long v;
	char *end;

	if (!*s || *s == ' ')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static inline bool to_i32(const char *s)
{
	int64_t v;

	return to_i64(s, &v) && v >= INT32_MIN && v <= INT32_MAX;
}

static inline bool tokenize(struct grammar *g, const char *text, struct line *out)
{
	regmatch_t m[8];

	if (regexec(&g->rx, text, ARRAY_SIZE(m), m, 0))
		return false;
	memset(out, 0, sizeof(*out));
	copy_trimmed(out->task, sizeof(out->task), text, (size_t)m[0].rm_so);
	copy_group(out->tgid, sizeof(out->tgid), text, m[g->tgid]);
	copy_group(out->ts, sizeof(out->ts), text, m[g->ts]);
	copy_group(out->event, sizeof(out->event), text, m[g->event]);
	copy_trimmed(out->args, sizeof(out->args), text + m[0].rm_eo, strlen(text + m[0].rm_eo));
	out->pid = (uint32_t)strtoul(text + m[g->pid].rm_so, NULL, 10);
	out->cpu = (uint32_t)strtoul(text + m[g->cpu].rm_so, NULL, 10);
	return true;
}

/*
 * Splits on ' ' (empty tokens skipped); a token without '=' is the value of "name"; else its
 * first '='-piece is the key and its last the value. The first of a key's values is kept.
 */
static inline void parse_args(const char *s, struct args *out)
{
	char buf[512], *save, *tok;

	out->n = 0;
	assert_true(strlen(s) < sizeof(buf));
	strcpy(buf, s);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char piece_buf[128], *save2, *piece, key[32] = "name", value[64] = "";
		size_t i;

		assert_true(strlen(tok) < sizeof(piece_buf));
		if (!strchr(tok, '=')) {
			snprintf(value, sizeof(value), "%s", tok);
		} else {
			strcpy(piece_buf, tok);
			key[0] = '\0';
			for (piece = strtok_r(piece_buf, "=", &save2); piece;
			     piece = strtok_r(NULL, "=", &save2)) {
				if (!key[0])
					snprintf(key, sizeof(key), "%s", piece);
				else
					snprintf(value, sizeof(value), "%s", piece);
			}
		}
		for (i = 0; i < out->n; i++) {
			if (!strcmp(out->kv[i].key, key))
				break;
		}
		if (i < out->n)
			continue;
		assert_true(out->n < ARRAY_SIZE(out->kv));
		strcpy(out->kv[out->n].key, key);
		strcpy(out->kv[out->n].value, value);
		out->n++;
	}
}

static inline const char *arg(const struct args *a, const char *key)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (!strcmp(a->kv[i].key, key))
			return a->kv[i].value;
	}
	return NULL;
}

/* TaskState::FromSystrace: "R" or "R+", or '|'-joined letters it knows, with no '+'. */
static inline bool prev_state_valid(const char *s)
{
	bool letter = false;

	if (!strcmp(s, "R") || !strcmp(s, "R+"))
		return true;
	for (; *s; s++) {
		if (*s == '|')
			continue;
		if (!strchr("SDTtXZPxKWNI", *s))
			return false;
		letter = true;
	}
	return letter;
}

/* ParseSystraceTracePoint() for B, E and C, with no trailing field after a counter's value. */
static inline bool marker_valid(const char *s)
{
	const char *bar = strchr(s, '|'), *name, *value;
	char tgid[16];
	uint32_t t;
	int64_t v;

	if (!bar || bar - s != 1 || !strchr("BEC", s[0]))
		return false;
	name = strchr(bar + 1, '|');
	if (!name || (size_t)(name - bar - 1) >= sizeof(tgid))
		return false;
	memcpy(tgid, bar + 1, (size_t)(name - bar - 1));
	tgid[name - bar - 1] = '\0';
	if (!to_u32(tgid, &t))
		return false;
	name++;
	if (s[0] == 'E')
		return !*name;
	if (s[0] == 'B')
		return *name;
	value = strchr(name, '|');
	return value && value > name && !strchr(value + 1, '|') && to_i64(value + 1, &v);
}

/* Fails with the line in the message, so that a failure shows what was written. */
#define check(cond, text)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail_msg("%s: %s", #cond, text);                                           \
	} while (0)

/* Every field a line's event needs, parsed as Perfetto's line parser parses it. */
static inline void check_fields(const struct line *l, const char *text)
{
	struct args a;
	uint32_t u;

	if (!strcmp(l->event, "tracing_mark_write")) {
		check(marker_valid(l->args), text);
		return;
	}
	parse_args(l->args, &a);
	if (!strcmp(l->event, "sched_switch")) {
		check(arg(&a, "prev_comm"), text);
		check(arg(&a, "prev_pid") && to_u32(arg(&a, "prev_pid"), &u), text);
		check(arg(&a, "prev_prio") && to_i32(arg(&a, "prev_prio")), text);
		check(arg(&a, "prev_state") && prev_state_valid(arg(&a, "prev_state")), text);
		check(arg(&a, "next_comm"), text);
		check(arg(&a, "next_pid") && to_u32(arg(&a, "next_pid"), &u), text);
		check(arg(&a, "next_prio") && to_i32(arg(&a, "next_prio")), text);
		return;
	}
	check(!strcmp(l->event, "sched_waking"), text);
	check(arg(&a, "comm"), text);
	check(arg(&a, "pid") && to_u32(arg(&a, "pid"), &u), text);
	check(arg(&a, "prio") && to_i32(arg(&a, "prio")), text);
	check(arg(&a, "target_cpu") && to_u32(arg(&a, "target_cpu"), &u), text);
}

/*
 * Checks the whole ftrace text: the "# tracer" header first, then only event lines, each of
 * which both grammars split alike and whose fields parse. Returns the number of event lines and
 * fills @lines with them.
 */
static inline size_t check_ftrace(const char *out, struct line *lines, size_t max)
{
	size_t n = 0, header = 0;
	const char *p, *nl;

	assert_true(!strncmp(out, "# tracer: nop\n#\n", 16));
	for (p = out; *p; p = nl + 1) {
		char text[1024];
		struct line alt;
		size_t i;

		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true((size_t)(nl - p) < sizeof(text));
		memcpy(text, p, (size_t)(nl - p));
		text[nl - p] = '\0';
		if (text[0] == '#') {
			/* A '#' line among the events would be skipped by the importer. */
			check(n == 0, text);
			header++;
			continue;
		}
		assert_true(n < max);
		for (i = 0; i < ARRAY_SIZE(grammars); i++) {
			struct line *l = i ? &alt : &lines[n];

			if (!tokenize(&grammars[i], text, l))
				fail_msg("%s does not match: %s", grammars[i].what, text);
		}
		check(!strcmp(alt.task, lines[n].task) && alt.pid == lines[n].pid &&
			      !strcmp(alt.tgid, lines[n].tgid) && alt.cpu == lines[n].cpu &&
			      !strcmp(alt.ts, lines[n].ts) && !strcmp(alt.event, lines[n].event) &&
			      !strcmp(alt.args, lines[n].args),
		      text);
		check(lines[n].task[0], text);
		check_fields(&lines[n], text);
		n++;
	}
	assert_int_equal(header, HEADER_LINES);
	return n;
}

/* Runs the writer into memory; the result is the caller's to free. */
static inline char *ftrace_text(const struct jw_trace_event *ev, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(jw_trace_write_ftrace(f, ev, n), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static __attribute__((unused)) const char header[] = "# tracer: nop\n"
			     "#\n"
			     "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
			     "#              | |        |      |   ||||       |         |\n";

/* A recorded window: a handler slice, a counter, the handler preempted, sleeping, woken. */
static __attribute__((unused)) const struct jw_trace_event recorded[] = {
	{ .ts_ns = 1234567890123, .kind = JW_TRACE_BEGIN, .cpu = 3, .tid = 4243, .tgid = 4242,
	  .comm = "redis-server", .name = "aeProcessEvents" },
	{ .ts_ns = 1234567900000, .kind = JW_TRACE_COUNTER, .cpu = 3, .tid = 4243, .tgid = 4242,
	  .comm = "redis-server", .name = "ready_fds", .value = 17 },
	{ .ts_ns = 1234568000999, .kind = JW_TRACE_SWITCH, .cpu = 3, .tid = 4243, .tgid = 4242,
	  .comm = "redis-server", .prio = 120, .prev_state = JW_TRACE_PREEMPTED, .other_tid = 77,
	  .other_comm = "kworker/3:1", .other_prio = 120 },
	{ .ts_ns = 1234568100000, .kind = JW_TRACE_SWITCH, .cpu = 3, .tid = 77,
	  .comm = "kworker/3:1", .prio = 120, .prev_state = 0x80, .other_tid = 4243,
	  .other_comm = "redis-server", .other_prio = 120 },
	{ .ts_ns = 1234569000000, .kind = JW_TRACE_SWITCH, .cpu = 3, .tid = 4243, .tgid = 4242,
	  .comm = "redis-server", .prio = 120, .prev_state = 0x01, .other_tid = 0,
	  .other_comm = "swapper/3", .other_prio = 120 },
	{ .ts_ns = 1234570000000, .kind = JW_TRACE_WAKING, .cpu = 1, .tid = 4250, .tgid = 4242,
	  .comm = "bio close file", .prio = 120, .other_tid = 4243, .other_comm = "redis-server",
	  .target_cpu = 3 },
	{ .ts_ns = 1234570000500, .kind = JW_TRACE_SWITCH, .cpu = 3, .tid = 0,
	  .comm = "swapper/3", .prio = 120, .prev_state = 0, .other_tid = 4243,
	  .other_comm = "redis-server", .other_prio = 120 },
	{ .ts_ns = 1234571000000, .kind = JW_TRACE_SWITCH, .cpu = 1, .tid = 4250, .tgid = 4242,
	  .comm = "bio close file", .prio = 120, .prev_state = 0x02, .other_tid = 0,
	  .other_comm = "swapper/1", .other_prio = 120 },
	{ .ts_ns = 1234572000000, .kind = JW_TRACE_END, .cpu = 3, .tid = 4243, .tgid = 4242,
	  .comm = "redis-server" },
};

#endif
