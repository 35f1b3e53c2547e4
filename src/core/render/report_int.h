/* SPDX-License-Identifier: GPL-2.0 */
/* report_int.h - what report_compare.c and report_whatif.c share with report_json.c. */
#ifndef NTP_REPORT_INT_H
#define NTP_REPORT_INT_H

#include "report.h"

/* One stage row of a compare: present in A, in B, or both; A's row and
 * B's are of the same role (stage and part), their names may differ (NVMe/TCP
 * against NVMe/RDMA, Linux against SPDK). */
struct ntp_compare_row {
	const char *name;		/* A's name, else B's */
	const char *name_b;		/* B's name when in B */
	int stage;
	int in_a, in_b;
	struct ntp_stage_row a, b;
};

/* partner[i]: the group of B compared with A's group i, or NULL (only in A).
 * Each group of B is the partner of one group of A at most. */
void ntp_compare_pairs(const struct ntp_snapshot *a, const struct ntp_snapshot *b,
		       const struct ntp_snap_group **partner);
/* Is gb some group's partner (else it is only in B)? */
int ntp_compare_claimed(const struct ntp_snapshot *a, const struct ntp_snap_group *const *partner,
			const struct ntp_snap_group *gb);
unsigned ntp_compare_rows(const struct ntp_snapshot *a, const struct ntp_snap_group *ga,
			  const struct ntp_snapshot *b, const struct ntp_snap_group *gb,
			  struct ntp_compare_row *out, unsigned max);
/* Index of the row whose mean grew most from A to B (in both), or -1. */
int ntp_compare_verdict(const struct ntp_compare_row *rows, unsigned n);

/* What the verdict says (docs/reports.md, "The verdict"). */
enum ntp_verdict_kind {
	NTP_VERDICT_UNJUDGED = 0,	/* the sides differ: of the stages both record only */
	NTP_VERDICT_STAGE,		/* stages stand out: judge.apart (judge.out the first) */
	NTP_VERDICT_UNIFORM,		/* none does: every stage grew about e2e_ratio */
	NTP_VERDICT_NO_GROWTH,		/* the latency did not grow beyond its sampling noise */
	NTP_VERDICT_TOO_FEW,		/* A or B has fewer than NTP_MEAN_MIN_SAMPLES commands */
	NTP_VERDICT_NO_FACTOR,		/* the other stages hold too little of the latency */
};
#define NTP_VERDICT_MAX_APART 4
struct ntp_compare_judge {
	int kind;			/* enum ntp_verdict_kind */
	int grew;			/* ntp_compare_verdict: the row grown most, or -1 */
	int out;			/* the row grown most beyond the other stages' factor,
					 * beyond noise, or -1 (STAGE: apart[0]) */
	double e2e_ratio;		/* B's end-to-end mean / A's (0: A's is 0) */
	double others_ratio;		/* out: the other rows' B/A (STAGE: common_ratio) */
	double excess_us;		/* out: its growth beyond the others' factor */
	double noise_us;		/* out: two standard errors of excess_us */
	/* STAGE: the rows set apart from the common factor, largest excess first */
	unsigned n_apart;
	int apart[NTP_VERDICT_MAX_APART];
	double apart_excess_us[NTP_VERDICT_MAX_APART];
	double apart_noise_us[NTP_VERDICT_MAX_APART];
	double apart_sum_us;		/* their excesses summed */
	double common_ratio;		/* B/A of the rows not set apart */
};
void ntp_compare_judge(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb,
		       const struct ntp_compare_row *rows, unsigned n, int differ, struct ntp_compare_judge *j);
/* A's group and B's of different sides (joined, host-only, target-only):
 * 1 and a one-line note into buf, *e2e_same set when their end to end is
 * still the same measure (the host's, in both); 0 when of the same sides
 * (buf "", *e2e_same 1). The verdict is then of the stages both record. */
int ntp_compare_sides(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb, char *buf, size_t len,
		      int *e2e_same);
/* 1 when half or more of g's sampled commands have a host record timed from
 * the bio's submission (H_BIO_SUBMIT: end to end and the host block layer
 * start there, holding the wait for a tag; docs/stage-model.md), the rule of
 * the report's tag note. */
int ntp_group_from_bio(const struct ntp_snap_group *g);
/* A's group and B's of which one starts at the bio's submission and the
 * other at the request's allocation (ntp_group_from_bio): 1 and a one-line
 * note into buf; 0 (buf "") when alike. */
int ntp_compare_starts(const struct ntp_snap_group *ga, const struct ntp_snap_group *gb, char *buf, size_t len);

/* Several host machines (m->n_hosts > 1): "63 hosts (synth-host1, ...,
 * synth-host8 and 55 more)" into buf, names as they are (the text escapes
 * them itself: esc 1); 0 when one host or none. */
int ntp_report_hosts(const struct ntp_report_meta *m, int esc, char *buf, size_t len);

/* A group's identity in the JSON: label, io, size, dev (report_json.c). */
struct json_object;
struct json_object *ntp_json_group_ident(const struct ntp_snap_group *g);

#endif
