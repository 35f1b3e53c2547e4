// SPDX-License-Identifier: GPL-2.0
/* test_backpressure.c - storage backpressure in the stage model
 * (docs/backpressure.md): the target's blocked parts of its receive and
 * response paths, and the wire's share, move to storage; the five stages
 * still add up exactly; the kernel's twin (bpf/ntprof_occ.h) moves the same
 * spans; records without the slots (older files) are read as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../../bpf/ntprof_occ.h"
#include "core/model/stage.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)
#define OFF 987654321012ull	/* target clock ahead of the host's */

/* A read: every span in ns. bp_recv / bp_rsp < 0: slot absent. */
struct rd {
	int64_t blk_sub, drv_sub, wire_out, t_recv, t_sub, storage, t_comp, wire_back, h_recv, h_comp, blk_comp;
	int64_t bp_recv, bp_rsp;
	int r2t;		/* a TCP write with an R2T instead */
	int64_t r2t_wire, h_data, wire_out2;
};

static void build(const struct rd *f, struct ntp_record *h, struct ntp_record *t)
{
	uint64_t now = 5000000000ull;

	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = NTP_TRANSPORT_TCP;
	h->opcode = t->opcode = f->r2t ? 0x01 : 0x02;
	h->len = t->len = 4096;
	SET(h, NTP_TS_H_BLK_SUBMIT, now);
	SET(h, NTP_TS_H_DRV_SUBMIT, now += f->blk_sub);
	SET(h, NTP_TS_H_CMD_SENT, now += f->drv_sub);
	SET(t, NTP_TS_T_CMD_ARRIVE, (now += f->wire_out) + OFF);
	SET(t, NTP_TS_T_CMD_RECV, (now += f->t_recv) + OFF);
	if (f->r2t) {
		SET(t, NTP_TS_T_R2T_SENT, (now += f->t_sub) + OFF);
		SET(h, NTP_TS_H_R2T_ARRIVE, now += f->r2t_wire);
		SET(h, NTP_TS_H_R2T_DRV, now += 100);
		SET(h, NTP_TS_H_DATA_SENT, now += f->h_data);
		SET(t, NTP_TS_T_DATA_ARRIVE, (now += f->wire_out2) + OFF);
		SET(t, NTP_TS_T_DATA_RECV, (now += 300) + OFF);
		SET(t, NTP_TS_T_STORAGE_SUBMIT, (now += 50) + OFF);
	} else {
		SET(t, NTP_TS_T_STORAGE_SUBMIT, (now += f->t_sub) + OFF);
	}
	SET(t, NTP_TS_T_STORAGE_DONE, (now += f->storage) + OFF);
	SET(t, NTP_TS_T_RSP_SENT, (now += f->t_comp) + OFF);
	SET(h, NTP_TS_H_RSP_ARRIVE, now += f->wire_back);
	SET(h, NTP_TS_H_RSP_DRV, now += f->h_recv);
	SET(h, NTP_TS_H_DRV_COMPLETE, now += f->h_comp);
	SET(h, NTP_TS_H_BLK_COMPLETE, now += f->blk_comp);
	if (f->bp_recv >= 0)
		SET(t, NTP_TS_T_BP_RECV, (uint64_t)f->bp_recv);
	if (f->bp_rsp >= 0)
		SET(t, NTP_TS_T_BP_RSP, (uint64_t)f->bp_rsp);
}

/* A busy drive at a deep queue: the command waited 8 ms in the target's
 * socket, 6 ms of it while the worker slept on the drive's tags; its
 * response waited 2 ms, 1.5 ms of it behind such a sleep. */
static struct rd busy(void)
{
	struct rd f = {
		.blk_sub = 500, .drv_sub = 3000, .wire_out = 4000000, .t_recv = 8000000, .t_sub = 60,
		.storage = 2000000, .t_comp = 2000000, .wire_back = 40000, .h_recv = 4300, .h_comp = 150,
		.blk_comp = 70, .bp_recv = 6000000, .bp_rsp = 1500000,
	};
	return f;
}

static int64_t stage_sum(const struct ntp_breakdown *b)
{
	int64_t s = 0;

	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		s += b->stage[i];
	return s;
}

static int64_t comp_sum(const struct ntp_breakdown *b)
{
	int64_t s = 0;

	for (int c = 0; c < NTP_COMP_COUNT; c++)
		if (b->comp_present & (1u << c))
			s += b->comp[c];
	return s;
}

static void test_busy_read(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;
	const int64_t wire = 4000000 + 40000;			/* out + back */
	const int64_t bpw = wire * 6000000 / 8000000;		/* the receive path's blocked share */

	(void)state;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], wire - bpw);
	assert_int_equal(b.comp[NTP_COMP_BP_WIRE], bpw);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 2000000);
	assert_int_equal(b.comp[NTP_COMP_BP_RECV], 6000000);
	assert_int_equal(b.comp[NTP_COMP_STORAGE], 2000000);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 500000);
	assert_int_equal(b.comp[NTP_COMP_BP_RSP], 1500000);
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 2000000 + bpw + 6000000 + 1500000);
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], wire - bpw + 2000000 + 4300);
	assert_int_equal(b.stage[NTP_STAGE_TARGET_DRIVER], 60 + 500000);
	assert_int_equal(stage_sum(&b), b.e2e);
	assert_int_equal(comp_sum(&b), b.e2e);
	for (int c = NTP_COMP_BP_WIRE; c <= NTP_COMP_BP_RSP; c++)
		assert_int_equal(ntp_component_stage(c), NTP_STAGE_STORAGE);
}

/* The slots absent (an older file, or the exit hook not loaded): the
 * breakdown is the one without backpressure, component for component. */
static void test_without_slots(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.bp_recv = f.bp_rsp = -1;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_false(b.comp_present & (1u << NTP_COMP_BP_WIRE | 1u << NTP_COMP_BP_RECV | 1u << NTP_COMP_BP_RSP));
	assert_int_equal(b.comp[NTP_COMP_WIRE], 4040000);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 8000000);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 2000000);
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 2000000);
	assert_int_equal(stage_sum(&b), b.e2e);
}

/* No blocking (a rate-limited link, a busy CPU): the slots are 0 and
 * nothing moves, however long the waits. */
static void test_zero_blocked(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.bp_recv = f.bp_rsp = 0;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_true(b.comp_present & (1u << NTP_COMP_BP_RECV));
	assert_int_equal(b.comp[NTP_COMP_BP_WIRE], 0);
	assert_int_equal(b.comp[NTP_COMP_BP_RECV], 0);
	assert_int_equal(b.comp[NTP_COMP_BP_RSP], 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], 4040000);
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 2000000);
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 4040000 + 8000000 + 4300);
	assert_int_equal(stage_sum(&b), b.e2e);
}

/* A slot larger than its span (a file edited by hand) is cut to the span;
 * a negative wire (loop-back) gives none of itself away. */
static void test_clamps(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.bp_recv = 9000000;	/* > t_recv */
	f.bp_rsp = 7000000;	/* > t_comp */
	f.wire_out = 10000;
	f.wire_back = -30000;	/* wire -20 us */
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_BP_RECV], 8000000);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 0);
	assert_int_equal(b.comp[NTP_COMP_BP_RSP], 2000000);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], -20000);
	assert_int_equal(b.comp[NTP_COMP_BP_WIRE], 0);
	assert_int_equal(stage_sum(&b), b.e2e);
}

/* The response's send not seen (fallback to STORAGE_DONE): no response
 * path, nothing to cut from it. */
static void test_fallback(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	build(&f, &h, &t);
	t.ts_valid &= ~(1u << NTP_TS_T_RSP_SENT);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_true(b.flags & NTP_BD_RSP_FALLBACK);
	assert_false(b.comp_present & (1u << NTP_COMP_BP_RSP));
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 0);
	assert_int_equal(stage_sum(&b), b.e2e);
}

/* An R2T write: its wire holds the data's round trip too; only the
 * target's own blocked spans move. Target-only: no wire at all. */
static void test_r2t_and_target_only(void **state)
{
	struct rd f = busy();
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	f.r2t = 1;
	f.r2t_wire = 30000;
	f.h_data = 2000;
	f.wire_out2 = 25000;
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.comp[NTP_COMP_BP_WIRE], 0);
	assert_int_equal(b.comp[NTP_COMP_BP_RECV], 6000000);
	assert_int_equal(stage_sum(&b), b.e2e);

	f = busy();
	build(&f, &h, &t);
	assert_int_equal(ntp_breakdown_compute(NULL, &t, &b), 0);
	assert_false(b.comp_present & (1u << NTP_COMP_BP_WIRE));
	assert_int_equal(b.comp[NTP_COMP_BP_RECV], 6000000);
	assert_int_equal(b.comp[NTP_COMP_BP_RSP], 1500000);
	assert_int_equal(b.stage[NTP_STAGE_STORAGE], 9500000);
	assert_int_equal(b.e2e, 8000000 + 60 + 2000000 + 2000000);
	assert_int_equal(stage_sum(&b), b.e2e);
}

static int64_t rnd(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(random() % (hi - lo + 1));
}

/* Random commands: exact sums, each part within its span, and the kernel's
 * twin moving the very same spans as stage.c. */
static void test_random_and_twin(void **state)
{
	(void)state;
	srandom(14);
	for (int i = 0; i < 20000; i++) {
		struct rd f = {
			.blk_sub = rnd(0, 9000), .drv_sub = rnd(0, 9000), .wire_out = rnd(-40000, 9000000),
			.t_recv = rnd(0, 9000000), .t_sub = rnd(0, 900), .storage = rnd(0, 9000000),
			.t_comp = rnd(0, 9000000), .wire_back = rnd(-40000, 90000), .h_recv = rnd(0, 9000),
			.h_comp = rnd(0, 900), .blk_comp = rnd(0, 900), .bp_recv = rnd(-1, 9900000),
			.bp_rsp = rnd(-1, 9900000), .r2t = (int)rnd(0, 1), .r2t_wire = rnd(0, 90000),
			.h_data = rnd(0, 9000), .wire_out2 = rnd(0, 90000),
		};
		struct ntp_record h, t;
		struct ntp_breakdown bj, bt;
		__u64 tn[NTP_OCC_SLOTS] = { 0 }, hn[NTP_OCC_SLOTS] = { 0 };
		int64_t bpw;

		build(&f, &h, &t);
		assert_int_equal(ntp_breakdown_compute(&h, &t, &bj), 0);
		assert_int_equal(ntp_breakdown_compute(NULL, &t, &bt), 0);
		assert_int_equal(stage_sum(&bj), bj.e2e);
		assert_int_equal(comp_sum(&bj), bj.e2e);
		assert_int_equal(stage_sum(&bt), bt.e2e);
		for (int c = NTP_COMP_BP_WIRE; c <= NTP_COMP_BP_RSP; c++)
			if (bj.comp_present & (1u << c))
				assert_true(bj.comp[c] >= 0);
		assert_true(bj.comp[NTP_COMP_TGT_RECV_CMD] >= 0);
		assert_true(bj.comp[NTP_COMP_TGT_DRV_COMP] >= 0);
		bpw = bj.comp_present & (1u << NTP_COMP_BP_WIRE) ? bj.comp[NTP_COMP_BP_WIRE] : 0;
		assert_true(bpw == 0 || bpw <= bj.comp[NTP_COMP_WIRE] + bpw);
		/* the twin: target spans as target-only stages, and joined */
		assert_int_equal(ntp_occ_target(&t, tn), 0);
		assert_int_equal(ntp_occ_host(&h, hn), 0);
		assert_int_equal((int64_t)(tn[NTP_OCC_T_RECV] + tn[NTP_OCC_T_XFER]), bt.stage[NTP_STAGE_NETWORK]);
		assert_int_equal((int64_t)tn[NTP_OCC_T_DRIVER], bt.stage[NTP_STAGE_TARGET_DRIVER]);
		assert_int_equal((int64_t)tn[NTP_OCC_T_STORAGE], bt.stage[NTP_STAGE_STORAGE]);
		/* joined: the wire's share is the only part the kernel cannot see
		 * (a cross-machine quantity) */
		assert_int_equal((int64_t)tn[NTP_OCC_T_STORAGE] + bpw, bj.stage[NTP_STAGE_STORAGE]);
		assert_int_equal((int64_t)(hn[NTP_OCC_H_WAIT] + hn[NTP_OCC_H_RECV] - tn[NTP_OCC_T_DRIVER] -
					   tn[NTP_OCC_T_STORAGE]) - bpw, bj.stage[NTP_STAGE_NETWORK]);
	}
}

static void test_names_and_order(void **state)
{
	int seen[NTP_COMP_COUNT] = { 0 };

	(void)state;
	assert_string_equal(ntp_component_key(NTP_COMP_BP_WIRE), "bp_wire");
	assert_string_equal(ntp_component_key(NTP_COMP_BP_RECV), "bp_recv");
	assert_string_equal(ntp_component_key(NTP_COMP_BP_RSP), "bp_rsp");
	for (int c = NTP_COMP_BP_WIRE; c <= NTP_COMP_BP_RSP; c++) {
		assert_true(strncmp(ntp_component_name(c), "storage: backpressure", 21) == 0);
		assert_true(strlen(ntp_component_name(c)) <= 38);
	}
	for (int i = 0; i < NTP_COMP_COUNT; i++)
		seen[ntp_component_path_order[i]]++;
	for (int c = 0; c < NTP_COMP_COUNT; c++)
		assert_int_equal(seen[c], 1);
	/* each part right after the component it is cut from */
	for (int i = 0; i + 1 < NTP_COMP_COUNT; i++) {
		if (ntp_component_path_order[i + 1] == NTP_COMP_BP_WIRE)
			assert_int_equal(ntp_component_path_order[i], NTP_COMP_WIRE);
		if (ntp_component_path_order[i + 1] == NTP_COMP_BP_RECV)
			assert_int_equal(ntp_component_path_order[i], NTP_COMP_TGT_RECV_CMD);
		if (ntp_component_path_order[i + 1] == NTP_COMP_BP_RSP)
			assert_int_equal(ntp_component_path_order[i], NTP_COMP_TGT_DRV_COMP);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_read),
		cmocka_unit_test(test_without_slots),
		cmocka_unit_test(test_zero_blocked),
		cmocka_unit_test(test_clamps),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_r2t_and_target_only),
		cmocka_unit_test(test_random_and_twin),
		cmocka_unit_test(test_names_and_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
