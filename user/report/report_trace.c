// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace log: ftrace text as Perfetto's systrace importer reads it, and beside it the window's
 * stack samples as perf script text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/report_stack.h"
#include "report/report_trace.h"

#define COMM_LEN	16	/* TASK_COMM_LEN */
#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_USEC	1000ull

/*
 * Writes @len bytes of @s, each byte that would break the line grammar as '_': control bytes (a
 * newline would start a forged line), those in @reject, the first byte if it is in @reject_first,
 * and the '/' of "</": Perfetto stops reading a systrace file at a line holding "</script>" (the
 * end of a trace embedded in HTML), so a comm could otherwise cut the trace short.
 */
static void put_text(FILE *f, const char *s, size_t len, const char *reject,
		     const char *reject_first)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		bool bad = c < 0x20 || c == 0x7f || strchr(reject, c) ||
			   (i == 0 && strchr(reject_first, c)) ||
			   (c == '/' && i > 0 && s[i - 1] == '<');

		fputc(bad ? '_' : c, f);
	}
}

/*
 * An ftrace comm, right-aligned in @width columns as the kernel's "%16s" prints it; @none for an
 * empty one. Perfetto splits a line's fields on whitespace and key=value on '=', and skips lines
 * that begin with '#' (a 16-byte comm has no padding before it), so those bytes go.
 */
static void put_comm(FILE *f, const char *comm, int width, const char *none)
{
	size_t len = strnlen(comm, COMM_LEN);

	if (!len) {
		fprintf(f, "%*s", width, none);
		return;
	}
	if ((size_t)width > len)
		fprintf(f, "%*s", width - (int)len, "");
	put_text(f, comm, len, " =", "#");
}

/*
 * "<sec>.<usec>": truncated, as perf script prints its times, so that a sample and a slice at
 * the same nanosecond read the same in both files.
 */
static void put_time(FILE *f, const char *fmt, uint64_t ts_ns)
{
	fprintf(f, fmt, ts_ns / NSEC_PER_SEC, ts_ns % NSEC_PER_SEC / NSEC_PER_USEC);
}

/* "<comm>-<tid> (<tgid>) [<cpu>] .... <sec>.<usec>: <event>: " */
static void put_line_head(FILE *f, const struct jw_trace_event *e, const char *event)
{
	put_comm(f, e->comm, COMM_LEN, "<...>");
	fprintf(f, "-%-5" PRIu32 " ", e->tid);
	if (e->tgid)
		fprintf(f, "(%5" PRIu32 ")", e->tgid);
	else
		fputs("(-----)", f);
	/* Irq flags unknown: four dots, the most Perfetto's line grammar takes. */
	fprintf(f, " [%03" PRIu32 "] .... ", e->cpu);
	put_time(f, "%5" PRIu64 ".%06" PRIu64, e->ts_ns);
	fprintf(f, ": %s: ", event);
}

/*
 * sched_switch's prev_state as its TP_printk writes it: "R" when no bit is set, else the bits'
 * letters joined by '|'. '+' follows only R: the kernel reports a preemption as TASK_REPORT_MAX
 * alone, and Perfetto takes a state with '+' after any other letter for invalid.
 */
static void put_prev_state(FILE *f, uint32_t state)
{
	static const char letters[] = "SDTtXZPI";
	bool first = true;
	unsigned int i;

	if (state & JW_TRACE_PREEMPTED) {
		fputs("R+", f);
		return;
	}
	if (!(state & (JW_TRACE_PREEMPTED - 1))) {
		fputc('R', f);
		return;
	}
	for (i = 0; i < sizeof(letters) - 1; i++) {
		if (!(state & (1u << i)))
			continue;
		if (!first)
			fputc('|', f);
		fputc(letters[i], f);
		first = false;
	}
}

/* A marker's name: '|' would end the name's field, so a name cannot forge a value or marker. */
static void put_mark_name(FILE *f, const char *name)
{
	if (name)
		put_text(f, name, strlen(name), "|", "");
}

static void put_event(FILE *f, const struct jw_trace_event *e)
{
	switch (e->kind) {
	case JW_TRACE_BEGIN:
		put_line_head(f, e, "tracing_mark_write");
		fprintf(f, "B|%" PRIu32 "|H:", e->tgid);
		put_mark_name(f, e->name);
		break;
	case JW_TRACE_END:
		put_line_head(f, e, "tracing_mark_write");
		fprintf(f, "E|%" PRIu32 "|", e->tgid);
		break;
	case JW_TRACE_COUNTER:
		put_line_head(f, e, "tracing_mark_write");
		fprintf(f, "C|%" PRIu32 "|H:", e->tgid);
		put_mark_name(f, e->name);
		fprintf(f, "|%" PRId64, e->value);
		break;
	case JW_TRACE_SWITCH:
		put_line_head(f, e, "sched_switch");
		fputs("prev_comm=", f);
		put_comm(f, e->comm, 0, "");
		fprintf(f, " prev_pid=%" PRIu32 " prev_prio=%" PRId32 " prev_state=", e->tid,
			e->prio);
		put_prev_state(f, e->prev_state);
		fputs(" ==> next_comm=", f);
		put_comm(f, e->other_comm, 0, "");
		fprintf(f, " next_pid=%" PRIu32 " next_prio=%" PRId32, e->other_tid, e->other_prio);
		break;
	case JW_TRACE_WAKING:
		put_line_head(f, e, "sched_waking");
		fputs("comm=", f);
		put_comm(f, e->other_comm, 0, "");
		fprintf(f, " pid=%" PRIu32 " prio=%" PRId32 " target_cpu=%03" PRIu32, e->other_tid,
			e->prio, e->target_cpu);
		break;
	}
	fputc('\n', f);
}

static bool kind_known(enum jw_trace_kind kind)
{
	switch (kind) {
	case JW_TRACE_BEGIN:
	case JW_TRACE_END:
	case JW_TRACE_COUNTER:
	case JW_TRACE_SWITCH:
	case JW_TRACE_WAKING:
		return true;
	}
	return false;
}

static int stream_error(FILE *f)
{
	if (!ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}

int jw_trace_write_ftrace(FILE *f, const struct jw_trace_event *ev, size_t n)
{
	size_t i;

	if (!f || (n && !ev))
		return -EINVAL;
	/* A half-written trace would pass for a whole one; check every kind first. */
	for (i = 0; i < n; i++) {
		if (!kind_known(ev[i].kind))
			return -EINVAL;
	}
	errno = 0;
	/* "# tracer" is how Perfetto recognizes the file; the legend is what the kernel writes. */
	fputs("# tracer: nop\n"
	      "#\n"
	      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
	      "#              | |        |      |   ||||       |         |\n",
	      f);
	for (i = 0; i < n; i++)
		put_event(f, &ev[i]);
	return stream_error(f);
}

/* One "\t<pc> <symbol>+0x<off> (<module>)" line, with perf script's names for what is unknown. */
static void put_frame(FILE *f, const struct jw_frame *fr, uint32_t pid)
{
	fprintf(f, "\t%16" PRIx64 " ", fr->pc);
	if (fr->symbol && *fr->symbol) {
		put_text(f, fr->symbol, strlen(fr->symbol), "", "");
		/* A Python frame has a line, not an offset: "qualname (file.py)", as perf's. */
		if (fr->kind != JW_FRAME_PYTHON)
			fprintf(f, "+0x%" PRIx64, fr->sym_off);
	} else {
		fputs("[unknown]", f);
	}
	fputs(" (", f);
	if (fr->kind == JW_FRAME_KERNEL) {
		fputs("[kernel.kallsyms]", f);
	} else if (fr->module && *fr->module) {
		/*
		 * Importers take the module from the last '(' to the closing ')', and the flame
		 * graph scripts take it for one word.
		 */
		put_text(f, fr->module, strlen(fr->module), " ()", "");
	} else if (fr->kind == JW_FRAME_JIT && pid) {
		/* perf's name for JIT code, which stackcollapse-perf.pl --jit recognizes. */
		fprintf(f, "/tmp/perf-%" PRIu32 ".map", pid);
	} else {
		fputs(fr->kind == JW_FRAME_JIT ? "[jit]" : "[unknown]", f);
	}
	fputs(")\n", f);
}

int jw_trace_write_perf_sample(FILE *f, const char *comm, uint32_t pid, uint32_t tid,
			       uint64_t ts_ns, const struct jw_frame *frames, size_t n)
{
	size_t len = comm ? strnlen(comm, COMM_LEN) : 0;
	size_t i;

	if (!f || (n && !frames))
		return -EINVAL;
	errno = 0;
	/* Importers split the sample line on spaces; perf names a thread with no comm ":<tid>". */
	if (len)
		put_text(f, comm, len, " ", "");
	else
		fprintf(f, ":%" PRIu32, tid);
	fprintf(f, " %" PRIu32 " ", tid);
	put_time(f, "%" PRIu64 ".%06" PRIu64, ts_ns);
	fputs(": 1 cpu-clock:\n", f);
	for (i = 0; i < n; i++)
		put_frame(f, &frames[i], pid);
	fputc('\n', f);
	return stream_error(f);
}

void jw_trace_name(uint32_t pid, uint64_t time_ms, const char *suffix, char *buf, size_t len)
{
	jw_report_file_name("trace", pid, time_ms, suffix, buf, len);
}
