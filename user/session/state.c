// SPDX-License-Identifier: GPL-2.0-only
#include <bpf/libbpf.h>
#include <errno.h>
#include <time.h>

#include "base/clocks.h"
#include "session/state.h"

/* How long one bounded read of the records lasts at most. */
#define READ_BUDGET_MS 100

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

/* The ring buffer's callback (session.c's on_record) stops the read with -EAGAIN at read_until. */
int session_read_records(struct session *s, bool bounded)
{
	int ret;

	s->read_until = bounded ? (uint64_t)jw_clock_ns(CLOCK_MONOTONIC) +
					  READ_BUDGET_MS * 1000000ULL :
				  0;
	ret = ring_buffer__consume(s->rb);
	s->read_until = 0;
	s->behind = ret == -EAGAIN;
	if (ret == -EAGAIN)
		return 1;
	return ret < 0 && ret != -EINTR ? ret : 0;
}
