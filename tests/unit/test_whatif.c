// SPDX-License-Identifier: GPL-2.0
/* test_whatif.c - the MVA solver against closed-form results, and the
 * what-if model of a group: calibration, fitted parallelism, knee, tags, p99. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/whatif.h"
#include "ui/keys.h"
#include "ui/render.h"
#include "ui/screen.h"

#define NEAR(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-12)

/* The machine-repair model (finite source): n customers thinking z each,
 * one station with c servers of exponential service s. Birth-death chain:
 * P(j) = P(0) prod_{i<j} ((n - i) / z) / (min(i + 1, c) / s). */
static void repairman(int n, double z, double s, int c, double *x, double *r)
{
	double lp[NTP_WI_MAX_QD + 1], mx = 0, sum = 0, busy = 0, q = 0;

	/* in logs: the terms reach (n / z)^n s^n */
	lp[0] = 0;
	for (int j = 1; j <= n; j++) {
		lp[j] = lp[j - 1] + log((n - j + 1) / z) - log((j < c ? j : c) / s);
		if (lp[j] > mx)
			mx = lp[j];
	}
	for (int j = 0; j <= n; j++)
		sum += exp(lp[j] - mx);
	for (int j = 0; j <= n; j++) {
		busy += (j < c ? j : c) * exp(lp[j] - mx) / sum;
		q += j * exp(lp[j] - mx) / sum;
	}
	*x = busy / s;
	*r = q / *x;
}

static void test_mm1_with_think(void **state)
{
	struct ntp_mva_station st[1] = { { 10.0, 1 } };
	struct ntp_mva_result r;

	(void)state;
	for (int n = 1; n <= 40; n++) {
		double x, rr;

		repairman(n, 30.0, 10.0, 1, &x, &rr);
		assert_int_equal(ntp_mva_solve(st, 1, 30.0, n, &r), 0);
		NEAR(r.x, x, 1e-9);
		NEAR(r.r[0], rr, 1e-9);
		NEAR(r.q[0] + r.x * 30.0, n, 1e-9);
	}
	/* far past the knee (N* = (10 + 30) / 10 = 4): X -> 1/S, R -> N S - Z */
	assert_int_equal(ntp_mva_solve(st, 1, 30.0, 200, &r), 0);
	NEAR(r.x, 0.1, 1e-9);
	NEAR(r.r[0], 200 * 10.0 - 30.0, 1e-9);
}

static void test_multi_server(void **state)
{
	struct ntp_mva_result r;

	(void)state;
	for (int c = 2; c <= 1024; c *= 2) {
		struct ntp_mva_station st[1] = { { 100.0, c } };

		for (int n = 1; n <= NTP_WI_MAX_QD; n = n < 64 ? n + 1 : n * 2) {
			double x, rr;

			repairman(n, 50.0, 100.0, c, &x, &rr);
			assert_int_equal(ntp_mva_solve(st, 1, 50.0, n, &r), 0);
			NEAR(r.x, x, 1e-9);
			NEAR(r.r[0], rr, 1e-9);
		}
	}
	/* deep saturation: 8 servers, 1024 customers, X -> c/S */
	{
		struct ntp_mva_station st[1] = { { 100.0, 8 } };
		double x, rr;

		repairman(1024, 50.0, 100.0, 8, &x, &rr);
		assert_int_equal(ntp_mva_solve(st, 1, 50.0, 1024, &r), 0);
		NEAR(r.x, 0.08, 1e-9);
		NEAR(r.r[0], rr, 1e-7);
	}
}

static void test_balanced_network(void **state)
{
	struct ntp_mva_station st[4] = { { 5, 1 }, { 5, 1 }, { 5, 1 }, { 5, 1 } };
	struct ntp_mva_result r;

	(void)state;
	/* K equal single-server queues of demand D, no think time:
	 * X(N) = N / (D (K + N - 1)), each R = D (K + N - 1) / K */
	for (int n = 1; n <= 100; n++) {
		assert_int_equal(ntp_mva_solve(st, 4, 0, n, &r), 0);
		NEAR(r.x, n / (5.0 * (4 + n - 1)), 1e-9);
		for (int k = 0; k < 4; k++)
			NEAR(r.r[k], 5.0 * (4 + n - 1) / 4, 1e-9);
	}
}

static void test_pure_delay(void **state)
{
	struct ntp_mva_station st[3] = { { 7, 0 }, { 3, 0 }, { 90, 0 } };
	struct ntp_mva_result r;

	(void)state;
	for (int n = 1; n <= NTP_WI_MAX_QD; n *= 2) {
		assert_int_equal(ntp_mva_solve(st, 3, 20, n, &r), 0);
		NEAR(r.x, n / 120.0, 1e-12);
		NEAR(r.r_total, 100.0, 1e-12);
	}
	assert_int_equal(ntp_mva_solve(st, 3, 0, 0, &r), -1);
	assert_int_equal(ntp_mva_solve(st, 3, 0, NTP_WI_MAX_QD + 1, &r), -1);
}

/* A group measured from a network we know: the solver's own output at qd
 * turned into what ntprof would have measured. */
static void group_from(const struct ntp_mva_station *st, double z, int qd, struct ntp_snap_group *g)
{
	struct ntp_mva_result r;

	memset(g, 0, sizeof(*g));
	assert_int_equal(ntp_mva_solve(st, NTP_STAGE_COUNT, z, qd, &r), 0);
	g->io = NTP_IO_READ;
	g->len = 4096;
	g->rate = r.x * 1e6;
	g->e2e_mean_us = r.r_total;
	g->e2e_p99_us = 2 * r.r_total;
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		g->stage[k].present = 1;
		g->stage[k].mean_us = r.r[k];
		g->stage[k].p99_us = 2 * r.r[k];
		g->stage[k].avg_qd = r.q[k];
	}
}

/* storage is 4 servers of 1000 us (null_blk with a completion delay and 4 tags) */
static const struct ntp_mva_station truth[NTP_STAGE_COUNT] = {
	{ 5, 0 }, { 10, 0 }, { 40, 0 }, { 15, 0 }, { 1000, 4 },
};

static void test_model_fits_parallelism(void **state)
{
	struct ntp_snap_group g1, g2, g8;
	const struct ntp_snap_group *fit[2] = { &g1, &g2 };
	struct ntp_wi_model m;
	struct ntp_wi_pred p;

	(void)state;
	group_from(truth, 30, 1, &g1);
	group_from(truth, 30, 2, &g2);
	group_from(truth, 30, 8, &g8);
	/* base QD 8, fitted from QD 1 and 2 (storage waits at 2 only a little
	 * with 4 servers: exponential service) */
	assert_int_equal(ntp_wi_build(&g8, fit, 2, NULL, &m), 0);
	assert_true(m.ok);
	assert_int_equal(m.base_qd, 8);
	NEAR(m.think_us, 30, 1e-6);
	assert_int_equal(m.n_levels, 3);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].servers, 4);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].source, NTP_WI_SRC_FITTED);
	assert_int_equal(m.st[NTP_STAGE_NETWORK].servers, 0);
	assert_int_equal(m.st[NTP_STAGE_NETWORK].source, NTP_WI_SRC_NO_CONTENTION);
	NEAR(m.st[NTP_STAGE_STORAGE].service_us, 1000, 1e-6);
	assert_int_equal(m.bottleneck, NTP_STAGE_STORAGE);
	NEAR(m.max_iops, 4000, 1e-6);
	NEAR(m.knee_qd, (1000 + 70 + 30) / 250.0, 1e-6);
	/* the base itself is reproduced, and QD 32 is the truth's QD 32 */
	assert_int_equal(ntp_wi_predict(&m, 8, &p), 0);
	NEAR(p.iops, g8.rate, 1e-6);
	NEAR(p.mean_us, g8.e2e_mean_us, 1e-6);
	NEAR(p.p99_us, g8.e2e_p99_us, 1e-6);
	{
		struct ntp_snap_group g32;

		group_from(truth, 30, 32, &g32);
		assert_int_equal(ntp_wi_predict(&m, 32, &p), 0);
		NEAR(p.iops, g32.rate, 1e-6);
		NEAR(p.mean_us, g32.e2e_mean_us, 1e-6);
		NEAR(p.stage_us[NTP_STAGE_STORAGE], g32.stage[NTP_STAGE_STORAGE].mean_us, 1e-6);
		assert_int_equal(p.saturated, NTP_STAGE_STORAGE);
		assert_true(p.util[NTP_STAGE_STORAGE] > 0.99);
	}
}


/* A group with the given stage means and command rate (commands/s). */
static void group_of(struct ntp_snap_group *g, double rate, const double *stage_us)
{
	memset(g, 0, sizeof(*g));
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme0n1");
	g->rate = rate;
	g->sampled = 1000;
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		g->stage[k].present = 1;
		g->stage[k].mean_us = stage_us[k];
		g->stage[k].p99_us = 2 * stage_us[k];
		g->e2e_mean_us += stage_us[k];
	}
	g->e2e_p99_us = 2 * g->e2e_mean_us;
}

/* The stage means of one steady run whose rate x mean is lq (a 4-server
 * drive's queue as in truth, the other stages fixed). */
static void group_at_lq(struct ntp_snap_group *g, double lq)
{
	const double st[NTP_STAGE_COUNT] = { 5, 10, 40, 15, 1000 };

	group_of(g, lq / 1070.0 * 1e6, st);
}

/* A test-bed run given as QD 16 with rate x mean 9.52 (much of each
 * command's time is the application's under emulation): 1 server for the
 * host's block layer is near saturation there, where the plain fixed point
 * S <- S x measured / predicted swings and stopped at twice the feasible S
 * (half the measured IOPS at the run's own QD). Calibrated, the run's QD
 * gives back the measurement and the capacity is at least the run's rate. */
static void test_calibration_near_saturation(void **state)
{
	const double st[NTP_STAGE_COUNT] = { 1236.225, 153.303, 158.551, 37.007, 169.666 };
	struct ntp_snap_group g;
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;

	(void)state;
	group_of(&g, 5424.4, st);
	memset(&par, 0, sizeof(par));
	par.base_qd = 16;
	par.servers[NTP_STAGE_HOST_BLOCK] = 1;
	par.servers[NTP_STAGE_HOST_DRIVER] = 2;
	par.servers[NTP_STAGE_STORAGE] = 4;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_true(m.ok);
	assert_int_equal(ntp_wi_predict(&m, 16, &p), 0);
	NEAR(p.iops, 5424.4, 1e-3);
	NEAR(p.mean_us, g.e2e_mean_us, 1e-3);
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		NEAR(p.stage_us[k], st[k], NTP_WI_CALIB_TOL);
	assert_int_equal(m.bottleneck, NTP_STAGE_HOST_BLOCK);
	assert_true(m.max_iops >= 5424.4);
}

/* Fits that explain nothing (a stage's mean up 3x at one load, flat at a
 * higher one) are rejected: the stage is a delay, the output says which c
 * fitted best and how poorly, and the run's QD gives back the measurement. */
static void test_poor_fit_rejected(void **state)
{
	const double s1[NTP_STAGE_COUNT] = { 5, 10, 40, 15, 100 };
	const double s2[NTP_STAGE_COUNT] = { 5, 10, 40, 15, 400 };
	const double s8[NTP_STAGE_COUNT] = { 5, 10, 40, 15, 105 };
	struct ntp_snap_group g1, g2, g8;
	const struct ntp_snap_group *fit[2] = { &g1, &g2 };
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;

	(void)state;
	group_of(&g1, 1e6 / 170, s1);
	group_of(&g2, 2e6 / 470, s2);
	group_of(&g8, 8e6 / 175, s8);
	memset(&par, 0, sizeof(par));
	par.base_qd = 8;
	par.fit_qd[0] = 1;
	par.fit_qd[1] = 2;
	assert_int_equal(ntp_wi_build(&g8, fit, 2, &par, &m), 0);
	assert_true(m.ok);
	assert_int_equal(m.n_levels, 3);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].source, NTP_WI_SRC_POOR_FIT);
	assert_string_equal(ntp_wi_source_key(m.st[NTP_STAGE_STORAGE].source), "fit_rejected");
	assert_int_equal(m.st[NTP_STAGE_STORAGE].servers, 0);
	assert_true(m.st[NTP_STAGE_STORAGE].fit_servers > 0);
	assert_true(m.st[NTP_STAGE_STORAGE].fit_err > NTP_WI_FIT_MAX_ERR);
	assert_int_equal(ntp_wi_predict(&m, 8, &p), 0);
	NEAR(p.iops, g8.rate, 1e-9);
	NEAR(p.mean_us, g8.e2e_mean_us, 1e-9);
}

/* rate x mean 2.26: a closed loop of 2 cannot have that many in flight, so
 * the run's QD is 3 (rounded down, the think time would be negative and the
 * prediction at the run's QD below the measured IOPS); a QD given below it
 * is refused; within the rate's noise above an integer it is that integer. */
static void test_run_qd_rounds_up(void **state)
{
	const double st[NTP_STAGE_COUNT] = { 2.5, 5, 21.24, 7.48, 79.24 };
	struct ntp_snap_group g;
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;

	(void)state;
	group_of(&g, 2.26e6 / 115.46, st);
	assert_int_equal(ntp_wi_build(&g, NULL, 0, NULL, &m), 0);
	assert_true(m.ok);
	assert_int_equal(m.base_qd, 3);
	assert_true(m.think_us > 0);
	assert_int_equal(ntp_wi_predict(&m, 3, &p), 0);
	NEAR(p.iops, g.rate, 1e-9);
	NEAR(p.mean_us, g.e2e_mean_us, 1e-9);
	/* with a queue given the capacity is at least the measured rate */
	memset(&par, 0, sizeof(par));
	par.servers[NTP_STAGE_STORAGE] = 1;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_true(m.ok);
	assert_true(m.max_iops >= g.rate);
	/* given below what was in flight: refused, saying why */
	memset(&par, 0, sizeof(par));
	par.base_qd = 2;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_false(m.ok);
	assert_non_null(strstr(m.why, "the QD given (2) is below the commands measured in flight"));
	par.base_qd = 3;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_true(m.ok);
	/* 4.001: the rate's noise, QD 4 */
	group_of(&g, 4.001e6 / 115.46, st);
	assert_int_equal(ntp_wi_build(&g, NULL, 0, NULL, &m), 0);
	assert_int_equal(m.base_qd, 4);
}

/* Intervals of one steady load whose rate x mean wanders (3.4 .. 4.45,
 * which rounded reads as QD 3 and 4) are one load level: no parallelism is
 * fitted on their noise. A QD really higher (8.9) is a second level. */
static void test_levels_by_noise(void **state)
{
	struct ntp_snap_group g[5];
	const struct ntp_snap_group *fit[4] = { &g[1], &g[2], &g[3], &g[4] };
	struct ntp_wi_model m;

	(void)state;
	group_at_lq(&g[0], 4.0);
	group_at_lq(&g[1], 3.4);
	group_at_lq(&g[2], 4.45);
	group_at_lq(&g[3], 3.8);
	g[2].stage[NTP_STAGE_STORAGE].mean_us *= 1.15;	/* noise, as a stage sees it */
	g[2].e2e_mean_us += 150;
	g[2].rate = 4.45e6 / g[2].e2e_mean_us;
	assert_int_equal(ntp_wi_build(&g[0], fit, 3, NULL, &m), 0);
	assert_true(m.ok);
	assert_int_equal(m.n_levels, 1);
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		assert_int_equal(m.st[k].source, NTP_WI_SRC_ONE_LOAD);
	group_at_lq(&g[4], 8.9);
	assert_int_equal(ntp_wi_build(&g[0], fit, 4, NULL, &m), 0);
	assert_int_equal(m.n_levels, 2);
}

/* ntprof-top's fit set: an interval with fewer samples than a p99 needs
 * (the attach stall's first interval at 1 in 1000) and the one during
 * which the sampling changed are left out, and the model says how many. */
static void test_top_fit_set(void **state)
{
	static struct ntp_snapshot snap[6];
	const struct ntp_snapshot *sp[6];
	struct ntp_history h = { sp, 6 };
	const double lq[6] = { 19.0, 2.5, 3.6, 4.2, 3.9, 4.0 };
	struct ntp_wi_model m;

	(void)state;
	for (int i = 0; i < 6; i++) {
		memset(&snap[i], 0, sizeof(snap[i]));
		snap[i].index = (uint64_t)i;
		snap[i].sampling = i < 2 ? 1000 : 1;
		snap[i].n_groups = 1;
		group_at_lq(&snap[i].groups[0], lq[i]);
		sp[i] = &snap[i];
	}
	snap[0].groups[0].sampled = 9;
	snap[1].sampling = 1;	/* changed during interval 1 */
	assert_int_equal(ntp_wi_fit_usable(NULL, &snap[0], &snap[0].groups[0]), 0);
	assert_int_equal(ntp_wi_fit_usable(&snap[0], &snap[1], &snap[1].groups[0]), 0);
	assert_int_equal(ntp_wi_fit_usable(&snap[1], &snap[2], &snap[2].groups[0]), 1);
	ntp_whatif_model(&h, &snap[5], &snap[5].groups[0], NULL, &m);
	assert_true(m.ok);
	assert_int_equal(m.n_left_out, 2);
	assert_int_equal(m.n_levels, 1);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].source, NTP_WI_SRC_ONE_LOAD);
	assert_int_equal(m.bottleneck, -1);
	/* the interval that straddled the change once the one before it was
	 * evicted: the oldest kept, no predecessor to tell; it says so itself */
	snap[1].sampling_from = 1000;
	assert_int_equal(ntp_wi_fit_usable(NULL, &snap[1], &snap[1].groups[0]), 0);
	h.snap = sp + 1;
	h.n = 5;
	ntp_whatif_model(&h, &snap[5], &snap[5].groups[0], NULL, &m);
	assert_true(m.ok);
	assert_int_equal(m.n_left_out, 1);
	assert_int_equal(m.n_levels, 1);
}


/* The what-if view paused: the history goes on dropping its oldest
 * intervals as new ones come, but the screen keeps the fit it had when the
 * pause began (storage fitted to 4 servers on QD 1, 2 and 8) instead of
 * falling back to one load level with no key pressed. */
static void whatif_snap(struct ntp_snapshot *s, uint64_t k, int qd)
{
	memset(s, 0, sizeof(*s));
	s->index = k;
	s->seconds = 1;
	s->sampling = 1;
	s->role = NTP_ROLE_BOTH;
	s->transport = NTP_TRANSPORT_TCP;
	s->n_groups = 1;
	group_from(truth, 30, qd, &s->groups[0]);
	strcpy(s->groups[0].dev, "nvme0n1");
	s->groups[0].sampled = 1000;
}

static char *whatif_screen(struct ntp_view *v, const struct ntp_history *h)
{
	struct ntp_top_info in = { .host = "h", .source = "replay r.ntp" };
	struct ntp_screen scr;
	char *t;

	assert_int_equal(ntp_screen_init(&scr, 30, 120), 0);
	ntp_render(&scr, v, h, &in);
	t = ntp_screen_to_text(&scr);
	ntp_screen_free(&scr);
	return t;
}

static void test_top_paused_fit_frozen(void **state)
{
	static struct ntp_snapshot snap[6];
	const struct ntp_snapshot *sp[6] = { &snap[0], &snap[1], &snap[2], &snap[3], &snap[4], &snap[5] };
	const int qd[6] = { 1, 2, 8, 8, 8, 8 };
	struct ntp_history h = { sp, 3 }, later = { sp + 2, 4 };
	struct ntp_view_ctx ctx = { .n_visible = 1, .n_hist = 3, .oldest = 0, .newest = 2 };
	struct ntp_view v;
	char *t;

	(void)state;
	for (int i = 0; i < 6; i++)
		whatif_snap(&snap[i], (uint64_t)i, qd[i]);
	ntp_view_init(&v, 1000, 1);
	ntp_view_apply(&v, NTP_ACT_WHATIF, &ctx);
	v.paused = 1;
	v.shown = 2;
	t = whatif_screen(&v, &h);
	assert_non_null(strstr(t, "4 srv fitted"));
	assert_non_null(strstr(t, "3 load levels"));
	free(t);
	/* three intervals later QD 1 and 2 are gone from the history */
	t = whatif_screen(&v, &later);
	assert_non_null(strstr(t, "PAUSED #2"));
	assert_non_null(strstr(t, "4 srv fitted"));
	assert_non_null(strstr(t, "3 load levels"));
	free(t);
	/* going on: the fit is the history's again */
	v.paused = 0;
	t = whatif_screen(&v, &later);
	assert_null(strstr(t, "4 srv fitted"));
	assert_non_null(strstr(t, "1 load level"));
	free(t);
}

static void test_model_one_load_and_given(void **state)
{
	struct ntp_snap_group g1;
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;
	char err[128];

	(void)state;
	group_from(truth, 30, 1, &g1);
	/* one load level: every stage a delay, IOPS linear in QD, and it says so */
	assert_int_equal(ntp_wi_build(&g1, NULL, 0, NULL, &m), 0);
	assert_true(m.ok);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].source, NTP_WI_SRC_ONE_LOAD);
	assert_int_equal(m.bottleneck, -1);
	assert_int_equal(ntp_wi_predict(&m, 16, &p), 0);
	NEAR(p.iops, 16 * g1.rate, 1e-9);
	NEAR(p.mean_us, g1.e2e_mean_us, 1e-9);
	assert_int_equal(p.saturated, -1);

	/* the user gives the drive's parallelism: QD 16 is the truth's */
	memset(&par, 0, sizeof(par));
	assert_int_equal(ntp_wi_parse_servers("storage=4,network=delay", &par, err, sizeof(err)), 0);
	assert_int_equal(par.servers[NTP_STAGE_STORAGE], 4);
	assert_int_equal(par.servers[NTP_STAGE_NETWORK], -1);
	assert_int_equal(ntp_wi_build(&g1, NULL, 0, &par, &m), 0);
	assert_int_equal(m.st[NTP_STAGE_STORAGE].source, NTP_WI_SRC_GIVEN);
	assert_int_equal(ntp_wi_predict(&m, 16, &p), 0);
	{
		struct ntp_snap_group g16;

		group_from(truth, 30, 16, &g16);
		NEAR(p.iops, g16.rate, 1e-6);
		NEAR(p.mean_us, g16.e2e_mean_us, 1e-6);
	}
	/* the host's tags: past 8, IOPS stays at the tags' and the rest waits in the block layer */
	par.tags = 8;
	assert_int_equal(ntp_wi_build(&g1, NULL, 0, &par, &m), 0);
	assert_false(m.tags_first);	/* the knee (4.4) comes before 8 tags */
	{
		struct ntp_wi_pred p8, p64;

		assert_int_equal(ntp_wi_predict(&m, 8, &p8), 0);
		assert_int_equal(ntp_wi_predict(&m, 64, &p64), 0);
		assert_int_equal(p64.qd_in_flight, 8);
		assert_true(p64.tag_wait_us > 0);
		assert_int_equal(p64.saturated, NTP_STAGE_HOST_BLOCK);
		/* the closed loop: 64 = X (R + Z) */
		NEAR(64, p64.iops / 1e6 * (p64.mean_us + m.think_us), 1e-9);
		assert_true(p64.iops <= 4000 + 1e-6);
	}
	assert_int_equal(ntp_wi_parse_servers("disk=4", &par, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "disk"));
	assert_int_equal(ntp_wi_parse_servers("storage=0", &par, err, sizeof(err)), -1);
}

/* Records from the bio's submission (model.h tag_wait_sum_ns): their host
 * block layer holds the wait for a tag. A closed loop of 12 on 8 tags, the
 * stages a network of 8 customers kept full (the truth: storage 4 servers,
 * the rest delays): the model leaves the wait out of the host block layer's
 * station, infers QD 12 from rate x end to end (the waiting commands
 * included), calibrates the stages on the 8 and gives back the measured
 * IOPS, mean and wait at QD 12; below the tags nothing waits for a tag,
 * and the prediction is the truth's there (docs/what-if.md). */
static void test_bio_tag_wait_held(void **state)
{
	const struct ntp_mva_station st[NTP_STAGE_COUNT] = {
		{ 3, 0 }, { 5, 0 }, { 20, 0 }, { 7, 0 }, { 300, 4 },
	};
	double stage[NTP_STAGE_COUNT], wait;
	struct ntp_mva_result r8, r4;
	struct ntp_snap_group g;
	struct ntp_wi_params par;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;
	char err[128];

	(void)state;
	assert_int_equal(ntp_mva_solve(st, NTP_STAGE_COUNT, 0, 8, &r8), 0);
	assert_int_equal(ntp_mva_solve(st, NTP_STAGE_COUNT, 0, 4, &r4), 0);
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		stage[k] = r8.r[k];
	wait = 12 / r8.x - r8.r_total;	/* the closed loop of 12: 12 = X (R + wait) */
	stage[NTP_STAGE_HOST_BLOCK] += wait;
	group_of(&g, r8.x * 1e6, stage);
	g.bio_records = g.sampled;
	g.tag_wait_sum_ns = (int64_t)llround(wait * 1e3 * (double)g.sampled);
	memset(&par, 0, sizeof(par));
	par.tags = 8;
	assert_int_equal(ntp_wi_parse_servers("storage=4", &par, err, sizeof(err)), 0);
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_true(m.ok);
	assert_true(m.tag_bound);
	assert_int_equal(m.base_qd, 12);
	NEAR(m.base_qd_little, 12, 1e-6);
	NEAR(m.held_little, 8, 1e-6);
	NEAR(m.tag_wait_us, wait, 1e-6);
	NEAR(m.st[NTP_STAGE_HOST_BLOCK].service_us, 3, 1e-6);
	NEAR(m.st[NTP_STAGE_STORAGE].service_us, 300, 1e-6);
	/* the run's own QD: the measurement back, the wait from the tags */
	assert_int_equal(ntp_wi_predict(&m, 12, &p), 0);
	NEAR(p.iops, g.rate, 1e-6);
	NEAR(p.mean_us, g.e2e_mean_us, 1e-6);
	NEAR(p.tag_wait_us, wait, 1e-6);
	NEAR(p.stage_us[NTP_STAGE_HOST_BLOCK], stage[NTP_STAGE_HOST_BLOCK], 1e-6);
	/* below the tags: no wait, the truth's network at 4 */
	assert_int_equal(ntp_wi_predict(&m, 4, &p), 0);
	assert_true(p.tag_wait_us == 0);
	NEAR(p.mean_us, r4.r_total, 1e-6);
	NEAR(p.iops, r4.x * 1e6, 1e-6);
	NEAR(p.stage_us[NTP_STAGE_HOST_BLOCK], 3, 1e-6);
	/* ntprof-top refits when the wait moved (the base QD and the think
	 * time come from it), not for the same numbers again */
	{
		struct ntp_wi_input *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

		assert_non_null(a);
		assert_non_null(b);
		a->base = g;
		a->p = par;
		*b = *a;
		assert_int_equal(ntp_wi_input_same(a, b), 1);
		/* twice the wait, the time holding a tag the same */
		b->base.tag_wait_sum_ns = a->base.tag_wait_sum_ns * 2;
		b->base.stage[NTP_STAGE_HOST_BLOCK].mean_us += wait;
		b->base.e2e_mean_us += wait;
		assert_int_equal(ntp_wi_input_same(a, b), 0);
		free(a);
		free(b);
	}
	/* a QD given below the commands in flight, waiting ones included */
	par.base_qd = 9;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, &par, &m), 0);
	assert_false(m.ok);
	assert_non_null(strstr(m.why, "give at least 11"));
}

/* The tags not held full (an open loop's bursts), or not known: the wait
 * is no closed loop's over them, and the model is that of the commands
 * holding a tag, the same as the records without the stamp give. */
static void test_bio_tag_wait_bursts(void **state)
{
	const double stage[NTP_STAGE_COUNT] = { 2.5, 5, 21, 7.5, 80 };
	const uint32_t qds[4] = { 4, 7, 8, 16 };
	struct ntp_snap_group plain, bio;
	struct ntp_wi_params par;
	struct ntp_wi_model mp, mb;
	struct ntp_wi_pred pp, pb;

	(void)state;
	group_of(&plain, 60000, stage);
	bio = plain;
	bio.bio_records = bio.sampled;
	bio.tag_wait_sum_ns = (int64_t)(52e3 * (double)bio.sampled);
	bio.stage[NTP_STAGE_HOST_BLOCK].mean_us += 52;
	bio.stage[NTP_STAGE_HOST_BLOCK].p99_us += 300;
	bio.e2e_mean_us += 52;
	memset(&par, 0, sizeof(par));
	for (int tags = 8; tags >= 0; tags -= 8) {
		par.tags = (uint32_t)tags;
		assert_int_equal(ntp_wi_build(&plain, NULL, 0, &par, &mp), 0);
		assert_int_equal(ntp_wi_build(&bio, NULL, 0, &par, &mb), 0);
		assert_true(mp.ok && mb.ok);
		assert_false(mb.tag_bound);
		assert_int_equal(mb.base_qd, mp.base_qd);
		assert_int_equal(mb.base_qd, 7);
		NEAR(mb.base_qd_little, 60000 * (116e-6 + 52e-6), 1e-9);
		NEAR(mb.held_little, mp.base_qd_little, 1e-9);
		NEAR(mb.think_us, mp.think_us, 1e-9);
		NEAR(mb.st[NTP_STAGE_HOST_BLOCK].measured_us, 2.5, 1e-9);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(ntp_wi_predict(&mp, qds[i], &pp), 0);
			assert_int_equal(ntp_wi_predict(&mb, qds[i], &pb), 0);
			NEAR(pb.mean_us, pp.mean_us, 1e-9);
			NEAR(pb.iops, pp.iops, 1e-9);
			NEAR(pb.tag_wait_us, pp.tag_wait_us, 1e-9);
			if (qds[i] <= 8)
				assert_true(pb.tag_wait_us == 0);
		}
	}
}

static void test_model_refuses(void **state)
{
	struct ntp_snap_group g;
	struct ntp_wi_model m;
	struct ntp_wi_pred p;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.target_only = 1;
	g.rate = 1000;
	g.e2e_mean_us = 100;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, NULL, &m), 0);
	assert_false(m.ok);
	assert_non_null(strstr(m.why, "host"));
	assert_int_equal(ntp_wi_predict(&m, 4, &p), -1);
	g.target_only = 0;
	g.rate = 0;
	assert_int_equal(ntp_wi_build(&g, NULL, 0, NULL, &m), 0);
	assert_false(m.ok);
}

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)

/* A recording that idles before and after its load: the rate while the
 * group had commands is what gives the closed loop's QD. */
static void test_busy_rate(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_wi_model wm;
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	/* QD 2 for 2 s in the middle of 10 s: 1000 us each, 4000 commands */
	for (int i = 0; i < 2000; i++) {
		for (int q = 0; q < 2; q++) {
			uint64_t t0 = 4000000000ull + (uint64_t)i * 1000000;

			memset(&r, 0, sizeof(r));
			r.side = NTP_SIDE_HOST;
			r.opcode = 0x02;
			r.len = 4096;
			r.cid = (uint16_t)(i * 2 + q);
			snprintf(r.dev, sizeof(r.dev), "nvme0n1");
			SET(&r, NTP_TS_H_BLK_SUBMIT, t0);
			SET(&r, NTP_TS_H_DRV_SUBMIT, t0 + 10000);
			SET(&r, NTP_TS_H_CMD_SENT, t0 + 20000);
			SET(&r, NTP_TS_H_RSP_ARRIVE, t0 + 980000);
			SET(&r, NTP_TS_H_RSP_DRV, t0 + 985000);
			SET(&r, NTP_TS_H_DRV_COMPLETE, t0 + 990000);
			SET(&r, NTP_TS_H_BLK_COMPLETE, t0 + 1000000);
			ntp_model_ingest(m, &r);
		}
	}
	ntp_model_close_interval(m, 10000000000ull, s);
	assert_int_equal(s->n_groups, 1);
	NEAR(s->groups[0].rate, 400, 1e-9);
	NEAR(s->groups[0].busy_rate, 2000, 2e-3);
	assert_int_equal(ntp_wi_build(&s->groups[0], NULL, 0, NULL, &wm), 0);
	assert_int_equal(wm.base_qd, 2);
	assert_false(wm.base_qd_given);
	assert_true(wm.think_us < 2.0);	/* busy_rate is within 0.2 % */
	/* given: a QD 4 loop whose commands spend as long outside the block layer */
	{
		struct ntp_wi_params par;

		memset(&par, 0, sizeof(par));
		par.base_qd = 4;
		assert_int_equal(ntp_wi_build(&s->groups[0], NULL, 0, &par, &wm), 0);
		assert_int_equal(wm.base_qd, 4);
		assert_true(wm.base_qd_given);
		NEAR(wm.think_us, 1000, 2e-3);
	}
	ntp_model_free(m);
	free(s);
}

static void test_parse_and_steps(void **state)
{
	uint32_t qd[8];
	char err[128];

	(void)state;
	assert_int_equal(ntp_wi_parse_qds("4,8,16,32", qd, 8, err, sizeof(err)), 4);
	assert_int_equal(qd[3], 32);
	assert_int_equal(ntp_wi_parse_qds("1024", qd, 8, err, sizeof(err)), 1);
	assert_int_equal(ntp_wi_parse_qds("0", qd, 8, err, sizeof(err)), -1);
	assert_int_equal(ntp_wi_parse_qds("4,", qd, 8, err, sizeof(err)), -1);
	assert_int_equal(ntp_wi_parse_qds("4,x", qd, 8, err, sizeof(err)), -1);
	assert_int_equal(ntp_wi_parse_qds("1025", qd, 8, err, sizeof(err)), -1);
	assert_int_equal(ntp_wi_parse_qds("1,2,3", qd, 2, err, sizeof(err)), -1);
	assert_int_equal(ntp_wi_qd_step(1, 1), 2);
	assert_int_equal(ntp_wi_qd_step(3, 1), 4);
	assert_int_equal(ntp_wi_qd_step(1024, 1), 1024);
	assert_int_equal(ntp_wi_qd_step(1, -1), 1);
	assert_int_equal(ntp_wi_qd_step(4, -1), 2);
	assert_int_equal(ntp_wi_qd_step(5, -1), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mm1_with_think),
		cmocka_unit_test(test_multi_server),
		cmocka_unit_test(test_balanced_network),
		cmocka_unit_test(test_pure_delay),
		cmocka_unit_test(test_model_fits_parallelism),
		cmocka_unit_test(test_calibration_near_saturation),
		cmocka_unit_test(test_poor_fit_rejected),
		cmocka_unit_test(test_run_qd_rounds_up),
		cmocka_unit_test(test_levels_by_noise),
		cmocka_unit_test(test_top_fit_set),
		cmocka_unit_test(test_top_paused_fit_frozen),
		cmocka_unit_test(test_model_one_load_and_given),
		cmocka_unit_test(test_bio_tag_wait_held),
		cmocka_unit_test(test_bio_tag_wait_bursts),
		cmocka_unit_test(test_model_refuses),
		cmocka_unit_test(test_busy_rate),
		cmocka_unit_test(test_parse_and_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
