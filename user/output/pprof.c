// SPDX-License-Identifier: GPL-2.0-only
/* Building a profile: its tables, interning into them, and the samples of named frames. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/frame.h"
#include "output/pprof.h"
#include "output/pprof_table.h"

const char *const jw_pprof_value_type[JW_PPROF_VALUES][2] = {
	[JW_PPROF_SAMPLES] = { "samples", "count" },
	[JW_PPROF_OFFCPU_NS] = { "off_cpu", "nanoseconds" },
	[JW_PPROF_WALL_NS] = { "wall", "nanoseconds" },
};

#define KERNEL_MAPPING "[kernel.kallsyms]"

/* Room for one more element in vector @v (element size @size). 0 or -ENOMEM. */
static int vec_reserve(void **v, size_t *cap, size_t n, size_t more, size_t size)
{
	size_t want = *cap ? *cap : 16;
	void *nv;

	while (want < n + more)
		want *= 2;
	if (want == *cap)
		return 0;
	nv = realloc(*v, want * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = want;
	return 0;
}

#define RESERVE(p, name, more)                                                           \
	vec_reserve((void **)&(p)->name, &(p)->cap_##name, (p)->n_##name, (more), \
		    sizeof(*(p)->name))

static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL
#define HASH_OF(h, x) hash_bytes((h), &(x), sizeof(x))

typedef bool (*eq_fn)(const struct jw_pprof *p, uint32_t id, const void *key);

/* The id of the record equal to @key under @hash, or 0. */
static uint32_t index_find(const struct jw_pprof *p, const struct pp_index *ix, uint64_t hash,
			   eq_fn eq, const void *key)
{
	size_t i;

	if (!ix->cap)
		return 0;
	for (i = hash & (ix->cap - 1); ix->slots[i].id; i = (i + 1) & (ix->cap - 1))
		if (ix->slots[i].hash == hash && eq(p, ix->slots[i].id, key))
			return ix->slots[i].id;
	return 0;
}

/* Records @id under @hash. 0 or -ENOMEM. */
static int index_add(struct pp_index *ix, uint64_t hash, uint32_t id)
{
	size_t i;

	if (2 * (ix->n + 1) > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 64, k;
		struct pp_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (k = 0; k < ix->cap; k++) {
			if (!ix->slots[k].id)
				continue;
			for (i = ix->slots[k].hash & (cap - 1); slots[i].id; i = (i + 1) & (cap - 1))
				;
			slots[i] = ix->slots[k];
		}
		free(ix->slots);
		ix->slots = slots;
		ix->cap = cap;
	}
	for (i = hash & (ix->cap - 1); ix->slots[i].id; i = (i + 1) & (ix->cap - 1))
		;
	ix->slots[i] = (struct pp_slot){ hash, id };
	ix->n++;
	return 0;
}

static bool string_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	return strcmp(p->strings[id - 1], key) == 0;
}

int64_t jw_pprof_intern(struct jw_pprof *p, const char *s)
{
	uint64_t h;
	uint32_t id;
	char *copy;

	if (!s || !*s)
		return 0;
	h = hash_bytes(HASH_SEED, s, strlen(s));
	id = index_find(p, &p->string_index, h, string_eq, s);
	if (id)
		return id - 1;
	copy = strdup(s);
	if (!copy || RESERVE(p, strings, 1) || index_add(&p->string_index, h, p->n_strings + 1)) {
		free(copy);
		return -ENOMEM;
	}
	p->strings[p->n_strings++] = copy;
	return (int64_t)p->n_strings - 1;
}

struct jw_pprof *jw_pprof__new(int64_t period_ns)
{
	struct jw_pprof *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return NULL;
	p->period_ns = period_ns;
	/* The string table begins with "", then the names of the types. */
	p->strings = calloc(16, sizeof(*p->strings));
	p->strings ? (void)(p->strings[0] = strdup("")) : (void)0;
	if (!p->strings || !p->strings[0] || index_add(&p->string_index, HASH_SEED, 1))
		goto err;
	p->cap_strings = 16;
	p->n_strings = 1;
	for (i = 0; i < JW_PPROF_VALUES; i++)
		if (jw_pprof_intern(p, jw_pprof_value_type[i][0]) < 0 ||
		    jw_pprof_intern(p, jw_pprof_value_type[i][1]) < 0)
			goto err;
	if (jw_pprof_intern(p, "cpu") < 0)
		goto err;
	return p;
err:
	jw_pprof__free(p);
	return NULL;
}

void jw_pprof__free(struct jw_pprof *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_strings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->mappings);
	free(p->functions);
	free(p->lines);
	free(p->locations);
	free(p->loc_ids);
	free(p->labels);
	free(p->samples);
	free(p->comments);
	free(p->string_index.slots);
	free(p->mapping_index.slots);
	free(p->function_index.slots);
	free(p->location_index.slots);
	free(p->sample_index.slots);
	free(p);
}

void jw_pprof__cover(struct jw_pprof *p, int64_t time_ns, int64_t duration_ns)
{
	if (time_ns <= 0)
		return;
	if (!p->time_ns || time_ns < p->time_ns)
		p->time_ns = time_ns;
	if (time_ns + duration_ns > p->end_ns)
		p->end_ns = time_ns + duration_ns;
}

int jw_pprof__comment(struct jw_pprof *p, const char *text)
{
	int64_t s = jw_pprof_intern(p, text);

	if (s < 0 || RESERVE(p, comments, 1))
		return -ENOMEM;
	p->comments[p->n_comments++] = s;
	return 0;
}

size_t jw_pprof__samples(const struct jw_pprof *p)
{
	return p->n_samples;
}

/* Mappings: one per (file, build-id); the address range grows with what it is seen at. */

static bool mapping_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	const struct pp_mapping *a = &p->mappings[id - 1], *b = key;

	return a->file == b->file && a->build_id == b->build_id;
}

static uint64_t mapping_hash(const struct pp_mapping *m)
{
	return HASH_OF(HASH_OF(HASH_SEED, m->file), m->build_id);
}

uint64_t jw_pprof_mapping(struct jw_pprof *p, const struct pp_mapping *key, uint64_t lo,
			  uint64_t hi)
{
	uint64_t h = mapping_hash(key);
	uint32_t id = index_find(p, &p->mapping_index, h, mapping_eq, key);
	struct pp_mapping *m;

	if (!id) {
		if (RESERVE(p, mappings, 1) || index_add(&p->mapping_index, h, p->n_mappings + 1))
			return 0;
		p->mappings[p->n_mappings++] = *key;
		id = p->n_mappings;
		p->mappings[id - 1].start = lo;
		p->mappings[id - 1].limit = hi;
	}
	m = &p->mappings[id - 1];
	if (lo < m->start)
		m->start = lo;
	if (hi > m->limit)
		m->limit = hi;
	m->has_functions |= key->has_functions;
	m->has_filenames |= key->has_filenames;
	m->has_lines |= key->has_lines;
	return id;
}

int jw_pprof__main_binary(struct jw_pprof *p, const char *path, const char *build_id)
{
	struct pp_mapping m = {
		.file = jw_pprof_intern(p, path),
		.build_id = jw_pprof_intern(p, build_id),
	};

	if (m.file < 0 || m.build_id < 0)
		return -ENOMEM;
	/* An empty range, widened by the addresses seen in it. */
	return jw_pprof_mapping(p, &m, UINT64_MAX, 0) ? 0 : -ENOMEM;
}

static bool function_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	return memcmp(&p->functions[id - 1], key, sizeof(struct pp_function)) == 0;
}

uint64_t jw_pprof_function(struct jw_pprof *p, const struct pp_function *f)
{
	uint64_t h = hash_bytes(HASH_SEED, f, sizeof(*f));
	uint32_t id = index_find(p, &p->function_index, h, function_eq, f);

	if (id)
		return id;
	if (RESERVE(p, functions, 1) || index_add(&p->function_index, h, p->n_functions + 1))
		return 0;
	p->functions[p->n_functions++] = *f;
	return p->n_functions;
}


static bool location_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	const struct pp_location *a = &p->locations[id - 1];
	const struct pp_location_key *b = key;

	return a->mapping == b->mapping && a->address == b->address &&
	       a->n_lines == b->n_lines &&
	       !memcmp(&p->lines[a->first_line], b->lines, b->n_lines * sizeof(*b->lines));
}

uint64_t jw_pprof_location(struct jw_pprof *p, const struct pp_location_key *k)
{
	uint64_t h = HASH_OF(HASH_OF(HASH_SEED, k->mapping), k->address);
	uint32_t id;

	h = hash_bytes(h, k->lines, k->n_lines * sizeof(*k->lines));
	id = index_find(p, &p->location_index, h, location_eq, k);
	if (id)
		return id;
	if (RESERVE(p, locations, 1) || RESERVE(p, lines, k->n_lines) ||
	    index_add(&p->location_index, h, p->n_locations + 1))
		return 0;
	memcpy(&p->lines[p->n_lines], k->lines, k->n_lines * sizeof(*k->lines));
	p->locations[p->n_locations++] = (struct pp_location){
		.mapping = k->mapping,
		.address = k->address,
		.first_line = p->n_lines,
		.n_lines = k->n_lines,
	};
	p->n_lines += k->n_lines;
	return p->n_locations;
}


static bool sample_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	const struct pp_sample *a = &p->samples[id - 1];
	const struct pp_sample_key *b = key;

	return a->n_locs == b->n_locs && a->n_labels == b->n_labels &&
	       !memcmp(&p->loc_ids[a->first_loc], b->locs, b->n_locs * sizeof(*b->locs)) &&
	       !memcmp(&p->labels[a->first_label], b->labels, b->n_labels * sizeof(*b->labels));
}

static uint64_t sample_hash(const uint64_t *locs, size_t n_locs, const struct pp_label *labels,
			    size_t n_labels)
{
	return hash_bytes(hash_bytes(HASH_SEED, locs, n_locs * sizeof(*locs)), labels,
			  n_labels * sizeof(*labels));
}

int jw_pprof_add_sample(struct jw_pprof *p, const struct pp_sample_key *k, const int64_t *values)
{
	uint64_t h = sample_hash(k->locs, k->n_locs, k->labels, k->n_labels);
	uint32_t id;
	size_t i;

	id = index_find(p, &p->sample_index, h, sample_eq, k);
	if (!id) {
		if (RESERVE(p, samples, 1) || RESERVE(p, loc_ids, k->n_locs) ||
		    RESERVE(p, labels, k->n_labels) ||
		    index_add(&p->sample_index, h, p->n_samples + 1))
			return -ENOMEM;
		memcpy(&p->loc_ids[p->n_loc_ids], k->locs, k->n_locs * sizeof(*k->locs));
		memcpy(&p->labels[p->n_labels], k->labels, k->n_labels * sizeof(*k->labels));
		p->samples[p->n_samples++] = (struct pp_sample){
			.first_loc = p->n_loc_ids,
			.n_locs = k->n_locs,
			.first_label = p->n_labels,
			.n_labels = k->n_labels,
		};
		p->n_loc_ids += k->n_locs;
		p->n_labels += k->n_labels;
		id = p->n_samples;
	}
	for (i = 0; i < JW_PPROF_VALUES; i++)
		p->samples[id - 1].v[i] += values[i];
	return 0;
}

/* "file:line[:col]" split into the file's string index and the line number. */
static int split_src(struct jw_pprof *p, const char *src, int64_t *file, int64_t *line)
{
	const char *colon = src ? strchr(src, ':') : NULL;
	char buf[4096];

	*file = 0;
	*line = 0;
	if (!src)
		return 0;
	if (!colon) {
		*file = jw_pprof_intern(p, src);
		return *file < 0 ? -ENOMEM : 0;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(colon - src), src);
	*line = strtoll(colon + 1, NULL, 10);
	*file = jw_pprof_intern(p, buf);
	return *file < 0 ? -ENOMEM : 0;
}

/* The location of frame @fr: its mapping, address and one line. 0 on ENOMEM. */
static uint64_t frame_location(struct jw_pprof *p, const struct jw_frame *fr)
{
	struct pp_mapping m = { 0 };
	struct pp_function f = { 0 };
	struct pp_line ln;
	char name[1024];
	uint64_t mapping = 0;
	int64_t file, line;

	if (split_src(p, fr->src, &file, &line))
		return 0;
	f.name = jw_pprof_intern(p, jw_frame_name(fr, name, sizeof(name)));
	f.system_name = fr->symbol ? f.name : 0;
	f.file = file;
	if (f.name < 0)
		return 0;
	if (fr->kind == JW_FRAME_KERNEL || (fr->kind == JW_FRAME_NATIVE && fr->module)) {
		m.file = jw_pprof_intern(p, fr->kind == JW_FRAME_KERNEL ? KERNEL_MAPPING : fr->module);
		m.build_id = jw_pprof_intern(p, fr->kind == JW_FRAME_KERNEL ? NULL : fr->build_id);
		if (m.file < 0 || m.build_id < 0)
			return 0;
		m.has_functions = fr->symbol != NULL;
		m.has_filenames = m.has_lines = fr->src != NULL;
		/* The module's load address: where its ELF address 0 is (the kernel: none). */
		mapping = jw_pprof_mapping(p, &m,
				     fr->kind == JW_FRAME_KERNEL || fr->rel_pc > fr->pc ? fr->pc :
											 fr->pc - fr->rel_pc,
				     fr->pc + 1);
		if (!mapping)
			return 0;
	}
	ln.function = jw_pprof_function(p, &f);
	ln.line = line;
	if (!ln.function)
		return 0;
	return jw_pprof_location(p, &(struct pp_location_key){
		.mapping = mapping,
		.address = fr->pc,
		.lines = &ln,
		.n_lines = 1,
	});
}

/* The labels @in interned into @out. 0 or -ENOMEM. */
static int intern_labels(struct jw_pprof *p, const struct jw_pprof_label *in, size_t n,
			 struct pp_label *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i] = (struct pp_label){
			.key = jw_pprof_intern(p, in[i].key),
			.str = in[i].str ? jw_pprof_intern(p, in[i].str) : 0,
			.num = in[i].str ? 0 : in[i].num,
			.unit = in[i].str ? 0 : jw_pprof_intern(p, in[i].unit),
		};
		if (out[i].key < 0 || out[i].str < 0 || out[i].unit < 0)
			return -ENOMEM;
	}
	return 0;
}

int jw_pprof__add(struct jw_pprof *p, const struct jw_frame *frames, size_t n,
		  const int64_t values[JW_PPROF_VALUES], const struct jw_pprof_label *labels,
		  size_t n_labels)
{
	uint64_t locs[JW_PPROF_MAX_STACK];
	struct pp_label lab[JW_PPROF_MAX_LABELS];
	size_t i;

	if (n > JW_PPROF_MAX_STACK)
		n = JW_PPROF_MAX_STACK;	/* the outermost frames go */
	if (n_labels > JW_PPROF_MAX_LABELS)
		n_labels = JW_PPROF_MAX_LABELS;
	/* pprof's stacks are leaf first. */
	for (i = 0; i < n; i++) {
		locs[i] = frame_location(p, &frames[n - 1 - i]);
		if (!locs[i])
			return -ENOMEM;
	}
	if (intern_labels(p, labels, n_labels, lab))
		return -ENOMEM;
	return jw_pprof_add_sample(p, &(struct pp_sample_key){ locs, n, lab, n_labels }, values);
}

int jw_pprof__label_samples(struct jw_pprof *p, const struct jw_pprof_label *labels, size_t n)
{
	struct pp_label lab[JW_PPROF_MAX_LABELS];
	struct pp_index old = p->sample_index;
	size_t i, k, had = p->n_labels;
	int ret;

	if (n > JW_PPROF_MAX_LABELS)
		n = JW_PPROF_MAX_LABELS;
	ret = intern_labels(p, labels, n, lab);
	if (ret)
		return ret;
	/* Each sample's labels are copied to the end with @labels after them, then re-indexed. */
	for (i = 0; i < p->n_samples; i++)
		if (p->samples[i].n_labels + n > JW_PPROF_MAX_LABELS)
			return -E2BIG;
	for (i = 0, k = 0; i < p->n_samples; i++)
		k += p->samples[i].n_labels + n;
	if (RESERVE(p, labels, k))
		return -ENOMEM;
	p->sample_index = (struct pp_index){ 0 };
	for (i = 0; i < p->n_samples && !ret; i++) {
		struct pp_sample *s = &p->samples[i];

		memcpy(&p->labels[p->n_labels], &p->labels[s->first_label],
		       s->n_labels * sizeof(*lab));
		memcpy(&p->labels[p->n_labels + s->n_labels], lab, n * sizeof(*lab));
		s->first_label = p->n_labels;
		s->n_labels += n;
		p->n_labels += s->n_labels;
		ret = index_add(&p->sample_index, sample_hash(p->loc_ids + s->first_loc, s->n_locs,
							      p->labels + s->first_label,
							      s->n_labels),
				(uint32_t)i + 1);
	}
	free(old.slots);
	/* The old ranges are no sample's any more. */
	memmove(p->labels, p->labels + had, (p->n_labels - had) * sizeof(*lab));
	for (i = 0; i < p->n_samples; i++)
		p->samples[i].first_label -= had;
	p->n_labels -= had;
	return ret;
}

void *jw_pprof_table(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}
