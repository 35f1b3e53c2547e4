// SPDX-License-Identifier: GPL-2.0
/*
 * ntprof_rdma.bpf.c - the NVMe/RDMA hooks (nvme-rdma host, nvmet-rdma
 * target), linked with ntprof.bpf.c into one object (mk/bpf.mk): one
 * skeleton, one BTF load; the maps and knobs both use are
 * ntprof_common.bpf.h's. The transport-independent tracepoints
 * (nvme_setup_cmd, nvme_complete_rq, block_rq_complete, nvmet_req_init,
 * nvmet_req_complete) and nvmet_bdev_execute_rw are ntprof.bpf.c's,
 * shared with NVMe/TCP.
 *
 * docs/hooks.md lists every hook, its slot and why it is there.
 *
 * An RDMA message's arrival: the HCA writes the message and a completion
 * queue entry, then raises the CQ's completion event; ib_core's handler
 * (ib_cq_completion_softirq for nvme-rdma, _workqueue for nvmet-rdma) fires
 * the rdma_core:cq_schedule tracepoint and schedules the poll that runs the
 * ULP's ->done callback. The event's time, per CQ, is "the message reached
 * the machine's RDMA stack"; from there to the callback is the receive path.
 *
 * Host (keyed by struct request *):
 *   nvme_rdma_post_send    CMD_SENT (entry: the capsule handed to the HCA)
 *   nvme_rdma_recv_done    RSP_DRV, RSP_ARRIVE (the CQ's event time)
 *   nvme_rdma_send_done    SEND_DONE (the capsule's send completion)
 * Target (keyed by struct nvmet_req *, inside struct nvmet_rdma_rsp):
 *   nvmet_rdma_recv_done   context: the CQ event time for nvmet_req_init's
 *                          CMD_ARRIVE (the command is parsed inside it)
 *   rdma_rw_ctx_post       R2T_SENT: the RDMA READ of a write's data posted
 *   nvmet_rdma_read_data_done  DATA_ARRIVE (event time), DATA_RECV
 *   nvmet_rdma_queue_response  RSP_QUEUED = RSP_SENT: it posts the response
 *                          (and a read's RDMA WRITE) before it returns
 *   nvmet_rdma_send_done   RSP_SEND_DONE; the record leaves the target
 * Both: rdma_core:cq_schedule  the completion event, per CQ.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "ntprof_event.h"
#include "ntprof_hash.h"
#include "ntprof_occ.h"
#include "nvme_types.bpf.h"
#include "ntprof_common.bpf.h"
#include "ntprof_rdma_cq.bpf.h"

/* The host's sampled commands between their post and the last of their
 * two completions (the response's receive, the capsule's send), counted
 * twice each: with none in flight, the host's completion hooks and the
 * host's CQ events return after reading this one number (an unsampled
 * command costs its hash in nvme_setup_cmd, docs/performance.md). A count
 * that stays up (a response a kprobe missed, an entry of rdma_host_cids
 * taken over) only costs what every completion cost before. */
volatile __u64 rdma_host_inflight = 0;

static __always_inline void rdma_host_inflight_add(__s64 n)
{
	__sync_fetch_and_add(&rdma_host_inflight, n);	/* no fetch: a plain XADD, any kernel */
}

/* cq's state, taking a free slot of its set on first sight (a plain store:
 * two CPUs that take the same slot for two new CQs in the same instant
 * leave one, and the other takes a slot at its next event). */
static __always_inline struct rdma_cq_state *rdma_cq_get(__u64 cq)
{
	struct rdma_cq_state *s0 = rdma_cq_slot(cq, 0), *s1, *s;

	if (!s0)
		return NULL;
	if (s0->cq == cq)
		return s0;
	s1 = rdma_cq_slot(cq, 1);
	if (!s1)
		return NULL;
	if (s1->cq == cq)
		return s1;
	s = !s0->cq ? s0 : !s1->cq ? s1 : NULL;
	if (!s)
		return NULL;
	__builtin_memset(s, 0, sizeof(*s));
	s->cq = cq;
	return s;
}

/* ---- completion events ---- */

/* rdma_core:cq_schedule(cq): a CQ's completion event. The time is wanted on
 * nvmet-rdma's CQs for every command (its arrival is noted before the
 * command is parsed, hence before the pick), on the host's only while a
 * sampled command waits for its response (rdma_host_inflight). */
static __always_inline int rdma_cq_event(__u64 cq)
{
	struct rdma_cq_state *t = rdma_cq_get(cq);
	__u64 now;

	if (!t || (!t->target && !rdma_host_inflight))
		return 0;
	now = bpf_ktime_get_ns();
	t->event = now;
	if (t->target)	/* the blocked-time reading is the target's (docs/backpressure.md) */
		t->event_bp = ntp_bp_read(cq, now);
	return 0;
}

/* rdma_core:cq_poll(cq, requested, rc) after each ib_poll_cq of
 * __ib_process_cq: rc completions were taken off the CQ now. Only the
 * target's arrival uses it (rdma_target_arrival). */
static __always_inline int rdma_cq_poll(__u64 cq, int rc)
{
	struct rdma_cq_state *t;
	__u64 now;

	if (rc <= 0)
		return 0;
	t = rdma_cq_find(cq);
	if (!t || !t->target)
		return 0;
	now = bpf_ktime_get_ns();
	t->prev_poll = t->poll;
	t->prev_bp = t->poll_bp;
	t->poll = now;
	t->poll_bp = ntp_bp_read(cq, now);
	return 0;
}

SEC("tp_btf/cq_poll")
int BPF_PROG(ntp_r_cqpoll_tb, void *cq, int requested, int rc)
{
	if (!cq)
		return 0;
	return rdma_cq_poll((__u64)cq, rc);
}

SEC("raw_tp/cq_poll")
int BPF_PROG(ntp_r_cqpoll_rt, void *cq, int requested, int rc)
{
	return rdma_cq_poll((__u64)cq, rc);
}

/* When did the completion being handled on cq reach the stack? Its CQ's
 * last event, if it is no earlier than `after` (the message it answers was
 * posted after it). A poll that picks up a completion which arrived while
 * it ran has no event of its own: then the callback's own time stands in,
 * and the whole span counts as the wire, in the same (network) stage. */
static __always_inline __u64 rdma_arrival(void *cq, __u64 after, __u64 now)
{
	struct rdma_cq_state *t = rdma_cq_find((__u64)cq);

	if (t && t->event >= after && t->event <= now)
		return t->event;
	return now;
}

SEC("tp_btf/cq_schedule")
int BPF_PROG(ntp_r_cqev_tb, void *cq)
{
	if (!cq)
		return 0;
	return rdma_cq_event((__u64)cq);
}

SEC("raw_tp/cq_schedule")
int BPF_PROG(ntp_r_cqev_rt, void *cq)
{
	return rdma_cq_event((__u64)cq);
}

/* ================================ host ================================ */

/* struct nvme_rdma_qe * of a request's capsule -> its struct request * */
static __always_inline __u64 rdma_rq_of_sqe(void *qe)
{
	__u64 req = (__u64)qe - bpf_core_field_offset(struct nvme_rdma_request___ntp, sqe);

	return req - bpf_core_type_size(struct request);	/* blk_mq_rq_to_pdu(rq) == rq + 1 */
}

/* A sampled host command between its post and its response: the response
 * names it only by (queue, command id); blk-mq's tag lookup (nvme_find_rq)
 * is not something to redo in BPF. Fixed slots, two per set, the set from
 * a multiplicative hash of both (as rdma_cqs): the response's lookup is
 * inlined, the post's insert a few stores. An entry whose response never
 * came (a kprobe skipped) is taken over by a later command of its set. */
struct rdma_cid_slot {
	__u64 queue;		/* struct nvme_rdma_queue *; 0: free slot */
	__u64 rq;		/* struct request * */
	__u32 cid;		/* command id as on the wire */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTP_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct rdma_cid_slot);
} rdma_host_cids SEC(".maps");

static __always_inline struct rdma_cid_slot *rdma_cid_slot(__u64 queue, __u32 cid, __u32 way)
{
	__u32 i = fib_index(key_lo32(queue) ^ ((__u64)cid << 32), NTP_CMD_SET_BITS) * 2 + way;

	return bpf_map_lookup_elem(&rdma_host_cids, &i);
}

/* (queue, cid) -> rq: a free slot of the set, or the one the same key
 * holds, else the second (the newest wins, as in an LRU). A plain store:
 * two CPUs that fill the same free slot in the same instant leave one. */
static __always_inline void rdma_cid_put(__u64 queue, __u32 cid, __u64 rq)
{
	struct rdma_cid_slot *s = rdma_cid_slot(queue, cid, 0);

	if (!s)
		return;
	if (s->queue && (s->queue != queue || s->cid != cid)) {
		s = rdma_cid_slot(queue, cid, 1);
		if (!s)
			return;
	}
	s->rq = rq;
	s->cid = cid;
	s->queue = queue;
}

/* The request waiting for (queue, cid), its slot freed; 0: none. */
static __always_inline __u64 rdma_cid_take(__u64 queue, __u32 cid)
{
	struct rdma_cid_slot *s = rdma_cid_slot(queue, cid, 0);

	if (!s || s->queue != queue || s->cid != cid) {
		s = rdma_cid_slot(queue, cid, 1);
		if (!s || s->queue != queue || s->cid != cid)
			return 0;
	}
	s->queue = 0;
	return s->rq;
}

/* nvme_rdma_post_send(queue, qe, sge, num_sge, first) from ->queue_rq: the
 * capsule (after a memory registration, chained as `first`) goes to the HCA.
 * Also posts the AEN capsule (ctrl->async_event_sqe): no request, the
 * lookup misses. */
static __always_inline int rdma_host_post(void *queue, void *qe)
{
	__u64 key = rdma_rq_of_sqe(qe);
	struct ntp_record *r = cmd_find(&host_cmds, key);

	if (!r || has_ts(r, NTP_TS_H_CMD_SENT))	/* unsampled: one lookup, nothing else */
		return 0;
	set_ts(r, NTP_TS_H_CMD_SENT, bpf_ktime_get_ns());
	rdma_cid_put((__u64)queue, r->cid, key);
	rdma_host_inflight_add(2);	/* its response, its send completion */
	return 0;
}

SEC("fentry/nvme_rdma_post_send")
int BPF_PROG(ntp_h_rpost_fe, void *queue, void *qe)
{
	return rdma_host_post(queue, qe);
}

SEC("kprobe/nvme_rdma_post_send")
int BPF_KPROBE(ntp_h_rpost_kp, void *queue, void *qe)
{
	return rdma_host_post(queue, qe);
}

/* nvme_rdma_recv_done(cq, wc): the response capsule's receive completion;
 * qe->data is the NVMe CQE. The request completes here, or in
 * nvme_rdma_send_done when the capsule's own send completion comes later
 * (both drop a reference), so RSP_DRV is this entry, not the completion. */
/* btf: an fentry program, wc typed (NTP_RD: plain loads, no helper call) */
static __always_inline int rdma_host_recv(void *cq, struct ib_wc___ntp *wc, bool btf)
{
	struct nvme_completion___ntp *cqe;
	struct nvme_rdma_qe___ntp *qe;
	struct ntp_record *r;
	__u64 now, rq;

	if (!rdma_host_inflight)	/* no sampled command waits: not one of ours */
		return 0;
	if (NTP_RD(btf, wc, status) != NTP_IB_WC_SUCCESS)
		return 0;
	qe = (void *)NTP_RD(btf, wc, wr_cqe) - bpf_core_field_offset(struct nvme_rdma_qe___ntp, cqe);
	cqe = BPF_CORE_READ(qe, data);
	rq = rdma_cid_take((__u64)NTP_RD2(btf, wc, qp, qp_context), BPF_CORE_READ(cqe, command_id));
	if (!rq)
		return 0;
	rdma_host_inflight_add(-1);
	now = bpf_ktime_get_ns();
	r = cmd_find(&host_cmds, rq);
	if (!r || has_ts(r, NTP_TS_H_RSP_DRV) || !has_ts(r, NTP_TS_H_CMD_SENT))
		return 0;
	set_ts(r, NTP_TS_H_RSP_DRV, now);
	set_ts(r, NTP_TS_H_RSP_ARRIVE, rdma_arrival(cq, r->ts[NTP_TS_H_CMD_SENT], now));
	return 0;
}

SEC("fentry/nvme_rdma_recv_done")
int BPF_PROG(ntp_h_rrecv_fe, void *cq, struct ib_wc___ntp *wc)
{
	if (!wc)
		return 0;
	return rdma_host_recv(cq, wc, true);
}

SEC("kprobe/nvme_rdma_recv_done")
int BPF_KPROBE(ntp_h_rrecv_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_host_recv(cq, wc, false);
}

/* nvme_rdma_send_done(cq, wc): the capsule's send completion (the target's
 * HCA acknowledged it). Informational: the stage model does not use it. */
static __always_inline int rdma_host_send_done(struct ib_wc___ntp *wc, bool btf)
{
	struct ntp_record *r;
	void *qe;

	if (!rdma_host_inflight)
		return 0;
	qe = (void *)NTP_RD(btf, wc, wr_cqe) - bpf_core_field_offset(struct nvme_rdma_qe___ntp, cqe);
	r = cmd_find(&host_cmds, rdma_rq_of_sqe(qe));
	if (!r || !has_ts(r, NTP_TS_H_CMD_SENT) || has_ts(r, NTP_TS_H_SEND_DONE))
		return 0;
	set_ts(r, NTP_TS_H_SEND_DONE, bpf_ktime_get_ns());
	rdma_host_inflight_add(-1);
	return 0;
}

SEC("fentry/nvme_rdma_send_done")
int BPF_PROG(ntp_h_rsdone_fe, void *cq, struct ib_wc___ntp *wc)
{
	if (!wc)
		return 0;
	return rdma_host_send_done(wc, true);
}

SEC("kprobe/nvme_rdma_send_done")
int BPF_KPROBE(ntp_h_rsdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_host_send_done(wc, false);
}

/* =============================== target =============================== */

/* nvmet_rdma_recv_done(cq, wc) parses the command inside (handle_command ->
 * nvmet_req_init) when the queue is live: remember, for this thread, the CQ
 * it polls; nvmet_req_init asks the CQ's state for the arrival of a command
 * it tracks (rdma_target_arrival), nothing is timed here. The CQ is marked
 * nvmet-rdma's: its events and polls are timed from then on (the first
 * command of a CQ gets its callback's time, receive path 0). nvmet-rdma
 * polls its CQs from a work item: the callback runs in a kworker, and a
 * nested softirq never parses an nvmet-rdma command. */
static __always_inline int rdma_target_recv_enter(void *cq)
{
	struct rdma_cq_state *s = rdma_cq_get((__u64)cq);
	struct ntp_thread_ctx c = {
		.queue = (__u64)cq,	/* not 0: inside the callback (target_rdma_ctx) */
		.bp_key = (__u64)cq,
		.side = NTP_SIDE_TARGET,
	}, *e;
	__u32 t = tid();

	/* before every program is attached, its exit may be missing */
	if (!ntp_armed)
		return 0;
	if (s && !s->target) {
		s->event = 0;	/* an event of before, without its blocked-time reading */
		s->target = 1;
	}
	bp_thr_drop(t);	/* as the context's bp_sub, overwritten below */
	e = bpf_map_lookup_elem(&recv_ctx, &t);
	if (e)
		*e = c;
	else
		bpf_map_update_elem(&recv_ctx, &t, &c, BPF_ANY);
	return 0;
}

static __always_inline int rdma_target_recv_leave(void)
{
	__u32 t = tid();
	struct ntp_thread_ctx *e = bpf_map_lookup_elem(&recv_ctx, &t);

	if (e)
		e->queue = 0;
	return 0;
}

SEC("fentry/nvmet_rdma_recv_done")
int BPF_PROG(ntp_t_rrecv_fe, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_recv_enter(cq);
}

SEC("fexit/nvmet_rdma_recv_done")
int BPF_PROG(ntp_t_rrecv_fx, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_recv_leave();
}

SEC("kprobe/nvmet_rdma_recv_done")
int BPF_KPROBE(ntp_t_rrecv_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_recv_enter(cq);
}

SEC("kretprobe/nvmet_rdma_recv_done")
int BPF_KRETPROBE(ntp_t_rrecv_kr)
{
	return rdma_target_recv_leave();
}

static __always_inline __u64 rdma_req_of_cqe(void *cqe, __u64 cqe_off)
{
	return (__u64)cqe - cqe_off + bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, req);
}

/* rdma_rw_ctx_post(ctx, qp, port_num, cqe, chain_wr) (ib_core, exported):
 * nvmet_rdma_execute_command posts the RDMA READ that fetches a write's
 * data, cqe = &rsp->read_cqe. Other ULPs call it too: their lookups miss. */
static __always_inline int rdma_target_read_post(void *cqe)
{
	__u64 key = rdma_req_of_cqe(cqe, bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, read_cqe));
	struct ntp_record *r = cmd_find(&target_cmds, key);

	if (r && !has_ts(r, NTP_TS_T_STORAGE_SUBMIT))
		set_ts_once(r, NTP_TS_T_R2T_SENT, bpf_ktime_get_ns());
	return 0;
}

SEC("fentry/rdma_rw_ctx_post")
int BPF_PROG(ntp_t_rread_fe, void *rw_ctx, void *qp, __u32 port_num, void *cqe)
{
	return rdma_target_read_post(cqe);
}

SEC("kprobe/rdma_rw_ctx_post")
int BPF_KPROBE(ntp_t_rread_kp, void *rw_ctx, void *qp, __u32 port_num, void *cqe)
{
	return rdma_target_read_post(cqe);
}

/* nvmet_rdma_read_data_done(cq, wc): the RDMA READ completed, all the data
 * is in; it goes on to req->execute. */
static __always_inline int rdma_target_read_done(void *cq, struct ib_wc___ntp *wc, bool btf)
{
	struct ntp_record *r;
	__u64 key, now;

	/* before the completion's read: the kprobe flavour's is a helper call */
	if (cmds_none(&target_cmds))
		return 0;
	key = rdma_req_of_cqe(NTP_RD(btf, wc, wr_cqe), bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, read_cqe));
	r = cmd_find(&target_cmds, key);
	/* an unsampled write's READ: no clock */
	if (!r || !has_ts(r, NTP_TS_T_R2T_SENT) || has_ts(r, NTP_TS_T_DATA_RECV))
		return 0;
	now = bpf_ktime_get_ns();
	set_ts(r, NTP_TS_T_DATA_ARRIVE, rdma_arrival(cq, r->ts[NTP_TS_T_R2T_SENT], now));
	set_ts(r, NTP_TS_T_DATA_RECV, now);
	return 0;
}

SEC("fentry/nvmet_rdma_read_data_done")
int BPF_PROG(ntp_t_rrdone_fe, void *cq, struct ib_wc___ntp *wc)
{
	if (!wc)
		return 0;
	return rdma_target_read_done(cq, wc, true);
}

SEC("kprobe/nvmet_rdma_read_data_done")
int BPF_KPROBE(ntp_t_rrdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_read_done(cq, wc, false);
}

/* nvmet_rdma_queue_response(req), the .queue_response op: it chains a read's
 * RDMA WRITE before the response SEND and posts both before returning, so
 * its entry is when the target hands the answer back (as the entry of the
 * socket send is over TCP); the post's own work belongs to the network. */
static __always_inline int rdma_target_queue_response(struct nvmet_req___ntp *req)
{
	__u64 key = (__u64)req, now;
	struct ntp_record *r = cmd_find(&target_cmds, key);

	if (!r || !has_ts(r, NTP_TS_T_STORAGE_DONE))
		return 0;
	now = bpf_ktime_get_ns();
	set_ts_once(r, NTP_TS_T_RSP_QUEUED, now);
	set_ts_once(r, NTP_TS_T_RSP_SENT, now);
	return 0;
}

SEC("fentry/nvmet_rdma_queue_response")
int BPF_PROG(ntp_t_rqresp_fe, struct nvmet_req___ntp *req)
{
	return rdma_target_queue_response(req);
}

SEC("kprobe/nvmet_rdma_queue_response")
int BPF_KPROBE(ntp_t_rqresp_kp, struct nvmet_req___ntp *req)
{
	return rdma_target_queue_response(req);
}

/* nvmet_rdma_send_done(cq, wc): the response's send completion; right after
 * it nvmet_rdma_release_rsp frees the rsp for the next command, so this is
 * where the record leaves the target. */
static __always_inline int rdma_target_send_done(struct ib_wc___ntp *wc, bool btf)
{
	struct ntp_record *r;
	__u64 key;

	if (cmds_none(&target_cmds))	/* as in rdma_target_read_done */
		return 0;
	key = rdma_req_of_cqe(NTP_RD(btf, wc, wr_cqe), bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, send_cqe));
	r = cmd_find(&target_cmds, key);
	if (!r)
		return 0;
	set_ts(r, NTP_TS_T_RSP_SEND_DONE, bpf_ktime_get_ns());
	if (!has_ts(r, NTP_TS_T_RSP_SENT) && has_ts(r, NTP_TS_T_STORAGE_DONE))
		r->flags |= NTP_REC_F_RSP_FALLBACK;	/* the post's hook missed it */
	/* leave_side, not emit: with --exact-queues an unsampled command is
	 * summed here and must not reach the ring buffer */
	leave_side(&target_cmds, key, r);
	return 0;
}

SEC("fentry/nvmet_rdma_send_done")
int BPF_PROG(ntp_t_rsdone_fe, void *cq, struct ib_wc___ntp *wc)
{
	if (!wc)
		return 0;
	return rdma_target_send_done(wc, true);
}

SEC("kprobe/nvmet_rdma_send_done")
int BPF_KPROBE(ntp_t_rsdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_send_done(wc, false);
}
