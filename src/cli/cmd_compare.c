// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_compare.c - `ntprof compare A.ntp B.ntp`: two runs side by side, per
 * stage the change, and the stage that amplifies latency from A to B.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "load.h"
#include "options.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof compare [-j FILE] A.ntp B.ntp\n"
"Compares two recordings group by group (same I/O type, size and namespace):\n"
"the latency, each stage's mean in both runs, its change in microseconds and\n"
"as a factor, and a verdict naming the stage that amplifies latency from A to\n"
"B (the one whose mean grew most). A and B may be joined runs: give a host and\n"
"its target file as HOST.ntp,TARGET.ntp.\n"
"\n");
	ntp_cmd_help(f, "compare");
}

#define MAX_FILES 16	/* per run: hosts and their target */

/* "h.ntp,t.ntp" -> argv-like list (modifies s); more than max gives max + 1. */
static size_t split(char *s, char **out, size_t max)
{
	size_t n = 0;

	for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return max + 1;
		out[n++] = t;
	}
	return n;
}

int cmd_compare(int argc, char **argv)
{
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &o };
	const char *json;
	struct ntp_report_meta meta[2];
	struct ntp_snapshot *snap[2] = { NULL, NULL };
	struct ntp_loaded *keep[2] = { NULL, NULL };
	char *files[2][MAX_FILES], *arg[2] = { NULL, NULL };
	size_t nf[2];
	int first, ret = 1;

	first = ntp_cmd_parse("compare", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	json = o.json;
	if (json && !strcmp(json, "-"))
		ntp_json_errors = true;
	if (argc - first != 2)
		return ntp_err("compare needs two recordings, A and B (ntprof compare --help)");
	for (int k = 0; k < 2; k++) {
		arg[k] = strdup(argv[first + k]);
		snap[k] = malloc(sizeof(*snap[k]));
		if (!arg[k] || !snap[k]) {
			ret = ntp_err("out of memory");
			goto out;
		}
		nf[k] = split(arg[k], files[k], MAX_FILES);
		if (!nf[k]) {
			ret = ntp_err("'%s' names no recording", argv[first + k]);
			goto out;
		}
		if (nf[k] > MAX_FILES) {
			ret = ntp_err("'%s' names more than %d recordings", argv[first + k], MAX_FILES);
			goto out;
		}
		if (ntp_load(files[k], nf[k], snap[k], &meta[k], &keep[k]))
			goto out;
	}
	if (json) {
		json_object *o = ntp_compare_json(snap[0], snap[1], argv[first], argv[first + 1]);
		json_object *notes = json_object_new_array();

		for (int k = 0; k < 2; k++)
			for (unsigned i = 0; i < meta[k].n_notes; i++) {
				char line[300];

				snprintf(line, sizeof(line), "%s: %s", k ? "B" : "A", meta[k].notes[i]);
				json_object_array_add(notes, json_object_new_string(line));
			}
		json_object_object_add(o, "notes", notes);
		FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;

		if (!f) {
			json_object_put(o);
			ret = ntp_err("%s: cannot write the JSON comparison: %m", json);
			goto out;
		}
		fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		if (f != stdout && fclose(f)) {
			ret = ntp_err("%s: cannot write the JSON comparison: %m", json);
			goto out;
		}
		if (f == stdout) {
			ret = 0;
			goto damaged;
		}
	}
	/* A run read only in part says so, as in the report. */
	for (int k = 0; k < 2; k++)
		for (unsigned i = 0; i < meta[k].n_notes; i++)
			printf("note (%s): %s\n", k ? "B" : "A", meta[k].notes[i]);
	ntp_compare_print(stdout, snap[0], snap[1], argv[first], argv[first + 1]);
	ret = fflush(stdout) ? ntp_err("cannot write the comparison to stdout") : 0;
damaged:
	/* ret is 0 only once both runs were loaded: a damaged input exits 1, as in report */
	for (int k = 0; k < 2 && !ret; k++)
		if (meta[k].damaged[0])
			ret = ntp_err("%s (the comparison is of the records read)", meta[k].damaged);
out:
	for (int k = 0; k < 2; k++) {
		ntp_load_free(keep[k]);
		free(snap[k]);
		free(arg[k]);
	}
	return ret;
}
