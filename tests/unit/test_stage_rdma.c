// SPDX-License-Identifier: GPL-2.0
/*
 * test_stage_rdma.c - the stage model on NVMe/RDMA records as the kernel side
 * wrote them: two joined pairs taken verbatim from a test-bed recording
 * (Debian 6.1, nvme-rdma and nvmet-rdma over rdma_rxe in one guest,
 * `ntprof record -r both -t rdma -s 1 --fentry`, `ntprof dump`, seq 100 of
 * each run). Every expected value below is a difference of two of these
 * timestamps, worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/stage.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)

static void pair_init(struct ntp_record *h, struct ntp_record *t, uint8_t opcode, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	memset(t, 0, sizeof(*t));
	h->side = NTP_SIDE_HOST;
	t->side = NTP_SIDE_TARGET;
	h->transport = t->transport = NTP_TRANSPORT_RDMA;
	h->opcode = t->opcode = opcode;
	h->len = t->len = len;
	h->flags = t->flags = NTP_REC_F_SAMPLED_EXACT;
}

static int64_t sum_stages(const struct ntp_breakdown *b)
{
	int64_t s = 0;

	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		if (b->stage_present & (1u << i))
			s += b->stage[i];
	return s;
}

/* 4 KiB read at QD1: one round trip; the RDMA WRITE of the data travels
 * ahead of the response SEND, inside the host's wait. */
static void test_recorded_read(void **state)
{
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	pair_init(&h, &t, 0x02, 4096);
	SET(&h, NTP_TS_H_BLK_SUBMIT, 32505142152ull);
	SET(&h, NTP_TS_H_DRV_SUBMIT, 32505165699ull);
	SET(&h, NTP_TS_H_CMD_SENT, 32505196588ull);
	SET(&h, NTP_TS_H_RSP_ARRIVE, 32505971758ull);
	SET(&h, NTP_TS_H_RSP_DRV, 32506067379ull);
	SET(&h, NTP_TS_H_DRV_COMPLETE, 32506087905ull);
	SET(&h, NTP_TS_H_BLK_COMPLETE, 32506092927ull);
	SET(&h, NTP_TS_H_SEND_DONE, 32505676631ull);
	SET(&t, NTP_TS_T_CMD_ARRIVE, 32505416896ull);
	SET(&t, NTP_TS_T_CMD_RECV, 32505492313ull);
	SET(&t, NTP_TS_T_STORAGE_SUBMIT, 32505539047ull);
	SET(&t, NTP_TS_T_STORAGE_DONE, 32505596038ull);
	SET(&t, NTP_TS_T_RSP_QUEUED, 32505600868ull);
	SET(&t, NTP_TS_T_RSP_SENT, 32505600868ull);
	SET(&t, NTP_TS_T_RSP_SEND_DONE, 32506018691ull);

	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.flags, 0);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_SUB], 23547);
	assert_int_equal(b.comp[NTP_COMP_HOST_DRV_SUB], 30889);
	/* wait 775170 (CMD_SENT -> RSP_ARRIVE) - residence 183972 (CMD_ARRIVE -> RSP_SENT) */
	assert_int_equal(b.comp[NTP_COMP_WIRE], 591198);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 75417);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_SUB], 46734);
	assert_int_equal(b.comp[NTP_COMP_STORAGE], 56991);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 4830);
	assert_int_equal(b.comp[NTP_COMP_HOST_RECV_RSP], 95621);
	assert_int_equal(b.comp[NTP_COMP_HOST_DRV_COMP], 20526);
	assert_int_equal(b.comp[NTP_COMP_HOST_BLK_COMP], 5022);
	assert_false(b.comp_present & (1u << NTP_COMP_DATA_XFER));
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 591198 + 75417 + 95621);
	assert_int_equal(b.stage[NTP_STAGE_TARGET_DRIVER], 46734 + 4830);
	assert_int_equal(b.e2e, 950775);
	assert_int_equal(sum_stages(&b), b.e2e);
}

/* 128 KiB write at QD4: the target fetches the data with an RDMA READ
 * (R2T_SENT = posted, DATA_ARRIVE = its CQ event, DATA_RECV = the
 * completion handler); the READ is the "data transfer" inside the target's
 * residence, and the host sees one round trip. */
static void test_recorded_write_rdma_read(void **state)
{
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	pair_init(&h, &t, 0x01, 131072);
	SET(&h, NTP_TS_H_BLK_SUBMIT, 60893147214ull);
	SET(&h, NTP_TS_H_DRV_SUBMIT, 60893240487ull);
	SET(&h, NTP_TS_H_CMD_SENT, 60893265906ull);
	SET(&h, NTP_TS_H_RSP_ARRIVE, 60919413595ull);
	SET(&h, NTP_TS_H_RSP_DRV, 60919584835ull);
	SET(&h, NTP_TS_H_DRV_COMPLETE, 60919604120ull);
	SET(&h, NTP_TS_H_BLK_COMPLETE, 60919606976ull);
	SET(&h, NTP_TS_H_SEND_DONE, 60895942727ull);
	SET(&t, NTP_TS_T_CMD_ARRIVE, 60893686388ull);
	SET(&t, NTP_TS_T_CMD_RECV, 60894920566ull);
	SET(&t, NTP_TS_T_R2T_SENT, 60895393801ull);
	SET(&t, NTP_TS_T_DATA_ARRIVE, 60918227835ull);
	SET(&t, NTP_TS_T_DATA_RECV, 60918358861ull);
	SET(&t, NTP_TS_T_STORAGE_SUBMIT, 60918378152ull);
	SET(&t, NTP_TS_T_STORAGE_DONE, 60918650003ull);
	SET(&t, NTP_TS_T_RSP_QUEUED, 60918657211ull);
	SET(&t, NTP_TS_T_RSP_SENT, 60918657211ull);
	SET(&t, NTP_TS_T_RSP_SEND_DONE, 60919491288ull);

	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_int_equal(b.flags, 0);
	/* wait 26147689 - residence 24970823 */
	assert_int_equal(b.comp[NTP_COMP_WIRE], 1176866);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_CMD], 1234178);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_SUB], 473235);
	assert_int_equal(b.comp[NTP_COMP_DATA_XFER], 22834034);
	assert_int_equal(b.comp[NTP_COMP_TGT_RECV_DATA], 131026);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_DATA], 19291);
	assert_int_equal(b.comp[NTP_COMP_STORAGE], 271851);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 7208);
	assert_int_equal(b.comp[NTP_COMP_HOST_RECV_RSP], 171240);
	/* no TCP R2T round trip on the host */
	assert_false(b.comp_present & (1u << NTP_COMP_HOST_RECV_R2T));
	assert_false(b.comp_present & (1u << NTP_COMP_HOST_DRV_DATA));
	assert_int_equal(b.stage[NTP_STAGE_NETWORK], 1176866 + 1234178 + 22834034 + 131026 + 171240);
	assert_int_equal(b.stage[NTP_STAGE_TARGET_DRIVER], 473235 + 19291 + 7208);
	assert_int_equal(b.e2e, 26459762);
	assert_int_equal(sum_stages(&b), b.e2e);

	/* The target alone: its residence, with the READ as the data transfer. */
	assert_int_equal(ntp_breakdown_compute(NULL, &t, &b), 0);
	assert_int_equal(b.e2e, 24970823);
	assert_int_equal(b.comp[NTP_COMP_DATA_XFER], 22834034);
	assert_int_equal(sum_stages(&b), b.e2e);
}

/* A missed post hook (kprobe flavour): the target's send completion closes
 * the record with RSP_FALLBACK, and nvmet_req_complete's time stands in. */
static void test_recorded_fallback(void **state)
{
	struct ntp_record h, t;
	struct ntp_breakdown b;

	(void)state;
	pair_init(&h, &t, 0x02, 4096);
	SET(&h, NTP_TS_H_BLK_SUBMIT, 32505142152ull);
	SET(&h, NTP_TS_H_DRV_SUBMIT, 32505165699ull);
	SET(&h, NTP_TS_H_CMD_SENT, 32505196588ull);
	SET(&h, NTP_TS_H_RSP_ARRIVE, 32505971758ull);
	SET(&h, NTP_TS_H_RSP_DRV, 32506067379ull);
	SET(&h, NTP_TS_H_DRV_COMPLETE, 32506087905ull);
	SET(&h, NTP_TS_H_BLK_COMPLETE, 32506092927ull);
	SET(&t, NTP_TS_T_CMD_ARRIVE, 32505416896ull);
	SET(&t, NTP_TS_T_CMD_RECV, 32505492313ull);
	SET(&t, NTP_TS_T_STORAGE_SUBMIT, 32505539047ull);
	SET(&t, NTP_TS_T_STORAGE_DONE, 32505596038ull);
	SET(&t, NTP_TS_T_RSP_SEND_DONE, 32506018691ull);
	t.flags |= NTP_REC_F_RSP_FALLBACK;

	assert_int_equal(ntp_breakdown_compute(&h, &t, &b), 0);
	assert_true(b.flags & NTP_BD_RSP_FALLBACK);
	assert_int_equal(b.comp[NTP_COMP_TGT_DRV_COMP], 0);
	assert_int_equal(b.comp[NTP_COMP_WIRE], 591198 + 4830);
	assert_int_equal(sum_stages(&b), 950775);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_read),
		cmocka_unit_test(test_recorded_write_rdma_read),
		cmocka_unit_test(test_recorded_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
