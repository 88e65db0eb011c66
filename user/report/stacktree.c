// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack samples merged into a tree, root (outermost caller) first, as SPEC's stack log shows
 * them; folded lines for flame graphs; the heaviest stack for the event.
 *
 * Every walk over the tree is iterative with an explicit stack, so a deep stack costs heap, not
 * C stack; stacks are also cut to JW_STACK_MAX_FRAMES frames so one bad unwind cannot make the
 * tree arbitrarily deep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/stacktree.h"

/* Frames kept per stack: deeper stacks lose their outermost frames and count as truncated. */
#define JW_STACK_MAX_FRAMES 1024

#define TRUNCATED_NAME "[truncated]"

struct st_node {
	struct jw_frame fr;
	char *name;			/* jw_frame_name(): folded lines, heaviest_stack */
	bool truncated;			/* the synthetic "[truncated]" root, not a frame */
	uint64_t id;			/* creation order: sibling ties go to the oldest */
	uint64_t count;			/* weight of the stacks through this node */
	uint64_t self;			/* weight of the stacks that end at this node */
	uint64_t asleep;		/* weight of the asleep stacks through this node */
	uint64_t end_seq;		/* add number of the last stack that ended here */
	struct st_node **children;	/* kept sorted: count descending, then id */
	size_t nr_children;
	size_t cap_children;
	struct st_node *all_next;	/* every node, newest first, so freeing needs no walk */
};

struct jw_stacktree {
	struct st_node root;		/* holds the #00 nodes; not a frame itself */
	struct st_node *all;
	uint64_t total;
	uint64_t adds;
	uint64_t next_id;
	size_t levels;			/* the most nodes on one root-to-leaf path */
};

struct jw_stacktree *jw_stacktree__new(void)
{
	return calloc(1, sizeof(struct jw_stacktree));
}

static void node_free(struct st_node *n)
{
	free(n->children);
	free(n->name);
	free(n);
}

void jw_stacktree__free(struct jw_stacktree *t)
{
	struct st_node *n, *next;

	if (!t)
		return;
	for (n = t->all; n; n = next) {
		next = n->all_next;
		node_free(n);
	}
	free(t->root.children);
	free(t);
}

uint64_t jw_stacktree__total(const struct jw_stacktree *t)
{
	return t->total;
}

/* Equal frames share a node: same kind, same module, same address within it. */
static bool frame_same(const struct jw_frame *a, const struct jw_frame *b)
{
	if (a->kind != b->kind)
		return false;
	/* Python: the same code object at the same line. */
	if (a->kind == JW_FRAME_PYTHON)
		return a->pc == b->pc && a->rel_pc == b->rel_pc;
	if (!a->module || !b->module)
		return a->module == b->module && a->pc == b->pc;
	return a->rel_pc == b->rel_pc && !strcmp(a->module, b->module);
}

/* The child of @parent for @fr (NULL: the truncated root), its index in *@idx; or NULL. */
static struct st_node *child_find(const struct st_node *parent, const struct jw_frame *fr,
				  size_t *idx)
{
	struct st_node *c;
	size_t i;

	for (i = 0; i < parent->nr_children; i++) {
		c = parent->children[i];
		if (c->truncated != !fr)
			continue;
		if (!fr || frame_same(&c->fr, fr)) {
			*idx = i;
			return c;
		}
	}
	return NULL;
}

static char *frame_name_dup(const struct jw_frame *fr)
{
	int n;
	char *s;

	if (!fr)
		return strdup(TRUNCATED_NAME);
	n = jw_frame_name_n(fr, NULL, 0);
	s = malloc(n > 0 ? (size_t)n + 1 : 1);
	if (s)
		jw_frame_name(fr, s, n > 0 ? (size_t)n + 1 : 1);
	return s;
}

/* A new child of @parent for @fr (NULL: the truncated root), with count 0; NULL on ENOMEM. */
static struct st_node *node_add(struct jw_stacktree *t, struct st_node *parent,
				const struct jw_frame *fr)
{
	struct st_node **children, *n;
	size_t cap;

	if (parent->nr_children == parent->cap_children) {
		cap = parent->cap_children ? parent->cap_children * 2 : 4;
		children = realloc(parent->children, cap * sizeof(*children));
		if (!children)
			return NULL;
		parent->children = children;
		parent->cap_children = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = frame_name_dup(fr);
	if (!n->name) {
		free(n);
		return NULL;
	}
	if (fr)
		n->fr = *fr;
	n->truncated = !fr;
	n->id = t->next_id++;
	/* Count 0 sorts last, so appending keeps the children sorted. */
	parent->children[parent->nr_children++] = n;
	n->all_next = t->all;
	t->all = n;
	return n;
}

/* Frame @i of a stack's path: the truncated root (NULL) comes first when the stack has one. */
static const struct jw_frame *path_frame(const struct jw_frame *frames, bool complete, size_t i)
{
	if (complete)
		return &frames[i];
	return i ? &frames[i - 1] : NULL;
}

/*
 * Creates the nodes of a path that do not exist yet. On ENOMEM removes the ones it created, so
 * a failed add leaves the tree as it was (new nodes form one chain hanging from one parent, and
 * are the newest on the all list).
 */
static int path_make(struct jw_stacktree *t, const struct jw_frame *frames, size_t levels,
		     bool complete)
{
	struct st_node *parent = &t->root, *child, *first_parent = NULL, *n;
	const struct jw_frame *fr;
	size_t i, idx, created = 0;

	for (i = 0; i < levels; i++) {
		fr = path_frame(frames, complete, i);
		child = child_find(parent, fr, &idx);
		if (!child) {
			child = node_add(t, parent, fr);
			if (!child)
				goto err_undo;
			if (!created++)
				first_parent = parent;
		}
		parent = child;
	}
	return 0;

err_undo:
	if (created)
		first_parent->nr_children--;
	while (created--) {
		n = t->all;
		t->all = n->all_next;
		node_free(n);
	}
	return -ENOMEM;
}

static bool node_before(const struct st_node *a, const struct st_node *b)
{
	return a->count > b->count || (a->count == b->count && a->id < b->id);
}

/* Adds @weight to child @i of @parent and moves it up to keep the siblings sorted. */
static void child_bump(struct st_node *parent, size_t i, uint64_t weight)
{
	struct st_node **c = parent->children;
	struct st_node *n = c[i];

	n->count += weight;
	for (; i > 0 && node_before(n, c[i - 1]); i--)
		c[i] = c[i - 1];
	c[i] = n;
}

int jw_stacktree__add(struct jw_stacktree *t, const struct jw_frame *frames, size_t n,
		      bool complete, uint32_t weight, bool asleep)
{
	struct st_node *parent = &t->root, *child = NULL;
	size_t i, idx = 0, levels;
	int err;

	if (!weight)
		return 0;
	if (n > JW_STACK_MAX_FRAMES) {
		frames += n - JW_STACK_MAX_FRAMES;	/* keep the leaf end, where the time is */
		n = JW_STACK_MAX_FRAMES;
		complete = false;
	}
	/* An empty stack reaches nothing; it still counts, under the truncated root. */
	if (!n)
		complete = false;
	levels = n + !complete;
	err = path_make(t, frames, levels, complete);
	if (err)
		return err;
	for (i = 0; i < levels; i++) {
		child = child_find(parent, path_frame(frames, complete, i), &idx);
		child_bump(parent, idx, weight);
		if (asleep)
			child->asleep += weight;
		parent = child;
	}
	child->self += weight;
	child->end_seq = ++t->adds;
	t->total += weight;
	if (levels > t->levels)
		t->levels = levels;
	return 0;
}

/* Called for each node in write order; @path[0..depth] are the nodes from the #00 one down. */
typedef int (*visit_fn)(const struct st_node *const *path, unsigned int depth, void *ctx);

/* Visits every node depth first, siblings in their sorted order. Returns 0, -ENOMEM or visit's. */
static int tree_walk(const struct jw_stacktree *t, visit_fn visit, void *ctx)
{
	struct walk_ent {
		const struct st_node *n;
		size_t next;
	} *stack, *e;
	const struct st_node **path, *child;
	size_t top = 0;
	int err = 0;

	if (!t->levels)
		return 0;
	/* stack[0] is the root; a node at depth d is pushed at d + 1 only if it has children. */
	stack = calloc(t->levels, sizeof(*stack));
	path = calloc(t->levels, sizeof(*path));
	if (!stack || !path) {
		err = -ENOMEM;
		goto out_free;
	}
	stack[0].n = &t->root;
	for (;;) {
		e = &stack[top];
		if (e->next == e->n->nr_children) {
			if (!top)
				break;
			top--;
			continue;
		}
		child = e->n->children[e->next++];
		path[top] = child;
		err = visit(path, top, ctx);
		if (err)
			break;
		if (child->nr_children) {
			stack[++top].n = child;
			stack[top].next = 0;
		}
	}
out_free:
	free(path);
	free(stack);
	return err;
}

#define LINE_BUF 256

/*
 * Node @n's line in the stack log (at @depth), without indentation: in @buf (LINE_BUF bytes),
 * or malloc'd when longer (a long C++ symbol); NULL on ENOMEM. The caller frees what is not @buf.
 */
static char *node_line(const struct st_node *n, unsigned int depth, char *buf)
{
	size_t len;
	char *line;

	if (n->truncated) {
		snprintf(buf, LINE_BUF, "%" PRIu64 " #%02u pc 00000000 " TRUNCATED_NAME, n->count,
			 depth);
		return buf;
	}
	len = jw_frame_line_n(&n->fr, n->count, depth, buf, LINE_BUF);
	if (len < LINE_BUF)
		return buf;
	line = malloc(len + 1);
	if (line)
		jw_frame_line(&n->fr, n->count, depth, line, len + 1);
	return line;
}

struct each_ctx {
	jw_stacktree_each_fn fn;
	void *ctx;
};

static int visit_each(const struct st_node *const *path, unsigned int depth, void *ctx)
{
	const struct st_node *n = path[depth];
	const struct each_ctx *e = ctx;
	char buf[LINE_BUF], *line = node_line(n, depth, buf);
	int ret;

	if (!line)
		return -ENOMEM;
	ret = e->fn(&(struct jw_stacktree_node){
		.fr = n->truncated ? NULL : &n->fr,
		.name = n->name,
		.line = line,
		.depth = depth,
		.count = n->count,
		.asleep = n->asleep,
	}, e->ctx);
	if (line != buf)
		free(line);
	return ret;
}

int jw_stacktree__each(const struct jw_stacktree *t, jw_stacktree_each_fn fn, void *ctx)
{
	struct each_ctx e = { fn, ctx };

	return tree_walk(t, visit_each, &e);
}

/* Writes @s with control bytes as '?': a name with a newline must not break the line format. */
static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static int write_status(FILE *f)
{
	if (!ferror(f))
		return 0;
	return errno ? -errno : -EIO;
}

static int visit_tree_line(const struct st_node *const *path, unsigned int depth, void *ctx)
{
	FILE *f = ctx;
	char buf[LINE_BUF], *line = node_line(path[depth], depth, buf);

	if (!line)
		return -ENOMEM;
	fprintf(f, "%*s", (int)depth * 4, "");
	put_clean(f, line);
	fputc('\n', f);
	if (line != buf)
		free(line);
	return write_status(f);
}

int jw_stacktree__write_tree(const struct jw_stacktree *t, FILE *f)
{
	errno = 0;
	return tree_walk(t, visit_tree_line, f);
}

/* The "[truncated]" root stays in folded lines, so a flame graph shows the cut stacks apart. */
static int visit_folded(const struct st_node *const *path, unsigned int depth, void *ctx)
{
	FILE *f = ctx;
	unsigned int i;

	if (!path[depth]->self)
		return 0;
	for (i = 0; i <= depth; i++) {
		if (i)
			fputc(';', f);
		put_clean(f, path[i]->name);
	}
	fprintf(f, " %" PRIu64 "\n", path[depth]->self);
	return write_status(f);
}

int jw_stacktree__write_folded(const struct jw_stacktree *t, FILE *f)
{
	errno = 0;
	return tree_walk(t, visit_folded, f);
}

/* One end point of the tree, named; several can share a name (same symbols, other pcs). */
struct heavy_ent {
	char *key;		/* names leaf first, joined by "<-" */
	char *group;		/* its group key */
	uint64_t weight;
	uint64_t seq;
};

struct heavy_ctx {
	struct heavy_ent *ents;
	size_t nr;
	size_t cap;
};

/* A kernel frame with no name (kallsyms hidden by kptr_restrict): "[kernel]+0x..." in the tree. */
static bool unnamed_kernel(const struct st_node *n)
{
	return !n->truncated && n->fr.kind == JW_FRAME_KERNEL && !n->fr.symbol;
}

#define UNNAMED_KERNEL "[kernel]"

/*
 * "leaf<-...<-outermost", without the truncated root (it is no frame of the program), and each
 * run of unnamed kernel frames as one "[kernel]": their addresses name nothing a reader can use,
 * and stacks that differ only in them are the same stack.
 */
static char *path_key(const struct st_node *const *path, unsigned int depth)
{
	unsigned int first = path[0]->truncated ? 1 : 0, i;
	size_t len = 1, l;
	char *key, *p;
	const char *name;

	for (i = first; i <= depth; i++)
		len += strlen(path[i]->name) + 2;
	key = malloc(len);
	if (!key)
		return NULL;
	p = key;
	for (i = depth + 1; i-- > first;) {
		if (unnamed_kernel(path[i]) && i < depth && unnamed_kernel(path[i + 1]))
			continue;
		name = unnamed_kernel(path[i]) ? UNNAMED_KERNEL : path[i]->name;
		if (p != key) {
			memcpy(p, "<-", 2);
			p += 2;
		}
		l = strlen(name);
		memcpy(p, name, l);
		p += l;
	}
	*p = '\0';
	return key;
}

/* The group key of a path: its two innermost frames of the application's own, "a<-b". */
static char *path_group(const struct st_node *const *path, unsigned int depth)
{
	const char *names[2];
	unsigned int i, n = 0;
	char *key;
	size_t len;

	for (i = depth + 1; i-- > 0 && n < 2;)
		if (!path[i]->truncated && !jw_frame_is_system(&path[i]->fr))
			names[n++] = path[i]->name;
	if (n == 0)
		return strdup("");
	if (n == 1)
		return strdup(names[0]);
	len = strlen(names[0]) + strlen(names[1]) + 3;
	key = malloc(len);
	if (key)
		snprintf(key, len, "%s<-%s", names[0], names[1]);
	return key;
}

static int visit_heavy(const struct st_node *const *path, unsigned int depth, void *ctx)
{
	const struct st_node *n = path[depth];
	struct heavy_ctx *h = ctx;
	struct heavy_ent *ents;
	size_t cap;

	/* Stacks that ended at the truncated root have no frame to name. */
	if (!n->self || n->truncated)
		return 0;
	if (h->nr == h->cap) {
		cap = h->cap ? h->cap * 2 : 16;
		ents = realloc(h->ents, cap * sizeof(*ents));
		if (!ents)
			return -ENOMEM;
		h->ents = ents;
		h->cap = cap;
	}
	h->ents[h->nr].key = path_key(path, depth);
	h->ents[h->nr].group = path_group(path, depth);
	if (!h->ents[h->nr].key || !h->ents[h->nr].group) {
		free(h->ents[h->nr].key);
		free(h->ents[h->nr].group);
		return -ENOMEM;
	}
	h->ents[h->nr].weight = n->self;
	h->ents[h->nr].seq = n->end_seq;
	h->nr++;
	return 0;
}

static int heavy_cmp(const void *a, const void *b)
{
	return strcmp(((const struct heavy_ent *)a)->key, ((const struct heavy_ent *)b)->key);
}

/* Index of the heaviest name once equal names are summed; ties go to the latest added. */
static size_t heavy_pick(struct heavy_ent *ents, size_t nr)
{
	uint64_t weight, seq, best_weight = 0, best_seq = 0;
	size_t i, j, best = 0;

	qsort(ents, nr, sizeof(*ents), heavy_cmp);
	for (i = 0; i < nr; i = j) {
		weight = 0;
		seq = 0;
		for (j = i; j < nr && !strcmp(ents[i].key, ents[j].key); j++) {
			weight += ents[j].weight;
			if (ents[j].seq > seq)
				seq = ents[j].seq;
		}
		if (weight > best_weight || (weight == best_weight && seq > best_seq)) {
			best = i;
			best_weight = weight;
			best_seq = seq;
		}
	}
	return best;
}

int jw_stacktree__heaviest_and_group(const struct jw_stacktree *t, char **heaviest,
				     char **group)
{
	struct heavy_ctx h = { 0 };
	size_t i, best;
	int err;

	*heaviest = *group = NULL;
	err = tree_walk(t, visit_heavy, &h);
	if (!err && !h.nr) {
		*heaviest = strdup("");
		*group = strdup("");
	} else if (!err) {
		best = heavy_pick(h.ents, h.nr);
		*heaviest = h.ents[best].key;
		*group = h.ents[best].group;
		h.ents[best].key = h.ents[best].group = NULL;
	}
	for (i = 0; i < h.nr; i++) {
		free(h.ents[i].key);
		free(h.ents[i].group);
	}
	free(h.ents);
	if (!err && (!*heaviest || !*group))
		err = -ENOMEM;
	if (err) {
		free(*heaviest);
		free(*group);
		*heaviest = *group = NULL;
	}
	return err;
}

/* One of the two strings jw_stacktree__heaviest_and_group() makes; NULL with errno set. */
static char *heaviest_part(const struct jw_stacktree *t, bool group)
{
	char *heaviest, *key;
	int err = jw_stacktree__heaviest_and_group(t, &heaviest, &key);

	if (err) {
		errno = -err;
		return NULL;
	}
	free(group ? heaviest : key);
	return group ? key : heaviest;
}

char *jw_stacktree__heaviest(const struct jw_stacktree *t)
{
	return heaviest_part(t, false);
}

char *jw_stacktree__group(const struct jw_stacktree *t)
{
	return heaviest_part(t, true);
}
