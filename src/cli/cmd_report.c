// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - `ntprof report [--detail] [-j FILE] FILE...`: one report
 * over whole recordings, host and target files joined (docs/stage-model.md, "Reading a report").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "load.h"
#include "core/report_whatif.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof report [--detail] [-j FILE] [--what-if-qd N[,N...]] FILE...\n"
"Reports one or more recordings as one run: per group of commands (I/O type,\n"
"size, namespace) the latency, each stage's mean, share and queue depth.\n"
"Host and target files of a two-machine run are joined command by command:\n"
"  ntprof report host.ntp target.ntp      (one target may serve several hosts)\n"
"\n"
"  -d, --detail      also the components of each stage, in path order\n"
"  -j, --json FILE   write the report as JSON to FILE ('-': to stdout, instead\n"
"                    of the text); schema in docs/json-schema.md\n"
"      --what-if-qd N[,N...]\n"
"                    also predict each group at these queue depths (1..1024):\n"
"                    IOPS, mean, p99, each stage; method in docs/what-if.md\n"
"      --what-if-qd-was N\n"
"                    the queue depth the recording ran at (default: rate x\n"
"                    mean, which reads low when the application's own time\n"
"                    per command is not small beside the latency)\n"
"      --what-if-fit FILE[@QD]\n"
"                    the same workload recorded at another queue depth (QD\n"
"                    if known): the stages' parallelism is fitted across the\n"
"                    loads (repeat)\n"
"      --what-if-servers STAGE=N|delay[,...]\n"
"                    give a stage's parallelism, e.g. storage=4 (stages:\n"
"                    host_block host_driver network target_driver storage)\n"
"      --what-if-tags N  the host's tags per hardware queue (nr_requests):\n"
"                    beyond them commands wait in the host's block layer\n"
"  -h, --help\n"
"\n"
"All files must be recorded with the same -s; at most one host and one target\n"
"file per machine.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "detail", no_argument, NULL, 'd' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "what-if-qd", required_argument, NULL, 'Q' },
		{ "what-if-fit", required_argument, NULL, 'F' },
		{ "what-if-servers", required_argument, NULL, 'S' },
		{ "what-if-tags", required_argument, NULL, 'T' },
		{ "what-if-qd-was", required_argument, NULL, 'B' },
		{ 0 }
	};
	const char *json = NULL;
	struct ntp_report_meta meta;
	struct ntp_snapshot *snap;
	struct ntp_loaded *keep = NULL;
	int detail = 0, opt, ret;
	struct ntp_wi_request wi;
	char *fit_path[NTP_WI_MAX_FIT];
	struct ntp_snapshot *fit_snap[NTP_WI_MAX_FIT] = { 0 };
	int n_fit = 0;
	char err[160], *end;
	long v;

	memset(&wi, 0, sizeof(wi));
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":dj:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': detail = 1; break;
		case 'j': json = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'Q':
			wi.n_qd = ntp_wi_parse_qds(optarg, wi.qd, NTP_WI_MAX_ASKED, err, sizeof(err));
			if (wi.n_qd < 0)
				return ntp_err("%s", err);
			break;
		case 'F': {
			char *at = strrchr(optarg, '@');

			if (n_fit >= NTP_WI_MAX_FIT)
				return ntp_err("--what-if-fit: at most %d recordings", NTP_WI_MAX_FIT);
			if (at) {
				v = strtol(at + 1, &end, 10);
				if (end == at + 1 || *end || v < 1 || v > NTP_WI_MAX_QD)
					return ntp_err("--what-if-fit: '%s': FILE@QD with QD 1..%d", optarg,
						       NTP_WI_MAX_QD);
				*at = '\0';
				wi.fit_qd[n_fit] = (uint32_t)v;
			}
			fit_path[n_fit++] = optarg;
			break;
		}
		case 'B':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > NTP_WI_MAX_QD)
				return ntp_err("--what-if-qd-was: '%s': queue depths are 1..%d", optarg, NTP_WI_MAX_QD);
			wi.params.base_qd = (uint32_t)v;
			break;
		case 'S':
			if (ntp_wi_parse_servers(optarg, &wi.params, err, sizeof(err)))
				return ntp_err("%s", err);
			break;
		case 'T':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 65536)
				return ntp_err("--what-if-tags: '%s': tags are 1..65536", optarg);
			wi.params.tags = (uint32_t)v;
			wi.params.tags_from = "--what-if-tags";
			break;
		case ':': return ntp_err("option %s needs a value", argv[optind - 1]);
		default: return ntp_err("unknown option '%s' (ntprof report --help)", argv[optind - 1]);
		}
	}
	if (json && !strcmp(json, "-"))
		ntp_json_errors = true;
	if (optind >= argc)
		return ntp_err("no recording given (ntprof report --help)");
	if (!wi.n_qd && (n_fit || wi.params.tags || wi.params.base_qd || memcmp(wi.params.servers, (int[NTP_STAGE_COUNT]){ 0 },
							    sizeof(wi.params.servers))))
		return ntp_err("--what-if-fit, --what-if-servers, --what-if-tags and --what-if-qd-was need --what-if-qd");
	snap = malloc(sizeof(*snap));
	if (!snap)
		return ntp_err("out of memory");
	ret = ntp_load(argv + optind, (size_t)(argc - optind), snap, &meta, &keep);
	if (ret)
		goto out;
	meta.detail = detail;
	/* the recordings at other loads: each one run of its own */
	for (int i = 0; i < n_fit; i++) {
		struct ntp_report_meta fm;
		struct ntp_loaded *fk = NULL;

		fit_snap[i] = malloc(sizeof(*fit_snap[i]));
		if (!fit_snap[i]) {
			ret = ntp_err("out of memory");
			goto out;
		}
		ret = ntp_load(&fit_path[i], 1, fit_snap[i], &fm, &fk);
		ntp_load_free(fk);
		if (ret)
			goto out;
	}
	wi.fit = (const struct ntp_snapshot *const *)fit_snap;
	wi.n_fit = n_fit;
	if (json) {
		json_object *o = ntp_report_json(snap, &meta);

		if (wi.n_qd)
			json_object_object_add(o, "what_if", ntp_whatif_json(snap, &wi));
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
	if (wi.n_qd)
		ntp_whatif_print(stdout, snap, &wi);
	if (fflush(stdout))
		ret = ntp_err("cannot write the report to stdout");
out:
	/* a damaged input (a block failed its CRC) is bad input: the report of
	 * the rest is printed, and the exit status says so, as dump's does */
	if (!ret && meta.damaged[0])
		ret = ntp_err("%s (the report is of the records read)", meta.damaged);
	ntp_load_free(keep);
	for (int i = 0; i < n_fit; i++)
		free(fit_snap[i]);
	free(snap);
	return ret;
}
