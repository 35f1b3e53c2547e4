/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics.h - snapshots (model.h) as a Prometheus text file for
 * node_exporter's textfile collector: `ntprof record --metrics FILE`
 * (docs/recording.md, "Prometheus"). The renderer is pure; the counters
 * (_total) are cumulative over the run, so it keeps them in a state the
 * caller owns, one per output file.
 */
#ifndef NTP_METRICS_H
#define NTP_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../model/model.h"

#define NTP_METRICS_MAX_GROUPS 256

struct ntp_metrics_group {
	uint8_t io;
	uint32_t len;
	char dev[NTP_DEV_LEN];
	int host_only;
	uint64_t sampled;		/* records in the statistics, since the start */
	uint64_t commands;		/* exact kernel count, since the start */
	int counted;			/* commands is known (the kernel counted) */
};

struct ntp_metrics_state {
	uint32_t n;
	struct ntp_metrics_group g[NTP_METRICS_MAX_GROUPS];
	uint64_t dropped_groups;	/* groups beyond NTP_METRICS_MAX_GROUPS */
};

void ntp_metrics_init(struct ntp_metrics_state *st);
/* Adds one interval's counts (s->groups[].sampled, .commands) to the state's
 * cumulative counters. Call once per closed interval. */
void ntp_metrics_add(struct ntp_metrics_state *st, const struct ntp_snapshot *s);
/* The text: the last interval's gauges (s), the state's counters. 0, or -1
 * with errno when writing to f failed. */
int ntp_metrics_render(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *s);
/* ntp_metrics_add, then render into a temporary file in path's directory and
 * rename it over path, so a reader never sees a half-written file. 0, or -1
 * with a one-line reason naming the file in err. */
int ntp_metrics_write(const char *path, struct ntp_metrics_state *st, const struct ntp_snapshot *s,
		      char *err, size_t errlen);
/* At the end of the run: the counters alone (the state's, and run's
 * records, the whole run's snapshot), the gauges dropped, so that a
 * collector reading the file after the recorder is gone exports no
 * interval's values as if they were current (docs/recording.md). Rendered
 * and written as the above; nothing is added to st. */
int ntp_metrics_render_end(FILE *f, const struct ntp_metrics_state *st, const struct ntp_snapshot *run);
int ntp_metrics_write_end(const char *path, const struct ntp_metrics_state *st, const struct ntp_snapshot *run,
			  char *err, size_t errlen);

#endif
