// SPDX-License-Identifier: GPL-2.0-only
/*
 * The watch command line -> struct jw_config: the targets, the hooks, the outputs, the policy
 * parameters from --config and --set (params.c), every option's checks (the usage text:
 * usage.c).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/places.h"
#include "config/cli.h"
#include "config/options.h"
#include "loops/presets.h"
#include "process/names.h"

#define JW_MAX_DURATION_S 31536000.0	/* one year */
#define JW_PID_MAX 4194304		/* PID_MAX_LIMIT: no kernel hands out a larger PID */
#define JW_MSG_MAX 512


static int set_string(char **dst, const char *opt, const char *val, char *err, size_t errlen);

/* One more executable to watch: --exe PATH, or a config file's exe=PATH (@how: "--exe ", "exe="). */
static int add_exe(struct jw_config *cfg, const char *how, const char *path, char *err,
		   size_t errlen)
{
	if (cfg->n_exes == JW_MAX_EXES) {
		jw_set_err(err, errlen, "%s%s: at most %d executables", how, path, JW_MAX_EXES);
		return -EINVAL;
	}
	cfg->exes[cfg->n_exes] = strdup(path);
	if (!cfg->exes[cfg->n_exes])
		return -ENOMEM;
	cfg->n_exes++;
	return 0;
}

/* One more process name to watch: --name NAME, or a config file's name=NAME (@how: "--name",
 * "name= line"). */
static int add_name(struct jw_config *cfg, const char *how, const char *name, char *err,
		    size_t errlen)
{
	char msg[JW_MSG_MAX];

	if (jw_name_check(name, msg, sizeof(msg))) {
		jw_set_err(err, errlen, "%s: %s", how, msg);
		return -EINVAL;
	}
	if (cfg->n_names == JW_MAX_NAMES) {
		jw_set_err(err, errlen, "%s %s: at most %d names", how, name, JW_MAX_NAMES);
		return -EINVAL;
	}
	cfg->names[cfg->n_names] = strdup(name);
	if (!cfg->names[cfg->n_names])
		return -ENOMEM;
	cfg->n_names++;
	return 0;
}

/* A setting whose value is text (metrics_textfile, metrics_listen): 1 if @key is one. */
static int text_setting(struct jw_config *cfg, const char *key, const char *value, char *err,
			size_t errlen)
{
	char **dst = !strcmp(key, "metrics_textfile") ? &cfg->metrics_textfile :
		     !strcmp(key, "metrics_listen") ? &cfg->metrics_listen : NULL;
	int ret;

	if (!dst)
		return 0;
	free(*dst);
	*dst = NULL;
	/* An empty value turns it off (a --set over a config file's). */
	if (!*value)
		return 1;
	ret = set_string(dst, key, value, err, errlen);
	return ret ? ret : 1;
}

/*
 * A config file's line that is no parameter: exe=PATH, name=NAME, log_dir=PATH unless --log-dir was
 * given, metrics_textfile=PATH, metrics_listen=ADDR:PORT.
 */
static int config_line(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	struct jw_config *cfg = ctx;
	int ret = text_setting(cfg, key, value, err, errlen);

	if (ret)
		return ret < 0 ? ret : 0;

	if (!strcmp(key, "exe")) {
		if (!*value) {
			jw_set_err(err, errlen, "exe='': empty value");
			return -EINVAL;
		}
		return add_exe(cfg, "exe=", value, err, errlen);
	}
	if (!strcmp(key, "name"))
		return add_name(cfg, "name= line", value, err, errlen);
	if (cfg->log_dir_given)
		return 0;	/* --log-dir wins */
	return set_string(&cfg->log_dir, "log_dir", value, err, errlen);
}

void jw_config_free(struct jw_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->n_probes; i++) {
		free(cfg->probes[i].bin);
		free(cfg->probes[i].entry);
		free(cfg->probes[i].exit);
	}
	memset(cfg->probes, 0, sizeof(cfg->probes));
	cfg->n_probes = 0;
	free(cfg->thread);
	free(cfg->config_file);
	free(cfg->log_dir);
	free(cfg->raw_file);
	free(cfg->debug_dir);
	free(cfg->btf);
	free(cfg->user);
	free(cfg->metrics_textfile);
	free(cfg->metrics_listen);
	for (i = 0; i < cfg->n_exes; i++) {
		free(cfg->exes[i]);
		cfg->exes[i] = NULL;
	}
	cfg->n_exes = 0;
	for (i = 0; i < cfg->n_names; i++) {
		free(cfg->names[i]);
		cfg->names[i] = NULL;
	}
	cfg->n_names = 0;
	/* Cleared so that a second free, or a free after a failed parse, is harmless. */
	cfg->thread = NULL;
	cfg->config_file = NULL;
	cfg->log_dir = NULL;
	cfg->raw_file = NULL;
	cfg->debug_dir = NULL;
	cfg->btf = NULL;
	cfg->user = NULL;
	cfg->metrics_textfile = NULL;
	cfg->metrics_listen = NULL;
	cfg->cmd = NULL;
}

/* The --set values, applied after --config whatever the argument order. */
struct pending_sets {
	const char **kv;
	size_t n;
	char **owned;		/* "stack_bytes=N" strings made from --stack-bytes */
	size_t n_owned;
};

static int add_pid(struct jw_config *cfg, pid_t pid)
{
	size_t i;

	for (i = 0; i < cfg->n_pids; i++)
		if (cfg->pids[i] == pid)
			return 0;
	if (cfg->n_pids == JW_MAX_PIDS)
		return -ENOSPC;
	cfg->pids[cfg->n_pids++] = pid;
	return 0;
}

/* -p PID[,PID...]; a PID given twice is watched once. */
static int add_pids(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *p = arg;
	char *end;
	long v;

	for (;;) {
		errno = 0;
		v = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : 0;
		if (!isdigit((unsigned char)*p) || errno || v < 1 || v > JW_PID_MAX ||
		    (*end && *end != ',')) {
			jw_set_err(err, errlen, "-p %s: bad PID '%.*s', allowed 1..%d", arg,
				(int)strcspn(p, ","), p, JW_PID_MAX);
			return -EINVAL;
		}
		if (add_pid(cfg, (pid_t)v)) {
			jw_set_err(err, errlen, "-p %s: too many PIDs, at most %d", arg, JW_MAX_PIDS);
			return -EINVAL;
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* --probe BIN:ENTRY[:EXIT]; BIN cannot hold a ':' since the first one ends it. */
static int add_probe(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *c1 = strchr(arg, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct jw_probe_spec *ps;

	if (!c1 || c1 == arg || !c1[1] || c2 == c1 + 1 || (c2 && (!c2[1] || strchr(c2 + 1, ':')))) {
		jw_set_err(err, errlen, "--probe %s: expected BIN:ENTRY[:EXIT] with no empty part",
			arg);
		return -EINVAL;
	}
	if (cfg->n_probes == JW_MAX_PROBE_SPECS) {
		jw_set_err(err, errlen, "--probe %s: too many probes, at most %d", arg,
			JW_MAX_PROBE_SPECS);
		return -EINVAL;
	}
	ps = &cfg->probes[cfg->n_probes];
	ps->bin = strndup(arg, c1 - arg);
	ps->entry = c2 ? strndup(c1 + 1, c2 - c1 - 1) : strdup(c1 + 1);
	ps->exit = c2 ? strdup(c2 + 1) : NULL;
	if (!ps->bin || !ps->entry || (c2 && !ps->exit))
		goto err_free;
	cfg->n_probes++;
	return 0;

err_free:
	free(ps->bin);
	free(ps->entry);
	free(ps->exit);
	memset(ps, 0, sizeof(*ps));
	jw_set_err(err, errlen, "--probe %s: out of memory", arg);
	return -ENOMEM;
}

/* Replaces *@dst with a copy of a non-empty @val; a repeated option takes the last value. */
static int set_string(char **dst, const char *opt, const char *val, char *err, size_t errlen)
{
	char *copy;

	if (!*val) {
		jw_set_err(err, errlen, "%s '': empty value", opt);
		return -EINVAL;
	}
	copy = strdup(val);
	if (!copy) {
		jw_set_err(err, errlen, "%s %s: out of memory", opt, val);
		return -ENOMEM;
	}
	free(*dst);
	*dst = copy;
	return 0;
}

/*
 * --format LIST: tree or folded for the stack logs; pprof for a profile beside each, svg for a
 * flame graph.
 */
int jw_options_format(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	char list[64], *save = NULL, *item;
	bool stack_format = false;

	if (strlen(arg) >= sizeof(list) || !*arg) {
		jw_set_err(err, errlen, "--format '%s': give tree, folded, svg or pprof "
			   "(comma-separated)", arg);
		return -EINVAL;
	}
	strcpy(list, arg);
	cfg->format = JW_FORMAT_TREE;
	cfg->pprof = false;
	cfg->svg = false;
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (!strcmp(item, "pprof")) {
			cfg->pprof = true;
			continue;
		}
		if (!strcmp(item, "svg")) {
			cfg->svg = true;
			continue;
		}
		if (strcmp(item, "tree") && strcmp(item, "folded")) {
			jw_set_err(err, errlen, "--format %s: unknown format '%s', allowed tree, "
				   "folded, svg and pprof", arg, item);
			return -EINVAL;
		}
		if (stack_format) {
			jw_set_err(err, errlen, "--format %s: tree and folded are both stack log "
				   "formats; give one", arg);
			return -EINVAL;
		}
		stack_format = true;
		cfg->format = !strcmp(item, "tree") ? JW_FORMAT_TREE : JW_FORMAT_FOLDED;
	}
	return 0;
}

static int set_loop(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	char names[256];

	if (!jw_loop_known(arg)) {
		jw_loop_names(names, sizeof(names));
		jw_set_err(err, errlen, "--loop %s: unknown loop, allowed %s", arg, names);
		return -EINVAL;
	}
	cfg->loop = arg;
	cfg->loop_given = true;
	return 0;
}

static int set_unwind(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	static const char *const names[] = {
		[JW_UNWIND_MODE_AUTO] = "auto",
		[JW_UNWIND_MODE_FP] = "fp",
		[JW_UNWIND_MODE_DWARF] = "dwarf",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			cfg->unwind = i;
			return 0;
		}
	}
	jw_set_err(err, errlen, "--unwind %s: unknown mode, allowed auto, fp or dwarf", arg);
	return -EINVAL;
}

/*
 * Digits with at most one '.': no "inf", "1e3", "0x10" or spaces. Computed by hand since
 * strtod() follows LC_NUMERIC, and "0.5" must mean half a second in every locale.
 * Returns a negative value when @s is not such a number.
 */
static double parse_decimal(const char *s)
{
	double v = 0, scale = 1;
	bool digits = false, dot = false;

	for (; *s; s++) {
		if (*s == '.' && !dot) {
			dot = true;
		} else if (isdigit((unsigned char)*s)) {
			digits = true;
			if (dot) {
				scale /= 10;
				v += (*s - '0') * scale;
			} else {
				v = v * 10 + (*s - '0');
			}
		} else {
			return -1;
		}
	}
	return digits ? v : -1;
}

static int set_duration(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	double v = parse_decimal(arg);

	if (v < 0) {
		jw_set_err(err, errlen,
			"--duration %s: not a number of seconds, allowed > 0 up to %.0f", arg,
			JW_MAX_DURATION_S);
		return -EINVAL;
	}
	if (v == 0 || v > JW_MAX_DURATION_S) {
		jw_set_err(err, errlen, "--duration %s: out of range, allowed > 0 up to %.0f", arg,
			JW_MAX_DURATION_S);
		return -EINVAL;
	}
	cfg->duration_s = v;
	return 0;
}

/* --thread TID|NAME: all digits is a TID and must be one; any other text is a thread name. */
static int set_thread(struct jw_config *cfg, const char *arg, char *err, size_t errlen)
{
	long tid;

	if (arg[0] && arg[strspn(arg, "0123456789")] == '\0') {
		errno = 0;
		tid = strtol(arg, NULL, 10);
		if (errno || tid < 1 || tid > JW_PID_MAX) {
			jw_set_err(err, errlen, "--thread %s: bad TID, allowed 1..%d or a thread name",
				arg, JW_PID_MAX);
			return -EINVAL;
		}
	}
	return set_string(&cfg->thread, "--thread", arg, err, errlen);
}

/* getopt's '?' and ':' turned into one line naming the option. */
static int bad_option(int c, char **argv, char *err, size_t errlen)
{
	const char *arg = argv[optind - 1];

	if (c == ':' && optopt > 0 && optopt < 256)
		jw_set_err(err, errlen, "option -%c needs an argument", optopt);
	else if (c == ':')
		jw_set_err(err, errlen, "option --%s needs an argument", jw_cli_long_name(jw_cli_cmd(""), optopt));
	else if (optopt && !strncmp(arg, "--", 2))
		jw_set_err(err, errlen, "option %.*s takes no argument", (int)strcspn(arg, "="), arg);
	else if (optopt > 0)
		jw_set_err(err, errlen, "unknown option -%c", optopt);
	else
		jw_set_err(err, errlen, "unknown or ambiguous option %s", arg);
	return -EINVAL;
}

static int handle_option(struct jw_config *cfg, struct pending_sets *sets, int c, char **argv,
			 char *err, size_t errlen)
{
	switch (c) {
	case 'p':
		return add_pids(cfg, optarg, err, errlen);
	case JW_OPT_PROBE:
		return add_probe(cfg, optarg, err, errlen);
	case JW_OPT_THREAD:
		return set_thread(cfg, optarg, err, errlen);
	case JW_OPT_SET:
		sets->kv[sets->n++] = optarg;
		return 0;
	case JW_OPT_CONFIG:
		return set_string(&cfg->config_file, "--config", optarg, err, errlen);
	case JW_OPT_ALL:
		cfg->all = true;
		return 0;
	case JW_OPT_DEV:
		cfg->dev = true;
		return 0;
	case JW_OPT_LOG_DIR:
		cfg->log_dir_given = true;
		return set_string(&cfg->log_dir, "--log-dir", optarg, err, errlen);
	case JW_OPT_FORMAT:
		return jw_options_format(cfg, optarg, err, errlen);
	case JW_OPT_DURATION:
		return set_duration(cfg, optarg, err, errlen);
	case JW_OPT_UNWIND:
		return set_unwind(cfg, optarg, err, errlen);
	case JW_OPT_RAW:
		return set_string(&cfg->raw_file, "--raw", optarg, err, errlen);
	case JW_OPT_DEBUG_DIR:
		return set_string(&cfg->debug_dir, "--debug-dir", optarg, err, errlen);
	case JW_OPT_BTF:
		return set_string(&cfg->btf, "--btf", optarg, err, errlen);
	case JW_OPT_LOOP:
		return set_loop(cfg, optarg, err, errlen);
	case JW_OPT_USER:
		return set_string(&cfg->user, "--user", optarg, err, errlen);
	case JW_OPT_EXE:
		return add_exe(cfg, "--exe ", optarg, err, errlen);
	case JW_OPT_NAME:
		return add_name(cfg, "--name", optarg, err, errlen);
	case JW_OPT_FOLLOW:
		cfg->follow = true;
		return 0;
	case JW_OPT_DRY_RUN:
		cfg->dry_run = true;
		return 0;
	case JW_OPT_STACK_BYTES:
		/* The same parameter as --set stack_bytes=N, queued with the --set values. */
		if (asprintf(&sets->owned[sets->n_owned], "stack_bytes=%s", optarg) < 0)
			return -ENOMEM;
		sets->kv[sets->n++] = sets->owned[sets->n_owned++];
		return 0;
	case 'v':
		cfg->verbosity++;
		return 0;
	case 'q':
		cfg->verbosity = -1;
		return 0;
	case 'h':
		if (!strcmp(argv[0], "top"))
			jw_cli_help(jw_cli_cmd("top"), stdout);
		else
			jw_options_usage(stdout);
		cfg->help = true;
		return 0;
	case JW_OPT_VERSION:
		jw_options_version(stdout);
		cfg->help = true;
		return 0;
	default:
		return bad_option(c, argv, err, errlen);
	}
}

static int parse_argv(struct jw_config *cfg, struct pending_sets *sets, int argc, char **argv,
		      char *err, size_t errlen)
{
	struct option long_opts[64];
	char short_opts[32];
	int c, ret;

	/* '+': stop at the first non-option so it can be refused; ':': getopt prints nothing. */
	if (jw_cli_getopt(jw_cli_cmd(""), "+:", long_opts, 64, short_opts, sizeof(short_opts)))
		return -ENOSPC;
	/* 0, not 1: glibc then starts afresh, so the parser can run more than once. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		ret = handle_option(cfg, sets, c, argv, err, errlen);
		if (ret || cfg->help)
			return ret;
	}
	/* "--" ends the options: what follows is a program to start and watch. */
	if (optind < argc && optind > 0 && !strcmp(argv[optind - 1], "--")) {
		cfg->cmd = &argv[optind];
		optind = argc;
	}
	if (optind < argc) {
		jw_set_err(err, errlen, "unexpected argument '%s' (give processes with -p PID, or "
			"a program after --)", argv[optind]);
		return -EINVAL;
	}
	if (!cfg->n_pids && !cfg->cmd && !cfg->n_exes && !cfg->n_names && !cfg->config_file) {
		jw_set_err(err, errlen, "no target: give -p PID, --exe PATH, --name NAME, or -- CMD "
			   "[ARGS...]");
		return -EINVAL;
	}
	if (cfg->n_pids && cfg->cmd) {
		jw_set_err(err, errlen, "give -p PID or -- CMD, not both");
		return -EINVAL;
	}
	if (cfg->follow && !cfg->n_pids) {
		jw_set_err(err, errlen, "--follow: only with -p PID (-- CMD, --exe and --name "
			   "follow their processes' children already)");
		return -EINVAL;
	}
	if (cfg->user && !cfg->cmd) {
		jw_set_err(err, errlen, "--user %s: only for a program started with -- CMD",
			cfg->user);
		return -EINVAL;
	}
	if (cfg->n_probes && strcmp(cfg->loop, JW_LOOP_AUTO) && !jw_loop_is_syscall(cfg->loop)) {
		jw_set_err(err, errlen, "--loop %s and --probe: give one way to hook the loop",
			   cfg->loop);
		return -EINVAL;
	}
	return 0;
}

/* The config file first, then every --set on top of it, then the cross-parameter checks. */
static int apply_params(struct jw_config *cfg, const struct pending_sets *sets, char *err,
			size_t errlen)
{
	char msg[JW_MSG_MAX];
	size_t i;
	int ret;

	if (cfg->config_file) {
		ret = jw_params_read_file(&cfg->params, cfg->config_file, config_line, cfg, err,
					  errlen);
		if (ret)
			return ret == -ENOMEM ? ret : -EINVAL;
		if (!cfg->n_pids && !cfg->cmd && !cfg->n_exes && !cfg->n_names) {
			jw_set_err(err, errlen, "no target: give -p PID, --exe PATH, --name NAME, or "
				   "-- CMD [ARGS...], or exe=PATH or name=NAME lines in %s",
				   cfg->config_file);
			return -EINVAL;
		}
	}
	for (i = 0; i < sets->n; i++) {
		const char *eq = strchr(sets->kv[i], '=');
		char key[32];

		if (eq && (size_t)(eq - sets->kv[i]) < sizeof(key)) {
			memcpy(key, sets->kv[i], (size_t)(eq - sets->kv[i]));
			key[eq - sets->kv[i]] = 0;
			ret = text_setting(cfg, key, eq + 1, msg, sizeof(msg));
			if (ret < 0) {
				jw_set_err(err, errlen, "--set %s", msg);
				return ret;
			}
			if (ret)
				continue;
		}
		ret = jw_params_set(&cfg->params, sets->kv[i], msg, sizeof(msg));
		if (ret) {
			jw_set_err(err, errlen, "--set %s", msg);
			return ret;
		}
	}
	return jw_params_finish(&cfg->params, err, errlen);
}

/* The log directory when --log-dir is not given: /var/log/jankwatch, or a device's (places.h). */
static char *default_log_dir(void)
{
	char dir[PATH_MAX];

	jw_place_default(JW_PLACE_LOG, NULL, dir, sizeof(dir));
	return strdup(dir);
}

int jw_options_parse(struct jw_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	struct pending_sets sets = { 0 };
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	jw_params_defaults(&cfg->params);
	cfg->loop = JW_LOOP_AUTO;
	cfg->log_dir = default_log_dir();
	/* At most one --set per argument. */
	sets.kv = calloc(argc > 0 ? argc : 1, sizeof(*sets.kv));
	sets.owned = calloc(argc > 0 ? argc : 1, sizeof(*sets.owned));
	if (!cfg->log_dir || !sets.kv || !sets.owned) {
		jw_set_err(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ret = parse_argv(cfg, &sets, argc, argv, err, errlen);
	if (ret || cfg->help)
		goto out;
	ret = apply_params(cfg, &sets, err, errlen);
	cfg->argc = argc;
	cfg->argv = argv;
out:
	while (sets.n_owned)
		free(sets.owned[--sets.n_owned]);
	free(sets.owned);
	free(sets.kv);
	if (ret)
		jw_config_free(cfg);
	return ret;
}

int jw_options_reload(const struct jw_config *cfg, struct jw_params *out, char *err,
		      size_t errlen)
{
	struct jw_config again;
	int ret;

	/* getopt keeps its place between calls: the parse starts it afresh itself. */
	ret = jw_options_parse(&again, cfg->argc, cfg->argv, err, errlen);
	if (ret)
		return ret;
	*out = again.params;
	jw_config_free(&again);
	return 0;
}
