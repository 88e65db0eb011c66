/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Debug files (the symbols and lines a stripped binary lacks), found the way perf and gdb find
 * them: by build-id under --debug-dir and /usr/lib/debug/.build-id, by .gnu_debuglink beside
 * the file, and from debuginfod when DEBUGINFOD_URLS is set. A debuginfod fetch runs on a
 * thread of its own, never in jankwatch's loop: a lookup that needs one queues it and says
 * PENDING; the fetched files live in libdebuginfod's cache, which is kept under a size bound.
 * A fetch that failed is tried again later (jw_debuginfo_retry_ns()): a server down at start
 * names the frames once it answers.
 * libdebuginfod is loaded with dlopen() when DEBUGINFOD_URLS is set, as libdw does.
 */
#ifndef JW_DEBUGINFO_H
#define JW_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bound jankwatch keeps libdebuginfod's cache under. */
#define JW_DEBUGINFOD_CACHE_BYTES (1024ULL << 20)

enum jw_debug_state {
	JW_DEBUG_FOUND,		/* @path is the debug file */
	JW_DEBUG_PENDING,	/* debuginfod is being asked */
	JW_DEBUG_MISSING,	/* no debug file anywhere it was looked for */
};

struct jw_debuginfo;

/*
 * A store looking under @debug_dir (NULL: none) and /usr/lib/debug, and asking debuginfod when
 * DEBUGINFOD_URLS is set, its cache kept under @cache_bytes. NULL with errno set.
 */
struct jw_debuginfo *jw_debuginfo__new(const char *debug_dir, uint64_t cache_bytes);
void jw_debuginfo__free(struct jw_debuginfo *d);	/* NULL-safe; stops the fetch thread */

/* Whether debuginfod is asked (DEBUGINFOD_URLS set and libdebuginfod loaded). */
bool jw_debuginfo__remote(const struct jw_debuginfo *d);

/*
 * The debug file of the ELF file @elf_path (may be NULL) whose GNU build-id is @build_id
 * (lowercase hex; NULL: none) and whose .gnu_debuglink names @debuglink (NULL: none): a file
 * on disk, or one fetched already, into @path. Never blocks: when debuginfod may have it and
 * @fetch allows, the fetch is queued and PENDING returned (later lookups say how it ended). A
 * file found must carry the same build-id.
 */
enum jw_debug_state jw_debuginfo__lookup(struct jw_debuginfo *d, const char *build_id,
					 const char *elf_path, const char *debuglink, bool fetch,
					 char *path, size_t len);

/*
 * The same, waiting up to @timeout_ms for a fetch (for what jankwatch needs before it attaches
 * anything: a --probe's function in a stripped binary). On MISSING, @why says where it looked.
 */
enum jw_debug_state jw_debuginfo__wait(struct jw_debuginfo *d, const char *build_id,
				       const char *elf_path, int timeout_ms, char *path,
				       size_t len, char *why, size_t whylen);

/* Counts the fetches that brought a file: a symbolizer made before a change may now do better. */
uint64_t jw_debuginfo__generation(struct jw_debuginfo *d);

/* Fetches queued or under way. */
size_t jw_debuginfo__pending(struct jw_debuginfo *d);

/*
 * How long after its @tries-th failed fetch (-errno @err) a debug file is asked for again: a
 * server's "none" (-ENOENT) after 10 min, as long as libdebuginfod keeps such answers; a server
 * not reached after 30 s, doubling up to 30 min; 0: never (no libdebuginfod client, exiting).
 */
uint64_t jw_debuginfo_retry_ns(int err, unsigned int tries);

/* The store libdwfl's callbacks use (they take no context): set once, at start. */
void jw_debuginfo_set_global(struct jw_debuginfo *d);
struct jw_debuginfo *jw_debuginfo_global(void);

#endif
