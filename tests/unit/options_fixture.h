/* SPDX-License-Identifier: GPL-2.0-only */
/* The fixture test_params.c and test_options.c share: a config, parameters, argv, a config file. */
#ifndef JW_TEST_OPTIONS_FIXTURE_H
#define JW_TEST_OPTIONS_FIXTURE_H

#define ERR_LEN 1024
#define MAX_ARGS 80

/* Each test owns one of these; teardown frees the config and removes the temp file. */
struct fixture {
	struct jw_config cfg;
	struct jw_params params;
	char err[ERR_LEN];
	char path[64];		/* a temp config file, "" when none */
	char *argv[MAX_ARGS];
	int argc;
};

static inline int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	jw_params_defaults(&fx->params);
	*state = fx;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *fx = *state;

	jw_config_free(&fx->cfg);
	if (fx->path[0])
		unlink(fx->path);
	free(fx);
	return 0;
}

static inline void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" does not contain \"%s\"", hay, needle);
}

/* Every message is a single line with no "jankwatch: " prefix (the caller adds it). */
static inline void assert_one_line(const char *msg)
{
	assert_true(msg[0] != '\0');
	assert_null(strchr(msg, '\n'));
	assert_null(strstr(msg, "jankwatch:"));
}

static inline void set_ok(struct fixture *fx, const char *kv)
{
	int ret = jw_params_set(&fx->params, kv, fx->err, sizeof(fx->err));

	if (ret)
		fail_msg("%s: expected success, got %d: %s", kv, ret, fx->err);
}

/* Asserts that @kv is refused with a one-line message containing @want, and changes nothing. */
static inline void set_fails(struct fixture *fx, const char *kv, const char *want)
{
	struct jw_params before = fx->params;

	fx->err[0] = '\0';
	if (jw_params_set(&fx->params, kv, fx->err, sizeof(fx->err)) != -EINVAL)
		fail_msg("%s: expected -EINVAL", kv);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
	assert_memory_equal(&before, &fx->params, sizeof(before));
}

/* Builds argv from "jankwatch" and the NULL-terminated arguments, then parses it. */
static inline int parse(struct fixture *fx, ...)
{
	const char *a;
	va_list ap;

	jw_config_free(&fx->cfg);
	fx->argc = 0;
	fx->argv[fx->argc++] = "jankwatch";
	va_start(ap, fx);
	while ((a = va_arg(ap, const char *)) && fx->argc < MAX_ARGS - 1)
		fx->argv[fx->argc++] = (char *)a;
	va_end(ap);
	fx->argv[fx->argc] = NULL;
	fx->err[0] = '\0';
	return jw_options_parse(&fx->cfg, fx->argc, fx->argv, fx->err, sizeof(fx->err));
}

#define PARSE(fx, ...) parse(fx, __VA_ARGS__, (const char *)NULL)

static inline void parse_ok(struct fixture *fx, int ret)
{
	if (ret)
		fail_msg("expected success, got %d: %s", ret, fx->err);
}

static inline void parse_fails(struct fixture *fx, int ret, const char *want)
{
	if (ret != -EINVAL)
		fail_msg("expected -EINVAL, got %d (err \"%s\")", ret, fx->err);
	assert_one_line(fx->err);
	assert_contains(fx->err, want);
}

/* Writes @text to a new temp file and remembers it for teardown. */
static inline void write_config(struct fixture *fx, const char *text)
{
	int fd;

	strcpy(fx->path, "/tmp/jw_test_options_XXXXXX");
	fd = mkstemp(fx->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

/* --- parameter ranges --- */

#endif
