/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - pure renderers of snapshots (model.h) to a FILE *: the report
 * (`ntprof report`, the final report of `ntprof record`; docs/stage-model.md),
 * the per-interval line (`ntprof record -i`; docs/recording.md), `ntprof compare`, and their
 * JSON (schema in docs/json-schema.md). No clock, no file reading: golden
 * tests feed them snapshots.
 */
#ifndef NTP_REPORT_H
#define NTP_REPORT_H

#include <stdio.h>
#include <json-c/json.h>
#include "../model/hist.h"	/* ntp_pct_enough */
#include "../model/model.h"

struct ntp_hostq;	/* ntpfile.h */

#define NTP_REPORT_MAX_NOTES 16
#define NTP_REPORT_MAX_HOSTS 8		/* hosts named when several (ntp_report_meta.hosts) */
#define NTP_REPORT_NOTE_LEN (4096 + 256)	/* a path (PATH_MAX) and why: never cut */

/* What the snapshot does not know: where it was recorded, what to remark. */
struct ntp_report_meta {
	const char *host_name, *host_kernel;	/* the host's machine (NULL: none recorded) */
	const char *target_name, *target_kernel; /* the target's, when another machine (else NULL) */
	int detail;				/* --detail: the component table of docs/stage-model.md */
	int no_duration_line;			/* leave out "=== D s ... ===" */
	unsigned n_notes;
	/* one line each, e.g. a file cut short */
	char notes[NTP_REPORT_MAX_NOTES][NTP_REPORT_NOTE_LEN];
	/* "" or the first damaged input and why: a block failed its CRC (report
	 * and compare then exit 1 after the report; a file cut short does not) */
	char damaged[NTP_REPORT_NOTE_LEN];
	/* Extension (whatif): the host's queues per namespace from the host
	 * files' headers (format 1.2, docs/ntp-format.md); NULL: none */
	const struct ntp_hostq *hostq;
	unsigned n_hostq;
	/* Extension (hosts): the host-side machines, distinct hostnames in
	 * the files' order: how many, and the first NTP_REPORT_MAX_HOSTS of
	 * them (0 or 1: host_name alone); several are named in the text's
	 * "recorded on" line and a note of the JSON */
	unsigned n_hosts;
	const char *hosts[NTP_REPORT_MAX_HOSTS];
};

/* An empty meta: every field zero, no note, nothing damaged. */
void ntp_report_meta_init(struct ntp_report_meta *m);

/* Adds a note line (printed as "note: ..."); silently ignores more than the maximum. */
void ntp_report_note(struct ntp_report_meta *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The notes the snapshot itself calls for, as text and JSON print them
 * (memory that ran out: docs/reports.md): note i into buf (len bytes);
 * 0 when there is no note i. */
int ntp_snapshot_note(const struct ntp_snapshot *s, unsigned i, char *buf, size_t len);

/* A group whose stage QDs by Little's law add up to more commands than the
 * host's queues hold (tags x hardware queues of its namespace, from the
 * recording's header: meta->hostq; one host only): 1 and the note into buf,
 * else 0 (docs/stage-model.md, "Few samples"). */
int ntp_group_qd_note(const struct ntp_report_meta *m, const struct ntp_snap_group *g, char *buf, size_t len);

/* The whole report of one snapshot (usually one interval over the whole run). */
void ntp_report_print(FILE *f, const struct ntp_snapshot *s, const struct ntp_report_meta *m);

/* The per-interval lines (docs/recording.md): the two header rows, then one line per group
 * with records in the interval ('*': the host's network column holds network
 * and target together). */
void ntp_interval_header(FILE *f);
/* Extension (exactq): with counted_qd, a last column "QD (counted)": the
 * group's counted occupancy, all stages together (--exact-queues). */
void ntp_interval_header_qd(FILE *f, int counted_qd);
void ntp_interval_lines(FILE *f, const struct ntp_snapshot *s, double elapsed_s);

/* `ntprof compare`: groups of A and B side by side, per stage the change, a verdict. */
void ntp_compare_print(FILE *f, const struct ntp_snapshot *a, const struct ntp_snapshot *b,
		       const char *name_a, const char *name_b);

/* JSON documents (docs/json-schema.md). The caller json_object_put()s them. */
json_object *ntp_report_json(const struct ntp_snapshot *s, const struct ntp_report_meta *m);
json_object *ntp_compare_json(const struct ntp_snapshot *a, const struct ntp_snapshot *b,
			      const char *name_a, const char *name_b);

/* Labels shared by every front end: "4KiB", "read 4KiB nvme0n1", "13.3k". */
void ntp_size_label(uint32_t bytes, char *buf, size_t len);
void ntp_group_label(const struct ntp_snap_group *g, char *buf, size_t len);
void ntp_rate_label(double per_s, char *buf, size_t len);
/* Enough samples for a group's means: the stage means, their shares, the
 * stage QDs by Little's law (mean x the counted rate) and the largest stage
 * rest on the group's sampled commands. From fewer than
 * NTP_MEAN_MIN_SAMPLES a mean's relative standard error (its coefficient of
 * variation over sqrt(n)) is above 10 % for a stage time as variable as an
 * exponential one, and the reports mark them as they mark a p99
 * (docs/stage-model.md, "Few samples"). */
#define NTP_MEAN_MIN_SAMPLES 100
int ntp_mean_enough(uint64_t n);
/* "p99 80.73" or "p99 80.73 (n=21: too few)" */
void ntp_pct_label(char *buf, size_t len, const char *name, double us, uint64_t n, double q);
const char *ntp_io_name(uint8_t io);
/* The rows of a group's stage table: a host-only group shows its receive path
 * and "network and target (not recorded)" apart (docs/stage-model.md). */
/* What part of its stage a row is: the stage's role, whatever its name on
 * this transport or implementation (compare pairs rows by it). */
enum ntp_row_part {
	NTP_PART_WHOLE = 0,
	NTP_PART_HOST_RECV,		/* host-only: the host's receive path */
	NTP_PART_NET_AND_TARGET,	/* host-only: network and target (not recorded) */
	NTP_PART_TARGET_RECV,		/* target-only: the target's receive path */
};
struct ntp_stage_row {
	const char *name;
	double mean_us, share, avg_qd;
	int stage;				/* enum ntp_stage it belongs to */
	int part;				/* enum ntp_row_part */
};
unsigned ntp_stage_rows(const struct ntp_snapshot *s, const struct ntp_snap_group *g,
			struct ntp_stage_row *rows, unsigned max);

#endif
