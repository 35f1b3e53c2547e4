// SPDX-License-Identifier: GPL-2.0
/*
 * report_whatif.c - the what-if section of `ntprof report`: per group, the
 * model's parameters and where each came from, the stage that saturates
 * first and the knee, then one row per queue depth asked for. JSON numbers
 * carry the text's rounding, as in report_json.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../store/ntpfile.h"
#include "report.h"
#include "report_whatif.h"
#include "report_int.h"

const struct ntp_snap_group *ntp_snapshot_find_group(const struct ntp_snapshot *s,
						     const struct ntp_snap_group *g)
{
	for (unsigned i = 0; i < s->n_groups; i++) {
		const struct ntp_snap_group *o = &s->groups[i];

		if (o->io == g->io && o->len == g->len && !strncmp(o->dev, g->dev, NTP_DEV_LEN))
			return o;
	}
	return NULL;
}

double ntp_wi_busy_share(const struct ntp_snap_group *g)
{
	double f, se;

	if (g->busy_rate <= 0 || g->rate <= 0 || g->sampled < 2)
		return 0;
	f = g->rate / g->busy_rate;
	/* n commands spread evenly over a busy time B span B (n - 1) / (n + 1)
	 * on average, with a standard deviation of B sqrt(2 / ((n - 1)(n + 2)))
	 * once scaled up as the model does (docs/what-if.md) */
	se = sqrt(2.0 / ((double)(g->sampled - 1) * (double)(g->sampled + 2)));
	return 1 - f > NTP_WI_BUSY_SIGMAS * se * f ? f : 0;
}

/* The group as the what-if takes it: the busy rate only where the span of
 * its samples shows an idle part of the run (ntp_wi_busy_share), else the
 * run's rate (the kernel's count when the file has it). */
static void as_measured(const struct ntp_snap_group *g, struct ntp_snap_group *out)
{
	*out = *g;
	if (!ntp_wi_busy_share(g))
		out->busy_rate = 0;
}

/* The share of the run the model's rate is over (0: the whole run): the
 * report's choice, or ntprof-top's history as model.c gives it. */
static double used_busy_share(const struct ntp_snap_group *g, const struct ntp_wi_request *rq)
{
	if (!rq->fit_is_history)
		return ntp_wi_busy_share(g);
	return g->busy_rate > g->rate && g->rate > 0 ? g->rate / g->busy_rate : 0;
}

void ntp_wi_build_group(const struct ntp_snap_group *g, const struct ntp_wi_request *rq,
			struct ntp_wi_model *m)
{
	const struct ntp_snap_group *fit[NTP_WI_MAX_FIT];
	struct ntp_wi_params p = rq->params;
	int n = 0, left_out = 0;
	/* the report's own copies (ntprof-top's S: the history's groups as they are) */
	struct ntp_snap_group base, *fits = NULL;

	if (!rq->fit_is_history) {
		/* a prediction calibrated on means of a few samples: none
		 * (docs/stage-model.md, "Few samples") */
		if (!ntp_mean_enough(g->sampled)) {
			memset(m, 0, sizeof(*m));
			m->bottleneck = -1;
			snprintf(m->why, sizeof(m->why), "%llu command%s sampled, fewer than the %d its means need "
				 "(docs/stage-model.md): record longer or at a lower -s",
				 (unsigned long long)g->sampled, g->sampled == 1 ? "" : "s", NTP_MEAN_MIN_SAMPLES);
			return;
		}
		as_measured(g, &base);
		g = &base;
		if (rq->n_fit)
			fits = malloc(sizeof(*fits) * (size_t)(rq->n_fit < NTP_WI_MAX_FIT ? rq->n_fit : NTP_WI_MAX_FIT));
	}

	memset(p.fit_qd, 0, sizeof(p.fit_qd));
	for (unsigned i = 0; !p.tags && i < rq->n_hostq; i++)
		if (!strncmp(rq->hostq[i].dev, g->dev, NTP_DEV_LEN) && rq->hostq[i].tags) {
			p.tags = rq->hostq[i].tags;
			p.hw_queues = rq->hostq[i].hw_queues;
			p.tags_from = "recording";
		}
	for (int i = 0; i < rq->n_fit && n < NTP_WI_MAX_FIT; i++) {
		const struct ntp_snap_group *o = ntp_snapshot_find_group(rq->fit[i], g);

		if (o && rq->fit_is_history) {
			const struct ntp_snapshot *prev = NULL;

			for (int j = 0; j < rq->n_fit; j++)
				if (rq->fit[j]->index + 1 == rq->fit[i]->index)
					prev = rq->fit[j];
			if (!o->sampled || !ntp_wi_fit_usable(prev, rq->fit[i], o)) {
				left_out += o->sampled > 0;
				continue;
			}
		}
		if (o && !rq->fit_is_history) {
			/* a recording at another load with too few samples: no load level */
			if (!ntp_mean_enough(o->sampled)) {
				left_out += o->sampled > 0;
				continue;
			}
			if (fits) {
				as_measured(o, &fits[n]);
				o = &fits[n];
			}
		}
		if (o) {
			p.fit_qd[n] = rq->fit_qd[i];
			fit[n++] = o;
		}
	}
	ntp_wi_build(g, fit, n, &p, m);
	m->n_left_out = left_out;
	free(fits);
}

void ntp_wi_station_label(const struct ntp_wi_model *m, int k, char *buf, size_t len)
{
	const struct ntp_wi_station *s = &m->st[k];

	switch (s->source) {
	case NTP_WI_SRC_ONE_LOAD:
		snprintf(buf, len, "delay (one load level: parallelism not seen)");
		break;
	case NTP_WI_SRC_NO_CONTENTION:
		snprintf(buf, len, "delay (no contention seen up to QD %.0f)", s->fit_max_qd);
		break;
	case NTP_WI_SRC_FITTED:
		snprintf(buf, len, "%d server%s (fitted, %d load levels)", s->servers,
			 s->servers == 1 ? "" : "s", m->n_levels);
		break;
	case NTP_WI_SRC_POOR_FIT:
		snprintf(buf, len, "delay (fit rejected: %d server%s off by %.0f %% rms, %d load levels)",
			 s->fit_servers, s->fit_servers == 1 ? "" : "s", s->fit_err * 100, m->n_levels);
		break;
	case NTP_WI_SRC_GIVEN:
		if (s->servers)
			snprintf(buf, len, "%d server%s (given)", s->servers, s->servers == 1 ? "" : "s");
		else
			snprintf(buf, len, "delay (given)");
		break;
	}
}

static const char *short_stage(int k)
{
	static const char *const n[NTP_STAGE_COUNT] = {
		"host block", "host driver", "network", "tgt driver", "storage",
	};
	return k >= 0 && k < NTP_STAGE_COUNT ? n[k] : "-";
}

static void print_group(FILE *f, const struct ntp_snapshot *s, const struct ntp_snap_group *g,
			const struct ntp_wi_request *rq)
{
	struct ntp_wi_model m;
	char label[64], rate[32], what[96], held[48];
	double busy;

	ntp_group_label(g, label, sizeof(label));
	fprintf(f, "\n== what if: %s\n", label);
	ntp_wi_build_group(g, rq, &m);
	if (!m.ok) {
		fprintf(f, "no prediction: %s\n", m.why);
		return;
	}
	ntp_rate_label(m.base_iops, rate, sizeof(rate));
	busy = used_busy_share(g, rq);
	/* the rate: the run's (as the report's group line), or while busy */
	if (busy > 0)
		snprintf(what, sizeof(what), " (%s over the %.0f %% of the run its samples span)",
			 g->commands ? "counted" : "estimated", busy * 100);
	else
		what[0] = '\0';
	if (m.tag_wait_us > 0)
		snprintf(held, sizeof(held), ", %.2f holding a tag", m.held_little);
	else
		held[0] = '\0';
	fprintf(f, "measured at QD %u (%srate x mean = %.2f%s): %s IOPS%s, mean %.2f us, p99 %.2f us; "
		"think time %.2f us\n", m.base_qd, m.base_qd_given ? "given; " : "", m.base_qd_little, held, rate,
		what, m.base_mean_us, m.base_p99_us, m.think_us);
	/* the bio's submission: the wait for a tag apart (docs/what-if.md) */
	if (m.tag_wait_us > 0 && m.tag_bound)
		fprintf(f, "tag wait: %.2f us a command, out of the host block layer's station: the %u tags were "
			"held full, the wait comes from them\n", m.tag_wait_us, m.tags);
	else if (m.tag_wait_us > 0 && m.tags)
		fprintf(f, "tag wait: %.2f us a command, left out: the %u tags were not held full, so it is no "
			"closed loop's wait (bursts); modelled: the commands holding a tag\n", m.tag_wait_us, m.tags);
	else if (m.tag_wait_us > 0)
		fprintf(f, "tag wait: %.2f us a command, left out: the host's tags are not known "
			"(give --what-if-tags); modelled: the commands holding a tag\n", m.tag_wait_us);
	if (m.n_left_out && !rq->fit_is_history)
		fprintf(f, "fit: %d recording%s left out: fewer than %d commands sampled in %s\n", m.n_left_out,
			m.n_left_out == 1 ? "" : "s", NTP_MEAN_MIN_SAMPLES, m.n_left_out == 1 ? "it" : "each");
	fprintf(f, "%-36s %10s  %s\n", "stage", "service us", "station");
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		if (!m.st[k].present)
			continue;
		ntp_wi_station_label(&m, k, what, sizeof(what));
		fprintf(f, "%-36s %10.2f  %s\n", ntp_stage_name(k, s->transport, s->impl_host,
								 s->impl_target, g->host_only),
			m.st[k].service_us, what);
	}
	if (m.bottleneck >= 0) {
		ntp_rate_label(m.max_iops, rate, sizeof(rate));
		fprintf(f, "saturates first: %s, knee at QD %.1f, at most %s IOPS\n",
			short_stage(m.bottleneck), m.knee_qd, rate);
	} else {
		fprintf(f, "saturates first: nothing the data shows (every stage a delay)\n");
	}
	if (m.tags && m.hw_queues)
		fprintf(f, "host tags: %u per hardware queue, %u hardware queue%s (%s)%s\n", m.tags,
			m.hw_queues, m.hw_queues == 1 ? "" : "s", m.tags_from ? m.tags_from : "given",
			m.tags_first ? "; they run out before the knee" : "");
	else if (m.tags)
		fprintf(f, "host tags: %u per hardware queue (%s)%s\n", m.tags,
			m.tags_from ? m.tags_from : "given",
			m.tags_first ? "; they run out before the knee" : "");
	else
		fprintf(f, "host tags: not in the recording (give --what-if-tags): no limit modelled\n");
	fprintf(f, "%5s %9s %10s %10s", "QD", "IOPS", "mean us", "p99 us");
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		if (m.st[k].present)
			fprintf(f, " %17s", short_stage(k));
	fprintf(f, "  saturated\n");
	for (int i = 0; i < rq->n_qd; i++) {
		struct ntp_wi_pred p;

		if (ntp_wi_predict(&m, rq->qd[i], &p))
			continue;
		fprintf(f, "%5u %9.0f %10.2f %10.2f", p.qd, p.iops, p.mean_us, p.p99_us);
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			char cell[32];

			if (!m.st[k].present)
				continue;
			snprintf(cell, sizeof(cell), "%.1f/%.2f", p.stage_us[k], p.stage_qd[k]);
			fprintf(f, " %17s", cell);
		}
		fprintf(f, "  %s", p.saturated >= 0 ? short_stage(p.saturated) : "-");
		if (p.tag_wait_us > 0)
			fprintf(f, " (%u in flight, %.1f us waiting for a tag)", p.qd_in_flight, p.tag_wait_us);
		fputc('\n', f);
	}
	fprintf(f, "stage cells: mean us / avg QD; method and limits: docs/what-if.md\n");
}

void ntp_whatif_print(FILE *f, const struct ntp_snapshot *s, const struct ntp_wi_request *rq)
{
	for (unsigned i = 0; i < s->n_groups; i++)
		print_group(f, s, &s->groups[i], rq);
}

static json_object *num(double v, int decimals)
{
	char s[64];

	snprintf(s, sizeof(s), "%.*f", decimals, v);
	if (s[0] == '-' && strspn(s + 1, "0.") == strlen(s + 1))
		memmove(s, s + 1, strlen(s));
	return json_object_new_double_s(v, s);
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *group_json(const struct ntp_snap_group *g, const struct ntp_wi_request *rq)
{
	json_object *o = ntp_json_group_ident(g), *sts, *preds, *tags, *meas;
	struct ntp_wi_model m;

	ntp_wi_build_group(g, rq, &m);
	add(o, "ok", json_object_new_boolean(m.ok));
	add(o, "why", m.ok ? NULL : json_object_new_string(m.why));
	if (!m.ok)
		return o;
	meas = json_object_new_object();
	add(meas, "qd", json_object_new_int64(m.base_qd));
	add(meas, "qd_given", json_object_new_boolean(m.base_qd_given));
	add(meas, "qd_little", num(m.base_qd_little, 4));
	add(meas, "iops", num(m.base_iops, 1));
	add(meas, "mean_us", num(m.base_mean_us, 3));
	add(meas, "p99_us", num(m.base_p99_us, 3));
	/* null: the IOPS is the run's rate (the report's "rate") */
	/* records from the bio's submission (null without): the wait for a
	 * tag, rate x the mean without it, whether the tags give the wait */
	add(meas, "tag_wait_us", m.tag_wait_us > 0 ? num(m.tag_wait_us, 3) : NULL);
	add(meas, "qd_holding_tag", m.tag_wait_us > 0 ? num(m.held_little, 4) : NULL);
	add(meas, "tag_wait_modelled", m.tag_wait_us > 0 ? json_object_new_boolean(m.tag_bound) : NULL);
	add(meas, "busy_share", used_busy_share(g, rq) > 0 ? num(used_busy_share(g, rq), 4) : NULL);
	add(o, "measured", meas);
	add(o, "think_us", num(m.think_us, 3));
	add(o, "load_levels", json_object_new_int64(m.n_levels));
	if (rq->fit_is_history)
		add(o, "intervals_left_out", json_object_new_int64(m.n_left_out));
	sts = json_object_new_array();
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		const struct ntp_wi_station *s = &m.st[k];
		json_object *so;

		if (!s->present)
			continue;
		so = json_object_new_object();
		add(so, "stage", json_object_new_string(ntp_stage_key(k)));
		add(so, "kind", json_object_new_string(s->servers ? "queue" : "delay"));
		add(so, "servers", s->servers ? json_object_new_int64(s->servers) : NULL);
		add(so, "source", json_object_new_string(ntp_wi_source_key(s->source)));
		add(so, "service_us", num(s->service_us, 3));
		add(so, "measured_us", num(s->measured_us, 3));
		add(so, "seen_up_to_qd", s->source == NTP_WI_SRC_GIVEN ? NULL : num(s->fit_max_qd, 0));
		add(so, "fit_rms_error", s->source == NTP_WI_SRC_FITTED || s->source == NTP_WI_SRC_POOR_FIT ?
			num(s->fit_err, 4) : NULL);
		json_object_array_add(sts, so);
	}
	add(o, "stations", sts);
	add(o, "saturates_first", m.bottleneck >= 0 ? json_object_new_string(ntp_stage_key(m.bottleneck)) : NULL);
	add(o, "knee_qd", m.bottleneck >= 0 ? num(m.knee_qd, 2) : NULL);
	add(o, "max_iops", m.bottleneck >= 0 ? num(m.max_iops, 1) : NULL);
	tags = json_object_new_object();
	add(tags, "tags", m.tags ? json_object_new_int64(m.tags) : NULL);
	add(tags, "hw_queues", m.hw_queues ? json_object_new_int64(m.hw_queues) : NULL);
	add(tags, "from", m.tags ? json_object_new_string(m.tags_from ? m.tags_from : "given") : NULL);
	add(tags, "before_knee", json_object_new_boolean(m.tags_first));
	add(o, "host_tags", tags);
	preds = json_object_new_array();
	for (int i = 0; i < rq->n_qd; i++) {
		struct ntp_wi_pred p;
		json_object *po, *ps;

		if (ntp_wi_predict(&m, rq->qd[i], &p))
			continue;
		po = json_object_new_object();
		add(po, "qd", json_object_new_int64(p.qd));
		add(po, "in_flight", json_object_new_int64(p.qd_in_flight));
		add(po, "iops", num(p.iops, 1));
		add(po, "mean_us", num(p.mean_us, 3));
		add(po, "p99_us", num(p.p99_us, 3));
		add(po, "tag_wait_us", num(p.tag_wait_us, 3));
		add(po, "saturated", p.saturated >= 0 ? json_object_new_string(ntp_stage_key(p.saturated)) : NULL);
		ps = json_object_new_array();
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			json_object *e;

			if (!m.st[k].present)
				continue;
			e = json_object_new_object();
			add(e, "stage", json_object_new_string(ntp_stage_key(k)));
			add(e, "mean_us", num(p.stage_us[k], 3));
			add(e, "avg_qd", num(p.stage_qd[k], 4));
			add(e, "utilization", m.st[k].servers ? num(p.util[k], 4) : NULL);
			json_object_array_add(ps, e);
		}
		add(po, "stages", ps);
		json_object_array_add(preds, po);
	}
	add(o, "predictions", preds);
	return o;
}

json_object *ntp_whatif_json(const struct ntp_snapshot *s, const struct ntp_wi_request *rq)
{
	json_object *o = json_object_new_object(), *gs = json_object_new_array();

	add(o, "fit_recordings", json_object_new_int64(rq->n_fit));
	for (unsigned i = 0; i < s->n_groups; i++)
		json_object_array_add(gs, group_json(&s->groups[i], rq));
	add(o, "groups", gs);
	return o;
}
