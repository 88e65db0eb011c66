/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The raw capture (--raw FILE): everything needed to unwind and name the stacks of the reported
 * janks again on another machine, written as they are reported; read back by
 * `jankwatch symbolize`. A versioned header, then length-prefixed chunks; every read is bounds-
 * checked, so a truncated or corrupt file yields the reports before the damage and an error.
 */
#ifndef JW_RAWFILE_H
#define JW_RAWFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/clocks.h"

/*
 * 2: the header names the machine; samples carry JW_UREG_MAX registers and the trampoline's
 * address. 1: x86-64 only, samples with its 17 registers (jankwatch symbolize reads both).
 */
#define JW_RAW_VERSION 2

/* Settings of the recording session that shape the logs. */
struct jw_raw_header {
	uint32_t version;
	uint32_t sample_count;
	uint32_t format;		/* enum jw_format */
	uint32_t sample_period_ms;
	int64_t realtime_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC when recorded */
	int64_t boottime_off_ns;	/* CLOCK_BOOTTIME - CLOCK_MONOTONIC */
	uint32_t machine;		/* ELF e_machine of the recording jankwatch (0: this one's) */
};

/* A mapped ELF module of the process, as the live symbolizer saw it. */
struct jw_raw_module {
	const char *path;
	const char *build_id;		/* hex, or NULL */
	uint64_t start;
	uint64_t end;
};

/* A kernel symbol a recorded kernel address falls in. */
struct jw_raw_ksym {
	uint64_t addr;
	const char *name;
};

/* A JIT function a recorded user address falls in (a perf-map line). */
struct jw_raw_jit {
	uint64_t start;
	uint64_t size;
	const char *name;		/* the perf map's name, e.g. "JS:*busyWork /a.js:3:1" */
};

/* A CPython frame a recorded sample carries, as naming it gave (stacks/pycode.h). */
struct jw_raw_pyname {
	uint64_t code;
	uint64_t instr;
	const char *name;		/* qualified name */
	const char *file;
	uint32_t line;
};

/* A range of ELF addresses, [lo, hi). */
struct jw_raw_range {
	uint64_t lo;
	uint64_t hi;
};

/* One reported jank and what naming its stacks needs. */
struct jw_raw_report {
	uint32_t verdict;		/* enum jw_verdict */
	uint64_t time_ms;		/* when the live event was raised */
	/* The process. */
	uint32_t pid;
	uint32_t tid;
	uint32_t uid;
	uint64_t start_jiffies;
	uint64_t start_boot_ns;
	const char *comm;
	const char *exe;
	const char *const *handlers;	/* by probe id; entries may be NULL */
	size_t n_handlers;
	const struct jw_raw_module *modules;
	size_t n_modules;
	/* The task and its samples: raw ring buffer records, as received. */
	const void *task;		/* struct jw_task_rec */
	size_t task_size;
	const void *const *samples;	/* struct jw_sample_rec each, stack copy included */
	const size_t *sample_sizes;
	size_t n_samples;
	const struct jw_raw_ksym *ksyms;
	size_t n_ksyms;
	const struct jw_raw_jit *jits;
	size_t n_jits;
	const char *loop;		/* how the loop was hooked ("redis", "syscall", ...), or NULL */
	/*
	 * The samples' CPython frames (none: @py_module NULL): the interpreter's module, whether a
	 * call's entry is a frame of its own (3.12 on), its evaluation function's code, and the
	 * names of the frames the samples carry.
	 */
	const char *py_module;
	bool py_entry_own;
	const struct jw_raw_range *py_eval;
	size_t n_py_eval;
	const struct jw_raw_pyname *py_names;
	size_t n_py_names;
};

/* Writes the file header. 0 or -errno. */
int jw_raw_write_header(FILE *f, const struct jw_raw_header *h);

/* Appends one report chunk and flushes it. 0 or -errno. */
int jw_raw_write_report(FILE *f, const struct jw_raw_report *r);

/*
 * Appends the clocks' offsets after a step seen at monotonic @mono_ns (base/clocks.h), for the
 * reports after it. 0 or -errno.
 */
int jw_raw_write_clocks(FILE *f, uint64_t mono_ns, int64_t realtime_off_ns,
			int64_t boottime_off_ns);

struct jw_raw_reader;

/*
 * Opens @path and reads its header into @h. NULL with errno set: ENOENT etc. from open,
 * EPROTO when it is not a raw capture, EPROTONOSUPPORT when its version is newer than this
 * jankwatch reads (a message in @err either way).
 */
struct jw_raw_reader *jw_raw_open(const char *path, struct jw_raw_header *h, char *err,
				  size_t errlen);

/*
 * The clocks' offsets of the capture so far: the header's, then each step read before the last
 * report returned (base/clocks.h converts a task's times with those of its moment). Valid until
 * close.
 */
const struct jw_clocks *jw_raw_clocks(const struct jw_raw_reader *rd);

/*
 * Reads the next report into @r; its pointers stay valid until the next call or close.
 * Returns 1 for a report, 0 at a clean end of file, -EPROTO for a truncated or corrupt chunk
 * (a message in @err; the reports before it were whole), -errno for a read error. Chunks of
 * types this version does not know are skipped.
 */
int jw_raw_next(struct jw_raw_reader *rd, struct jw_raw_report *r, char *err, size_t errlen);

/* NULL-safe. */
void jw_raw_close(struct jw_raw_reader *rd);

#endif
