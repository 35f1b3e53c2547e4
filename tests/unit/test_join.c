// SPDX-License-Identifier: GPL-2.0
/* test_join.c - the join: reused tags, unmatched records on either side, several
 * hosts, bounded pending memory, file checks (-s, roles), two files on shifted clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/model/join.h"
#include "core/model/model.h"
#include "core/store/ntpfile.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)

/* One 4 KiB read at host time t0; its storage time is `storage` ns, everything
 * else fixed: e2e = 20000 + storage. Target clock = host clock + off. */
static void make_cmd(uint16_t cntlid, uint16_t cid, uint64_t slba, uint64_t t0, int64_t storage,
		     uint64_t off, struct ntp_record *h, struct ntp_record *t)
{
	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = NTP_TRANSPORT_TCP;
	h->opcode = t->opcode = 0x02;
	h->nsid = t->nsid = 1;
	h->len = t->len = 4096;
	h->nlb = t->nlb = 7;
	h->slba = t->slba = slba;
	h->cntlid = t->cntlid = cntlid;
	h->qid = t->qid = 1;
	h->cid = t->cid = cid;
	snprintf(h->dev, sizeof(h->dev), "nvme1n1");
	snprintf(t->dev, sizeof(t->dev), "nullb0");
	SET(h, NTP_TS_H_BLK_SUBMIT, t0);
	SET(h, NTP_TS_H_DRV_SUBMIT, t0 + 1000);
	SET(h, NTP_TS_H_CMD_SENT, t0 + 3000);
	SET(t, NTP_TS_T_CMD_ARRIVE, off + t0 + 8000);
	SET(t, NTP_TS_T_CMD_RECV, off + t0 + 10000);
	SET(t, NTP_TS_T_STORAGE_SUBMIT, off + t0 + 11000);
	SET(t, NTP_TS_T_STORAGE_DONE, off + t0 + 11000 + (uint64_t)storage);
	SET(t, NTP_TS_T_RSP_SENT, off + t0 + 12000 + (uint64_t)storage);
	SET(h, NTP_TS_H_RSP_ARRIVE, t0 + 17000 + (uint64_t)storage);
	SET(h, NTP_TS_H_RSP_DRV, t0 + 18000 + (uint64_t)storage);
	SET(h, NTP_TS_H_DRV_COMPLETE, t0 + 19000 + (uint64_t)storage);
	SET(h, NTP_TS_H_BLK_COMPLETE, t0 + 20000 + (uint64_t)storage);
}

static struct ntp_model *new_model(uint8_t role, uint32_t window)
{
	struct ntp_model_config cfg = { .role = role, .transport = NTP_TRANSPORT_TCP,
					.sampling = 1, .join_window = window };
	struct ntp_model *m = ntp_model_new(&cfg);

	assert_non_null(m);
	ntp_model_set_start(m, 0);
	return m;
}

static struct ntp_snapshot *close_all(struct ntp_model *m, uint64_t end)
{
	struct ntp_snapshot *s = malloc(sizeof(*s));

	assert_non_null(s);
	ntp_model_close_interval(m, end, s);
	return s;
}

/* One tag reused 1000 times; target record first, then its host twin. */
static void test_reused_tags(void **state)
{
	struct ntp_model *m = new_model(NTP_ROLE_BOTH, 0);
	struct ntp_record h, t;
	struct ntp_snapshot *s;
	double sum = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		int64_t st = 50000 + (i % 7) * 1000;

		make_cmd(1, (uint16_t)(((i & 15) << 12) | 5), (uint64_t)(i * 8) % 64, (uint64_t)i * 200000,
			 st, 777, &h, &t);
		/* Half the commands the other way round (RDMA send completions). */
		if (i & 1) {
			ntp_model_ingest(m, &t);
			ntp_model_ingest(m, &h);
		} else {
			ntp_model_ingest(m, &h);
			ntp_model_ingest(m, &t);
		}
		sum += 20000 + st;
	}
	s = close_all(m, 1000 * 200000ull);
	assert_int_equal(s->matched, 1000);
	assert_int_equal(s->host_records, 1000);
	assert_int_equal(s->target_records, 1000);
	assert_int_equal(ntp_model_pending(m), 0);
	assert_int_equal(s->n_groups, 1);
	assert_int_equal(s->groups[0].sampled, 1000);
	assert_false(s->groups[0].host_only);
	/* The mean is exact (sums), not from the histogram. */
	assert_true(s->groups[0].e2e_mean_us == sum / 1000 / 1000);
	assert_true(s->groups[0].stage[NTP_STAGE_STORAGE].present);
	free(s);
	ntp_model_free(m);
}

/* Targets lost for some commands, hosts lost for others: only true twins join. */
static void test_unmatched_either_side(void **state)
{
	struct ntp_model *m = new_model(NTP_ROLE_BOTH, 0);
	struct ntp_record h, t;
	struct ntp_snapshot *s;
	int matched = 0, hosts = 0, targets = 0;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		/* Four tags, the same slba for every use of a tag except the
		 * command number: a stale record must not match a later one. */
		make_cmd(1, (uint16_t)(i % 4), (uint64_t)i * 8, (uint64_t)i * 100000, 60000, 5, &h, &t);
		int drop_t = i % 10 == 3, drop_h = i % 13 == 4;

		if (!drop_t) {
			ntp_model_ingest(m, &t);
			targets++;
		}
		if (!drop_h) {
			ntp_model_ingest(m, &h);
			hosts++;
		}
		matched += !drop_t && !drop_h;
	}
	s = close_all(m, 3000 * 100000ull);
	assert_int_equal(s->matched, matched);
	assert_int_equal(s->host_records, hosts);
	assert_int_equal(s->target_records, targets);
	assert_int_equal(s->groups[0].sampled, matched);
	assert_int_equal(s->groups[0].seen, hosts);
	/* Every matched command had exactly these stage times. */
	assert_true(s->groups[0].stage[NTP_STAGE_STORAGE].mean_us == 60.0);
	assert_true(s->groups[0].e2e_mean_us == 80.0);
	/* Percentiles: within the histogram's 1 %. */
	assert_true(s->groups[0].e2e_p99_us > 79.2 && s->groups[0].e2e_p99_us < 80.8);
	/* The lost targets' hosts wait, their older same-key records were dropped
	 * when a later target of the key arrived: the pending set stays small. */
	assert_true(ntp_model_pending(m) <= 8);
	assert_true(s->unmatched_target + s->unmatched_host > 0);
	free(s);
	ntp_model_free(m);
}

/* Three hosts (cntlid 1..3) with the same qid/cid sharing one target. */
static void test_several_hosts(void **state)
{
	struct ntp_model *m = new_model(NTP_ROLE_BOTH, 0);
	struct ntp_record h[3], t[3];
	struct ntp_snapshot *s;

	(void)state;
	for (int i = 0; i < 500; i++) {
		for (int k = 0; k < 3; k++)
			make_cmd((uint16_t)(k + 1), 9, 8, (uint64_t)i * 300000 + (uint64_t)k * 10,
				 10000 * (k + 1), (uint64_t)k << 40, &h[k], &t[k]);
		/* Targets in one order, hosts in another. */
		ntp_model_ingest(m, &t[2]);
		ntp_model_ingest(m, &t[0]);
		ntp_model_ingest(m, &h[1]);
		ntp_model_ingest(m, &t[1]);
		ntp_model_ingest(m, &h[0]);
		ntp_model_ingest(m, &h[2]);
	}
	s = close_all(m, 500 * 300000ull);
	assert_int_equal(s->matched, 1500);
	assert_int_equal(ntp_model_pending(m), 0);
	/* wire 10 + receive paths 2 + 1 us; storage 10, 20, 30 us: mean 20, and every join used its own host's twin. */
	assert_true(s->groups[0].stage[NTP_STAGE_STORAGE].mean_us == 20.0);
	assert_true(s->groups[0].stage[NTP_STAGE_NETWORK].mean_us == 13.0);
	free(s);
	ntp_model_free(m);
}

/* Records that never find a twin are evicted: memory stays bounded. */
static void test_bounded_pending(void **state)
{
	struct ntp_model *m = new_model(NTP_ROLE_BOTH, 1024);
	struct ntp_record h, t;
	struct ntp_snapshot *s;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		make_cmd(1, (uint16_t)(i & 0xfff), (uint64_t)i, (uint64_t)i * 1000, 1000, 0, &h, &t);
		ntp_model_ingest(m, (i & 1) ? &h : &t);
		assert_true(ntp_model_pending(m) <= 2048);
	}
	s = close_all(m, 100000 * 1000ull);
	assert_int_equal(s->matched, 0);
	assert_int_equal(s->unmatched_host + s->unmatched_target + ntp_model_pending(m), 100000);
	free(s);
	ntp_model_free(m);
}

static struct ntp_file_info info(uint8_t role, const char *host, uint32_t sampling)
{
	struct ntp_file_info i;

	memset(&i, 0, sizeof(i));
	i.role = role;
	i.transport = NTP_TRANSPORT_TCP;
	i.sampling = sampling;
	snprintf(i.hostname, sizeof(i.hostname), "%s", host);
	return i;
}

static void test_checks(void **state)
{
	struct ntp_file_info a = info(NTP_ROLE_HOST, "h1", 100), b = info(NTP_ROLE_TARGET, "t1", 100);
	struct ntp_file_info c = info(NTP_ROLE_HOST, "h2", 100), d = info(NTP_ROLE_TARGET, "t1", 1000);
	struct ntp_file_info e = info(NTP_ROLE_HOST, "h1", 100), f = info(NTP_ROLE_BOTH, "h1", 100);
	struct ntp_file_info g = info(NTP_ROLE_TARGET, "t2", 100);
	struct ntp_join_input in[3];
	struct ntp_model_config cfg;
	char err[512];

	(void)state;
	/* host + target: joined */
	in[0] = (struct ntp_join_input){ "h1.ntp", &a };
	in[1] = (struct ntp_join_input){ "t1.ntp", &b };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.role, NTP_ROLE_BOTH);
	assert_int_equal(cfg.sampling, 100);
	/* two hosts + one target */
	in[2] = (struct ntp_join_input){ "h2.ntp", &c };
	assert_int_equal(ntp_join_check(in, 3, &cfg, err, sizeof(err)), 0);
	assert_int_equal(ntp_join_primary(in, 3), 0);
	/* one file alone */
	assert_int_equal(ntp_join_check(in + 1, 1, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.role, NTP_ROLE_TARGET);
	assert_int_equal(ntp_join_check(in, 1, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.role, NTP_ROLE_HOST);
	/* different -s */
	in[1] = (struct ntp_join_input){ "t1.ntp", &d };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "h1.ntp was recorded with -s 100 and t1.ntp with -s 1000"));
	/* same role, same machine */
	in[1] = (struct ntp_join_input){ "again.ntp", &e };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "h1.ntp and again.ntp are both host recordings of h1"));
	/* a both file overlaps a host file of the same machine */
	in[1] = (struct ntp_join_input){ "both.ntp", &f };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "are both host recordings of h1"));
	/* a host file where a target's is expected */
	in[1] = (struct ntp_join_input){ "h2.ntp", &c };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "h2.ntp is a host recording where a target's is expected"));
	/* a target where a host's is expected */
	in[0] = (struct ntp_join_input){ "t1.ntp", &b };
	in[1] = (struct ntp_join_input){ "t2.ntp", &g };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "t2.ntp is a target recording where a host's is expected"));
	/* different transports */
	g.role = NTP_ROLE_HOST;
	g.transport = NTP_TRANSPORT_RDMA;
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "over tcp and t2.ntp over rdma"));
}

static void write_file(const char *path, const struct ntp_file_info *fi, const struct ntp_record *r,
		       size_t n, int side)
{
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, fi, err, sizeof(err));

	assert_non_null(w);
	for (size_t i = 0; i < n; i++)
		if (r[i].side == side)
			assert_int_equal(ntp_writer_add(w, &r[i]), 0);
	assert_int_equal(ntp_writer_close(w, fi->start_mono_ns + 2000000000ull), 0);
}

/* Two files, the target's clock 3 days ahead: joined through the files. */
static void test_two_files_shifted_clock(void **state)
{
	const uint64_t off = 259200000012345ull, n = 20000;
	struct ntp_record *r = calloc(2 * n, sizeof(*r));
	struct ntp_file_info hi = info(NTP_ROLE_HOST, "h", 1), ti = info(NTP_ROLE_TARGET, "t", 1);
	char hp[] = "/tmp/ntp-join-h-XXXXXX", tp[] = "/tmp/ntp-join-t-XXXXXX", err[256];
	struct ntp_reader *rd[2];
	struct ntp_join_input in[2];
	struct ntp_model_config cfg;
	struct ntp_model *m;
	struct ntp_snapshot *s;

	(void)state;
	assert_non_null(r);
	close(mkstemp(hp));
	close(mkstemp(tp));
	hi.start_mono_ns = 1000;
	hi.start_real_ns = 1796000000000000000ull;
	ti.start_mono_ns = 1000 + off;
	ti.start_real_ns = hi.start_real_ns;
	for (uint64_t i = 0; i < n; i++)
		make_cmd(1, (uint16_t)(i % 32), i * 8, 1000 + i * 3000, 40000 + (int64_t)(i % 5) * 100,
			 off, &r[2 * i], &r[2 * i + 1]);
	write_file(hp, &hi, r, 2 * n, NTP_SIDE_HOST);
	write_file(tp, &ti, r, 2 * n, NTP_SIDE_TARGET);
	/* target first on the command line: the order of files does not matter */
	rd[0] = ntp_reader_open(tp, err, sizeof(err));
	rd[1] = ntp_reader_open(hp, err, sizeof(err));
	assert_non_null(rd[0]);
	assert_non_null(rd[1]);
	in[0] = (struct ntp_join_input){ tp, ntp_reader_info(rd[0]) };
	in[1] = (struct ntp_join_input){ hp, ntp_reader_info(rd[1]) };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), 0);
	assert_int_equal(ntp_join_primary(in, 2), 1);
	m = ntp_model_new(&cfg);
	assert_non_null(m);
	ntp_model_set_start(m, hi.start_mono_ns);
	uint64_t last = ntp_join_feed(rd, 2, 1, NULL, m);

	assert_true(last < off);	/* on the host's clock */
	s = close_all(m, last);
	assert_int_equal(s->matched, n);
	assert_int_equal(s->groups[0].sampled, n);
	assert_true(s->groups[0].stage[NTP_STAGE_NETWORK].mean_us == 13.0);
	assert_true(s->groups[0].stage[NTP_STAGE_STORAGE].mean_us == 40.2);
	free(s);
	ntp_model_free(m);
	ntp_reader_close(rd[0]);
	ntp_reader_close(rd[1]);
	unlink(hp);
	unlink(tp);
	free(r);
}

/* Wall clocks 30 s apart and a small window: the alignment pre-pass lines
 * the files up again; without it most twins would be evicted before they met. */
static void test_two_files_unsynced_wall_clocks(void **state)
{
	const uint64_t off = 5000000000000ull, n = 20000;
	struct ntp_record *r = calloc(2 * n, sizeof(*r));
	struct ntp_file_info hi = info(NTP_ROLE_HOST, "h", 1), ti = info(NTP_ROLE_TARGET, "t", 1);
	char hp[] = "/tmp/ntp-join-h-XXXXXX", tp[] = "/tmp/ntp-join-t-XXXXXX", err[256];
	struct ntp_join_input in[2];
	struct ntp_model_config cfg;
	int64_t adj[2];

	(void)state;
	assert_non_null(r);
	close(mkstemp(hp));
	close(mkstemp(tp));
	hi.start_mono_ns = 1000;
	hi.start_real_ns = 1796000000000000000ull;
	ti.start_mono_ns = 1000 + off;
	ti.start_real_ns = hi.start_real_ns + 30000000000ull;	/* its wall clock 30 s ahead */
	for (uint64_t i = 0; i < n; i++)
		make_cmd(1, (uint16_t)(i % 32), i * 8, 1000 + i * 3000, 40000, off, &r[2 * i], &r[2 * i + 1]);
	write_file(hp, &hi, r, 2 * n, NTP_SIDE_HOST);
	write_file(tp, &ti, r, 2 * n, NTP_SIDE_TARGET);
	in[0] = (struct ntp_join_input){ hp, &hi };
	in[1] = (struct ntp_join_input){ tp, &ti };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), 0);
	ntp_join_align(in, 2, 0, adj);
	assert_int_equal(adj[0], 0);
	/* -30 s, plus the one-way trip CMD_SENT -> CMD_ARRIVE (5 us) */
	assert_int_equal(adj[1], -30000000000ll - 5000);
	cfg.join_window = 1024;
	for (int aligned = 0; aligned < 2; aligned++) {
		struct ntp_reader *rd[2] = { ntp_reader_open(hp, err, sizeof(err)),
					     ntp_reader_open(tp, err, sizeof(err)) };
		struct ntp_model *m = ntp_model_new(&cfg);
		struct ntp_snapshot *s;

		assert_non_null(m);
		ntp_model_set_start(m, hi.start_mono_ns);
		s = close_all(m, ntp_join_feed(rd, 2, 0, aligned ? adj : NULL, m));
		if (aligned)
			assert_int_equal(s->matched, n);
		else
			assert_true(s->matched < n / 2);
		free(s);
		ntp_model_free(m);
		ntp_reader_close(rd[0]);
		ntp_reader_close(rd[1]);
	}
	unlink(hp);
	unlink(tp);
	free(r);
}

/* An SPDK host at queue depth 1: one tag for every command, and the sampled
 * LBAs come back again and again. The target's recording began `early`
 * commands before the host's, wall clocks wall_skew apart: the alignment still
 * finds the offset exactly (in-order pairing would pair the target's earlier
 * instances of an LBA with the host's), and every host record joins its own
 * twin, not an earlier command of the same LBA (the stage times say which). */
static void one_tag_case(uint64_t n, uint64_t early, uint64_t lbas, int64_t wall_skew)
{
	const uint64_t off = 5000000000000ull;
	struct ntp_record *r = calloc(2 * n, sizeof(*r));
	struct ntp_file_info hi = info(NTP_ROLE_HOST, "h", 1), ti = info(NTP_ROLE_TARGET, "t", 1);
	char hp[] = "/tmp/ntp-join-h-XXXXXX", tp[] = "/tmp/ntp-join-t-XXXXXX", err[256];
	struct ntp_reader *rd[2];
	struct ntp_join_input in[2];
	struct ntp_model_config cfg;
	struct ntp_snapshot *s;
	struct ntp_model *m;
	uint64_t x = 88172645463325252ull;
	int64_t adj[2];

	assert_non_null(r);
	close(mkstemp(hp));
	close(mkstemp(tp));
	hi.start_mono_ns = 1000 + early * 100000;
	hi.start_real_ns = 1796000000000000000ull;
	ti.start_mono_ns = 1000 + off;
	ti.start_real_ns = hi.start_real_ns - early * 100000 + (uint64_t)wall_skew;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* each LBA comes back about every `lbas` commands; the storage
		 * time tells the instances apart */
		make_cmd(1, 0, (x % lbas) * 8, 1000 + i * 100000, 40000 + (int64_t)(i % 7) * 1000, off,
			 &r[2 * i], &r[2 * i + 1]);
		if (i < early)
			r[2 * i].side = 0;	/* the host did not record these */
	}
	write_file(hp, &hi, r, 2 * n, NTP_SIDE_HOST);
	write_file(tp, &ti, r, 2 * n, NTP_SIDE_TARGET);
	in[0] = (struct ntp_join_input){ hp, &hi };
	in[1] = (struct ntp_join_input){ tp, &ti };
	assert_int_equal(ntp_join_check(in, 2, &cfg, err, sizeof(err)), 0);
	ntp_join_align(in, 2, 0, adj);
	assert_int_equal(adj[1], -wall_skew - 5000);
	rd[0] = ntp_reader_open(hp, err, sizeof(err));
	rd[1] = ntp_reader_open(tp, err, sizeof(err));
	m = ntp_model_new(&cfg);
	assert_non_null(m);
	ntp_model_set_start(m, hi.start_mono_ns);
	s = close_all(m, ntp_join_feed(rd, 2, 0, adj, m));
	assert_int_equal(s->matched, n - early);
	/* own twins: the wire is the same 13 us for every command, and storage
	 * the mean of 40..46 us over the host's commands */
	assert_true(s->groups[0].comp[NTP_COMP_WIRE].p99_us < 13.5);
	assert_true(s->groups[0].stage[NTP_STAGE_NETWORK].mean_us > 12.99 &&
		    s->groups[0].stage[NTP_STAGE_NETWORK].mean_us < 13.01);
	free(s);
	ntp_model_free(m);
	ntp_reader_close(rd[0]);
	ntp_reader_close(rd[1]);
	unlink(hp);
	unlink(tp);
	free(r);
}

/* 40 LBAs: every LBA has many instances in the alignment's sample. */
static void test_two_files_one_tag(void **state)
{
	(void)state;
	one_tag_case(12000, 2000, 40, 30000000000ll);
}

/* A random read over a namespace of 16k blocks, the target's recording
 * 15000 commands ahead: most LBAs are in the sample once or twice on each
 * side, so one LBA's instances alone cannot say which target instance is
 * the host's twin; the pairs of all of them agree on one offset. */
static void test_two_files_one_tag_few_repeats(void **state)
{
	(void)state;
	one_tag_case(60000, 15000, 16384, 30000000000ll);
}

/* The target's recording 40000 commands ahead, more than the alignment's
 * sample: its first records hold no command of the host's, so the sample is
 * taken again where the host's recording began on the wall clocks (one
 * machine's two recorders: a real SPDK run whose target recorder started
 * 4.7 s early was otherwise aligned 5 s off and joined 1.4 %). */
static void test_two_files_one_tag_far_ahead(void **state)
{
	(void)state;
	one_tag_case(80000, 40000, 16384, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reused_tags),
		cmocka_unit_test(test_unmatched_either_side),
		cmocka_unit_test(test_several_hosts),
		cmocka_unit_test(test_bounded_pending),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_two_files_shifted_clock),
		cmocka_unit_test(test_two_files_unsynced_wall_clocks),
		cmocka_unit_test(test_two_files_one_tag),
		cmocka_unit_test(test_two_files_one_tag_few_repeats),
		cmocka_unit_test(test_two_files_one_tag_far_ahead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
