// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_compare.c - `ntprof compare A.ntp B.ntp`: two runs side by side, per
 * stage the change, and the stage that amplifies latency from A to B.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "core/render/out.h"
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
"its target file as HOST.ntp,TARGET.ntp (no empty name between the commas; an\n"
"argument that names an existing file is that file, commas and all).\n"
"\n");
	ntp_cmd_help(f, "compare");
}

#define MAX_FILES 16	/* per run: hosts and their target */

/*
 * "h.ntp,t.ntp" -> argv-like list (modifies s); more than max gives max + 1,
 * an empty item -1 (a message in err). An argument that names an existing
 * file is that file, commas and all (docs/reports.md).
 */
static long split(char *s, char **out, size_t max, char *err, size_t errlen)
{
	size_t n = 0, len = strlen(s);
	struct stat st;

	if (!stat(s, &st)) {
		out[0] = s;
		return 1;
	}
	if (s[0] == ',' || (len && s[len - 1] == ',') || strstr(s, ",,")) {
		snprintf(err, errlen, "compare: '%s' %s", s,
			 s[0] == ',' ? "starts with a comma" : strstr(s, ",,") ?
			 "has an empty file name between two commas" : "ends with a comma");
		return -1;
	}
	for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return (long)max + 1;
		out[n++] = t;
	}
	return (long)n;
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
	const char *inputs[2 * MAX_FILES];
	char err[NTP_ERR_LEN];
	size_t nf[2], n_inputs = 0;
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
		long got = split(arg[k], files[k], MAX_FILES, err, sizeof(err));

		if (got < 0) {
			ret = ntp_err("%s", err);
			goto out;
		}
		nf[k] = (size_t)got;
		if (!nf[k]) {
			ret = ntp_err("'%s' names no recording", argv[first + k]);
			goto out;
		}
		if (nf[k] > MAX_FILES) {
			ret = ntp_err("'%s' names more than %d recordings", argv[first + k], MAX_FILES);
			goto out;
		}
		for (size_t i = 0; i < nf[k]; i++)
			inputs[n_inputs++] = files[k][i];
	}
	if (json) {
		/* before reading: a report must not replace its own input */
		if (ntp_out_check_report(json, inputs, n_inputs, err, sizeof(err))) {
			ret = ntp_err("-j %s", err);
			goto out;
		}
	}
	for (int k = 0; k < 2; k++) {
		if (ntp_load(files[k], nf[k], 0, snap[k], &meta[k], &keep[k]))
			goto out;
		/* the report's note on records lost before the recording (a
		 * join's notes name each file already: src/cli/load.c) */
		if (nf[k] == 1 && snap[k]->lost_events)
			ntp_report_note(&meta[k], "records lost before reaching the recording: %llu (%s)",
					(unsigned long long)snap[k]->lost_events, NTP_LOST_WHY);
	}
	if (json) {
		json_object *o = ntp_compare_json(snap[0], snap[1], argv[first], argv[first + 1]);
		json_object *notes = json_object_new_array();

		for (int k = 0; k < 2; k++)
			for (unsigned i = 0; i < meta[k].n_notes; i++) {
				char line[NTP_REPORT_NOTE_LEN + 8];

				snprintf(line, sizeof(line), "%s: %s", k ? "B" : "A", meta[k].notes[i]);
				json_object_array_add(notes, json_object_new_string(line));
			}
		json_object_object_add(o, "notes", notes);
		struct ntp_out out;

		if (ntp_out_open(&out, json, (const char *const *)inputs, n_inputs, err, sizeof(err))) {
			json_object_put(o);
			ret = ntp_err("%s", err);
			goto out;
		}
		fprintf(out.f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		if (ntp_out_close(&out, err, sizeof(err))) {
			/* stdout may be what failed: the reason goes to stderr */
			ntp_json_errors = false;
			ret = ntp_err("cannot write the JSON comparison: %s", err);
			goto out;
		}
		/* stdout holds one JSON value: what follows goes to stderr */
		ntp_json_errors = false;
		if (!strcmp(json, "-")) {
			ret = 0;
			goto damaged;
		}
	}
	/* A run read only in part says so, as in the report. */
	for (int k = 0; k < 2; k++)
		for (unsigned i = 0; i < meta[k].n_notes; i++)
			printf("note (%s): %s\n", k ? "B" : "A", meta[k].notes[i]);
	ntp_compare_print(stdout, snap[0], snap[1], argv[first], argv[first + 1]);
	ret = ntp_out_flush(stdout) ? ntp_err("cannot write the comparison to stdout: %m") : 0;
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
