// SPDX-License-Identifier: GPL-2.0-only
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/log.h"
#include "process/elfsym.h"
#include "stacks/debuginfo.h"

#define MAX_ENTRIES 4096	/* build-ids remembered; past them, nothing more is fetched */
#define BUILD_ID_HEX 129

/* libdebuginfod's API (elfutils/debuginfod.h, stable since 0.178), called through dlopen(). */
typedef struct debuginfod_client debuginfod_client;
typedef int (*debuginfod_progressfn_t)(debuginfod_client *c, long a, long b);
struct debuginfod_api {
	void *lib;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *build_id, int len,
			      char **path);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
};

struct entry {
	char id[BUILD_ID_HEX];
	char *elf;		/* the file it is the debug file of, for messages; may be NULL */
	enum jw_debug_state state;
	char *path;		/* FOUND */
	int err;		/* MISSING after a fetch: its -errno */
	unsigned int tries;	/* fetches that failed */
	uint64_t retry_ns;	/* MISSING after a fetch: when to ask again (CLOCK_MONOTONIC) */
	bool waited;		/* someone waits for it, and says how it ended */
};

struct jw_debuginfo {
	char *debug_dir;
	uint64_t cache_bytes;
	char cache_dir[PATH_MAX];
	struct debuginfod_api api;
	bool remote;
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock;
	pthread_cond_t work;	/* an entry to fetch, or stop (CLOCK_MONOTONIC) */
	pthread_cond_t done;	/* a fetch ended */
	struct entry *entries;
	size_t n, cap;
	size_t queued;		/* PENDING entries */
	uint64_t generation;
	int said[8];		/* fetch errors said already: each once */
	size_t n_said;
	bool stop;
};

/* The fetch in progress gives up when this is set (libdebuginfod's progress callback). */
static atomic_bool stopping;
static struct jw_debuginfo *global;

void jw_debuginfo_set_global(struct jw_debuginfo *d)
{
	global = d;
}

struct jw_debuginfo *jw_debuginfo_global(void)
{
	return global;
}

bool jw_debuginfo__remote(const struct jw_debuginfo *d)
{
	return d && d->remote;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Build-id hex @id as bytes into @out; their count, or 0 when it is not hex. */
static int id_bytes(const char *id, unsigned char *out, size_t max)
{
	size_t n = strlen(id), i;

	if (!n || n % 2 || n / 2 > max)
		return 0;
	for (i = 0; i < n / 2; i++) {
		int hi = hex_value(id[2 * i]), lo = hex_value(id[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return 0;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

/* Under @dir: .build-id/xx/rest.debug. */
static bool by_build_id(const char *dir, const char *id, char *path, size_t len)
{
	if (!dir || !id || strlen(id) < 4)
		return false;
	snprintf(path, len, "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
	return jw_elf_file_is(path, id);
}

/* The places gdb looks for a .gnu_debuglink name, beside the file and under the debug dirs. */
static bool by_debuglink(const struct jw_debuginfo *d, const char *id, const char *elf,
			 const char *link, char *path, size_t len)
{
	char dir[PATH_MAX];
	const char *slash;

	if (!link || !*link || !elf || !(slash = strrchr(elf, '/')) || strchr(link, '/'))
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - elf), elf);
	snprintf(path, len, "%s/.debug/%s", dir, link);
	if (jw_elf_file_is(path, id))
		return true;
	snprintf(path, len, "/usr/lib/debug%s/%s", dir, link);
	if (jw_elf_file_is(path, id))
		return true;
	if (d->debug_dir) {
		snprintf(path, len, "%s/%s", d->debug_dir, link);
		if (jw_elf_file_is(path, id))
			return true;
	}
	/* Beside the file, under another name than its own. */
	snprintf(path, len, "%s/%s", dir, link);
	return strcmp(path, elf) && jw_elf_file_is(path, id);
}

static bool local_find(const struct jw_debuginfo *d, const char *id, const char *elf,
		       const char *link, char *path, size_t len)
{
	return by_build_id(d->debug_dir, id, path, len) ||
	       by_build_id("/usr/lib/debug", id, path, len) ||
	       by_debuglink(d, id, elf, link, path, len);
}

/* Where libdebuginfod keeps what it fetched, as it decides it. */
static void cache_dir_of(char *dir, size_t len)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(dir, len, "%s", env);
	else if (xdg && *xdg)
		snprintf(dir, len, "%s/debuginfod_client", xdg);
	else
		snprintf(dir, len, "%s/.cache/debuginfod_client", home && *home ? home : "/");
}

/* The cache's files, for pruning: nftw() takes no context. */
struct cached {
	char *path;
	time_t used;
	off_t size;
};
static struct cached *walk_files;
static size_t walk_n, walk_cap;
static uint64_t walk_total;

static int walk_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	walk_total += st->st_size;
	if (walk_n == walk_cap) {
		size_t cap = walk_cap ? 2 * walk_cap : 64;
		struct cached *v = realloc(walk_files, cap * sizeof(*v));

		if (!v)
			return 1;
		walk_files = v;
		walk_cap = cap;
	}
	walk_files[walk_n].path = strdup(path);
	if (!walk_files[walk_n].path)
		return 1;
	/* What was used last: read (atime, where the mount keeps it) or fetched. */
	walk_files[walk_n].used = st->st_atime > st->st_mtime ? st->st_atime : st->st_mtime;
	walk_files[walk_n++].size = st->st_size;
	return 0;
}

static int oldest_first(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Keeps the cache under its bound: the files used longest ago go first, @keep never. */
static void prune_cache(struct jw_debuginfo *d, const char *keep)
{
	uint64_t target = d->cache_bytes / 10 * 9;
	size_t i, removed = 0;

	walk_n = 0;
	walk_total = 0;
	if (nftw(d->cache_dir, walk_one, 16, FTW_PHYS) == 0 && walk_total > d->cache_bytes) {
		qsort(walk_files, walk_n, sizeof(*walk_files), oldest_first);
		for (i = 0; i < walk_n && walk_total > target; i++) {
			if (keep && !strcmp(walk_files[i].path, keep))
				continue;
			if (unlink(walk_files[i].path) == 0) {
				walk_total -= walk_files[i].size;
				removed++;
			}
		}
		jw_log(JW_LOG_INFO, "debuginfod cache %s: %zu files removed to keep it under %llu "
		       "MiB", d->cache_dir, removed, (unsigned long long)(d->cache_bytes >> 20));
	}
	for (i = 0; i < walk_n; i++)
		free(walk_files[i].path);
	walk_n = 0;
}

static int progress(debuginfod_client *c, long a, long b)
{
	(void)c;
	(void)a;
	(void)b;
	return atomic_load(&stopping);
}

/*
 * A fetch that failed, said once per kind of failure: a server that is down fails every
 * module alike, and one that lacks a library's debug file lacks the others' too.
 */
static void say_failure(struct jw_debuginfo *d, const struct entry *e, int err)
{
	size_t i;

	for (i = 0; i < d->n_said; i++)
		if (d->said[i] == err)
			return;
	if (d->n_said < sizeof(d->said) / sizeof(d->said[0]))
		d->said[d->n_said++] = err;
	if (err == -ENOENT)
		jw_log(JW_LOG_WARN, "debuginfod has no debug file for %s (build-id %s): its "
		       "frames, and those of any other module it lacks, are named from the "
		       "module's own symbols", e->elf ? e->elf : "?", e->id);
	else
		jw_log(JW_LOG_WARN, "symbols missing: cannot fetch debug files from debuginfod "
		       "(%s, for %s, build-id %s): frames of stripped modules are named from their "
		       "own symbols", strerror(-err), e->elf ? e->elf : "?", e->id);
}

uint64_t jw_debuginfo_retry_ns(int err, unsigned int tries)
{
	uint64_t ns = 30 * 1000000000ULL;

	if (err == -ENOSYS || err == -ECANCELED)
		return 0;
	if (err == -ENOENT)
		return 600 * 1000000000ULL;
	while (--tries && ns < 1800 * 1000000000ULL)
		ns *= 2;
	return ns < 1800 * 1000000000ULL ? ns : 1800 * 1000000000ULL;
}

/* With the lock held: the entry of @id, or NULL. */
static struct entry *find_entry(struct jw_debuginfo *d, const char *id)
{
	struct entry *e;

	for (e = d->entries; e < d->entries + d->n; e++)
		if (!strcmp(e->id, id))
			return e;
	return NULL;
}

/*
 * With the lock held: the next entry to fetch, a failed one queued again when its retry is
 * due; else NULL, and @wake_ns the next retry's time (0: none).
 */
static struct entry *next_work(struct jw_debuginfo *d, uint64_t *wake_ns)
{
	uint64_t now = (uint64_t)jw_clock_ns(CLOCK_MONOTONIC);
	struct entry *e;

	*wake_ns = 0;
	for (e = d->entries; e < d->entries + d->n; e++)
		if (e->state == JW_DEBUG_PENDING && !e->path)
			return e;
	for (e = d->entries; e < d->entries + d->n; e++) {
		if (e->state != JW_DEBUG_MISSING || !e->retry_ns)
			continue;
		if (e->retry_ns <= now) {
			e->state = JW_DEBUG_PENDING;
			e->retry_ns = 0;
			d->queued++;
			return e;
		}
		if (!*wake_ns || e->retry_ns < *wake_ns)
			*wake_ns = e->retry_ns;
	}
	return NULL;
}

/* With the lock held: records how the fetch of @e ended (@fd, @path on success). */
static void fetched(struct jw_debuginfo *d, struct entry *e, int fd, char **path)
{
	free(e->path);
	e->path = fd >= 0 ? *path : NULL;
	e->state = fd >= 0 ? JW_DEBUG_FOUND : JW_DEBUG_MISSING;
	e->err = fd;
	if (fd >= 0) {
		*path = NULL;
		d->generation++;
		if (e->tries) {
			jw_log(JW_LOG_INFO, "debuginfod answered: the debug file of %s came after %u "
			       "failed %s", e->elf ? e->elf : e->id, e->tries,
			       e->tries == 1 ? "try" : "tries");
			/* A later failure is said again. */
			d->n_said = 0;
		}
		return;
	}
	e->tries++;
	e->retry_ns = jw_debuginfo_retry_ns(fd, e->tries);
	if (e->retry_ns)
		e->retry_ns += (uint64_t)jw_clock_ns(CLOCK_MONOTONIC);
	if (!e->waited)
		say_failure(d, e, fd);
}

/* The fetch thread: one build-id at a time, the lock dropped while libdebuginfod works. */
static void *fetcher(void *arg)
{
	struct jw_debuginfo *d = arg;
	debuginfod_client *client = d->api.begin();
	unsigned char bytes[64];
	char id[BUILD_ID_HEX], *path = NULL;
	struct timespec until;
	uint64_t wake_ns;
	struct entry *e = NULL;
	int fd, n;

	if (client && d->api.set_progressfn)
		d->api.set_progressfn(client, progress);
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stop && !(e = next_work(d, &wake_ns))) {
			if (!wake_ns) {
				pthread_cond_wait(&d->work, &d->lock);
				continue;
			}
			until.tv_sec = (time_t)(wake_ns / 1000000000ULL);
			until.tv_nsec = (long)(wake_ns % 1000000000ULL);
			pthread_cond_timedwait(&d->work, &d->lock, &until);
		}
		if (d->stop)
			break;
		snprintf(id, sizeof(id), "%s", e->id);
		/* Taken: marked so that the next look for work passes it. */
		e->path = strdup("");
		pthread_mutex_unlock(&d->lock);
		n = id_bytes(id, bytes, sizeof(bytes));
		path = NULL;
		fd = client && n ? d->api.find_debuginfo(client, bytes, n, &path) : -ENOSYS;
		if (fd >= 0)
			close(fd);
		if (fd >= 0 && path)
			prune_cache(d, path);
		pthread_mutex_lock(&d->lock);
		/* The table may have moved meanwhile: find the entry again. */
		e = find_entry(d, id);
		if (e)
			fetched(d, e, fd, &path);
		free(path);
		d->queued--;
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->lock);
	if (client)
		d->api.end(client);
	return NULL;
}

#if JW_STATIC
/* A static jankwatch has no dynamic loader (base/noloader.c): libdebuginfod is never loaded. */
static bool load_api(struct debuginfod_api *api)
{
	(void)api;
	return false;
}

static void say_not_loaded(void)
{
	jw_log(JW_LOG_WARN, "DEBUGINFOD_URLS is set but a static jankwatch fetches no debug files: "
	       "save a raw capture (--raw FILE) and name it on a host with `jankwatch symbolize`");
}
#else
/*
 * Loads libdebuginfod. Never unloaded: it and libcurl keep process-wide state (libdw keeps it
 * loaded the same way).
 */
static bool load_api(struct debuginfod_api *api)
{
	api->lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!api->lib)
		return false;
	*(void **)&api->begin = dlsym(api->lib, "debuginfod_begin");
	*(void **)&api->end = dlsym(api->lib, "debuginfod_end");
	*(void **)&api->find_debuginfo = dlsym(api->lib, "debuginfod_find_debuginfo");
	*(void **)&api->set_progressfn = dlsym(api->lib, "debuginfod_set_progressfn");
	if (api->begin && api->end && api->find_debuginfo)
		return true;
	dlclose(api->lib);
	api->lib = NULL;
	return false;
}

static void say_not_loaded(void)
{
	jw_log(JW_LOG_WARN, "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded (%s): "
	       "debug files are looked for on this machine only", dlerror());
}
#endif

struct jw_debuginfo *jw_debuginfo__new(const char *debug_dir, uint64_t cache_bytes)
{
	struct jw_debuginfo *d = calloc(1, sizeof(*d));
	const char *urls = getenv("DEBUGINFOD_URLS");
	pthread_condattr_t attr;

	if (!d)
		return NULL;
	d->cache_bytes = cache_bytes;
	if (debug_dir && !(d->debug_dir = strdup(debug_dir))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&d->work, &attr);
	pthread_condattr_destroy(&attr);
	pthread_cond_init(&d->done, NULL);
	cache_dir_of(d->cache_dir, sizeof(d->cache_dir));
	if (urls && *urls) {
		if (!load_api(&d->api))
			say_not_loaded();
		else if (pthread_create(&d->thread, NULL, fetcher, d) == 0)
			d->remote = d->thread_started = true;
	}
	return d;
}

void jw_debuginfo__free(struct jw_debuginfo *d)
{
	size_t i;

	if (!d)
		return;
	if (d->thread_started) {
		atomic_store(&stopping, true);
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		atomic_store(&stopping, false);
	}
	if (global == d)
		global = NULL;
	for (i = 0; i < d->n; i++) {
		free(d->entries[i].elf);
		free(d->entries[i].path);
	}
	free(d->entries);
	free(walk_files);
	walk_files = NULL;
	walk_cap = 0;
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->done);
	pthread_mutex_destroy(&d->lock);
	free(d->debug_dir);
	free(d);
}

/* The entry of @id, made (PENDING, the fetch queued) when new; NULL when the table is full. */
static struct entry *entry_of(struct jw_debuginfo *d, const char *id, const char *elf)
{
	struct entry *e = find_entry(d, id);

	if (e)
		return e;
	if (d->n == MAX_ENTRIES)
		return NULL;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 32;
		struct entry *v = realloc(d->entries, cap * sizeof(*v));

		if (!v)
			return NULL;
		d->entries = v;
		d->cap = cap;
	}
	e = &d->entries[d->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->elf = elf ? strdup(elf) : NULL;
	e->state = JW_DEBUG_PENDING;
	d->queued++;
	pthread_cond_signal(&d->work);
	return e;
}

/*
 * With the lock held: the state of entry @e (NULL: none, MISSING), @path when FOUND. Fetching
 * when new is entry_of()'s; find_entry() only looks.
 */
static enum jw_debug_state state_of(const struct entry *e, char *path, size_t len)
{
	if (!e)
		return JW_DEBUG_MISSING;
	if (e->state == JW_DEBUG_FOUND)
		snprintf(path, len, "%s", e->path);
	return e->state;
}

enum jw_debug_state jw_debuginfo__lookup(struct jw_debuginfo *d, const char *build_id,
					 const char *elf_path, const char *debuglink, bool fetch,
					 char *path, size_t len)
{
	static const struct jw_debuginfo none;
	enum jw_debug_state st;

	/* With no store (a unit test, a tool), the places on disk only. */
	if (local_find(d ? d : &none, build_id, elf_path, debuglink, path, len))
		return JW_DEBUG_FOUND;
	/* No file (the vdso, read from memory): its own symbols are all there is to have. */
	if (!d || !d->remote || !elf_path || !build_id || !*build_id ||
	    strlen(build_id) >= BUILD_ID_HEX)
		return JW_DEBUG_MISSING;
	pthread_mutex_lock(&d->lock);
	st = state_of(fetch ? entry_of(d, build_id, elf_path) : find_entry(d, build_id), path,
		      len);
	pthread_mutex_unlock(&d->lock);
	return st;
}

enum jw_debug_state jw_debuginfo__wait(struct jw_debuginfo *d, const char *build_id,
				       const char *elf_path, int timeout_ms, char *path,
				       size_t len, char *why, size_t whylen)
{
	enum jw_debug_state st = jw_debuginfo__lookup(d, build_id, elf_path, NULL, true, path,
						      len);
	struct timespec until;
	struct entry *e;
	int err = 0;

	if (st == JW_DEBUG_PENDING) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&d->lock);
		e = entry_of(d, build_id, elf_path);
		if (e)
			e->waited = true;
		while ((st = state_of(entry_of(d, build_id, elf_path), path, len)) ==
			       JW_DEBUG_PENDING &&
		       pthread_cond_timedwait(&d->done, &d->lock, &until) != ETIMEDOUT)
			;
		/* The entry may have moved while the lock was dropped. */
		e = entry_of(d, build_id, elf_path);
		err = e ? e->err : 0;
		pthread_mutex_unlock(&d->lock);
	}
	if (st == JW_DEBUG_PENDING)
		snprintf(why, whylen, "debuginfod did not answer within %d s", timeout_ms / 1000);
	else if (st == JW_DEBUG_MISSING && err < 0)
		snprintf(why, whylen, "no debug file for build-id %s under %s%s/usr/lib/debug, and "
			 "debuginfod: %s", build_id, d->debug_dir ? d->debug_dir : "",
			 d->debug_dir ? ", " : "", strerror(-err));
	else if (st == JW_DEBUG_MISSING)
		snprintf(why, whylen, "no debug file for build-id %s under %s%s/usr/lib/debug%s",
			 build_id ? build_id : "(none)", d && d->debug_dir ? d->debug_dir : "",
			 d && d->debug_dir ? ", " : "",
			 d && d->remote ? " nor from debuginfod" : " (DEBUGINFOD_URLS is not set)");
	return st;
}

uint64_t jw_debuginfo__generation(struct jw_debuginfo *d)
{
	uint64_t g;

	if (!d || !d->remote)
		return 0;
	pthread_mutex_lock(&d->lock);
	g = d->generation;
	pthread_mutex_unlock(&d->lock);
	return g;
}

size_t jw_debuginfo__pending(struct jw_debuginfo *d)
{
	size_t n;

	if (!d || !d->remote)
		return 0;
	pthread_mutex_lock(&d->lock);
	n = d->queued;
	pthread_mutex_unlock(&d->lock);
	return n;
}
