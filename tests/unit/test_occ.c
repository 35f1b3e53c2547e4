// SPDX-License-Identifier: GPL-2.0
/* test_occ.c - --exact-queues: the kernel's per-command stage sums
 * (bpf/ntprof_occ.h) measure the very spans of src/core/model/stage.c; the reduction
 * to counted queue depths (src/core/model/occ.c) with real numbers; the model puts
 * them in place of Little's law for every command, sampled or not; the .ntp
 * totals rows carry them (format 1.1) and a 1.0 file still reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../bpf/ntprof_occ.h"
#include "core/model/model.h"
#include "core/model/occ.h"
#include "core/model/stage.h"
#include "core/synth/synth.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)
#define SEC 1000000000ull

/* A 4 KiB read, host and target (target clock 3 days ahead). */
static void read_pair(struct ntp_record *h, struct ntp_record *t)
{
	const uint64_t T0 = 5 * SEC, TT = 259200 * SEC + 12345;

	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = NTP_TRANSPORT_TCP;
	SET(h, NTP_TS_H_BLK_SUBMIT, T0);
	SET(h, NTP_TS_H_DRV_SUBMIT, T0 + 2000);		/* block 2 us */
	SET(h, NTP_TS_H_CMD_SENT, T0 + 7000);		/* driver 5 us */
	SET(t, NTP_TS_T_CMD_ARRIVE, TT);
	SET(t, NTP_TS_T_CMD_RECV, TT + 3000);		/* target receive 3 us */
	SET(t, NTP_TS_T_STORAGE_SUBMIT, TT + 4000);	/* target driver 1 us */
	SET(t, NTP_TS_T_STORAGE_DONE, TT + 64000);	/* storage 60 us */
	SET(t, NTP_TS_T_RSP_QUEUED, TT + 65000);
	SET(t, NTP_TS_T_RSP_SENT, TT + 66500);		/* target driver 2.5 us */
	SET(h, NTP_TS_H_RSP_ARRIVE, T0 + 87000);	/* host wait 80 us */
	SET(h, NTP_TS_H_RSP_DRV, T0 + 91000);		/* host receive 4 us */
	SET(h, NTP_TS_H_DRV_COMPLETE, T0 + 99000);	/* driver 8 us */
	SET(h, NTP_TS_H_BLK_COMPLETE, T0 + 100000);	/* block 1 us */
}

static void test_read_by_hand(void **state)
{
	struct ntp_record h, t;
	__u64 hn[NTP_OCC_SLOTS], tn[NTP_OCC_SLOTS];

	(void)state;
	read_pair(&h, &t);
	assert_int_equal(ntp_occ_host(&h, hn), 0);
	assert_int_equal(ntp_occ_target(&t, tn), 0);
	assert_int_equal(hn[NTP_OCC_H_BLOCK], 3000);
	assert_int_equal(hn[NTP_OCC_H_DRIVER], 13000);
	assert_int_equal(hn[NTP_OCC_H_RECV], 4000);
	assert_int_equal(hn[NTP_OCC_H_WAIT], 80000);
	assert_int_equal(tn[NTP_OCC_T_RECV], 3000);
	assert_int_equal(tn[NTP_OCC_T_DRIVER], 3500);
	assert_int_equal(tn[NTP_OCC_T_STORAGE], 60000);
	assert_int_equal(tn[NTP_OCC_T_XFER], 0);
	/* the network of the joined command: 80 - 66.5 wire + 3 + 4 receive = 20.5 us */
	struct ntp_group_occ ho = { .summed = 1 }, to = { .summed = 1 };
	struct ntp_occ_qd q;

	memcpy(ho.ns, hn, sizeof(hn));
	memcpy(to.ns, tn, sizeof(tn));
	assert_int_equal(ntp_occ_stage_qd(&ho, &to, 1e-6, &q), 0);	/* over 1 us: QD = us */
	assert_true(q.stage[NTP_STAGE_NETWORK] > 20.5 - 1e-9 && q.stage[NTP_STAGE_NETWORK] < 20.5 + 1e-9);
	/* the bio's stamp: the block layer from the bio's submission, as
	 * stage.c's host block stage (the tag wait counted, not only sampled) */
	{
		struct ntp_record hb = h;
		struct ntp_breakdown b;

		SET(&hb, NTP_TS_H_BIO_SUBMIT, h.ts[NTP_TS_H_BLK_SUBMIT] - 40000);
		assert_int_equal(ntp_occ_host(&hb, hn), 0);
		assert_int_equal(hn[NTP_OCC_H_BLOCK], 43000);
		assert_int_equal(ntp_breakdown_compute(&hb, &t, &b), 0);
		assert_int_equal(b.stage[NTP_STAGE_HOST_BLOCK], (int64_t)hn[NTP_OCC_H_BLOCK]);
	}
	/* a missing response arrival: incomplete, as stage.c says */
	h.ts_valid &= ~(1u << NTP_TS_H_RSP_ARRIVE);
	assert_int_equal(ntp_occ_host(&h, hn), -1);
	struct ntp_group_occ o = { 0 };

	ntp_occ_add(&o, &h);
	assert_int_equal(o.incomplete, 1);
	assert_int_equal(o.summed, 0);
	/* the response fallback (docs/stage-model.md): STORAGE_DONE stands in for a missing RSP_SENT */
	t.flags |= NTP_REC_F_RSP_FALLBACK;
	assert_int_equal(ntp_occ_target(&t, tn), 0);
	assert_int_equal(tn[NTP_OCC_T_DRIVER], 1000);
}

/* The reduction with real numbers: 1000 commands' sums over 0.5 s. */
static void test_stage_qd_numbers(void **state)
{
	struct ntp_group_occ h = { .summed = 1000, .ns = { 2000000, 5000000, 4000000, 100000000 } };
	struct ntp_group_occ t = { .summed = 1000, .ns = { 3000000, 7000000, 80000000, 0 } };
	struct ntp_occ_qd q;

	(void)state;
#define NEAR(a, b) assert_true((a) > (b) - 1e-12 && (a) < (b) + 1e-12)
	assert_int_equal(ntp_occ_stage_qd(&h, &t, 0.5, &q), 0);
	NEAR(q.stage[NTP_STAGE_HOST_BLOCK], 0.004);
	NEAR(q.stage[NTP_STAGE_HOST_DRIVER], 0.010);
	NEAR(q.stage[NTP_STAGE_NETWORK], 0.034);	/* (100 + 4 - 7 - 80) ms / 0.5 s */
	NEAR(q.stage[NTP_STAGE_TARGET_DRIVER], 0.014);
	NEAR(q.stage[NTP_STAGE_STORAGE], 0.160);
	NEAR(q.host_recv, 0);
	assert_int_equal(q.summed, 1000);
	/* host only: network and target together, the receive path apart */
	assert_int_equal(ntp_occ_stage_qd(&h, NULL, 0.5, &q), 0);
	NEAR(q.stage[NTP_STAGE_NETWORK], 0.208);
	NEAR(q.host_recv, 0.008);
	NEAR(q.stage[NTP_STAGE_STORAGE], 0);
	/* target only: its receive paths (and the R2T data transfer) */
	t.ns[NTP_OCC_T_XFER] = 1000000;
	assert_int_equal(ntp_occ_stage_qd(NULL, &t, 0.5, &q), 0);
	NEAR(q.stage[NTP_STAGE_NETWORK], 0.008);
	NEAR(q.stage[NTP_STAGE_STORAGE], 0.160);
	NEAR(q.stage[NTP_STAGE_HOST_BLOCK], 0);
	/* a loopback wire can make the network sum negative: signed */
	h.ns[NTP_OCC_H_WAIT] = 80000000;
	h.ns[NTP_OCC_H_RECV] = 0;
	t.ns[NTP_OCC_T_DRIVER] = 1000000;
	assert_int_equal(ntp_occ_stage_qd(&h, &t, 1.0, &q), 0);
	NEAR(q.stage[NTP_STAGE_NETWORK], -0.001);
	assert_int_equal(ntp_occ_stage_qd(&h, &t, 0, &q), -1);
	/* cumulative sums: the growth of an interval */
	struct ntp_group_occ a = h, d;

	ntp_occ_add_to(&a, &h);
	ntp_occ_delta(&a, &h, &d);
	assert_memory_equal(&d, &h, sizeof(d));
#undef NEAR
}

/* Synthetic runs, every flow: per command, the sums reproduce stage.c's stages
 * exactly (host only, target only, joined), to the nanosecond. */
static void check_flows(uint8_t transport, uint32_t read_pct, uint32_t size, double miss)
{
	struct ntp_synth_config c;
	struct ntp_synth *s;
	struct ntp_record rec, *hs, *ts;
	size_t nh = 0, nt = 0, cap = 4096, checked = 0;
	uint64_t t;
	char err[128];
	enum ntp_synth_event ev;

	ntp_synth_defaults(&c);
	c.transport = transport;
	c.read_pct = read_pct;
	c.sizes[0] = size;
	c.nsizes = 1;
	c.sampling = 1;
	c.count = 2000;
	c.duration_ns = 0;
	c.miss_rsp_sent = miss;
	c.target_clock_offset = -123456789;
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	hs = calloc(cap, sizeof(*hs));
	ts = calloc(cap, sizeof(*ts));
	assert_non_null(hs);
	assert_non_null(ts);
	while ((ev = ntp_synth_next(s, &rec, &t)) != NTP_SYNTH_END) {
		if (ev != NTP_SYNTH_RECORD)
			continue;
		/* one controller: a command's host and target seq are equal */
		if (rec.side == NTP_SIDE_HOST && rec.seq < cap)
			hs[rec.seq] = rec, nh++;
		else if (rec.side == NTP_SIDE_TARGET && rec.seq < cap)
			ts[rec.seq] = rec, nt++;
	}
	assert_int_equal(nh, 2000);
	assert_int_equal(nt, 2000);
	for (size_t i = 0; i < 2000; i++) {
		struct ntp_breakdown bh, bt, bj;
		__u64 hn[NTP_OCC_SLOTS] = { 0 }, tn[NTP_OCC_SLOTS] = { 0 };

		assert_int_equal(ntp_breakdown_compute(&hs[i], NULL, &bh), 0);
		assert_int_equal(ntp_breakdown_compute(NULL, &ts[i], &bt), 0);
		assert_int_equal(ntp_breakdown_compute(&hs[i], &ts[i], &bj), 0);
		assert_int_equal(ntp_occ_host(&hs[i], hn), 0);
		assert_int_equal(ntp_occ_target(&ts[i], tn), 0);
		/* host only */
		assert_int_equal((int64_t)hn[NTP_OCC_H_BLOCK], bh.stage[NTP_STAGE_HOST_BLOCK]);
		assert_int_equal((int64_t)hn[NTP_OCC_H_DRIVER], bh.stage[NTP_STAGE_HOST_DRIVER]);
		assert_int_equal((int64_t)(hn[NTP_OCC_H_RECV] + hn[NTP_OCC_H_WAIT]), bh.stage[NTP_STAGE_NETWORK]);
		assert_int_equal((int64_t)(hn[NTP_OCC_H_RECV] + hn[NTP_OCC_H_WAIT] + hn[NTP_OCC_H_BLOCK] +
					   hn[NTP_OCC_H_DRIVER]), bh.e2e);
		/* target only */
		assert_int_equal((int64_t)(tn[NTP_OCC_T_RECV] + tn[NTP_OCC_T_XFER]), bt.stage[NTP_STAGE_NETWORK]);
		assert_int_equal((int64_t)tn[NTP_OCC_T_DRIVER], bt.stage[NTP_STAGE_TARGET_DRIVER]);
		assert_int_equal((int64_t)tn[NTP_OCC_T_STORAGE], bt.stage[NTP_STAGE_STORAGE]);
		/* joined: the network is the host's wait minus the target's residence plus the receive paths */
		assert_int_equal((int64_t)(hn[NTP_OCC_H_WAIT] + hn[NTP_OCC_H_RECV] - tn[NTP_OCC_T_DRIVER] -
					   tn[NTP_OCC_T_STORAGE]), bj.stage[NTP_STAGE_NETWORK]);
		assert_int_equal((int64_t)tn[NTP_OCC_T_DRIVER], bj.stage[NTP_STAGE_TARGET_DRIVER]);
		assert_int_equal((int64_t)hn[NTP_OCC_H_BLOCK], bj.stage[NTP_STAGE_HOST_BLOCK]);
		checked++;
	}
	assert_int_equal(checked, 2000);
	free(hs);
	free(ts);
	ntp_synth_free(s);
}

static void test_same_spans_as_stage_c(void **state)
{
	(void)state;
	check_flows(NTP_TRANSPORT_TCP, 100, 4096, 0);		/* reads */
	check_flows(NTP_TRANSPORT_TCP, 0, 131072, 0);		/* R2T writes */
	check_flows(NTP_TRANSPORT_TCP, 0, 4096, 0);		/* in-capsule writes */
	check_flows(NTP_TRANSPORT_RDMA, 0, 131072, 0);		/* RDMA READ writes */
	check_flows(NTP_TRANSPORT_TCP, 50, 4096, 0.3);		/* fallback for RSP_SENT */
}

/*
 * The model with a synthetic run at QD 8 recorded 1 in 10 with exact queues:
 * the counted QDs are the sums of EVERY command's stage times over the
 * interval, checked against the same run recorded 1 in 1 (same seed, same
 * commands) reduced by stage.c; with 1 in 1 Little's law gives the same.
 */
struct run {
	struct ntp_snapshot snap;
	double direct[NTP_STAGE_COUNT];	/* sum of stage ns of every joined command / seconds */
};

static void model_run(uint32_t sampling, struct run *out)
{
	struct ntp_model_config mc = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = sampling };
	struct ntp_synth_config c;
	struct ntp_synth *s;
	struct ntp_model *m;
	struct ntp_record rec;
	struct ntp_total tot[8];
	uint64_t t, t0, end;
	struct ntp_record *hs, *ts;
	char err[128];
	size_t n;
	enum ntp_synth_event ev;
	int64_t sum[NTP_STAGE_COUNT] = { 0 };

	ntp_synth_defaults(&c);
	c.qd = 8;
	c.rate = 20000;
	c.sampling = sampling;
	c.count = 20000;
	c.duration_ns = 0;
	c.target_clock_offset = 0;
	c.exact_queues = 1;
	c.delay[NTP_SEG_STORAGE] = (struct ntp_delay){ NTP_DIST_EXP, 300000, 0 };	/* queueing at QD 8 */
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	m = ntp_model_new(&mc);
	assert_non_null(m);
	hs = calloc(c.count, sizeof(*hs));
	ts = calloc(c.count, sizeof(*ts));
	assert_non_null(hs);
	assert_non_null(ts);
	t0 = ntp_synth_clock(s, NTP_SIDE_HOST, 1, 0);
	ntp_model_set_start(m, t0);
	while ((ev = ntp_synth_next(s, &rec, &t)) != NTP_SYNTH_END) {
		if (ev != NTP_SYNTH_RECORD)
			continue;
		ntp_model_ingest(m, &rec);
		if (sampling == 1)
			(rec.side == NTP_SIDE_HOST ? hs : ts)[rec.seq] = rec;
	}
	for (size_t i = 0; sampling == 1 && i < c.count; i++) {
		struct ntp_breakdown b;

		assert_int_equal(ntp_breakdown_compute(&hs[i], &ts[i], &b), 0);
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			sum[k] += b.stage[k];
	}
	/* the kernel's totals of both sides at the end of the run */
	n = ntp_synth_totals(s, NTP_SIDE_HOST, 0, tot, 4);
	n += ntp_synth_totals(s, NTP_SIDE_TARGET, 0, tot + n, 4);
	/* one end for both runs (a run's last record depends on its sampling) */
	assert_true(ntp_synth_last_time(s) < 2 * SEC);
	end = t0 + 2 * SEC;
	ntp_model_set_totals(m, tot, n, end);
	ntp_model_close_interval(m, end, &out->snap);
	for (int k = 0; k < NTP_STAGE_COUNT; k++)
		out->direct[k] = (double)sum[k] / ((double)(end - t0));
	free(hs);
	free(ts);
	ntp_model_free(m);
	ntp_synth_free(s);
}

static void test_model_counted(void **state)
{
	struct run *all = calloc(1, sizeof(*all)), *tenth = calloc(1, sizeof(*tenth));
	const struct ntp_snap_group *ga, *gt;
	double total = 0;

	(void)state;
	assert_non_null(all);
	assert_non_null(tenth);
	model_run(1, all);
	model_run(10, tenth);
	assert_int_equal(all->snap.n_groups, 1);
	assert_int_equal(tenth->snap.n_groups, 1);
	ga = &all->snap.groups[0];
	gt = &tenth->snap.groups[0];
	assert_true(ga->qd_counted);
	assert_true(gt->qd_counted);
	assert_int_equal(gt->commands, 20000);
	assert_int_equal(gt->qd_summed, 20000);	/* every command, not the 1 in 10 */
	assert_int_equal(gt->qd_incomplete, 0);
	assert_true(gt->sampled < 2500 && gt->sampled > 1500);
	for (int k = 0; k < NTP_STAGE_COUNT; k++) {
		double direct = all->direct[k], c1 = ga->stage[k].avg_qd, c10 = gt->stage[k].avg_qd;

		/* counted: the same every-command sum whatever the sampling */
		assert_true(c1 > direct - 1e-9 && c1 < direct + 1e-9);
		assert_true(c10 > direct - 1e-9 && c10 < direct + 1e-9);
		/* 1 in 1: Little's law with the exact rate is that sum too */
		assert_true(ga->stage[k].avg_qd_little > c1 - 1e-9 && ga->stage[k].avg_qd_little < c1 + 1e-9);
		/* 1 in 10: an estimate, near */
		assert_true(gt->stage[k].avg_qd_little > 0.8 * c10 - 0.01 &&
			    gt->stage[k].avg_qd_little < 1.2 * c10 + 0.01);
		total += c10;
	}
	/* 8 tags: never more than 8 in flight; over the 2 s window, the ~1 s of
	 * arrivals at 20k/s keeps them mostly busy (~300 us of storage each) */
	printf("counted QD over 2 s: %.3f (e2e mean %.1f us, 1 in 10: %llu sampled)\n", total,
	       gt->e2e_mean_us, (unsigned long long)gt->sampled);
	assert_true(total > 2 && total <= 8);
	free(all);
	free(tenth);
}

/* Per interval the sums' growth is divided by the time it spans, from one
 * totals' as_of to the next (a replay applies totals blocks late); the whole
 * run by its length. Host only: QD 2 in "network and target". */
static void test_model_as_of(void **state)
{
	struct ntp_model_config mc = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&mc);
	struct ntp_snapshot *snap = malloc(sizeof(*snap));
	struct ntp_record h, t;
	struct ntp_total tot;

	(void)state;
	assert_non_null(m);
	assert_non_null(snap);
	read_pair(&h, &t);
	h.opcode = 0x02;
	h.len = 4096;
	snprintf(h.dev, sizeof(h.dev), "nvme0n1");
	ntp_model_set_start(m, 4 * SEC);
	ntp_model_ingest(m, &h);
	memset(&tot, 0, sizeof(tot));
	tot.key.side = NTP_SIDE_HOST;
	tot.key.io = NTP_IO_READ;
	tot.key.len = 4096;
	snprintf(tot.key.dev, sizeof(tot.key.dev), "nvme0n1");
	tot.count.commands = 1;
	/* read at 5.5 s: 1.5 s of QD 2 in the host's wait */
	tot.occ.summed = 1;
	tot.occ.ns[NTP_OCC_H_WAIT] = 3 * SEC;
	ntp_model_set_totals(m, &tot, 1, 5 * SEC + SEC / 2);
	ntp_model_close_interval(m, 6 * SEC, snap);
	assert_int_equal(snap->n_groups, 1);
	assert_true(snap->groups[0].qd_counted);
	assert_true(snap->groups[0].stage[NTP_STAGE_NETWORK].avg_qd == 2.0);
	/* no newer totals by the next close: Little's law for that interval */
	ntp_model_ingest(m, &h);
	ntp_model_close_interval(m, 7 * SEC, snap);
	assert_false(snap->groups[0].qd_counted);
	/* then 2.5 s more of QD 4 (with the receive path's 1 s of QD 0.4) */
	tot.occ.ns[NTP_OCC_H_WAIT] += 10 * SEC;
	tot.occ.ns[NTP_OCC_H_RECV] += SEC;
	ntp_model_set_totals(m, &tot, 1, 8 * SEC);
	ntp_model_ingest(m, &h);	/* the stages shown are those of sampled records */
	ntp_model_close_interval(m, 8 * SEC, snap);
	assert_true(snap->groups[0].qd_counted);
	assert_true(snap->groups[0].stage[NTP_STAGE_NETWORK].avg_qd > 4.4 - 1e-9 &&
		    snap->groups[0].stage[NTP_STAGE_NETWORK].avg_qd < 4.4 + 1e-9);
	assert_true(snap->groups[0].qd_host_recv > 0.4 - 1e-9 && snap->groups[0].qd_host_recv < 0.4 + 1e-9);
	/* the whole run, 4 s: (3 + 10 + 1) s of command time */
	ntp_model_total(m, snap);
	assert_true(snap->groups[0].qd_counted);
	assert_true(snap->groups[0].stage[NTP_STAGE_NETWORK].avg_qd > 3.5 - 1e-9 &&
		    snap->groups[0].stage[NTP_STAGE_NETWORK].avg_qd < 3.5 + 1e-9);
	free(snap);
	ntp_model_free(m);
}

/* Totals rows of format 1.1 carry the sums; a 1.0 file's 56-byte rows read
 * with zero sums (and no counted QD). */
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void test_file_rows(void **state)
{
	char path[] = "/tmp/ntprof-test-occ-XXXXXX", err[256];
	struct ntp_file_info fi = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 10 };
	struct ntp_total t[2];
	const struct ntp_total *rt;
	struct ntp_writer *w;
	struct ntp_reader *r;
	struct ntp_record rec;
	uint64_t as_of;
	size_t n, len;
	uint8_t *buf;
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	memset(t, 0, sizeof(t));
	t[0].key.side = NTP_SIDE_HOST;
	t[0].key.len = 4096;
	snprintf(t[0].key.dev, sizeof(t[0].key.dev), "nvme0n1");
	t[0].count.commands = 12345;
	t[0].occ = (struct ntp_group_occ){ .summed = 12340, .incomplete = 5, .ns = { 1, 2, 3, 4000000000ull } };
	t[1] = t[0];
	t[1].key.side = NTP_SIDE_TARGET;
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(ntp_writer_set_totals(w, t, 2, 2 * SEC), 0);
	assert_int_equal(ntp_writer_close(w, 3 * SEC), 0);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_info(r)->version_minor, NTP_FORMAT_MINOR);
	while (ntp_reader_next(r, &rec) == 1)
		;
	rt = ntp_reader_totals(r, &n, &as_of);
	assert_int_equal(n, 2);
	assert_memory_equal(&rt[0], &t[0], sizeof(t[0]));
	assert_memory_equal(&rt[1], &t[1], sizeof(t[1]));
	ntp_reader_close(r);

	/* the same file as a 1.0 writer made it: rows of 56 bytes, no sums.
	 * Layout: header (256), then the end block: 24-byte block header,
	 * 24-byte trailer head, rows (docs/ntp-format.md). */
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(1 << 16);
	assert_non_null(buf);
	len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	assert_int_equal(len, NTP_HEADER_LEN + 2 * (NTP_BLOCK_HDR_LEN + 16) + 2 * 2 * sizeof(struct ntp_total) + 8);
	{
		/* rebuild: header with minor 0, then one end block of 1.0 rows */
		uint8_t out[1024], *b = out + NTP_HEADER_LEN, *pl = b + NTP_BLOCK_HDR_LEN;
		uint32_t crc, plen = 24 + 2 * NTP_TOTAL_V10_SIZE;

		memcpy(out, buf, NTP_HEADER_LEN);
		out[10] = 0;
		out[11] = 0;
		crc = ntp_crc32c(0, out, NTP_HEADER_LEN - 4);
		memcpy(out + NTP_HEADER_LEN - 4, &crc, 4);
		memset(pl, 0, plen);
		memcpy(pl, &(uint64_t){ 3 * SEC }, 8);
		put32(pl + 16, NTP_TOTAL_V10_SIZE);
		memcpy(pl + 24, &t[0], NTP_TOTAL_V10_SIZE);
		memcpy(pl + 24 + NTP_TOTAL_V10_SIZE, &t[1], NTP_TOTAL_V10_SIZE);
		put32(b + 0, NTP_BLOCK_MAGIC);
		b[4] = NTP_BLOCK_END;
		b[5] = 0;
		b[6] = b[7] = 0;
		put32(b + 8, plen);
		put32(b + 12, 2);
		put32(b + 16, ntp_crc32c(0, pl, plen));
		put32(b + 20, ntp_crc32c(0, b, 20));
		r = ntp_reader_open_mem(out, NTP_HEADER_LEN + NTP_BLOCK_HDR_LEN + plen, "old.ntp", err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_info(r)->version_minor, 0);
		while (ntp_reader_next(r, &rec) == 1)
			;
		assert_int_equal(ntp_reader_stats(r)->truncated, 0);
		assert_int_equal(ntp_reader_stats(r)->corrupt, 0);
		rt = ntp_reader_totals(r, &n, &as_of);
		assert_int_equal(n, 2);
		assert_int_equal(rt[0].count.commands, 12345);
		assert_string_equal(rt[1].key.dev, "nvme0n1");
		assert_false(ntp_occ_any(&rt[0].occ));
		assert_false(ntp_occ_any(&rt[1].occ));
		ntp_reader_close(r);
	}
	free(buf);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_by_hand),
		cmocka_unit_test(test_stage_qd_numbers),
		cmocka_unit_test(test_same_spans_as_stage_c),
		cmocka_unit_test(test_model_counted),
		cmocka_unit_test(test_model_as_of),
		cmocka_unit_test(test_file_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
