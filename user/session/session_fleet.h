/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What leaves the machine through the channels fleets already run: each event into the systemd
 * journal (journal=1), and the metrics (report/metrics.h) written whole to metrics_textfile every
 * metrics_interval_s for node_exporter's textfile collector, and served on metrics_listen's
 * /metrics.
 */
#ifndef JW_SESSION_FLEET_H
#define JW_SESSION_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/state.h"

struct jw_event;

/*
 * Before anything is attached: the metrics the configuration asks for, their port bound and
 * their file written once. 0, or -errno with the reason logged: a metrics setting that cannot
 * work stops the start.
 */
int session_fleet_open(struct session *s);

/* Once the session's loop can serve: /metrics answered, the journal looked for (journal=1). */
int session_fleet_start(struct session *s);

/* The reporter's on_event hook (@ctx: the session). */
void session_fleet_event(void *ctx, const struct jw_event *e, const char *line, size_t len);

/* Rewrites the metrics file when due, closes stale /metrics connections. */
void session_fleet_tick(struct session *s, uint64_t now_ns);

/* Handles epoll's @events on @fd if it is a /metrics socket; returns whether it was. */
bool session_fleet_on_fd(struct session *s, int fd, uint32_t events);

/* Writes the metrics file a last time, closes the journal and the endpoint. */
void session_fleet_finish(struct session *s);

#endif
