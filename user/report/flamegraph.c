// SPDX-License-Identifier: GPL-2.0-only
/* A jank's flame graph: the boxes, from the stack log's tree. The SVG: flamesvg.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/flamegraph.h"

int jw_flame__push(struct jw_flame *fl, const char *name, const char *line,
		   enum jw_frame_owner owner, unsigned int depth, uint64_t count, uint64_t asleep)
{
	struct jw_flame_node *nodes, *nd;
	unsigned int most = fl->n ? fl->nodes[fl->n - 1].depth + 1 : 0;

	if (depth > most)
		return -EINVAL;
	if (fl->n == fl->cap) {
		size_t cap = fl->cap ? fl->cap * 2 : 64;

		nodes = realloc(fl->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		fl->nodes = nodes;
		fl->cap = cap;
	}
	nd = &fl->nodes[fl->n];
	nd->name = strdup(name);
	nd->line = strdup(line);
	if (!nd->name || !nd->line) {
		free(nd->name);
		free(nd->line);
		return -ENOMEM;
	}
	nd->owner = owner;
	nd->depth = depth;
	nd->count = count;
	nd->asleep = asleep;
	fl->n++;
	if (!depth)
		fl->total += count;
	if (depth + 1 > fl->levels)
		fl->levels = depth + 1;
	return 0;
}

static int push_node(const struct jw_stacktree_node *n, void *ctx)
{
	return jw_flame__push(ctx, n->name, n->line, n->fr ? jw_frame_owner(n->fr) : JW_OWNER_COUNT,
			      n->depth, n->count, n->asleep);
}

int jw_flame__from_tree(struct jw_flame *fl, const struct jw_stacktree *t)
{
	int ret = jw_stacktree__each(t, push_node, fl);

	if (ret)
		jw_flame__free(fl);
	return ret;
}

void jw_flame__free(struct jw_flame *fl)
{
	size_t i;

	if (!fl)
		return;
	for (i = 0; i < fl->n; i++) {
		free(fl->nodes[i].name);
		free(fl->nodes[i].line);
	}
	free(fl->nodes);
	memset(fl, 0, sizeof(*fl));
}
