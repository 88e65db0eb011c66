// SPDX-License-Identifier: GPL-2.0-only
/*
 * The code's lists as JSON, for lists.py to hold the documentation to: the commands with their
 * synopses and options, the parameters with their ranges and defaults, the loop presets and
 * those with handler sites.
 */
#include <stdio.h>
#include <string.h>

#include "config/cli.h"
#include "config/params.h"
#include "loops/presets.h"

static void str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* "a, b, c or d" (or "... and d") as a JSON array. */
static void names(const char *joined)
{
	char buf[1024], *w, *save = NULL;
	int first = 1;

	snprintf(buf, sizeof(buf), "%s", joined);
	putchar('[');
	for (w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(w, "or") || !strcmp(w, "and"))
			continue;
		printf("%s", first ? "" : ", ");
		str(w);
		first = 0;
	}
	putchar(']');
}

int main(void)
{
	const struct jw_cli_cmd *cmds;
	struct jw_param_doc doc;
	char buf[1024];
	size_t n, i, k;

	cmds = jw_cli_cmds(&n);
	printf("{\"commands\": [");
	for (i = 0; i < n; i++) {
		const struct jw_cli_opt *o;

		printf("%s{\"name\": ", i ? ", " : "");
		str(cmds[i].name);
		printf(", \"synopsis\": [");
		for (k = 0; k < JW_CLI_SYNOPSES && cmds[i].synopsis[k]; k++) {
			printf("%s", k ? ", " : "");
			str(cmds[i].synopsis[k]);
		}
		printf("], \"options\": [");
		for (o = cmds[i].opts; o->name || o->letter; o++) {
			char letter[3] = { '-', o->letter, '\0' };

			jw_cli_opt_form(o, buf, sizeof(buf));
			printf("%s{\"form\": ", o == cmds[i].opts ? "" : ", ");
			str(buf);
			printf(", \"long\": ");
			if (o->name) {
				snprintf(buf, sizeof(buf), "--%s", o->name);
				str(buf);
			} else {
				printf("null");
			}
			printf(", \"short\": ");
			if (o->letter)
				str(letter);
			else
				printf("null");
			printf(", \"arg\": ");
			if (o->arg)
				str(o->arg);
			else
				printf("null");
			printf("}");
		}
		printf("]}");
	}
	printf("],\n \"params\": [");
	for (i = 0; jw_param_doc(i, &doc); i++) {
		printf("%s{\"name\": ", i ? ", " : "");
		str(doc.name);
		printf(", \"range\": ");
		str(doc.range);
		printf(", \"default\": ");
		str(doc.def);
		printf("}");
	}
	jw_loop_names(buf, sizeof(buf));
	printf("],\n \"loops\": ");
	names(buf);
	jw_presets_with_sites(buf, sizeof(buf));
	printf(",\n \"sites\": ");
	names(buf);
	printf("}\n");
	return 0;
}
