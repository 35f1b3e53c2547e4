/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_occ.h - one side's stage residence times of one command, for
 * --exact-queues (struct ntp_group_occ in ntprof_event.h). Header-only and
 * shared bit for bit by the BPF programs (which sum them for every command),
 * the synthetic generator and the unit tests, which check them against
 * src/core/model/stage.c: the same timestamps, the same fallbacks, so a counted
 * queue depth and the stage means of the sampled records measure the same
 * spans.
 *
 * Differences are taken modulo 2^64: a sum of them is the signed sum.
 */
#ifndef NTPROF_OCC_H
#define NTPROF_OCC_H

#include "ntprof_event.h"

#ifndef NTP_OCC_INLINE
#define NTP_OCC_INLINE static inline __attribute__((always_inline))
#endif

NTP_OCC_INLINE int ntp_occ_has(const struct ntp_record *r, int slot)
{
	return (r->ts_valid >> slot) & 1u;
}

NTP_OCC_INLINE __u64 ntp_occ_d(const struct ntp_record *r, int to, int from)
{
	return r->ts[to] - r->ts[from];
}

/* Host record -> ns[NTP_OCC_H_*]. 0, or -1 when a timestamp the stages need
 * is missing (stage.c's "incomplete"). */
NTP_OCC_INLINE int ntp_occ_host(const struct ntp_record *h, __u64 *ns)
{
	const __u32 need = 1u << NTP_TS_H_DRV_SUBMIT | 1u << NTP_TS_H_CMD_SENT | 1u << NTP_TS_H_RSP_ARRIVE |
			   1u << NTP_TS_H_RSP_DRV | 1u << NTP_TS_H_DRV_COMPLETE;
	int blk_sub, blk_comp, r2t;

	if ((h->ts_valid & need) != need)
		return -1;
	/* the bio's submission first, as stage.c: the tag wait is the block layer's */
	blk_sub = ntp_occ_has(h, NTP_TS_H_BIO_SUBMIT)	? NTP_TS_H_BIO_SUBMIT
		  : ntp_occ_has(h, NTP_TS_H_BLK_SUBMIT) ? NTP_TS_H_BLK_SUBMIT
							: NTP_TS_H_DRV_SUBMIT;
	blk_comp = ntp_occ_has(h, NTP_TS_H_BLK_COMPLETE) ? NTP_TS_H_BLK_COMPLETE : NTP_TS_H_DRV_COMPLETE;
	r2t = ntp_occ_has(h, NTP_TS_H_R2T_ARRIVE);
	if (r2t && (!ntp_occ_has(h, NTP_TS_H_R2T_DRV) || !ntp_occ_has(h, NTP_TS_H_DATA_SENT)))
		return -1;
	ns[NTP_OCC_H_BLOCK] = ntp_occ_d(h, NTP_TS_H_DRV_SUBMIT, blk_sub) +
			      ntp_occ_d(h, blk_comp, NTP_TS_H_DRV_COMPLETE);
	ns[NTP_OCC_H_DRIVER] = ntp_occ_d(h, NTP_TS_H_CMD_SENT, NTP_TS_H_DRV_SUBMIT) +
			       ntp_occ_d(h, NTP_TS_H_DRV_COMPLETE, NTP_TS_H_RSP_DRV);
	ns[NTP_OCC_H_RECV] = ntp_occ_d(h, NTP_TS_H_RSP_DRV, NTP_TS_H_RSP_ARRIVE);
	if (r2t) {
		ns[NTP_OCC_H_DRIVER] += ntp_occ_d(h, NTP_TS_H_DATA_SENT, NTP_TS_H_R2T_DRV);
		ns[NTP_OCC_H_RECV] += ntp_occ_d(h, NTP_TS_H_R2T_DRV, NTP_TS_H_R2T_ARRIVE);
		ns[NTP_OCC_H_WAIT] = ntp_occ_d(h, NTP_TS_H_R2T_ARRIVE, NTP_TS_H_CMD_SENT) +
				     ntp_occ_d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_DATA_SENT);
	} else {
		ns[NTP_OCC_H_WAIT] = ntp_occ_d(h, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_CMD_SENT);
	}
	return 0;
}

/* A backpressure slot's duration within [0, span] (stage.c's within()):
 * span is a difference modulo 2^64, "negative" above 2^63. */
NTP_OCC_INLINE __u64 ntp_occ_within(__u64 v, __u64 span)
{
	if ((__s64)span <= 0)
		return 0;
	return v > span ? span : v;
}

/* Target record -> ns[NTP_OCC_T_*], with the response fallback of
 * docs/stage-model.md (STORAGE_DONE for a missing RSP_SENT). The backpressure slots move their parts of the receive
 * and response paths to storage (docs/backpressure.md). 0 or -1 as above. */
NTP_OCC_INLINE int ntp_occ_target(const struct ntp_record *t, __u64 *ns)
{
	const __u32 need = 1u << NTP_TS_T_CMD_ARRIVE | 1u << NTP_TS_T_CMD_RECV |
			   1u << NTP_TS_T_STORAGE_SUBMIT | 1u << NTP_TS_T_STORAGE_DONE;
	int rsp, recv;
	__u64 bp;

	if ((t->ts_valid & need) != need)
		return -1;
	rsp = ntp_occ_has(t, NTP_TS_T_RSP_SENT) && !(t->flags & NTP_REC_F_RSP_FALLBACK)
	      ? NTP_TS_T_RSP_SENT : NTP_TS_T_STORAGE_DONE;
	ns[NTP_OCC_T_RECV] = ntp_occ_d(t, NTP_TS_T_CMD_RECV, NTP_TS_T_CMD_ARRIVE);
	ns[NTP_OCC_T_STORAGE] = ntp_occ_d(t, NTP_TS_T_STORAGE_DONE, NTP_TS_T_STORAGE_SUBMIT);
	ns[NTP_OCC_T_DRIVER] = ntp_occ_d(t, rsp, NTP_TS_T_STORAGE_DONE);
	ns[NTP_OCC_T_XFER] = 0;
	if (ntp_occ_has(t, NTP_TS_T_R2T_SENT)) {	/* the target fetched the data */
		if (!ntp_occ_has(t, NTP_TS_T_DATA_ARRIVE))
			return -1;
		recv = ntp_occ_has(t, NTP_TS_T_DATA_RECV) ? NTP_TS_T_DATA_RECV : NTP_TS_T_DATA_ARRIVE;
		ns[NTP_OCC_T_DRIVER] += ntp_occ_d(t, NTP_TS_T_R2T_SENT, NTP_TS_T_CMD_RECV) +
					ntp_occ_d(t, NTP_TS_T_STORAGE_SUBMIT, recv);
		ns[NTP_OCC_T_RECV] += ntp_occ_d(t, recv, NTP_TS_T_DATA_ARRIVE);
		ns[NTP_OCC_T_XFER] = ntp_occ_d(t, NTP_TS_T_DATA_ARRIVE, NTP_TS_T_R2T_SENT);
	} else {
		ns[NTP_OCC_T_DRIVER] += ntp_occ_d(t, NTP_TS_T_STORAGE_SUBMIT, NTP_TS_T_CMD_RECV);
	}
	if (ntp_occ_has(t, NTP_TS_T_BP_RECV)) {
		bp = ntp_occ_within(t->ts[NTP_TS_T_BP_RECV], ntp_occ_d(t, NTP_TS_T_CMD_RECV, NTP_TS_T_CMD_ARRIVE));
		ns[NTP_OCC_T_RECV] -= bp;
		ns[NTP_OCC_T_STORAGE] += bp;
	}
	if (ntp_occ_has(t, NTP_TS_T_BP_RSP) && rsp == NTP_TS_T_RSP_SENT) {
		bp = ntp_occ_within(t->ts[NTP_TS_T_BP_RSP], ntp_occ_d(t, rsp, NTP_TS_T_STORAGE_DONE));
		ns[NTP_OCC_T_DRIVER] -= bp;
		ns[NTP_OCC_T_STORAGE] += bp;
	}
	return 0;
}

/* Adds one record's times to its group's sums (or counts it incomplete). */
NTP_OCC_INLINE void ntp_occ_add(struct ntp_group_occ *o, const struct ntp_record *r)
{
	__u64 ns[NTP_OCC_SLOTS] = { 0 };
	int err = r->side == NTP_SIDE_HOST ? ntp_occ_host(r, ns) : ntp_occ_target(r, ns);

	if (err) {
		o->incomplete += 1;
		return;
	}
	o->summed += 1;
	o->ns[0] += ns[0];
	o->ns[1] += ns[1];
	o->ns[2] += ns[2];
	o->ns[3] += ns[3];
}

#endif /* NTPROF_OCC_H */
