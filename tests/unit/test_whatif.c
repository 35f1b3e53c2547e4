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
#include "core/whatif.h"

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
		cmocka_unit_test(test_model_one_load_and_given),
		cmocka_unit_test(test_model_refuses),
		cmocka_unit_test(test_busy_rate),
		cmocka_unit_test(test_parse_and_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
