// SPDX-License-Identifier: GPL-2.0
/* test_stage.c - the stage model: exact sums, each flow, host-only, target-only, fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/pending.h"
#include "core/model/stage.h"
#include "core/synth/synth.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)

/* Timeline of one command: every delay in ns; target clock = host clock + off. */
struct flow {
	int write, r2t, rdma;
	int64_t blk_sub, drv_sub, wire_out, t_recv, t_sub, xfer, h_r2t_recv, h_data,
		wire_back1, wire_out2, t_recv_data, t_data, storage, t_comp, wire_back,
		h_recv, h_comp, blk_comp;
	uint64_t off;
};

static void build(const struct flow *f, struct ntp_record *h, struct ntp_record *t)
{
	uint64_t now = 1000000000ull;

	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = f->rdma ? NTP_TRANSPORT_RDMA : NTP_TRANSPORT_TCP;
	h->opcode = t->opcode = f->write ? 0x01 : 0x02;
	h->len = t->len = 4096;
	SET(h, NTP_TS_H_BLK_SUBMIT, now);
	SET(h, NTP_TS_H_DRV_SUBMIT, now += f->blk_sub);
	SET(h, NTP_TS_H_CMD_SENT, now += f->drv_sub);
	SET(t, NTP_TS_T_CMD_ARRIVE, (now += f->wire_out) + f->off);
	SET(t, NTP_TS_T_CMD_RECV, (now += f->t_recv) + f->off);
	if (f->r2t || f->rdma) {
		SET(t, NTP_TS_T_R2T_SENT, (now += f->t_sub) + f->off);
		if (f->r2t) {
			SET(h, NTP_TS_H_R2T_ARRIVE, now += f->wire_back1);
			SET(h, NTP_TS_H_R2T_DRV, now += f->h_r2t_recv);
			SET(h, NTP_TS_H_DATA_SENT, now += f->h_data);
			SET(t, NTP_TS_T_DATA_ARRIVE, (now += f->wire_out2) + f->off);
		} else {
			SET(t, NTP_TS_T_DATA_ARRIVE, (now += f->xfer) + f->off);
		}
		SET(t, NTP_TS_T_DATA_RECV, (now += f->t_recv_data) + f->off);
		SET(t, NTP_TS_T_STORAGE_SUBMIT, (now += f->t_data) + f->off);
	} else {
		SET(t, NTP_TS_T_STORAGE_SUBMIT, (now += f->t_sub) + f->off);
	}
	SET(t, NTP_TS_T_STORAGE_DONE, (now += f->storage) + f->off);
	SET(t, NTP_TS_T_RSP_QUEUED, now + f->off);
	SET(t, NTP_TS_T_RSP_SENT, (now += f->t_comp) + f->off);
	SET(h, NTP_TS_H_RSP_ARRIVE, now += f->wire_back);
	SET(h, NTP_TS_H_RSP_DRV, now += f->h_recv);
	SET(h, NTP_TS_H_DRV_COMPLETE, now += f->h_comp);
	SET(h, NTP_TS_H_BLK_COMPLETE, now += f->blk_comp);
}

static int64_t rnd(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(random() % (hi - lo + 1));
}

static void random_flow(struct flow *f)
{
	int kind = (int)(random() % 4);

	memset(f, 0, sizeof(*f));
	f->write = kind >= 1;
	f->r2t = kind == 2;
	f->rdma = kind == 3;
	f->blk_sub = rnd(0, 2000);
	f->drv_sub = rnd(0, 5000);
	f->wire_out = rnd(-300, 20000);		/* loopback can make it slightly negative */
	f->t_recv = rnd(0, 5000);
	f->t_sub = rnd(0, 3000);
	f->xfer = rnd(100, 30000);
	f->h_r2t_recv = rnd(0, 4000);
	f->h_data = rnd(0, 4000);
	f->wire_back1 = rnd(0, 20000);
	f->wire_out2 = rnd(0, 20000);
	f->t_recv_data = rnd(0, 5000);
	f->t_data = rnd(0, 3000);
	f->storage = rnd(1000, 10000000);
	f->t_comp = rnd(0, 3000);
	f->wire_back = rnd(0, 20000);
	f->h_recv = rnd(0, 5000);
	f->h_comp = rnd(0, 2000);
	f->blk_comp = rnd(0, 2000);
	f->off = (uint64_t)random() << 20;	/* unrelated clocks */
}

/* Sum of the stages a report shows: only those present, as the model sums them. */
static int64_t sum_stages(const struct ntp_breakdown *b)
{
	int64_t s = 0;

	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		if (b->stage_present & (1u << i))
			s += b->stage[i];
	return s;
}

static int64_t sum_comps(const struct ntp_breakdown *b)
{
	int64_t s = 0;

	for (int i = 0; i < NTP_COMP_COUNT; i++)
		if (b->comp_present & (1u << i))
			s += b->comp[i];
	return s;
}

static void test_exact_sums_random(void **state)
{
	struct ntp_record h, t;
	struct ntp_breakdown b;
	struct flow f;

	(void)state;
	srandom(42);
	for (int i = 0; i < 200000; i++) {
		random_flow(&f);
		build(&f, &h, &t);
		assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
		int64_t e2e = (int64_t)(h.ts[NTP_TS_H_BLK_COMPLETE] - h.ts[NTP_TS_H_BLK_SUBMIT]);

		assert_int_equal(b.e2e, e2e);
		assert_int_equal(sum_stages(&b), e2e);
		assert_int_equal(sum_comps(&b), e2e);
		assert_int_equal(b.flags, 0);
		/* Host-only and target-only add up too. */
		assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), 0);
		assert_int_equal(sum_stages(&b), e2e);
		assert_true(b.flags & NTP_BD_HOST_ONLY);
		assert_int_equal(ntp_breakdown_compute(NULL, &t, &b), 0);
		assert_int_equal(sum_stages(&b),
				 (int64_t)(t.ts[NTP_TS_T_RSP_SENT] - t.ts[NTP_TS_T_CMD_ARRIVE]));
		assert_true(b.flags & NTP_BD_TARGET_ONLY);
	}
}

static struct flow base_flow(void)
{
	struct flow f = {
		.blk_sub = 500, .drv_sub = 3000, .wire_out = 5000, .t_recv = 4000, .t_sub = 60,
		.xfer = 7000, .h_r2t_recv = 1500, .h_data = 2500, .wire_back1 = 4500, .wire_out2 = 5500,
		.t_recv_data = 900, .t_data = 300, .storage = 60000, .t_comp = 600, .wire_back = 5200,
		.h_recv = 4300, .h_comp = 150, .blk_comp = 70, .off = 123456789012ull,
	};
	return f;
}

static void test_read_components(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], 500);
	assert_int_equal(b.comp[NTP_COMP_HOST_DRV_SUB], 3000);
	assert_int_equal(b.comp[NTP_COMP_WIRE], 5000 + 5200);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 4000);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_SUB], 60);
	assert_int_equal(b.comp[NTP_COMP_STORAGE], 60000);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 600);
	assert_int_equal(b.comp[NTP_COMP_HOST_RECV_RSP], 4300);
	assert_int_equal(b.comp[NTP_COMP_HOST_DRV_COMP], 150);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_COMP], 70);
	assert_false(b.comp_present & (1u << NTP_COMP_DATA_XFER));
	assert_false(b.comp_present & (1u << NTP_COMP_NET_AND_TARGET));
	assert_int_equal(b.stage[NTP_STAGE_HOST_BLOCK], 570);
	assert_int_equal(b.stage[NTP_STAGE_HOST_DRIVER], 3150);
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 10200 + 4000 + 4300);
	assert_int_equal(b.stage[NTP_STAGE_TARGET_DRIVER], 660);
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 60000);
	assert_int_equal(b.stage_present, (1u << NTP_STAGE_COUNT) - 1);
}

/* TCP write with R2T: two round trips, each with its own wire. */
static void test_r2t_write(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.write = 1;
	f.r2t = 1;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], 5000 + 4500 + 5500 + 5200);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_SUB], 60);
	assert_int_equal(b.comp[NTP_COMP_HOST_RECV_R2T], 1500);
	assert_int_equal(b.comp[NTP_COMP_HOST_DRV_DATA], 2500);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_DATA], 900);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_DATA], 300);
	assert_false(b.comp_present & (1u << NTP_COMP_DATA_XFER));
	assert_int_equal(b.stage[NTP_STAGE_HOST_DRIVER], 3000 + 2500 + 150);
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 20200 + 4000 + 1500 + 900 + 4300);
	assert_int_equal(sum_stages(&b), b.e2e);
	/* The host alone: both waits are "network and target". */
	assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_NET_AND_TARGET],
			 5000 + 4000 + 60 + 4500 + 5500 + 900 + 300 + 60000 + 600 + 5200);
	assert_int_equal(sum_stages(&b), b.e2e);
	/* A host that saw an R2T against a target that did not: not joinable. */
	t.ts_valid &= ~(1u << NTP_TS_T_R2T_SENT);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), -1);
	assert_true(b.flags & NTP_BD_INCOMPLETE);
}

/* RDMA write: the target's RDMA READ is the data transfer, inside its residence. */
static void test_rdma_read_write(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.write = 1;
	f.rdma = 1;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_DATA_XFER], 7000);
	assert_int_equal(b.comp[NTP_COMP_WIRE], 5000 + 5200);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_DATA], 900);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_DATA], 300);
	assert_false(b.comp_present & (1u << NTP_COMP_HOST_RECV_R2T));
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 10200 + 4000 + 7000 + 900 + 4300);
	assert_int_equal(sum_stages(&b), b.e2e);
	assert_string_equal(ntp_stage_name(NTP_STAGE_NETWORK, NTP_TRANSPORT_RDMA, 0, 0, 0),
			    "network (RDMA, NICs, wire)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_TARGET_DRIVER, NTP_TRANSPORT_RDMA, 0, 0, 0),
			    "target driver (nvmet-rdma)");
}

static void test_host_only(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), 0);
	assert_int_equal(b.flags, NTP_BD_HOST_ONLY);
	assert_int_equal(b.comp[NTP_COMP_NET_AND_TARGET], 5000 + 4000 + 60 + 60000 + 600 + 5200);
	assert_int_equal(b.comp[NTP_COMP_HOST_RECV_RSP], 4300);
	assert_false(b.comp_present & (1u << NTP_COMP_WIRE));
	assert_false(b.stage_present & (1u << NTP_STAGE_TARGET_DRIVER));
	assert_false(b.stage_present & (1u << NTP_STAGE_STORAGE));
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], b.comp[NTP_COMP_NET_AND_TARGET] + 4300);
	assert_string_equal(ntp_stage_name(NTP_STAGE_NETWORK, NTP_TRANSPORT_TCP, 0, 0, 1),
			    "network and target (not recorded)");
	/* An SPDK host has no block layer: block components 0, block stage absent. */
	h.ts_valid &= ~((1u << NTP_TS_H_BLK_SUBMIT) | (1u << NTP_TS_H_BLK_COMPLETE));
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], 0);
	assert_true(b.comp_present & (1u << NTP_COMP_HOST_BLK_SUB));
	assert_false(b.stage_present & (1u << NTP_STAGE_HOST_BLOCK));
	assert_int_equal(b.e2e, (int64_t)(h.ts[NTP_TS_H_DRV_COMPLETE] - h.ts[NTP_TS_H_DRV_SUBMIT]));
	assert_int_equal(sum_stages(&b), b.e2e);
	/* A host record without its response time cannot be split. */
	h.ts_valid &= ~(1u << NTP_TS_H_RSP_ARRIVE);
	assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), -1);
	assert_true(b.flags & NTP_BD_INCOMPLETE);
}

static void test_one_block_time(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.blk_sub = 3000;
	f.blk_comp = 2000;
	/* block_rq_complete missed: end to end ends at the driver's completion,
	 * the block stage is the submission half, and the shown stages add up. */
	build(&f, &h, &t);
	h.ts_valid &= ~(1u << NTP_TS_H_BLK_COMPLETE);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.e2e, (int64_t)(h.ts[NTP_TS_H_DRV_COMPLETE] - h.ts[NTP_TS_H_BLK_SUBMIT]));
	assert_true(b.stage_present & (1u << NTP_STAGE_HOST_BLOCK));
	assert_int_equal(b.stage[NTP_STAGE_HOST_BLOCK], 3000);
	assert_int_equal(sum_stages(&b), b.e2e);
	/* The submission time missed instead. */
	build(&f, &h, &t);
	h.ts_valid &= ~(1u << NTP_TS_H_BLK_SUBMIT);
	assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), 0);
	assert_int_equal(b.stage[NTP_STAGE_HOST_BLOCK], 2000);
	assert_int_equal(sum_stages(&b), b.e2e);
}

/* The bio's submission seen (bi_issue): end to end and the host block
 * layer's submission start there, before the tag wait; the stages still add
 * up, with or without the target, on the fast flow's records too. */
static void test_bio_submit(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b, b0;

	(void)state;
	f.blk_sub = 3000;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b0), 0);
	SET(&h, NTP_TS_H_BIO_SUBMIT, h.ts[NTP_TS_H_BLK_SUBMIT] - 700000);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.e2e, b0.e2e + 700000);
	assert_int_equal(b.e2e, (int64_t)(h.ts[NTP_TS_H_BLK_COMPLETE] - h.ts[NTP_TS_H_BIO_SUBMIT]));
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], 3000 + 700000);
	assert_int_equal(b.stage[NTP_STAGE_HOST_BLOCK], b0.stage[NTP_STAGE_HOST_BLOCK] + 700000);
	assert_int_equal(b.comp[NTP_COMP_WIRE], b0.comp[NTP_COMP_WIRE]);
	assert_int_equal(sum_stages(&b), b.e2e);
	assert_int_equal(ntp_breakdown_compute(&h, NULL, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], 3000 + 700000);
	assert_int_equal(sum_stages(&b), b.e2e);
	/* without the request's allocation time the bio's still starts it */
	h.ts_valid &= ~(1u << NTP_TS_H_BLK_SUBMIT);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.e2e, b0.e2e + 700000);
	assert_true(b.stage_present & (1u << NTP_STAGE_HOST_BLOCK));
	assert_int_equal(sum_stages(&b), b.e2e);
}

/* bio_issue's 51 bits of ktime_get_ns back to a full time (ntprof_event.h) */
static void test_bio_issue_time(void **state)
{
	const uint64_t w = 1ull << NTP_BIO_ISSUE_BITS, size = 8ull << NTP_BIO_ISSUE_BITS;
	uint64_t now = 3 * w + 5000000000ull;

	(void)state;
	/* the size bits above are dropped, the upper bits come from now */
	assert_true(ntp_bio_issue_time(size | ((now - 1000) & (w - 1)), now) == now - 1000);
	assert_true(ntp_bio_issue_time(now & (w - 1), now) == now);
	/* across a wrap of the 51 bits */
	now = 3 * w + 100;
	assert_true(ntp_bio_issue_time(size | ((now - 1000) & (w - 1)), now) == now - 1000);
	/* unset, and older than the bound: not believed */
	assert_true(ntp_bio_issue_time(size, now) == 0);
	assert_true(ntp_bio_issue_time((now - NTP_BIO_ISSUE_MAX_AGE_NS - 1) & (w - 1), now) == 0);
	assert_true(ntp_bio_issue_time((now - NTP_BIO_ISSUE_MAX_AGE_NS) & (w - 1), now) ==
		    now - NTP_BIO_ISSUE_MAX_AGE_NS);
	/* before the first wrap, a time after now is no time */
	assert_true(ntp_bio_issue_time(2000, 1000) == 0);
}

static void test_target_only(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(NULL, &t, &b), 0);
	assert_int_equal(b.flags, NTP_BD_TARGET_ONLY);
	assert_int_equal(b.e2e, 4000 + 60 + 60000 + 600);
	assert_false(b.stage_present & ((1u << NTP_STAGE_HOST_BLOCK) | (1u << NTP_STAGE_HOST_DRIVER)));
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 60000);
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 4000);
	assert_int_equal(sum_stages(&b), b.e2e);
}

/* docs/stage-model.md: a missed response post falls back to the storage completion time. */
static void test_fallback(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	build(&f, &h, &t);
	t.ts_valid &= ~(1u << NTP_TS_T_RSP_SENT);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_true(b.flags & NTP_BD_RSP_FALLBACK);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 0);
	/* The target's completion time moves into the wire; the sum stays exact. */
	assert_int_equal(b.comp[NTP_COMP_WIRE], 5000 + 5200 + 600);
	assert_int_equal(sum_stages(&b), b.e2e);
	/* The BPF side may flag it too, with RSP_SENT left stale. */
	build(&f, &h, &t);
	t.flags |= NTP_REC_F_RSP_FALLBACK;
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_true(b.flags & NTP_BD_RSP_FALLBACK);
	/* No storage completion either: incomplete. */
	t.ts_valid &= ~(1u << NTP_TS_T_STORAGE_DONE);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), -1);
	assert_true(b.flags & NTP_BD_INCOMPLETE);
}

/* Loopback: the target's residence can exceed the host's wait by a little. */
static void test_negative_wire(void **state)
{
	struct flow f = base_flow();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.wire_out = -400;
	f.wire_back = 100;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], -300);
	assert_int_equal(sum_stages(&b), b.e2e);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ntp_stage_name(NTP_STAGE_HOST_DRIVER, NTP_TRANSPORT_TCP, 0, 0, 0),
			    "host driver (nvme-tcp)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_NETWORK, NTP_TRANSPORT_TCP, 0, 0, 0),
			    "network (TCP/IP, NICs, wire)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_TARGET_DRIVER, NTP_TRANSPORT_TCP, 0, 0, 0),
			    "target driver (nvmet-tcp)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_STORAGE, NTP_TRANSPORT_TCP, 0, 0, 0),
			    "storage (target block layer, drive)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_STORAGE, NTP_TRANSPORT_TCP, NTP_IMPL_SPDK,
					   NTP_IMPL_SPDK, 0), "storage (SPDK bdev, drive)");
	assert_string_equal(ntp_stage_name(NTP_STAGE_HOST_DRIVER, NTP_TRANSPORT_TCP, NTP_IMPL_SPDK,
					   0, 0), "host driver (SPDK)");
	for (int c = 0; c < NTP_COMP_COUNT; c++)
		assert_string_not_equal(ntp_component_name(c), "?");
	assert_int_equal(ntp_component_stage(NTP_COMP_HOST_RECV_RSP), NTP_STAGE_NETWORK);
	assert_int_equal(ntp_component_stage(NTP_COMP_STORAGE), NTP_STAGE_STORAGE);
	assert_string_equal(ntp_stage_key(NTP_STAGE_TARGET_DRIVER), "target_driver");
	assert_string_equal(ntp_component_key(NTP_COMP_NET_AND_TARGET), "net_and_target");
	for (int c = 0; c < NTP_COMP_COUNT; c++)
		assert_string_not_equal(ntp_component_key(c), "?");
}

/* Every record of generated recordings: each flow, both transports, several
 * hosts, missed response posts. Joined, host-only and target-only sums exact. */
static void check_generated(uint8_t transport, uint32_t hosts, double miss)
{
	struct ntp_synth_config c;
	struct ntp_synth *s;
	struct ntp_pend *tp = ntp_pend_new(1 << 16);
	struct ntp_record r;
	struct ntp_breakdown b;
	uint64_t t, dropped = 0, joined = 0, fallback = 0, hostrecs = 0;
	char err[256];
	enum ntp_synth_event ev;

	ntp_synth_defaults(&c);
	c.seed = 99;
	c.count = 40000;
	c.duration_ns = 0;
	c.sampling = 1;
	c.transport = transport;
	c.hosts = hosts;
	c.read_pct = 50;
	c.sizes[0] = 4096;
	c.sizes[1] = 131072;
	c.nsizes = 2;
	c.miss_rsp_sent = miss;
	c.target_clock_offset = 123456789;
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	assert_non_null(tp);
	while ((ev = ntp_synth_next(s, &r, &t)) != NTP_SYNTH_END) {
		const struct ntp_record *twin;
		struct ntp_record ev_rec;

		if (ev != NTP_SYNTH_RECORD)
			continue;
		if (r.side == NTP_SIDE_TARGET) {
			assert_int_equal(ntp_breakdown_compute(NULL, &r, &b), 0);
			assert_int_equal(sum_stages(&b), b.e2e);
			assert_int_equal(sum_comps(&b), b.e2e);
			ntp_pend_put(tp, &r, &ev_rec);
			continue;
		}
		hostrecs++;
		int64_t e2e = (int64_t)(r.ts[NTP_TS_H_BLK_COMPLETE] - r.ts[NTP_TS_H_BLK_SUBMIT]);

		assert_int_equal(ntp_breakdown_compute(&r, NULL, &b), 0);
		assert_int_equal(sum_stages(&b), e2e);
		twin = ntp_pend_take(tp, &r, &dropped);
		assert_non_null(twin);
		assert_int_equal(ntp_breakdown_compute(&r, twin, &b), 0);
		assert_int_equal(b.e2e, e2e);
		assert_int_equal(sum_stages(&b), e2e);
		assert_int_equal(sum_comps(&b), e2e);
		assert_int_equal(b.stage_present, (1u << NTP_STAGE_COUNT) - 1);
		fallback += !!(b.flags & NTP_BD_RSP_FALLBACK);
		if (r.opcode == 0x01 && r.len > c.inline_max)
			assert_true(b.comp_present & (1u << (transport == NTP_TRANSPORT_RDMA
							     ? NTP_COMP_DATA_XFER : NTP_COMP_HOST_RECV_R2T)));
		joined++;
	}
	assert_int_equal(joined, hostrecs);
	assert_int_equal(joined, c.count);
	assert_int_equal(dropped, 0);
	if (miss > 0)
		assert_true(fallback > 0);
	else
		assert_int_equal(fallback, 0);
	ntp_synth_free(s);
	ntp_pend_free(tp);
}

static void test_generated_tcp(void **state) { (void)state; check_generated(NTP_TRANSPORT_TCP, 1, 0); }
static void test_generated_rdma_hosts(void **state) { (void)state; check_generated(NTP_TRANSPORT_RDMA, 3, 0); }
static void test_generated_fallback(void **state) { (void)state; check_generated(NTP_TRANSPORT_TCP, 2, 0.1); }

/*
 * The straight-line breakdown of the common joined flow against the general
 * code, on random records: random times (any 64-bit values, so sums wrap),
 * and each slot that decides the flow (block layer, R2T, backpressure,
 * response sent, fallback flag) present or not, and the bio's submission
 * (which moves the start, not the flow) or not, so both the commands that
 * take the fast path and those just outside it are compared, whole
 * breakdowns and return values.
 */
static void test_fast_path_same(void **state)
{
	static const int host_slots[] = {
		NTP_TS_H_BLK_SUBMIT, NTP_TS_H_R2T_ARRIVE, NTP_TS_H_R2T_DRV, NTP_TS_H_DATA_SENT,
		NTP_TS_H_BLK_COMPLETE, NTP_TS_H_RSP_DRV,
	};
	static const int target_slots[] = {
		NTP_TS_T_R2T_SENT, NTP_TS_T_DATA_ARRIVE, NTP_TS_T_DATA_RECV, NTP_TS_T_RSP_SENT,
		NTP_TS_T_BP_RECV, NTP_TS_T_BP_RSP, NTP_TS_T_CMD_RECV,
	};
	unsigned fast = 0, fast_bio = 0;

	(void)state;
	srandom(13);
	for (int n = 0; n < 200000; n++) {
		struct ntp_record h, t;
		struct ntp_breakdown a, b;
		int ra, rb;

		memset(&h, 0, sizeof(h));
		memset(&t, 0, sizeof(t));
		h.side = NTP_SIDE_HOST;
		t.side = NTP_SIDE_TARGET;
		h.transport = t.transport = random() % 4 ? NTP_TRANSPORT_TCP : NTP_TRANSPORT_RDMA;
		for (int k = 0; k < NTP_TS_SLOTS; k++) {
			/* small times most often (real spans: mostly in slot
			 * order, neighbours overlapping, so components of either
			 * sign), any 64 bits sometimes (a negative end to end or
			 * residence: both leave the command out) */
			uint64_t big = (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ (uint64_t)random();

			h.ts[k] = random() % 8 ? 1000000 + (uint64_t)k * 5000 + (uint64_t)(random() % 10000) : big;
			t.ts[k] = random() % 8 ? 5000000 + (uint64_t)k * 5000 + (uint64_t)(random() % 10000) : big;
		}
		/* every slot a flow needs, then some of the deciding ones taken away */
		h.ts_valid = (1u << NTP_TS_H_SEND_DONE) - 1;
		if (n % 2) {	/* every other command, before the request (the draws stay those of the others) */
			h.ts_valid |= 1u << NTP_TS_H_BIO_SUBMIT;
			h.ts[NTP_TS_H_BIO_SUBMIT] = h.ts[NTP_TS_H_BLK_SUBMIT] - (uint64_t)(n % 20000);
		}
		t.ts_valid = ((1u << (NTP_TS_T_BP_RSP + 1)) - 1) & ~((1u << NTP_TS_T_CMD_ARRIVE) - 1);
		if (random() % 2) {
			h.ts_valid &= ~(1u << NTP_TS_H_R2T_ARRIVE);
			t.ts_valid &= ~(1u << NTP_TS_T_R2T_SENT | 1u << NTP_TS_T_BP_RECV | 1u << NTP_TS_T_BP_RSP);
		}
		for (int k = 0; k < 2; k++) {
			if (random() % 3 == 0)
				h.ts_valid ^= 1u << host_slots[random() % (sizeof(host_slots) / sizeof(host_slots[0]))];
			if (random() % 3 == 0)
				t.ts_valid ^= 1u << target_slots[random() % (sizeof(target_slots) / sizeof(target_slots[0]))];
		}
		if (random() % 10 == 0)
			t.flags |= NTP_REC_F_RSP_FALLBACK;
		memset(&a, 0x5a, sizeof(a));
		memset(&b, 0xa5, sizeof(b));
		ra = ntp_breakdown_compute(&h, &t, &a);
		rb = ntp_breakdown_compute_general(&h, &t, &b);
		assert_int_equal(ra, rb);
		assert_memory_equal(a.comp, b.comp, sizeof(a.comp));
		assert_memory_equal(a.stage, b.stage, sizeof(a.stage));
		assert_int_equal(a.comp_present, b.comp_present);
		assert_int_equal(a.stage_present, b.stage_present);
		assert_int_equal(a.e2e, b.e2e);
		assert_int_equal(a.flags, b.flags);
		fast += ra == 0 && a.comp_present == b.comp_present && !(h.ts_valid & 1u << NTP_TS_H_R2T_ARRIVE) &&
			!(t.ts_valid & (1u << NTP_TS_T_R2T_SENT | 1u << NTP_TS_T_BP_RECV | 1u << NTP_TS_T_BP_RSP)) &&
			(h.ts_valid & 1u << NTP_TS_H_BLK_SUBMIT) && (h.ts_valid & 1u << NTP_TS_H_BLK_COMPLETE) &&
			(t.ts_valid & 1u << NTP_TS_T_RSP_SENT) && !(t.flags & NTP_REC_F_RSP_FALLBACK);
		/* the bio's submission keeps the flow (stage.h NTP_FAST_H_BIO) */
		if (ra == 0 && (h.ts_valid & 1u << NTP_TS_H_BIO_SUBMIT) && ntp_fast_flow(&h, &t)) {
			assert_int_equal(a.e2e, (int64_t)(h.ts[NTP_TS_H_BLK_COMPLETE] - h.ts[NTP_TS_H_BIO_SUBMIT]));
			fast_bio++;
		}
	}
	/* a good share of the commands took the fast path, with the bio's
	 * submission too */
	assert_true(fast > 20000);
	assert_true(fast_bio > 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_sums_random),
		cmocka_unit_test(test_read_components),
		cmocka_unit_test(test_r2t_write),
		cmocka_unit_test(test_rdma_read_write),
		cmocka_unit_test(test_host_only),
		cmocka_unit_test(test_one_block_time),
		cmocka_unit_test(test_target_only),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_negative_wire),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_generated_tcp),
		cmocka_unit_test(test_generated_rdma_hosts),
		cmocka_unit_test(test_generated_fallback),
		cmocka_unit_test(test_fast_path_same),
		cmocka_unit_test(test_bio_submit),
		cmocka_unit_test(test_bio_issue_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
