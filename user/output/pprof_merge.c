// SPDX-License-Identifier: GPL-2.0-only
/* Merging a profile file: its tables mapped onto the profile's, checked as they are read. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"

#include "output/gzip.h"
#include "output/pprof.h"
#include "output/pprof_table.h"

/* A profile file inflated past this is refused (a damaged or hostile file). */
#define MAX_PROFILE_BYTES (256u << 20)

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
		m->strings[i] = jw_pprof_intern(m->p, m->in->string_table[i]);
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
			if (!strcmp(m->p->strings[t], jw_pprof_value_type[i][0]) &&
			    !strcmp(m->p->strings[u], jw_pprof_value_type[i][1])) {
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

	m->mappings = jw_pprof_table(m->in->n_mapping, sizeof(*m->mappings));
	if (!m->mappings)
		return -ENOMEM;
	for (i = 0; i < m->in->n_mapping; i++) {
		const Perftools__Profiles__Mapping *o = m->in->mapping[i];
		struct pp_mapping key = {
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
						  jw_pprof_mapping(m->p, &key, o->memory_start,
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

	m->functions = jw_pprof_table(m->in->n_function, sizeof(*m->functions));
	if (!m->functions)
		return -ENOMEM;
	for (i = 0; i < m->in->n_function; i++) {
		const Perftools__Profiles__Function *o = m->in->function[i];
		struct pp_function f = {
			.name = their_string(m, o->name),
			.system_name = their_string(m, o->system_name),
			.file = their_string(m, o->filename),
			.start_line = o->start_line,
		};

		if (f.name < 0 || f.system_name < 0 || f.file < 0)
			return -EINVAL;
		if (!o->id)
			return bad(m, "a function with id 0");
		m->functions[i] = (struct id_map){ o->id, jw_pprof_function(m->p, &f) };
		if (!m->functions[i].to)
			return -ENOMEM;
	}
	m->n_functions = m->in->n_function;
	qsort(m->functions, m->n_functions, sizeof(*m->functions), id_cmp);
	return 0;
}

static int merge_locations(struct merge *m)
{
	struct pp_line lines[64];
	size_t i, j;

	m->locations = jw_pprof_table(m->in->n_location, sizeof(*m->locations));
	if (!m->locations)
		return -ENOMEM;
	for (i = 0; i < m->in->n_location; i++) {
		const Perftools__Profiles__Location *o = m->in->location[i];
		struct pp_location_key k = { .address = o->address, .lines = lines };

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
		m->locations[i] = (struct id_map){ o->id, jw_pprof_location(m->p, &k) };
		if (!m->locations[i].to)
			return -ENOMEM;
	}
	m->n_locations = m->in->n_location;
	qsort(m->locations, m->n_locations, sizeof(*m->locations), id_cmp);
	return 0;
}

static int merge_samples(struct merge *m)
{
	uint64_t locs[JW_PPROF_MAX_STACK];
	struct pp_label labels[JW_PPROF_MAX_LABELS];
	int64_t values[JW_PPROF_VALUES];
	size_t i, j;
	int ret;

	for (i = 0; i < m->in->n_sample; i++) {
		const Perftools__Profiles__Sample *o = m->in->sample[i];
		struct pp_sample_key k = { locs, 0, labels, 0 };

		if (o->n_value != m->in->n_sample_type)
			return bad(m, "a sample with %zu values for %zu types", o->n_value,
				   m->in->n_sample_type);
		for (j = 0; j < o->n_location_id && j < JW_PPROF_MAX_STACK; j++) {
			locs[j] = id_lookup(m->locations, m->n_locations, o->location_id[j]);
			if (!locs[j])
				return bad(m, "a sample names no location (%" PRIu64 ")",
					   o->location_id[j]);
		}
		k.n_locs = j;
		for (j = 0; j < o->n_label && j < JW_PPROF_MAX_LABELS; j++) {
			const Perftools__Profiles__Label *l = o->label[j];

			labels[j] = (struct pp_label){
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
		ret = jw_pprof_add_sample(m->p, &k, values);
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
