// SPDX-License-Identifier: GPL-2.0-only
/*
 * `--user USER[:GROUP]` resolved from passwd and group files of the test's own (no name
 * service): names, numbers, a uid with no entry, groups by membership, and the bad specs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/accounts.h"

struct fixture {
	char dir[64];
	char passwd[128];
	char group[128];
	struct jw_account_files files;
	struct jw_account a;
	char err[256];
};

static const char passwd_text[] =
	"root:x:0:0:root:/root:/bin/sh\n"
	"# a comment line\n"
	"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	"broken:x:notanumber:1::/:/bin/false\n"
	"alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
	"shell:x:2000:2000::/data:/system/bin/sh\n"
	"short:x\n"
	"1001:x:1500:1500:a user named by digits:/:/bin/sh";	/* no newline at the end */

static const char group_text[] =
	"root:x:0:\n"
	"adm:x:4:alice,bob\n"
	"audio:x:29:bob,alice\n"
	"alice:x:1000:\n"
	"video:x:44:alicette\n"
	"inet:x:3003:shell\n"
	"bad:x:oops:alice\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/jw-accounts-XXXXXX");
	if (!mkdtemp(fx->dir))
		goto err_free;
	snprintf(fx->passwd, sizeof(fx->passwd), "%s/passwd", fx->dir);
	snprintf(fx->group, sizeof(fx->group), "%s/group", fx->dir);
	if (write_file(fx->passwd, passwd_text) || write_file(fx->group, group_text))
		goto err_free;
	fx->files.passwd = fx->passwd;
	fx->files.group = fx->group;
	*state = fx;
	return 0;

err_free:
	free(fx);
	return -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->passwd);
	unlink(fx->group);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static int resolve(struct fixture *fx, const char *spec)
{
	fx->err[0] = '\0';
	return jw_account_resolve(spec, &fx->files, &fx->a, fx->err, sizeof(fx->err));
}

static void assert_groups(const struct jw_account *a, int n, const gid_t *want)
{
	int i;

	assert_int_equal(a->ngroups, n);
	for (i = 0; i < n; i++)
		assert_int_equal(a->groups[i], want[i]);
}

static void test_by_name(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(resolve(fx, "alice"), 0);
	assert_int_equal(fx->a.uid, 1000);
	assert_int_equal(fx->a.gid, 1000);
	assert_string_equal(fx->a.name, "alice");
	/* Its gid first, then each group listing it (not "alicette"'s, not the bad entry's). */
	assert_groups(&fx->a, 3, (const gid_t[]){ 1000, 4, 29 });
	assert_int_equal(resolve(fx, "daemon"), 0);
	assert_int_equal(fx->a.uid, 1);
	assert_groups(&fx->a, 1, (const gid_t[]){ 1 });
}

static void test_by_number(void **state)
{
	struct fixture *fx = *state;

	/* A uid with an entry takes the entry's gid and groups. */
	assert_int_equal(resolve(fx, "2000"), 0);
	assert_int_equal(fx->a.uid, 2000);
	assert_int_equal(fx->a.gid, 2000);
	assert_string_equal(fx->a.name, "shell");
	assert_groups(&fx->a, 2, (const gid_t[]){ 2000, 3003 });
	/* A uid with none: gid = uid, no other group, no name. */
	assert_int_equal(resolve(fx, "10123"), 0);
	assert_int_equal(fx->a.uid, 10123);
	assert_int_equal(fx->a.gid, 10123);
	assert_string_equal(fx->a.name, "");
	assert_groups(&fx->a, 1, (const gid_t[]){ 10123 });
	/* A name made of digits is a name first. */
	assert_int_equal(resolve(fx, "1001"), 0);
	assert_int_equal(fx->a.uid, 1500);
}

static void test_user_and_group(void **state)
{
	struct fixture *fx = *state;

	/* Both numbers: exactly those, the group the only one. */
	assert_int_equal(resolve(fx, "1000:1000"), 0);
	assert_int_equal(fx->a.uid, 1000);
	assert_int_equal(fx->a.gid, 1000);
	assert_groups(&fx->a, 1, (const gid_t[]){ 1000 });
	assert_int_equal(resolve(fx, "alice:audio"), 0);
	assert_int_equal(fx->a.uid, 1000);
	assert_int_equal(fx->a.gid, 29);
	assert_groups(&fx->a, 1, (const gid_t[]){ 29 });
	assert_int_equal(resolve(fx, "4242:4343"), 0);
	assert_int_equal(fx->a.uid, 4242);
	assert_int_equal(fx->a.gid, 4343);
}

static void test_no_files(void **state)
{
	struct fixture *fx = *state;
	struct jw_account_files none = { "/nonexistent/passwd", "/nonexistent/group" };

	/* A device without /etc/passwd: numbers only, and a name is said to be missing there. */
	assert_int_equal(jw_account_resolve("1000:1000", &none, &fx->a, fx->err, sizeof(fx->err)),
			 0);
	assert_int_equal(fx->a.uid, 1000);
	assert_int_equal(fx->a.gid, 1000);
	assert_int_equal(jw_account_resolve("shell", &none, &fx->a, fx->err, sizeof(fx->err)),
			 -ESRCH);
	assert_string_equal(fx->err, "--user shell: no user shell in /nonexistent/passwd, and not "
			    "a number");
}

static void test_bad_specs(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(resolve(fx, "nosuchuser"), -ESRCH);
	assert_non_null(strstr(fx->err, "no user nosuchuser in"));
	assert_int_equal(resolve(fx, "alice:nosuchgroup"), -ESRCH);
	assert_non_null(strstr(fx->err, "no group nosuchgroup in"));
	assert_int_equal(resolve(fx, ""), -EINVAL);
	assert_int_equal(resolve(fx, ":1000"), -EINVAL);
	assert_int_equal(resolve(fx, "1000:"), -EINVAL);
	assert_string_equal(fx->err, "--user 1000:: give USER or USER:GROUP (a name or a number "
			    "each)");
	/* Not an id: negative, too large, (uid_t)-1, or with a sign. */
	assert_int_equal(resolve(fx, "-1"), -ESRCH);
	assert_int_equal(resolve(fx, "4294967295"), -ESRCH);
	assert_int_equal(resolve(fx, "99999999999999999999"), -ESRCH);
	assert_int_equal(resolve(fx, "+5"), -ESRCH);
	assert_int_equal(resolve(fx, "5:-5"), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_number, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_and_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_specs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
