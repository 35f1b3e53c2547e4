// SPDX-License-Identifier: GPL-2.0
/* render.c - ntprof-top's main screen: header, one block per group with the
 * five stage bars and a sparkline of the group's e2e p99, the status line;
 * and the dispatch to the detail, help and too-small screens. Pure. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "render.h"

/* The shown interval is "about" the setting within this share of it (docs/top.md). */
#define NTP_INTERVAL_ABOUT 0.2

/* Per glyph set: full bar cell per stage, eighths (colour only), sparkline levels. */
static const char *const bar_mono[NTP_STAGE_COUNT] = { "█", "▓", "▒", "░", "▚" };
/* ASCII fills (docs/top.md): not "~" for the network, which reads as noise,
 * nor "-", the mark of a stage absent */
static const char *const bar_ascii[NTP_STAGE_COUNT] = { "#", "=", ":", "+", "%" };
static const char *const eighths[8] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
static const char *const spark_utf8[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
static const char *const spark_ascii[8] = { "_", ".", ",", ":", "-", "=", "+", "#" };

static const char *transport_label(uint8_t t)
{
	return t == NTP_TRANSPORT_RDMA ? "NVMe/RDMA" : t == NTP_TRANSPORT_TCP ? "NVMe/TCP" : "NVMe-oF";
}

static const char *role_label(uint8_t r)
{
	return r == NTP_ROLE_TARGET ? "target" : r == NTP_ROLE_BOTH ? "host+target" : "host";
}

/* Writes text right-aligned so that it ends at column end (exclusive). */
static void put_right(struct ntp_screen *scr, int row, int end, uint8_t role, const char *text)
{
	int w = ntp_utf8_width(text);

	ntp_screen_put(scr, row, end - w < 0 ? 0 : end - w, -1, role, text);
}

void ntp_render_header(struct ntp_screen *scr, const struct ntp_view *v, const struct ntp_snapshot *s,
		       const struct ntp_top_info *info)
{
	char buf[256], rate[32], right[128];
	double total = 0;
	int x;

	ntp_screen_fill(scr, 0, 0, scr->cols, NTP_ROLE_TITLE, " ");
	if (s)
		snprintf(right, sizeof(right), " %s#%llu ", v->paused ? "PAUSED " : "", (unsigned long long)s->index);
	else
		snprintf(right, sizeof(right), " waiting ");
	/* What does not fit beside the interval's number goes first: the
	 * program's name, then the end of the host's name; the sampling stays
	 * whole (at 64 columns it was cut to "1") */
	if (s && s->sampling_from)	/* the interval straddled an s key's change */
		snprintf(buf, sizeof(buf), "  %s %s  1 in %u->%u sampled", role_label(s->role),
			 transport_label(s->transport), s->sampling_from, s->sampling);
	else
		snprintf(buf, sizeof(buf), "  %s %s  1 in %u sampled", role_label(s ? s->role : 0),
			 transport_label(s ? s->transport : 0), s ? s->sampling : v->sampling);
	{
		const char *host = info->host ? info->host : "?";
		int room = scr->cols - ntp_utf8_width(right) - ntp_utf8_width(buf) - 1;
		int x = 0;

		if (room >= 12 + ntp_utf8_width(host))
			x = ntp_screen_put(scr, 0, 0, -1, NTP_ROLE_TITLE, " ntprof-top  ");
		else
			x = ntp_screen_put(scr, 0, 0, -1, NTP_ROLE_TITLE, " ");
		x = ntp_screen_put(scr, 0, x, room > 1 ? room : 1, NTP_ROLE_TITLE, host);
		ntp_screen_put(scr, 0, x, -1, NTP_ROLE_TITLE, buf);
	}
	put_right(scr, 0, scr->cols, v->paused ? NTP_ROLE_WARN : NTP_ROLE_TITLE, right);

	/* the groups the filters (n, t) leave, counted ones with no record
	 * too: the totals' count where there is one (docs/top.md) */
	total = ntp_view_rate(v, s);
	ntp_rate_label(total, rate, sizeof(rate));
	x = ntp_screen_printf(scr, 1, 1, -1, NTP_ROLE_VALUE, "%s", rate);
	x = ntp_screen_put(scr, 1, x, -1, NTP_ROLE_LABEL, " cmds/s");
	if (v->ns[0] || v->io >= 0)	/* whose: the filters' */
		x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_LABEL, " of %s%s%s", v->ns[0] ? v->ns : "",
				      v->ns[0] && v->io >= 0 ? " " : "", v->io >= 0 ? ntp_io_name((uint8_t)v->io) : "");
	x = ntp_screen_put(scr, 1, x, -1, NTP_ROLE_LABEL, "  lost ");
	x = ntp_screen_printf(scr, 1, x, -1, s && s->lost_events ? NTP_ROLE_WARN : NTP_ROLE_VALUE, "%llu",
			      s ? (unsigned long long)s->lost_events : 0ULL);
	if (s && s->skipped_runs)	/* records may lack a timestamp (docs/recording.md) */
		x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_WARN, "  skipped runs %llu",
				      (unsigned long long)s->skipped_runs);
	if (s && s->oom)	/* counts or quantiles are missing (docs/failures.md) */
		x = ntp_screen_put(scr, 1, x, -1, NTP_ROLE_WARN, "  memory ran out");
	/* The shown interval's own length (the .json of S says the same), and
	 * the setting apart when + or - changed it since (or a replay's last
	 * interval is shorter): when the two are more than
	 * NTP_INTERVAL_ABOUT apart. A live interval ends when the collection
	 * thread's wait does, a little off the setting; the settings
	 * (keys.c) are 1.5x or more apart. */
	if (s) {
		double ms = round(s->seconds * 1000);

		x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_LABEL, "  interval %g s", ms / 1000.0);
		if (fabs(ms - (double)v->interval_ms) > NTP_INTERVAL_ABOUT * v->interval_ms)
			x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_LABEL, " (setting %g s)", v->interval_ms / 1000.0);
		x = ntp_screen_put(scr, 1, x, -1, NTP_ROLE_LABEL, "  ");
	} else {
		x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_LABEL, "  interval %g s  ", v->interval_ms / 1000.0);
	}
	if (info->recording)
		x = ntp_screen_printf(scr, 1, x, -1, NTP_ROLE_RECORDING, "%s rec %s (%llu records)",
				      info->glyphs == NTP_GLYPHS_ASCII ? "*" : "●",
				      info->rec_path ? info->rec_path : "?", (unsigned long long)info->rec_records);
	else
		x = ntp_screen_put(scr, 1, x, -1, NTP_ROLE_LABEL, "rec off");
	/* The source only when it fits beside the rest. */
	snprintf(right, sizeof(right), "%s ", info->source ? info->source : "");
	if (x + 2 + ntp_utf8_width(right) <= scr->cols)
		put_right(scr, 1, scr->cols, NTP_ROLE_LABEL, right);
}

/* Where the first w characters of p[0..len) end, after the last space
 * among them when there is one (a word is broken only when longer than
 * the line); *next: where the following row starts. */
static size_t wrap_at(const char *p, size_t len, int w, size_t *next)
{
	size_t i = 0, space = 0;
	int chars = 0;

	while (i < len) {
		size_t c = i + 1;

		while (c < len && ((unsigned char)p[c] & 0xC0) == 0x80)
			c++;
		if (chars == w)
			break;
		if (p[i] == ' ')
			space = c;
		chars++;
		i = c;
	}
	if (i < len && space) {
		*next = space;
		return space - 1;
	}
	*next = i;
	return i;
}

#define STATUS_MAX_ROWS 64

/*
 * The status line: the view's message whole (docs/failures.md: messages are
 * not cut), its lines ('\n') wrapped at the screen's width on as many rows
 * as they need above the last one, up to the header; else the key hint on
 * the last row. A message longer than those rows (a small screen, many
 * notes), or cut at the view's buffer (keys.h), ends its last row with one
 * mark ("…"): the replay's notes are whole on stderr after q (docs/top.md).
 */
void ntp_render_status(struct ntp_screen *scr, int row, const struct ntp_view *v, const struct ntp_top_info *info)
{
	char hint[256];
	const char *text = v->msg[0] ? v->msg : info->hint ? info->hint : hint;
	const char *mark = info->glyphs == NTP_GLYPHS_ASCII ? "..." : "…", *line = text;
	struct { const char *p; size_t n, rest; } seg[STATUS_MAX_ROWS];
	int k = 0, max = row - 2, w = scr->cols - 1, markw = info->glyphs == NTP_GLYPHS_ASCII ? 3 : 1;
	size_t len = 0, at = 0;
	char buf[4 * 1024];

	if (!v->msg[0] && !info->hint)
		ntp_key_footer(v, scr->cols - 2, hint, sizeof(hint));	/* " " before, one column spare */
	if (!v->msg[0] || w < 1 || max < 1) {
		ntp_screen_fill(scr, row, 0, scr->cols, NTP_ROLE_STATUS, " ");
		ntp_screen_printf(scr, row, 0, -1, NTP_ROLE_STATUS, " %s", text);
		return;
	}
	if (max > STATUS_MAX_ROWS)
		max = STATUS_MAX_ROWS;
	while (*line && k < max) {
		len = strcspn(line, "\n");
		at = 0;
		do {
			size_t next, n = wrap_at(line + at, len - at, w, &next);

			seg[k].p = line + at;
			seg[k].rest = len - at;
			seg[k++].n = n;
			at += next;
		} while (at < len && k < max);
		if (at < len)
			break;	/* this line goes on past the last row */
		line += len + (line[len] == '\n');
	}
	/* more than the rows hold, or a message cut at the view's buffer
	 * (msg_cut): the last row makes room for the one mark */
	if ((*line || v->msg_cut) && k > 0 && w > markw + 1) {
		size_t next;

		seg[k - 1].n = wrap_at(seg[k - 1].p, seg[k - 1].rest, w - markw - 1, &next);
	} else {
		mark = NULL;
	}
	for (int i = 0; i < k; i++) {
		int r = row - k + 1 + i;
		size_t n = seg[i].n < sizeof(buf) - 1 ? seg[i].n : sizeof(buf) - 1;

		memcpy(buf, seg[i].p, n);
		buf[n] = 0;
		ntp_screen_fill(scr, r, 0, scr->cols, NTP_ROLE_STATUS, " ");
		ntp_screen_printf(scr, r, 0, -1, NTP_ROLE_STATUS, " %s%s%s", buf, i == k - 1 && mark ? " " : "",
				  i == k - 1 && mark ? mark : "");
	}
}

static int same_group(const struct ntp_snap_group *a, const struct ntp_snap_group *b)
{
	return a->io == b->io && a->len == b->len && !strncmp(a->dev, b->dev, NTP_DEV_LEN);
}

/* The group's e2e p99 over the last w intervals up to the shown one. */
static void sparkline(struct ntp_screen *scr, int row, int x, int w, const struct ntp_history *h,
		      const struct ntp_snapshot *shown, const struct ntp_snap_group *g, int glyphs, uint8_t role)
{
	double val[64], lo = INFINITY, hi = -INFINITY;
	int end = -1;

	if (w > 64)
		w = 64;
	for (int i = 0; i < h->n; i++)
		if (h->snap[i] == shown)
			end = i;
	if (end < 0)
		return;
	for (int k = 0; k < w; k++) {
		int i = end - (w - 1 - k);

		val[k] = NAN;
		if (i < 0)
			continue;
		for (uint32_t j = 0; j < h->snap[i]->n_groups && j < NTP_SNAP_MAX_GROUPS; j++) {
			const struct ntp_snap_group *o = &h->snap[i]->groups[j];

			if (same_group(o, g) && o->sampled) {
				val[k] = o->e2e_p99_us;
				break;
			}
		}
		if (!isnan(val[k])) {
			lo = fmin(lo, val[k]);
			hi = fmax(hi, val[k]);
		}
	}
	for (int k = 0; k < w; k++) {
		int lvl;

		if (isnan(val[k]))
			continue;
		lvl = hi > lo ? (int)lround((val[k] - lo) / (hi - lo) * 7) : 3;
		ntp_screen_put(scr, row, x + k, 1, role,
			       glyphs == NTP_GLYPHS_ASCII ? spark_ascii[lvl] : spark_utf8[lvl]);
	}
}

void ntp_render_stage_bar(struct ntp_screen *scr, int row, int x, int width, int stage, double share, int glyphs)
{
	uint8_t role = NTP_ROLE_BAR_HOST_BLOCK + stage;
	double cells = fmax(0, fmin(1, share)) * width;

	if (glyphs == NTP_GLYPHS_UTF8) {
		int eighths_total = (int)lround(cells * 8);

		ntp_screen_fill(scr, row, x, eighths_total / 8, role, "█");
		if (eighths_total % 8)
			ntp_screen_put(scr, row, x + eighths_total / 8, 1, role, eighths[eighths_total % 8]);
	} else {
		ntp_screen_fill(scr, row, x, (int)lround(cells), role,
				glyphs == NTP_GLYPHS_ASCII ? bar_ascii[stage] : bar_mono[stage]);
	}
}

static void stage_bar(struct ntp_screen *scr, int row, const struct ntp_layout *l, int stage, double share,
		      int glyphs)
{
	ntp_render_stage_bar(scr, row, l->bar_x, l->bar_w, stage, share, glyphs);
}

/* v with its mark in at most w characters: two decimals, fewer when the
 * number is wide (a p99 of 100 ms or more, marked), so that the columns
 * after it stay in place and nothing is cut at the screen's edge */
static void fit_num(char *out, size_t n, double v, int w, const char *mark)
{
	for (int prec = 2; prec >= 0; prec--) {
		snprintf(out, n, "%.*f%s", prec, v, mark);
		if ((int)strlen(out) <= w)
			return;
	}
}

static void group_block(struct ntp_screen *scr, int row, const struct ntp_layout *l, const struct ntp_history *h,
			const struct ntp_snapshot *s, const struct ntp_snap_group *g, int selected,
			const struct ntp_top_info *info)
{
	uint8_t role = selected ? NTP_ROLE_SELECTED : NTP_ROLE_GROUP;
	char label[64], rate[32];
	int x, few = !ntp_mean_enough(g->sampled);

	ntp_group_label(g, label, sizeof(label));
	ntp_rate_label(g->rate, rate, sizeof(rate));
	ntp_screen_fill(scr, row, 0, scr->cols, role, " ");
	x = ntp_screen_printf(scr, row, 0, -1, role, "%s %s",
			      selected ? (info->glyphs == NTP_GLYPHS_ASCII ? ">" : "▶") : " ", label);
	x = x + 2 > 24 ? x + 2 : 24;
	/* '?': a p99 of fewer than 100 samples, the largest seen (docs/percentiles.md);
	 * a mean of fewer than a mean needs (docs/stage-model.md, "Few samples") */
	ntp_screen_printf(scr, row, x, l->spark_w ? scr->cols - l->spark_w - 6 - x : -1, role,
			  "mean %.2f%s  p99 %.2f%s us  %s/s", g->e2e_mean_us, few ? "?" : "", g->e2e_p99_us,
			  ntp_pct_enough(g->sampled, 0.99) ? "" : "?", rate);
	if (l->spark_w) {
		ntp_screen_put(scr, row, scr->cols - l->spark_w - 5, -1, role, "p99");
		/* On the selected line's background the spark colour could vanish. */
		sparkline(scr, row, scr->cols - l->spark_w - 1, l->spark_w, h, s, g, info->glyphs,
			  selected ? NTP_ROLE_SELECTED : NTP_ROLE_SPARK);
	}
	for (int st = 0; st < NTP_STAGE_COUNT; st++) {
		const struct ntp_snap_stage *sg = &g->stage[st];
		int r = row + 1 + st;
		char pct[16], mean[32], p99[32], qd[32];

		if (r >= l->status_row)
			break;
		ntp_screen_put(scr, r, l->name_x, l->name_w, NTP_ROLE_LABEL, ntp_ui_stage_label(st, g));
		if (!sg->present) {
			ntp_screen_put(scr, r, l->bar_x, -1, NTP_ROLE_DIM, "-");
			ntp_screen_printf(scr, r, l->num_x, -1, NTP_ROLE_DIM, " %5s  %9s %9s %7s", "-", "-", "-", "-");
			continue;
		}
		stage_bar(scr, r, l, st, sg->share, info->glyphs);
		snprintf(pct, sizeof(pct), "%.0f%%%s", sg->share * 100,
			 st != NTP_STAGE_NETWORK ? " " : g->host_only ? "*" : g->target_only ? "~" : " ");
		/* the QD marked when by Little's law (mean x rate); counted, it is every command's */
		fit_num(mean, sizeof(mean), sg->mean_us, 9, few ? "?" : "");
		fit_num(p99, sizeof(p99), sg->p99_us, 9, ntp_pct_enough(g->sampled, 0.99) ? "" : "?");
		fit_num(qd, sizeof(qd), sg->avg_qd, 7, few && !g->qd_counted ? "?" : "");
		ntp_screen_printf(scr, r, l->num_x, -1, NTP_ROLE_TEXT, " %6s %9s %9s %7s", pct, mean, p99, qd);
	}
}

/* A group the totals count with no record in the interval: one line, what
 * its rate comes from and why it has no block (sparse sampling). */
static void counted_line(struct ntp_screen *scr, int row, const struct ntp_snapshot *s,
			 const struct ntp_snap_group *g)
{
	char label[64], rate[32];
	int x;

	ntp_group_label(g, label, sizeof(label));
	ntp_rate_label(g->rate, rate, sizeof(rate));
	x = ntp_screen_printf(scr, row, 0, -1, NTP_ROLE_GROUP, "  %s", label);
	x = x + 2 > 24 ? x + 2 : 24;
	if (!g->commands)
		ntp_screen_put(scr, row, x, -1, NTP_ROLE_DIM, "no command counted in this interval");
	else if (g->sampled_run)
		ntp_screen_printf(scr, row, x, -1, NTP_ROLE_DIM, "%s cmds/s counted, no sample in this interval", rate);
	else
		ntp_screen_printf(scr, row, x, -1, NTP_ROLE_DIM, "%s cmds/s counted, no command sampled yet (1 in %u)",
				  rate, s->sampling);
}

static void render_main(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_view *v,
			const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_top_info *info)
{
	int idx[NTP_SNAP_MAX_GROUPS], cidx[NTP_SNAP_MAX_GROUPS], n, nc, fit = 0, first = 0, row, host_only = 0,
	    target_only = 0, x, avail, shown;
	char buf[96], rate[32];
	double left_rate = 0;

	ntp_screen_put(scr, 2, l->name_x, -1, NTP_ROLE_LABEL, "stage");
	x = ntp_screen_printf(scr, 2, l->bar_x, l->num_x - l->bar_x, NTP_ROLE_LABEL, "ns %s  io %s",
			      v->ns[0] ? v->ns : "all", v->io < 0 ? "all" : ntp_io_name((uint8_t)v->io));
	/* --exact-queues: "cnt QD", counted in the kernel, not Little's law */
	ntp_screen_printf(scr, 2, l->num_x, -1, NTP_ROLE_LABEL, " %6s %9s %9s %7s", "share", "mean us", "p99 us",
			  s && s->n_groups && s->groups[0].qd_counted ? "cnt QD" : "avg QD");
	if (!s) {
		ntp_screen_printf(scr, l->body_top + 1, 2, -1, NTP_ROLE_DIM,
				  "waiting for the first interval (%g s)...", v->interval_ms / 1000.0);
		return;
	}
	n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	nc = ntp_view_counted(v, s, cidx, NTP_SNAP_MAX_GROUPS);
	if (!n && !nc) {
		ntp_screen_printf(scr, l->body_top + 1, 2, -1, NTP_ROLE_DIM, "no commands in this interval%s",
				  v->ns[0] || v->io >= 0 ? " for this namespace and I/O type (n, t change them)" : "");
		return;
	}
	/* the counted groups' lines below the blocks, in the rows they leave */
	row = l->body_top;
	if (!n)
		goto counted;
	fit = (l->body_rows + 1) / NTP_GROUP_ROWS;
	if (fit < 1)
		fit = 1;
	first = v->selected >= fit ? v->selected - fit + 1 : 0;
	if (first + fit > n)
		fit = n - first;
	row = l->body_top;
	for (int i = first; i < first + fit; i++, row += NTP_GROUP_ROWS) {
		const struct ntp_snap_group *g = &s->groups[idx[i]];

		host_only |= g->host_only;
		target_only |= g->target_only;
		group_block(scr, row, l, h, s, g, i == v->selected, info);
	}
counted:
	/* the counted groups' lines in the rows the blocks leave (the last
	 * body row is the legend's); those that do not fit are said, with
	 * their rate (which the header's includes), on the last row they
	 * could have had, or in the caption when the blocks took every row */
	avail = l->status_row - 1 - row;
	shown = nc <= avail ? nc : avail > 1 ? avail - 1 : 0;
	for (int i = 0; i < shown; i++, row++)
		counted_line(scr, row, s, &s->groups[cidx[i]]);
	for (int i = shown; i < nc; i++)
		left_rate += s->groups[cidx[i]].rate;
	ntp_rate_label(left_rate, rate, sizeof(rate));
	if (shown < nc && avail > 0)
		ntp_screen_printf(scr, row++, 2, -1, NTP_ROLE_DIM, "+%d group%s counted only, %s cmds/s (not shown: too few rows)",
				  nc - shown, nc - shown > 1 ? "s" : "", rate);
	/* the caption: the counted groups left out first (shorter when the
	 * columns are few), then which blocks are shown */
	buf[0] = 0;
	if (shown < nc && avail <= 0) {
		snprintf(buf, sizeof(buf), "  +%d counted only, %s/s", nc - shown, rate);
		if (ntp_utf8_width(buf) > l->num_x - x)
			snprintf(buf, sizeof(buf), "  +%d counted", nc - shown);
	}
	if (n > fit)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%sgroups %d-%d of %d", buf[0] ? ", " : "  ",
			 first + 1, first + fit, n);
	if (buf[0])
		ntp_screen_put(scr, 2, x, l->num_x - x, NTP_ROLE_DIM, buf);
	/* The legend for '*' (docs/stage-model.md, "One side only"), on the last body row if the blocks left it free. */
	if (host_only && row - 1 < l->status_row - 1)
		ntp_screen_put(scr, l->status_row - 1, 2, -1, NTP_ROLE_DIM,
			       "* network and target together: the target's side is not recorded");
	else if (target_only && row - 1 < l->status_row - 1)
		ntp_screen_put(scr, l->status_row - 1, 2, -1, NTP_ROLE_DIM,
			       "~ the target's receive path only: the network and the host are not recorded");
}

static int centre(const struct ntp_screen *scr, const char *text)
{
	int x = (scr->cols - ntp_utf8_width(text)) / 2;

	return x < 0 ? 0 : x;
}

static void render_too_small(struct ntp_screen *scr, const struct ntp_layout *l)
{
	char line1[96], line2[96];
	int r = scr->rows / 2 - 1;

	snprintf(line1, sizeof(line1), "terminal too small: need %dx%d", l->need_cols, l->need_rows);
	snprintf(line2, sizeof(line2), "now %dx%d; q quits", scr->cols, scr->rows);
	if (r < 0)
		r = 0;
	ntp_screen_put(scr, r, centre(scr, line1), -1, NTP_ROLE_WARN, line1);
	ntp_screen_put(scr, r + 1, centre(scr, line2), -1, NTP_ROLE_DIM, line2);
}

void ntp_render(struct ntp_screen *scr, const struct ntp_view *v, const struct ntp_history *h,
		const struct ntp_top_info *info)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	struct ntp_layout l;

	ntp_screen_clear(scr);
	if (ntp_layout(scr->rows, scr->cols, &l)) {
		render_too_small(scr, &l);
		return;
	}
	ntp_render_header(scr, v, s, info);
	if (v->mode == NTP_MODE_HELP)
		ntp_render_help(scr, &l, info);
	else if (v->mode == NTP_MODE_DETAIL)
		ntp_render_detail(scr, &l, v, s, info);
	else if (v->mode == NTP_MODE_WHATIF)
		ntp_render_whatif(scr, &l, v, h, s, info);
	else
		render_main(scr, &l, v, h, s, info);
	ntp_render_status(scr, l.status_row, v, info);
}

int ntp_render_rows_needed(const struct ntp_view *v, const struct ntp_history *h)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	int idx[NTP_SNAP_MAX_GROUPS];
	int n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS), nc = ntp_view_counted(v, s, idx, NTP_SNAP_MAX_GROUPS);
	/* header, the groups, the counted groups' lines, the legend, the status line */
	int rows = 3 + (n || !nc ? (n ? n : 1) * NTP_GROUP_ROWS : 0) + nc + 1 + 1;

	return rows < NTP_MIN_ROWS ? NTP_MIN_ROWS : rows;
}
