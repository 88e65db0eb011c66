/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Profiles in pprof's format (perftools.profiles.Profile from Debian's
 * golang-github-google-pprof-dev, encoded with protobuf-c, gzipped): built from named frames,
 * and merged from files. Every profile jankwatch writes has the same three sample types:
 *   samples  count        the on-CPU samples (cpu-clock periods) a stack was seen in
 *   off_cpu  nanoseconds  time the thread slept (blocked or in I/O) with that stack
 *   wall     nanoseconds  both together, on-CPU samples as periods: where a jank's time went;
 *                         the default type, so `pprof -top` ranks by it
 * Strings, functions, locations and mappings are interned; samples with the same stack and
 * labels are summed.
 */
#ifndef JW_PPROF_H
#define JW_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/frame.h"

enum jw_pprof_value { JW_PPROF_SAMPLES, JW_PPROF_OFFCPU_NS, JW_PPROF_WALL_NS, JW_PPROF_VALUES };

/* A sample's label: a string (@str set) or a number (@num, with @unit or none). */
struct jw_pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

struct jw_pprof;

/* An empty profile of cpu-clock periods of @period_ns; NULL on ENOMEM. */
struct jw_pprof *jw_pprof__new(int64_t period_ns);
void jw_pprof__free(struct jw_pprof *p);	/* NULL-safe */

/*
 * Makes @path (build-id @build_id, may be NULL) the profile's first mapping, the one pprof
 * takes for the main binary (its "File:" line). Before any sample. 0 or -ENOMEM.
 */
int jw_pprof__main_binary(struct jw_pprof *p, const char *path, const char *build_id);

/* Widens the time the profile covers to include [@time_ns, @time_ns + @duration_ns). */
void jw_pprof__cover(struct jw_pprof *p, int64_t time_ns, int64_t duration_ns);

/* Adds a comment line (pprof -comments shows them). 0 or -ENOMEM. */
int jw_pprof__comment(struct jw_pprof *p, const char *text);

/*
 * Adds the stack @frames (@n, outermost first, as jw_stacks__frames() gives them) with
 * @values and @n_labels @labels. A frame is named as in the stack log (jw_frame_name()), with
 * its file and line when known; its mapping is its module with its build-id. 0 or -ENOMEM.
 */
int jw_pprof__add(struct jw_pprof *p, const struct jw_frame *frames, size_t n,
		  const int64_t values[JW_PPROF_VALUES], const struct jw_pprof_label *labels,
		  size_t n_labels);

/*
 * Gives every sample held the labels @labels (@n), after the ones it has: a profile of one jank
 * labels all its samples alike, known once they are all in. 0 or -ENOMEM.
 */
int jw_pprof__label_samples(struct jw_pprof *p, const struct jw_pprof_label *labels, size_t n);

/* Number of distinct samples held. */
size_t jw_pprof__samples(const struct jw_pprof *p);

/* Writes the profile, gzipped, to @f. 0 or -errno. */
int jw_pprof__write(const struct jw_pprof *p, FILE *f);

/*
 * Merges the profile file in @data (@len bytes, gzipped or not) into @p when the time it
 * covers begins in [@since_ns, @until_ns) (0 for either: no bound); its sample types are
 * matched to @p's by name, values of types @p lacks dropped. Returns 1 when merged, 0 when out
 * of range, or -errno with a reason in @err (-EINVAL: not a profile jankwatch can read).
 */
int jw_pprof__merge(struct jw_pprof *p, const void *data, size_t len, int64_t since_ns,
		    int64_t until_ns, char *err, size_t errlen);

#endif
