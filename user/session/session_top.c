// SPDX-License-Identifier: GPL-2.0-only
/* jankwatch top's screen and keys (session_top.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/clocks.h"
#include "base/grow.h"
#include "base/log.h"
#include "report/toptable.h"
#include "session/session_stats.h"
#include "session/session_top.h"

#define FRAME_EVERY_NS 1000000000ULL
/* jankwatch's own messages held while the screen is ours: the last ones kept, these shown. */
#define HELD_MAX 1000
#define HELD_SHOWN 3

struct session_top {
	struct jw_top *table;
	bool screen;		/* stdout and stdin a terminal: frames on its alternate screen */
	bool taken;		/* the terminal's mode and screen are ours until given back */
	struct termios saved;
	uint64_t start_ns, frame_ns;
	/*
	 * Messages for a stderr on the same terminal, held while the screen is ours (they would
	 * be drawn over), printed once it is given back; the oldest past HELD_MAX left out.
	 */
	struct held {
		enum jw_log_level level;
		char *line;
	} *held;
	size_t n_held, cap_held;
	uint64_t held_dropped;
};

static void hold(void *ctx, enum jw_log_level level, const char *line)
{
	struct session_top *t = ctx;
	char *copy = strdup(line);

	if (!copy || (t->n_held < HELD_MAX && jw_grow((void **)&t->held, &t->cap_held, t->n_held,
						      sizeof(*t->held), 16))) {
		free(copy);
		t->held_dropped++;
		return;
	}
	if (t->n_held == HELD_MAX) {
		free(t->held[0].line);
		memmove(t->held, t->held + 1, (HELD_MAX - 1) * sizeof(*t->held));
		t->n_held--;
		t->held_dropped++;
	}
	t->held[t->n_held++] = (struct held){ level, copy };
}

/* The messages held, said as they would have been; the screen is the terminal's again. */
static void release_held(struct session_top *t)
{
	size_t i;

	jw_log_divert(NULL, NULL);
	if (t->held_dropped)
		jw_log(JW_LOG_WARN, "top: %llu earlier messages left out while the table was shown",
		       (unsigned long long)t->held_dropped);
	for (i = 0; i < t->n_held; i++) {
		jw_log(t->held[i].level, "%s", t->held[i].line);
		free(t->held[i].line);
	}
	free(t->held);
	t->held = NULL;
	t->n_held = t->cap_held = 0;
	t->held_dropped = 0;
}

static void add_row(void *ctx, const struct jw_stats_row *r)
{
	if (jw_top__row(ctx, r))
		jw_log(JW_LOG_WARN, "top: out of memory, a row left out");
}

/* The table of the statistics as they are now into @f; @width x @height (0: unbounded). */
static void draw(struct session *s, FILE *f, int width, int height)
{
	struct session_top *t = s->top;
	char title[64];
	size_t i, n = 0;

	for (i = 0; i < s->n_slots; i++)
		n += s->watched[i] != NULL;
	snprintf(title, sizeof(title), "jankwatch top: %zu process%s", n, n == 1 ? "" : "es");
	jw_top__clear(t->table);
	session_stats_each(s, add_row, t->table);
	jw_top__render(t->table, f, &(struct jw_top_view){
		.elapsed_ns = jw_clock_ns(CLOCK_MONOTONIC) - t->start_ns,
		.width = width, .height = height, .title = title });
}

/* How many of the messages held the screen's last rows show: none on a screen this short. */
static size_t held_shown(const struct session_top *t, int rows)
{
	size_t shown = t->n_held < HELD_SHOWN ? t->n_held : HELD_SHOWN;

	return rows > (int)shown + 4 ? shown : 0;
}

/* The last messages held on the screen's last rows (the rest come once it is given back). */
static void draw_held(const struct session_top *t, size_t shown, int cols, int rows)
{
	size_t i;

	for (i = t->n_held - shown; i < t->n_held; i++)
		printf("\033[%zu;1Hjankwatch: %.*s\033[K", rows - (t->n_held - i) + 1,
		       cols > 11 ? cols - 11 : 0, t->held[i].line);
}

static void give_back(struct session_top *t)
{
	if (!t->taken)
		return;
	/* The cursor shown, the normal screen back, the terminal's mode as it was. */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->taken = false;
	release_held(t);
}

bool session_top_screen(const struct jw_config *cfg, char *output, size_t len)
{
	const char *name;

	if (!cfg->top || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
		return false;
	name = cfg->cmd ? strrchr(cfg->cmd[0], '/') : NULL;
	name = name ? name + 1 : cfg->cmd ? cfg->cmd[0] : "program";
	if (output)
		snprintf(output, len, "%s/%s.out", cfg->log_dir, name);
	return true;
}

int session_top_start(struct session *s)
{
	struct session_top *t;
	struct termios raw;

	if (!s->cfg->top)
		return 0;
	t = s->top = calloc(1, sizeof(*t));
	if (!t || !(t->table = jw_top__new()))
		return -ENOMEM;
	t->start_ns = jw_clock_ns(CLOCK_MONOTONIC);
	t->screen = session_top_screen(s->cfg, NULL, 0);
	if (!t->screen)
		return 0;
	if (tcgetattr(STDIN_FILENO, &t->saved)) {
		t->screen = false;
		return 0;
	}
	/* Keys one at a time, unechoed; a read returns at once with what there is. */
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw)) {
		t->screen = false;
		return 0;
	}
	t->taken = true;
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
	/* A stderr elsewhere (a file, a pipe) keeps its lines as they come. */
	if (isatty(STDERR_FILENO))
		jw_log_divert(hold, t);
	return 0;
}

/* One frame at the top left of the screen, each line cleared to its end, the rest below. */
static void frame(struct session *s)
{
	struct winsize ws = { .ws_col = 80, .ws_row = 24 };
	char *text = NULL, *line, *next;
	size_t len = 0;
	FILE *f;

	size_t held;

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	held = held_shown(s->top, ws.ws_row);
	f = open_memstream(&text, &len);
	if (!f)
		return;
	draw(s, f, ws.ws_col, ws.ws_row - (int)held);
	if (fclose(f)) {
		free(text);
		return;
	}
	fputs("\033[H", stdout);
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		fwrite(line, 1, next ? (size_t)(next - line) : strlen(line), stdout);
		fputs("\033[K", stdout);
		if (!next)
			break;
		fputs("\r\n", stdout);
		next++;
	}
	fputs("\033[J", stdout);
	draw_held(s->top, held, ws.ws_col, ws.ws_row);
	fflush(stdout);
	free(text);
}

bool session_top_tick(struct session *s, uint64_t now)
{
	struct session_top *t = s->top;
	char keys[16];
	ssize_t n, i;

	if (!t || !t->screen)
		return false;
	n = read(STDIN_FILENO, keys, sizeof(keys));
	for (i = 0; i < n; i++)
		if (keys[i] == 'q' || keys[i] == 'Q')
			return true;
	if (now - t->frame_ns >= FRAME_EVERY_NS) {
		t->frame_ns = now;
		frame(s);
	}
	return false;
}

void session_top_event(struct session *s, const struct jw_event *e)
{
	if (!s->top)
		return;
	if (jw_top__jank(s->top->table, &(struct jw_top_jank){
		    .end_ms = e->end_time_ms, .pid = e->pid, .handler_class = e->handler_class,
		    .handler = e->handler, .wall_ms = e->wall_ms, .cause = e->cause,
		    .hang = !strcmp(e->event, "MAIN_THREAD_HANG") }))
		jw_log(JW_LOG_WARN, "top: out of memory, a jank left out");
}

void session_top_finish(struct session *s)
{
	if (!s->top)
		return;
	give_back(s->top);
	draw(s, stdout, 0, 0);
	fflush(stdout);
}

void session_top_free(struct session *s)
{
	if (!s->top)
		return;
	give_back(s->top);
	jw_top__free(s->top->table);
	free(s->top);
	s->top = NULL;
}
