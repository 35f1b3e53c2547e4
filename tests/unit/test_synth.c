// SPDX-License-Identifier: GPL-2.0
/*
 * test_synth.c - properties of the synthetic path model behind
 * `ntprof generate`: sampling by the shared hash, totals of every command,
 * tag reuse as Linux does it, timestamps in path order, exact fixed delays,
 * records leaving in order, clock offsets, injected gaps, determinism.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/model/stage.h"
#include "core/synth/synth.h"
#include "ntprof_hash.h"

#define NSEC 1000000000ull
#define HAS(r, id) (((r)->ts_valid >> (id)) & 1u)

struct run {
	struct ntp_record *h, *t;
	size_t nh, nt, cap_h, cap_t;
	uint64_t seconds;
	struct ntp_synth *s;
};

static void push(struct ntp_record **a, size_t *n, size_t *cap, const struct ntp_record *r)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 1024;
		*a = realloc(*a, *cap * sizeof(**a));
		assert_non_null(*a);
	}
	(*a)[(*n)++] = *r;
}

/* Runs the model to the end, keeping every record; checks event order. */
static void run(const struct ntp_synth_config *c, struct run *out)
{
	char err[256];
	struct ntp_record rec;
	uint64_t t, last = 0, last_second = 0;
	enum ntp_synth_event ev;

	memset(out, 0, sizeof(*out));
	out->s = ntp_synth_new(c, err, sizeof(err));
	if (!out->s)
		fail_msg("ntp_synth_new: %s", err);
	while ((ev = ntp_synth_next(out->s, &rec, &t)) != NTP_SYNTH_END) {
		assert_true(t >= last);		/* events in simulated-time order */
		last = t;
		if (ev == NTP_SYNTH_SECOND) {
			assert_int_equal(t, last_second + NSEC);
			last_second = t;
			out->seconds++;
			continue;
		}
		if (rec.side == NTP_SIDE_HOST)
			push(&out->h, &out->nh, &out->cap_h, &rec);
		else
			push(&out->t, &out->nt, &out->cap_t, &rec);
	}
}

static void run_free(struct run *r)
{
	ntp_synth_free(r->s);
	free(r->h);
	free(r->t);
}

static void fixed_delays(struct ntp_synth_config *c, double us)
{
	for (int i = 0; i < NTP_SEG_COUNT; i++)
		c->delay[i] = (struct ntp_delay){ NTP_DIST_FIXED, us * 1000 * (i + 1), 0 };
}

static void test_sampled_fraction_and_totals(void **state)
{
	struct ntp_synth_config c;
	struct ntp_total tot[16];
	struct run r;
	uint64_t sum = 0;
	size_t n;
	double p = 0.01, sd;

	(void)state;
	ntp_synth_defaults(&c);
	c.count = 300000;
	c.duration_ns = 0;
	c.rate = 1e6;
	c.qd = 64;
	c.sampling = 100;
	c.sizes[0] = 4096;
	c.sizes[1] = 131072;
	c.nsizes = 2;
	c.read_pct = 70;
	run(&c, &r);
	assert_int_equal(ntp_synth_issued(r.s), 300000);
	sd = sqrt(300000 * p * (1 - p));
	assert_true(fabs((double)r.nh - 3000) < 6 * sd);
	assert_int_equal(r.nh, ntp_synth_sampled(r.s));
	assert_int_equal(r.nt, r.nh);
	/* every record is one the shared hash picks, and only those */
	for (size_t i = 0; i < r.nh; i++)
		assert_true(ntp_sample_pick(r.h[i].cid, r.h[i].slba, r.h[i].nlb, 100));
	/* the totals count every command, per group, on both sides */
	n = ntp_synth_totals(r.s, NTP_SIDE_HOST, 0, tot, 16);
	assert_int_equal(n, 4);	/* read/write x 4K/128K */
	for (size_t i = 0; i < n; i++) {
		sum += tot[i].count.commands;
		assert_int_equal(tot[i].count.bytes, tot[i].count.commands * tot[i].key.len);
		assert_string_equal(tot[i].key.dev, "nvme1n1");
	}
	assert_int_equal(sum, 300000);
	n = ntp_synth_totals(r.s, NTP_SIDE_TARGET, 0, tot, 16);
	sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += tot[i].count.commands;
	assert_int_equal(sum, 300000);
	run_free(&r);
}

static int by_submit(const void *a, const void *b)
{
	const struct ntp_record *x = a, *y = b;

	if (x->qid != y->qid)
		return x->qid - y->qid;
	if ((x->cid & 0xfff) != (y->cid & 0xfff))
		return (x->cid & 0xfff) - (y->cid & 0xfff);
	return x->ts[NTP_TS_H_BLK_SUBMIT] < y->ts[NTP_TS_H_BLK_SUBMIT] ? -1 : 1;
}

/* Tags come from a pool of QD per queue, are reused only once free, and the
 * generation counter in cid bits 15:12 advances on every reuse. */
static void test_tag_reuse(void **state)
{
	struct ntp_synth_config c;
	struct run r;
	size_t reuses = 0;
	unsigned used[8] = { 0 };

	(void)state;
	ntp_synth_defaults(&c);
	c.count = 20000;
	c.duration_ns = 0;
	c.rate = 2e6;		/* far beyond what QD 8 serves: tags are the limit */
	c.qd = 8;
	c.queues = 2;
	c.sampling = 1;
	run(&c, &r);
	assert_int_equal(r.nh, 20000);
	qsort(r.h, r.nh, sizeof(*r.h), by_submit);
	for (size_t i = 0; i < r.nh; i++) {
		const struct ntp_record *a = &r.h[i];

		assert_true((a->cid & 0xfff) < 8);
		assert_true(a->qid >= 1 && a->qid <= 2);
		used[a->cid & 0xfff] = 1;
		if (i + 1 < r.nh && r.h[i + 1].qid == a->qid && (r.h[i + 1].cid & 0xfff) == (a->cid & 0xfff)) {
			const struct ntp_record *b = &r.h[i + 1];

			/* the next use of the tag starts after this one completed */
			assert_true(b->ts[NTP_TS_H_BLK_SUBMIT] >= a->ts[NTP_TS_H_BLK_COMPLETE]);
			assert_int_equal(b->cid >> 12, ((a->cid >> 12) + 1) & 0xf);
			reuses++;
		}
	}
	for (int t = 0; t < 8; t++)
		assert_true(used[t]);
	assert_int_equal(reuses, 20000 - 16);	/* every use but each tag's first */
	/* at most QD commands in flight per queue: the busiest moment */
	{
		size_t max_inflight = 0;

		for (size_t i = 0; i < r.nh; i += 97) {
			size_t k = 0;

			for (size_t j = 0; j < r.nh; j++)
				if (r.h[j].qid == r.h[i].qid &&
				    r.h[j].ts[NTP_TS_H_BLK_SUBMIT] <= r.h[i].ts[NTP_TS_H_BLK_SUBMIT] &&
				    r.h[j].ts[NTP_TS_H_BLK_COMPLETE] > r.h[i].ts[NTP_TS_H_BLK_SUBMIT])
					k++;
			if (k > max_inflight)
				max_inflight = k;
		}
		assert_true(max_inflight <= 8);
		assert_true(max_inflight >= 7);	/* and the pool is really used */
	}
	run_free(&r);
}

static void check_order(const struct ntp_record *r, const int *ids, size_t n)
{
	uint64_t prev = 0;

	for (size_t i = 0; i < n; i++) {
		if (!HAS(r, ids[i]))
			continue;
		assert_true(r->ts[ids[i]] >= prev);
		prev = r->ts[ids[i]];
	}
}

/* Path order on each side, the flows' timestamp sets, exact fixed delays,
 * the wire = host's wait - target's residence, records leaving in order. */
static void test_path_order(void **state)
{
	static const int host_order[] = {
		NTP_TS_H_BLK_SUBMIT, NTP_TS_H_DRV_SUBMIT, NTP_TS_H_CMD_SENT, NTP_TS_H_R2T_ARRIVE,
		NTP_TS_H_R2T_DRV, NTP_TS_H_DATA_SENT, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_RSP_DRV,
		NTP_TS_H_DRV_COMPLETE, NTP_TS_H_BLK_COMPLETE,
	};
	static const int tgt_order[] = {
		NTP_TS_T_CMD_ARRIVE, NTP_TS_T_CMD_RECV, NTP_TS_T_R2T_SENT, NTP_TS_T_DATA_ARRIVE,
		NTP_TS_T_DATA_RECV, NTP_TS_T_STORAGE_SUBMIT, NTP_TS_T_STORAGE_DONE, NTP_TS_T_RSP_QUEUED,
		NTP_TS_T_RSP_SENT,
	};
	const uint32_t r2t = 1u << NTP_TS_H_R2T_ARRIVE | 1u << NTP_TS_H_R2T_DRV | 1u << NTP_TS_H_DATA_SENT;
	const uint32_t tdata = 1u << NTP_TS_T_R2T_SENT | 1u << NTP_TS_T_DATA_ARRIVE | 1u << NTP_TS_T_DATA_RECV;
	struct ntp_synth_config c;
	struct run r;
	size_t nread = 0, ninline = 0, nr2t = 0;

	(void)state;
	ntp_synth_defaults(&c);
	fixed_delays(&c, 1);	/* segment i takes (i + 1) us exactly */
	c.link_gbps = 0;
	c.count = 5000;
	c.duration_ns = 0;
	c.sampling = 1;
	c.read_pct = 50;
	c.sizes[0] = 4096;
	c.sizes[1] = 65536;
	c.nsizes = 2;
	c.inline_max = 8192;
	c.target_clock_offset = -777 * (int64_t)NSEC;	/* target's clock behind the host's */
	c.host_clock0 = 1000 * NSEC;
	run(&c, &r);
	assert_int_equal(r.nh, 5000);
	assert_int_equal(r.nt, 5000);
	for (size_t i = 1; i < r.nh; i++)	/* leave order: block completion */
		assert_true(r.h[i].ts[NTP_TS_H_BLK_COMPLETE] >= r.h[i - 1].ts[NTP_TS_H_BLK_COMPLETE]);
	for (size_t i = 1; i < r.nt; i++)	/* leave order: response sent */
		assert_true(r.t[i].ts[NTP_TS_T_RSP_SENT] >= r.t[i - 1].ts[NTP_TS_T_RSP_SENT]);
	for (size_t i = 0; i < r.nh; i++) {
		const struct ntp_record *h = &r.h[i], *t = NULL;
		int64_t wait, residence;

		for (size_t j = 0; j < r.nt && !t; j++)	/* unique at -s 1: seq of cntlid 1 matches */
			if (r.t[j].seq == h->seq)
				t = &r.t[j];
		assert_non_null(t);
		assert_int_equal(t->cid, h->cid);
		assert_int_equal(t->slba, h->slba);
		check_order(h, host_order, 10);
		check_order(t, tgt_order, 9);
		assert_int_equal(h->ts[NTP_TS_H_DRV_SUBMIT] - h->ts[NTP_TS_H_BLK_SUBMIT], 1000);
		assert_int_equal(h->ts[NTP_TS_H_CMD_SENT] - h->ts[NTP_TS_H_DRV_SUBMIT], 2000);
		assert_int_equal(t->ts[NTP_TS_T_STORAGE_DONE] - t->ts[NTP_TS_T_STORAGE_SUBMIT],
				 (NTP_SEG_STORAGE + 1) * 1000);
		assert_int_equal(h->ts[NTP_TS_H_BLK_COMPLETE] - h->ts[NTP_TS_H_DRV_COMPLETE],
				 (NTP_SEG_HOST_BLOCK_COMP + 1) * 1000);
		/* target clock = host clock - 777 s: the command arrives one wire after it left */
		assert_int_equal(t->ts[NTP_TS_T_CMD_ARRIVE] + 777 * NSEC - h->ts[NTP_TS_H_CMD_SENT],
				 (NTP_SEG_WIRE + 1) * 1000);
		/* the wire is the host's wait minus the target's residence: two crossings */
		wait = (int64_t)(h->ts[NTP_TS_H_RSP_ARRIVE] - h->ts[NTP_TS_H_CMD_SENT]);
		residence = (int64_t)(t->ts[NTP_TS_T_RSP_SENT] - t->ts[NTP_TS_T_CMD_ARRIVE]);
		if (h->opcode == 0x01 && h->len > 8192)
			/* R2T: the data phase's round trip is inside the target's
			 * residence; its wire part is the target's R2T-to-data gap
			 * minus the host's R2T-to-data handling */
			wait += (int64_t)(t->ts[NTP_TS_T_DATA_ARRIVE] - t->ts[NTP_TS_T_R2T_SENT]) -
				(int64_t)(h->ts[NTP_TS_H_DATA_SENT] - h->ts[NTP_TS_H_R2T_ARRIVE]);
		assert_int_equal(wait - residence, 2 * (NTP_SEG_WIRE + 1) * 1000 +
				 (h->opcode == 0x01 && h->len > 8192 ? 2 * (NTP_SEG_WIRE + 1) * 1000 : 0));
		if (h->opcode == 0x02) {
			nread++;
			assert_int_equal(h->ts_valid & r2t, 0);
			assert_int_equal(t->ts_valid & tdata, 0);
		} else if (h->len <= 8192) {
			ninline++;
			assert_int_equal(h->ts_valid & r2t, 0);
			assert_int_equal(t->ts_valid & tdata, 0);
		} else {
			nr2t++;
			assert_int_equal(h->ts_valid & r2t, r2t);
			assert_int_equal(t->ts_valid & tdata, tdata);
		}
		assert_false(HAS(h, NTP_TS_H_SEND_DONE));	/* RDMA only */
		assert_int_equal(h->ts_valid >> NTP_TS_T_CMD_ARRIVE, 0);	/* no target slots on the host */
		assert_int_equal(t->ts_valid & ((1u << NTP_TS_T_CMD_ARRIVE) - 1), 0);
		assert_int_equal(h->flags, NTP_REC_F_SAMPLED_EXACT);
	}
	assert_true(nread > 2000 && ninline > 1000 && nr2t > 1000);
	run_free(&r);
}

/* Distributions: sample means near the configured mean. */
static void test_distributions(void **state)
{
	struct ntp_rng rng;
	static const uint8_t dists[] = { NTP_DIST_FIXED, NTP_DIST_UNIFORM, NTP_DIST_EXP, NTP_DIST_LOGNORMAL };

	(void)state;
	ntp_rng_seed(&rng, 99);
	for (size_t k = 0; k < 4; k++) {
		struct ntp_delay d = { dists[k], 80000, 0.5 };
		double sum = 0, min = 1e300, max = 0;
		const int n = 200000;

		for (int i = 0; i < n; i++) {
			double v = ntp_delay_draw(&rng, &d);

			sum += v;
			min = v < min ? v : min;
			max = v > max ? v : max;
		}
		/* exponential: sd = mean, so the mean of 200k is within 1 % (4.5 sd) */
		assert_true(fabs(sum / n - 80000) < 800);
		assert_true(min >= 0);
		if (dists[k] == NTP_DIST_UNIFORM)
			assert_true(min >= 40000 && max <= 120000);
		if (dists[k] == NTP_DIST_FIXED)
			assert_true(min == 80000 && max == 80000);
	}
}

static void test_deterministic(void **state)
{
	struct ntp_synth_config c;
	struct run a, b, d;

	(void)state;
	ntp_synth_defaults(&c);
	c.duration_ns = NSEC / 10;
	c.sampling = 10;
	run(&c, &a);
	run(&c, &b);
	c.seed = 2;
	run(&c, &d);
	assert_int_equal(a.nh, b.nh);
	assert_memory_equal(a.h, b.h, a.nh * sizeof(*a.h));
	assert_memory_equal(a.t, b.t, a.nt * sizeof(*a.t));
	assert_true(a.nh != d.nh || memcmp(a.h, d.h, a.nh * sizeof(*a.h)));
	run_free(&a);
	run_free(&b);
	run_free(&d);
}

/* Gaps for the join and fallback tests, several hosts, per-second events. */
static void test_gaps_hosts_seconds(void **state)
{
	struct ntp_synth_config c;
	struct run r;
	size_t miss = 0, seen[4] = { 0 };

	(void)state;
	ntp_synth_defaults(&c);
	c.duration_ns = 3 * NSEC + NSEC / 2;
	c.rate = 20000;
	c.sampling = 1;
	c.hosts = 3;
	c.miss_rsp_sent = 0.10;
	c.drop_target = 0.20;
	run(&c, &r);
	assert_int_equal(r.seconds, 3);	/* 1 s, 2 s, 3 s; the end closes the file */
	/* about 70000 commands: 20 % without a target record, 10 % of the rest without RSP_SENT */
	assert_true(fabs((double)r.nt / r.nh - 0.80) < 0.01);
	for (size_t i = 0; i < r.nt; i++) {
		miss += !HAS(&r.t[i], NTP_TS_T_RSP_SENT);
		assert_true(HAS(&r.t[i], NTP_TS_T_STORAGE_DONE));	/* the fallback's time is there */
	}
	assert_true(fabs((double)miss / r.nt - 0.10) < 0.01);
	for (size_t i = 0; i < r.nh; i++) {
		assert_true(r.h[i].cntlid >= 1 && r.h[i].cntlid <= 3);
		seen[r.h[i].cntlid]++;
	}
	for (int k = 1; k <= 3; k++)
		assert_true(seen[k] > r.nh / 4);
	/* each host is its own machine: clocks apart, one target clock */
	assert_true(ntp_synth_clock(r.s, NTP_SIDE_HOST, 2, 0) != ntp_synth_clock(r.s, NTP_SIDE_HOST, 1, 0));
	run_free(&r);
}

/*
 * The generator and the stage model agree: with fixed delays, every
 * component ntp_breakdown_compute() finds on a joined pair is exactly the
 * delay configured for its segments, for each flow and transport, and the
 * components add up to end to end. Clocks 777 s apart.
 */
static void check_sums_back(uint8_t transport)
{
	struct ntp_synth_config c;
	struct run r;
	int64_t D[NTP_SEG_COUNT], w;
	size_t flows[3] = { 0 };

	ntp_synth_defaults(&c);
	fixed_delays(&c, 1);	/* segment i: (i + 1) us */
	for (int i = 0; i < NTP_SEG_COUNT; i++)
		D[i] = (int64_t)c.delay[i].mean_ns;
	w = D[NTP_SEG_WIRE];
	c.transport = transport;
	c.link_gbps = 0;
	c.count = 3000;
	c.duration_ns = 0;
	c.sampling = 1;
	c.read_pct = 40;
	c.sizes[0] = 4096;
	c.sizes[1] = 131072;
	c.nsizes = 2;
	c.target_clock_offset = -777 * (int64_t)NSEC;
	run(&c, &r);
	assert_int_equal(r.nh, r.nt);
	for (size_t i = 0; i < r.nh; i++) {
		const struct ntp_record *h = &r.h[i], *t = NULL;
		struct ntp_breakdown b;
		int write = h->opcode == 0x01, fetch = write && h->len > c.inline_max;
		int64_t sum = 0;

		for (size_t j = 0; j < r.nt && !t; j++)
			if (r.t[j].seq == h->seq)
				t = &r.t[j];
		assert_non_null(t);
		assert_int_equal(ntp_breakdown_compute(h, t, &b), 0);
		assert_int_equal(b.flags, 0);
		assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], D[NTP_SEG_HOST_BLOCK_SUB]);
		assert_int_equal(b.comp[NTP_COMP_HOST_DRV_SUB], D[NTP_SEG_HOST_DRIVER_SUB]);
		/* one round trip, or two for a TCP R2T write */
		assert_int_equal(b.comp[NTP_COMP_WIRE],
				 fetch && transport == NTP_TRANSPORT_TCP ? 4 * w : 2 * w);
		assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], D[NTP_SEG_TARGET_RECV]);
		assert_int_equal(b.comp[NTP_COMP_TGT_DRV_SUB], D[NTP_SEG_TARGET_DRIVER_SUB]);
		assert_int_equal(b.comp[NTP_COMP_STORAGE], D[NTP_SEG_STORAGE]);
		assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP],
				 D[NTP_SEG_TARGET_DRIVER_COMP] + D[NTP_SEG_TARGET_SEND]);
		assert_int_equal(b.comp[NTP_COMP_HOST_RECV_RSP], D[NTP_SEG_HOST_RECV]);
		assert_int_equal(b.comp[NTP_COMP_HOST_DRV_COMP], D[NTP_SEG_HOST_DRIVER_COMP]);
		assert_int_equal(b.comp[NTP_COMP_HOST_BLK_COMP], D[NTP_SEG_HOST_BLOCK_COMP]);
		if (fetch) {
			if (transport == NTP_TRANSPORT_TCP) {
				assert_int_equal(b.comp[NTP_COMP_HOST_RECV_R2T], D[NTP_SEG_HOST_RECV]);
				assert_int_equal(b.comp[NTP_COMP_HOST_DRV_DATA], D[NTP_SEG_HOST_DRIVER_DATA]);
			} else {
				assert_int_equal(b.comp[NTP_COMP_DATA_XFER], 2 * w);	/* the RDMA READ */
			}
			assert_int_equal(b.comp[NTP_COMP_TGT_RECV_DATA], D[NTP_SEG_TARGET_RECV]);
			assert_int_equal(b.comp[NTP_COMP_TGT_DRV_DATA], D[NTP_SEG_TARGET_DRIVER_DATA]);
		}
		for (int k = 0; k < NTP_COMP_COUNT; k++)
			if (b.comp_present & (1u << k))
				sum += b.comp[k];
		assert_int_equal(sum, b.e2e);
		flows[fetch ? 2 : write]++;
	}
	assert_true(flows[0] > 500 && flows[1] > 300 && flows[2] > 300);
	run_free(&r);
}

static void test_stage_model_sums_back(void **state)
{
	(void)state;
	check_sums_back(NTP_TRANSPORT_TCP);
	check_sums_back(NTP_TRANSPORT_RDMA);
}

static void test_bad_config(void **state)
{
	struct ntp_synth_config c;
	char err[256];

	(void)state;
	ntp_synth_defaults(&c);
	c.qd = 5000;
	assert_null(ntp_synth_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "qd"));
	ntp_synth_defaults(&c);
	c.sizes[0] = 1000;	/* not a multiple of 512 */
	assert_null(ntp_synth_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "size"));
	ntp_synth_defaults(&c);
	assert_int_equal(ntp_seg_by_name("storage"), NTP_SEG_STORAGE);
	assert_int_equal(ntp_seg_by_name("nope"), -1);
	for (int i = 0; i < NTP_SEG_COUNT; i++)
		assert_int_equal(ntp_seg_by_name(ntp_seg_name(i)), i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampled_fraction_and_totals),
		cmocka_unit_test(test_tag_reuse),
		cmocka_unit_test(test_path_order),
		cmocka_unit_test(test_distributions),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_gaps_hosts_seconds),
		cmocka_unit_test(test_stage_model_sums_back),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests_name("synth", tests, NULL, NULL);
}
