// SPDX-License-Identifier: GPL-2.0-only
/* Writing a profile: the tables become protobuf-c messages, packed, gzipped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"

#include "output/gzip.h"
#include "output/pprof.h"
#include "output/pprof_table.h"

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

static int pack_samples(const struct jw_pprof *p, struct packed *k)
{
	size_t i, j;

	k->samples = jw_pprof_table(p->n_samples, sizeof(*k->samples));
	k->sample_ptrs = jw_pprof_table(p->n_samples, sizeof(*k->sample_ptrs));
	k->labels = jw_pprof_table(p->n_labels, sizeof(*k->labels));
	k->label_ptrs = jw_pprof_table(p->n_labels, sizeof(*k->label_ptrs));
	k->values = jw_pprof_table(p->n_samples * JW_PPROF_VALUES, sizeof(*k->values));
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
		const struct pp_sample *s = &p->samples[i];
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

	k->mappings = jw_pprof_table(p->n_mappings, sizeof(*k->mappings));
	k->mapping_ptrs = jw_pprof_table(p->n_mappings, sizeof(*k->mapping_ptrs));
	k->locations = jw_pprof_table(p->n_locations, sizeof(*k->locations));
	k->location_ptrs = jw_pprof_table(p->n_locations, sizeof(*k->location_ptrs));
	k->lines = jw_pprof_table(p->n_lines, sizeof(*k->lines));
	k->line_ptrs = jw_pprof_table(p->n_lines, sizeof(*k->line_ptrs));
	k->functions = jw_pprof_table(p->n_functions, sizeof(*k->functions));
	k->function_ptrs = jw_pprof_table(p->n_functions, sizeof(*k->function_ptrs));
	if (!k->mappings || !k->mapping_ptrs || !k->locations || !k->location_ptrs ||
	    !k->lines || !k->line_ptrs || !k->functions || !k->function_ptrs)
		return -ENOMEM;
	for (i = 0; i < p->n_mappings; i++) {
		const struct pp_mapping *m = &p->mappings[i];
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
		const struct pp_location *l = &p->locations[i];
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
		const struct pp_function *f = &p->functions[i];
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
		k.types[i].type = known(p, jw_pprof_value_type[i][0]);
		k.types[i].unit = known(p, jw_pprof_value_type[i][1]);
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
