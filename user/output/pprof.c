// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"

#include "output/gzip.h"
#include "output/pprof.h"
#include "base/frame.h"

/* A profile file inflated past this is refused (a damaged or hostile file). */
#define MAX_PROFILE_BYTES (256u << 20)

static const char *const value_type[JW_PPROF_VALUES][2] = {
	[JW_PPROF_SAMPLES] = { "samples", "count" },
	[JW_PPROF_OFFCPU_NS] = { "off_cpu", "nanoseconds" },
	[JW_PPROF_WALL_NS] = { "wall", "nanoseconds" },
};

#define KERNEL_MAPPING "[kernel.kallsyms]"

/*
 * The tables below are vectors of records, ids being index + 1 (pprof's ids are nonzero), each
 * with an open-addressing index from a record's hash to its id for interning.
 */
struct slot {
	uint64_t hash;
	uint32_t id;	/* 0: empty */
};

struct index {
	struct slot *slots;
	size_t cap;	/* a power of two, or 0 */
	size_t n;
};

struct mapping {
	int64_t file, build_id;		/* string indices */
	uint64_t start, limit;		/* the addresses seen (limit: past the last) */
	bool has_functions, has_filenames, has_lines;
};

struct function {
	int64_t name, system_name, file, start_line;
};

struct line {
	uint64_t function;
	int64_t line;
};

struct location {
	uint64_t mapping, address;
	size_t first_line, n_lines;	/* in lines */
};

struct label {
	int64_t key, str, num, unit;
};

struct sample {
	size_t first_loc, n_locs;	/* in loc_ids, leaf first */
	size_t first_label, n_labels;	/* in labels */
	int64_t v[JW_PPROF_VALUES];
};

#define VEC(type, name) \
	type *name;     \
	size_t n_##name, cap_##name

struct jw_pprof {
	int64_t period_ns;
	int64_t time_ns, end_ns;	/* covered; time_ns 0: nothing yet */
	VEC(char *, strings);
	VEC(struct mapping, mappings);
	VEC(struct function, functions);
	VEC(struct line, lines);
	VEC(struct location, locations);
	VEC(uint64_t, loc_ids);
	VEC(struct label, labels);
	VEC(struct sample, samples);
	VEC(int64_t, comments);
	struct index string_index, mapping_index, function_index, location_index, sample_index;
};

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
static uint32_t index_find(const struct jw_pprof *p, const struct index *ix, uint64_t hash,
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
static int index_add(struct index *ix, uint64_t hash, uint32_t id)
{
	size_t i;

	if (2 * (ix->n + 1) > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 64, k;
		struct slot *slots = calloc(cap, sizeof(*slots));

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
	ix->slots[i] = (struct slot){ hash, id };
	ix->n++;
	return 0;
}

static bool string_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	return strcmp(p->strings[id - 1], key) == 0;
}

/* The string table index of @s (NULL: ""), or -ENOMEM. Index 0 is "". */
static int64_t intern(struct jw_pprof *p, const char *s)
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
		if (intern(p, value_type[i][0]) < 0 || intern(p, value_type[i][1]) < 0)
			goto err;
	if (intern(p, "cpu") < 0)
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
	int64_t s = intern(p, text);

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
	const struct mapping *a = &p->mappings[id - 1], *b = key;

	return a->file == b->file && a->build_id == b->build_id;
}

static uint64_t mapping_hash(const struct mapping *m)
{
	return HASH_OF(HASH_OF(HASH_SEED, m->file), m->build_id);
}

/* The id of mapping @key, its range widened to [@lo, @hi); 0 on ENOMEM. */
static uint64_t mapping_id(struct jw_pprof *p, const struct mapping *key, uint64_t lo, uint64_t hi)
{
	uint64_t h = mapping_hash(key);
	uint32_t id = index_find(p, &p->mapping_index, h, mapping_eq, key);
	struct mapping *m;

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
	struct mapping m = { .file = intern(p, path), .build_id = intern(p, build_id) };

	if (m.file < 0 || m.build_id < 0)
		return -ENOMEM;
	/* An empty range, widened by the addresses seen in it. */
	return mapping_id(p, &m, UINT64_MAX, 0) ? 0 : -ENOMEM;
}

static bool function_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	return memcmp(&p->functions[id - 1], key, sizeof(struct function)) == 0;
}

/* The id of function @f; 0 on ENOMEM. */
static uint64_t function_id(struct jw_pprof *p, const struct function *f)
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

/* A location being looked up: its lines are not in the table yet. */
struct location_key {
	uint64_t mapping, address;
	const struct line *lines;
	size_t n_lines;
};

static bool location_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	const struct location *a = &p->locations[id - 1];
	const struct location_key *b = key;

	return a->mapping == b->mapping && a->address == b->address &&
	       a->n_lines == b->n_lines &&
	       !memcmp(&p->lines[a->first_line], b->lines, b->n_lines * sizeof(*b->lines));
}

/* The id of the location @k; 0 on ENOMEM. */
static uint64_t location_id(struct jw_pprof *p, const struct location_key *k)
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
	p->locations[p->n_locations++] = (struct location){
		.mapping = k->mapping,
		.address = k->address,
		.first_line = p->n_lines,
		.n_lines = k->n_lines,
	};
	p->n_lines += k->n_lines;
	return p->n_locations;
}

/* A sample being added: its location ids and labels are not in the tables yet. */
struct sample_key {
	const uint64_t *locs;
	size_t n_locs;
	const struct label *labels;
	size_t n_labels;
};

static bool sample_eq(const struct jw_pprof *p, uint32_t id, const void *key)
{
	const struct sample *a = &p->samples[id - 1];
	const struct sample_key *b = key;

	return a->n_locs == b->n_locs && a->n_labels == b->n_labels &&
	       !memcmp(&p->loc_ids[a->first_loc], b->locs, b->n_locs * sizeof(*b->locs)) &&
	       !memcmp(&p->labels[a->first_label], b->labels, b->n_labels * sizeof(*b->labels));
}

static uint64_t sample_hash(const uint64_t *locs, size_t n_locs, const struct label *labels,
			    size_t n_labels)
{
	return hash_bytes(hash_bytes(HASH_SEED, locs, n_locs * sizeof(*locs)), labels,
			  n_labels * sizeof(*labels));
}

/* Adds @values to the sample @k, made when new. 0 or -ENOMEM. */
static int add_sample(struct jw_pprof *p, const struct sample_key *k, const int64_t *values)
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
		p->samples[p->n_samples++] = (struct sample){
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
		*file = intern(p, src);
		return *file < 0 ? -ENOMEM : 0;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(colon - src), src);
	*line = strtoll(colon + 1, NULL, 10);
	*file = intern(p, buf);
	return *file < 0 ? -ENOMEM : 0;
}

/* The location of frame @fr: its mapping, address and one line. 0 on ENOMEM. */
static uint64_t frame_location(struct jw_pprof *p, const struct jw_frame *fr)
{
	struct mapping m = { 0 };
	struct function f = { 0 };
	struct line ln;
	char name[1024];
	uint64_t mapping = 0;
	int64_t file, line;

	if (split_src(p, fr->src, &file, &line))
		return 0;
	f.name = intern(p, jw_frame_name(fr, name, sizeof(name)));
	f.system_name = fr->symbol ? f.name : 0;
	f.file = file;
	if (f.name < 0)
		return 0;
	if (fr->kind == JW_FRAME_KERNEL || (fr->kind == JW_FRAME_NATIVE && fr->module)) {
		m.file = intern(p, fr->kind == JW_FRAME_KERNEL ? KERNEL_MAPPING : fr->module);
		m.build_id = intern(p, fr->kind == JW_FRAME_KERNEL ? NULL : fr->build_id);
		if (m.file < 0 || m.build_id < 0)
			return 0;
		m.has_functions = fr->symbol != NULL;
		m.has_filenames = m.has_lines = fr->src != NULL;
		/* The module's load address: where its ELF address 0 is (the kernel: none). */
		mapping = mapping_id(p, &m,
				     fr->kind == JW_FRAME_KERNEL || fr->rel_pc > fr->pc ? fr->pc :
											 fr->pc - fr->rel_pc,
				     fr->pc + 1);
		if (!mapping)
			return 0;
	}
	ln.function = function_id(p, &f);
	ln.line = line;
	if (!ln.function)
		return 0;
	return location_id(p, &(struct location_key){
		.mapping = mapping,
		.address = fr->pc,
		.lines = &ln,
		.n_lines = 1,
	});
}

/* The labels @in interned into @out. 0 or -ENOMEM. */
static int intern_labels(struct jw_pprof *p, const struct jw_pprof_label *in, size_t n,
			 struct label *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i] = (struct label){
			.key = intern(p, in[i].key),
			.str = in[i].str ? intern(p, in[i].str) : 0,
			.num = in[i].str ? 0 : in[i].num,
			.unit = in[i].str ? 0 : intern(p, in[i].unit),
		};
		if (out[i].key < 0 || out[i].str < 0 || out[i].unit < 0)
			return -ENOMEM;
	}
	return 0;
}

#define MAX_LABELS 16
#define MAX_STACK 1024

int jw_pprof__add(struct jw_pprof *p, const struct jw_frame *frames, size_t n,
		  const int64_t values[JW_PPROF_VALUES], const struct jw_pprof_label *labels,
		  size_t n_labels)
{
	uint64_t locs[MAX_STACK];
	struct label lab[MAX_LABELS];
	size_t i;

	if (n > MAX_STACK)
		n = MAX_STACK;	/* the outermost frames go */
	if (n_labels > MAX_LABELS)
		n_labels = MAX_LABELS;
	/* pprof's stacks are leaf first. */
	for (i = 0; i < n; i++) {
		locs[i] = frame_location(p, &frames[n - 1 - i]);
		if (!locs[i])
			return -ENOMEM;
	}
	if (intern_labels(p, labels, n_labels, lab))
		return -ENOMEM;
	return add_sample(p, &(struct sample_key){ locs, n, lab, n_labels }, values);
}

int jw_pprof__label_samples(struct jw_pprof *p, const struct jw_pprof_label *labels, size_t n)
{
	struct label lab[MAX_LABELS];
	struct index old = p->sample_index;
	size_t i, k, had = p->n_labels;
	int ret;

	if (n > MAX_LABELS)
		n = MAX_LABELS;
	ret = intern_labels(p, labels, n, lab);
	if (ret)
		return ret;
	/* Each sample's labels are copied to the end with @labels after them, then re-indexed. */
	for (i = 0; i < p->n_samples; i++)
		if (p->samples[i].n_labels + n > MAX_LABELS)
			return -E2BIG;
	for (i = 0, k = 0; i < p->n_samples; i++)
		k += p->samples[i].n_labels + n;
	if (RESERVE(p, labels, k))
		return -ENOMEM;
	p->sample_index = (struct index){ 0 };
	for (i = 0; i < p->n_samples && !ret; i++) {
		struct sample *s = &p->samples[i];

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

/* Writing: the tables become protobuf-c messages, packed, gzipped. */

struct packed {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[JW_PPROF_VALUES], period_type;
	Perftools__Profiles__ValueType *type_ptrs[JW_PPROF_VALUES];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	int64_t *values;
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
};

static void packed_free(struct packed *k)
{
	free(k->samples);
	free(k->sample_ptrs);
	free(k->labels);
	free(k->label_ptrs);
	free(k->values);
	free(k->mappings);
	free(k->mapping_ptrs);
	free(k->locations);
	free(k->location_ptrs);
	free(k->lines);
	free(k->line_ptrs);
	free(k->functions);
	free(k->function_ptrs);
}

/* calloc of at least one element, so that an empty table is not an allocation failure. */
static void *table(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static int pack_samples(const struct jw_pprof *p, struct packed *k)
{
	size_t i, j;

	k->samples = table(p->n_samples, sizeof(*k->samples));
	k->sample_ptrs = table(p->n_samples, sizeof(*k->sample_ptrs));
	k->labels = table(p->n_labels, sizeof(*k->labels));
	k->label_ptrs = table(p->n_labels, sizeof(*k->label_ptrs));
	k->values = table(p->n_samples * JW_PPROF_VALUES, sizeof(*k->values));
	if (!k->samples || !k->sample_ptrs || !k->labels || !k->label_ptrs || !k->values)
		return -ENOMEM;
	for (i = 0; i < p->n_labels; i++) {
		perftools__profiles__label__init(&k->labels[i]);
		k->labels[i].key = p->labels[i].key;
		k->labels[i].str = p->labels[i].str;
		k->labels[i].num = p->labels[i].num;
		k->labels[i].num_unit = p->labels[i].unit;
		k->label_ptrs[i] = &k->labels[i];
	}
	for (i = 0; i < p->n_samples; i++) {
		const struct sample *s = &p->samples[i];
		Perftools__Profiles__Sample *o = &k->samples[i];

		perftools__profiles__sample__init(o);
		o->n_location_id = s->n_locs;
		o->location_id = &p->loc_ids[s->first_loc];
		o->n_value = JW_PPROF_VALUES;
		o->value = &k->values[i * JW_PPROF_VALUES];
		for (j = 0; j < JW_PPROF_VALUES; j++)
			o->value[j] = s->v[j];
		o->n_label = s->n_labels;
		o->label = &k->label_ptrs[s->first_label];
		k->sample_ptrs[i] = o;
	}
	k->prof.n_sample = p->n_samples;
	k->prof.sample = k->sample_ptrs;
	return 0;
}

static int pack_tables(const struct jw_pprof *p, struct packed *k)
{
	size_t i;

	k->mappings = table(p->n_mappings, sizeof(*k->mappings));
	k->mapping_ptrs = table(p->n_mappings, sizeof(*k->mapping_ptrs));
	k->locations = table(p->n_locations, sizeof(*k->locations));
	k->location_ptrs = table(p->n_locations, sizeof(*k->location_ptrs));
	k->lines = table(p->n_lines, sizeof(*k->lines));
	k->line_ptrs = table(p->n_lines, sizeof(*k->line_ptrs));
	k->functions = table(p->n_functions, sizeof(*k->functions));
	k->function_ptrs = table(p->n_functions, sizeof(*k->function_ptrs));
	if (!k->mappings || !k->mapping_ptrs || !k->locations || !k->location_ptrs ||
	    !k->lines || !k->line_ptrs || !k->functions || !k->function_ptrs)
		return -ENOMEM;
	for (i = 0; i < p->n_mappings; i++) {
		const struct mapping *m = &p->mappings[i];
		Perftools__Profiles__Mapping *o = &k->mappings[i];

		perftools__profiles__mapping__init(o);
		o->id = i + 1;
		/* A main binary no frame fell in has no range. */
		o->memory_start = m->start <= m->limit ? m->start : 0;
		o->memory_limit = m->start <= m->limit ? m->limit : 0;
		o->filename = m->file;
		o->build_id = m->build_id;
		o->has_functions = m->has_functions;
		o->has_filenames = m->has_filenames;
		o->has_line_numbers = m->has_lines;
		k->mapping_ptrs[i] = o;
	}
	for (i = 0; i < p->n_lines; i++) {
		perftools__profiles__line__init(&k->lines[i]);
		k->lines[i].function_id = p->lines[i].function;
		k->lines[i].line = p->lines[i].line;
		k->line_ptrs[i] = &k->lines[i];
	}
	for (i = 0; i < p->n_locations; i++) {
		const struct location *l = &p->locations[i];
		Perftools__Profiles__Location *o = &k->locations[i];

		perftools__profiles__location__init(o);
		o->id = i + 1;
		o->mapping_id = l->mapping;
		o->address = l->address;
		o->n_line = l->n_lines;
		o->line = &k->line_ptrs[l->first_line];
		k->location_ptrs[i] = o;
	}
	for (i = 0; i < p->n_functions; i++) {
		const struct function *f = &p->functions[i];
		Perftools__Profiles__Function *o = &k->functions[i];

		perftools__profiles__function__init(o);
		o->id = i + 1;
		o->name = f->name;
		o->system_name = f->system_name;
		o->filename = f->file;
		o->start_line = f->start_line;
		k->function_ptrs[i] = o;
	}
	k->prof.n_mapping = p->n_mappings;
	k->prof.mapping = k->mapping_ptrs;
	k->prof.n_location = p->n_locations;
	k->prof.location = k->location_ptrs;
	k->prof.n_function = p->n_functions;
	k->prof.function = k->function_ptrs;
	return 0;
}

/* The string index of @s, which the constructor interned. */
static int64_t known(const struct jw_pprof *p, const char *s)
{
	size_t i;

	for (i = 1; i < p->n_strings; i++)
		if (!strcmp(p->strings[i], s))
			return (int64_t)i;
	return 0;
}

int jw_pprof__write(const struct jw_pprof *p, FILE *f)
{
	struct packed k = { 0 };
	void *buf = NULL, *gz = NULL;
	size_t len, gz_len;
	int ret, i;

	perftools__profiles__profile__init(&k.prof);
	for (i = 0; i < JW_PPROF_VALUES; i++) {
		perftools__profiles__value_type__init(&k.types[i]);
		k.types[i].type = known(p, value_type[i][0]);
		k.types[i].unit = known(p, value_type[i][1]);
		k.type_ptrs[i] = &k.types[i];
	}
	k.prof.n_sample_type = JW_PPROF_VALUES;
	k.prof.sample_type = k.type_ptrs;
	k.prof.default_sample_type = k.types[JW_PPROF_WALL_NS].type;
	perftools__profiles__value_type__init(&k.period_type);
	k.period_type.type = known(p, "cpu");
	k.period_type.unit = known(p, "nanoseconds");
	k.prof.period_type = &k.period_type;
	k.prof.period = p->period_ns;
	k.prof.time_nanos = p->time_ns;
	k.prof.duration_nanos = p->end_ns > p->time_ns ? p->end_ns - p->time_ns : 0;
	k.prof.n_comment = p->n_comments;
	k.prof.comment = p->comments;
	k.prof.n_string_table = p->n_strings;
	k.prof.string_table = p->strings;
	ret = pack_samples(p, &k);
	if (!ret)
		ret = pack_tables(p, &k);
	if (ret)
		goto out;
	len = perftools__profiles__profile__get_packed_size(&k.prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&k.prof, buf);
	ret = jw_gzip(buf, len, &gz, &gz_len);
	if (ret)
		goto out;
	if (fwrite(gz, 1, gz_len, f) != gz_len || fflush(f))
		ret = errno ? -errno : -EIO;
out:
	free(gz);
	free(buf);
	packed_free(&k);
	return ret;
}

/* Merging: a decoded profile's tables mapped onto this one's, checked as they are read. */

struct id_map {
	uint64_t from, to;
};

static int id_cmp(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/* @map (@n, sorted) applied to @from; 0 when @from is not there. */
static uint64_t id_lookup(const struct id_map *map, size_t n, uint64_t from)
{
	struct id_map key = { from, 0 }, *hit;

	if (!n)
		return 0;
	hit = bsearch(&key, map, n, sizeof(*map), id_cmp);
	return hit ? hit->to : 0;
}

struct merge {
	struct jw_pprof *p;
	const Perftools__Profiles__Profile *in;
	int64_t *strings;		/* theirs to ours */
	struct id_map *mappings, *functions, *locations;
	size_t n_mappings, n_functions, n_locations;
	int value_of[JW_PPROF_VALUES];	/* their value index of each of ours, or -1 */
	char *err;
	size_t errlen;
};

static int bad(struct merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct merge *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->err, m->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Their string @i as ours, or -1 (with the reason set) when out of the table. */
static int64_t their_string(struct merge *m, int64_t i)
{
	if (i < 0 || (uint64_t)i >= m->in->n_string_table) {
		bad(m, "a string index (%" PRId64 ") past the string table", i);
		return -1;
	}
	return m->strings[i];
}

static int merge_strings(struct merge *m)
{
	size_t i;

	if (!m->in->n_string_table || m->in->string_table[0][0])
		return bad(m, "its string table does not begin with \"\"");
	m->strings = calloc(m->in->n_string_table, sizeof(*m->strings));
	if (!m->strings)
		return -ENOMEM;
	for (i = 0; i < m->in->n_string_table; i++) {
		m->strings[i] = intern(m->p, m->in->string_table[i]);
		if (m->strings[i] < 0)
			return -ENOMEM;
	}
	return 0;
}

static int merge_types(struct merge *m)
{
	const Perftools__Profiles__Profile *in = m->in;
	bool any = false;
	size_t i, j;

	for (i = 0; i < JW_PPROF_VALUES; i++) {
		m->value_of[i] = -1;
		for (j = 0; j < in->n_sample_type; j++) {
			int64_t t = their_string(m, in->sample_type[j]->type);
			int64_t u = their_string(m, in->sample_type[j]->unit);

			if (t < 0 || u < 0)
				return -EINVAL;
			if (!strcmp(m->p->strings[t], value_type[i][0]) &&
			    !strcmp(m->p->strings[u], value_type[i][1])) {
				m->value_of[i] = (int)j;
				any = true;
			}
		}
	}
	return any ? 0 : bad(m, "none of its sample types is samples, off_cpu or wall");
}

static int merge_mappings(struct merge *m)
{
	size_t i;

	m->mappings = table(m->in->n_mapping, sizeof(*m->mappings));
	if (!m->mappings)
		return -ENOMEM;
	for (i = 0; i < m->in->n_mapping; i++) {
		const Perftools__Profiles__Mapping *o = m->in->mapping[i];
		struct mapping key = {
			.file = their_string(m, o->filename),
			.build_id = their_string(m, o->build_id),
			.has_functions = o->has_functions,
			.has_filenames = o->has_filenames,
			.has_lines = o->has_line_numbers,
		};

		if (key.file < 0 || key.build_id < 0)
			return -EINVAL;
		if (!o->id)
			return bad(m, "a mapping with id 0");
		m->mappings[i] = (struct id_map){ o->id,
						  mapping_id(m->p, &key, o->memory_start,
							     o->memory_limit) };
		if (!m->mappings[i].to)
			return -ENOMEM;
	}
	m->n_mappings = m->in->n_mapping;
	qsort(m->mappings, m->n_mappings, sizeof(*m->mappings), id_cmp);
	return 0;
}

static int merge_functions(struct merge *m)
{
	size_t i;

	m->functions = table(m->in->n_function, sizeof(*m->functions));
	if (!m->functions)
		return -ENOMEM;
	for (i = 0; i < m->in->n_function; i++) {
		const Perftools__Profiles__Function *o = m->in->function[i];
		struct function f = {
			.name = their_string(m, o->name),
			.system_name = their_string(m, o->system_name),
			.file = their_string(m, o->filename),
			.start_line = o->start_line,
		};

		if (f.name < 0 || f.system_name < 0 || f.file < 0)
			return -EINVAL;
		if (!o->id)
			return bad(m, "a function with id 0");
		m->functions[i] = (struct id_map){ o->id, function_id(m->p, &f) };
		if (!m->functions[i].to)
			return -ENOMEM;
	}
	m->n_functions = m->in->n_function;
	qsort(m->functions, m->n_functions, sizeof(*m->functions), id_cmp);
	return 0;
}

static int merge_locations(struct merge *m)
{
	struct line lines[64];
	size_t i, j;

	m->locations = table(m->in->n_location, sizeof(*m->locations));
	if (!m->locations)
		return -ENOMEM;
	for (i = 0; i < m->in->n_location; i++) {
		const Perftools__Profiles__Location *o = m->in->location[i];
		struct location_key k = { .address = o->address, .lines = lines };

		if (!o->id)
			return bad(m, "a location with id 0");
		if (o->mapping_id) {
			k.mapping = id_lookup(m->mappings, m->n_mappings, o->mapping_id);
			if (!k.mapping)
				return bad(m, "location %" PRIu64 " names no mapping", o->id);
		}
		for (j = 0; j < o->n_line && j < 64; j++) {
			lines[j].function = id_lookup(m->functions, m->n_functions,
						      o->line[j]->function_id);
			lines[j].line = o->line[j]->line;
			if (!lines[j].function)
				return bad(m, "location %" PRIu64 " names no function", o->id);
		}
		k.n_lines = j;
		m->locations[i] = (struct id_map){ o->id, location_id(m->p, &k) };
		if (!m->locations[i].to)
			return -ENOMEM;
	}
	m->n_locations = m->in->n_location;
	qsort(m->locations, m->n_locations, sizeof(*m->locations), id_cmp);
	return 0;
}

static int merge_samples(struct merge *m)
{
	uint64_t locs[MAX_STACK];
	struct label labels[MAX_LABELS];
	int64_t values[JW_PPROF_VALUES];
	size_t i, j;
	int ret;

	for (i = 0; i < m->in->n_sample; i++) {
		const Perftools__Profiles__Sample *o = m->in->sample[i];
		struct sample_key k = { locs, 0, labels, 0 };

		if (o->n_value != m->in->n_sample_type)
			return bad(m, "a sample with %zu values for %zu types", o->n_value,
				   m->in->n_sample_type);
		for (j = 0; j < o->n_location_id && j < MAX_STACK; j++) {
			locs[j] = id_lookup(m->locations, m->n_locations, o->location_id[j]);
			if (!locs[j])
				return bad(m, "a sample names no location (%" PRIu64 ")",
					   o->location_id[j]);
		}
		k.n_locs = j;
		for (j = 0; j < o->n_label && j < MAX_LABELS; j++) {
			const Perftools__Profiles__Label *l = o->label[j];

			labels[j] = (struct label){
				.key = their_string(m, l->key),
				.str = their_string(m, l->str),
				.num = l->num,
				.unit = their_string(m, l->num_unit),
			};
			if (labels[j].key < 0 || labels[j].str < 0 || labels[j].unit < 0)
				return -EINVAL;
		}
		k.n_labels = j;
		for (j = 0; j < JW_PPROF_VALUES; j++)
			values[j] = m->value_of[j] < 0 ? 0 : o->value[m->value_of[j]];
		ret = add_sample(m->p, &k, values);
		if (ret)
			return ret;
	}
	return 0;
}

static int merge_decoded(struct merge *m)
{
	int ret = merge_strings(m);

	if (!ret)
		ret = merge_types(m);
	if (!ret)
		ret = merge_mappings(m);
	if (!ret)
		ret = merge_functions(m);
	if (!ret)
		ret = merge_locations(m);
	if (!ret)
		ret = merge_samples(m);
	return ret;
}

int jw_pprof__merge(struct jw_pprof *p, const void *data, size_t len, int64_t since_ns,
		    int64_t until_ns, char *err, size_t errlen)
{
	struct merge m = { .p = p, .err = err, .errlen = errlen };
	Perftools__Profiles__Profile *in;
	void *raw = NULL;
	size_t raw_len = len;
	int ret;

	if (errlen)
		err[0] = '\0';
	if (jw_is_gzip(data, len)) {
		ret = jw_gunzip(data, len, MAX_PROFILE_BYTES, &raw, &raw_len);
		if (ret) {
			snprintf(err, errlen, "%s", ret == -EFBIG ? "larger than 256 MiB inflated" :
						    ret == -ENOMEM ? "out of memory" :
								     "damaged gzip data");
			return ret == -EFBIG ? -EINVAL : ret;
		}
		data = raw;
	}
	in = perftools__profiles__profile__unpack(NULL, raw_len, data);
	free(raw);
	if (!in) {
		snprintf(err, errlen, "not a profile.proto message");
		return -EINVAL;
	}
	if ((since_ns && in->time_nanos < since_ns) || (until_ns && in->time_nanos >= until_ns)) {
		perftools__profiles__profile__free_unpacked(in, NULL);
		return 0;
	}
	m.in = in;
	/* A profile made empty to merge into takes its period from the first merged. */
	if (!p->period_ns)
		p->period_ns = in->period;
	ret = merge_decoded(&m);
	if (!ret)
		jw_pprof__cover(p, in->time_nanos, in->duration_nanos);
	free(m.strings);
	free(m.mappings);
	free(m.functions);
	free(m.locations);
	perftools__profiles__profile__free_unpacked(in, NULL);
	return ret ? ret : 1;
}
