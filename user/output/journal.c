// SPDX-License-Identifier: GPL-2.0-only
/* Entries for the systemd journal in its native protocol. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "output/journal.h"

struct jw_journal {
	int fd;
	struct jw_buf buf;	/* the entry being sent */
};

void jw_journal_encode(struct jw_buf *b, const struct jw_journal_field *f, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		uint64_t len = f[i].len;

		jw_buf_puts(b, f[i].name);
		if (!memchr(f[i].value, '\n', f[i].len)) {
			jw_buf_putc(b, '=');
		} else {
			jw_buf_putc(b, '\n');
			for (k = 0; k < 8; k++)
				jw_buf_putc(b, (char)(len >> (8 * k)));
		}
		for (k = 0; k < f[i].len; k++)
			jw_buf_putc(b, f[i].value[k]);
		jw_buf_putc(b, '\n');
	}
}

struct jw_journal *jw_journal__open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct jw_journal *j;

	if (!path)
		path = JW_JOURNAL_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		jw_set_err(err, errlen, "%s: path too long for a socket", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	j = calloc(1, sizeof(*j));
	if (!j) {
		jw_set_err(err, errlen, "out of memory");
		return NULL;
	}
	jw_buf_init(&j->buf);
	j->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (j->fd < 0 || connect(j->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		jw_set_err(err, errlen, "no journal at %s: %s", path, strerror(errno));
		jw_journal__free(j);
		return NULL;
	}
	return j;
}

void jw_journal__free(struct jw_journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	jw_buf_free(&j->buf);
	free(j);
}

/*
 * An entry too large for a datagram: written into a memfd sealed against change, whose
 * descriptor alone goes over the socket (journald reads the entry from it).
 */
static int send_memfd(struct jw_journal *j)
{
	char ctl[CMSG_SPACE(sizeof(int))] = { 0 }, none = 0;
	/* No payload, but one empty iovec: qemu's user-mode emulation sends nothing without one. */
	struct iovec iov = { .iov_base = &none, .iov_len = 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	size_t off = 0;
	ssize_t n;
	int fd, ret = 0;

	fd = memfd_create("jankwatch-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	while (off < j->buf.len) {
		n = write(fd, j->buf.data + off, j->buf.len - off);
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto out;
		}
		off += n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		ret = -errno;
		goto out;
	}
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(j->fd, &mh, MSG_NOSIGNAL) < 0)
		ret = -errno;
out:
	close(fd);
	return ret;
}

int jw_journal__send(struct jw_journal *j, const struct jw_journal_field *f, size_t n)
{
	if (!j)
		return -ENOTCONN;
	jw_buf_reset(&j->buf);
	jw_journal_encode(&j->buf, f, n);
	if (j->buf.err)
		return j->buf.err;
	if (send(j->fd, j->buf.data, j->buf.len, MSG_NOSIGNAL) >= 0)
		return 0;
	if (errno == EMSGSIZE || errno == ENOBUFS)
		return send_memfd(j);
	return -errno;
}
