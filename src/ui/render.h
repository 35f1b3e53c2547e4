/* SPDX-License-Identifier: GPL-2.0 */
/*
 * render.h - ntprof-top's screens, rendered purely from snapshots and the
 * view state into a struct ntp_screen: the main screen (header, one block
 * per group with the five stage bars, a sparkline of its e2e p99, a status
 * line), the detail view (the component table of docs/stage-model.md), the help screen (from
 * the key table) and the "terminal too small" screen.
 */
#ifndef NTP_UI_RENDER_H
#define NTP_UI_RENDER_H

#include <stdint.h>
#include "../core/model/model.h"
#include "../core/render/report.h"
#include "keys.h"
#include "screen.h"
#include "../core/model/whatif.h"

enum ntp_glyphs {
	NTP_GLYPHS_UTF8 = 0,	/* colour: stages differ by colour, bars with eighths */
	NTP_GLYPHS_MONO,	/* UTF-8, no colour: stages differ by shade */
	NTP_GLYPHS_ASCII,	/* not a UTF-8 terminal, or --ascii */
};

/* What the header and status line say beyond the snapshot. */
struct ntp_top_info {
	const char *host;
	const char *source;		/* "live", "replay run.ntp at 4x" */
	int recording;
	const char *rec_path;
	uint64_t rec_records;
	int glyphs;			/* enum ntp_glyphs */
	const char *hint;		/* status line when the view has no message; NULL: the key hint */
	/* The what-if view: what the data cannot show (the host's tags from
	 * sysfs on a live host); NULL: nothing known. */
	const struct ntp_wi_params *wi;
};

/* The intervals kept, oldest first. */
struct ntp_history {
	const struct ntp_snapshot *const *snap;
	int n;
};

#define NTP_MIN_COLS 64
#define NTP_MIN_ROWS 12
#define NTP_GROUP_ROWS 7	/* title, five stages, a blank line */

struct ntp_layout {
	int too_small;
	int need_rows, need_cols;
	int body_top, body_rows;	/* between the header and the status line */
	int status_row;
	int name_x, name_w;		/* stage rows: name, bar, numbers */
	int bar_x, bar_w;
	int num_x;
	int spark_w;
};

/* 0 and *out filled, or -1 with out->too_small and need_* set. Never fails on tiny sizes. */
int ntp_layout(int rows, int cols, struct ntp_layout *out);

/* The snapshot the view shows: the newest, or the paused one (nearest kept). NULL if none. */
const struct ntp_snapshot *ntp_history_shown(const struct ntp_history *h, const struct ntp_view *v);
/* Indices of the groups the view's filters leave, in snapshot order: those
 * with records in the interval (a block each, selectable). */
int ntp_view_groups(const struct ntp_view *v, const struct ntp_snapshot *s, int *idx, int max);
/* A group with no record in the interval, only the totals' count of its
 * commands (sparse sampling: none sampled yet, or none in the interval). */
int ntp_group_counted_only(const struct ntp_snap_group *g);
/* The same for such groups (a line each, below the blocks). */
int ntp_view_counted(const struct ntp_view *v, const struct ntp_snapshot *s, int *idx, int max);
/* The commands/s of every group the view's filters leave (the header's). */
double ntp_view_rate(const struct ntp_view *v, const struct ntp_snapshot *s);
/* Distinct namespaces of a snapshot, sorted. */
int ntp_snapshot_namespaces(const struct ntp_snapshot *s, char (*out)[NTP_DEV_LEN], int max);

/* Renders the view's screen at the screen's size (too-small screen included). */
void ntp_render(struct ntp_screen *scr, const struct ntp_view *v, const struct ntp_history *h,
		const struct ntp_top_info *info);
/* Rows the main screen needs to show every visible group (batch mode). */
int ntp_render_rows_needed(const struct ntp_view *v, const struct ntp_history *h);

/* Text helpers shared with batch mode and the JSON snapshot. */
/* "host block"; the network of a host-only group "net+target*", of a
 * target-only group "target recv~" (its receive path only) */
const char *ntp_ui_stage_label(int stage, const struct ntp_snap_group *g);

/* Internal: the pieces render.c assembles. */
void ntp_render_header(struct ntp_screen *scr, const struct ntp_view *v, const struct ntp_snapshot *s,
		       const struct ntp_top_info *info);
void ntp_render_status(struct ntp_screen *scr, int row, const struct ntp_view *v, const struct ntp_top_info *info);
void ntp_render_detail(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_view *v,
		       const struct ntp_snapshot *s, const struct ntp_top_info *info);
void ntp_render_help(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_top_info *info);
void ntp_render_whatif(struct ntp_screen *scr, const struct ntp_layout *l, const struct ntp_view *v,
		       const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_top_info *info);
/* A stage's bar of share (0..1) in width cells from column x. */
void ntp_render_stage_bar(struct ntp_screen *scr, int row, int x, int width, int stage, double share, int glyphs);
/* The what-if model of group g of the shown interval s: the history's
 * earlier intervals give the load levels (core/whatif.h). */
struct ntp_wi_model;
void ntp_whatif_model(const struct ntp_history *h, const struct ntp_snapshot *s, const struct ntp_snap_group *g,
		      const struct ntp_wi_params *p, struct ntp_wi_model *m);

#endif
