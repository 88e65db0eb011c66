/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The raw capture file's format, shared by its writer (rawfile.c) and its reader (rawread.c). Integers are in host byte order: the records it carries are raw BPF
 * records in that order anyway, so it is read back on a machine of the same byte order.
 *
 *   header   u8  magic[8]       "\x89JWRAW\r\n": the high byte catches 7-bit transfers, the
 *                               CR LF catches text-mode newline conversion
 *            u32 version        JW_RAW_VERSION
 *            u32 header_size    bytes of header fields that follow (28 in version 1, 32 in
 *                               version 2); a later
 *                               minor revision may append fields, which older readers skip
 *            u32 sample_count, u32 format, u32 sample_period_ms,
 *            s64 realtime_off_ns, s64 boottime_off_ns,
 *            u32 machine (version 2: ELF e_machine; version 1 was x86-64's only)
 *   chunks   u32 type, u32 size, u8 payload[size]    size <= 64 MiB; unknown types are skipped
 *
 * A report chunk (type 1) is a sequence of fields:
 *   u32 verdict, u64 time_ms, u32 pid, u32 tid, u32 uid, u64 start_jiffies, u64 start_boot_ns,
 *   str comm, str exe,
 *   u32 n_handlers, str handler[n_handlers],
 *   u32 n_modules, { str path, str build_id, u64 start, u64 end }[n_modules],
 *   blob task,
 *   u32 n_samples, blob sample[n_samples],
 *   u32 n_ksyms, { u64 addr, str name }[n_ksyms],
 *   u32 n_jits, { u64 start, u64 size, str name }[n_jits]
 * A report chunk of type 2 ends with one more field, str loop (how the loop was hooked); a
 * type 1 chunk, written before that field existed, is read with loop NULL. A chunk of type 3
 * (a report whose samples carry CPython frames) follows the loop with what names them:
 *   str py_module, u32 py_entry_own, u32 n_eval, { u64 lo, u64 hi }[n_eval],
 *   u32 n_py, { u64 code, u64 instr, str name, str file, u32 line }[n_py]
 * A chunk of type 4 says the clocks stepped (the wall clock set, a suspend) at monotonic time
 * mono_ns, the offsets from it on:
 *   u64 mono_ns, s64 realtime_off_ns, s64 boottime_off_ns
 * A reader that skips it converts every task with the header's offsets.
 * where a str is a u32 length and its bytes without a NUL (length 0xffffffff: NULL), and a blob
 * is a u32 length and its bytes. A report fills its chunk exactly: a report that grows gets a
 * new chunk type, which older readers skip rather than misread.
 */
#ifndef JW_RAWFORMAT_H
#define JW_RAWFORMAT_H

#include <stddef.h>
#include <stdint.h>

#define CHUNK_REPORT	   1
#define CHUNK_REPORT_LOOP  2		/* a report with the loop field */
#define CHUNK_REPORT_PY	   3		/* a report with the loop and Python fields */
#define CHUNK_CLOCKS	   4		/* the clocks' offsets after a step */
#define CHUNK_CLOCKS_SIZE  24
#define CHUNK_HDR_SIZE	   8
#define PREAMBLE_SIZE	   16	       /* magic, version, header_size */
#define HEADER_FIELDS_SIZE_V1 28       /* the version 1 fields after header_size */
#define HEADER_FIELDS_SIZE 32	       /* the version 2 fields */
#define MAX_HEADER_FIELDS  4096	       /* room to grow; anything larger is damage */
#define MAX_PAYLOAD	   (64u << 20) /* a report is KiBs; one near this is damage */
#define MAX_COUNT	   1000000u    /* entries of each array in a report */
#define NULL_STR	   UINT32_MAX
#define READ_STEP	   (64u << 10)
#define ARENA_BLOCK	   (64u << 10)
#define ARRAY_ALIGN	   _Alignof(max_align_t)

static const unsigned char raw_magic[8] __attribute__((unused)) = {0x89, 'J', 'W', 'R', 'A', 'W', '\r', '\n'};

#endif
