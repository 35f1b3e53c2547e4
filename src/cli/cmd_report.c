// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - `ntprof report [--detail] [-j FILE] FILE...`: one report
 * over whole recordings, host and target files joined (docs/stage-model.md, "Reading a report").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "core/render/out.h"
#include "load.h"
#include "options.h"
#include "core/render/report_whatif.h"

/* --what-if-* into the request; 0, or 1 after ntp_err(). fit_path[] points
 * into fit (modified in place). */
static int whatif_opts(const struct ntp_cmd_opts *o, struct ntp_wi_request *wi, char *fit,
		       char **fit_path, int *n_fit)
{
	char err[160], *save = NULL, *tok, *end;
	long v;

	memset(wi, 0, sizeof(*wi));
	*n_fit = 0;
	if (!o->wi_qd) {
		if (o->wi_fit || o->wi_servers || o->wi_tags || o->wi_qd_was)
			return ntp_err("--what-if-fit, --what-if-servers, --what-if-tags and --what-if-qd-was need --what-if-qd");
		return 0;
	}
	wi->n_qd = ntp_wi_parse_qds(o->wi_qd, wi->qd, NTP_WI_MAX_ASKED, err, sizeof(err));
	if (wi->n_qd < 0)
		return ntp_err("%s", err);
	if (o->wi_servers && ntp_wi_parse_servers(o->wi_servers, &wi->params, err, sizeof(err)))
		return ntp_err("%s", err);
	if (o->wi_tags) {
		wi->params.tags = o->wi_tags;
		wi->params.tags_from = "--what-if-tags";
	}
	wi->params.base_qd = o->wi_qd_was;
	for (tok = fit ? strtok_r(fit, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *at = strrchr(tok, '@');

		if (*n_fit >= NTP_WI_MAX_FIT)
			return ntp_err("--what-if-fit: at most %d recordings", NTP_WI_MAX_FIT);
		if (at == tok)
			return ntp_err("--what-if-fit: '%s': no FILE before @", tok);
		if (at) {
			v = strtol(at + 1, &end, 10);
			if (end == at + 1 || *end || v < 1 || v > NTP_WI_MAX_QD)
				return ntp_err("--what-if-fit: '%s': FILE@QD with QD 1..%d", tok, NTP_WI_MAX_QD);
			*at = '\0';
			wi->fit_qd[*n_fit] = (uint32_t)v;
		}
		fit_path[(*n_fit)++] = tok;
	}
	return 0;
}

/*
 * A --what-if-fit recording against the input: of the same transport and
 * sides (its stages are then the same measures; docs/what-if.md), else
 * refused. What its loading noted (a file cut short or damaged) becomes a
 * note of the report, naming the option, and a damaged one the exit status
 * too, as an input's; another -s is said (each file's rates are estimated
 * with its own N). 0, or 1 after ntp_err().
 */
static const char *sides(uint8_t role)
{
	return role == NTP_ROLE_HOST ? "the host's side only" : role == NTP_ROLE_TARGET ? "the target's side only"
										: "both sides";
}

static int fit_check(const struct ntp_snapshot *in, const struct ntp_snapshot *fit, const char *path,
		     const struct ntp_report_meta *fm, struct ntp_report_meta *meta)
{
	static const char tail[] = "; this report is of the records read";

	if (fit->transport != in->transport || fit->impl_host != in->impl_host ||
	    fit->impl_target != in->impl_target)
		return ntp_err("--what-if-fit %s: recorded over %s%s, the input over %s%s: its stages are not the same",
			       path, ntp_transport_name(fit->transport), fit->impl_host || fit->impl_target ? " (SPDK)" : "",
			       ntp_transport_name(in->transport), in->impl_host || in->impl_target ? " (SPDK)" : "");
	if (fit->role != in->role)
		return ntp_err("--what-if-fit %s: %s recorded, the input %s: its stages are not the same",
			       path, sides(fit->role), sides(in->role));
	for (unsigned k = 0; k < fm->n_notes; k++) {
		const char *n = fm->notes[k];
		size_t len = strlen(n), t = sizeof(tail) - 1;

		if (len >= t && !strcmp(n + len - t, tail))
			ntp_report_note(meta, "--what-if-fit: %.*s; the fit is of the records read", (int)(len - t), n);
		else
			ntp_report_note(meta, "--what-if-fit: %s", n);
	}
	if (fm->damaged[0] && !meta->damaged[0])
		snprintf(meta->damaged, sizeof(meta->damaged), "--what-if-fit %.*s",
			 (int)sizeof(meta->damaged) - 15, fm->damaged);
	if (fit->sampling != in->sampling)
		ntp_report_note(meta, "--what-if-fit %s: recorded with -s %u, the input with -s %u",
				path, fit->sampling, in->sampling);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof report [--detail] [-j FILE] [--what-if-qd N[,N...]] FILE...\n"
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
	int detail, first, ret, n_fit = 0;
	struct ntp_wi_request wi;
	char *fit_path[NTP_WI_MAX_FIT], *fit_list = NULL;
	struct ntp_snapshot *fit_snap[NTP_WI_MAX_FIT] = { 0 };

	first = ntp_cmd_parse("report", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (o.wi_fit && !(fit_list = strdup(o.wi_fit)))
		return ntp_err("out of memory");
	if (whatif_opts(&o, &wi, fit_list, fit_path, &n_fit)) {
		free(fit_list);
		return 1;
	}
	json = o.json;
	detail = o.detail;
	if (json && !strcmp(json, "-"))
		ntp_json_errors = true;
	if (first >= argc) {
		free(fit_list);
		return ntp_err("no recording given (ntprof report --help)");
	}
	if (json) {
		char err[NTP_ERR_LEN];

		if (ntp_out_check_report(json, (const char *const *)argv + first, (size_t)(argc - first),
				  err, sizeof(err))) {
			free(fit_list);
			return ntp_err("-j %s", err);
		}
	}
	snap = malloc(sizeof(*snap));
	if (!snap) {
		free(fit_list);
		return ntp_err("out of memory");
	}
	/* The text report prints no stage quantile, and component ones only
	 * with --detail (report.c); JSON and --what-if-qd (stage p99s,
	 * whatif.c) need them all. Keeping a histogram costs more than the
	 * rest of a command's reduction (docs/performance.md). */
	ret = ntp_load(argv + first, (size_t)(argc - first),
		       json || wi.n_qd ? 0 : NTP_MODEL_NO_STAGE_Q | (detail ? 0 : NTP_MODEL_NO_COMP_Q),
		       snap, &meta, &keep);
	if (ret)
		goto out;
	meta.detail = detail;
	/* the recordings at other loads: each one run of its own */
	for (int i = 0; i < n_fit; i++) {
		struct ntp_report_meta fm;
		struct ntp_loaded *fk = NULL;

		/* a name the list's commas made (the list is split at every
		 * one, docs/reports.md) is said as the option's */
		if (access(fit_path[i], F_OK)) {
			ret = ntp_err("--what-if-fit %s: %s", fit_path[i], strerror(errno));
			goto out;
		}
		fit_snap[i] = malloc(sizeof(*fit_snap[i]));
		if (!fit_snap[i]) {
			ret = ntp_err("out of memory");
			goto out;
		}
		ret = ntp_load(&fit_path[i], 1, 0, fit_snap[i], &fm, &fk);
		ntp_load_free(fk);
		if (ret)
			goto out;
		ret = fit_check(snap, fit_snap[i], fit_path[i], &fm, &meta);
		if (ret)
			goto out;
	}
	wi.fit = (const struct ntp_snapshot *const *)fit_snap;
	wi.n_fit = n_fit;
	wi.hostq = meta.hostq;
	wi.n_hostq = meta.n_hostq;
	if (json) {
		json_object *o = ntp_report_json(snap, &meta);

		if (wi.n_qd)
			json_object_object_add(o, "what_if", ntp_whatif_json(snap, &wi));
		const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
		struct ntp_out out;
		char err[NTP_ERR_LEN];

		/* checked again now: the inputs are known to exist */
		if (ntp_out_open(&out, json, (const char *const *)argv + first, (size_t)(argc - first),
				 err, sizeof(err))) {
			json_object_put(o);
			ret = ntp_err("%s", err);
			goto out;
		}
		fprintf(out.f, "%s\n", s);
		json_object_put(o);
		if (ntp_out_close(&out, err, sizeof(err))) {
			/* stdout may be what failed: the reason goes to stderr */
			ntp_json_errors = false;
			ret = ntp_err("cannot write the JSON report: %s", err);
			goto out;
		}
		/* stdout holds one JSON value: what follows goes to stderr */
		ntp_json_errors = false;
		if (!strcmp(json, "-"))
			goto out;
	}
	ntp_report_print(stdout, snap, &meta);
	if (wi.n_qd)
		ntp_whatif_print(stdout, snap, &wi);
	if (ntp_out_flush(stdout))
		ret = ntp_err("cannot write the report to stdout: %m");
out:
	/* a damaged input (a block failed its CRC) is bad input: the report of
	 * the rest is printed, and the exit status says so, as dump's does */
	if (!ret && meta.damaged[0])
		ret = ntp_err("%s (the %s is of the records read)", meta.damaged,
			      strncmp(meta.damaged, "--what-if-fit ", 14) ? "report" : "fit");
	ntp_load_free(keep);
	for (int i = 0; i < n_fit; i++)
		free(fit_snap[i]);
	free(fit_list);
	free(snap);
	return ret;
}
