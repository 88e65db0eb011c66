// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack logs merged into one flame graph: a trie of frames keyed by name, owner and where, each
 * node's children in the order first seen (a linear scan finds a sibling: a caller has few
 * distinct callees once addresses are merged), sorted by count only when the graph is drawn.
 *
 * Nothing here recurses: nodes are kept in creation order (a caller before its callees), which
 * is all the width pass needs, and the drawing walk keeps its own stack, so a stack 1024 frames
 * deep costs heap, not C stack.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/flamemerge.h"

struct fm_node {
	const char *name;		/* in text[] */
	const char *where;		/* in text[], after the name */
	enum jw_frame_owner owner;
	uint64_t count;
	size_t id;			/* index in nodes[]: creation order, sibling ties */
	struct fm_node *parent;		/* the graph's root for a root */
	struct fm_node *first_child;	/* children in the order first seen */
	struct fm_node *last_child;
	struct fm_node *next_sibling;
	char text[];
};

struct jw_flamemerge {
	struct fm_node *root;		/* holds the roots; not a frame itself */
	struct fm_node **nodes;		/* every node, in creation order */
	size_t nr_nodes;
	size_t cap_nodes;
	struct fm_node **path;		/* path[d]: the last frame added at depth d */
	size_t path_len;		/* frames on it: the next frame's depth is at most this */
	size_t path_cap;
	size_t levels;			/* the deepest frame's depth + 1 */
	uint64_t total;
	uint64_t logs;
};

struct jw_flamemerge *jw_flamemerge__new(void)
{
	struct jw_flamemerge *m = calloc(1, sizeof(*m));

	if (m)
		m->root = calloc(1, sizeof(*m->root));
	if (m && !m->root) {
		free(m);
		return NULL;
	}
	return m;
}

void jw_flamemerge__free(struct jw_flamemerge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_nodes; i++)
		free(m->nodes[i]);
	free(m->nodes);
	free(m->path);
	free(m->root);
	free(m);
}

uint64_t jw_flamemerge__total(const struct jw_flamemerge *m)
{
	return m->total;
}

uint64_t jw_flamemerge__logs(const struct jw_flamemerge *m)
{
	return m->logs;
}

void jw_flamemerge__next(struct jw_flamemerge *m)
{
	m->path_len = 0;
	m->logs++;
}

/* Grows @*arr (of @*cap pointers) to hold @want. 0 or -ENOMEM. */
static int ptrs_fit(struct fm_node ***arr, size_t *cap, size_t want)
{
	struct fm_node **p;
	size_t n = *cap ? *cap : 16;

	if (want <= *cap)
		return 0;
	while (n < want)
		n *= 2;
	p = realloc(*arr, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* The child of @parent named so, or NULL. */
static struct fm_node *child_find(const struct fm_node *parent, const char *name,
				  const char *where, enum jw_frame_owner owner)
{
	struct fm_node *c;

	for (c = parent->first_child; c; c = c->next_sibling)
		if (c->owner == owner && !strcmp(c->name, name) && !strcmp(c->where, where))
			return c;
	return NULL;
}

/* A new last child of @parent, with count 0; NULL on ENOMEM. */
static struct fm_node *child_add(struct jw_flamemerge *m, struct fm_node *parent,
				 const char *name, const char *where, enum jw_frame_owner owner)
{
	size_t name_len = strlen(name), where_len = strlen(where);
	struct fm_node *n;

	if (ptrs_fit(&m->nodes, &m->cap_nodes, m->nr_nodes + 1))
		return NULL;
	n = calloc(1, sizeof(*n) + name_len + where_len + 2);
	if (!n)
		return NULL;
	memcpy(n->text, name, name_len + 1);
	memcpy(n->text + name_len + 1, where, where_len + 1);
	n->name = n->text;
	n->where = n->text + name_len + 1;
	n->owner = owner;
	n->id = m->nr_nodes;
	n->parent = parent;
	if (parent->last_child)
		parent->last_child->next_sibling = n;
	else
		parent->first_child = n;
	parent->last_child = n;
	m->nodes[m->nr_nodes++] = n;
	return n;
}

int jw_flamemerge__add(struct jw_flamemerge *m, const struct jw_stacklog_frame *fr)
{
	const char *where = fr->where ? fr->where : "";
	struct fm_node *parent, *n;
	size_t depth = fr->depth;

	if (!fr->name || depth > m->path_len)
		return -EINVAL;
	if (ptrs_fit(&m->path, &m->path_cap, depth + 1))
		return -ENOMEM;
	parent = depth ? m->path[depth - 1] : m->root;
	n = child_find(parent, fr->name, where, fr->owner);
	if (!n) {
		n = child_add(m, parent, fr->name, where, fr->owner);
		if (!n)
			return -ENOMEM;
	}
	n->count += fr->count;
	if (!depth)
		m->total += fr->count;
	m->path[depth] = n;
	m->path_len = depth + 1;
	if (m->path_len > m->levels)
		m->levels = m->path_len;
	return 0;
}

/* The least count of @total's @permille / 1000 (rounded up), without overflowing. */
static uint64_t permille_of(uint64_t total, unsigned int permille)
{
	uint64_t part = (total % 1000) * permille;

	return total / 1000 * permille + part / 1000 + (part % 1000 != 0);
}

static int width_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The least width a box must have to be kept: @min_permille's cut, raised past the widest
 * @max_boxes (less the roots) when more are left. @width[id]: each node's lower bound.
 */
static int cut_width(const struct jw_flamemerge *m, const uint64_t *width,
		     unsigned int min_permille, size_t max_boxes, uint64_t *least)
{
	size_t i, n = 0, roots = 0, room;
	uint64_t *widths;

	*least = permille_of(m->total, min_permille > 1000 ? 1000 : min_permille);
	for (i = 0; i < m->nr_nodes; i++) {
		if (m->nodes[i]->parent == m->root)
			roots++;
		else if (width[i] >= *least)
			n++;
	}
	if (!max_boxes || roots + n <= max_boxes)
		return 0;
	room = max_boxes > roots ? max_boxes - roots : 0;
	widths = malloc(n * sizeof(*widths));
	if (!widths)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i]->parent != m->root && width[i] >= *least)
			widths[n++] = width[i];
	qsort(widths, n, sizeof(*widths), width_cmp);
	/* Past the (room + 1)-th widest, and every box as narrow. */
	*least = widths[room] + 1;
	free(widths);
	return 0;
}

static int sibling_cmp(const void *a, const void *b)
{
	const struct fm_node *x = *(const struct fm_node *const *)a;
	const struct fm_node *y = *(const struct fm_node *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The state of the drawing walk. */
struct draw {
	const struct jw_flamemerge *m;
	const uint64_t *width;
	uint64_t least;
	struct fm_node **kids;		/* the sorted kept children of each node on the path */
	size_t nr_kids;
	struct slice {
		size_t begin, next, end;
	} *stack;			/* stack[d]: the boxes of depth d left to draw, in kids[] */
	size_t depth;			/* entries on the stack */
	char *line;
	size_t line_cap;
};

static bool kept(const struct draw *d, const struct fm_node *n)
{
	return n->parent == d->m->root || d->width[n->id] >= d->least;
}

/* Puts @n's kept children, sorted, on the stack; nothing when it has none. */
static void kids_push(struct draw *d, const struct fm_node *n)
{
	size_t begin = d->nr_kids;
	struct fm_node *c;

	for (c = n->first_child; c; c = c->next_sibling)
		if (kept(d, c))
			d->kids[d->nr_kids++] = c;
	if (d->nr_kids == begin)
		return;
	qsort(d->kids + begin, d->nr_kids - begin, sizeof(*d->kids), sibling_cmp);
	d->stack[d->depth].begin = begin;
	d->stack[d->depth].next = begin;
	d->stack[d->depth].end = d->nr_kids;
	d->depth++;
}

/* Pushes box @n at @depth, its line "<name> in <where>". 0 or -ENOMEM. */
static int box_push(struct draw *d, struct jw_flame *fl, const struct fm_node *n,
		    unsigned int depth)
{
	size_t want = strlen(n->name) + strlen(n->where) + 5;
	char *line;

	if (want > d->line_cap) {
		line = realloc(d->line, want);
		if (!line)
			return -ENOMEM;
		d->line = line;
		d->line_cap = want;
	}
	if (*n->where)
		snprintf(d->line, d->line_cap, "%s in %s", n->name, n->where);
	else
		snprintf(d->line, d->line_cap, "%s", n->name);
	return jw_flame__push(fl, n->name, d->line, n->owner, depth, n->count, 0);
}

/* Draws every kept box depth first, siblings by count. 0 or -ENOMEM. */
static int draw_walk(struct draw *d, struct jw_flame *fl)
{
	const struct fm_node *n;
	struct slice *s;
	int err;

	kids_push(d, d->m->root);
	while (d->depth) {
		s = &d->stack[d->depth - 1];
		if (s->next == s->end) {
			/* Its boxes done, the slices above it gone: it is on top of kids[]. */
			d->nr_kids = s->begin;
			d->depth--;
			continue;
		}
		n = d->kids[s->next++];
		err = box_push(d, fl, n, d->depth - 1);
		if (err)
			return err;
		kids_push(d, n);
	}
	return 0;
}

int jw_flamemerge__flame(const struct jw_flamemerge *m, unsigned int min_permille,
			 size_t max_boxes, struct jw_flame *fl, size_t *cut)
{
	struct draw d = { .m = m };
	uint64_t *width = NULL;
	const struct fm_node *n;
	size_t i, nr_kept = 0;
	int err = 0;

	if (cut)
		*cut = 0;
	if (!m->nr_nodes)
		return 0;
	width = malloc(m->nr_nodes * sizeof(*width));
	d.kids = malloc(m->nr_nodes * sizeof(*d.kids));
	d.stack = malloc((m->levels + 1) * sizeof(*d.stack));
	if (!width || !d.kids || !d.stack) {
		err = -ENOMEM;
		goto out;
	}
	/* A box is at most as wide as its caller: the width on its path, callers first. */
	for (i = 0; i < m->nr_nodes; i++) {
		n = m->nodes[i];
		width[i] = n->count;
		if (n->parent != m->root && width[n->parent->id] < width[i])
			width[i] = width[n->parent->id];
	}
	err = cut_width(m, width, min_permille, max_boxes, &d.least);
	if (err)
		goto out;
	d.width = width;
	for (i = 0; i < m->nr_nodes; i++)
		nr_kept += kept(&d, m->nodes[i]);
	err = draw_walk(&d, fl);
	if (!err && cut)
		*cut = m->nr_nodes - nr_kept;
out:
	if (err)
		jw_flame__free(fl);
	free(d.line);
	free(d.stack);
	free(d.kids);
	free(width);
	return err;
}
