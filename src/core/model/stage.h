/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stage.h - the stage model of docs/stage-model.md: per joined command, the
 * components in path order and the five stages they sum into. Every sum is
 * exact to the nanosecond: only differences of one machine's timestamps are
 * taken, and the wire is the host's wait minus the target's residence.
 */
#ifndef NTP_STAGE_H
#define NTP_STAGE_H

#include <stdint.h>
#include "../../../bpf/ntprof_event.h"

enum ntp_stage {
	NTP_STAGE_HOST_BLOCK = 0,
	NTP_STAGE_HOST_DRIVER,
	NTP_STAGE_NETWORK,		/* host-only data: "network and target (not recorded)" */
	NTP_STAGE_TARGET_DRIVER,
	NTP_STAGE_STORAGE,
	NTP_STAGE_COUNT,
};

/* Components, in path order. Which ones a command has depends on its flow
 * (read, in-capsule write, R2T write over TCP, RDMA READ write) and on
 * whether the target's side was recorded. */
enum ntp_component {
	NTP_COMP_HOST_BLK_SUB = 0,	/* host block layer, submission */
	NTP_COMP_HOST_DRV_SUB,		/* host driver, submission */
	NTP_COMP_WIRE,			/* network: wire and NICs (computed) */
	NTP_COMP_TGT_RECV_CMD,		/* network: target receive path */
	NTP_COMP_TGT_DRV_SUB,		/* target driver, submission */
	NTP_COMP_DATA_XFER,		/* network: data transfer (RDMA READ) */
	NTP_COMP_HOST_RECV_R2T,		/* network: host receive path (R2T) */
	NTP_COMP_HOST_DRV_DATA,		/* host driver, data (R2T to H2C data) */
	NTP_COMP_TGT_RECV_DATA,		/* network: target receive path (data) */
	NTP_COMP_TGT_DRV_DATA,		/* target driver, data */
	NTP_COMP_STORAGE,		/* storage: target block layer and drive */
	NTP_COMP_TGT_DRV_COMP,		/* target driver, completion */
	NTP_COMP_HOST_RECV_RSP,		/* network: host receive path */
	NTP_COMP_HOST_DRV_COMP,		/* host driver, completion */
	NTP_COMP_HOST_BLK_COMP,		/* host block layer, completion */
	NTP_COMP_NET_AND_TARGET,	/* host-only: network and target (not recorded) */
	/* Storage backpressure (docs/backpressure.md): the parts of the wire,
	 * of the target's receive path and of its response path during which
	 * the command's queue worker was blocked submitting to the drive. Last
	 * in the enum (the values above stay); ntp_component_path_order()
	 * puts each after the component it is cut from. */
	NTP_COMP_BP_WIRE,		/* storage: waiting for the drive, on the wire */
	NTP_COMP_BP_RECV,		/* storage: waiting for the drive, in the target's receive path */
	NTP_COMP_BP_RSP,		/* storage: waiting for the drive, response held by the target */
	NTP_COMP_COUNT,
};

/* Every component once, in path order (for tables). */
extern const enum ntp_component ntp_component_path_order[NTP_COMP_COUNT];

/* ntp_breakdown.flags */
#define NTP_BD_HOST_ONLY	(1u << 0)	/* no target record: NETWORK stage holds network and target */
#define NTP_BD_TARGET_ONLY	(1u << 1)	/* no host record: only target components */
#define NTP_BD_RSP_FALLBACK	(1u << 2)	/* target's RSP_SENT missing, STORAGE_DONE used (docs/stage-model.md) */
#define NTP_BD_INCOMPLETE	(1u << 3)	/* a needed timestamp missing, no fallback: not usable */

/* comp[] and stage[] are 0 where absent, and one longer than the counts
 * (that entry 0 too), so a reducer may sum them whole, in pairs (model.c). */
struct ntp_breakdown {
	int64_t comp[NTP_COMP_COUNT + 1];	/* ns; may be negative (loopback wire) */
	uint32_t comp_present;		/* bit per component */
	int64_t stage[NTP_STAGE_COUNT + 1];	/* ns */
	uint32_t stage_present;
	int64_t e2e;			/* ns: host BLK_COMPLETE - BLK_SUBMIT (or target residence if target-only) */
	uint32_t flags;			/* NTP_BD_* */
};
_Static_assert((NTP_COMP_COUNT + 1) % 2 == 0 && (NTP_STAGE_COUNT + 1) % 2 == 0,
	       "comp[] and stage[] are whole pairs");

/* host and/or target may be NULL (not both). Returns 0, or -1 when the
 * record(s) lack a timestamp the model needs (flags has NTP_BD_INCOMPLETE). */
int ntp_breakdown_compute(const struct ntp_record *host, const struct ntp_record *target,
			  struct ntp_breakdown *out);
/* The same, every flow through the general code (ntp_breakdown_compute
 * takes the common joined flow in a straight line): for tests. */
int ntp_breakdown_compute_general(const struct ntp_record *host, const struct ntp_record *target,
				  struct ntp_breakdown *out);

/*
 * The common joined command, one round trip (a read, or a write with its
 * data in the capsule), with the block layer seen, its response sent, and
 * no backpressure part: ntp_breakdown_compute takes it in a straight line,
 * and a reducer may add its ten components up without the breakdown in
 * memory (model.c). Its components are NTP_FAST_COMPS, its stages all
 * five; the values are the general code's for such a command (test_stage.c
 * compares the two on random records, test_model_fast.c the reducer's sums).
 */
#define NTP_FAST_H	(1u << NTP_TS_H_BLK_SUBMIT | 1u << NTP_TS_H_DRV_SUBMIT | 1u << NTP_TS_H_CMD_SENT | \
			 1u << NTP_TS_H_RSP_ARRIVE | 1u << NTP_TS_H_RSP_DRV | 1u << NTP_TS_H_DRV_COMPLETE | \
			 1u << NTP_TS_H_BLK_COMPLETE)
#define NTP_FAST_H_NOT	(1u << NTP_TS_H_R2T_ARRIVE)
/* A host record may carry the bio's submission or not: end to end and the
 * block layer's submission then start there (ntp_fast_start), as in
 * ntp_breakdown_compute_general; the flow is the same either way. */
#define NTP_FAST_H_BIO	(1u << NTP_TS_H_BIO_SUBMIT)
#define NTP_FAST_T	(1u << NTP_TS_T_CMD_ARRIVE | 1u << NTP_TS_T_CMD_RECV | 1u << NTP_TS_T_STORAGE_SUBMIT | \
			 1u << NTP_TS_T_STORAGE_DONE | 1u << NTP_TS_T_RSP_SENT)
#define NTP_FAST_T_NOT	(1u << NTP_TS_T_R2T_SENT | 1u << NTP_TS_T_BP_RECV | 1u << NTP_TS_T_BP_RSP)
#define NTP_FAST_COMPS	(1u << NTP_COMP_HOST_BLK_SUB | 1u << NTP_COMP_HOST_DRV_SUB | 1u << NTP_COMP_WIRE | \
			 1u << NTP_COMP_TGT_RECV_CMD | 1u << NTP_COMP_TGT_DRV_SUB | 1u << NTP_COMP_STORAGE | \
			 1u << NTP_COMP_TGT_DRV_COMP | 1u << NTP_COMP_HOST_RECV_RSP | \
			 1u << NTP_COMP_HOST_DRV_COMP | 1u << NTP_COMP_HOST_BLK_COMP)
#define NTP_FAST_STAGES	((1u << NTP_STAGE_COUNT) - 1)

static inline int ntp_fast_flow(const struct ntp_record *h, const struct ntp_record *t)
{
	return (h->ts_valid & (NTP_FAST_H | NTP_FAST_H_NOT)) == NTP_FAST_H &&
	       (t->ts_valid & (NTP_FAST_T | NTP_FAST_T_NOT)) == NTP_FAST_T && !(t->flags & NTP_REC_F_RSP_FALLBACK);
}

/* Where a fast flow's host time starts: the bio's submission when the
 * record has it, else the request's allocation (block layer's submission). */
static inline __attribute__((always_inline)) uint64_t ntp_fast_start(const struct ntp_record *h)
{
	return h->ts_valid & NTP_FAST_H_BIO ? h->ts[NTP_TS_H_BIO_SUBMIT] : h->ts[NTP_TS_H_BLK_SUBMIT];
}

/* A fast flow's components (indexed by enum ntp_component; the others are
 * left as they were), stages and end to end. Differences and sums wrap
 * (a file's times may be any 64-bit values; signed overflow is undefined). */
static inline __attribute__((always_inline)) void ntp_fast_compute(const struct ntp_record *h,
								   const struct ntp_record *t,
								   int64_t *comp, int64_t *stage, int64_t *e2e)
{
#define NTP_FAST_D(r, to, from) ((r)->ts[to] - (r)->ts[from])
	uint64_t start = ntp_fast_start(h);
	uint64_t blk_sub = h->ts[NTP_TS_H_DRV_SUBMIT] - start;
	uint64_t drv_sub = NTP_FAST_D(h, NTP_TS_H_CMD_SENT, NTP_TS_H_DRV_SUBMIT);
	uint64_t wire = NTP_FAST_D(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_CMD_SENT) -
			NTP_FAST_D(t, NTP_TS_T_RSP_SENT, NTP_TS_T_CMD_ARRIVE);
	uint64_t recv_cmd = NTP_FAST_D(t, NTP_TS_T_CMD_RECV, NTP_TS_T_CMD_ARRIVE);
	uint64_t tdrv_sub = NTP_FAST_D(t, NTP_TS_T_STORAGE_SUBMIT, NTP_TS_T_CMD_RECV);
	uint64_t storage = NTP_FAST_D(t, NTP_TS_T_STORAGE_DONE, NTP_TS_T_STORAGE_SUBMIT);
	uint64_t tdrv_comp = NTP_FAST_D(t, NTP_TS_T_RSP_SENT, NTP_TS_T_STORAGE_DONE);
	uint64_t recv_rsp = NTP_FAST_D(h, NTP_TS_H_RSP_DRV, NTP_TS_H_RSP_ARRIVE);
	uint64_t drv_comp = NTP_FAST_D(h, NTP_TS_H_DRV_COMPLETE, NTP_TS_H_RSP_DRV);
	uint64_t blk_comp = NTP_FAST_D(h, NTP_TS_H_BLK_COMPLETE, NTP_TS_H_DRV_COMPLETE);

	comp[NTP_COMP_HOST_BLK_SUB] = (int64_t)blk_sub;
	comp[NTP_COMP_HOST_DRV_SUB] = (int64_t)drv_sub;
	comp[NTP_COMP_WIRE] = (int64_t)wire;
	comp[NTP_COMP_TGT_RECV_CMD] = (int64_t)recv_cmd;
	comp[NTP_COMP_TGT_DRV_SUB] = (int64_t)tdrv_sub;
	comp[NTP_COMP_STORAGE] = (int64_t)storage;
	comp[NTP_COMP_TGT_DRV_COMP] = (int64_t)tdrv_comp;
	comp[NTP_COMP_HOST_RECV_RSP] = (int64_t)recv_rsp;
	comp[NTP_COMP_HOST_DRV_COMP] = (int64_t)drv_comp;
	comp[NTP_COMP_HOST_BLK_COMP] = (int64_t)blk_comp;
	stage[NTP_STAGE_HOST_BLOCK] = (int64_t)(blk_sub + blk_comp);
	stage[NTP_STAGE_HOST_DRIVER] = (int64_t)(drv_sub + drv_comp);
	stage[NTP_STAGE_NETWORK] = (int64_t)(wire + recv_cmd + recv_rsp);
	stage[NTP_STAGE_TARGET_DRIVER] = (int64_t)(tdrv_sub + tdrv_comp);
	stage[NTP_STAGE_STORAGE] = (int64_t)storage;
	*e2e = (int64_t)(h->ts[NTP_TS_H_BLK_COMPLETE] - start);
#undef NTP_FAST_D
}

enum ntp_stage ntp_component_stage(enum ntp_component c);
const char *ntp_component_name(enum ntp_component c);	/* as in docs/stage-model.md's component table */
/* Stage names depend on transport and implementation, e.g.
 * "host driver (nvme-tcp)", "network (TCP/IP, NICs, wire)", "storage (SPDK bdev, drive)". */
const char *ntp_stage_name(enum ntp_stage s, uint8_t transport, uint8_t impl_host,
			   uint8_t impl_target, int host_only);
const char *ntp_stage_key(enum ntp_stage s);		/* JSON: "host_block", ..., "storage" */
const char *ntp_component_key(enum ntp_component c);	/* JSON: "host_blk_sub", ... */

#endif
