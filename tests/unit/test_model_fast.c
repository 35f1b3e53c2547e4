// SPDX-License-Identifier: GPL-2.0
/* test_model_fast.c - the reducer's shortcuts (model.c) change nothing it
 * reports: stage and component counts kept per run of presence masks and
 * sums added whole give the counts and means of every command's own
 * breakdown, quantiles left out (no_quantiles) leave every other field
 * of the snapshot as it was, and the common joined flow added up straight
 * from its two records (account_fast) gives the general code's snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/model.h"
#include "core/synth/synth.h"

/* A stream of both sides' records, writes and reads of two sizes, a tenth
 * of the target's responses unseen (the fallback: another presence mask). */
static struct ntp_synth *stream(uint32_t want_sides)
{
	struct ntp_synth_config c;
	struct ntp_synth *s;
	char err[256];

	ntp_synth_defaults(&c);
	c.seed = 7;
	c.count = 30000;
	c.duration_ns = 0;
	c.sampling = 1;
	c.transport = NTP_TRANSPORT_TCP;
	c.read_pct = 50;
	c.sizes[0] = 4096;
	c.sizes[1] = 131072;
	c.nsizes = 2;
	c.miss_rsp_sent = 0.1;
	if (want_sides)
		c.want_sides = want_sides;
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	return s;
}

struct ref {
	uint8_t io;
	uint32_t len;
	uint64_t c_n[NTP_COMP_COUNT];
	int64_t c_sum[NTP_COMP_COUNT];
	uint64_t st_n[NTP_STAGE_COUNT];
	int64_t st_sum[NTP_STAGE_COUNT];
	uint64_t sampled;
	uint32_t masks[8];
	unsigned n_masks;
};

/* Target records alone: each is a command; counts and sums by hand. */
static void test_counts_and_means(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_TARGET, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *snap = malloc(sizeof(*snap));
	struct ntp_synth *s = stream(1u << NTP_SIDE_TARGET);
	struct ref ref[4] = { 0 };
	unsigned nref = 0, closes = 0, n = 0;
	struct ntp_record r;
	uint64_t t, last = 0;
	enum ntp_synth_event ev;

	(void)state;
	assert_non_null(m);
	assert_non_null(snap);
	ntp_model_set_start(m, 0);
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END) {
		struct ntp_breakdown b;
		struct ref *x = NULL;

		if (ev != NTP_SYNTH_RECORD || r.side != NTP_SIDE_TARGET)
			continue;
		/* other presence masks within a group: a write's data seen
		 * only on arrival, a command held back by the drive */
		if (n % 3 == 0)
			r.ts_valid &= ~(1u << NTP_TS_T_DATA_RECV);
		if (n % 5 == 0) {
			r.ts[NTP_TS_T_BP_RECV] = 100;
			r.ts_valid |= 1u << NTP_TS_T_BP_RECV;
		}
		ntp_model_ingest(m, &r);
		last = r.ts[NTP_TS_T_CMD_ARRIVE];
		/* intervals end within runs of masks and between them */
		if (++n % 4999 == 0) {
			ntp_model_close_interval(m, last + 1, snap);
			closes++;
		}
		if (ntp_breakdown_compute(NULL, &r, &b))
			continue;
		for (unsigned i = 0; i < nref; i++)
			if (ref[i].io == ntp_io_type_of(r.opcode) && ref[i].len == r.len)
				x = &ref[i];
		if (!x) {
			assert_true(nref < 4);
			x = &ref[nref++];
			x->io = ntp_io_type_of(r.opcode);
			x->len = r.len;
		}
		x->sampled++;
		for (int c = 0; c < NTP_COMP_COUNT; c++)
			if (b.comp_present & (1u << c)) {
				x->c_n[c]++;
				x->c_sum[c] += b.comp[c];
			} else {
				assert_int_equal(b.comp[c], 0);	/* absent: 0 (stage.h) */
			}
		for (int k = 0; k < NTP_STAGE_COUNT; k++)
			if (b.stage_present & (1u << k)) {
				x->st_n[k]++;
				x->st_sum[k] += b.stage[k];
			} else {
				assert_int_equal(b.stage[k], 0);
			}
		unsigned j = 0;

		while (j < x->n_masks && x->masks[j] != b.comp_present)
			j++;
		if (j == x->n_masks && j < 8)
			x->masks[x->n_masks++] = b.comp_present;
	}
	ntp_model_close_interval(m, last + 1, snap);
	assert_true(closes > 0);
	ntp_model_total(m, snap);
	assert_int_equal(snap->n_groups, nref);
	for (unsigned i = 0; i < nref; i++) {
		const struct ref *x = &ref[i];
		const struct ntp_snap_group *g = NULL;

		/* the stream's groups change masks (above) */
		assert_true(x->n_masks >= 2);
		for (unsigned k = 0; k < snap->n_groups; k++)
			if (snap->groups[k].io == x->io && snap->groups[k].len == x->len)
				g = &snap->groups[k];
		assert_non_null(g);
		assert_int_equal(g->sampled, x->sampled);
		for (int c = 0; c < NTP_COMP_COUNT; c++) {
			assert_int_equal(g->comp[c].n, x->c_n[c]);
			if (x->c_n[c])
				assert_true(g->comp[c].mean_us == (double)x->c_sum[c] / (double)x->c_n[c] / 1000.0);
		}
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			assert_int_equal(g->stage[k].present, !!x->st_n[k]);
			if (x->st_n[k])
				assert_true(g->stage[k].mean_us == (double)x->st_sum[k] / (double)x->sampled / 1000.0);
		}
	}
	ntp_synth_free(s);
	free(snap);
	ntp_model_free(m);
}

/* The same joined stream into models keeping all, no stage and no
 * stage nor component quantiles: snapshots equal but for those. */
static void run(unsigned noq, struct ntp_snapshot *iv, struct ntp_snapshot *all)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1,
					.no_quantiles = (uint8_t)noq };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_synth *s = stream(0);
	struct ntp_record r;
	uint64_t t, last = 0;
	enum ntp_synth_event ev;

	assert_non_null(m);
	ntp_model_set_start(m, 0);
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END)
		if (ev == NTP_SYNTH_RECORD) {
			ntp_model_ingest(m, &r);
			if (r.side == NTP_SIDE_HOST)
				last = r.ts[NTP_TS_H_BLK_SUBMIT];
		}
	ntp_model_close_interval(m, last + 1, iv);
	ntp_model_total(m, all);
	ntp_synth_free(s);
	ntp_model_free(m);
}

static void same_but_quantiles(const struct ntp_snapshot *a, const struct ntp_snapshot *b, unsigned noq)
{
	assert_int_equal(a->n_groups, b->n_groups);
	assert_true(a->n_groups >= 2);
	for (unsigned i = 0; i < a->n_groups; i++) {
		struct ntp_snap_group x = a->groups[i], y = b->groups[i];

		assert_true(x.sampled > 100);
		for (int k = 0; k < NTP_STAGE_COUNT; k++) {
			if (noq & NTP_MODEL_NO_STAGE_Q) {
				assert_true(y.stage[k].p50_us == 0 && y.stage[k].p99_us == 0 &&
					    y.stage[k].p999_us == 0);
				if (x.stage[k].present)
					assert_true(x.stage[k].p99_us > 0);
				x.stage[k].p50_us = x.stage[k].p99_us = x.stage[k].p999_us = 0;
			}
		}
		for (int c = 0; c < NTP_COMP_COUNT; c++) {
			if (noq & NTP_MODEL_NO_COMP_Q) {
				assert_true(y.comp[c].p50_us == 0 && y.comp[c].p99_us == 0 &&
					    y.comp[c].p999_us == 0);
				x.comp[c].p50_us = x.comp[c].p99_us = x.comp[c].p999_us = 0;
			}
		}
		assert_memory_equal(&x, &y, sizeof(x));
	}
}

static void test_no_quantiles(void **state)
{
	struct ntp_snapshot *s[6];
	const unsigned noq[3] = { 0, NTP_MODEL_NO_STAGE_Q, NTP_MODEL_NO_STAGE_Q | NTP_MODEL_NO_COMP_Q };

	(void)state;
	for (int i = 0; i < 6; i++) {
		s[i] = calloc(1, sizeof(*s[i]));
		assert_non_null(s[i]);
	}
	for (int i = 0; i < 3; i++)
		run(noq[i], s[2 * i], s[2 * i + 1]);
	for (int i = 1; i < 3; i++) {
		same_but_quantiles(s[0], s[2 * i], noq[i]);
		same_but_quantiles(s[1], s[2 * i + 1], noq[i]);
	}
	for (int i = 0; i < 6; i++)
		free(s[i]);
}

/* The joined stream of stream(), with more flows beside the common one:
 * every 7th host and 17th target record with NTP_REC_F_CLOSED_MISSED,
 * every 11th target record held back by the drive (backpressure: the
 * general code), every 13th host record without its block layer's
 * submission, every 19th with an end to end below 0, every 3rd with the
 * bio's submission before its block layer's (the common flow all the
 * same, from another start; stage.h NTP_FAST_H_BIO); every time seen is
 * moved up by 3 * 2^62, so the sums wrap; the slots of times not seen hold junk (the common flow sums pairs of adjacent slots, model.c
 * fast_ts: one not seen is summed, never read). */
static void run_joined(unsigned noq, int general_only, struct ntp_snapshot *iv, struct ntp_snapshot *all,
		       uint64_t *fast, uint64_t *fast_bio)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1,
					.no_quantiles = (uint8_t)noq, .general_only = (uint8_t)general_only };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_synth *s = stream(0);
	struct ntp_record r;
	uint64_t t, last = 0, nh = 0, nt = 0;
	enum ntp_synth_event ev;

	assert_non_null(m);
	ntp_model_set_start(m, 0);
	*fast = *fast_bio = 0;
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END) {
		if (ev != NTP_SYNTH_RECORD)
			continue;
		/* Times near the top of the clock: the sums of pairs of
		 * timestamps wrap past 2^64 within a few records, as the
		 * per-component sums always could (the sums are modulo 2^64). */
		for (unsigned i = 0; i < NTP_TS_SLOTS; i++)
			if (r.ts_valid & (1u << i))
				r.ts[i] += 3ull << 62;
		if (r.side == NTP_SIDE_HOST) {
			if (++nh % 7 == 0)
				r.flags |= NTP_REC_F_CLOSED_MISSED;
			if (nh % 13 == 0)
				r.ts_valid &= ~(1u << NTP_TS_H_BLK_SUBMIT);
			if (nh % 19 == 0)	/* an end to end below 0: a span of none */
				r.ts[NTP_TS_H_BLK_COMPLETE] = r.ts[NTP_TS_H_BLK_SUBMIT] - 5;
			if (nh % 3 == 0) {
				r.ts[NTP_TS_H_BIO_SUBMIT] = r.ts[NTP_TS_H_BLK_SUBMIT] - (nh % 1000) * 700;
				r.ts_valid |= NTP_FAST_H_BIO;
			}
			if ((r.ts_valid & (NTP_FAST_H | NTP_FAST_H_NOT)) == NTP_FAST_H) {
				(*fast)++;	/* a host side of the common flow */
				*fast_bio += !!(r.ts_valid & NTP_FAST_H_BIO);
			}
			last = r.ts[NTP_TS_H_DRV_SUBMIT];
		} else {
			if (++nt % 11 == 0) {
				r.ts[NTP_TS_T_BP_RECV] = 50;
				r.ts_valid |= 1u << NTP_TS_T_BP_RECV;
			}
			if (nt % 17 == 0)
				r.flags |= NTP_REC_F_CLOSED_MISSED;
		}
		for (unsigned i = 0; i < NTP_TS_SLOTS; i++)
			if (!(r.ts_valid & (1u << i)))
				r.ts[i] = (nh + nt) * 0x9E3779B97F4A7C15ull ^ i;
		ntp_model_ingest(m, &r);
		/* intervals that end inside runs of commands */
		if ((nh + nt) % 9001 == 0)
			ntp_model_close_interval(m, last + 1, iv);
	}
	ntp_model_close_interval(m, last + 1, iv);
	ntp_model_total(m, all);
	ntp_synth_free(s);
	ntp_model_free(m);
}

static void test_fused_equals_general(void **state)
{
	const unsigned noq[3] = { 0, NTP_MODEL_NO_STAGE_Q, NTP_MODEL_NO_STAGE_Q | NTP_MODEL_NO_COMP_Q };
	struct ntp_snapshot *s[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		s[i] = calloc(1, sizeof(*s[i]));
		assert_non_null(s[i]);
	}
	for (int i = 0; i < 3; i++) {
		uint64_t fast, fast_g, fast_bio, fast_bio_g;
		uint64_t missed = 0, r2t = 0, bp = 0, sampled = 0, bio = 0;

		run_joined(noq[i], 0, s[0], s[1], &fast, &fast_bio);
		run_joined(noq[i], 1, s[2], s[3], &fast_g, &fast_bio_g);
		assert_int_equal(fast, fast_g);
		assert_int_equal(fast_bio, fast_bio_g);
		assert_true(s[1]->n_groups >= 2);
		/* the stream has the common flow and others, in every group */
		for (unsigned k = 0; k < s[1]->n_groups; k++) {
			const struct ntp_snap_group *g = &s[1]->groups[k];

			sampled += g->sampled;
			missed += g->missed_records;
			r2t += g->comp[NTP_COMP_HOST_RECV_R2T].n;
			bp += g->comp[NTP_COMP_BP_RECV].n;
			bio += g->bio_records;
		}
		assert_true(fast > sampled / 2);
		/* stamped records of the common flow among them, counted */
		assert_true(fast_bio > fast / 4 && bio > fast_bio / 2);
		assert_true(missed > 0 && r2t > 0 && bp > 0);
		assert_memory_equal(s[0], s[2], sizeof(*s[0]));
		assert_memory_equal(s[1], s[3], sizeof(*s[1]));
	}
	for (int i = 0; i < 4; i++)
		free(s[i]);
}

/* Devices whose names differ only in their last bytes, or only in their
 * first, are groups of their own, records of them interleaved (the group
 * lookup's device compare, model.c dev_eq, looks at all 32 bytes). */
static void test_long_device_names(void **state)
{
	static const char *const devs[3] = {
		"nvme-subsystem-0123456789-ab-n1",	/* 31 characters: the NUL is the 32nd byte */
		"nvme-subsystem-0123456789-ab-n2",
		"nvmf-subsystem-0123456789-ab-n1",
	};
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *snap = calloc(1, sizeof(*snap));
	struct ntp_synth *s = stream(1u << NTP_SIDE_HOST);
	struct ntp_record r;
	uint64_t t, last = 0, want[3] = { 0 };
	enum ntp_synth_event ev;
	unsigned n = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(snap);
	ntp_model_set_start(m, 0);
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END) {
		unsigned k = n++ % 7 % 3;	/* runs of one device and changes */

		if (ev != NTP_SYNTH_RECORD || r.side != NTP_SIDE_HOST || r.len != 4096 || r.opcode != 0x02)
			continue;
		memset(r.dev, 0, sizeof(r.dev));
		memcpy(r.dev, devs[k], strlen(devs[k]));
		ntp_model_ingest(m, &r);
		want[k]++;
		last = r.ts[NTP_TS_H_DRV_SUBMIT];
	}
	ntp_model_close_interval(m, last + 1, snap);
	assert_int_equal(snap->n_groups, 3);
	for (unsigned i = 0; i < 3; i++) {
		unsigned k = 0;

		while (k < 3 && strcmp(snap->groups[i].dev, devs[k]))
			k++;
		assert_true(k < 3);
		assert_true(want[k] > 100);
		assert_int_equal(snap->groups[i].seen, want[k]);
	}
	ntp_synth_free(s);
	free(snap);
	ntp_model_free(m);
}

/* A joined pair of the common flow (stage.h ntp_fast_flow) of device
 * nvme<d>n1, command id cid, its times from t0 on. */
static void pair(struct ntp_record *h, struct ntp_record *t, unsigned d, uint16_t cid, uint64_t t0)
{
	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = NTP_TRANSPORT_TCP;
	h->opcode = t->opcode = 0x02;
	h->len = t->len = 4096;
	h->nsid = t->nsid = 1;
	h->cntlid = t->cntlid = 1;
	h->qid = t->qid = 1;
	h->cid = t->cid = cid;
	snprintf(h->dev, NTP_DEV_LEN, "nvme%un1", d);
	snprintf(t->dev, NTP_DEV_LEN, "nullb0");
	for (unsigned i = 0; i < NTP_TS_SLOTS; i++) {
		h->ts[i] = t0 + 1000 * i;
		t->ts[i] = t0 + 2500 + 100 * i;
	}
	h->ts_valid = NTP_FAST_H;
	t->ts_valid = NTP_FAST_T;
}

enum feed { ONE_BY_ONE, BLOCKS, REFS };

/* pairs[0..n) (host, target, host, ...) into m as feed says, in blocks of 10 */
static void feed(struct ntp_model *m, const struct ntp_record *r, size_t n, enum feed how)
{
	const struct ntp_record *refs[10];

	for (size_t i = 0; i < n; i += 10) {
		size_t k = n - i < 10 ? n - i : 10;

		if (how == ONE_BY_ONE)
			for (size_t j = 0; j < k; j++)
				ntp_model_ingest(m, &r[i + j]);
		else if (how == BLOCKS)
			ntp_model_ingest_block(m, &r[i], k);
		else {
			for (size_t j = 0; j < k; j++)
				refs[j] = &r[i + j];
			ntp_model_ingest_refs(m, refs, k);
		}
	}
}

/* Role both, joined commands of the common flow on more devices than
 * there are groups: those of no group (model.c, the model's none, its
 * ACC_SLOW always set) are left out and counted, never added up (the
 * common flow's shortcut would write them into the none accumulator,
 * which has no histograms behind it), fed one by one, in blocks and by
 * reference. */
#define N_DEV (NTP_SNAP_MAX_GROUPS + 36)
#define PER_DEV 3

static void test_none_joined(void **state)
{
	static struct ntp_record r[2 * N_DEV * PER_DEV];
	struct ntp_snapshot *snap = calloc(1, sizeof(*snap));

	(void)state;
	assert_non_null(snap);
	for (unsigned k = 0; k < PER_DEV; k++)
		for (unsigned d = 0; d < N_DEV; d++) {
			size_t i = (size_t)k * N_DEV + d;

			pair(&r[2 * i], &r[2 * i + 1], d, (uint16_t)i, 1000000 + (uint64_t)i * 10000);
		}
	for (enum feed how = ONE_BY_ONE; how <= REFS; how++) {
		struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
		struct ntp_model *m = ntp_model_new(&cfg);
		uint64_t sampled = 0;

		assert_non_null(m);
		ntp_model_set_start(m, 0);
		feed(m, r, sizeof(r) / sizeof(r[0]), how);
		ntp_model_close_interval(m, 1000000 + (uint64_t)N_DEV * PER_DEV * 10000, snap);
		assert_int_equal(snap->matched, N_DEV * PER_DEV);
		assert_int_equal(snap->n_groups, NTP_SNAP_MAX_GROUPS);
		for (unsigned g = 0; g < snap->n_groups; g++) {
			assert_int_equal(snap->groups[g].sampled, PER_DEV);
			sampled += snap->groups[g].sampled;
		}
		assert_int_equal(sampled, NTP_SNAP_MAX_GROUPS * PER_DEV);
		assert_int_equal(snap->overflow_records, (N_DEV - NTP_SNAP_MAX_GROUPS) * PER_DEV);
		assert_int_equal(snap->oom, 0);
		ntp_model_free(m);
	}
	free(snap);
}

/* A target record that took the STORAGE_DONE fallback (NTP_REC_F_RSP_FALLBACK)
 * with its response's time seen is not the common flow (stage.h
 * ntp_fast_flow): after a common command (the group's run that flow's,
 * model.c account's one test passes but for the flag) it is counted as
 * the fallback's, one by one, in blocks and by reference. */
static void test_fallback_not_fast(void **state)
{
	struct ntp_record r[6];
	struct ntp_snapshot *snap = calloc(1, sizeof(*snap));

	(void)state;
	assert_non_null(snap);
	for (unsigned i = 0; i < 3; i++)
		pair(&r[2 * i], &r[2 * i + 1], 0, (uint16_t)i, 1000000 + (uint64_t)i * 100000);
	r[3].flags |= NTP_REC_F_RSP_FALLBACK;
	assert_true(r[3].ts_valid & (1u << NTP_TS_T_RSP_SENT));
	for (enum feed how = ONE_BY_ONE; how <= REFS; how++) {
		struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
		struct ntp_model *m = ntp_model_new(&cfg);

		assert_non_null(m);
		ntp_model_set_start(m, 0);
		feed(m, r, 6, how);
		ntp_model_close_interval(m, 2000000, snap);
		assert_int_equal(snap->matched, 3);
		assert_int_equal(snap->n_groups, 1);
		assert_int_equal(snap->groups[0].sampled, 3);
		assert_int_equal(snap->groups[0].fallback_records, 1);
		ntp_model_free(m);
	}
	free(snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_means),
		cmocka_unit_test(test_no_quantiles),
		cmocka_unit_test(test_fused_equals_general),
		cmocka_unit_test(test_long_device_names),
		cmocka_unit_test(test_none_joined),
		cmocka_unit_test(test_fallback_not_fast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
