// SPDX-License-Identifier: GPL-2.0
/* layout.c - where things go on ntprof-top's screen, which groups and which
 * interval the view shows, and the stage labels every screen shares (the other
 * labels are the report's: core/report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"

#define HEADER_ROWS 3	/* title, rates and recording, column headings */
#define NAME_W 15	/* "net+target*", "target driver" */
#define NUM_W 35	/* " 100%* " + mean, p99 (9 each) + avg QD (7) with spaces */

int ntp_layout(int rows, int cols, struct ntp_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->need_rows = NTP_MIN_ROWS;
	out->need_cols = NTP_MIN_COLS;
	if (rows < NTP_MIN_ROWS || cols < NTP_MIN_COLS) {
		out->too_small = 1;
		return -1;
	}
	out->body_top = HEADER_ROWS;
	out->status_row = rows - 1;
	out->body_rows = out->status_row - out->body_top;
	out->name_x = 2;
	out->name_w = NAME_W;
	out->bar_x = out->name_x + NAME_W + 1;
	out->num_x = cols - NUM_W;
	out->bar_w = out->num_x - out->bar_x - 1;
	/* The sparkline shares the title line with the name and e2e figures. */
	out->spark_w = cols >= 100 ? 30 : cols >= 80 ? 12 : 0;
	return 0;
}

const struct ntp_snapshot *ntp_history_shown(const struct ntp_history *h, const struct ntp_view *v)
{
	if (!h || h->n <= 0)
		return NULL;
	if (!v->paused)
		return h->snap[h->n - 1];
	/* Indices are consecutive; the paused one may have left the ring. */
	for (int i = 0; i < h->n; i++)
		if (h->snap[i]->index >= v->shown)
			return h->snap[i];
	return h->snap[h->n - 1];
}

int ntp_group_counted_only(const struct ntp_snap_group *g)
{
	return !g->seen && !g->sampled;
}

/* The groups the view's filters leave: with records (blocks) or only counted (lines). */
static int view_select(const struct ntp_view *v, const struct ntp_snapshot *s, int counted, int *idx, int max)
{
	int n = 0;

	if (!s)
		return 0;
	for (uint32_t i = 0; i < s->n_groups && i < NTP_SNAP_MAX_GROUPS && n < max; i++) {
		const struct ntp_snap_group *g = &s->groups[i];

		if (v->ns[0] && strcmp(g->dev, v->ns))
			continue;
		if (v->io >= 0 && g->io != v->io)
			continue;
		if (ntp_group_counted_only(g) != counted)
			continue;
		idx[n++] = (int)i;
	}
	return n;
}

int ntp_view_groups(const struct ntp_view *v, const struct ntp_snapshot *s, int *idx, int max)
{
	return view_select(v, s, 0, idx, max);
}

int ntp_view_counted(const struct ntp_view *v, const struct ntp_snapshot *s, int *idx, int max)
{
	return view_select(v, s, 1, idx, max);
}

double ntp_view_rate(const struct ntp_view *v, const struct ntp_snapshot *s)
{
	int idx[NTP_SNAP_MAX_GROUPS], n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	double total = 0;

	for (int i = 0; i < n; i++)
		total += s->groups[idx[i]].rate;
	n = ntp_view_counted(v, s, idx, NTP_SNAP_MAX_GROUPS);
	for (int i = 0; i < n; i++)
		total += s->groups[idx[i]].rate;
	return total;
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(a, b);
}

int ntp_snapshot_namespaces(const struct ntp_snapshot *s, char (*out)[NTP_DEV_LEN], int max)
{
	int n = 0;

	if (!s)
		return 0;
	for (uint32_t i = 0; i < s->n_groups && i < NTP_SNAP_MAX_GROUPS; i++) {
		int seen = 0;

		for (int j = 0; j < n && !seen; j++)
			seen = !strncmp(out[j], s->groups[i].dev, NTP_DEV_LEN);
		if (!seen && n < max) {
			snprintf(out[n], NTP_DEV_LEN, "%.*s", NTP_DEV_LEN - 1, s->groups[i].dev);
			n++;
		}
	}
	qsort(out, n, NTP_DEV_LEN, cmp_dev);
	return n;
}

const char *ntp_ui_stage_label(int stage, const struct ntp_snap_group *g)
{
	static const char *const labels[NTP_STAGE_COUNT] = {
		"host block", "host driver", "network", "target driver", "storage",
	};

	if (stage == NTP_STAGE_NETWORK && g->host_only)
		return "net+target*";
	if (stage == NTP_STAGE_NETWORK && g->target_only)
		return "target recv~";
	return stage >= 0 && stage < NTP_STAGE_COUNT ? labels[stage] : "?";
}
