/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * JIT code named by a perf map: the /tmp/perf-PID.map file that `node --perf-basic-prof` (and
 * other JITs) append one "START SIZE NAME" line to for each piece of code they make. The file
 * only grows while the process lives, so it is read incrementally; later lines for an address
 * replace earlier ones (V8 frees code and puts new code at the same place).
 */
#ifndef JW_PERFMAP_H
#define JW_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Entries kept at most by jw_perfmap__open(); the rest are counted as dropped. */
#define JW_PERFMAP_MAX_ENTRIES 1000000

/* Lines longer than this are counted as broken and skipped. */
#define JW_PERFMAP_LINE_MAX 8192

/* No JIT makes code this large: a larger SIZE is a broken line. */
#define JW_PERFMAP_SIZE_MAX (256ULL << 20)

/* One piece of JIT code. The strings live until the next refresh or the map's free. */
struct jw_perfmap_entry {
	uint64_t start;
	uint64_t size;
	const char *name;	/* NAME as written: "JS:*busyWork /tmp/x.js:3:18" */
	const char *func;	/* "busyWork"; "(anonymous)" for V8's unnamed functions */
	const char *src;	/* "file:line[:col]": "/tmp/x.js:3:18"; NULL when none */
};

/* The fields of one line, pointing into it. */
struct jw_perfmap_line {
	uint64_t start;
	uint64_t size;
	const char *name;
	size_t name_len;	/* without trailing blanks; never 0 */
};

/* A NAME split into function and source, pointing into it. */
struct jw_perfmap_name {
	const char *func;
	size_t func_len;	/* 0 for an anonymous function */
	const char *src;	/* NULL when none */
	size_t src_len;
};

/*
 * Parses one line without its newline (@len bytes, need not be NUL-terminated): START and SIZE
 * in hex, with or without 0x, then NAME, the rest of the line. Returns 0, or -EINVAL for a
 * broken line: a missing field, bad hex, a value over 64 bits, SIZE 0 or over
 * JW_PERFMAP_SIZE_MAX, START + SIZE past the address space, an empty NAME.
 */
int jw_perfmap_parse_line(const char *line, size_t len, struct jw_perfmap_line *out);

/*
 * Splits NAME: drops a "Type:" prefix ("JS:", "LazyCompile:", "Builtin:") and V8's tier mark
 * ('*' optimized, '~' interpreted, '^' baseline, '+' Maglev); a last word that ends in
 * ":LINE" or ":LINE:COL" is the source, the words before it the function ("get foo").
 */
void jw_perfmap_split_name(const char *name, size_t len, struct jw_perfmap_name *out);

/*
 * The pid of a process inside its own PID namespace, from the content of /proc/PID/status:
 * the last field of the "NSpid:" line, or the "Pid:" line on kernels without NSpid. Returns 0
 * or -EINVAL.
 */
int jw_perfmap_parse_nspid(const char *status, pid_t *nspid);

struct jw_perfmap;

/*
 * The perf map of process @pid: /proc/PID/root/tmp/perf-NSPID.map (the process's own /tmp and
 * pid, wherever its namespaces put them). The file need not exist yet. Nothing is read before
 * jw_perfmap__refresh(). NULL with errno set when @pid cannot be read.
 */
struct jw_perfmap *jw_perfmap__open(pid_t pid);

/* The perf map in file @path (need not exist yet), keeping at most @max_entries entries. */
struct jw_perfmap *jw_perfmap__open_file(const char *path, size_t max_entries);

/* NULL-safe. */
void jw_perfmap__free(struct jw_perfmap *map);

/*
 * Reads the lines appended since the last refresh; a partial last line waits for the next one.
 * A file that was re-created or shrank is read again from its start. Once the file is open it
 * stays readable after the process exits. Returns 0 (also when the file does not exist yet),
 * or -errno; the entries read so far stay on failure.
 */
int jw_perfmap__refresh(struct jw_perfmap *map);

/* The entry whose [start, start + size) holds @addr, or NULL. Valid until the next refresh. */
const struct jw_perfmap_entry *jw_perfmap__lookup(const struct jw_perfmap *map, uint64_t addr);

size_t jw_perfmap__count(const struct jw_perfmap *map);

/* Broken lines seen, and good lines dropped because the map was full. */
uint64_t jw_perfmap__bad_lines(const struct jw_perfmap *map);
uint64_t jw_perfmap__dropped(const struct jw_perfmap *map);

/* The file's path. */
const char *jw_perfmap__path(const struct jw_perfmap *map);

#endif
