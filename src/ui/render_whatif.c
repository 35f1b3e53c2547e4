// SPDX-License-Identifier: GPL-2.0
/* render_whatif.c - the what-if view: the selected group of the shown
 * interval beside what the model (core/whatif.h, docs/what-if.md) predicts
 * at the view's target QD. The intervals kept before it are the load levels
 * the stages' parallelism is fitted on, so tuning the workload's QD live
 * teaches the model. Pure. */
#include <stdio.h>
#include <string.h>
#include "render.h"
#include "../core/model/whatif_work.h"

/* The groups of the intervals kept before s that are load levels to fit
 * on (ntp_wi_fit_usable), the newest first; *left_out: those that are not. */
static int fit_groups(const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_snap_group *g,
		      const struct ntp_snap_group **fit, int *left_out)
{
	return ntp_wi_fit_groups(h ? h->snap : NULL, h ? h->n : 0, s, g, fit, left_out);
}

void ntp_whatif_model(const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_snap_group *g,
		      const struct ntp_wi_params *p, struct ntp_wi_model *m)
{
	const struct ntp_snap_group *fit[NTP_WI_MAX_FIT];
	int left_out, n = fit_groups(h, s, g, fit, &left_out);

	ntp_wi_build(g, fit, n, p, m);
	m->n_left_out = left_out;
}

/* Paused, the fit keeps the intervals it had when the pause began: the
 * history goes on dropping its oldest, and a paused screen must not change
 * by itself (docs/what-if.md). Copies, as the history frees what it drops. */
static struct {
	int valid, n, left_out;
	uint64_t index;
	uint8_t io;
	uint32_t len;
	char dev[NTP_DEV_LEN];
	struct ntp_snap_group g[NTP_WI_MAX_FIT];
} frozen;

static int same_group(const struct ntp_snap_group *a, uint8_t io, uint32_t len, const char *dev)
{
	return a->io == io && a->len == len && !strncmp(a->dev, dev, NTP_DEV_LEN);
}

static void whatif_model_paused(const struct ntp_history *h, const struct ntp_snapshot *s,
				const struct ntp_snap_group *g, const struct ntp_wi_params *p,
				struct ntp_wi_model *m)
{
	const struct ntp_snap_group *fit[NTP_WI_MAX_FIT];

	if (!frozen.valid || frozen.index != s->index || !same_group(g, frozen.io, frozen.len, frozen.dev)) {
		int n = fit_groups(h, s, g, fit, &frozen.left_out);

		for (int i = 0; i < n; i++)
			frozen.g[i] = *fit[i];
		frozen.n = n;
		frozen.index = s->index;
		frozen.io = g->io;
		frozen.len = g->len;
		memcpy(frozen.dev, g->dev, NTP_DEV_LEN);
		frozen.valid = 1;
	}
	for (int i = 0; i < frozen.n; i++)
		fit[i] = &frozen.g[i];
	ntp_wi_build(g, fit, frozen.n, p, m);
	m->n_left_out = frozen.left_out;
}

/* The fit costs up to a few hundred milliseconds when the history holds
 * QDs up to 1024 (docs/what-if.md): a screen redrawn for a key press or the
 * status line reuses the model of the same interval, group and parameters
 * (and, paused, whatever the history did meanwhile). */
static void whatif_model_cached(const struct ntp_history *h, const struct ntp_snapshot *s,
				const struct ntp_snap_group *g, const struct ntp_wi_params *p,
				int paused, struct ntp_wi_model *m)
{
	static struct {
		int valid, paused;
		uint64_t index, oldest;
		int n;
		uint8_t io;
		uint32_t len;
		char dev[NTP_DEV_LEN];
		struct ntp_wi_params p;
		struct ntp_wi_model m;
	} c;
	struct ntp_wi_params none;

	memset(&none, 0, sizeof(none));
	if (!p)
		p = &none;
	if (!paused)
		frozen.valid = 0;
	if (c.valid && c.index == s->index && c.paused == paused &&
	    (paused || (h && h->n == c.n && h->n && c.oldest == h->snap[0]->index)) &&
	    same_group(g, c.io, c.len, c.dev) &&
	    !memcmp(c.p.servers, p->servers, sizeof(p->servers)) && c.p.tags == p->tags &&
	    c.p.hw_queues == p->hw_queues && c.p.tags_from == p->tags_from && c.p.base_qd == p->base_qd) {
		*m = c.m;
		return;
	}
	if (paused)
		whatif_model_paused(h, s, g, p, m);
	else
		ntp_whatif_model(h, s, g, p, m);
	c.valid = h && h->n;
	c.paused = paused;
	c.index = s->index;
	c.oldest = h && h->n ? h->snap[0]->index : 0;
	c.n = h ? h->n : 0;
	c.io = g->io;
	c.len = g->len;
	memcpy(c.dev, g->dev, NTP_DEV_LEN);
	c.p = *p;
	c.m = *m;
}

static const char *station(const struct ntp_wi_station *st, char *buf, size_t len)
{
	switch (st->source) {
	case NTP_WI_SRC_ONE_LOAD: return "delay (1 load)";
	case NTP_WI_SRC_NO_CONTENTION: return "delay (seen)";
	case NTP_WI_SRC_FITTED: snprintf(buf, len, "%d srv fitted", st->servers); return buf;
	case NTP_WI_SRC_POOR_FIT: return "delay (fit poor)";
	case NTP_WI_SRC_GIVEN:
		if (!st->servers)
			return "delay (given)";
		snprintf(buf, len, "%d srv given", st->servers);
		return buf;
	}
	return "?";
}

void ntp_render_whatif(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_view *v,
		       const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_top_info *info)
{
	int idx[NTP_SNAP_MAX_GROUPS], n, row = 2, wide = scr->cols >= 80, num_x, bar_w, x;
	const struct ntp_snap_group *g;
	const struct ntp_wi_shown *sh;
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;
	char label[64], rate[32], buf[160];
	const int last = l->status_row - 1;

	ntp_screen_put(scr, row++, 1, -1, NTP_ROLE_LABEL,
		       "what-if: the selected group at another queue depth (< > QD, W or Esc: back)");
	n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	if (!n) {
		ntp_screen_put(scr, row + 1, 2, -1, NTP_ROLE_DIM, s ? "no group in this interval" : "waiting for the first interval...");
		return;
	}
	g = &s->groups[idx[v->selected >= 0 && v->selected < n ? v->selected : 0]];
	sh = info->wi ? info->wi->shown : NULL;
	/* the group the numbers are of: the last fit's, while another's is computed */
	ntp_group_label(sh && sh->valid ? &sh->base : g, label, sizeof(label));
	x = ntp_screen_printf(scr, row, 1, -1, NTP_ROLE_GROUP, "== %s", label);
	if (sh) {
		/* ntprof-top: the last fit made off the UI thread, labelled
		 * with what it was made for; a newer one said to be coming */
		if (sh->pending)
			ntp_screen_printf(scr, row, x + 2, -1, NTP_ROLE_DIM, "computing QD %u ...", sh->want_qd);
		else if (sh->valid && sh->index != s->index)
			ntp_screen_printf(scr, row, x + 2, -1, NTP_ROLE_DIM,
					  "fitted on #%llu (the load levels since the same)",
					  (unsigned long long)sh->index);
		row++;
		if (!sh->valid) {
			ntp_screen_put(scr, row + 1, 2, -1, NTP_ROLE_DIM, "computing the fit ...");
			return;
		}
		g = &sh->base;
		m = sh->m;
		if (!m.ok || !sh->pred_ok) {
			ntp_screen_printf(scr, row + 1, 2, -1, NTP_ROLE_DIM, "no prediction: %s", m.ok ? "bad QD" : m.why);
			return;
		}
		p = sh->p;
	} else {
		row++;
		/* the run's QD as the view has it (--what-if-qd-was, keys [ ]) */
		if (info->wi)
			par = *info->wi;
		else
			memset(&par, 0, sizeof(par));
		par.base_qd = v->wi_qd_was;
		whatif_model_cached(h, s, g, &par, v->paused, &m);
		if (!m.ok || ntp_wi_predict(&m, v->wi_qd ? v->wi_qd : 1, &p)) {
			ntp_screen_printf(scr, row + 1, 2, -1, NTP_ROLE_DIM, "no prediction: %s", m.ok ? "bad QD" : m.why);
			return;
		}
	}
	ntp_rate_label(m.base_iops, rate, sizeof(rate));
	ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_TEXT, "measured  QD %-4u %7s IOPS  mean %9.1f  p99 %9.1f us  QD %s",
			  m.base_qd, rate, m.base_mean_us, m.base_p99_us, m.base_qd_given ? "given" : "inferred");
	ntp_rate_label(p.iops, rate, sizeof(rate));
	ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_VALUE, "predicted QD %-4u %7s IOPS  mean %9.1f  p99 %9.1f us",
			  p.qd, rate, p.mean_us, p.p99_us);
	if (row > last)
		return;
	/* stage rows: name, the predicted share as a bar, measured and predicted mean and QD */
	num_x = scr->cols - (wide ? 52 : 36);
	bar_w = num_x - (l->name_x + l->name_w + 1) - 1;
	row++;
	if (row <= last) {
		ntp_screen_put(scr, row, l->name_x, -1, NTP_ROLE_LABEL, "stage");
		ntp_screen_printf(scr, row, num_x, -1, NTP_ROLE_LABEL, " %8s %6s  %8s %6s%s", "meas us", "QD",
				  "pred us", "QD", wide ? "  station" : "");
		row++;
	}
	for (int k = 0; k < NTP_STAGE_COUNT && row <= last; k++, row++) {
		const struct ntp_wi_station *st = &m.st[k];

		ntp_screen_put(scr, row, l->name_x, l->name_w, NTP_ROLE_LABEL, ntp_ui_stage_label(k, g));
		if (!st->present) {
			ntp_screen_put(scr, row, num_x, -1, NTP_ROLE_DIM, "        -");
			continue;
		}
		if (bar_w > 0)
			ntp_render_stage_bar(scr, row, l->name_x + l->name_w + 1, bar_w, k,
					     p.mean_us > 0 ? p.stage_us[k] / p.mean_us : 0, info->glyphs);
		ntp_screen_printf(scr, row, num_x, -1, k == p.saturated ? NTP_ROLE_WARN : NTP_ROLE_TEXT,
				  " %8.1f %6.2f  %8.1f %6.2f", st->measured_us, g->stage[k].avg_qd, p.stage_us[k],
				  p.stage_qd[k]);
		if (wide)
			ntp_screen_put(scr, row, num_x + 35, -1, NTP_ROLE_DIM, station(st, buf, sizeof(buf)));
	}
	row++;
	if (row <= last) {
		if (m.bottleneck >= 0) {
			ntp_rate_label(m.max_iops, rate, sizeof(rate));
			ntp_screen_printf(scr, row++, 1, -1, p.qd >= m.knee_qd ? NTP_ROLE_WARN : NTP_ROLE_TEXT,
					  "saturates first: %s, knee at QD %.1f, at most %s IOPS",
					  ntp_ui_stage_label(m.bottleneck, g), m.knee_qd, rate);
		} else {
			ntp_screen_put(scr, row++, 1, -1, NTP_ROLE_TEXT,
				       "saturates first: nothing seen (every stage a delay so far)");
		}
	}
	if (row <= last) {
		if (m.tags)
			snprintf(buf, sizeof(buf), "host tags: %u per queue, %u queue%s (%s)%s", m.tags,
				 m.hw_queues ? m.hw_queues : 1, m.hw_queues > 1 ? "s" : "",
				 m.tags_from ? m.tags_from : "given",
				 p.tag_wait_us > 0 ? "; past them commands wait in the block layer" : "");
		else
			snprintf(buf, sizeof(buf), "host tags: unknown (not in the recording): no limit modelled");
		ntp_screen_put(scr, row++, 1, -1, p.tag_wait_us > 0 ? NTP_ROLE_WARN : NTP_ROLE_TEXT, buf);
	}
	if (row <= last && m.n_left_out)
		ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_DIM,
				  "%d load level%s in the intervals kept, %d left out (too few samples, sampling change)",
				  m.n_levels, m.n_levels == 1 ? "" : "s", m.n_left_out);
	else if (row <= last)
		ntp_screen_printf(scr, row++, 1, -1, NTP_ROLE_DIM,
				  "%d load level%s seen in the intervals kept; p99: the measured shape scaled",
				  m.n_levels, m.n_levels == 1 ? "" : "s");
}
