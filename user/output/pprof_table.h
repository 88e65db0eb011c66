/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside a jw_pprof (pprof.h), for the files that build, write and merge profiles: the interned
 * tables and the functions that intern into them. Not for other modules.
 */
#ifndef JW_PPROF_TABLE_H
#define JW_PPROF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/pprof.h"

/* The sample types' names and units, in enum jw_pprof_value's order. */
extern const char *const jw_pprof_value_type[JW_PPROF_VALUES][2];

#define JW_PPROF_MAX_LABELS 16	/* labels a sample keeps */
#define JW_PPROF_MAX_STACK 1024	/* locations a sample keeps (the outermost go) */

/*
 * The tables below are vectors of records, ids being index + 1 (pprof's ids are nonzero), each
 * with an open-addressing index from a record's hash to its id for interning.
 */
struct pp_slot {
	uint64_t hash;
	uint32_t id;	/* 0: empty */
};

struct pp_index {
	struct pp_slot *slots;
	size_t cap;	/* a power of two, or 0 */
	size_t n;
};

struct pp_mapping {
	int64_t file, build_id;		/* string indices */
	uint64_t start, limit;		/* the addresses seen (limit: past the last) */
	bool has_functions, has_filenames, has_lines;
};

struct pp_function {
	int64_t name, system_name, file, start_line;
};

struct pp_line {
	uint64_t function;
	int64_t line;
};

struct pp_location {
	uint64_t mapping, address;
	size_t first_line, n_lines;	/* in lines */
};

struct pp_label {
	int64_t key, str, num, unit;
};

struct pp_sample {
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
	VEC(struct pp_mapping, mappings);
	VEC(struct pp_function, functions);
	VEC(struct pp_line, lines);
	VEC(struct pp_location, locations);
	VEC(uint64_t, loc_ids);
	VEC(struct pp_label, labels);
	VEC(struct pp_sample, samples);
	VEC(int64_t, comments);
	struct pp_index string_index, mapping_index, function_index, location_index, sample_index;
};


/* A location being looked up: its lines are not in the table yet. */
struct pp_location_key {
	uint64_t mapping, address;
	const struct pp_line *lines;
	size_t n_lines;
};

/* A sample being added: its location ids and labels are not in the tables yet. */
struct pp_sample_key {
	const uint64_t *locs;
	size_t n_locs;
	const struct pp_label *labels;
	size_t n_labels;
};

/* The string table index of @s (NULL: ""), or -ENOMEM. Index 0 is "". */
int64_t jw_pprof_intern(struct jw_pprof *p, const char *s);

/* The id of mapping @key, its range widened to [@lo, @hi); 0 on ENOMEM. */
uint64_t jw_pprof_mapping(struct jw_pprof *p, const struct pp_mapping *key, uint64_t lo,
			  uint64_t hi);

/* The id of function @f; 0 on ENOMEM. */
uint64_t jw_pprof_function(struct jw_pprof *p, const struct pp_function *f);

/* The id of the location @k; 0 on ENOMEM. */
uint64_t jw_pprof_location(struct jw_pprof *p, const struct pp_location_key *k);

/* Adds @values to the sample @k, made when new. 0 or -ENOMEM. */
int jw_pprof_add_sample(struct jw_pprof *p, const struct pp_sample_key *k, const int64_t *values);

/* calloc of at least one element, so that an empty table is not an allocation failure. */
void *jw_pprof_table(size_t n, size_t size);

#endif
