/* SPDX-License-Identifier: GPL-2.0 */
/* top_fixture.h - hand-built snapshots for ntprof-top's tests: the numbers
 * are those of the examples in docs/stage-model.md and docs/recording.md, so the screens can be read against them. */
#ifndef NTP_TEST_TOP_FIXTURE_H
#define NTP_TEST_TOP_FIXTURE_H

#include <string.h>
#include "core/model/model.h"
#include "core/model/whatif.h"

static void fixture_stage(struct ntp_snap_group *g, int st, double mean, double p99, double rate)
{
	g->stage[st].present = 1;
	g->stage[st].mean_us = mean;
	g->stage[st].p50_us = mean * 0.97;
	g->stage[st].p99_us = p99;
	g->stage[st].p999_us = p99 * 1.05;
	g->stage[st].share = mean / g->e2e_mean_us;
	g->stage[st].avg_qd = mean * rate / 1e6;
}

/* An interval of a closed loop at qd through a known network (storage:
 * 4 servers of 2 ms), the rate and means scaled by noise (1: none): the
 * what-if's load levels, whose fitted parallelism and knee are known.
 * Inline: not every test that takes the fixture uses it. */
static inline void fixture_level_interval(struct ntp_snapshot *s, uint64_t k, int qd, double noise)
{
	static const struct ntp_mva_station truth[NTP_STAGE_COUNT] = {
		{ 6, 0 }, { 14, 0 }, { 120, 0 }, { 25, 0 }, { 2000, 4 },
	};
	struct ntp_mva_result r;
	struct ntp_snap_group *g = &s->groups[0];

	memset(s, 0, sizeof(*s));
	s->index = k;
	s->seconds = 1;
	s->sampling = 1;
	s->role = NTP_ROLE_BOTH;
	s->transport = NTP_TRANSPORT_TCP;
	s->n_groups = 1;
	assert_int_equal(ntp_mva_solve(truth, NTP_STAGE_COUNT, 40, qd, &r), 0);
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme0n1");
	g->rate = r.x * 1e6 / noise;
	g->sampled = (uint64_t)g->rate;
	g->e2e_mean_us = r.r_total * noise;
	g->e2e_p99_us = 1.3 * r.r_total * noise;
	for (int st = 0; st < NTP_STAGE_COUNT; st++)
		fixture_stage(g, st, r.r[st] * noise, 1.3 * r.r[st] * noise, g->rate);
}

static void fixture_comp(struct ntp_snap_group *g, int c, double mean, double p50, double p99)
{
	g->comp[c].n = g->sampled;
	g->comp[c].mean_us = mean;
	g->comp[c].p50_us = p50;
	g->comp[c].p99_us = p99;
	g->comp[c].p999_us = p99 * 1.05;
	g->comp[c].avg_qd = mean * g->rate / 1e6;
}

/* Interval k of a run: a joined 4K read (an SPDK run's numbers), a joined 128K
 * write, and a host-only 4K read on a second namespace (the host's interval line of docs/recording.md). The
 * p99s drift with k so the sparklines have a shape. */
static void fixture_snapshot(struct ntp_snapshot *s, uint64_t k)
{
	struct ntp_snap_group *g;
	double wobble = (double)((k * 7) % 11);

	memset(s, 0, sizeof(*s));
	s->index = k;
	s->start_ns = k * 1000000000ull;
	s->end_ns = (k + 1) * 1000000000ull;
	s->seconds = (double)(k + 1);
	s->sampling = 100;
	s->role = NTP_ROLE_BOTH;
	s->transport = NTP_TRANSPORT_TCP;
	s->lost_events = k > 3 ? 2 : 0;
	s->n_groups = 3;

	g = &s->groups[0];
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme1n1");
	g->sampled = 122;
	g->rate = 12200;
	g->e2e_mean_us = 82.34;
	g->e2e_p50_us = 79.33;
	g->e2e_p99_us = 91.25 + wobble;
	g->e2e_p999_us = 92.29 + wobble;
	fixture_stage(g, NTP_STAGE_HOST_BLOCK, 0.57, 0.80, g->rate);
	fixture_stage(g, NTP_STAGE_HOST_DRIVER, 3.22, 3.61, g->rate);
	fixture_stage(g, NTP_STAGE_NETWORK, 18.23, 22.40, g->rate);
	fixture_stage(g, NTP_STAGE_TARGET_DRIVER, 0.65, 0.79, g->rate);
	fixture_stage(g, NTP_STAGE_STORAGE, 59.67, 66.95, g->rate);
	fixture_comp(g, NTP_COMP_HOST_BLK_SUB, 0.30, 0.29, 0.41);
	fixture_comp(g, NTP_COMP_HOST_DRV_SUB, 3.07, 3.06, 3.30);
	fixture_comp(g, NTP_COMP_WIRE, 10.19, 10.05, 11.78);
	fixture_comp(g, NTP_COMP_TGT_RECV_CMD, 4.26, 4.05, 5.96);
	fixture_comp(g, NTP_COMP_TGT_DRV_SUB, 0.06, 0.06, 0.09);
	fixture_comp(g, NTP_COMP_STORAGE, 59.67, 56.34, 66.95);
	fixture_comp(g, NTP_COMP_TGT_DRV_COMP, 0.59, 0.60, 0.69);
	fixture_comp(g, NTP_COMP_HOST_RECV_RSP, 3.78, 3.77, 4.10);
	fixture_comp(g, NTP_COMP_HOST_DRV_COMP, 0.15, 0.15, 0.20);
	fixture_comp(g, NTP_COMP_HOST_BLK_COMP, 0.27, 0.27, 0.39);

	g = &s->groups[1];
	g->io = NTP_IO_WRITE;
	g->len = 131072;
	strcpy(g->dev, "nvme1n1");
	g->sampled = 31;
	g->rate = 3100;
	g->e2e_mean_us = 240.50;
	g->e2e_p50_us = 231.00;
	g->e2e_p99_us = 301.70 + 3 * wobble;
	g->e2e_p999_us = 320.10 + 3 * wobble;
	fixture_stage(g, NTP_STAGE_HOST_BLOCK, 1.10, 1.90, g->rate);
	fixture_stage(g, NTP_STAGE_HOST_DRIVER, 9.40, 12.10, g->rate);
	fixture_stage(g, NTP_STAGE_NETWORK, 120.00, 160.20, g->rate);
	fixture_stage(g, NTP_STAGE_TARGET_DRIVER, 4.00, 5.20, g->rate);
	fixture_stage(g, NTP_STAGE_STORAGE, 106.00, 131.00, g->rate);

	g = &s->groups[2];
	g->io = NTP_IO_READ;
	g->len = 4096;
	strcpy(g->dev, "nvme6n1");
	g->host_only = 1;
	g->sampled = 154;
	g->rate = 15500;
	g->e2e_mean_us = 73.40;
	g->e2e_p50_us = 72.10;
	g->e2e_p99_us = 80.73 + (k % 5);
	g->e2e_p999_us = 85.00 + (k % 5);
	fixture_stage(g, NTP_STAGE_HOST_BLOCK, 0.73, 0.95, g->rate);
	fixture_stage(g, NTP_STAGE_HOST_DRIVER, 1.47, 1.80, g->rate);
	fixture_stage(g, NTP_STAGE_NETWORK, 71.20, 78.00, g->rate);
	fixture_comp(g, NTP_COMP_HOST_BLK_SUB, 0.40, 0.39, 0.50);
	fixture_comp(g, NTP_COMP_HOST_DRV_SUB, 1.20, 1.19, 1.40);
	fixture_comp(g, NTP_COMP_NET_AND_TARGET, 71.20, 70.00, 78.00);
	fixture_comp(g, NTP_COMP_HOST_RECV_RSP, 0.20, 0.20, 0.30);
	fixture_comp(g, NTP_COMP_HOST_DRV_COMP, 0.07, 0.07, 0.10);
	fixture_comp(g, NTP_COMP_HOST_BLK_COMP, 0.33, 0.32, 0.45);
}

#endif
