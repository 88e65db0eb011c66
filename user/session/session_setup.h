/* SPDX-License-Identifier: GPL-2.0-only */
/* What a session watches from the start, and its log directory's upkeep. */
#ifndef JW_SESSION_SETUP_H
#define JW_SESSION_SETUP_H

#include <bpf/libbpf.h>

#include "session/state.h"

/*
 * Resolves everything the command line names before touching the kernel or the log directory,
 * so that a bad target or symbol leaves nothing behind; then loads and attaches, opens the log
 * directory and the ring buffer (its records to @on_record), and starts -- CMD. 0 or -errno.
 */
int session_setup(struct session *s, ring_buffer_sample_fn on_record);

/*
 * The trace windows, unless log_type 1 (no traces) or they run already: with the flight
 * recorder on, every watched process's events are kept from now on. 0 or -ENOMEM.
 */
int session_tracer_start(struct session *s);

/* Removes the report files older than log_max_age_days: at start, then hourly. */
void session_age_logs(struct session *s);

#endif
