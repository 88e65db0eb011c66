// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session's slots of watched processes: a process is watched in a free slot (its handle made
 * and, once the BPF object is loaded, attached) and dropped from it in one call.
 */
#include <errno.h>
#include <stdio.h>

#include "base/log.h"
#include "process/names.h"
#include "process/target.h"
#include "session/session_procs.h"
#include "session/session_stats.h"

/*
 * A slot for a new process: free, and no probe of the last thread it held still being detached
 * (none may still fire there). Returns it, or -EBUSY when the only free slots are still being
 * emptied (soon), -ENOSPC when every slot is in use.
 */
static int free_slot(struct session *s)
{
	struct jw_attach *a = s->how.attach;
	size_t i;

	for (i = 0; i < s->n_slots && (s->watched[i] || (a && !jw_attach__slot_free(a, i))); i++)
		;
	if (i == s->n_slots && a && !jw_attach__slot_free(a, i)) {
		for (i = 0; i < s->n_slots && s->watched[i]; i++)
			;
		if (i < s->n_slots)
			return -EBUSY;
	}
	return i < JW_MAX_PIDS ? (int)i : -ENOSPC;
}

const char *session_name_of(const struct session *s, pid_t pid)
{
	char comm[JW_NAME_COMM_LEN + 1], argv0[JW_NAME_MAX + 2];

	if (!s->cfg->n_names || jw_target_names(pid, comm, sizeof(comm), argv0, sizeof(argv0)))
		return NULL;
	/* No first argument: a kernel thread, or a process on its way out. */
	if (!argv0[0])
		return NULL;
	return jw_name_find(s->cfg->names, s->cfg->n_names, comm, argv0);
}

int session_add_proc(struct session *s, pid_t pid)
{
	struct jw_watched *w;
	const char *name;
	int i, ret;

	i = free_slot(s);
	if (i == -ENOSPC)
		jw_log(JW_LOG_WARN, "pid %d: already watching %d processes", pid, JW_MAX_PIDS);
	if (i < 0)
		return i;
	w = jw_watched__new(pid, i, &s->how);
	if (!w)
		return -errno;
	/* --name: its events carry that name (an app's package), not its comm. */
	name = session_name_of(s, pid);
	if (name)
		snprintf(w->proc.target.name, sizeof(w->proc.target.name), "%s", name);
	s->watched[i] = w;
	if ((size_t)i == s->n_slots)
		s->n_slots++;
	if (!s->how.attach)
		return 0;
	ret = jw_watched__attach(w, &s->how);
	if (ret)
		session_drop_proc(s, i);
	return ret;
}

void session_drop_proc(struct session *s, size_t i)
{
	struct jw_watched *w = s->watched[i];

	if (!w)
		return;
	/* Its statistics rows outlive it, and its held reports: named while its symbols are here. */
	if (w->attached)
		session_stats_keep_names(s, w->proc.target.pid);
	if (s->reporter)
		jw_reporter__flush(s->reporter, &w->proc, false);
	jw_watched__free(w, &s->how);
	s->watched[i] = NULL;
}
