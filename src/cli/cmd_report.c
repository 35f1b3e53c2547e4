// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - `ntprof report [--detail] [-j FILE] FILE...`: one report
 * over whole recordings, host and target files joined (docs/stage-model.md, "Reading a report").
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
"usage: ntprof report [--detail] [-j FILE] FILE...\n"
"Reports one or more recordings as one run: per group of commands (I/O type,\n"
"size, namespace) the latency, each stage's mean, share and queue depth.\n"
"Host and target files of a two-machine run are joined command by command:\n"
"  ntprof report host.ntp target.ntp      (one target may serve several hosts)\n"
"\n");
	ntp_cmd_help(f, "report");
	fprintf(f, "\n"
"All files must be recorded with the same -s; at most one host and one target\n"
"file per machine.\n");
}

int cmd_report(int argc, char **argv)
{
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &o };
	const char *json;
	struct ntp_report_meta meta;
	struct ntp_snapshot *snap;
	struct ntp_loaded *keep = NULL;
	int detail, first, ret;

	first = ntp_cmd_parse("report", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	json = o.json;
	detail = o.detail;
	if (json && !strcmp(json, "-"))
		ntp_json_errors = true;
	if (first >= argc)
		return ntp_err("no recording given (ntprof report --help)");
	snap = malloc(sizeof(*snap));
	if (!snap)
		return ntp_err("out of memory");
	ret = ntp_load(argv + first, (size_t)(argc - first), snap, &meta, &keep);
	if (ret)
		goto out;
	meta.detail = detail;
	if (json) {
		json_object *o = ntp_report_json(snap, &meta);
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
		FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;

		if (!f) {
			json_object_put(o);
			ret = ntp_err("%s: cannot write the JSON report: %m", json);
			goto out;
		}
		fprintf(f, "%s\n", s);
		json_object_put(o);
		if (f != stdout && fclose(f)) {
			ret = ntp_err("%s: cannot write the JSON report: %m", json);
			goto out;
		}
		if (f == stdout)
			goto out;
	}
	ntp_report_print(stdout, snap, &meta);
	if (fflush(stdout))
		ret = ntp_err("cannot write the report to stdout");
out:
	/* a damaged input (a block failed its CRC) is bad input: the report of
	 * the rest is printed, and the exit status says so, as dump's does */
	if (!ret && meta.damaged[0])
		ret = ntp_err("%s (the report is of the records read)", meta.damaged);
	ntp_load_free(keep);
	free(snap);
	return ret;
}
