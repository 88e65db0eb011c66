// SPDX-License-Identifier: GPL-2.0-only
/*
 * The journal's native protocol: fields encoded as systemd reads them, sent as one datagram, a
 * large entry through a sealed memfd, a missing journal said; and a jank event's entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/journal.h"
#include "report/report_journal.h"

static void test_encode(void **state)
{
	const struct jw_journal_field f[] = {
		{ "MESSAGE", "hello", 5 },
		{ "JANKWATCH_JSON", "a\nb", 3 },
		{ "EMPTY", "", 0 },
	};
	static const char want[] = "MESSAGE=hello\nJANKWATCH_JSON\n\x03\0\0\0\0\0\0\0a\nb\nEMPTY=\n";
	struct jw_buf b;

	(void)state;
	jw_buf_init(&b);
	jw_journal_encode(&b, f, 3);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, sizeof(want) - 1);
	assert_memory_equal(b.data, want, sizeof(want) - 1);
	jw_buf_free(&b);
}

/* A datagram socket standing in for journald at @path. */
static int fake_journal(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = 5 };

	assert_true(fd >= 0);
	/* An entry that never comes fails the test, never hangs it. */
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Receives one entry: the datagram's bytes, or the memfd's it carries. Returns the length. */
static size_t receive(int fd, char *buf, size_t len)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(fd, &mh, 0);
	int mfd;

	if (n < 0)
		fail_msg("no entry came: %s", strerror(errno));
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm)
		return (size_t)n;
	assert_int_equal(n, 0);
	assert_int_equal(cm->cmsg_type, SCM_RIGHTS);
	memcpy(&mfd, CMSG_DATA(cm), sizeof(int));
	/* Sealed: journald trusts it only so. */
	assert_int_equal(fcntl(mfd, F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW),
			 F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
	n = pread(mfd, buf, len, 0);
	close(mfd);
	assert_true(n > 0);
	return (size_t)n;
}

static void test_send(void **state)
{
	char dir[] = "/tmp/jw-journal-XXXXXX", path[128], err[256] = "";
	static char big[300000], got[400000];
	struct jw_journal_field f[2] = { { "MESSAGE", "jank", 4 } };
	struct jw_journal *j;
	size_t n;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/socket", dir);
	/* Nothing listens yet: said, no handle. */
	assert_null(jw_journal__open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "no journal at"));
	fd = fake_journal(path);
	j = jw_journal__open(path, err, sizeof(err));
	assert_non_null(j);
	assert_int_equal(jw_journal__send(j, f, 1), 0);
	n = receive(fd, got, sizeof(got));
	assert_int_equal(n, strlen("MESSAGE=jank\n"));
	assert_memory_equal(got, "MESSAGE=jank\n", n);

	/* Larger than a datagram may be: a memfd. */
	memset(big, 'x', sizeof(big));
	f[1] = (struct jw_journal_field){ "JANKWATCH_JSON", big, sizeof(big) };
	assert_int_equal(jw_journal__send(j, f, 2), 0);
	n = receive(fd, got, sizeof(got));
	assert_int_equal(n, strlen("MESSAGE=jank\n") + strlen("JANKWATCH_JSON=") + sizeof(big) + 1);

	/* The journal goes away: an error, not a silent drop. */
	close(fd);
	unlink(path);
	assert_true(jw_journal__send(j, f, 1) < 0);
	jw_journal__free(j);
	rmdir(dir);
}

static const char *field(const struct jw_journal_field *f, size_t n, const char *name,
			 size_t *len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name)) {
			*len = f[i].len;
			return f[i].value;
		}
	return NULL;
}

#define ASSERT_FIELD(f, n, name, want)                                   \
	do {                                                             \
		size_t len_;                                             \
		const char *v_ = field(f, n, name, &len_);               \
		assert_non_null(v_);                                     \
		assert_int_equal(len_, strlen(want));                    \
		assert_memory_equal(v_, want, len_);                     \
	} while (0)

/* A jank's entry and a hang's: ids, priority, the event's fields as its line has them. */
static void test_event_fields(void **state)
{
	struct jw_journal_field f[JW_JOURNAL_FIELDS];
	struct jw_journal_text t;
	struct jw_event e = {
		.event = "MAIN_THREAD_JANK", .bundle_name = "redis-server", .pid = 42, .tid = 43,
		.handler = "serverCron", .cause = "cpu", .group = "a<-b", .wall_ms = 312.5,
		.begin_time_ms = 1700000000123ULL, .samples = 9, .jank_id = "0123456789abcdef",
	};
	static const char line[] = "{\"event\":\"MAIN_THREAD_JANK\"}\n";
	size_t n;

	(void)state;
	n = jw_event_journal_fields(&e, line, strlen(line), f, &t);
	ASSERT_FIELD(f, n, "MESSAGE_ID", JW_JOURNAL_ID_JANK);
	ASSERT_FIELD(f, n, "PRIORITY", "4");
	ASSERT_FIELD(f, n, "SYSLOG_IDENTIFIER", "jankwatch");
	ASSERT_FIELD(f, n, "OBJECT_PID", "42");
	ASSERT_FIELD(f, n, "JANKWATCH_PID", "42");
	ASSERT_FIELD(f, n, "JANKWATCH_TID", "43");
	ASSERT_FIELD(f, n, "JANKWATCH_JANK_ID", "0123456789abcdef");
	ASSERT_FIELD(f, n, "JANKWATCH_HANDLER", "serverCron");
	ASSERT_FIELD(f, n, "JANKWATCH_WALL_MS", "312.500");
	ASSERT_FIELD(f, n, "JANKWATCH_BEGIN_TIME", "1700000000123");
	ASSERT_FIELD(f, n, "JANKWATCH_JSON", "{\"event\":\"MAIN_THREAD_JANK\"}");
	ASSERT_FIELD(f, n, "MESSAGE", "jank: pid 42 (redis-server) tid 43: serverCron took "
		     "312.5 ms (cpu)");
	/* A field the event does not have is left out. */
	assert_null(field(f, n, "JANKWATCH_HANDLER_CLASS", &(size_t){ 0 }));

	e.event = "MAIN_THREAD_HANG";
	n = jw_event_journal_fields(&e, line, strlen(line), f, &t);
	ASSERT_FIELD(f, n, "MESSAGE_ID", JW_JOURNAL_ID_HANG);
	ASSERT_FIELD(f, n, "PRIORITY", "3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_event_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
