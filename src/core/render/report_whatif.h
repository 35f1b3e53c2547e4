/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report_whatif.h - `ntprof report --what-if-qd`: each group's prediction at
 * other queue depths (whatif.h) as text and as the "what_if" member of the
 * report's JSON (docs/json-schema.md, docs/what-if.md).
 */
#ifndef NTP_REPORT_WHATIF_H
#define NTP_REPORT_WHATIF_H

#include <stdio.h>
#include <json-c/json.h>
#include "../model/model.h"
#include "../model/whatif.h"

#define NTP_WI_MAX_ASKED 32

struct ntp_wi_request {
	uint32_t qd[NTP_WI_MAX_ASKED];
	int n_qd;
	struct ntp_wi_params params;
	/* the same workload recorded at other loads (--what-if-fit): whole-run
	 * snapshots whose groups, matched by I/O type, size and device, give
	 * the load levels the parallelism is fitted on */
	const struct ntp_snapshot *const *fit;
	int n_fit;
	uint32_t fit_qd[NTP_WI_MAX_FIT];	/* the QD each ran at (FILE@QD), 0: inferred */
	/* ntprof-top's S: fit holds the history's intervals before the shown
	 * one, so each group's are left out as the view leaves them out
	 * (ntp_wi_fit_usable: too few samples, a sampling change) */
	int fit_is_history;
	/* the host's queues from the recording (ntp_report_meta); they give
	 * a group's tags unless params.tags does (--what-if-tags) */
	const struct ntp_hostq *hostq;
	unsigned n_hostq;
};

/* The group of s with g's I/O type, size and device, or NULL. */
const struct ntp_snap_group *ntp_snapshot_find_group(const struct ntp_snapshot *s,
						     const struct ntp_snap_group *g);
/* The model of group g of s, with the request's fit snapshots and parameters. */
void ntp_wi_build_group(const struct ntp_snap_group *g, const struct ntp_wi_request *rq,
			struct ntp_wi_model *m);
/* The what-if's rate of a group (docs/what-if.md): the share of the run
 * its commands came in (the span of its sampled commands, as model.c
 * scales it: busy_rate) when that is shorter than the run by more than
 * NTP_WI_BUSY_SIGMAS standard deviations of the span; else 0: the run's
 * rate, the kernel's count when the file has it. */
#define NTP_WI_BUSY_SIGMAS 3.0
double ntp_wi_busy_share(const struct ntp_snap_group *g);
/* "delay (no contention seen up to QD 2)", "4 servers (fitted, 3 load levels)" */
void ntp_wi_station_label(const struct ntp_wi_model *m, int stage, char *buf, size_t len);

void ntp_whatif_print(FILE *f, const struct ntp_snapshot *s, const struct ntp_wi_request *rq);
json_object *ntp_whatif_json(const struct ntp_snapshot *s, const struct ntp_wi_request *rq);

#endif
