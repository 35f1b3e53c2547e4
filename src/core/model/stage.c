// SPDX-License-Identifier: GPL-2.0
/*
 * stage.c - one command's components and stages (docs/stage-model.md).
 *
 * Every component is a difference of two timestamps of ONE machine; the only
 * cross-machine quantity is the wire, defined per round trip as
 *
 *	wire = host's wait (message handed to the network -> answer reaches the
 *	       host stack) - target's residence (message's arrival -> answer
 *	       handed back to the network),
 *
 * so the host's chain of differences and the target's chain add up to the
 * host's end to end exactly, in integer nanoseconds, whatever the offset
 * between the two clocks. Flows:
 *
 *   read / in-capsule write  one round trip: CMD_SENT -> RSP_ARRIVE against
 *                            CMD_ARRIVE -> RSP_SENT
 *   TCP write with R2T       two round trips: CMD_SENT -> R2T_ARRIVE against
 *                            CMD_ARRIVE -> R2T_SENT, and DATA_SENT ->
 *                            RSP_ARRIVE against DATA_ARRIVE -> RSP_SENT
 *   RDMA write (RDMA READ)   one round trip on the host; the target's READ
 *                            (R2T_SENT = posted, DATA_ARRIVE = completed) is
 *                            the DATA_XFER component inside its residence
 *
 * Storage backpressure (docs/backpressure.md): a target queue's worker that
 * sleeps in a storage submission (no free tag on the drive) reads nothing
 * from its socket or CQ and sends no response meanwhile. The target measures
 * how much of a command's receive path (T_BP_RECV) and of its response path
 * (T_BP_RSP) overlapped that; those parts move to the storage stage, and so
 * does the same share of the wire as of the receive path (the command also
 * waited on the host while the target's receive window was closed for the
 * same reason). Each part is cut from its component, so sums stay exact.
 *
 * Host-only records end in "network and target (not recorded)": the host's
 * wait(s) as a whole. Target-only records have the target's components only,
 * and their "end to end" is the target's residence (CMD_ARRIVE -> RSP_SENT).
 */
#include <string.h>
#include "stage.h"

static int has(const struct ntp_record *r, int slot)
{
	return (r->ts_valid >> slot) & 1u;
}

static int64_t d(const struct ntp_record *r, int to, int from)
{
	return (int64_t)(r->ts[to] - r->ts[from]);
}

/* Sums and differences of spans wrap as d() does: a file's times may be any
 * 64-bit values (a hostile or damaged file whose CRCs hold), and signed
 * overflow is undefined. On real times nothing comes near the range. */
static int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wsub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static const uint8_t comp_stage[NTP_COMP_COUNT] = {
	[NTP_COMP_HOST_BLK_SUB] = NTP_STAGE_HOST_BLOCK,
	[NTP_COMP_HOST_DRV_SUB] = NTP_STAGE_HOST_DRIVER,
	[NTP_COMP_WIRE] = NTP_STAGE_NETWORK,
	[NTP_COMP_TGT_RECV_CMD] = NTP_STAGE_NETWORK,
	[NTP_COMP_TGT_DRV_SUB] = NTP_STAGE_TARGET_DRIVER,
	[NTP_COMP_DATA_XFER] = NTP_STAGE_NETWORK,
	[NTP_COMP_HOST_RECV_R2T] = NTP_STAGE_NETWORK,
	[NTP_COMP_HOST_DRV_DATA] = NTP_STAGE_HOST_DRIVER,
	[NTP_COMP_TGT_RECV_DATA] = NTP_STAGE_NETWORK,
	[NTP_COMP_TGT_DRV_DATA] = NTP_STAGE_TARGET_DRIVER,
	[NTP_COMP_STORAGE] = NTP_STAGE_STORAGE,
	[NTP_COMP_TGT_DRV_COMP] = NTP_STAGE_TARGET_DRIVER,
	[NTP_COMP_HOST_RECV_RSP] = NTP_STAGE_NETWORK,
	[NTP_COMP_HOST_DRV_COMP] = NTP_STAGE_HOST_DRIVER,
	[NTP_COMP_HOST_BLK_COMP] = NTP_STAGE_HOST_BLOCK,
	[NTP_COMP_NET_AND_TARGET] = NTP_STAGE_NETWORK,
	[NTP_COMP_BP_WIRE] = NTP_STAGE_STORAGE,
	[NTP_COMP_BP_RECV] = NTP_STAGE_STORAGE,
	[NTP_COMP_BP_RSP] = NTP_STAGE_STORAGE,
};

/* The enum's order with each backpressure part after the component it is
 * cut from ("network and target" stays last, where reports have it). */
const enum ntp_component ntp_component_path_order[NTP_COMP_COUNT] = {
	NTP_COMP_HOST_BLK_SUB,	NTP_COMP_HOST_DRV_SUB,	NTP_COMP_WIRE,		NTP_COMP_BP_WIRE,
	NTP_COMP_TGT_RECV_CMD,	NTP_COMP_BP_RECV,	NTP_COMP_TGT_DRV_SUB,	NTP_COMP_DATA_XFER,
	NTP_COMP_HOST_RECV_R2T,	NTP_COMP_HOST_DRV_DATA,	NTP_COMP_TGT_RECV_DATA,	NTP_COMP_TGT_DRV_DATA,
	NTP_COMP_STORAGE,	NTP_COMP_TGT_DRV_COMP,	NTP_COMP_BP_RSP,	NTP_COMP_HOST_RECV_RSP,
	NTP_COMP_HOST_DRV_COMP,	NTP_COMP_HOST_BLK_COMP,	NTP_COMP_NET_AND_TARGET,
};

/* n (even) int64s to 0 in 16-byte stores: a memset of this size was a
 * `rep stosq`, slow to start, on every command. */
typedef uint64_t ntp_z2 __attribute__((vector_size(16), aligned(8), may_alias));

static inline __attribute__((always_inline)) void zero(int64_t *p, unsigned n)
{
	ntp_z2 *v = (ntp_z2 *)p;

#pragma GCC unroll 16
	for (unsigned i = 0; i < n / 2; i++)
		v[i] = (ntp_z2){ 0, 0 };
}

/* The stages' sums and both presence masks of the command being broken
 * down, kept apart from the breakdown until it is done: as locals of an
 * inlined call they stay in registers (put() read, changed and wrote back
 * four fields of the breakdown at every component), and are stored once. */
struct bd_acc {
	int64_t stage[NTP_STAGE_COUNT];
	uint32_t comp_present, stage_present;
};

/* A component and, at once, its stage: no second pass over the components. */
static inline __attribute__((always_inline)) void put(struct ntp_breakdown *b, struct bd_acc *a,
						      enum ntp_component c, int64_t v)
{
	unsigned s = comp_stage[c];

	b->comp[c] = v;		/* each component is put once per command */
	a->comp_present |= 1u << c;
	a->stage[s] = wadd(a->stage[s], v);
	a->stage_present |= 1u << s;
}

/* The sums and masks into the breakdown (its extra stage entry stays 0). */
static inline __attribute__((always_inline)) int finish(struct ntp_breakdown *b, const struct bd_acc *a)
{
	for (unsigned s = 0; s < NTP_STAGE_COUNT; s++)
		b->stage[s] = a->stage[s];
	b->comp_present = a->comp_present;
	b->stage_present = a->stage_present;
	return 0;
}

/* The target's view of a command, with the response fallback of docs/stage-model.md applied. */
struct tview {
	uint64_t rsp_sent;
	int rfetch;		/* target fetched the data: R2T (TCP) or RDMA READ */
	int bp_recv, bp_rsp;	/* the backpressure slots apply */
	int64_t recv, bpr;	/* receive path of the command, its blocked part */
	int64_t rsp, bps;	/* STORAGE_DONE -> rsp_sent, its blocked part */
};

/* A measured blocked part, within [0, span] (the kernel clamps it too; a
 * file edited by hand must not break the sums' signs). */
static int64_t within(uint64_t v, int64_t span)
{
	if (span <= 0)
		return 0;
	return v > (uint64_t)span ? span : (int64_t)v;
}

static int target_view(const struct ntp_record *t, struct tview *v, struct ntp_breakdown *b)
{
	const uint32_t need = 1u << NTP_TS_T_CMD_ARRIVE | 1u << NTP_TS_T_CMD_RECV |
			      1u << NTP_TS_T_STORAGE_SUBMIT | 1u << NTP_TS_T_STORAGE_DONE;

	if ((t->ts_valid & need) != need)
		return -1;
	if (has(t, NTP_TS_T_RSP_SENT) && !(t->flags & NTP_REC_F_RSP_FALLBACK)) {
		v->rsp_sent = t->ts[NTP_TS_T_RSP_SENT];
	} else {
		/* docs/stage-model.md: a kprobe missed the response post; nvmet_req_complete's
		 * time stands in (under a microsecond apart when both are seen). */
		v->rsp_sent = t->ts[NTP_TS_T_STORAGE_DONE];
		b->flags |= NTP_BD_RSP_FALLBACK;
	}
	v->rfetch = has(t, NTP_TS_T_R2T_SENT);
	if (v->rfetch && !has(t, NTP_TS_T_DATA_ARRIVE))
		return -1;
	v->recv = d(t, NTP_TS_T_CMD_RECV, NTP_TS_T_CMD_ARRIVE);
	v->bp_recv = has(t, NTP_TS_T_BP_RECV);
	v->bpr = v->bp_recv ? within(t->ts[NTP_TS_T_BP_RECV], v->recv) : 0;
	v->rsp = (int64_t)(v->rsp_sent - t->ts[NTP_TS_T_STORAGE_DONE]);
	/* with the fallback the response's send was not seen: nothing to cut */
	v->bp_rsp = has(t, NTP_TS_T_BP_RSP) && !(b->flags & NTP_BD_RSP_FALLBACK);
	v->bps = v->bp_rsp ? within(t->ts[NTP_TS_T_BP_RSP], v->rsp) : 0;
	return 0;
}

/* The wire's blocked share: wire * bpr / recv, for a positive wire. */
static int64_t bp_wire(const struct tview *v, int64_t wire)
{
	if (!v->bp_recv || wire <= 0 || v->recv <= 0 || !v->bpr)
		return 0;
	return (int64_t)((__int128)wire * v->bpr / v->recv);
}

/* Target components, CMD_ARRIVE .. rsp_sent, in path order. */
static inline __attribute__((always_inline)) void target_components(const struct ntp_record *t,
								    const struct tview *v,
								    struct ntp_breakdown *b,
								    struct bd_acc *a)
{
	put(b, a, NTP_COMP_TGT_RECV_CMD, v->recv - v->bpr);
	if (v->bp_recv)
		put(b, a, NTP_COMP_BP_RECV, v->bpr);
	if (v->rfetch) {
		int recv = has(t, NTP_TS_T_DATA_RECV) ? NTP_TS_T_DATA_RECV : NTP_TS_T_DATA_ARRIVE;

		put(b, a, NTP_COMP_TGT_DRV_SUB, d(t, NTP_TS_T_R2T_SENT, NTP_TS_T_CMD_RECV));
		/* RDMA: the READ itself; TCP target-only: R2T out -> data in
		 * (host and wire, not separable without the host). In a joined
		 * TCP record this span is replaced by the second round trip. */
		if (t->transport == NTP_TRANSPORT_RDMA)
			put(b, a, NTP_COMP_DATA_XFER, d(t, NTP_TS_T_DATA_ARRIVE, NTP_TS_T_R2T_SENT));
		if (recv == NTP_TS_T_DATA_RECV)
			put(b, a, NTP_COMP_TGT_RECV_DATA, d(t, NTP_TS_T_DATA_RECV, NTP_TS_T_DATA_ARRIVE));
		put(b, a, NTP_COMP_TGT_DRV_DATA, d(t, NTP_TS_T_STORAGE_SUBMIT, recv));
	} else {
		put(b, a, NTP_COMP_TGT_DRV_SUB, d(t, NTP_TS_T_STORAGE_SUBMIT, NTP_TS_T_CMD_RECV));
	}
	put(b, a, NTP_COMP_STORAGE, d(t, NTP_TS_T_STORAGE_DONE, NTP_TS_T_STORAGE_SUBMIT));
	put(b, a, NTP_COMP_TGT_DRV_COMP, v->rsp - v->bps);
	if (v->bp_rsp)
		put(b, a, NTP_COMP_BP_RSP, v->bps);
}

static int incomplete(struct ntp_breakdown *b)
{
	uint32_t f = b->flags & (NTP_BD_HOST_ONLY | NTP_BD_TARGET_ONLY);

	memset(b, 0, sizeof(*b));
	b->flags = f | NTP_BD_INCOMPLETE;
	return -1;
}

/* The common joined flow (stage.h: ntp_fast_flow) in one straight line:
 * the components, stages and masks the general code below gives such a
 * command (sums wrap alike, so their order does not matter); test_stage.c
 * compares the two on random records. */
static void fast_breakdown(const struct ntp_record *h, const struct ntp_record *t, struct ntp_breakdown *b)
{
	zero(b->comp, NTP_COMP_COUNT + 1);
	ntp_fast_compute(h, t, b->comp, b->stage, &b->e2e);
	b->comp_present = NTP_FAST_COMPS;
	b->stage[NTP_STAGE_COUNT] = 0;
	b->stage_present = NTP_FAST_STAGES;
	b->flags = 0;
}

/* The general breakdown, every flow (ntp_breakdown_compute without its
 * fast path; the tests compare the two). */
int ntp_breakdown_compute_general(const struct ntp_record *h, const struct ntp_record *t,
				  struct ntp_breakdown *b)
{
	struct tview tv = { 0 };
	struct bd_acc a = { { 0 }, 0, 0 };
	int blk_sub, blk_comp, r2t;

	/* absent components and stages are 0 (stage.h) */
	b->comp_present = b->stage_present = b->flags = 0;
	zero(b->comp, NTP_COMP_COUNT + 1);
	b->stage[NTP_STAGE_COUNT] = 0;
	b->e2e = 0;
	if (!h && !t)
		return incomplete(b);
	if (!h)
		b->flags |= NTP_BD_TARGET_ONLY;
	if (!t)
		b->flags |= NTP_BD_HOST_ONLY;

	if (t && target_view(t, &tv, b))
		return incomplete(b);

	if (!h) {
		b->e2e = (int64_t)(tv.rsp_sent - t->ts[NTP_TS_T_CMD_ARRIVE]);
		if (b->e2e < 0)
			return incomplete(b);	/* one clock, read backwards: see below */
		target_components(t, &tv, b, &a);
		if (tv.rfetch && t->transport != NTP_TRANSPORT_RDMA)
			/* TCP R2T, target only: the gap while the host sends its data. */
			put(b, &a, NTP_COMP_DATA_XFER, d(t, NTP_TS_T_DATA_ARRIVE, NTP_TS_T_R2T_SENT));
		return finish(b, &a);
	}

	/* Host. An SPDK host has no block layer: its driver times stand in
	 * (block components 0, block stage absent). */
	const uint32_t hneed = 1u << NTP_TS_H_DRV_SUBMIT | 1u << NTP_TS_H_CMD_SENT | 1u << NTP_TS_H_RSP_ARRIVE |
			       1u << NTP_TS_H_RSP_DRV | 1u << NTP_TS_H_DRV_COMPLETE;
	if ((h->ts_valid & hneed) != hneed)
		return incomplete(b);
	/* the bio's submission, when seen, is before the tag wait and the
	 * request's allocation: end to end and the block layer's submission
	 * start there (docs/stage-model.md, "What end to end spans") */
	blk_sub = has(h, NTP_TS_H_BIO_SUBMIT)	? NTP_TS_H_BIO_SUBMIT
		  : has(h, NTP_TS_H_BLK_SUBMIT) ? NTP_TS_H_BLK_SUBMIT
						: NTP_TS_H_DRV_SUBMIT;
	blk_comp = has(h, NTP_TS_H_BLK_COMPLETE) ? NTP_TS_H_BLK_COMPLETE : NTP_TS_H_DRV_COMPLETE;
	r2t = has(h, NTP_TS_H_R2T_ARRIVE);
	if (r2t && (!has(h, NTP_TS_H_R2T_DRV) || !has(h, NTP_TS_H_DATA_SENT)))
		return incomplete(b);
	if (t) {
		/* Both sides must agree on the flow: a TCP R2T is seen by both. */
		int t_r2t = tv.rfetch && t->transport != NTP_TRANSPORT_RDMA;

		if (r2t != t_r2t)
			return incomplete(b);
	}

	/* An end to end is one machine's clock read twice, in order: a
	 * negative one is a damaged time (the record's CRC holds, its times
	 * do not), left out as incomplete, or one command would wreck its
	 * group's mean; so is a target's residence, the other clock's span.
	 * The wire alone may be negative (two clocks; loopback). */
	if (d(h, blk_comp, blk_sub) < 0 || (t && (int64_t)(tv.rsp_sent - t->ts[NTP_TS_T_CMD_ARRIVE]) < 0))
		return incomplete(b);
	put(b, &a, NTP_COMP_HOST_BLK_SUB, d(h, NTP_TS_H_DRV_SUBMIT, blk_sub));
	put(b, &a, NTP_COMP_HOST_DRV_SUB, d(h, NTP_TS_H_CMD_SENT, NTP_TS_H_DRV_SUBMIT));
	if (!t) {
		int64_t wait = r2t ? wadd(d(h, NTP_TS_H_R2T_ARRIVE, NTP_TS_H_CMD_SENT),
					  d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_DATA_SENT))
				   : d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_CMD_SENT);

		put(b, &a, NTP_COMP_NET_AND_TARGET, wait);
	} else {
		int64_t wait, res;

		if (r2t) {
			wait = wadd(d(h, NTP_TS_H_R2T_ARRIVE, NTP_TS_H_CMD_SENT),
				    d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_DATA_SENT));
			res = wadd(d(t, NTP_TS_T_R2T_SENT, NTP_TS_T_CMD_ARRIVE),
				   (int64_t)(tv.rsp_sent - t->ts[NTP_TS_T_DATA_ARRIVE]));
		} else {
			wait = d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_CMD_SENT);
			res = (int64_t)(tv.rsp_sent - t->ts[NTP_TS_T_CMD_ARRIVE]);
		}
		/* one round trip only: an R2T write's wire also holds its data's trip */
		int64_t wire = wsub(wait, res), bpw = r2t ? 0 : bp_wire(&tv, wire);

		put(b, &a, NTP_COMP_WIRE, wsub(wire, bpw));
		if (tv.bp_recv)
			put(b, &a, NTP_COMP_BP_WIRE, bpw);
		target_components(t, &tv, b, &a);
	}
	if (r2t) {
		put(b, &a, NTP_COMP_HOST_RECV_R2T, d(h, NTP_TS_H_R2T_DRV, NTP_TS_H_R2T_ARRIVE));
		put(b, &a, NTP_COMP_HOST_DRV_DATA, d(h, NTP_TS_H_DATA_SENT, NTP_TS_H_R2T_DRV));
	}
	put(b, &a, NTP_COMP_HOST_RECV_RSP, d(h, NTP_TS_H_RSP_DRV, NTP_TS_H_RSP_ARRIVE));
	put(b, &a, NTP_COMP_HOST_DRV_COMP, d(h, NTP_TS_H_DRV_COMPLETE, NTP_TS_H_RSP_DRV));
	put(b, &a, NTP_COMP_HOST_BLK_COMP, d(h, blk_comp, NTP_TS_H_DRV_COMPLETE));
	b->e2e = d(h, blk_comp, blk_sub);
	/* No block layer at all (SPDK host): no block stage. With one of its two
	 * times seen, the stage keeps that half, or the stages would not add up
	 * to an end to end that starts or ends at that time. */
	if (blk_sub == NTP_TS_H_DRV_SUBMIT && blk_comp != NTP_TS_H_BLK_COMPLETE) {
		a.stage_present &= ~(1u << NTP_STAGE_HOST_BLOCK);
		a.stage[NTP_STAGE_HOST_BLOCK] = 0;	/* absent: 0 (its parts were 0 anyway) */
	}
	return finish(b, &a);
}

int ntp_breakdown_compute(const struct ntp_record *h, const struct ntp_record *t,
			  struct ntp_breakdown *b)
{
	if (h && t && ntp_fast_flow(h, t)) {
		fast_breakdown(h, t, b);
		/* a negative end to end or residence: left out, as the
		 * general code does */
		return (b->e2e | d(t, NTP_TS_T_RSP_SENT, NTP_TS_T_CMD_ARRIVE)) < 0 ? incomplete(b) : 0;
	}
	return ntp_breakdown_compute_general(h, t, b);
}

enum ntp_stage ntp_component_stage(enum ntp_component c)
{
	return (unsigned)c < NTP_COMP_COUNT ? (enum ntp_stage)comp_stage[c] : NTP_STAGE_NETWORK;
}

static const char *const comp_names[NTP_COMP_COUNT] = {
	[NTP_COMP_HOST_BLK_SUB] = "host block layer, submission",
	[NTP_COMP_HOST_DRV_SUB] = "host driver, submission",
	[NTP_COMP_WIRE] = "network: wire and NICs (computed)",
	[NTP_COMP_TGT_RECV_CMD] = "network: target receive path",
	[NTP_COMP_TGT_DRV_SUB] = "target driver, submission",
	[NTP_COMP_DATA_XFER] = "network: data transfer",
	[NTP_COMP_HOST_RECV_R2T] = "network: host receive path (R2T)",
	[NTP_COMP_HOST_DRV_DATA] = "host driver, data",
	[NTP_COMP_TGT_RECV_DATA] = "network: target receive path (data)",
	[NTP_COMP_TGT_DRV_DATA] = "target driver, data",
	[NTP_COMP_STORAGE] = "storage: target block layer and drive",
	[NTP_COMP_TGT_DRV_COMP] = "target driver, completion",
	[NTP_COMP_HOST_RECV_RSP] = "network: host receive path",
	[NTP_COMP_HOST_DRV_COMP] = "host driver, completion",
	[NTP_COMP_HOST_BLK_COMP] = "host block layer, completion",
	[NTP_COMP_NET_AND_TARGET] = "network and target (not recorded)",
	/* <= 38 characters: ntprof-top's detail view shows no more */
	[NTP_COMP_BP_WIRE] = "storage: backpressure, on the wire",
	[NTP_COMP_BP_RECV] = "storage: backpressure, target receive",
	[NTP_COMP_BP_RSP] = "storage: backpressure, response held",
};

const char *ntp_component_name(enum ntp_component c)
{
	return (unsigned)c < NTP_COMP_COUNT ? comp_names[c] : "?";
}

const char *ntp_stage_name(enum ntp_stage s, uint8_t transport, uint8_t impl_host,
			   uint8_t impl_target, int host_only)
{
	int rdma = transport == NTP_TRANSPORT_RDMA;

	switch (s) {
	case NTP_STAGE_HOST_BLOCK:
		return "host block layer";
	case NTP_STAGE_HOST_DRIVER:
		if (impl_host == NTP_IMPL_SPDK)
			return "host driver (SPDK)";
		return rdma ? "host driver (nvme-rdma)" : "host driver (nvme-tcp)";
	case NTP_STAGE_NETWORK:
		if (host_only)
			return "network and target (not recorded)";
		return rdma ? "network (RDMA, NICs, wire)" : "network (TCP/IP, NICs, wire)";
	case NTP_STAGE_TARGET_DRIVER:
		if (impl_target == NTP_IMPL_SPDK)
			return "target driver (SPDK)";
		return rdma ? "target driver (nvmet-rdma)" : "target driver (nvmet-tcp)";
	case NTP_STAGE_STORAGE:
		if (impl_target == NTP_IMPL_SPDK)
			return "storage (SPDK bdev, drive)";
		return "storage (target block layer, drive)";
	default:
		return "?";
	}
}

/* Keys of the JSON documents (docs/json-schema.md): stable, unlike the names. */
const char *ntp_stage_key(enum ntp_stage s)
{
	static const char *const k[NTP_STAGE_COUNT] = {
		"host_block", "host_driver", "network", "target_driver", "storage",
	};

	return (unsigned)s < NTP_STAGE_COUNT ? k[s] : "?";
}

const char *ntp_component_key(enum ntp_component c)
{
	static const char *const k[NTP_COMP_COUNT] = {
		"host_blk_sub", "host_drv_sub", "wire", "tgt_recv_cmd", "tgt_drv_sub", "data_xfer",
		"host_recv_r2t", "host_drv_data", "tgt_recv_data", "tgt_drv_data", "storage",
		"tgt_drv_comp", "host_recv_rsp", "host_drv_comp", "host_blk_comp", "net_and_target",
		"bp_wire", "bp_recv", "bp_rsp",
	};

	return (unsigned)c < NTP_COMP_COUNT ? k[c] : "?";
}
