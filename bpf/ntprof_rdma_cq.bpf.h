/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntprof_rdma_cq.bpf.h - the RDMA completion queues' state: written by the
 * NVMe/RDMA hooks (ntprof_rdma.bpf.c), read by nvmet_req_init's hook
 * (ntprof.bpf.c) for a command's arrival. Both files include it; rdma_cqs
 * is NTP_SHARED as ntprof_common.bpf.h's maps are: ntprof.bpf.c defines it.
 */
#ifndef NTP_RDMA_CQ_BPF_H
#define NTP_RDMA_CQ_BPF_H

/* Per CQ (struct ib_cq *): its last completion event, and its last polls
 * that returned completions (rdma_core:cq_poll), each with the CQ's
 * blocked-time reading (docs/backpressure.md). Both tracepoints fire for
 * every CQ of the machine: the state is a table of fixed slots, two per
 * set, the set chosen by a multiplicative hash of the CQ, as the command
 * tables (ntprof_common.bpf.h, cmd_slot): an array lookup the verifier
 * inlines, where a hash map took a helper call and jhash per event. A CQ
 * whose set holds two other CQs is not tracked: its completions get the
 * callback's own time as arrival (receive path 0, the span in the wire,
 * same network stage). */
#define NTP_RDMA_CQ_SET_BITS 11

struct rdma_cq_state {
	__u64 cq;		/* struct ib_cq *; 0: free slot */
	__u64 target;		/* nvmet-rdma polls it (its recv_done ran on it) */
	__u64 event;		/* last completion event */
	__u64 event_bp;
	__u64 poll;		/* last poll that returned completions */
	__u64 poll_bp;
	__u64 prev_poll;	/* the one before it */
	__u64 prev_bp;
};

NTP_SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 << NTP_RDMA_CQ_SET_BITS);
	__type(key, __u32);
	__type(value, struct rdma_cq_state);
} rdma_cqs SEC(".maps");

static __always_inline struct rdma_cq_state *rdma_cq_slot(__u64 cq, __u32 way)
{
	__u32 i = queue_slot(cq, NTP_RDMA_CQ_SET_BITS) * 2 + way;

	return bpf_map_lookup_elem(&rdma_cqs, &i);
}

/* cq's state, NULL: not tracked (yet) */
static __always_inline struct rdma_cq_state *rdma_cq_find(__u64 cq)
{
	struct rdma_cq_state *s = rdma_cq_slot(cq, 0);

	if (s && s->cq == cq)
		return s;
	s = rdma_cq_slot(cq, 1);
	if (s && s->cq == cq)
		return s;
	return NULL;
}

/* The target's arrival of the completion being handled (a command): the
 * CQ's last event or the poll before the one that returned it, whichever is
 * later. The completion is one that poll did not take: after a drained poll
 * it arrived later; after a full batch it may have waited since before it,
 * and then the poll's time errs late (by less than a batch's handling). The
 * event alone is no bound while the worker keeps polling (the CQ is not
 * re-armed, no event fires): behind a worker blocked on the drive it can be
 * many commands older than this one (docs/backpressure.md).
 * nvmet_req_init asks, for a command it tracks only: inside the callback
 * the CQ's state stands still (no event before the poll work re-arms the
 * CQ, no poll before the batch's callbacks returned), so the answer is the
 * one the callback's entry would have had. */
static __always_inline __u64 rdma_target_arrival(__u64 cq, __u64 now, __u64 *bp)
{
	struct rdma_cq_state *t = rdma_cq_find(cq);

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

#endif
