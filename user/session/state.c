// SPDX-License-Identifier: GPL-2.0-only
#include "session/state.h"

/* The slot of process @pid, or -1. */
int session_slot_of(const struct session *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && s->watched[i]->proc.target.pid == pid)
			return i;
	return -1;
}

/* The watched process whose thread is @tid, or NULL. */
struct jw_watched *session_thread(const struct session *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->n_slots; i++)
		if (s->watched[i] && s->watched[i]->proc.target.tid == tid)
			return s->watched[i];
	return NULL;
}

/* Whether process @pid, as it is now (not a new process of a reused pid), is watched. */
bool session_watching(const struct session *s, pid_t pid)
{
	int i = session_slot_of(s, pid);

	return i >= 0 && jw_target_alive(&s->watched[i]->proc.target);
}
