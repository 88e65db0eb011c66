// SPDX-License-Identifier: GPL-2.0-only
/*
 * The page of a log directory: its head and figures, the timeline (an SVG drawn here), the
 * groups (their flame graphs by flamesvg.c), the statistics table, and one inline script that
 * makes them live (hover, click, zoom, sort). Without the script the page still reads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/when.h"
#include "output/markup.h"
#include "report/reportpage.h"

/* The timeline's geometry, in px. */
#define TL_W 1200
#define TL_LABEL_W 210		/* the lanes' names */
#define TL_RIGHT 40		/* room for the last tick's label */
#define TL_TOP 6
#define TL_LANE_H 20
#define TL_AXIS_H 30
#define TL_MIN_W 2.0		/* an event narrower than this is drawn this wide */

static const char *const cause_names[] = { "cpu", "runqueue", "blocked", "io", "unknown" };

enum jw_page_cause jw_page_cause(const char *s)
{
	unsigned int i;

	for (i = 0; s && i < JW_CAUSE_UNKNOWN; i++)
		if (!strcmp(s, cause_names[i]))
			return (enum jw_page_cause)i;
	return JW_CAUSE_UNKNOWN;
}

static const char style[] =
	"body { font-family: sans-serif; font-size: 14px; margin: 16px 24px; color: #222;"
	" background: #fff; max-width: 1240px; }\n"
	"h1 { font-size: 20px; margin: 0 0 6px; } h2 { font-size: 17px; margin: 26px 0 8px;"
	" border-bottom: 1px solid #ccc; }\n"
	"h3 { font-size: 15px; margin: 18px 0 4px; font-family: monospace; word-break: break-all; }\n"
	"p { margin: 4px 0; } .said { color: #555; }\n"
	".fig { font-family: monospace; }\n"
	"#tl text, svg.flame text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	"#tl .lane { fill: #f4f4f0; } #tl .lane.odd { fill: #fbfbf8; }\n"
	"#tl .axis { stroke: #888; stroke-width: 1; } #tl .tick { fill: #555; font-size: 11px; }\n"
	"#tl rect.ev { cursor: pointer; fill-opacity: 0.85; }\n"
	"#tl rect.ev:hover { stroke: #000; stroke-width: 1; }\n"
	"#tl rect.ev.hang { stroke: #000; stroke-width: 1.2; stroke-dasharray: 3 2; }\n"
	"#tl rect.sel { fill: #1a5fb4; fill-opacity: 0.15; stroke: #1a5fb4; }\n"
	".cpu { fill: #e8743b; background: #e8743b; }\n"
	".runqueue { fill: #d4b106; background: #d4b106; }\n"
	".blocked { fill: #4a7fd4; background: #4a7fd4; }\n"
	".io { fill: #8e5bd6; background: #8e5bd6; }\n"
	".unknown { fill: #999; background: #999; }\n"
	".key { display: inline-block; width: 11px; height: 11px; margin: 0 4px 0 12px;"
	" vertical-align: -1px; }\n"
	"#tl-info { font-family: monospace; min-height: 18px; white-space: pre; }\n"
	".split { display: flex; width: 480px; height: 14px; border: 1px solid #999;"
	" margin: 4px 0; } .split span { height: 100%; }\n"
	"section.group { margin-bottom: 22px; } svg.flame { display: block; margin-top: 6px; }\n"
	"details { margin: 4px 0; } details li { font-family: monospace; }\n"
	"table#stats { border-collapse: collapse; font-size: 12px; display: block; max-width: 100%;"
	" overflow-x: auto; }\n"
	"#stats th, #stats td { border: 1px solid #ccc; padding: 2px 6px; }\n"
	"#stats th { background: #eee; cursor: pointer; user-select: none; max-width: 96px;"
	" overflow-wrap: anywhere; font-weight: normal; }\n"
	"#stats th.up::after { content: ' \\25B2'; } #stats th.down::after { content: ' \\25BC'; }\n"
	"#stats td.num { text-align: right; font-family: monospace; }\n";

/* The page's own script, after the flame graphs' jwFlame(). Plain ES5. */
static const char script[] =
	"function pad(n, w) { n = String(n); while (n.length < w) n = '0' + n; return n; }\n"
	"function when(ms) {\n"
	"  var d = new Date(ms);\n"
	"  return d.getFullYear() + '-' + pad(d.getMonth() + 1, 2) + '-' + pad(d.getDate(), 2) + ' ' +\n"
	"    pad(d.getHours(), 2) + ':' + pad(d.getMinutes(), 2) + ':' + pad(d.getSeconds(), 2) + '.' +\n"
	"    pad(d.getMilliseconds(), 3);\n"
	"}\n"
	/* The ticks of the range [t0, t0 + span], as the C side draws them at first. */
	"var STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000,\n"
	"  60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 10800000, 21600000,\n"
	"  43200000, 86400000, 172800000, 604800000, 2592000000];\n"
	"function tickLabel(ms, step) {\n"
	"  var s = when(ms);\n"
	"  return step >= 86400000 ? s.substring(5, 16) : step >= 1000 ? s.substring(11, 19) :\n"
	"    s.substring(11);\n"
	"}\n"
	"function timeline() {\n"
	"  var tl = document.getElementById('tl'), info = document.getElementById('tl-info');\n"
	"  if (!tl) return;\n"
	"  var NS = 'http://www.w3.org/2000/svg';\n"
	"  var T0 = +tl.getAttribute('data-t0'), SPAN = +tl.getAttribute('data-span');\n"
	"  var X0 = +tl.getAttribute('data-x0'), PW = +tl.getAttribute('data-pw');\n"
	"  var keys = document.querySelectorAll('#group-keys li');\n"
	"  var lanes = tl.querySelectorAll('text.lane-name'), ticks = tl.querySelector('g.ticks');\n"
	"  var sel = tl.querySelector('rect.sel'), reset = document.getElementById('tl-reset');\n"
	"  var evs = tl.querySelectorAll('rect.ev');\n"
	"  var shown = parseInt(tl.getAttribute('data-groups'), 10);\n"
	"  var vt0 = T0, vspan = SPAN, drag = null, dragged = false;\n"
	/* Shows [t0, t0 + span]: each event placed again (cut at the edges), the ticks made again. */
	"  function view(t0, span) {\n"
	"    vt0 = t0; vspan = span;\n"
	"    Array.prototype.forEach.call(evs, function (r) {\n"
	"      var x = X0 + (+r.getAttribute('data-t') - t0) * PW / span;\n"
	"      var w = Math.max(+r.getAttribute('data-w') * PW / span, 2);\n"
	"      var l = Math.max(x, X0), e = Math.min(x + w, X0 + PW);\n"
	"      r.style.display = e <= X0 || l >= X0 + PW ? 'none' : '';\n"
	"      r.setAttribute('x', l); r.setAttribute('width', Math.max(e - l, 2));\n"
	"    });\n"
	"    var y = +ticks.getAttribute('data-y'), step = STEPS[STEPS.length - 1];\n"
	"    for (var i = 0; i < STEPS.length; i++) if (span / STEPS[i] <= 8) { step = STEPS[i]; break; }\n"
	"    while (ticks.firstChild) ticks.removeChild(ticks.firstChild);\n"
	"    for (var t = Math.ceil(t0 / step) * step; t <= t0 + span; t += step) {\n"
	"      var tx = X0 + (t - t0) * PW / span, line = document.createElementNS(NS, 'line');\n"
	"      var text = document.createElementNS(NS, 'text');\n"
	"      line.setAttribute('class', 'axis'); line.setAttribute('x1', tx); line.setAttribute('x2', tx);\n"
	"      line.setAttribute('y1', y); line.setAttribute('y2', y + 4);\n"
	"      text.setAttribute('class', 'tick'); text.setAttribute('x', tx); text.setAttribute('y', y + 16);\n"
	"      text.setAttribute('text-anchor', 'middle'); text.textContent = tickLabel(t, step);\n"
	"      ticks.appendChild(line); ticks.appendChild(text);\n"
	"    }\n"
	"    reset.hidden = span >= SPAN;\n"
	"  }\n"
	"  function plotX(ev) {\n"
	"    var x = ev.clientX - tl.getBoundingClientRect().left;\n"
	"    return Math.min(Math.max(x, X0), X0 + PW);\n"
	"  }\n"
	"  tl.addEventListener('mousedown', function (ev) {\n"
	"    drag = plotX(ev); dragged = false; ev.preventDefault();\n"
	"  });\n"
	"  tl.addEventListener('mousemove', function (ev) {\n"
	"    if (drag === null) return;\n"
	"    var x = plotX(ev);\n"
	"    dragged = dragged || Math.abs(x - drag) > 4;\n"
	"    if (!dragged) return;\n"
	"    sel.style.display = ''; sel.setAttribute('x', Math.min(x, drag));\n"
	"    sel.setAttribute('width', Math.abs(x - drag));\n"
	"  });\n"
	"  window.addEventListener('mouseup', function (ev) {\n"
	"    if (drag === null) return;\n"
	"    var a = drag, b = plotX(ev);\n"
	"    drag = null; sel.style.display = 'none';\n"
	"    if (!dragged) return;\n"
	"    var lo = Math.min(a, b), hi = Math.max(a, b);\n"
	"    view(vt0 + (lo - X0) * vspan / PW, Math.max((hi - lo) * vspan / PW, 1));\n"
	"  });\n"
	"  reset.addEventListener('click', function () { view(T0, SPAN); });\n"
	"  Array.prototype.forEach.call(evs, function (r) {\n"
	"    var g = parseInt(r.getAttribute('data-g'), 10);\n"
	"    r.addEventListener('mouseover', function () {\n"
	"      var lane = lanes[parseInt(r.getAttribute('data-lane'), 10)];\n"
	"      info.textContent = (lane ? lane.textContent : '') + '  ' +\n"
	"        when(parseFloat(r.getAttribute('data-t'))) + '  ' +\n"
	"        parseFloat(r.getAttribute('data-w')).toFixed(1) + ' ms ' +\n"
	"        (r.classList.contains('hang') ? 'hang (so far)' : 'jank') + ', cause ' +\n"
	"        r.getAttribute('data-cause') + '  #' + (g + 1) + ' ' + (keys[g] ? keys[g].textContent : '');\n"
	"    });\n"
	"    r.addEventListener('click', function () {\n"
	"      if (!dragged && g < shown) location.hash = 'g' + (g + 1);\n"
	"    });\n"
	"  });\n"
	"}\n"
	"function sortable() {\n"
	"  var table = document.getElementById('stats');\n"
	"  if (!table) return;\n"
	"  var heads = table.querySelectorAll('th'), body = table.tBodies[0];\n"
	"  function by(col, down) {\n"
	"    var num = heads[col].getAttribute('data-num') === '1';\n"
	"    var rows = Array.prototype.slice.call(body.rows);\n"
	"    rows.sort(function (a, b) {\n"
	"      var x = a.cells[col].textContent, y = b.cells[col].textContent, c;\n"
	"      c = num ? parseFloat(x) - parseFloat(y) : (x < y ? -1 : x > y ? 1 : 0);\n"
	"      return down ? -c : c;\n"
	"    });\n"
	"    rows.forEach(function (r) { body.appendChild(r); });\n"
	"    Array.prototype.forEach.call(heads, function (h) { h.className = ''; });\n"
	"    heads[col].className = down ? 'down' : 'up';\n"
	"  }\n"
	"  Array.prototype.forEach.call(heads, function (h, col) {\n"
	"    h.addEventListener('click', function () { by(col, h.className !== 'down'); });\n"
	"  });\n"
	"  var first = table.getAttribute('data-sort');\n"
	"  if (first !== null) by(parseInt(first, 10), true);\n"
	"}\n"
	"window.addEventListener('load', function () {\n"
	"  Array.prototype.forEach.call(document.querySelectorAll('svg.flame'), jwFlame);\n"
	"  timeline();\n"
	"  sortable();\n"
	"});\n";

static void put_head(const struct jw_page *p, FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"jankwatch report --html\">\n<title>jankwatch: ", f);
	jw_markup_put(f, p->dir);
	fprintf(f, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", style, jw_flame_style);
}

static void put_totals(const struct jw_page *p, FILE *f)
{
	const struct jw_summary_totals *t = &p->totals;
	char first[40], last[40];

	jw_when_text(t->first_ms, first, sizeof(first));
	jw_when_text(t->last_ms, last, sizeof(last));
	fputs("<h1>jankwatch: ", f);
	jw_markup_put(f, p->dir);
	fprintf(f, "</h1>\n<p id=\"totals\" data-janks=\"%" PRIu64 "\" data-hangs=\"%" PRIu64
		"\" data-groups=\"%" PRIu64 "\">%" PRIu64 " janks, %" PRIu64 " hangs in %" PRIu64
		" groups, from %s to %s", t->janks, t->hangs, t->groups, t->janks, t->hangs,
		t->groups, first, last);
	if (p->range) {
		fputs(" (", f);
		jw_markup_put(f, p->range);
		fputc(')', f);
	}
	fprintf(f, "; files written for %" PRIu64 ", withheld for %" PRIu64 "</p>\n", t->written,
		t->withheld);
	if (t->bad_lines)
		fprintf(f, "<p class=\"said\">%" PRIu64 " lines were not events (damaged or cut "
			"short)</p>\n", t->bad_lines);
	fputs("<p class=\"said\">Made ", f);
	jw_markup_put(f, p->made ? p->made : "");
	fputs(" by <code>jankwatch report --html</code>: the timeline, then the groups that took the"
	      " most time (as <code>jankwatch report</code> ranks them), then the statistics.</p>\n",
	      f);
}

/* A tick every @step ms: the first step of the list that gives at most 8 over @span. */
static uint64_t tick_step(uint64_t span)
{
	static const uint64_t steps[] = {
		1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000,
		120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 10800000, 21600000,
		43200000, 86400000, 172800000, 604800000, 2592000000ULL,
	};
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]) - 1; i++)
		if (span / steps[i] <= 8)
			break;
	return steps[i];
}

static void put_tick_label(FILE *f, uint64_t ms, uint64_t step)
{
	time_t t = (time_t)(ms / 1000);
	char buf[40];
	struct tm tm;

	if (!localtime_r(&t, &tm))
		return;
	if (step >= 86400000)
		strftime(buf, sizeof(buf), "%m-%d %H:%M", &tm);
	else if (step >= 1000)
		strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	else
		snprintf(buf + strftime(buf, sizeof(buf), "%H:%M:%S", &tm), 8, ".%03u",
			 (unsigned int)(ms % 1000));
	fputs(buf, f);
}

static void put_axis(FILE *f, uint64_t t0, uint64_t span, double pw, double y)
{
	uint64_t step = tick_step(span), t;
	double x;

	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
		"<g class=\"ticks\" data-y=\"%.1f\">\n", TL_LABEL_W, y, TL_LABEL_W + pw, y, y);
	for (t = (t0 + step - 1) / step * step; t <= t0 + span; t += step) {
		x = TL_LABEL_W + (double)(t - t0) * pw / (double)span;
		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y, x,
			y + 4, x, y + 16);
		put_tick_label(f, t, step);
		fputs("</text>\n", f);
	}
	fputs("</g>\n", f);
}

/* The timeline's range: the first event's start to the last one's end, in whole ms. */
static void range_of(const struct jw_page *p, uint64_t *t0, uint64_t *span)
{
	uint64_t lo = UINT64_MAX, hi = 0, end;
	size_t i;

	for (i = 0; i < p->n_events; i++) {
		const struct jw_page_event *e = &p->events[i];

		end = e->begin_ms;
		if (e->wall_ms > 0)
			end += (uint64_t)e->wall_ms + (e->wall_ms > (double)(uint64_t)e->wall_ms);
		if (e->begin_ms < lo)
			lo = e->begin_ms;
		if (end > hi)
			hi = end;
	}
	*t0 = p->n_events ? lo : 0;
	*span = p->n_events && hi > lo ? hi - lo : 1;
}

static void put_lanes(const struct jw_page *p, FILE *f, double pw)
{
	size_t i;

	for (i = 0; i < p->n_lanes; i++) {
		double y = TL_TOP + (double)i * TL_LANE_H;

		fprintf(f, "<rect class=\"lane%s\" x=\"0\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%d\"/><text class=\"lane-name\" x=\"4\" y=\"%.1f\" "
			"data-pid=\"%u\">", i % 2 ? " odd" : "", y, TL_LABEL_W + pw, TL_LANE_H, y + 14,
			p->lanes[i].pid);
		jw_markup_put_cut(f, p->lanes[i].process, 18);
		if (p->lanes[i].pid)
			fprintf(f, " %u", p->lanes[i].pid);
		fprintf(f, " (%zu)</text>\n", p->lanes[i].events);
	}
}

static void put_timeline(const struct jw_page *p, FILE *f)
{
	double pw = TL_W - TL_LABEL_W - TL_RIGHT, y_axis, x, w;
	uint64_t t0, span;
	size_t i;

	range_of(p, &t0, &span);
	y_axis = TL_TOP + (double)p->n_lanes * TL_LANE_H + 2;
	fputs("<h2>Timeline</h2>\n<p class=\"said\">", f);
	if (p->events_cut)
		fprintf(f, "The longest %zu of %zu events, each at its start, as wide as it lasted; "
			"the %zu shorter ones are left out (the page draws at most %d). ",
			p->n_events, p->n_events + p->events_cut, p->events_cut, JW_PAGE_EVENTS_MAX);
	else
		fprintf(f, "Every event (%zu), each at its start, as wide as it lasted (at least %.0f "
			"px). ", p->n_events, TL_MIN_W);
	fputs("A lane per process; dashed: a hang. Hover for the event, click for its group; drag "
	      "across the timeline to zoom into a range. <button id=\"tl-reset\" hidden>Reset "
	      "zoom</button><br>", f);
	for (i = 0; i < JW_CAUSE_UNKNOWN; i++)
		fprintf(f, "<span class=\"key %s\"%s></span>%s", cause_names[i],
			i ? "" : " style=\"margin-left:0\"", cause_names[i]);
	fputs("</p>\n", f);
	fprintf(f, "<svg id=\"tl\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		"data-t0=\"%" PRIu64 "\" data-span=\"%" PRIu64 "\" data-x0=\"%d\" data-pw=\"%.1f\" "
		"data-groups=\"%zu\">\n", TL_W, y_axis + TL_AXIS_H, t0, span, TL_LABEL_W, pw,
		p->n_groups);
	put_lanes(p, f, pw);
	for (i = 0; i < p->n_events; i++) {
		const struct jw_page_event *e = &p->events[i];

		x = TL_LABEL_W + (double)(e->begin_ms - t0) * pw / (double)span;
		w = e->wall_ms * pw / (double)span;
		fprintf(f, "<rect class=\"ev %s%s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			"data-t=\"%" PRIu64 "\" data-w=\"%.3f\" data-lane=\"%u\" data-g=\"%zu\" "
			"data-cause=\"%s\"/>\n", cause_names[e->cause], e->hang ? " hang" : "", x,
			TL_TOP + (int)e->lane * TL_LANE_H + 3, w < TL_MIN_W ? TL_MIN_W : w,
			TL_LANE_H - 6, e->begin_ms, e->wall_ms, e->lane, e->rank,
			cause_names[e->cause]);
	}
	put_axis(f, t0, span, pw, y_axis);
	fprintf(f, "<rect class=\"sel\" x=\"0\" y=\"0\" width=\"0\" height=\"%.1f\" "
		"style=\"display:none\"/>\n", y_axis);
	fputs("</svg>\n<div id=\"tl-info\"> </div>\n", f);
	/* What hovering an event says of its group, for every group, shown or not. */
	fputs("<ol id=\"group-keys\" hidden>", f);
	for (i = 0; i < p->n_group_keys; i++) {
		fputs("<li>", f);
		jw_markup_put(f, p->group_keys[i]);
		fputs("</li>", f);
	}
	fputs("</ol>\n", f);
}

/*
 * The cause split: a bar of where the janks' time went (on CPU, runnable, asleep, in I/O), then
 * that time and the janks by cause in words.
 */
static void put_split(const struct jw_summary_group *g, FILE *f)
{
	static const char *const said[] = { "cpu", "runq", "blocked", "io" };
	double all = 0;
	size_t i;

	for (i = 0; i < 4; i++)
		all += g->split_ms[i];
	if (all > 0) {
		fputs("<div class=\"split\">", f);
		for (i = 0; i < 4; i++)
			if (g->split_ms[i] > 0)
				fprintf(f, "<span class=\"%s\" style=\"width:%.2f%%\" data-ms=\"%.3f\" "
					"title=\"%s %.1f ms\"></span>", cause_names[i],
					100.0 * g->split_ms[i] / all, g->split_ms[i], said[i],
					g->split_ms[i]);
		fputs("</div>\n<p class=\"fig\">time", f);
		for (i = 0; i < 4; i++)
			fprintf(f, "%s<span class=\"key %s\"></span>%s %.1f ms (%.0f%%)", i ? "," : "",
				cause_names[i], said[i], g->split_ms[i], 100.0 * g->split_ms[i] / all);
		fputs("</p>\n", f);
	}
	if (g->janks) {
		fputs("<p class=\"fig\">janks by cause:", f);
		for (i = 0; i < 4; i++)
			fprintf(f, "%s %s %" PRIu64, i ? "," : "", cause_names[i], g->cause[i]);
		fputs("</p>\n", f);
	}
}

static void put_figures(const struct jw_summary_group *g, FILE *f)
{
	size_t i;

	fprintf(f, "<p class=\"fig\">janks %zu, hangs %" PRIu64, g->janks, g->hangs);
	if (g->janks)
		fprintf(f, "; wall p50 %.1f ms, p95 %.1f ms, max %.1f ms, total %.1f s", g->p50_ms,
			g->p95_ms, g->max_ms, g->total_ms / 1000);
	fputs("</p>\n", f);
	if (g->handler) {
		fputs("<p class=\"fig\">handler ", f);
		jw_markup_put(f, g->handler);
		fputs("</p>\n", f);
	}
	fprintf(f, "<p class=\"fig\">pid");
	for (i = 0; i < g->n_pids; i++)
		fprintf(f, "%s%u", i ? ", " : " ", g->pids[i]);
	fprintf(f, "%s; files written %" PRIu64 ", withheld %" PRIu64 "</p>\n",
		g->more_pids ? ", ..." : "", g->written, g->withheld);
	if (g->heaviest_stack) {
		fputs("<p class=\"fig said\">heaviest ", f);
		jw_markup_put(f, g->heaviest_stack);
		fputs("</p>\n", f);
	}
}

static int put_flame(const struct jw_page_group *pg, size_t rank, FILE *f)
{
	char id[32], title[160], detail[200];
	struct jw_flame_head head = { title, detail };

	if (rank >= JW_PAGE_GRAPHS_MAX && pg->g.written) {
		fprintf(f, "<p class=\"said\">No flame graph: the page draws the first %d groups' "
			"only.</p>\n", JW_PAGE_GRAPHS_MAX);
		return 0;
	}
	if (!pg->flame.n) {
		fprintf(f, "<p class=\"said\">No flame graph: no stack log of its events was read"
			"%s.</p>\n", pg->logs_unread ? " (those listed were missing or damaged)" :
			" (none was written: see withheld)");
		return 0;
	}
	snprintf(id, sizeof(id), "flame%zu", rank + 1);
	snprintf(title, sizeof(title), "%" PRIu64 " samples of %zu stack log%s, merged", pg->flame.total,
		 pg->logs, pg->logs == 1 ? "" : "s");
	if (pg->boxes_cut || pg->logs_unread)
		snprintf(detail, sizeof(detail), "%zu boxes under the page's bounds left out; %zu "
			 "stack logs missing or damaged", pg->boxes_cut, pg->logs_unread);
	else
		snprintf(detail, sizeof(detail), "frames merged by name along the stack; hover, "
			 "click to zoom");
	return jw_flame_svg_embed(&pg->flame, &head, id, f);
}

static void put_files(const struct jw_page_group *pg, FILE *f)
{
	size_t i;

	if (!pg->n_files)
		return;
	fprintf(f, "<details><summary>%zu file%s</summary><ul>\n", pg->n_files + pg->more_files,
		pg->n_files + pg->more_files == 1 ? "" : "s");
	for (i = 0; i < pg->n_files; i++) {
		fputs("<li>", f);
		jw_markup_put(f, pg->files[i]);
		fputs("</li>\n", f);
	}
	if (pg->more_files)
		fprintf(f, "<li>and %zu more</li>\n", pg->more_files);
	fputs("</ul></details>\n", f);
}

static int put_groups(const struct jw_page *p, FILE *f)
{
	size_t i;
	int ret;

	fputs("<h2>Groups</h2>\n<p class=\"said\">", f);
	if (p->n_groups < p->totals.groups)
		fprintf(f, "The %zu groups of %" PRIu64 " that took the most time (--top). ",
			p->n_groups, p->totals.groups);
	fputs("A group is a process's janks with the same group key (or, with none, the same "
	      "handler). Its flame graph merges the stack logs of its janks: frames by name along "
	      "the stack, each box as wide as its samples.</p>\n", f);
	for (i = 0; i < p->n_groups; i++) {
		const struct jw_page_group *pg = &p->groups[i];
		const struct jw_summary_group *g = &pg->g;

		fprintf(f, "<section class=\"group\" id=\"g%zu\" data-rank=\"%zu\" data-samples=\""
			"%" PRIu64 "\" data-logs=\"%zu\" data-janks=\"%zu\" data-hangs=\"%" PRIu64
			"\" data-process=\"", i + 1, i + 1, pg->flame.total, pg->logs, g->janks,
			g->hangs);
		jw_markup_put(f, g->process);
		fprintf(f, "\" data-%s=\"", g->by_handler ? "handler-key" : "group");
		jw_markup_put(f, g->key);
		fprintf(f, "\">\n<h3>#%zu ", i + 1);
		jw_markup_put(f, g->process[0] ? g->process : "?");
		fputs(": ", f);
		jw_markup_put(f, g->key[0] ? g->key : "(no stack, no handler)");
		fprintf(f, "%s</h3>\n", g->by_handler ? " (handler)" : "");
		put_figures(g, f);
		put_split(g, f);
		ret = put_flame(pg, i, f);
		if (ret)
			return ret;
		put_files(pg, f);
		fputs("</section>\n", f);
	}
	return 0;
}

static bool numeric(const char *s)
{
	char *end;

	if (!*s)
		return false;
	(void)strtod(s, &end);
	return !*end;
}

/* The columns a person reads: all of stats.csv's but the two that never vary. */
static bool column_shown(const char *name)
{
	return strcmp(name, "work_source_uid") && strcmp(name, "is_interactive");
}

static void put_stats(const struct jw_page *p, FILE *f)
{
	const struct jw_page_stats *st = p->stats;
	size_t r, c, sort_col = 0, shown = 0;
	bool num;

	fputs("<h2>Statistics</h2>\n", f);
	if (!st) {
		fputs("<p class=\"said\">No stats.csv in the directory (jankwatch writes it at "
		      "exit).</p>\n", f);
		return;
	}
	fputs("<p class=\"said\">stats.csv (LooperStats: every task, slow or not, per process, "
	      "thread and handler; times in microseconds), written ", f);
	jw_markup_put(f, st->written ? st->written : "-");
	fprintf(f, ": %zu rows", st->rows + st->rows_cut);
	if (st->rows_cut)
		fprintf(f, ", the first %zu shown", st->rows);
	fputs(". Click a column to sort.</p>\n<table id=\"stats\"", f);
	/* At first, the rows that took the most time first. */
	for (c = 0; c < st->cols; c++) {
		if (!column_shown(st->header[c]))
			continue;
		if (!strcmp(st->header[c], "total_latency_micros"))
			sort_col = shown + 1;
		shown++;
	}
	if (sort_col)
		fprintf(f, " data-sort=\"%zu\"", sort_col - 1);
	fputs("><thead><tr>", f);
	for (c = 0; c < st->cols; c++) {
		if (!column_shown(st->header[c]))
			continue;
		for (r = 0, num = st->rows > 0; r < st->rows && num; r++)
			num = numeric(st->cells[r * st->cols + c]);
		fprintf(f, "<th data-num=\"%d\">", num);
		jw_markup_put(f, st->header[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (r = 0; r < st->rows; r++) {
		fputs("<tr>", f);
		for (c = 0; c < st->cols; c++) {
			const char *cell = st->cells[r * st->cols + c];

			if (!column_shown(st->header[c]))
				continue;
			fputs(numeric(cell) ? "<td class=\"num\">" : "<td>", f);
			jw_markup_put(f, cell);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

int jw_page_write(const struct jw_page *p, FILE *f)
{
	int ret;

	errno = 0;
	put_head(p, f);
	put_totals(p, f);
	put_timeline(p, f);
	ret = put_groups(p, f);
	if (ret)
		return ret;
	put_stats(p, f);
	fprintf(f, "<script>\n%s%s</script>\n</body>\n</html>\n", jw_flame_script, script);
	if (!ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}
