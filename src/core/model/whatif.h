/* SPDX-License-Identifier: GPL-2.0 */
/*
 * whatif.h - what the measured stages of a group predict at another queue
 * depth. The workload is a closed loop of N commands (an application that
 * keeps N in flight); the five stages are the stations of a closed queueing
 * network, each either a delay (no contention) or a queue with c servers,
 * solved by exact mean value analysis. Method, choices and limits:
 * docs/what-if.md.
 *
 * Pure: no clock, no sysfs. The caller gives the host's tag limit when it
 * knows it (sysfs on a live host, the header of a recording made since
 * format 1.2: docs/ntp-format.md, src/collector/hostq.h).
 */
#ifndef NTP_WHATIF_H
#define NTP_WHATIF_H

#include "model.h"

#define NTP_WI_MAX_QD 1024
#define NTP_WI_MAX_FIT 64		/* intervals at other loads used to estimate parallelism */

struct ntp_wi_shown;

/* ---- the solver ---- */
struct ntp_mva_station {
	double demand;			/* mean service time per visit (any unit, the same for all) */
	int servers;			/* 0: a delay (infinite servers); c >= 1: a queue with c servers */
};

struct ntp_mva_result {
	double x;			/* throughput, commands per unit of time */
	double r[NTP_STAGE_COUNT];	/* residence time per station */
	double q[NTP_STAGE_COUNT];	/* mean commands at each station */
	double r_total;			/* sum of r (think time left out) */
};

/* Exact MVA of a closed single-class network: k <= NTP_STAGE_COUNT stations
 * visited once each, think time z (a delay outside the stations), population
 * n >= 1 (n <= NTP_WI_MAX_QD). Multi-server queues by the load-dependent
 * recursion on the marginal probabilities of their first c-1 states
 * (docs/what-if.md). Returns 0, or -1 on bad arguments. */
int ntp_mva_solve(const struct ntp_mva_station *st, int k, double z, int n, struct ntp_mva_result *out);

/* ---- the model of one group ---- */

/* Where a stage's number of servers came from. */
enum ntp_wi_source {
	NTP_WI_SRC_ONE_LOAD = 0,	/* one load level only: no contention can be seen, taken as a delay */
	NTP_WI_SRC_NO_CONTENTION,	/* intervals at other loads showed no waiting: a delay */
	NTP_WI_SRC_FITTED,		/* c fitted to the intervals at other loads */
	NTP_WI_SRC_GIVEN,		/* given by the user */
	NTP_WI_SRC_POOR_FIT,		/* the best c fitted explained the loads poorly
					 * (rms error above NTP_WI_FIT_MAX_ERR): a delay, as for one load */
};
/* JSON: "one_load", "no_contention", "fitted", "given", "fit_rejected" */
const char *ntp_wi_source_key(enum ntp_wi_source s);

/* A fitted c whose rms relative error over the other load levels is above
 * this is rejected (docs/what-if.md). */
#define NTP_WI_FIT_MAX_ERR 0.25
/* Load levels whose rate x mean differ by less than this ratio are one level
 * (the noise of rate x mean between intervals of one load). */
#define NTP_WI_LEVEL_RATIO 1.25
/* The calibrated network at the run's QD must give back every stage's mean
 * and the IOPS within this (relative); else no prediction. */
#define NTP_WI_CALIB_TOL 0.01

/* Parameters from outside the measured data. */
struct ntp_wi_params {
	int servers[NTP_STAGE_COUNT];	/* given: > 0 a queue with that many servers, -1 a delay, 0 not given */
	uint32_t tags;			/* host's tags (commands in flight) in one hardware queue; 0: unknown */
	uint32_t hw_queues;		/* the host's hardware queues (0: unknown); shown, not modelled */
	const char *tags_from;		/* where tags came from: "sysfs", "recording", "--what-if-tags", NULL */
	/* The QD each run had, when known (0: inferred by Little's law, which
	 * reads low when the application's own time per command is not small
	 * beside the latency): the base, and the fit groups in their order. */
	uint32_t base_qd;
	uint32_t fit_qd[NTP_WI_MAX_FIT];
	/* ntprof-top: the view's last fit, made off the UI thread
	 * (whatif_work.h); NULL: the view fits by itself */
	const struct ntp_wi_shown *shown;
};

struct ntp_wi_station {
	int present;
	int servers;			/* 0: delay */
	enum ntp_wi_source source;
	double service_us;		/* calibrated service time (a delay: its time) */
	double measured_us;		/* the base interval's mean (the host block layer's
					 * without the tag wait: ntp_wi_model.tag_wait_us) */
	double excess_p99_us;		/* base p99 - mean (the tail to scale) */
	double fit_max_qd;		/* NO_CONTENTION/FITTED: the highest load level seen (Little QD) */
	double fit_err;			/* FITTED, POOR_FIT: rms relative error of the best fit */
	int fit_servers;		/* POOR_FIT: the c that fitted best (rejected) */
};

struct ntp_wi_model {
	int ok;				/* 0: no prediction, why says why */
	char why[128];
	uint32_t base_qd;		/* the closed-loop QD the base interval ran at (Little, rounded) */
	int base_qd_given;		/* ... or as given (ntp_wi_params.base_qd) */
	double base_qd_little;		/* rate x e2e mean, unrounded */
	double think_us;		/* time outside the host's block layer per command */
	/* records from the bio's submission (model.h tag_wait_sum_ns): the
	 * wait for a tag per command, out of the host block layer's station;
	 * rate x the mean without it (the commands holding a tag); whether
	 * the wait is the tags' (held full: base_qd counts the waiting ones
	 * and the stages are calibrated on `tags` customers), else the model
	 * is the commands holding a tag's (docs/what-if.md) */
	double tag_wait_us, held_little;
	int tag_bound;
	double base_iops, base_mean_us, base_p99_us;
	int n_levels;			/* load levels (distinct QDs) behind the parameters */
	struct ntp_wi_station st[NTP_STAGE_COUNT];
	uint32_t tags, hw_queues;
	const char *tags_from;
	/* The asymptotes: the stage that saturates first and the QD where it does. */
	int bottleneck;			/* enum ntp_stage, -1: every stage a delay */
	double max_iops;		/* its capacity: servers / service time (0: none) */
	double knee_qd;			/* (sum of service times + think) x max_iops (0: none) */
	int tags_first;			/* the host's tags run out below the knee */
	/* ntprof-top: intervals kept but left out of the fit (too few samples,
	 * a sampling change: ntp_wi_fit_usable); set by the caller */
	int n_left_out;
};

struct ntp_wi_pred {
	uint32_t qd;			/* asked for */
	uint32_t qd_in_flight;		/* past the host: min(qd, tags) */
	double iops, mean_us, p99_us;
	double stage_us[NTP_STAGE_COUNT], stage_qd[NTP_STAGE_COUNT];
	double util[NTP_STAGE_COUNT];	/* busy servers / servers (queues), 0 for delays */
	double tag_wait_us;		/* waiting for a tag in the host's block layer (in stage_us[HOST_BLOCK]) */
	int saturated;			/* enum ntp_stage whose utilization passed 90 %, -1: none */
};

/* Builds the model from the base interval's group and, optionally, the same
 * group in intervals at other loads (fit, nfit; NULL entries are skipped).
 * Returns 0 (m->ok says whether a prediction is possible). */
int ntp_wi_build(const struct ntp_snap_group *base, const struct ntp_snap_group *const *fit, int nfit,
		 const struct ntp_wi_params *p, struct ntp_wi_model *m);
/* Whether interval o's group og is a load level to fit on (ntprof-top's
 * history): not with fewer samples than a p99 needs (the screen's '?',
 * hist.h ntp_pct_enough), nor when the sampling changed during it (its
 * sampling_from is set, or, for a recording without that field, its
 * predecessor prev, when known, had another: the estimated rate mixes the
 * two). 1 or 0. */
int ntp_wi_fit_usable(const struct ntp_snapshot *prev, const struct ntp_snapshot *o,
		      const struct ntp_snap_group *og);
/* The prediction at qd (1 .. NTP_WI_MAX_QD). 0, or -1 if !m->ok or qd out of range. */
int ntp_wi_predict(const struct ntp_wi_model *m, uint32_t qd, struct ntp_wi_pred *out);
/* Parses "4,8,16" (each 1 .. NTP_WI_MAX_QD) into qd[], at most max; returns
 * the count, or -1 with err filled. */
int ntp_wi_parse_qds(const char *s, uint32_t *qd, int max, char *err, size_t errlen);
/* Parses "storage=4,network=delay" into p->servers; 0, or -1 with err filled. */
int ntp_wi_parse_servers(const char *s, struct ntp_wi_params *p, char *err, size_t errlen);
/* ---- ntprof-top: what a fit is made from ---- */

/* The base interval's group, copies of the same group in the intervals at
 * other loads (the history drops what it frees), and the parameters. */
struct ntp_wi_input {
	uint64_t index;			/* the base interval */
	struct ntp_snap_group base;
	struct ntp_snap_group fit[NTP_WI_MAX_FIT];
	int n_fit;
	int n_left_out;			/* intervals kept but not usable (ntp_wi_fit_usable) */
	struct ntp_wi_params p;		/* shown ignored */
};
/* A load level's data (its rate, end-to-end and stage means), or the base
 * interval's own (those and its p99s), that moved
 * by less than this share is the same input: the noise the fit itself
 * reads as no growth (docs/what-if.md). */
#define NTP_WI_REFIT_TOL 0.10
/* Whether a fit of b would be a fit of a: the same group, parameters and
 * base QD, the base interval's own data (rate, end-to-end and stage means
 * and p99s: the calibration's) within NTP_WI_REFIT_TOL, the same load
 * levels (the intervals merged as ntp_wi_build merges them: their count,
 * QDs and whether given) and each level's data within NTP_WI_REFIT_TOL.
 * One more interval of a level already seen is not a new input; a new
 * level, a level evicted, a level's QD or data moved, the base's own data
 * moved, another group or parameter is. 1 or 0. */
int ntp_wi_input_same(const struct ntp_wi_input *a, const struct ntp_wi_input *b);
/* Group g's load levels in the history snap[0..n-1] (oldest first) before
 * interval s: the same group in the intervals kept before it that are
 * levels to fit on (ntp_wi_fit_usable), the newest first, at most
 * NTP_WI_MAX_FIT; *left_out: those kept that are not. Returns the count. */
int ntp_wi_fit_groups(const struct ntp_snapshot *const *snap, int n, const struct ntp_snapshot *s,
		      const struct ntp_snap_group *g, const struct ntp_snap_group **fit, int *left_out);
/* The input of group g of interval s over that history, parameters p. */
void ntp_wi_input_of(const struct ntp_snapshot *const *snap, int n, const struct ntp_snapshot *s,
		     const struct ntp_snap_group *g, const struct ntp_wi_params *p, struct ntp_wi_input *in);
/* ntp_wi_build of an input, n_left_out set. */
void ntp_wi_build_input(const struct ntp_wi_input *in, struct ntp_wi_model *m);

/* The QD steps of ntprof-top's what-if view: 1, 2, 4 ... NTP_WI_MAX_QD. */
uint32_t ntp_wi_qd_step(uint32_t qd, int dir);

#endif
