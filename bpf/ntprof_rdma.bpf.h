/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntprof_rdma.bpf.h - the NVMe/RDMA hooks (nvme-rdma host, nvmet-rdma
 * target), included at the end of ntprof.bpf.c: one object, one BTF load.
 * The transport-independent tracepoints (nvme_setup_cmd, nvme_complete_rq,
 * block_rq_complete, nvmet_req_init, nvmet_req_complete) and
 * nvmet_bdev_execute_rw are ntprof.bpf.c's, shared with NVMe/TCP.
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
#ifndef NTP_RDMA_BPF_H
#define NTP_RDMA_BPF_H

/* Per CQ (struct ib_cq *): its last completion event, and its last polls
 * that returned completions (rdma_core:cq_poll), each with the CQ's
 * blocked-time reading (docs/backpressure.md). */
struct rdma_cq_state {
	__u64 event;		/* last completion event */
	__u64 event_bp;
	__u64 poll;		/* last poll that returned completions */
	__u64 poll_bp;
	__u64 prev_poll;	/* the one before it */
	__u64 prev_bp;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct rdma_cq_state);
} rdma_cq_events SEC(".maps");

/* A sampled host command between its post and its response: the response
 * names it only by (queue, command id); blk-mq's tag lookup
 * (nvme_find_rq) is not something to redo in BPF. */
struct rdma_cid_key {
	__u64 queue;		/* struct nvme_rdma_queue * */
	__u32 cid;		/* command id as on the wire */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, NTP_MAX_INFLIGHT);
	__type(key, struct rdma_cid_key);
	__type(value, __u64);	/* struct request * */
} rdma_host_cids SEC(".maps");

/* ---- completion events ---- */

static __always_inline int rdma_cq_event(void *cq)
{
	__u64 key = (__u64)cq, now = bpf_ktime_get_ns();
	struct rdma_cq_state *t, n = { .event = now };

	t = bpf_map_lookup_elem(&rdma_cq_events, &key);
	if (t) {	/* in place: no LRU insert per event */
		t->event = now;
		t->event_bp = ntp_bp_read(key, now);
	} else {
		n.event_bp = ntp_bp_read(key, now);
		bpf_map_update_elem(&rdma_cq_events, &key, &n, BPF_ANY);
	}
	return 0;
}

/* rdma_core:cq_poll(cq, requested, rc) after each ib_poll_cq of
 * __ib_process_cq: rc completions were taken off the CQ now. */
static __always_inline int rdma_cq_poll(void *cq, int rc)
{
	__u64 key = (__u64)cq, now;
	struct rdma_cq_state *t;

	if (rc <= 0)
		return 0;
	t = bpf_map_lookup_elem(&rdma_cq_events, &key);
	if (!t)
		return 0;
	now = bpf_ktime_get_ns();
	t->prev_poll = t->poll;
	t->prev_bp = t->poll_bp;
	t->poll = now;
	t->poll_bp = ntp_bp_read(key, now);
	return 0;
}

SEC("tp_btf/cq_poll")
int BPF_PROG(ntp_r_cqpoll_tb, void *cq, int requested, int rc)
{
	if (!cq)
		return 0;
	return rdma_cq_poll(cq, rc);
}

SEC("raw_tp/cq_poll")
int BPF_PROG(ntp_r_cqpoll_rt, void *cq, int requested, int rc)
{
	return rdma_cq_poll(cq, rc);
}

/* When did the completion being handled on cq reach the stack? Its CQ's
 * last event, if it is no earlier than `after` (the message it answers was
 * posted after it). A poll that picks up a completion which arrived while
 * it ran has no event of its own: then the callback's own time stands in,
 * and the whole span counts as the wire, in the same (network) stage. */
static __always_inline __u64 rdma_arrival(void *cq, __u64 after, __u64 now)
{
	struct rdma_cq_state *t;
	__u64 key = (__u64)cq;

	t = bpf_map_lookup_elem(&rdma_cq_events, &key);
	if (t && t->event >= after && t->event <= now)
		return t->event;
	return now;
}

/* The target's arrival of the completion being handled (a command): the
 * CQ's last event or the poll before the one that returned it, whichever is
 * later. The completion is one that poll did not take: after a drained poll
 * it arrived later; after a full batch it may have waited since before it,
 * and then the poll's time errs late (by less than a batch's handling). The
 * event alone is no bound while the worker keeps polling (the CQ is not
 * re-armed, no event fires): behind a worker blocked on the drive it can be
 * many commands older than this one (docs/backpressure.md). */
static __always_inline __u64 rdma_target_arrival(void *cq, __u64 now, __u64 *bp)
{
	struct rdma_cq_state *t;
	__u64 key = (__u64)cq;

	t = bpf_map_lookup_elem(&rdma_cq_events, &key);
	if (!t)
		return now;
	if (t->event && t->event >= t->prev_poll && t->event <= now) {
		*bp = t->event_bp;
		return t->event;
	}
	if (t->prev_poll && t->prev_poll <= now) {
		*bp = t->prev_bp;
		return t->prev_poll;
	}
	return now;
}

SEC("tp_btf/cq_schedule")
int BPF_PROG(ntp_r_cqev_tb, void *cq)
{
	if (!cq)
		return 0;
	return rdma_cq_event(cq);
}

SEC("raw_tp/cq_schedule")
int BPF_PROG(ntp_r_cqev_rt, void *cq)
{
	return rdma_cq_event(cq);
}

/* ================================ host ================================ */

/* struct nvme_rdma_qe * of a request's capsule -> its struct request * */
static __always_inline __u64 rdma_rq_of_sqe(void *qe)
{
	__u64 req = (__u64)qe - bpf_core_field_offset(struct nvme_rdma_request___ntp, sqe);

	return req - bpf_core_type_size(struct request);	/* blk_mq_rq_to_pdu(rq) == rq + 1 */
}

/* nvme_rdma_post_send(queue, qe, sge, num_sge, first) from ->queue_rq: the
 * capsule (after a memory registration, chained as `first`) goes to the HCA.
 * Also posts the AEN capsule (ctrl->async_event_sqe): no request, the
 * lookup misses. */
static __always_inline int rdma_host_post(void *queue, void *qe)
{
	__u64 key = rdma_rq_of_sqe(qe);
	struct ntp_record *r = cmd_find(&host_cmds, key);
	struct rdma_cid_key k = {};

	if (!r || has_ts(r, NTP_TS_H_CMD_SENT))	/* unsampled: one lookup, nothing else */
		return 0;
	set_ts(r, NTP_TS_H_CMD_SENT, bpf_ktime_get_ns());
	k.queue = (__u64)queue;
	k.cid = r->cid;
	bpf_map_update_elem(&rdma_host_cids, &k, &key, BPF_ANY);
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
static __always_inline int rdma_host_recv(void *cq, struct ib_wc___ntp *wc)
{
	__u64 now, rq, *rqp;
	struct nvme_completion___ntp *cqe;
	struct nvme_rdma_qe___ntp *qe;
	struct rdma_cid_key k = {};
	struct ntp_record *r;

	if (BPF_CORE_READ(wc, status) != NTP_IB_WC_SUCCESS)
		return 0;
	qe = (void *)BPF_CORE_READ(wc, wr_cqe) - bpf_core_field_offset(struct nvme_rdma_qe___ntp, cqe);
	cqe = BPF_CORE_READ(qe, data);
	k.queue = (__u64)BPF_CORE_READ(wc, qp, qp_context);
	k.cid = BPF_CORE_READ(cqe, command_id);
	rqp = bpf_map_lookup_elem(&rdma_host_cids, &k);
	if (!rqp)
		return 0;
	now = bpf_ktime_get_ns();
	rq = *rqp;
	bpf_map_delete_elem(&rdma_host_cids, &k);
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
	return rdma_host_recv(cq, wc);
}

SEC("kprobe/nvme_rdma_recv_done")
int BPF_KPROBE(ntp_h_rrecv_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_host_recv(cq, wc);
}

/* nvme_rdma_send_done(cq, wc): the capsule's send completion (the target's
 * HCA acknowledged it). Informational: the stage model does not use it. */
static __always_inline int rdma_host_send_done(struct ib_wc___ntp *wc)
{
	void *qe = (void *)BPF_CORE_READ(wc, wr_cqe) - bpf_core_field_offset(struct nvme_rdma_qe___ntp, cqe);
	__u64 key = rdma_rq_of_sqe(qe);
	struct ntp_record *r = cmd_find(&host_cmds, key);

	if (r)
		set_ts_once(r, NTP_TS_H_SEND_DONE, bpf_ktime_get_ns());
	return 0;
}

SEC("fentry/nvme_rdma_send_done")
int BPF_PROG(ntp_h_rsdone_fe, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_host_send_done(wc);
}

SEC("kprobe/nvme_rdma_send_done")
int BPF_KPROBE(ntp_h_rsdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_host_send_done(wc);
}

/* =============================== target =============================== */

/* nvmet_rdma_recv_done(cq, wc) parses the command inside (handle_command ->
 * nvmet_req_init) when the queue is live: remember, for this thread, the
 * CQ's event time as the command's arrival (target_req_init reads it).
 * nvmet-rdma polls its CQs from a work item: the callback runs in a
 * kworker, and a nested softirq never parses an nvmet-rdma command. */
static __always_inline int rdma_target_recv_enter(void *cq, struct ib_wc___ntp *wc)
{
	__u64 now = bpf_ktime_get_ns();
	struct ntp_thread_ctx c = {
		.queue = (__u64)BPF_CORE_READ(wc, qp, qp_context),
		.bp_key = (__u64)cq,
		.side = NTP_SIDE_TARGET,
	}, *e;
	__u32 t = tid();

	if (!c.queue)
		return 0;
	c.arrival_ns = rdma_target_arrival(cq, now, &c.arrival_bp);
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
	return rdma_target_recv_enter(cq, wc);
}

SEC("fexit/nvmet_rdma_recv_done")
int BPF_PROG(ntp_t_rrecv_fx, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_recv_leave();
}

SEC("kprobe/nvmet_rdma_recv_done")
int BPF_KPROBE(ntp_t_rrecv_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_recv_enter(cq, wc);
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
static __always_inline int rdma_target_read_done(void *cq, struct ib_wc___ntp *wc)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 key = rdma_req_of_cqe(BPF_CORE_READ(wc, wr_cqe),
				    bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, read_cqe));
	struct ntp_record *r = cmd_find(&target_cmds, key);

	if (!r || !has_ts(r, NTP_TS_T_R2T_SENT) || has_ts(r, NTP_TS_T_DATA_RECV))
		return 0;
	set_ts(r, NTP_TS_T_DATA_ARRIVE, rdma_arrival(cq, r->ts[NTP_TS_T_R2T_SENT], now));
	set_ts(r, NTP_TS_T_DATA_RECV, now);
	return 0;
}

SEC("fentry/nvmet_rdma_read_data_done")
int BPF_PROG(ntp_t_rrdone_fe, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_read_done(cq, wc);
}

SEC("kprobe/nvmet_rdma_read_data_done")
int BPF_KPROBE(ntp_t_rrdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_read_done(cq, wc);
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
static __always_inline int rdma_target_send_done(struct ib_wc___ntp *wc)
{
	__u64 key = rdma_req_of_cqe(BPF_CORE_READ(wc, wr_cqe),
				    bpf_core_field_offset(struct nvmet_rdma_rsp___ntp, send_cqe));
	struct ntp_record *r = cmd_find(&target_cmds, key);

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
	return rdma_target_send_done(wc);
}

SEC("kprobe/nvmet_rdma_send_done")
int BPF_KPROBE(ntp_t_rsdone_kp, void *cq, struct ib_wc___ntp *wc)
{
	return rdma_target_send_done(wc);
}

#endif
