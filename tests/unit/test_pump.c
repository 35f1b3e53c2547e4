// SPDX-License-Identifier: GPL-2.0
/* test_pump.c - the one driver (core/pump.h) with a fake source: intervals
 * on one grid of the data's clock whatever the source's steps, sinks fed in
 * order, -d's end, a changed interval, a sink's error and its stop; and the
 * files source (core/pump_files.h) through the same pump, a join of hosts
 * and their target among them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <cmocka.h>
#include "core/store/merge.h"
#include "core/pump/pump.h"
#include "core/pump/pump_files.h"
#include "core/synth/synth.h"

#define SEC 1000000000ull
#define MS 1000000ull
#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)

static void host_rec(struct ntp_record *h, uint64_t t0)
{
	memset(h, 0, sizeof(*h));
	h->side = NTP_SIDE_HOST;
	h->opcode = 0x02;
	h->len = 4096;
	snprintf(h->dev, sizeof(h->dev), "nvme0n1");
	SET(h, NTP_TS_H_BLK_SUBMIT, t0);
	SET(h, NTP_TS_H_DRV_SUBMIT, t0 + 2000);
	SET(h, NTP_TS_H_CMD_SENT, t0 + 7000);
	SET(h, NTP_TS_H_RSP_ARRIVE, t0 + 87000);
	SET(h, NTP_TS_H_RSP_DRV, t0 + 91000);
	SET(h, NTP_TS_H_DRV_COMPLETE, t0 + 99000);
	SET(h, NTP_TS_H_BLK_COMPLETE, t0 + 100000);
}

static struct ntp_total total(uint64_t commands)
{
	struct ntp_total t;

	memset(&t, 0, sizeof(t));
	t.key.side = NTP_SIDE_HOST;
	t.key.io = NTP_IO_READ;
	t.key.len = 4096;
	snprintf(t.key.dev, sizeof(t.key.dev), "nvme0n1");
	t.count.commands = commands;
	return t;
}

/* A fake live source: its clock moves by step per pull; each pull delivers
 * the records due by then (one every 1 ms, 1000 commands counted per s) and,
 * once the boundary asked for is passed, the totals and lost count as of then.
 * It ends at stop_at. */
struct fake {
	uint64_t now, step, stop_at, next_rec;
	uint64_t pulls, lost;
	int fail_at;			/* pull number that fails with -EIO (0: none) */
};

static int fake_pull(void *ctx, struct ntp_pump *p, uint64_t until, uint64_t *reached)
{
	struct fake *f = ctx;
	struct ntp_record r;

	if (f->fail_at && ++f->pulls == (uint64_t)f->fail_at)
		return -EIO;
	f->now += f->step;
	if (f->now > f->stop_at)
		f->now = f->stop_at;
	for (; f->next_rec + 100000 <= f->now; f->next_rec += MS) {
		host_rec(&r, f->next_rec);
		ntp_pump_record(p, &r);
	}
	if (f->now >= until) {
		struct ntp_total t = total((f->now - 10 * SEC) / MS);

		ntp_pump_totals(p, &t, 1, f->now);
		ntp_pump_lost(p, f->lost += 3);
	}
	*reached = f->now;
	return f->now < f->stop_at;
}

/* A sink that keeps what it saw. */
struct seen {
	uint64_t records, totals, ticks;
	uint64_t lost_calls, lost_last;	/* the lost sink: calls, its last count */
	int n;
	uint64_t start[32], end[32], sampled[32], commands[32], lost[32];
	int stop_after;
	int fail_record_at;		/* record number whose write fails */
};

static int s_record(void *ctx, const struct ntp_record *r)
{
	struct seen *s = ctx;

	(void)r;
	return ++s->records == (uint64_t)s->fail_record_at ? -ENOSPC : 0;
}

static int s_totals(void *ctx, const struct ntp_total *t, size_t n, uint64_t as_of)
{
	(void)t;
	(void)n;
	(void)as_of;
	((struct seen *)ctx)->totals++;
	return 0;
}

static int s_tick(void *ctx, uint64_t now)
{
	(void)now;
	((struct seen *)ctx)->ticks++;
	return 0;
}

static int s_lost(void *ctx, uint64_t cumulative, uint64_t now)
{
	struct seen *s = ctx;

	(void)now;
	s->lost_calls++;
	s->lost_last = cumulative;
	return 0;
}

static int s_interval(void *ctx, const struct ntp_snapshot *snap)
{
	struct seen *s = ctx;

	if (s->n < 32) {
		s->start[s->n] = snap->start_ns;
		s->end[s->n] = snap->end_ns;
		s->sampled[s->n] = snap->n_groups ? snap->groups[0].sampled : 0;
		s->commands[s->n] = snap->n_groups ? snap->groups[0].commands : 0;
		s->lost[s->n] = snap->lost_events;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

struct rig {
	struct ntp_model *m;
	struct ntp_pump *p;
	struct seen seen;
	struct ntp_snapshot total;
};

static void rig_up(struct rig *g, uint64_t interval, uint64_t end)
{
	struct ntp_model_config mc = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_pump_config pc = { .start_ns = 10 * SEC, .interval_ns = interval, .end_ns = end };

	memset(&g->seen, 0, sizeof(g->seen));
	g->m = ntp_model_new(&mc);
	assert_non_null(g->m);
	pc.model = g->m;
	g->p = ntp_pump_new(&pc);
	assert_non_null(g->p);
	assert_int_equal(ntp_pump_add_sink(g->p, &(struct ntp_pump_sink){ s_record, s_totals, s_interval,
									   s_tick, &g->seen, s_lost }), 0);
}

static void rig_down(struct rig *g)
{
	ntp_pump_free(g->p);
	ntp_model_free(g->m);
}

/* Steps of 300 ms against a 1 s grid: each interval closes at the first
 * step past its boundary, and the next boundary stays on the grid (10 s +
 * k s), not 1 s after that close. */
static void test_grid_of_the_data_clock(void **state)
{
	struct fake f = { .now = 10 * SEC, .step = 300 * MS, .stop_at = 14 * SEC + 500 * MS, .next_rec = 10 * SEC };
	struct rig g;
	int rc;

	(void)state;
	rig_up(&g, SEC, 0);
	rc = ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, NULL, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(ntp_pump_finish(g.p, ntp_pump_now(g.p), &g.total), 0);
	/* closes at 11.2, 12.1, 13.0, 14.2 (the first steps past 11, 12, 13, 14), then 14.5 */
	assert_int_equal(g.seen.n, 5);
	assert_int_equal(g.seen.end[0], 11 * SEC + 200 * MS);
	assert_int_equal(g.seen.end[1], 12 * SEC + 100 * MS);
	assert_int_equal(g.seen.end[2], 13 * SEC);
	assert_int_equal(g.seen.end[3], 14 * SEC + 200 * MS);
	assert_int_equal(g.seen.end[4], 14 * SEC + 500 * MS);
	for (int i = 1; i < 5; i++)
		assert_int_equal(g.seen.start[i], g.seen.end[i - 1]);
	/* every record in exactly one interval; counts as of each close */
	assert_int_equal(g.seen.sampled[0] + g.seen.sampled[1] + g.seen.sampled[2] + g.seen.sampled[3] +
			 g.seen.sampled[4], g.seen.records);
	assert_int_equal(g.seen.commands[0], 1200);
	assert_int_equal(g.seen.commands[1], 900);
	assert_int_equal(g.seen.commands[2], 900);
	assert_int_equal(g.total.groups[0].sampled, g.seen.records);
	assert_true(g.total.seconds == 4.5);
	assert_int_equal(g.seen.totals, 4);	/* once per boundary passed */
	assert_true(g.seen.ticks >= 15);
	/* lost counts are cumulative at the source, per interval in the snapshots */
	assert_int_equal(g.seen.lost[0], 3);
	assert_int_equal(g.seen.lost[1], 6);
	/* and to the sinks each time the count grew (the recording's file) */
	assert_int_equal(g.seen.lost_calls, 4);
	assert_int_equal(g.seen.lost_last, 12);
	ntp_pump_lost(g.p, 12);		/* unchanged: not again */
	assert_int_equal(g.seen.lost_calls, 4);
	rig_down(&g);
}

/* A source that jumps over several boundaries (a stalled poll) closes one
 * interval, then continues on the grid. */
static void test_jump_over_boundaries(void **state)
{
	struct rig g;

	(void)state;
	rig_up(&g, SEC, 0);
	assert_int_equal(ntp_pump_next_boundary(g.p), 11 * SEC);
	assert_int_equal(ntp_pump_advance(g.p, 13 * SEC + 500 * MS), 0);
	assert_int_equal(g.seen.n, 1);
	assert_int_equal(ntp_pump_next_boundary(g.p), 14 * SEC);
	/* time never goes back */
	assert_int_equal(ntp_pump_advance(g.p, 12 * SEC), 0);
	assert_int_equal(ntp_pump_now(g.p), 13 * SEC + 500 * MS);
	assert_int_equal(g.seen.n, 1);
	rig_down(&g);
}

/* -d: the end caps the data clock; the last interval ends there even off the grid. */
static void test_end(void **state)
{
	struct fake f = { .now = 10 * SEC, .step = 400 * MS, .stop_at = 100 * SEC, .next_rec = 10 * SEC };
	struct rig g;

	(void)state;
	rig_up(&g, SEC, 12 * SEC + 500 * MS);
	assert_int_equal(ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, NULL, NULL), 0);
	/* the source was asked for the end as its last boundary */
	assert_int_equal(ntp_pump_next_boundary(g.p), 12 * SEC + 500 * MS);
	assert_int_equal(ntp_pump_finish(g.p, f.now, &g.total), 0);
	assert_int_equal(g.seen.n, 3);
	assert_int_equal(g.seen.end[2], 12 * SEC + 500 * MS);
	assert_true(g.total.seconds == 2.5);
	/* finishing again closes nothing more */
	assert_int_equal(ntp_pump_finish(g.p, 13 * SEC, NULL), 0);
	assert_int_equal(g.seen.n, 3);
	rig_down(&g);
}

/* ntprof-top's + and -: a new grid from the last close. */
static void test_set_interval(void **state)
{
	struct rig g;

	(void)state;
	rig_up(&g, SEC, 0);
	ntp_pump_advance(g.p, 11 * SEC + 100 * MS);
	ntp_pump_set_interval(g.p, 250 * MS);
	assert_int_equal(ntp_pump_next_boundary(g.p), 11 * SEC + 350 * MS);
	ntp_pump_advance(g.p, 11 * SEC + 400 * MS);
	assert_int_equal(g.seen.n, 2);
	assert_int_equal(ntp_pump_next_boundary(g.p), 11 * SEC + 600 * MS);
	rig_down(&g);
}

/* No grid (report): one interval, closed by finish even when empty. */
static void test_no_grid(void **state)
{
	struct rig g;

	(void)state;
	rig_up(&g, 0, 0);
	assert_int_equal(ntp_pump_next_boundary(g.p), UINT64_MAX);
	assert_int_equal(ntp_pump_advance(g.p, 500 * SEC), 0);
	assert_int_equal(g.seen.n, 0);
	ntp_pump_finish(g.p, 10 * SEC, &g.total);
	assert_int_equal(g.seen.n, 1);
	rig_down(&g);
}

static int stop_now(void *ctx)
{
	return ++*(int *)ctx > 3;
}

/* Stops: a sink's 1 (-n), the front end's stop(), a source's error, a sink's write error. */
static void test_stops(void **state)
{
	struct fake f = { .now = 10 * SEC, .step = 500 * MS, .stop_at = 100 * SEC, .next_rec = 10 * SEC };
	struct rig g;
	int calls = 0;

	(void)state;
	rig_up(&g, SEC, 0);
	g.seen.stop_after = 2;
	assert_int_equal(ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, NULL, NULL), 1);
	assert_int_equal(g.seen.n, 2);
	rig_down(&g);

	f = (struct fake){ .now = 10 * SEC, .step = 500 * MS, .stop_at = 100 * SEC, .next_rec = 10 * SEC };
	rig_up(&g, SEC, 0);
	assert_int_equal(ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, stop_now, &calls), 1);
	assert_int_equal(calls, 4);
	assert_int_equal(ntp_pump_now(g.p), 11 * SEC + 500 * MS);
	rig_down(&g);

	f = (struct fake){ .now = 10 * SEC, .step = 500 * MS, .stop_at = 100 * SEC, .next_rec = 10 * SEC,
			   .fail_at = 5 };
	rig_up(&g, SEC, 0);
	assert_int_equal(ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, NULL, NULL), -EIO);
	rig_down(&g);

	f = (struct fake){ .now = 10 * SEC, .step = 500 * MS, .stop_at = 100 * SEC, .next_rec = 10 * SEC };
	rig_up(&g, SEC, 0);
	g.seen.fail_record_at = 700;
	assert_int_equal(ntp_pump_run(g.p, &(struct ntp_pump_source){ fake_pull, &f }, NULL, NULL), -ENOSPC);
	assert_int_equal(ntp_pump_sink_error(g.p), -ENOSPC);
	assert_int_equal(ntp_pump_now(g.p), 11 * SEC);	/* stopped at the pull that failed */
	rig_down(&g);
}

/* ---- the files source ---- */

/* A host recording from start for ms milliseconds: per_sec records a second,
 * sampled 1 in 10 (the kernel counts 10 commands a record), totals blocks
 * every second at off_ms past each whole second, and at the end. */
static void write_rec_file(const char *path, uint64_t start, uint64_t ms, int per_sec, uint64_t off_ms)
{
	struct ntp_file_info fi;
	struct ntp_writer *w;
	struct ntp_record r;
	char err[256];
	uint64_t count = 0, end = start + ms * MS, next_tot = start + off_ms * MS;
	struct ntp_total t;

	memset(&fi, 0, sizeof(fi));
	fi.role = NTP_ROLE_HOST;
	fi.transport = NTP_TRANSPORT_TCP;
	fi.sampling = 10;
	fi.start_mono_ns = start;
	fi.start_real_ns = 1796000000000000000ull;
	snprintf(fi.hostname, sizeof(fi.hostname), "h");
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	for (uint64_t t0 = start; t0 + 100000 <= end; t0 += SEC / (uint64_t)per_sec) {
		if (t0 + 100000 > next_tot) {
			t = total(count);
			assert_int_equal(ntp_writer_set_totals(w, &t, 1, next_tot), 0);
			assert_int_equal(ntp_writer_flush(w, next_tot), 0);
			next_tot += SEC;
		}
		host_rec(&r, t0);
		assert_int_equal(ntp_writer_add(w, &r), 0);
		count += 10;
	}
	t = total(count);
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, end), 0);
	assert_int_equal(ntp_writer_close(w, end), 0);
}

/* Replays path through the pump on a grid of interval ns; the sink sees the intervals. */
static void replay(const char *path, uint64_t interval, struct seen *seen, struct ntp_snapshot *tot)
{
	char err[256], *paths[1] = { (char *)path };
	struct ntp_files *f = ntp_files_open(paths, 1, err, sizeof(err));
	struct ntp_model *m;
	struct ntp_pump *p;

	assert_non_null(f);
	m = ntp_model_new(ntp_files_model_config(f));
	p = ntp_pump_new(&(struct ntp_pump_config){ .model = m, .start_ns = ntp_files_start(f),
						    .interval_ns = interval });
	assert_non_null(p);
	ntp_pump_add_sink(p, &(struct ntp_pump_sink){ s_record, s_totals, s_interval, NULL, seen, s_lost });
	assert_int_equal(ntp_pump_run(p, &(struct ntp_pump_source){ ntp_files_pull, f }, NULL, NULL), 0);
	ntp_pump_finish(p, ntp_files_end(f), tot);
	ntp_pump_free(p);
	ntp_model_free(m);
	ntp_files_close(f);
}

/* A replay: intervals on the file's clock from its start, each record in
 * the interval its time falls in, the totals applied when reached. */
static void test_files_source(void **state)
{
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct seen seen = { 0 };
	struct ntp_snapshot *tot = malloc(sizeof(*tot));

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_rec_file(path, 50 * SEC, 4000, 200, 1000);
	replay(path, SEC, &seen, tot);
	assert_int_equal(seen.records, 800);
	assert_int_equal(seen.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(seen.start[i], 50 * SEC + (uint64_t)i * SEC);
		assert_int_equal(seen.end[i], 51 * SEC + (uint64_t)i * SEC);
		assert_int_equal(seen.sampled[i], 200);
		assert_int_equal(seen.commands[i], 2000);
	}
	assert_int_equal(tot->groups[0].commands, 8000);
	unlink(path);
	free(tot);
}

/* Intervals shorter than the totals blocks' spacing (1 s): each gets its
 * share of the counted commands, not 0 in three and 4x in the fourth. */
static void test_replay_sub_second(void **state)
{
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct seen seen = { 0 };
	struct ntp_snapshot *tot = malloc(sizeof(*tot));

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_rec_file(path, 50 * SEC, 4000, 200, 1000);
	replay(path, 250 * MS, &seen, tot);
	assert_int_equal(seen.n, 16);
	for (int i = 0; i < 16; i++) {
		/* 2000 commands/s: 500 in 250 ms (the first three from the samples) */
		if (seen.commands[i])
			assert_in_range(seen.commands[i], 490, 510);
		else
			assert_true(i < 3);
	}
	assert_int_equal(tot->groups[0].commands, 8000);
	unlink(path);
	free(tot);
}

/* Totals blocks off the grid (at .4 s) and an end off it (4.1 s): the last
 * interval's counted rate is the recording's, not 7x (0.7 s of commands
 * counted in 0.1 s). */
static void test_replay_last_interval(void **state)
{
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct seen seen = { 0 };
	struct ntp_snapshot *tot = malloc(sizeof(*tot));

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_rec_file(path, 50 * SEC, 4100, 200, 400);
	replay(path, SEC, &seen, tot);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.end[4] - seen.start[4], 100 * MS);
	for (int i = 1; i < 5; i++) {
		double rate = seen.commands[i] / ((seen.end[i] - seen.start[i]) / 1e9);

		assert_in_range((uint64_t)rate, 1900, 2100);
	}
	assert_int_equal(tot->groups[0].commands, 8200);
	unlink(path);
	free(tot);
}

/* A recording at 1 in 1 whose load changes every second (rate[k] records
 * in second k), totals blocks at .4 s past each second but the one after
 * second skip (a 2 s gap between two blocks), and at the end. */
static void write_uneven_file(const char *path, uint64_t start, const int *rate, int secs, int skip)
{
	struct ntp_file_info fi;
	struct ntp_writer *w;
	struct ntp_record r;
	char err[256];
	uint64_t count = 0, end = start + (uint64_t)secs * SEC;
	struct ntp_total t;
	int next = 0;

	memset(&fi, 0, sizeof(fi));
	fi.role = NTP_ROLE_HOST;
	fi.transport = NTP_TRANSPORT_TCP;
	fi.sampling = 1;
	fi.start_mono_ns = start;
	fi.start_real_ns = 1796000000000000000ull;
	snprintf(fi.hostname, sizeof(fi.hostname), "h");
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	for (int k = 0; k < secs; k++)
		for (int j = 0; j < rate[k]; j++) {
			uint64_t t0 = start + (uint64_t)k * SEC + (uint64_t)j * (SEC / (uint64_t)rate[k]);
			uint64_t tot_at = start + (uint64_t)next * SEC + 400 * MS;

			if (next < secs && t0 + 100000 > tot_at) {
				if (next != skip) {
					t = total(count);
					assert_int_equal(ntp_writer_set_totals(w, &t, 1, tot_at), 0);
					assert_int_equal(ntp_writer_flush(w, tot_at), 0);
				}
				next++;
			}
			host_rec(&r, t0);
			assert_int_equal(ntp_writer_add(w, &r), 0);
			count++;
		}
	t = total(count);
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, end), 0);
	assert_int_equal(ntp_writer_close(w, end), 0);
}

/* A load that changes between seconds, totals blocks off the intervals'
 * boundaries and a 2 s gap between two: at 1 in 1 every interval's counted
 * commands are its records (interpolated between the blocks around each
 * boundary, not guessed past the last), counted in every interval, the
 * first and those in the gap too; and at 250 ms intervals the same. */
static void test_replay_uneven_load(void **state)
{
	static const int rate[8] = { 3000, 500, 2500, 800, 3000, 600, 2000, 1000 };
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct ntp_snapshot *tot = malloc(sizeof(*tot));
	uint64_t ivs[2] = { SEC, 250 * MS };

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_uneven_file(path, 50 * SEC, rate, 8, 4);
	for (int v = 0; v < 2; v++) {
		struct seen seen = { 0 };
		uint64_t sum = 0;

		replay(path, ivs[v], &seen, tot);
		assert_int_equal(seen.n, v ? 32 : 8);
		for (int i = 0; i < seen.n && i < 32; i++) {
			/* never fewer than the records, at most 1 % more */
			assert_true(seen.commands[i] >= seen.sampled[i]);
			assert_true(seen.commands[i] <= seen.sampled[i] + seen.sampled[i] / 100 + 2);
			sum += seen.sampled[i];
		}
		assert_int_equal(sum, 13400);
		assert_int_equal(tot->groups[0].commands, 13400);
	}
	unlink(path);
	free(tot);
}

/* A host recording sampled 1 in sampling for secs seconds: per_burst
 * records in the first burst_ms of each second, none in the rest, totals
 * blocks at each whole second and at the end. */
static void write_burst_file(const char *path, uint64_t start, int secs, int per_burst, uint64_t burst_ms,
			     uint32_t sampling)
{
	struct ntp_file_info fi;
	struct ntp_writer *w;
	struct ntp_record r;
	char err[256];
	uint64_t count = 0, end = start + (uint64_t)secs * SEC;
	struct ntp_total t;

	memset(&fi, 0, sizeof(fi));
	fi.role = NTP_ROLE_HOST;
	fi.transport = NTP_TRANSPORT_TCP;
	fi.sampling = sampling;
	fi.start_mono_ns = start;
	fi.start_real_ns = 1796000000000000000ull;
	snprintf(fi.hostname, sizeof(fi.hostname), "h");
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	for (int k = 0; k < secs; k++) {
		uint64_t s0 = start + (uint64_t)k * SEC;

		if (k) {
			t = total(count);
			assert_int_equal(ntp_writer_set_totals(w, &t, 1, s0), 0);
			assert_int_equal(ntp_writer_flush(w, s0), 0);
		}
		for (int j = 0; j < per_burst; j++) {
			host_rec(&r, s0 + 1000 + (uint64_t)j * (burst_ms * MS / (uint64_t)per_burst));
			assert_int_equal(ntp_writer_add(w, &r), 0);
			count += sampling;
		}
	}
	t = total(count);
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, end), 0);
	assert_int_equal(ntp_writer_close(w, end), 0);
}

/* A load that bursts within each totals block (0.3 s on, 0.7 s off), at
 * 1 in 10 with 450 records a block (fewer than 1000, 45 an interval of
 * 0.1 s on average) but 150 in each interval of the burst: the intervals'
 * counts follow the records (1500 commands in each of the burst's, none in
 * the others), not the time (450 in each). */
static void test_replay_burst(void **state)
{
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct seen seen = { 0 };
	struct ntp_snapshot *tot = malloc(sizeof(*tot));

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_burst_file(path, 50 * SEC, 3, 450, 300, 10);
	replay(path, 100 * MS, &seen, tot);
	/* the last interval runs from the last record to the end */
	assert_int_equal(seen.n, 23);
	for (int i = 0; i < 20; i++) {
		if (i % 10 < 3)
			assert_in_range(seen.commands[i], 1350, 1650);
		else
			assert_in_range(seen.commands[i], 0, 150);
	}
	assert_int_equal(tot->groups[0].commands, 13500);
	unlink(path);
	free(tot);
}

/* Records that stop before the last totals block (the trailer, 0.7 s
 * later), at 1 in 2: the last block's commands go to the intervals with
 * the records (1000 in each), not spread over the time to the block (300
 * in each, raised to the 500 records, the rest in the last interval). */
static void test_replay_records_stop(void **state)
{
	char path[] = "/tmp/ntp-pump-XXXXXX";
	struct seen seen = { 0 };
	struct ntp_snapshot *tot = malloc(sizeof(*tot));

	(void)state;
	assert_non_null(tot);
	close(mkstemp(path));
	write_burst_file(path, 50 * SEC, 2, 1500, 300, 2);
	replay(path, 100 * MS, &seen, tot);
	assert_int_equal(seen.n, 13);
	for (int i = 10; i < 13; i++)
		assert_in_range(seen.commands[i], 990, 1010);
	assert_int_equal(tot->groups[0].commands, 6000);
	unlink(path);
	free(tot);
}

/* A missing file: one line naming it. */
/* Three hosts, each on a clock of its own, and their target (synth.h):
 * paths[0..3) the hosts' files, paths[3] the target's. */
static void write_join_files(char paths[4][64], const char *dir)
{
	struct ntp_synth_config c;
	struct ntp_writer *w[4];
	struct ntp_synth *s;
	struct ntp_record r;
	char err[256];
	uint64_t t;
	enum ntp_synth_event ev;

	ntp_synth_defaults(&c);
	c.seed = 7;
	c.count = 30000;
	c.duration_ns = 0;
	c.rate = 100000;
	c.hosts = 3;
	c.sampling = 1;
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	for (int i = 0; i < 4; i++) {
		uint8_t side = i < 3 ? NTP_SIDE_HOST : NTP_SIDE_TARGET;
		struct ntp_file_info fi = { .role = i < 3 ? NTP_ROLE_HOST : NTP_ROLE_TARGET,
					    .transport = NTP_TRANSPORT_TCP, .sampling = 1,
					    .start_real_ns = 1796000000000000000ull };

		fi.start_mono_ns = ntp_synth_clock(s, side, (uint16_t)(i < 3 ? i + 1 : 1), 0);
		snprintf(fi.hostname, sizeof(fi.hostname), i < 3 ? "h%d" : "t", i + 1);
		snprintf(paths[i], 64, "%s/%s%d.ntp", dir, i < 3 ? "h" : "t", i + 1);
		w[i] = ntp_writer_open(paths[i], &fi, err, sizeof(err));
		assert_non_null(w[i]);
	}
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END)
		if (ev == NTP_SYNTH_RECORD)
			assert_int_equal(ntp_writer_add(w[r.side == NTP_SIDE_HOST ? r.cntlid - 1 : 3], &r), 0);
	t = ntp_synth_last_time(s);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ntp_writer_close(w[i], ntp_synth_clock(s, i < 3 ? NTP_SIDE_HOST : NTP_SIDE_TARGET,
								       (uint16_t)(i < 3 ? i + 1 : 1), t)), 0);
	ntp_synth_free(s);
}

/* A sink of records: their times on the primary file's clock, in order. */
struct in_order {
	const struct ntp_files *f;
	uint64_t records, last, back;	/* back: records whose time went back */
};

static int order_record(void *ctx, const struct ntp_record *r)
{
	struct in_order *o = ctx;
	size_t file = r->side == NTP_SIDE_HOST ? (size_t)r->cntlid - 1 : 3;
	uint64_t t = ntp_merge_map(ntp_record_last_ts(r), ntp_files_offset(o->f, file));

	o->back += t < o->last;
	o->last = t > o->last ? t : o->last;
	o->records++;
	return 0;
}

/*
 * A join of three hosts and their target replayed on a grid of 100 ms, with
 * a sink of records (a recording written from the replay) and without: the
 * sink takes them in time order, and both runs' intervals and totals are
 * the same, which the merge's windows (merge.h ntp_merge_most_windowed,
 * taken without such a sink) do not change.
 */
static void test_join_replay_orders(void **state)
{
	char dir[] = "/tmp/ntp-pump-join-XXXXXX", paths[4][64], *pp[4];
	struct ntp_snapshot *tot[2];
	struct seen seen[2];
	struct in_order ord = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_join_files(paths, dir);
	for (int i = 0; i < 4; i++)
		pp[i] = paths[i];
	for (int with = 0; with < 2; with++) {
		char err[512];
		struct ntp_files *f = ntp_files_open(pp, 4, err, sizeof(err));
		struct ntp_model *m;
		struct ntp_pump *p;

		assert_non_null(f);
		tot[with] = calloc(1, sizeof(*tot[with]));
		assert_non_null(tot[with]);
		memset(&seen[with], 0, sizeof(seen[with]));
		m = ntp_model_new(ntp_files_model_config(f));
		assert_non_null(m);
		p = ntp_pump_new(&(struct ntp_pump_config){ .model = m, .start_ns = ntp_files_start(f),
							    .interval_ns = SEC / 10 });
		assert_non_null(p);
		ntp_pump_add_sink(p, &(struct ntp_pump_sink){ .interval = s_interval, .ctx = &seen[with] });
		ord.f = f;
		if (with)
			ntp_pump_add_sink(p, &(struct ntp_pump_sink){ .record = order_record, .ctx = &ord });
		assert_int_equal(ntp_pump_run(p, &(struct ntp_pump_source){ ntp_files_pull, f }, NULL, NULL), 0);
		ntp_pump_finish(p, ntp_files_end(f), tot[with]);
		ntp_pump_free(p);
		ntp_model_free(m);
		ntp_files_close(f);
	}
	assert_int_equal(ord.records, tot[1]->host_records + tot[1]->target_records);
	assert_true(ord.records > 50000);
	assert_int_equal(ord.back, 0);
	assert_int_equal(tot[0]->matched, 30000);
	assert_int_equal(tot[0]->host_records, tot[1]->host_records);
	assert_int_equal(tot[0]->target_records, tot[1]->target_records);
	assert_int_equal(tot[0]->matched, tot[1]->matched);
	assert_int_equal(tot[0]->n_groups, tot[1]->n_groups);
	assert_int_equal(tot[0]->groups[0].sampled, tot[1]->groups[0].sampled);
	assert_true(tot[0]->groups[0].e2e_mean_us == tot[1]->groups[0].e2e_mean_us);
	assert_true(tot[0]->groups[0].e2e_p99_us == tot[1]->groups[0].e2e_p99_us);
	for (int st = 0; st < NTP_STAGE_COUNT; st++)
		assert_true(tot[0]->groups[0].stage[st].mean_us == tot[1]->groups[0].stage[st].mean_us);
	assert_int_equal(seen[0].n, seen[1].n);
	assert_true(seen[0].n >= 3);
	for (int i = 0; i < seen[0].n && i < 32; i++) {
		assert_int_equal(seen[0].start[i], seen[1].start[i]);
		assert_int_equal(seen[0].sampled[i], seen[1].sampled[i]);
	}
	for (int i = 0; i < 4; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(tot[0]);
	free(tot[1]);
}

static void test_files_refused(void **state)
{
	char err[256], *paths[1] = { "/nonexistent/x.ntp" };

	(void)state;
	assert_null(ntp_files_open(paths, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/x.ntp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_of_the_data_clock),
		cmocka_unit_test(test_jump_over_boundaries),
		cmocka_unit_test(test_end),
		cmocka_unit_test(test_set_interval),
		cmocka_unit_test(test_no_grid),
		cmocka_unit_test(test_stops),
		cmocka_unit_test(test_files_source),
		cmocka_unit_test(test_replay_sub_second),
		cmocka_unit_test(test_replay_last_interval),
		cmocka_unit_test(test_replay_uneven_load),
		cmocka_unit_test(test_replay_burst),
		cmocka_unit_test(test_replay_records_stop),
		cmocka_unit_test(test_files_refused),
		cmocka_unit_test(test_join_replay_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
