// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the trace log: every ftrace line must pass Perfetto's systrace line grammar and
 * parse as its line parser parses it; the perf script text; the file name.
 */
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

static struct grammar grammars[] = {
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

static int group_setup(void **state)
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

static int group_teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(grammars); i++)
		regfree(&grammars[i].rx);
	return 0;
}

/* Copies @len bytes of @s to @dst, trimmed of whitespace at both ends as SubstrTrim() does. */
static void copy_trimmed(char *dst, size_t dstlen, const char *s, size_t len)
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

static void copy_group(char *dst, size_t dstlen, const char *s, regmatch_t m)
{
	size_t len = m.rm_so < 0 ? 0 : (size_t)(m.rm_eo - m.rm_so);

	assert_true(len < dstlen);
	memcpy(dst, s + (m.rm_so < 0 ? 0 : m.rm_so), len);
	dst[len] = '\0';
}

/* base::StringToUInt32 / StringToInt32 / StringToInt64: all of a non-empty decimal string. */
static bool to_u32(const char *s, uint32_t *out)
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

static bool to_i64(const char *s, int64_t *out)
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

static bool to_i32(const char *s)
{
	int64_t v;

	return to_i64(s, &v) && v >= INT32_MIN && v <= INT32_MAX;
}

static bool tokenize(struct grammar *g, const char *text, struct line *out)
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
static void parse_args(const char *s, struct args *out)
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

static const char *arg(const struct args *a, const char *key)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (!strcmp(a->kv[i].key, key))
			return a->kv[i].value;
	}
	return NULL;
}

/* TaskState::FromSystrace: "R" or "R+", or '|'-joined letters it knows, with no '+'. */
static bool prev_state_valid(const char *s)
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
static bool marker_valid(const char *s)
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
static void check_fields(const struct line *l, const char *text)
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
static size_t check_ftrace(const char *out, struct line *lines, size_t max)
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
static char *ftrace_text(const struct jw_trace_event *ev, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(jw_trace_write_ftrace(f, ev, n), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static const char header[] = "# tracer: nop\n"
			     "#\n"
			     "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
			     "#              | |        |      |   ||||       |         |\n";

/* A recorded window: a handler slice, a counter, the handler preempted, sleeping, woken. */
static const struct jw_trace_event recorded[] = {
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

static void test_recorded_trace(void **state)
{
	static const char *const event_names[] = {
		[JW_TRACE_BEGIN] = "tracing_mark_write", [JW_TRACE_END] = "tracing_mark_write",
		[JW_TRACE_COUNTER] = "tracing_mark_write", [JW_TRACE_SWITCH] = "sched_switch",
		[JW_TRACE_WAKING] = "sched_waking",
	};
	static const char expected[] =
		"    redis-server-4243  ( 4242) [003] ....  1234.567890: tracing_mark_write: "
		"B|4242|H:aeProcessEvents\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.567900: tracing_mark_write: "
		"C|4242|H:ready_fds|17\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.568000: sched_switch: "
		"prev_comm=redis-server prev_pid=4243 prev_prio=120 prev_state=R+ ==> "
		"next_comm=kworker/3:1 next_pid=77 next_prio=120\n"
		"     kworker/3:1-77    (-----) [003] ....  1234.568100: sched_switch: "
		"prev_comm=kworker/3:1 prev_pid=77 prev_prio=120 prev_state=I ==> "
		"next_comm=redis-server next_pid=4243 next_prio=120\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.569000: sched_switch: "
		"prev_comm=redis-server prev_pid=4243 prev_prio=120 prev_state=S ==> "
		"next_comm=swapper/3 next_pid=0 next_prio=120\n"
		"  bio_close_file-4250  ( 4242) [001] ....  1234.570000: sched_waking: "
		"comm=redis-server pid=4243 prio=120 target_cpu=003\n"
		"       swapper/3-0     (-----) [003] ....  1234.570000: sched_switch: "
		"prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> "
		"next_comm=redis-server next_pid=4243 next_prio=120\n"
		"  bio_close_file-4250  ( 4242) [001] ....  1234.571000: sched_switch: "
		"prev_comm=bio_close_file prev_pid=4250 prev_prio=120 prev_state=D ==> "
		"next_comm=swapper/1 next_pid=0 next_prio=120\n"
		"    redis-server-4243  ( 4242) [003] ....  1234.572000: tracing_mark_write: "
		"E|4242|\n";
	struct line lines[MAX_LINES];
	char *out = ftrace_text(recorded, ARRAY_SIZE(recorded));
	size_t i;

	(void)state;
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(recorded));
	assert_true(!strncmp(out, header, strlen(header)));
	assert_string_equal(out + strlen(header), expected);
	/* What Perfetto reads back: the line's thread, process, CPU, time and event. */
	for (i = 0; i < ARRAY_SIZE(recorded); i++) {
		const struct jw_trace_event *e = &recorded[i];
		char tgid[16], ts[32];

		if (e->tgid)
			snprintf(tgid, sizeof(tgid), "%" PRIu32, e->tgid);
		else
			strcpy(tgid, "-----");
		snprintf(ts, sizeof(ts), "%" PRIu64 ".%06" PRIu64, e->ts_ns / 1000000000,
			 e->ts_ns % 1000000000 / 1000);
		assert_int_equal(lines[i].pid, e->tid);
		assert_int_equal(lines[i].cpu, e->cpu);
		assert_string_equal(lines[i].tgid, tgid);
		assert_string_equal(lines[i].ts, ts);
		assert_string_equal(lines[i].event, event_names[e->kind]);
	}
	assert_string_equal(lines[0].task, "redis-server");
	assert_string_equal(lines[0].args, "B|4242|H:aeProcessEvents");
	assert_string_equal(lines[5].task, "bio_close_file");
	free(out);
}

static void test_empty_trace(void **state)
{
	struct line lines[1];
	char *out = ftrace_text(NULL, 0);

	(void)state;
	assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 0);
	assert_string_equal(out, header);
	free(out);
}

/*
 * Comms: spaces, '=', control bytes, a leading '#' and "</" go; 16 bytes without a NUL are read
 * to the 16th and no further; an empty comm is "<...>" on the line, empty in the fields.
 */
static void test_comms(void **state)
{
	struct jw_trace_event ev[4] = {
		{ .ts_ns = 5000000, .kind = JW_TRACE_SWITCH, .tid = 10, .tgid = 10,
		  .comm = "Timer Thread", .prio = 120, .prev_state = 0x01, .other_tid = 11,
		  .other_comm = "a=b\tc\nd e", .other_prio = 100 },
		{ .ts_ns = 5000001, .kind = JW_TRACE_WAKING, .tid = 12, .tgid = 10,
		  .comm = "#x</script>", .prio = 120, .other_tid = 13,
		  .other_comm = "k=v x", .target_cpu = 1 },
		{ .ts_ns = 5000002, .kind = JW_TRACE_BEGIN, .tid = 13, .tgid = 10, .name = "f" },
		{ .ts_ns = 5000003, .kind = JW_TRACE_SWITCH, .tid = 14, .tgid = 10,
		  .prio = 120, .prev_state = 0x01, .other_tid = 15, .other_prio = 120 },
	};
	struct line lines[MAX_LINES];
	struct args a;
	char *out;

	(void)state;
	/* 16 bytes then, in the next field, bytes that must not show. */
	memcpy(ev[3].comm, "ThreadPoolForegr", 16);
	memcpy(ev[3].other_comm, "0123456789abcdef", 16);
	out = ftrace_text(ev, ARRAY_SIZE(ev));
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));

	assert_string_equal(lines[0].task, "Timer_Thread");
	parse_args(lines[0].args, &a);
	assert_string_equal(arg(&a, "prev_comm"), "Timer_Thread");
	assert_string_equal(arg(&a, "next_comm"), "a_b_c_d_e");
	assert_string_equal(arg(&a, "next_pid"), "11");
	assert_string_equal(arg(&a, "next_prio"), "100");

	assert_string_equal(lines[1].task, "_x<_script>");
	assert_null(strstr(out, "</"));
	parse_args(lines[1].args, &a);
	assert_string_equal(arg(&a, "comm"), "k_v_x");
	assert_string_equal(arg(&a, "pid"), "13");

	assert_string_equal(lines[2].task, "<...>");
	assert_non_null(strstr(out, "\n           <...>-13    (   10) [000] ....     0.005000: "
				    "tracing_mark_write: B|10|H:f\n"));

	assert_string_equal(lines[3].task, "ThreadPoolForegr");
	assert_non_null(strstr(out, "\nThreadPoolForegr-14    (   10) [000] ....     0.005000: "
				    "sched_switch: prev_comm=ThreadPoolForegr prev_pid=14 "
				    "prev_prio=120 prev_state=S ==> next_comm=0123456789abcdef "
				    "next_pid=15 next_prio=120\n"));
	free(out);

	/* A 16-byte comm that begins with '#' would begin its line. */
	memcpy(ev[3].comm, "#hreadPoolForegr", 16);
	ev[0].comm[0] = '\0';
	ev[0].other_comm[0] = '\0';
	out = ftrace_text(ev, ARRAY_SIZE(ev));
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));
	assert_string_equal(lines[3].task, "_hreadPoolForegr");
	assert_string_equal(lines[0].task, "<...>");
	assert_non_null(strstr(out, "prev_comm= prev_pid=10 "));
	assert_non_null(strstr(out, "==> next_comm= next_pid=11 "));
	free(out);
}

/* A name can neither end its marker's field nor start a line: no forged marker or event. */
static void test_marker_names(void **state)
{
	const struct jw_trace_event ev[] = {
		{ .ts_ns = 1, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "Timer.on_tick|E|7|" },
		{ .ts_ns = 2, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "x\napp-7 (7) [000] .... 0.000002: tracing_mark_write: E|7|" },
		{ .ts_ns = 3, .kind = JW_TRACE_COUNTER, .tid = 7, .tgid = 7, .comm = "app",
		  .name = "q|9", .value = -3 },
		{ .ts_ns = 4, .kind = JW_TRACE_COUNTER, .tid = 7, .tgid = 7, .comm = "app",
		  .name = NULL, .value = INT64_MIN },
		{ .ts_ns = 5, .kind = JW_TRACE_BEGIN, .tid = 7, .tgid = 0, .comm = "app",
		  .name = "operator()(int) const \x7f\r" },
	};
	struct line lines[MAX_LINES];
	char *out = ftrace_text(ev, ARRAY_SIZE(ev));

	(void)state;
	assert_int_equal(check_ftrace(out, lines, MAX_LINES), ARRAY_SIZE(ev));
	assert_string_equal(lines[0].args, "B|7|H:Timer.on_tick_E_7_");
	assert_string_equal(lines[1].args,
			    "B|7|H:x_app-7 (7) [000] .... 0.000002: tracing_mark_write: E_7_");
	assert_string_equal(lines[2].args, "C|7|H:q_9|-3");
	assert_string_equal(lines[3].args, "C|7|H:|-9223372036854775808");
	assert_string_equal(lines[4].args, "B|0|H:operator()(int) const __");
	assert_string_equal(lines[4].tgid, "-----");
	free(out);
}

/* sched_switch's prev_state as the kernel prints it, each one Perfetto parses. */
static void test_prev_states(void **state)
{
	static const struct {
		uint32_t bits;
		const char *text;
	} states[] = {
		{ 0, "R" },	{ JW_TRACE_PREEMPTED, "R+" },
		{ 0x01, "S" },	{ 0x02, "D" },
		{ 0x04, "T" },	{ 0x08, "t" },
		{ 0x10, "X" },	{ 0x20, "Z" },
		{ 0x40, "P" },	{ 0x80, "I" },
		{ 0x03, "S|D" },	{ JW_TRACE_PREEMPTED | 0x01, "R+" },
		{ 0x200, "R" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(states); i++) {
		struct jw_trace_event ev = {
			.ts_ns = 1, .kind = JW_TRACE_SWITCH, .tid = 1, .tgid = 1, .comm = "a",
			.prio = 120, .prev_state = states[i].bits, .other_tid = 2,
			.other_comm = "b", .other_prio = 120,
		};
		struct line lines[1];
		char *out = ftrace_text(&ev, 1);
		struct args a;

		assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 1);
		parse_args(lines[0].args, &a);
		assert_string_equal(arg(&a, "prev_state"), states[i].text);
		free(out);
	}
}

/* tgid padded to five columns or dashes; seconds with exactly six decimals, truncated. */
static void test_tgid_and_time(void **state)
{
	static const struct {
		uint32_t tgid;
		uint64_t ts_ns;
		const char *head;
	} cases[] = {
		{ 0, 1234567890123, "(-----) [002] ....  1234.567890: " },
		{ 1234, 1234567890999, "( 1234) [002] ....  1234.567890: " },
		{ 99999, 0, "(99999) [002] ....     0.000000: " },
		{ 1234567, 999, "(1234567) [002] ....     0.000000: " },
		{ 1, 1000, "(    1) [002] ....     0.000001: " },
		{ 1, 123456789012345678, "(    1) [002] .... 123456789.012345: " },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct jw_trace_event ev = {
			.ts_ns = cases[i].ts_ns, .kind = JW_TRACE_END, .cpu = 2, .tid = 42,
			.tgid = cases[i].tgid, .comm = "app",
		};
		struct line lines[1];
		char *out = ftrace_text(&ev, 1);
		char want[128];

		assert_int_equal(check_ftrace(out, lines, ARRAY_SIZE(lines)), 1);
		snprintf(want, sizeof(want), "%16s-42    %stracing_mark_write: E|%" PRIu32 "|\n",
			 "app", cases[i].head, cases[i].tgid);
		assert_string_equal(out + strlen(header), want);
		free(out);
	}
}

/*
 * The perf script grammar importers rely on: "<comm> <tid> <sec>.<usec6>: ..." then frames
 * "\t<hex> <symbol> (<module>)" whose module (from the last '(') is one word, then a blank line.
 */
static void check_perf_text(const char *out, size_t frames)
{
	regex_t sample, frame;
	const char *p = out, *nl;
	size_t n = 0;

	assert_int_equal(regcomp(&sample, "^[^[:space:]]+ [0-9]+ [0-9]+\\.[0-9]{6}: 1 cpu-clock:$",
				 REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regcomp(&frame, "^\t *[0-9a-f]+ [^[:cntrl:]]+ \\([^[:space:]()]+\\)$",
				 REG_EXTENDED | REG_NOSUB), 0);
	for (; *p; p = nl + 1) {
		char text[512];

		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true((size_t)(nl - p) < sizeof(text));
		memcpy(text, p, (size_t)(nl - p));
		text[nl - p] = '\0';
		if (p == out) {
			check(!regexec(&sample, text, 0, NULL, 0), text);
		} else if (nl[1]) {
			check(!regexec(&frame, text, 0, NULL, 0), text);
			n++;
		} else {
			check(!text[0], text);
		}
	}
	assert_int_equal(n, frames);
	regfree(&sample);
	regfree(&frame);
}

static char *perf_text(const char *comm, uint32_t pid, uint32_t tid, uint64_t ts_ns,
		       const struct jw_frame *frames, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(jw_trace_write_perf_sample(f, comm, pid, tid, ts_ns, frames, n), 0);
	assert_int_equal(fclose(f), 0);
	check_perf_text(out, n);
	return out;
}

static void test_perf_sample(void **state)
{
	const struct jw_frame frames[] = {
		{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81a01234, .symbol = "do_epoll_wait",
		  .sym_off = 0x5f },
		{ .kind = JW_FRAME_KERNEL, .pc = 0xffffffff81000010 },
		{ .kind = JW_FRAME_JIT, .pc = 0x3a1f4c0012a0,
		  .symbol = "LazyCompile:*onTick /app/timer.js:12", .sym_off = 0x1c },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x55d1c0a0b1c2, .rel_pc = 0x4b1c2,
		  .module = "/usr/bin/redis-server", .symbol = "aeProcessEvents", .sym_off = 0x42 },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x7f3c8c029d90, .rel_pc = 0x29d90,
		  .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x1234 },
		{ .kind = JW_FRAME_NATIVE, .pc = 0x7f0000001000, .module = "/opt/my app/lib(x).so",
		  .symbol = "bad\nsym", .sym_off = 0 },
		{ .kind = JW_FRAME_JIT, .pc = 0x3a1f4c001000, .module = "/tmp/perf-99.map",
		  .symbol = "", .sym_off = 3 },
	};
	static const char expected[] =
		"Timer_Thread 4243 1234.567890: 1 cpu-clock:\n"
		"\tffffffff81a01234 do_epoll_wait+0x5f ([kernel.kallsyms])\n"
		"\tffffffff81000010 [unknown] ([kernel.kallsyms])\n"
		"\t    3a1f4c0012a0 LazyCompile:*onTick /app/timer.js:12+0x1c "
		"(/tmp/perf-4242.map)\n"
		"\t    55d1c0a0b1c2 aeProcessEvents+0x42 (/usr/bin/redis-server)\n"
		"\t    7f3c8c029d90 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
		"\t            1234 [unknown] ([unknown])\n"
		"\t    7f0000001000 bad_sym+0x0 (/opt/my_app/lib_x_.so)\n"
		"\t    3a1f4c001000 [unknown] (/tmp/perf-99.map)\n"
		"\n";
	char *out = perf_text("Timer Thread", 4242, 4243, 1234567890123, frames,
			      ARRAY_SIZE(frames));

	(void)state;
	assert_string_equal(out, expected);
	free(out);

	/* Without a pid, JIT code has no perf map to name. */
	out = perf_text("node", 0, 4243, 999, &frames[2], 1);
	assert_string_equal(out, "node 4243 0.000000: 1 cpu-clock:\n"
				 "\t    3a1f4c0012a0 LazyCompile:*onTick /app/timer.js:12+0x1c "
				 "([jit])\n\n");
	free(out);
}

/* A comm of 16 bytes without a NUL is read to its end and no further (ASan watches). */
static void test_perf_comm_bounds(void **state)
{
	char *comm = malloc(16);
	char *out;

	(void)state;
	assert_non_null(comm);
	memcpy(comm, "ThreadPool\tFore ", 16);
	out = perf_text(comm, 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, "ThreadPool_Fore_ 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	/* No comm: perf's name for such a thread. */
	out = perf_text("", 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, ":2 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	out = perf_text(NULL, 1, 2, 3000000000, NULL, 0);
	assert_string_equal(out, ":2 2 3.000000: 1 cpu-clock:\n\n");
	free(out);
	free(comm);
}

static void test_errors(void **state)
{
	struct jw_trace_event ev[2] = {
		{ .kind = JW_TRACE_END, .comm = "a" },
		{ .kind = (enum jw_trace_kind)99, .comm = "a" },
	};
	struct jw_frame fr = { .kind = JW_FRAME_NATIVE, .pc = 1 };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	/* An unknown kind fails before a line is written. */
	assert_int_equal(jw_trace_write_ftrace(f, ev, 2), -EINVAL);
	assert_int_equal(jw_trace_write_ftrace(f, NULL, 1), -EINVAL);
	assert_int_equal(jw_trace_write_ftrace(NULL, ev, 1), -EINVAL);
	assert_int_equal(jw_trace_write_perf_sample(f, "a", 1, 1, 0, NULL, 1), -EINVAL);
	assert_int_equal(jw_trace_write_perf_sample(NULL, "a", 1, 1, 0, &fr, 1), -EINVAL);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(len, 0);
	free(out);

	/* Writes to a stream opened for reading fail with EBADF. */
	f = fopen("/dev/null", "r");
	assert_non_null(f);
	assert_int_equal(jw_trace_write_ftrace(f, ev, 1), -EBADF);
	assert_int_equal(jw_trace_write_perf_sample(f, "a", 1, 1, 0, &fr, 1), -EBADF);
	fclose(f);
}

static void test_name(void **state)
{
	char buf[64], small[12];

	(void)state;
	jw_trace_name(4242, 1709294400123, JW_TRACE_FTRACE_SUFFIX, buf, sizeof(buf));
	assert_string_equal(buf, "trace-4242-20240301120000-123.ftrace");
	jw_trace_name(4242, 1709294400123, JW_TRACE_PERF_SUFFIX, buf, sizeof(buf));
	assert_string_equal(buf, "trace-4242-20240301120000-123.perf.txt");
	jw_trace_name(7, 1704067199005, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "trace-7-20231231235959-005");
	jw_trace_name(4294967295u, 1704067200000, ".ftrace", buf, sizeof(buf));
	assert_string_equal(buf, "trace-4294967295-20240101000000-000.ftrace");
	jw_trace_name(4242, 1709294400123, ".ftrace", small, sizeof(small));
	assert_string_equal(small, "trace-4242-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_trace),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_comms),
		cmocka_unit_test(test_marker_names),
		cmocka_unit_test(test_prev_states),
		cmocka_unit_test(test_tgid_and_time),
		cmocka_unit_test(test_perf_sample),
		cmocka_unit_test(test_perf_comm_bounds),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_name),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
