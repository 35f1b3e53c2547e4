/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pump.h - the one driver every front end runs: records, totals and lost
 * counts from a source into the model, teed to sinks; intervals closed on one
 * grid of the data's clock; each closed interval handed to the sinks.
 *
 *   source --records/totals/lost--> pump --> model (model.h)
 *                                        \-> sinks: .ntp writer (record),
 *                                            interval line, outbox, ...
 *
 * Sources: the live collector (src/collector/pump_live.c), one or several
 * .ntp files joined (join.h: ntp_files_source), a paced replay (ntprof-top
 * wraps the files source). `ntprof record`, ntprof-top and `ntprof report`
 * differ only in the source and the sinks they plug in.
 *
 * Time is data: the pump never reads a clock. A source says how far its data
 * reached (the live source reads CLOCK_MONOTONIC, the clock of the records;
 * a replay says where its pace stands), and the pump closes every interval
 * whose boundary that passed. The grid is origin + k x interval; changing the
 * interval starts a new grid at the last close.
 */
#ifndef NTP_PUMP_H
#define NTP_PUMP_H

#include <stddef.h>
#include <stdint.h>
#include "../model/model.h"
#include "../store/ntpfile.h"

/* A sink: any callback may be NULL. A negative return stops the pump with
 * that error (ntp_pump_run returns it); interval() returning 1 stops it
 * cleanly (ntprof-top -n N). */
struct ntp_pump_sink {
	int (*record)(void *ctx, const struct ntp_record *r);	/* every record, as fed */
	int (*totals)(void *ctx, const struct ntp_total *t, size_t n, uint64_t as_of_ns);
	int (*interval)(void *ctx, const struct ntp_snapshot *s);	/* one closed interval */
	int (*tick)(void *ctx, uint64_t now_ns);		/* the data clock moved (flushes) */
	void *ctx;
	/* the source's cumulative count of records lost before they reached it
	 * grew (ntp_pump_lost), as of the data time reached
	 * (after ctx: sinks listed by position stay as they were) */
	int (*lost)(void *ctx, uint64_t cumulative, uint64_t now_ns);
};

struct ntp_pump;

/* A source: pull() delivers through ntp_pump_record/_totals/_lost what it
 * has up to until_ns on the data clock, and sets *reached to the time up to
 * which everything was delivered (short of until_ns when a live poll timed
 * out or a paced replay waits; past it when a live poll ran over). Returns 1
 * while more may come, 0 when the source has ended (*reached: its end), or
 * -errno. */
struct ntp_pump_source {
	int (*pull)(void *ctx, struct ntp_pump *p, uint64_t until_ns, uint64_t *reached);
	void *ctx;
};

#define NTP_PUMP_MAX_SINKS 4
#define NTP_FILTER_MAX_SIZES 16

/* Which commands a replay keeps: what --session, --io-type and --size select
 * live in the kernel, applied to the records and totals rows of files. */
struct ntp_record_filter {
	char session[NTP_DEV_LEN];	/* host side's namespace, "" all; a path nvmeXcYnZ is nvmeXnY */
	int io_type;			/* -1 all, else enum ntp_io_type */
	uint32_t sizes[NTP_FILTER_MAX_SIZES];
	int n_sizes;			/* 0: all */
};
/* 1 when the filter keeps a command of this side, I/O type, length and device. */
int ntp_filter_keeps(const struct ntp_record_filter *f, uint8_t side, uint8_t io, uint32_t len, const char *dev);

struct ntp_pump_config {
	struct ntp_model *model;	/* fed, not owned */
	uint64_t start_ns;		/* the grid's origin and the first interval's start
					 * (0: the model's, its first record's time) */
	uint64_t interval_ns;		/* 0: no grid, one interval closed by ntp_pump_finish */
	uint64_t end_ns;		/* 0: none; else data past it is not waited for (-d) */
	const struct ntp_record_filter *filter;	/* NULL: every record (copied) */
};

struct ntp_pump *ntp_pump_new(const struct ntp_pump_config *cfg);
void ntp_pump_free(struct ntp_pump *p);
/* 0, or -1 when NTP_PUMP_MAX_SINKS are in. */
int ntp_pump_add_sink(struct ntp_pump *p, const struct ntp_pump_sink *s);

/* ---- for sources ---- */
void ntp_pump_record(struct ntp_pump *p, const struct ntp_record *r);
/* The model, when ntp_pump_record(p, r) is ntp_model_ingest(model, r) (no
 * filter, no sink of records: a report), so a source feeding one record at
 * a time may call it straight; NULL otherwise. A sink added later changes
 * it: ask again at each pull. */
struct ntp_model *ntp_pump_plain_model(const struct ntp_pump *p);
/* Whether a sink takes the records themselves (a recording written from a
 * replay): it is handed them in the order fed. Ask again at each pull. */
int ntp_pump_record_sinks(const struct ntp_pump *p);
/* ntp_pump_record of r[0..n), in order (a block of a file). */
void ntp_pump_records(struct ntp_pump *p, const struct ntp_record *r, size_t n);
/* Cumulative exact counters as of as_of_ns. */
void ntp_pump_totals(struct ntp_pump *p, const struct ntp_total *t, size_t n, uint64_t as_of_ns);
/* The same to the model only, to the sinks only, or both: a replay hands
 * the model the totals read ahead of the data (past the boundary it closes
 * at, so the count there is interpolated, model.h), and the sinks each
 * block when the data reaches it, as a recording writes them. */
enum { NTP_TOTALS_MODEL = 1, NTP_TOTALS_SINKS = 2 };
void ntp_pump_totals_to(struct ntp_pump *p, const struct ntp_total *t, size_t n, uint64_t as_of_ns,
			unsigned to);
/* The source's cumulative count of records lost before they reached it
 * (ring buffer full, SPDK commands in flight past the stop's wait; a file's
 * lost blocks): into the model, and to the sinks when it grew. */
void ntp_pump_lost(struct ntp_pump *p, uint64_t cumulative);
/* The source's count of program runs the kernel skipped, cumulative (model.h skipped_runs). */
void ntp_pump_skipped(struct ntp_pump *p, uint64_t cumulative);
/* The grid's interval (0: none). */
uint64_t ntp_pump_interval(const struct ntp_pump *p);
/* The next boundary of the grid (what a source's pull is asked for). */
uint64_t ntp_pump_next_boundary(const struct ntp_pump *p);

/* ---- driving ---- */
/* The data clock reached now_ns: every record before it was delivered.
 * Closes the interval when now_ns passed the next boundary (at now_ns, so
 * a live poll that ran over keeps its records in the interval they are
 * counted in), then moves the boundary to the first grid point after
 * now_ns. Ticks the sinks. 0, 1 (a sink asked to stop) or a sink's -errno. */
int ntp_pump_advance(struct ntp_pump *p, uint64_t now_ns);
/* Changes the interval from the next boundary on: the new grid starts at the
 * last close. */
void ntp_pump_set_interval(struct ntp_pump *p, uint64_t interval_ns);
/* Pulls from src and advances until the source ends, stop(stop_ctx) says so
 * (checked between pulls; NULL: never), a sink stops it, or -d's end is
 * reached. 0 when the source ended or -d was reached, 1 when stopped (by
 * stop() or a sink), or -errno (source or sink). ntp_pump_finish follows. */
int ntp_pump_run(struct ntp_pump *p, const struct ntp_pump_source *src, int (*stop)(void *), void *stop_ctx);
/* Closes the last, partial interval at end_ns (clamped to the config's
 * end_ns; skipped when nothing passed since the last close, unless no
 * interval was closed yet) and fills *total (may be NULL) with every
 * interval as one (ntp_model_total). Returns what the interval sink said. */
int ntp_pump_finish(struct ntp_pump *p, uint64_t end_ns, struct ntp_snapshot *total);

/* The data time reached so far, intervals closed so far. */
uint64_t ntp_pump_now(const struct ntp_pump *p);
uint64_t ntp_pump_intervals(const struct ntp_pump *p);
/* The first error a sink returned from record() or totals() (they cannot
 * stop a source in the middle of a poll): 0 or -errno. */
int ntp_pump_sink_error(const struct ntp_pump *p);

#endif
