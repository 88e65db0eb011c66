// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop presets, one table: how each is recognized (the file that must have its functions),
 * how it names handlers (from the stacks, or by probes of its own), what else it is (a master
 * that runs no loop, a handler address that is no code), and what --loop NAME a program lacks.
 * A new preset is one row here and, if it hooks probes of its own, its own file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/demangle.h"
#include "base/log.h"
#include "process/elfsym.h"
#include "loops/preset_ev.h"
#include "loops/preset_gtk.h"
#include "loops/preset_looper.h"
#include "loops/preset_nginx.h"
#include "loops/preset_pipewire.h"
#include "loops/preset_python.h"
#include "loops/preset_qt.h"
#include "loops/preset_redis.h"
#include "loops/preset_sdevent.h"
#include "loops/preset_wayland.h"
#include "loops/presets.h"
#include "loops/sites.h"
#include "process/target.h"

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct preset_desc {
	const char *name;
	const char *also_for;		/* another --loop name that takes it too */
	const char *library;		/* the library with its functions; NULL: the executable */
	bool or_exe;			/* ... or the executable, when it maps none that has them */
	const char *const *needs;	/* the functions that file must have */
	/*
	 * --loop auto: one of these the executable must call (import), so that a program mapping
	 * the library for something else (redis: sd_notify) is not taken for its loop. NULL: none.
	 */
	const char *const *imported;
	/* ... the executable or another file it maps (weston runs its loop from libexec_weston) */
	bool imported_by_any;
	struct jw_stack_rule rule;	/* .dispatch set: handlers named from the stacks */
	/* Its probes, hooked in out->where; false when they cannot be. NULL: none. */
	bool (*hook)(pid_t pid, const char *exe, struct jw_preset *out);
	/* Its handler sites (sites.h), hooked when found; the stacks name the handlers else. */
	int (*sites)(struct jw_preset *out, char *note, size_t len);
	/* Its hook's probes run per callback (per_callback): handler sites too, for handler_sites */
	bool callback_probes;
	/* Why it was picked (@how: "auto", "as asked"). NULL: the stack presets' line. */
	void (*why)(const struct jw_preset *p, const char *how, char *why, size_t len);
	int (*workers)(pid_t pid, pid_t *out, size_t max);
	bool handler_addr_is_data;
	enum jw_handler_names names;
};

/*
 * Qt's handlers from the stacks (handler_sites=0): the first function of the program below the
 * outermost event's delivery, past Qt's slot object plumbing.
 */
#define QT_STACK_RULE                                                                              \
	{ .dispatch = "QCoreApplication::notifyInternal2(QObject*, QEvent*)",                     \
	  .skip = NAMES("QtPrivate::") }

/* In the order --loop auto tries them: the most specific first. */
static const struct preset_desc presets[] = {
	/*
	 * Qt 5 and 6, under GLib's dispatcher (which it maps) or its own: before glib. Each event,
	 * named by its receiver's class and its type, or the slot it calls.
	 */
	{ .name = "qt", .library = "libQt5Core.so",
	  .needs = NAMES("_ZN16QCoreApplication15notifyInternal2EP7QObjectP6QEvent"),
	  .rule = QT_STACK_RULE, .hook = jw_qt_hook, .why = jw_qt_why, .names = JW_NAMES_QT,
	  .callback_probes = true },
	{ .name = "qt", .library = "libQt6Core.so",
	  .needs = NAMES("_ZN16QCoreApplication15notifyInternal2EP7QObjectP6QEvent"),
	  .rule = QT_STACK_RULE, .hook = jw_qt_hook, .why = jw_qt_why, .names = JW_NAMES_QT,
	  .callback_probes = true },
	/*
	 * AOSP's native Looper (Android's libutils.so, Debian's android-libutils): each message and
	 * fd callback pollInner dispatches is a task, named by its handler's class and message. A
	 * program that runs it calls pollOnce or pollAll (an app: its runtime library does).
	 */
	{ .name = "android", .library = "libutils.so",
	  .needs = NAMES("_ZN7android6Looper8pollOnceEiPiS1_PPv"),
	  .imported = NAMES("_ZN7android6Looper8pollOnceEiPiS1_PPv",
			    "_ZN7android6Looper7pollAllEiPiS1_PPv"), .imported_by_any = true,
	  .rule = { .dispatch = "android::Looper::pollOnce(int, int*, int*, void**)" },
	  .hook = jw_looper_hook, .why = jw_looper_why, .names = JW_NAMES_LOOPER,
	  .callback_probes = true },
	/*
	 * A compositor: every client's request, by its interface and name. Mesa's EGL maps the
	 * server library into every GL program (GTK 4's too): the program must run the loop.
	 */
	{ .name = "wayland", .library = "libwayland-server.so",
	  .needs = NAMES("wl_event_loop_dispatch", "wl_display_run"),
	  .imported = NAMES("wl_display_run", "wl_event_loop_dispatch"), .imported_by_any = true,
	  .rule = { .dispatch = "wl_event_loop_dispatch" }, .sites = jw_sites_wayland,
	  .names = JW_NAMES_WAYLAND },
	/*
	 * PipeWire's main loop (a program that runs one: pw_main_loop_run), in libspa-support,
	 * which libpipewire opens once the program runs: each source's callback.
	 */
	{ .name = "pipewire", .library = "libspa-support.so",
	  .needs = NAMES("spa_handle_factory_enum"), .imported = NAMES("pw_main_loop_run"),
	  .rule = { .dispatch = "pw_main_loop_run",
		    .skip = NAMES("loop_iterate", "source_io_func", "source_idle_func",
				  "source_event_func", "source_timer_func", "source_signal_func") },
	  .hook = jw_pipewire_hook, .why = jw_pipewire_why, .callback_probes = true },
	/* GTK 4: GLib's loop, and a frame named by the frame clock's phase that took longest. */
	{ .name = "gtk", .library = "libgtk-4.so", .needs = NAMES("gdk_frame_clock_request_phase"),
	  .rule = { .dispatch = "g_main_context_dispatch",
		    .skip = NAMES("g_signal_", "g_closure_", "gtk_", "gdk_", "gsk_") },
	  .hook = jw_gtk_hook, .why = jw_gtk_why, .callback_probes = true },
	/* GTK, and Qt's default dispatcher. */
	{ .name = "glib", .library = "libglib-2.0.so", .needs = NAMES("g_main_context_dispatch"),
	  .rule = { .dispatch = "g_main_context_dispatch" }, .sites = jw_sites_glib },
	/* node links libuv in; its handlers are JS (named from its perf map). */
	{ .name = "node", .also_for = "libuv",
	  .needs = NAMES("uv_run", "uv__run_timers", "uv__io_poll"),
	  .rule = { .dispatch = "uv_run", .jit = true }, .sites = jw_sites_node },
	{ .name = "libuv", .library = "libuv.so", .needs = NAMES("uv_run"),
	  .rule = { .dispatch = "uv_run" }, .sites = jw_sites_libuv },
	/*
	 * systemd's: its own daemons link its private libsystemd-shared, other programs libsystemd;
	 * the sources' descriptions name the handlers. A program that runs the loop calls
	 * sd_event_run or sd_event_loop itself.
	 */
	{ .name = "sd-event", .library = "libsystemd-shared-*",
	  .needs = NAMES("sd_event_dispatch", "sd_event_source_get_description"),
	  .imported = NAMES("sd_event_run", "sd_event_loop"),
	  .rule = { .dispatch = "sd_event_dispatch" }, .sites = jw_sites_sdevent,
	  .names = JW_NAMES_SDEVENT },
	{ .name = "sd-event", .library = "libsystemd.so",
	  .needs = NAMES("sd_event_dispatch", "sd_event_source_get_description"),
	  .imported = NAMES("sd_event_run", "sd_event_loop"),
	  .rule = { .dispatch = "sd_event_dispatch" }, .sites = jw_sites_sdevent,
	  .names = JW_NAMES_SDEVENT },
	{ .name = "libev", .library = "libev.so", .needs = NAMES("ev_run", "ev_invoke_pending"),
	  .rule = { .dispatch = "ev_invoke_pending" }, .sites = jw_sites_libev,
	  .names = JW_NAMES_EV },
	{ .name = "libevent", .library = "libevent-2.1.so", .needs = NAMES("event_base_loop"),
	  .rule = { .dispatch = "event_base_loop" }, .sites = jw_sites_libevent },
	/*
	 * An nginx worker: ngx_process_events_and_timers holds the wait, so the waits bound the
	 * task; the handler is the first named function past the event and HTTP core plumbing
	 * (a module's handler, an output filter), in nginx or one of its modules.
	 */
	{ .name = "nginx",
	  .needs = NAMES("ngx_process_events_and_timers", "ngx_event_process_posted",
			 "ngx_http_core_run_phases"),
	  .rule = { .dispatch = "ngx_process_events_and_timers", .same_module = true,
		    .skip = NAMES("ngx_event_", "ngx_http_core_", "ngx_http_handler",
				  "ngx_http_process_request", "ngx_http_run_posted_requests",
				  "ngx_http_request_handler",
				  "ngx_http_read_client_request_body") },
	  .sites = jw_sites_nginx, .workers = jw_nginx_workers },
	/*
	 * Each command: call() calls the command's function (c->cmd->proc). call()'s probe runs per
	 * command, a handler site for handler_sites: past it, the stacks name the command.
	 */
	{ .name = "redis", .needs = NAMES("aeMain", "processCommand", "call"),
	  .rule = { .dispatch = "call", .same_module = true }, .hook = jw_redis_hook,
	  .why = jw_redis_why, .callback_probes = true },
	{ .name = "python", .library = "libpython3.*", .or_exe = true,
	  .needs = NAMES("_PyEval_EvalFrameDefault"),
	  .hook = jw_python_hook, .why = jw_python_why, .handler_addr_is_data = true },
};

#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

static const struct preset_desc *find(const char *name)
{
	size_t i;

	for (i = 0; name && i < N_PRESETS; i++)
		if (!strcmp(name, presets[i].name))
			return &presets[i];
	return NULL;
}

/* What a preset's row says of it, without looking at a process. */
static void fill(const struct preset_desc *d, struct jw_preset *out)
{
	memset(out, 0, sizeof(*out));
	out->name = d->name;
	out->handler_rule = d->rule.dispatch ? &d->rule : NULL;
	out->handler_addr_is_data = d->handler_addr_is_data;
	out->names = d->names;
	out->workers = d->workers;
	out->version = -1;
}

/* The file of process @pid that has every function @d needs, into @where. */
static bool find_where(pid_t pid, const char *exe, const struct preset_desc *d, char *where,
		       size_t len)
{
	if (d->library && !jw_target_find_mapping(pid, d->library, where, len) &&
	    jw_elf_has_functions(where, d->needs))
		return true;
	if (d->library && !d->or_exe)
		return false;
	snprintf(where, len, "%s", exe);
	return jw_elf_has_functions(where, d->needs);
}

struct importer {
	const char *skip;		/* the loop's own library */
	const char *const *names;
	bool found;
};

static bool imports(const char *path, void *ctx)
{
	struct importer *im = ctx;

	if (strcmp(path, im->skip) && jw_elf_imports_any(path, im->names))
		im->found = true;
	return im->found;
}

/* Whether process @pid runs loop @d's loop itself (--loop auto): it calls one of its functions. */
static bool runs_loop(pid_t pid, const char *exe, const struct preset_desc *d, const char *where)
{
	struct importer im = { .skip = where, .names = d->imported };

	if (!d->imported || jw_elf_imports_any(exe, d->imported))
		return true;
	return d->imported_by_any && !jw_target_each_code_file(pid, imports, &im) && im.found;
}

/* Whether process @pid runs loop @d; says why in @why, prefixed with @how. */
static bool detect(pid_t pid, const char *exe, const struct preset_desc *d, const char *how,
		   bool sites, struct jw_preset *out, char *why, size_t len)
{
	fill(d, out);
	if (!find_where(pid, exe, d, out->where, sizeof(out->where)) ||
	    (!strcmp(how, "auto") && !runs_loop(pid, exe, d, out->where)) ||
	    (d->hook && !d->hook(pid, exe, out)))
		return false;
	for (size_t k = 0; k < out->n_probes; k++)
		if (out->probes[k].per_callback && !d->callback_probes)
			jw_log(JW_LOG_WARN, "preset %s: a per-callback probe, but the table says "
			       "none (callback_probes)", d->name);
	if (d->hook && !sites) {
		/* handler_sites=0: none of its probes that run per callback; the stacks name */
		size_t k, kept = 0;

		for (k = 0; k < out->n_probes; k++)
			if (!out->probes[k].exact && !out->probes[k].per_callback)
				out->probes[kept++] = out->probes[k];
		out->n_probes = kept;
	}
	if (d->why) {
		d->why(out, how, why, len);
	} else {
		char note[256] = "";

		if (d->sites && !sites)
			snprintf(note, sizeof(note), "handler_sites=0: handlers named from the stacks");
		else if (d->sites && d->sites(out, note, sizeof(note)))
			snprintf(note + strlen(note), sizeof(note) - strlen(note),
				 ": handlers named from the stacks alone");
		else if (d->sites)
			jw_sites_place_exits(out);
		snprintf(why, len, "%s: %s has %s; the handler is the program's function it calls%s%s",
			 how, out->where, d->rule.dispatch, note[0] ? "; " : "", note);
	}
	return true;
}

/* "a, b and c" (@last: " and "), or "a, b or c". */
static void join(const char *const *names, const char *last, char *buf, size_t len)
{
	size_t n = 0, k;

	buf[0] = '\0';
	for (k = 0; names[k]; k++) {
		const char *sep = !k ? "" : names[k + 1] ? ", " : last;

		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s", sep, names[k]);
	}
}

/* What process @pid lacks to be loop @d, for the message of a --loop that does not fit. */
static void describe_missing(pid_t pid, const char *exe, const struct preset_desc *d, char *why,
			     size_t len)
{
	char names[256], libs[256], readable[4][128];
	const char *needs[5], *rows[5];
	size_t i, n = 0;

	/* The functions as C++ reads them; the libraries of each row of the preset (Qt 5, 6). */
	for (i = 0; d->needs[i] && i < 4; i++)
		needs[i] = jw_demangle(d->needs[i], readable[i], sizeof(readable[i])) ? readable[i] :
										       d->needs[i];
	needs[i] = NULL;
	join(needs, " and ", names, sizeof(names));
	for (i = 0; i < N_PRESETS && n < 4; i++)
		if (!strcmp(presets[i].name, d->name) && presets[i].library)
			rows[n++] = presets[i].library;
	rows[n] = NULL;
	join(rows, " or ", libs, sizeof(libs));
	if (d->library && d->or_exe)
		snprintf(why, len, "--loop %s: neither %s nor a %s that pid %d maps has %s", d->name,
			 exe, libs, pid, names);
	else if (d->library)
		snprintf(why, len, "--loop %s: pid %d maps no %s with %s", d->name, pid, libs, names);
	else
		snprintf(why, len, "--loop %s: %s does not export %s", d->name, exe, names);
}

int jw_preset_detect(pid_t pid, const char *exe, const char *loop, bool sites,
		     struct jw_preset *out, char *why, size_t len)
{
	bool any = false;
	size_t i;

	if (!strcmp(loop, JW_LOOP_AUTO)) {
		for (i = 0; i < N_PRESETS; i++)
			if (detect(pid, exe, &presets[i], "auto", sites, out, why, len))
				return 0;
	} else if (strcmp(loop, JW_LOOP_SYSCALL)) {
		for (i = 0; i < N_PRESETS; i++) {
			const struct preset_desc *d = &presets[i];

			if (strcmp(loop, d->name) && !(d->also_for && !strcmp(loop, d->also_for)))
				continue;
			any = true;
			if (detect(pid, exe, d, "as asked", sites, out, why, len))
				return 0;
		}
		if (any)
			describe_missing(pid, exe, find(loop), why, len);
		else
			snprintf(why, len, "--loop %s: no such preset", loop);
		memset(out, 0, sizeof(*out));
		out->name = JW_LOOP_SYSCALL;
		return -ENOENT;
	}
	memset(out, 0, sizeof(*out));
	out->name = JW_LOOP_SYSCALL;
	snprintf(why, len, "%s", !strcmp(loop, JW_LOOP_AUTO) ? "auto: no preset for this program" :
								"as asked");
	return 0;
}

int jw_preset_by_name(const char *name, struct jw_preset *out)
{
	const struct preset_desc *d = find(name);

	if (!d) {
		memset(out, 0, sizeof(*out));
		out->name = name;
		return -ENOENT;
	}
	fill(d, out);
	return 0;
}

bool jw_loop_known(const char *name)
{
	return !strcmp(name, JW_LOOP_AUTO) || !strcmp(name, JW_LOOP_SYSCALL) || find(name);
}

void jw_presets_with_sites(char *buf, size_t len)
{
	const char *names[N_PRESETS + 1];
	size_t i, n = 0;

	for (i = 0; i < N_PRESETS; i++)
		if ((presets[i].sites || presets[i].callback_probes) &&
		    (!n || strcmp(presets[i].name, names[n - 1])))
			names[n++] = presets[i].name;
	names[n] = NULL;
	join(names, " and ", buf, len);
}

void jw_loop_names(char *buf, size_t len)
{
	const char *names[N_PRESETS + 3];
	size_t i;

	size_t n = 2;

	names[0] = JW_LOOP_AUTO;
	names[1] = JW_LOOP_SYSCALL;
	for (i = 0; i < N_PRESETS; i++)
		if (!i || strcmp(presets[i].name, presets[i - 1].name))
			names[n++] = presets[i].name;	/* a preset of two rows (qt) once */
	names[n] = NULL;
	join(names, " or ", buf, len);
}

static bool skipped(const struct jw_stack_rule *rule, const char *symbol)
{
	const char *const *p;

	for (p = rule->skip; p && *p; p++)
		if (!strncmp(symbol, *p, strlen(*p)))
			return true;
	return false;
}

enum js_verdict {
	JS_CONSIDER,	/* as any rule does */
	JS_PASS,	/* V8's own code: no handler, the search goes on */
	JS_END,		/* the search ends: no handler below */
};

/*
 * How node's rule takes frame @f below uv_run, in module @loop; @in_js: whether JS ran above it
 * (updated).
 * - JIT code with no source is V8's: its builtins (JSEntry, the interpreter's trampoline), which
 *   Node 22 runs from a copy beside its JIT code that the perf map names ("Builtin:JSEntry"),
 *   where Node 20 runs them from the executable (named Builtins_JSEntry there).
 * - Code that nothing names is JS with no name: what it calls is no handler. It is in no module,
 *   or in node's: libdwfl spans a module from its file's first mapping to its last, and V8 maps
 *   node's builtins again beside its JIT code, so the JIT code falls in node's span.
 * - Once JS ran, native code in another module (the C library, the vdso, an addon) is what the
 *   JS called: no handler either (node's own C++ may call JS again: promise jobs).
 */
static enum js_verdict js_frame(const struct jw_frame *f, const char *loop, bool *in_js)
{
	if (f->kind == JW_FRAME_JIT) {
		*in_js = true;
		return f->src ? JS_CONSIDER : JS_PASS;
	}
	if (f->kind != JW_FRAME_NATIVE)
		return JS_CONSIDER;
	if (!f->symbol)
		return !f->module || f->module == loop ? JS_END : JS_CONSIDER;
	if (!strncmp(f->symbol, "Builtins_", 9))
		*in_js = true;
	return *in_js && f->module != loop ? JS_END : JS_CONSIDER;
}

int jw_stack_rule_handler(const struct jw_stack_rule *rule, const struct jw_frame *frames,
			  size_t n)
{
	bool in_js = false;
	size_t i, j;

	for (i = 0; i < n; i++)
		if (frames[i].symbol && !strcmp(frames[i].symbol, rule->dispatch))
			break;
	for (j = i + 1; j < n; j++) {
		const struct jw_frame *f = &frames[j];

		if (f->kind == JW_FRAME_KERNEL)
			return -1;
		if (rule->jit) {
			enum js_verdict v = js_frame(f, frames[i].module, &in_js);

			if (v == JS_END)
				return -1;
			if (v == JS_PASS)
				continue;
		}
		/* node's own JS (its timers, its streams) is not the program's handler. */
		if (f->kind == JW_FRAME_JIT && f->src && !strncmp(f->src, "node:", 5))
			continue;
		if (!f->symbol || (!rule->same_module && f->module == frames[i].module) ||
		    skipped(rule, f->symbol))
			continue;
		return j;
	}
	return -1;
}

