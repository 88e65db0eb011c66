// SPDX-License-Identifier: GPL-2.0-only
/*
 * A jank's flame graph as a self-contained SVG: the roots at the bottom, each frame a box as wide
 * as its samples above its caller's, coloured by whose code it is; a hatch over the share of a
 * box's samples where the thread slept. Its inline script zooms to a clicked box, searches the
 * names and says a hovered box's line at the bottom; without it (an <img>), the graph still reads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "output/markup.h"
#include "report/flamegraph.h"

#define PAD 10			/* left and right margin */
#define HEAD_H 64		/* the title, the detail and the controls */
#define FRAME_H 16		/* one row */
#define FOOT_H 44		/* the hovered box's line, the legend */
#define CHAR_W 7.2		/* a character of the 12px monospace font */
#define TEXT_PAD 3		/* between a box's edge and its text */

/*
 * Per kind of code: data-owner's name, the legend's, and its colour (a hue, how far it varies by
 * name, the saturation, the lightness's base).
 */
static const struct owner_look {
	const char *name, *said;
	int hue, spread, sat, light;
} owners[] = {
	[JW_OWNER_PROGRAM] = { "program", "the program's own", 8, 28, 80, 58 },	/* red-orange */
	[JW_OWNER_PYTHON] = { "python", "Python", 95, 40, 55, 55 },		/* green */
	[JW_OWNER_JIT] = { "jit", "JIT", 165, 20, 55, 50 },			/* teal */
	[JW_OWNER_INTERPRETER] = { "interpreter", "interpreter", 265, 30, 45, 68 },	/* purple */
	[JW_OWNER_LIBC] = { "libc", "C library, loader", 45, 12, 75, 60 },	/* yellow */
	[JW_OWNER_LIBRARY] = { "library", "system libraries", 60, 14, 35, 62 },	/* olive */
	[JW_OWNER_KERNEL] = { "kernel", "kernel", 200, 22, 55, 66 },		/* blue */
	[JW_OWNER_UNKNOWN] = { "unknown", "no module", 0, 0, 0, 72 },		/* grey */
	[JW_OWNER_COUNT] = { "truncated", "cut short", 0, 0, 0, 82 },		/* light grey */
};

/* @o's entry of owners[]; a value outside the enum is code in no module's. */
static const struct owner_look *owner_look(enum jw_frame_owner o)
{
	return &owners[(unsigned int)o <= JW_OWNER_COUNT ? o : JW_OWNER_UNKNOWN];
}

const char *jw_flame_owner_name(enum jw_frame_owner o)
{
	return owner_look(o)->name;
}

/* FNV-1a of @s: a name's colour is its own, the same in every graph. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void put_fill(FILE *f, enum jw_frame_owner o, const char *name)
{
	const struct owner_look *k = owner_look(o);
	uint32_t h = name_hash(name);
	int hue = k->hue + (k->spread ? (int)(h % (uint32_t)k->spread) : 0);

	fprintf(f, "hsl(%d,%d%%,%d%%)", hue, k->sat, k->light + (int)(h >> 8) % 10);
}

/*
 * The script: zoom, search, the hovered box's line, for the graph under one <svg> root (several
 * share a page). Plain ES5, no outside reference.
 */
const char jw_flame_script[] =
	"function jwFlame(svg) {\n"
	"  function num(g, k) { return parseFloat(g.getAttribute('data-' + k)); }\n"
	"  function el(c) { return svg.querySelector('.' + c); }\n"
	"  var W = num(svg, 'width'), PAD = num(svg, 'pad'), CW = num(svg, 'char');\n"
	"  var TOTAL = num(svg, 'total');\n"
	"  var frames = Array.prototype.slice.call(svg.querySelectorAll('g.f'));\n"
	"  var info = el('info'), matched = el('matched'), reset = el('reset');\n"
	"  function fit(g, x, w) {\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text'), z = g.querySelector('rect.zz');\n"
	"    var name = g.getAttribute('data-name'), n = Math.floor((w - 6) / CW);\n"
	"    r.setAttribute('x', x); r.setAttribute('width', w);\n"
	"    if (z) { z.setAttribute('x', x + w * (1 - num(g, 'asleep') / num(g, 'n')));\n"
	"             z.setAttribute('width', w * num(g, 'asleep') / num(g, 'n')); }\n"
	"    t.setAttribute('x', x + 3);\n"
	"    t.textContent = n < 3 ? '' : name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
	"  }\n"
	/* Zooms to box @g (null: the whole graph): its subtree spans the width, its callers too. */
	"  function zoom(g) {\n"
	"    var x0 = g ? num(g, 'x') : 0, n0 = g ? num(g, 'n') : TOTAL, d0 = g ? num(g, 'depth') : 0;\n"
	"    var unit = (W - 2 * PAD) / n0;\n"
	"    frames.forEach(function (f) {\n"
	"      var x = num(f, 'x'), n = num(f, 'n'), d = num(f, 'depth');\n"
	"      if (d >= d0 && x >= x0 && x + n <= x0 + n0) {\n"
	"        f.style.display = ''; f.classList.remove('caller');\n"
	"        fit(f, PAD + (x - x0) * unit, n * unit);\n"
	"      } else if (d < d0 && x <= x0 && x + n >= x0 + n0) {\n"
	"        f.style.display = ''; f.classList.add('caller');\n"
	"        fit(f, PAD, W - 2 * PAD);\n"
	"      } else {\n"
	"        f.style.display = 'none';\n"
	"      }\n"
	"    });\n"
	"    reset.style.display = g ? '' : 'none';\n"
	"  }\n"
	/* Marks the boxes whose names match @re ('': none); says the share of samples they hold. */
	"  function search(re) {\n"
	"    var rx = null, held = [], sum = 0;\n"
	"    try { rx = re ? new RegExp(re) : null; } catch (e) { matched.textContent = 'bad: ' + e.message; return; }\n"
	"    frames.forEach(function (f) {\n"
	"      var hit = rx !== null && rx.test(f.getAttribute('data-name'));\n"
	"      var x = num(f, 'x'), n = num(f, 'n'), d = num(f, 'depth');\n"
	"      f.classList.toggle('hit', hit);\n"
	"      if (!hit) return;\n"
	"      for (var i = 0; i < held.length; i++)\n"
	"        if (held[i].d < d && held[i].x <= x && x + n <= held[i].x + held[i].n) return;\n"
	"      held.push({ x: x, n: n, d: d }); sum += n;\n"
	"    });\n"
	"    matched.textContent = rx ? 'matched ' + (100 * sum / TOTAL).toFixed(1) + '% of the samples' : '';\n"
	"  }\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      info.textContent = g.querySelector('title').textContent.replace('\\n', ': ');\n"
	"    });\n"
	"    g.addEventListener('mouseout', function () { info.textContent = ' '; });\n"
	"  });\n"
	"  reset.addEventListener('click', function () { zoom(null); });\n"
	"  el('search').addEventListener('click', function () {\n"
	"    var re = window.prompt('Search the frames (a regular expression)', '');\n"
	"    if (re !== null) search(re);\n"
	"  });\n"
	"  el('clear').addEventListener('click', function () { search(''); });\n"
	"}\n";

const char jw_flame_style[] =
	"text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f:hover rect:first-of-type { stroke: #000; stroke-width: 0.6; }\n"
	"g.f.caller { opacity: 0.55; }\n"
	"g.f.hit rect:first-of-type { fill: #e040e0; }\n"
	".title { font-size: 15px; font-weight: bold; }\n"
	".ctl { fill: #1a5fb4; cursor: pointer; }\n";

/* A box's text: its name, cut to what fits in @w px (nothing under 3 characters). */
static void put_label(FILE *f, const char *name, double w)
{
	double room = (w - 2 * TEXT_PAD) / CHAR_W;

	jw_markup_put_cut(f, name, room > 0 ? (size_t)room : 0);
}

static void put_node(FILE *f, const struct jw_flame *fl, const struct jw_flame_node *nd,
		     uint64_t x, double unit, const char *hatch)
{
	double bx = PAD + (double)x * unit, w = (double)nd->count * unit;
	double y = HEAD_H + (double)(fl->levels - 1 - nd->depth) * FRAME_H;

	fprintf(f, "<g class=\"f\" data-n=\"%" PRIu64 "\" data-asleep=\"%" PRIu64 "\" "
		"data-depth=\"%u\" data-x=\"%" PRIu64 "\" data-owner=\"%s\" data-name=\"", nd->count,
		nd->asleep, nd->depth, x, jw_flame_owner_name(nd->owner));
	jw_markup_put(f, nd->name);
	fputs("\"><title>", f);
	jw_markup_put(f, nd->line);
	fprintf(f, "&#10;%" PRIu64 " sample%s, %.1f%%", nd->count, nd->count == 1 ? "" : "s",
		fl->total ? 100.0 * (double)nd->count / (double)fl->total : 0.0);
	if (nd->asleep)
		fprintf(f, ", %" PRIu64 " of them asleep", nd->asleep);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"", bx, y, w, FRAME_H - 1);
	put_fill(f, nd->owner, nd->name);
	fputs("\"/>", f);
	if (nd->asleep) {
		double zw = w * (double)nd->asleep / (double)nd->count;

		fprintf(f, "<rect class=\"zz\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"url(#%s)\" pointer-events=\"none\"/>", bx + w - zw, y, zw,
			FRAME_H - 1, hatch);
	}
	fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", bx + TEXT_PAD, y + FRAME_H - 4);
	put_label(f, nd->name, w);
	fputs("</text></g>\n", f);
}

/*
 * An element's name: its id and class in a file of its own (the tests and readers use the id),
 * its class alone in a page that holds several graphs; the script finds it by the class.
 */
static void put_name(FILE *f, const char *embed_id, const char *name, const char *more)
{
	if (!embed_id)
		fprintf(f, " id=\"%s\"", name);
	fprintf(f, " class=\"%s%s%s\"", more ? more : "", more ? " " : "", name);
}

/* The kinds of code the graph holds, then the hatch: the key to its colours. */
static void put_legend(FILE *f, const struct jw_flame *fl, double y, const char *embed_id,
		       const char *hatch)
{
	bool seen[JW_OWNER_COUNT + 1] = { false }, asleep = false;
	double x = PAD;
	size_t i;
	unsigned int o;

	for (i = 0; i < fl->n; i++) {
		seen[owner_look(fl->nodes[i].owner) - owners] = true;
		asleep = asleep || fl->nodes[i].asleep;
	}
	fputs("<g", f);
	put_name(f, embed_id, "legend", NULL);
	fputs(">\n", f);
	for (o = 0; o <= JW_OWNER_COUNT; o++) {
		if (!seen[o])
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"", x, y);
		put_fill(f, (enum jw_frame_owner)o, owners[o].said);
		fprintf(f, "\"/><text x=\"%.1f\" y=\"%.1f\" data-owner=\"%s\">%s</text>\n", x + 16,
			y + 10, owners[o].name, owners[o].said);
		x += 16 + (double)jw_markup_chars(owners[o].said) * CHAR_W + 18;
	}
	if (asleep)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"#ccc\"/>"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"url(#%s)\"/>"
			"<text x=\"%.1f\" y=\"%.1f\">asleep (off the CPU)</text>\n", x, y, x, y, hatch,
			x + 16, y + 10);
	fputs("</g>\n", f);
}

/* @embed_id NULL: a file of its own; else an <svg> of a page, with that id. */
static int svg_write(const struct jw_flame *fl, const struct jw_flame_head *head,
		     const char *embed_id, FILE *f)
{
	double unit = fl->total ? (JW_FLAME_WIDTH - 2.0 * PAD) / (double)fl->total : 0;
	unsigned int levels = fl->levels ? fl->levels : 1;
	int height = HEAD_H + (int)levels * FRAME_H + FOOT_H;
	char hatch[96];
	uint64_t *cursor;
	size_t i;

	/* The samples before the next box of each row: a child starts where its caller does. */
	cursor = calloc(levels + 1, sizeof(*cursor));
	if (!cursor)
		return -ENOMEM;
	snprintf(hatch, sizeof(hatch), "%s%sasleep", embed_id ? embed_id : "",
		 embed_id ? "-" : "");
	errno = 0;
	if (!embed_id)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", f);
	fprintf(f, "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-width=\"%d\" data-pad=\"%d\" "
		"data-char=\"%.1f\" data-total=\"%" PRIu64 "\"", JW_FLAME_WIDTH, height,
		JW_FLAME_WIDTH, height, JW_FLAME_WIDTH, PAD, CHAR_W, fl->total);
	if (embed_id)
		fprintf(f, " id=\"%s\" class=\"flame\"", embed_id);
	fputs(">\n", f);
	if (!embed_id)
		fprintf(f, "<style>\n%s</style>\n", jw_flame_style);
	fprintf(f, "<defs><pattern id=\"%s\" width=\"6\" height=\"6\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"3\" "
		"height=\"6\" fill=\"#000\" fill-opacity=\"0.28\"/></pattern></defs>\n", hatch);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfbf8\"/>\n");
	fputs("<text", f);
	put_name(f, embed_id, "title", NULL);
	fprintf(f, " x=\"%d\" y=\"20\">", PAD);
	jw_markup_put(f, head && head->title ? head->title : "");
	fputs("</text>\n<text", f);
	put_name(f, embed_id, "detail", NULL);
	fprintf(f, " x=\"%d\" y=\"38\">", PAD);
	jw_markup_put(f, head && head->detail ? head->detail : "");
	fputs("</text>\n<text", f);
	put_name(f, embed_id, "reset", "ctl");
	fprintf(f, " x=\"%d\" y=\"56\" style=\"display:none\">Reset zoom</text>\n<text", PAD);
	put_name(f, embed_id, "matched", NULL);
	fprintf(f, " x=\"%d\" y=\"56\" text-anchor=\"end\"> </text>\n<text", JW_FLAME_WIDTH - PAD);
	put_name(f, embed_id, "clear", "ctl");
	fprintf(f, " x=\"%d\" y=\"38\" text-anchor=\"end\">Clear</text>\n<text",
		JW_FLAME_WIDTH - PAD);
	put_name(f, embed_id, "search", "ctl");
	fprintf(f, " x=\"%d\" y=\"38\" text-anchor=\"end\">Search</text>\n<g",
		JW_FLAME_WIDTH - PAD - 50);
	put_name(f, embed_id, "frames", NULL);
	fputs(">\n", f);
	for (i = 0; i < fl->n; i++) {
		const struct jw_flame_node *nd = &fl->nodes[i];
		uint64_t x = cursor[nd->depth];

		cursor[nd->depth] += nd->count;
		cursor[nd->depth + 1] = x;
		put_node(f, fl, nd, x, unit, hatch);
	}
	fputs("</g>\n<text", f);
	put_name(f, embed_id, "info", NULL);
	fprintf(f, " x=\"%d\" y=\"%d\"> </text>\n", PAD, HEAD_H + (int)levels * FRAME_H + 16);
	put_legend(f, fl, HEAD_H + (double)levels * FRAME_H + 26, embed_id, hatch);
	if (!embed_id)
		fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s"
			"window.addEventListener('load', function () { jwFlame(document.documentElement); });\n"
			"]]></script>\n", jw_flame_script);
	fputs("</svg>\n", f);
	free(cursor);
	if (!ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}

int jw_flame_svg_write(const struct jw_flame *fl, const struct jw_flame_head *head, FILE *f)
{
	return svg_write(fl, head, NULL, f);
}

int jw_flame_svg_embed(const struct jw_flame *fl, const struct jw_flame_head *head,
		       const char *id, FILE *f)
{
	return svg_write(fl, head, id, f);
}
