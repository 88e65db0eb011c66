/* SPDX-License-Identifier: GPL-2.0-only */
/* The slots of the watched processes. */
#ifndef JW_SESSION_PROCS_H
#define JW_SESSION_PROCS_H

#include "session/state.h"

/*
 * Watches process @pid in a free slot: its handle made and, once the BPF object is loaded,
 * attached. A process that cannot be watched is dropped again. 0 or -errno: -EBUSY when the only
 * free slots are still detaching their last process's probes (try again soon), -ENOSPC when
 * every slot is in use.
 */
int session_add_proc(struct session *s, pid_t pid);

/* Drops the process in slot @i (it exited, execs, or could not be watched): one call undoes all. */
void session_drop_proc(struct session *s, size_t i);

/* The --name name process @pid has now (process/names.h), or NULL. */
const char *session_name_of(const struct session *s, pid_t pid);

#endif
