// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/thp.h"
#include "process/accounts.h"
#include "process/launch.h"

/* In the errno the child sends: the failure was its output file's, not the exec's. */
#define OUTPUT_FAILED (1 << 30)

struct credentials {
	bool drop;
	struct jw_account account;
};

/* The executable exec will run for @cmd: as given with a '/', else the first match in PATH. */
static int find_program(const char *cmd, char *path, size_t len)
{
	const char *dirs = getenv("PATH");
	char *copy, *dir, *save;
	int ret = -ENOENT;

	if (strchr(cmd, '/')) {
		snprintf(path, len, "%s", cmd);
		return access(path, X_OK) ? -errno : 0;
	}
	copy = strdup(dirs ? dirs : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, len, "%s/%s", *dir ? dir : ".", cmd);
		if (access(path, X_OK) == 0) {
			ret = 0;
			break;
		}
	}
	free(copy);
	return ret;
}

static int resolve_user(const char *user, struct credentials *cr, char *err, size_t errlen)
{
	int ret;

	cr->drop = user != NULL;
	if (!user)
		return 0;
	ret = jw_account_resolve(user, NULL, &cr->account, err, errlen);
	if (!ret && cr->account.groups_left_out)
		jw_log(JW_LOG_WARN, "--user %s: in more than %d groups: %d left out", user,
		       JW_ACCOUNT_MAX_GROUPS, cr->account.groups_left_out);
	return ret;
}

/* In the child: the user's groups, gid and uid, for good (root cannot be regained). */
static int drop_privileges(const struct credentials *cr)
{
	const struct jw_account *a = &cr->account;

	if (!cr->drop)
		return 0;
	if (setgroups(a->ngroups, a->groups) || setgid(a->gid) || setuid(a->uid))
		return -1;
	return setuid(0) == 0 ? -1 : 0;
}

/* In the child: stdout and stderr to @output, stdin from /dev/null. 0 or -1 (errno set). */
static int redirect(const char *output)
{
	int out, in;

	out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (out < 0)
		return -1;
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(out, STDERR_FILENO) < 0)
		return -1;
	return 0;
}

/* The child: wait for the go, become the user, exec; on failure tell the parent why. */
static void child_run(char *const *argv, const char *exe, const char *output,
		      const struct credentials *cr, pid_t parent, int go_fd, int err_fd)
{
	char go;
	int e;

	/* jankwatch gone before the go: the program must not run unwatched. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(go_fd, &go, 1) != 1)
		_exit(127);
	close(go_fd);
	signal(SIGPIPE, SIG_DFL);
	jw_thp_restore();
	if (output[0] && redirect(output)) {
		e = errno | OUTPUT_FAILED;
		if (write(err_fd, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (drop_privileges(cr) == 0) {
		/*
		 * A change of uid clears the parent-death signal: set it again, so that the program
		 * never outlives a jankwatch that dies abruptly, as the user or not. It survives the
		 * exec (unless the program is set-user-ID).
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		execv(exe, argv);
	}
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int jw_child_spawn(char *const *argv, const char *user, const char *output, struct jw_child *c,
		   char *err, size_t errlen)
{
	struct credentials cr = { 0 };
	int go[2], fail[2], ret;
	pid_t parent;

	memset(c, 0, sizeof(*c));
	c->go_fd = c->err_fd = -1;
	if (output && snprintf(c->output, sizeof(c->output), "%s", output) >=
			      (int)sizeof(c->output)) {
		snprintf(err, errlen, "%s: path too long", output);
		return -ENAMETOOLONG;
	}
	ret = find_program(argv[0], c->exe, sizeof(c->exe));
	if (ret) {
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(-ret));
		return ret;
	}
	ret = resolve_user(user, &cr, err, errlen);
	if (ret)
		return ret;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(fail, O_CLOEXEC)) {
		ret = -errno;
		goto err_close_go;
	}
	parent = getpid();
	c->pid = fork();
	if (c->pid < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot fork for %s: %s", argv[0], strerror(-ret));
		goto err_close_fail;
	}
	if (c->pid == 0) {
		close(go[1]);
		close(fail[0]);
		child_run(argv, c->exe, c->output, &cr, parent, go[0], fail[1]);
	}
	close(go[0]);
	close(fail[1]);
	c->go_fd = go[1];
	c->err_fd = fail[0];
	return 0;

err_close_fail:
	close(fail[0]);
	close(fail[1]);
err_close_go:
	close(go[0]);
	close(go[1]);
	return ret;
}

int jw_child_release(struct jw_child *c, char *err, size_t errlen)
{
	ssize_t n;
	int e = 0;

	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	/* The close-on-exec error pipe reads EOF once exec succeeded. */
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(e) && (e & OUTPUT_FAILED)) {
		e &= ~OUTPUT_FAILED;
		snprintf(err, errlen, "cannot write %s's output to %s: %s", c->exe, c->output,
			 strerror(e));
		return -e;
	}
	if (n == sizeof(e)) {
		snprintf(err, errlen, "cannot run %s: %s", c->exe, strerror(e));
		return -e;
	}
	return 0;
}

void jw_child_abort(struct jw_child *c)
{
	if (!c || c->pid <= 0 || c->reaped)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	c->reaped = true;
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
}

int jw_child_end(struct jw_child *c, int grace_ms, int *status)
{
	if (jw_child_exited(c, 0, status))
		return 0;
	if (kill(c->pid, SIGTERM) == 0 && jw_child_exited(c, grace_ms, status))
		return SIGTERM;
	kill(c->pid, SIGKILL);
	return jw_child_exited(c, 1000, status) ? SIGKILL : -1;
}

bool jw_child_exited(struct jw_child *c, int wait_ms, int *status)
{
	struct timespec tick = { 0, 10 * 1000000L };
	int st, waited = 0;
	pid_t r;

	if (c->pid <= 0 || c->reaped)
		return false;
	for (;;) {
		r = waitpid(c->pid, &st, WNOHANG);
		if (r == c->pid)
			break;
		if (r < 0 || waited >= wait_ms)
			return false;
		nanosleep(&tick, NULL);
		waited += 10;
	}
	c->reaped = true;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return true;
}
