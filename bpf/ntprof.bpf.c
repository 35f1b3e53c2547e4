// SPDX-License-Identifier: GPL-2.0
/*
 * ntprof.bpf.c - ntprof's kernel side for Linux NVMe/TCP, host and target.
 * NVMe/RDMA's own hooks are in ntprof_rdma.bpf.c; the tracepoint hooks below
 * serve both transports.
 *
 * One object holds every hook: the two files are linked into one by bpftool
 * gen object (mk/bpf.mk). User space picks, before load, the programs of the
 * role(s) it records and of one flavour (fentry/fexit + tp_btf, or
 * kprobe/kretprobe + raw_tp) with bpf_program__set_autoload(). One object
 * means one BTF load: under TCG each skeleton instance costs ~0.3 s.
 *
 * docs/hooks.md lists every hook, the timestamp slot it fills and why.
 *
 * Host (keyed by struct request *):
 *   nvme_setup_cmd tp        sample pick, DRV_SUBMIT, BLK_SUBMIT=rq->start_time_ns
 *   nvme_tcp_try_send        which queue this thread sends on (context only;
 *                            only where nvme_tcp_data_ready's address is unknown)
 *   tcp_sendpage/tcp_sendmsg CMD_SENT / DATA_SENT (6.1 inlined the PDU senders
 *                            into nvme_tcp_try_send; we see their socket sends)
 *   nvme_tcp_data_ready      packet arrival per socket
 *   nvme_tcp_recv_skb        arrival of the chunk being parsed (context only, entry)
 *   nvme_tcp_setup_h2c_data_pdu  R2T_DRV, R2T_ARRIVE (called by handle_r2t)
 *   blk_mq_tag_to_rq        the same, where the above is inlined (5.10)
 *   blk_mq_complete_request_remote  RSP_DRV, RSP_ARRIVE (6.1 inlined
 *                            nvme_tcp_process_nvme_cqe; this is its hand-off)
 *   nvme_complete_rq tp      DRV_COMPLETE
 *   block_rq_complete tp     BLK_COMPLETE; the record leaves the host
 * Target (keyed by struct nvmet_req *):
 *   nvmet_tcp_io_work        which queue this thread works on (context only;
 *                            only where nvmet_tcp_data_ready's address is unknown)
 *   nvmet_tcp_data_ready     packet arrival per queue (its socket noted)
 *   nvmet_req_init tp        sample pick, CMD_RECV, CMD_ARRIVE
 *   tcp_sendpage/tcp_sendmsg R2T_SENT, RSP_SENT (nvmet_tcp_try_send_one and
 *                            the send helpers are inlined into io_work); the
 *                            record leaves the target at RSP_SENT
 *   nvmet_bdev_execute_rw    STORAGE_SUBMIT (+ DATA_ARRIVE/DATA_RECV after R2T:
 *                            the arrivals of the data's first and last bytes)
 *   nvmet_req_complete tp    STORAGE_DONE, exact per-group counter
 *   nvmet_ns_disable         the generation of the device-name cache
 *   nvmet_tcp_queue_response RSP_QUEUED
 *
 * --exact-queues (knob exact_queues): every command is tracked as a sampled
 * one is, marked NTP_REC_F_UNSAMPLED when the hash did not pick it; where a
 * record leaves its side (or is closed missed) its stage times are added to
 * group_occ, and only sampled records go to the ring buffer.
 */
#define NTP_BPF_DEFINE_SHARED	/* the maps and globals of ntprof_common.bpf.h */
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

char LICENSE[] SEC("license") = "GPL";

/* ================================ host ================================ */

static __always_inline struct gendisk *rq_disk(struct request *rq, bool btf)
{
	struct request___old *old = (void *)rq;

	if (bpf_core_field_exists(old->rq_disk))
		return NTP_RD(btf, old, rq_disk);
	return NTP_RD2(btf, rq, q, disk);
}

/* The disk the request runs on. With native multipath that is the hidden
 * path nvme<S>c<C>n<N>; user space names the group by its head nvme<S>n<N>
 * (a loop here multiplies the verifier's work under TCG). cs: this CPU's
 * state (cpu_state_of), whose host_dev is the last disk a host command ran
 * on here and its name. */
static __always_inline void host_dev(struct request *rq, char *out, bool btf, struct ntp_cpu_state *cs)
{
	struct gendisk *disk = rq_disk(rq, btf);
	struct ntp_dev_cache *c = NULL;
	__u64 seq = 0;

	if (!disk)
		return;
	/* The name of the disk this CPU saw last, while it is the same disk:
	 * the same address and the same diskseq (5.15+: a number per disk
	 * allocation, never reused), so a disk freed and another made at its
	 * address under another name is read again. Without diskseq, read. */
	if (bpf_core_field_exists(disk->diskseq)) {
		seq = NTP_RD(btf, disk, diskseq);
		c = &cs->host_dev;
		if (c && c->disk == (__u64)disk && c->diskseq == seq) {
			__builtin_memcpy(out, c->name, NTP_DEV_LEN);
			return;
		}
	}
	BPF_CORE_READ_STR_INTO((char (*)[NTP_DEV_LEN])out, disk, disk_name);
	if (c) {
		c->disk = (__u64)disk;
		c->diskseq = seq;
		__builtin_memcpy(c->name, out, NTP_DEV_LEN);
	}
}

/* The command's starting LBA, for every command (the pick hashes it). Not
 * NTP_RD(rw.slba): the verifier walks nvme_command's union by its first
 * member, nvme_common_command, whose two 4-byte fields cdw10 and cdw11 lie
 * where rw.slba does, and refuses an 8-byte load across them. A tp_btf
 * program reads the two dwords with plain loads (little-endian: cdw10 is
 * the low half, as on the wire); a raw_tp one, a big-endian CPU or a
 * kernel without those fields takes one probe read of rw.slba. */
static __always_inline __u64 cmd_slba(struct nvme_command___ntp *cmd, bool btf)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (btf && bpf_core_field_exists(cmd->common.cdw10) && bpf_core_field_exists(cmd->common.cdw11))
		return (__u64)cmd->common.cdw10 | (__u64)cmd->common.cdw11 << 32;
#endif
	return BPF_CORE_READ(cmd, rw.slba);
}

static __always_inline __u64 rq_of_tcp_req(void *req)
{
	/* blk_mq_rq_to_pdu(rq) == rq + 1: the driver's pdu follows struct request */
	return (__u64)req - bpf_core_type_size(struct request);
}

/* struct bio's submission time, with CONFIG_BLK_CGROUP only: up to 6.17
 * bi_issue (the low 51 bits of the time, set for every bio), from 6.18 on
 * issue_time_ns (the whole time, set only where blk-iolatency asks for it,
 * 0 elsewhere; docs/kernel-btf.md) */
struct bio_issue___ntp {
	__u64 value;
} __attribute__((preserve_access_index));
struct bio___ntp {
	struct bio_issue___ntp bi_issue;
	__u64 issue_time_ns;
} __attribute__((preserve_access_index));

/* The bio's submission time, if the kernel keeps one and it is not after
 * ref (the request's allocation): 0 otherwise (docs/hooks.md). */
static __always_inline __u64 host_bio_issue(struct request *rq, __u64 now, __u64 ref)
{
	struct bio___ntp *bio = NULL;
	struct bio_issue___ntp *issue = NULL;
	__u64 t;

	/* each asked, so that none is a required field (btf_need.c) */
	if (bpf_core_field_exists(bio->issue_time_ns)) {
		bio = (void *)BPF_CORE_READ(rq, bio);
		t = bio ? ntp_bio_issue_ns(BPF_CORE_READ(bio, issue_time_ns), now) : 0;
		return t <= ref ? t : 0;
	}
	if (!bpf_core_field_exists(bio->bi_issue) || !bpf_core_field_exists(issue->value))
		return 0;
	bio = (void *)BPF_CORE_READ(rq, bio);
	if (!bio)
		return 0;
	t = ntp_bio_issue_time(BPF_CORE_READ(bio, bi_issue.value), now);
	return t <= ref ? t : 0;
}

/* btf: a tp_btf program (typed pointers: plain loads, NTP_RD) */
static __always_inline int host_setup_cmd(struct request *rq, struct nvme_command___ntp *cmd, bool btf)
{
	__u64 devw[NTP_DEV_LEN / 8] = {};	/* 8-byte aligned for dev_wanted() */
	char *dev = (char *)devw;
	struct nvme_request___ntp *nreq;
	struct ntp_cpu_state *cs;
	struct ntp_record *r;
	__u64 key = (__u64)rq, now, start;
	__u16 cid, nlb;
	__u64 slba;
	__u32 len;
	__u8 opcode;
	int io, picked;

	opcode = NTP_RD(btf, cmd, common.opcode);
	io = io_of(opcode);
	if (!NTP_RD2(btf, rq, q, queuedata))	/* admin and fabrics commands */
		return 0;
	/* whatever happens next, a stale record on this request must not absorb it */
	close_missed(&host_cmds, key, NTP_STAT_MISSED_HOST);
	if (!io_wanted(io))
		return 0;
	len = NTP_RD(btf, rq, __data_len);
	if (!size_wanted(len))
		return 0;
	/* a per-CPU array's only element: never missing, but the verifier
	 * wants the check before any offset is added to it */
	cs = cpu_state_of();
	if (!cs)
		return 0;
	host_dev(rq, dev, btf, cs);
	if (!dev_wanted(dev))
		return 0;
	count_group(NTP_SIDE_HOST, io, len, dev, cs);

	cid = NTP_RD(btf, cmd, common.command_id);
	slba = cmd_slba(cmd, btf);
	nlb = NTP_RD(btf, cmd, rw.length);
	picked = ntp_sample_pick(cid, slba, nlb, sampling_n);
	if (!picked && !exact_queues)
		return 0;

	r = cmd_claim(&host_cmds, key);
	if (!r) {
		stat_inc(NTP_STAT_TABLE_FULL);
		return 0;
	}
	now = bpf_ktime_get_ns();
	nreq = (void *)rq + bpf_core_type_size(struct request);
	r->side = NTP_SIDE_HOST;
	r->transport = ntp_transport;
	r->impl = NTP_IMPL_LINUX;
	r->cid = cid;
	r->slba = slba;
	r->nlb = nlb;
	r->len = len;
	/* a sampled command's own fields: plain loads where the tracepoint's
	 * pointers are typed (each BPF_CORE_READ is a helper call, on the
	 * path that makes a sampled command slower than the rest) */
	r->opcode = opcode;
	r->nsid = NTP_RD(btf, cmd, common.nsid);
	r->qid = NTP_RD2(btf, rq, mq_hctx, queue_num) + 1;
	r->cntlid = BPF_CORE_READ(nreq, ctrl, cntlid);
	if (sampling_n <= 1)
		r->flags |= NTP_REC_F_SAMPLED_EXACT;
	__builtin_memcpy(r->dev, dev, NTP_DEV_LEN);
	if (picked)
		r->seq = next_seq(&seq_host);
	else
		r->flags |= NTP_REC_F_UNSAMPLED;	/* --exact-queues only */
	/* blk-mq stamps start_time_ns (ktime_get_ns, the clock of
	 * bpf_ktime_get_ns) when it allocates the request for the bio, if I/O
	 * accounting is on; nvme_setup_cmd runs later inside ->queue_rq. */
	start = NTP_RD(btf, rq, start_time_ns);
	if (start && start <= now)
		set_ts(r, NTP_TS_H_BLK_SUBMIT, start);
	else
		start = now;
	/* the bio's submission, before blk-mq waited for a tag and allocated
	 * the request: the wait becomes part of end to end */
	start = host_bio_issue(rq, now, start);
	if (start)
		set_ts(r, NTP_TS_H_BIO_SUBMIT, start);
	set_ts(r, NTP_TS_H_DRV_SUBMIT, now);
	return 0;
}

SEC("tp_btf/nvme_setup_cmd")
int BPF_PROG(ntp_h_setup_tb, struct request *rq, struct nvme_command___ntp *cmd)
{
	/* 6.12's verifier types tracepoint arguments "trusted or NULL": no
	 * pointer arithmetic (CO-RE field offsets) before a NULL check */
	if (!rq || !cmd)
		return 0;
	return host_setup_cmd(rq, cmd, true);
}

SEC("raw_tp/nvme_setup_cmd")
int BPF_PROG(ntp_h_setup_rt, struct request *rq, struct nvme_command___ntp *cmd)
{
	return host_setup_cmd(rq, cmd, false);
}

static __always_inline int host_stamp(struct request *rq, int slot)
{
	__u64 key = (__u64)rq;
	struct ntp_record *r = cmd_find(&host_cmds, key);

	if (r)
		set_ts_once(r, slot, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/nvme_complete_rq")
int BPF_PROG(ntp_h_comp_tb, struct request *rq)
{
	if (!rq)
		return 0;
	return host_stamp(rq, NTP_TS_H_DRV_COMPLETE);
}

SEC("raw_tp/nvme_complete_rq")
int BPF_PROG(ntp_h_comp_rt, struct request *rq)
{
	return host_stamp(rq, NTP_TS_H_DRV_COMPLETE);
}

/* A host socket send's entry notes its time in the PDU's slot without the
 * slot's valid bit (send_pending); its exit, when the call accepted
 * bytes, makes it valid (send_done). Over loopback the whole round trip
 * can end, response parsed and request completed on the other CPU, while the
 * sender is still inside tcp_sendpage (its softirq delivered the capsule to
 * the target before the call returned): the record would leave before the
 * exit stamps it. A response proves the send went out: the pending time
 * stands. Otherwise the unconfirmed value is cleared. */
static __always_inline void send_settle(struct ntp_record *r, int slot)
{
	if (slot != NTP_TS_H_CMD_SENT && slot != NTP_TS_H_DATA_SENT)
		return;
	if (has_ts(r, slot))
		return;
	if (r->ts[slot] && has_ts(r, NTP_TS_H_RSP_DRV))
		r->ts_valid |= 1u << slot;
	else
		r->ts[slot] = 0;
}

/* The command leaves the host: block_rq_complete fires in blk_update_request,
 * after nvme_complete_rq, for every block device (most lookups miss). */
static __always_inline int host_blk_complete(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct ntp_record *r = cmd_find(&host_cmds, key);

	if (!r)
		return 0;
	send_settle(r, NTP_TS_H_CMD_SENT);
	send_settle(r, NTP_TS_H_DATA_SENT);
	set_ts(r, NTP_TS_H_BLK_COMPLETE, bpf_ktime_get_ns());
	leave_side(&host_cmds, key, r);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ntp_h_blkdone_tb, struct request *rq)
{
	if (!rq)
		return 0;
	return host_blk_complete(rq);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(ntp_h_blkdone_rt, struct request *rq)
{
	return host_blk_complete(rq);
}

/* -- nvme_tcp_try_send: remember the queue so the socket send hooks can tell
 * which request (queue->request) and which phase (req->state) they carry. -- */
static __always_inline int ctx_enter(void *map, __u64 queue, __u8 side)
{
	struct ntp_thread_ctx c = { .queue = queue, .side = side }, *e;
	__u32 t = tid();

	/* before every program is attached, its exit may be missing */
	if (!ntp_armed)
		return 0;
	bp_thr_drop(t);
	e = bpf_map_lookup_elem(map, &t);
	if (e) {
		e->queue = queue;
		e->side = side;
		e->arrival_ns = 0;
		e->send_ns = 0;
		if (e->bp_sub)	/* a submission's missed exit (sched_switch's gate) */
			bp_busy_add(t, -1);
		e->bp_sub = 0;
		e->bp_slept = 0;
	} else {
		bpf_map_update_elem(map, &t, &c, BPF_ANY);
	}
	return 0;
}

/* An entry with queue 0 is "not inside": lookups treat it as absent. */
static __always_inline int ctx_leave(void *map)
{
	__u32 t = tid();
	struct ntp_thread_ctx *e = bpf_map_lookup_elem(map, &t);

	bp_thr_drop(t);
	if (e) {
		e->queue = 0;
		if (e->bp_sub)	/* a submission's missed exit (sched_switch's gate) */
			bp_busy_add(t, -1);
		e->bp_sub = 0;
	}
	return 0;
}

SEC("fentry/nvme_tcp_try_send")
int BPF_PROG(ntp_h_send_fe, void *queue)
{
	return ctx_enter(&send_ctx, (__u64)queue, NTP_SIDE_HOST);
}

SEC("fexit/nvme_tcp_try_send")
int BPF_PROG(ntp_h_send_fx, void *queue, int ret)
{
	return ctx_leave(&send_ctx);
}

SEC("kprobe/nvme_tcp_try_send")
int BPF_KPROBE(ntp_h_send_kp, void *queue)
{
	return ctx_enter(&send_ctx, (__u64)queue, NTP_SIDE_HOST);
}

SEC("kretprobe/nvme_tcp_try_send")
int BPF_KRETPROBE(ntp_h_send_kr)
{
	return ctx_leave(&send_ctx);
}

/* A socket send's PDU slot, the host's or the target's (host_send_at,
 * target_send_at), when the send is seen at its entry and its exit: the
 * entry writes the time into the slot, not yet valid, unless the slot is
 * already stamped (a retry after -EAGAIN overwrites it: the retry is the
 * send); the clock is read only for a sampled command. */
static __always_inline void send_slot_pending(struct ntp_record *r, int slot)
{
	if (!has_ts(r, slot))
		r->ts[slot] = bpf_ktime_get_ns();
}

/* The exit: the entry's time, still in the slot, becomes valid if the call
 * accepted bytes and it is not older than floor; otherwise it goes (a call
 * that put nothing on the wire; a slot without a time, or with one from
 * before floor, is a newer command's). 1: made valid. */
static __always_inline int send_slot_settle(struct ntp_record *r, int slot_in, long ret, __u64 floor)
{
	__u64 slot = (__u32)slot_in;

	/* A slot out of send_stash, bounded where the verifier sees it: the
	 * callers' checks let clang drop this one, and the verifier does not
	 * carry theirs across the register copies clang makes; barrier_var
	 * (bpf_helpers.h, an empty asm) makes clang forget what it proved. */
	barrier_var(slot);
	if (slot >= NTP_TS_SLOTS)
		return 0;
	if (has_ts(r, slot))
		return 0;
	if (ret > 0 && r->ts[slot] && r->ts[slot] >= floor) {
		r->ts_valid |= 1u << slot;
		return 1;
	}
	r->ts[slot] = 0;
	return 0;
}

/* The record of the request the host queue is sending (NULL when none is
 * being sent or it is not sampled), and in *slot the timestamp this send
 * stamps on it, from the PDU the request is at (req->state): the command
 * capsule, or a write's data after an R2T; -1: none (DATA without an R2T is
 * in-capsule data, part of the command capsule). */
static __always_inline struct ntp_record *host_send_at(__u64 queue, int *slot, __u64 *keyp)
{
	struct nvme_tcp_queue___ntp *q = (void *)queue;
	struct nvme_tcp_request___ntp *req;
	struct ntp_record *r;
	int state;

	*slot = -1;
	*keyp = 0;
	/* none sampled in flight: the PDU being sent is not one (a command is
	 * claimed before its capsule is sent), no read of the queue */
	if (cmds_none(&host_cmds))
		return NULL;
	req = BPF_CORE_READ(q, request);
	if (!req)
		return NULL;
	r = cmd_find(&host_cmds, rq_of_tcp_req(req));
	if (!r)
		return NULL;
	*keyp = rq_of_tcp_req(req);
	state = BPF_CORE_READ(req, state);
	if (state == NTP_NVME_TCP_SEND_CMD_PDU)
		*slot = NTP_TS_H_CMD_SENT;
	else if ((state == NTP_NVME_TCP_SEND_H2C_PDU || state == NTP_NVME_TCP_SEND_DATA) &&
		 has_ts(r, NTP_TS_H_R2T_DRV))
		*slot = NTP_TS_H_DATA_SENT;
	return r;
}

/* A socket send on the host's queue, stamped at its exit with the entry's
 * time (kprobe flavour, through the per-thread context): the entry time is
 * when the driver hands the PDU to the network ("handed to the network");
 * what TCP/IP then does on the way out belongs to the network stage. */
static __always_inline void host_sock_send(__u64 queue, __u64 now)
{
	struct ntp_record *r;
	__u64 key;
	int slot;

	r = host_send_at(queue, &slot, &key);
	/* the request may have completed and started a new command during the
	 * call (send_settle): a send that began before it was submitted is not
	 * its own */
	if (!r || now < r->ts[NTP_TS_H_DRV_SUBMIT])
		return;
	if (slot == NTP_TS_H_CMD_SENT)
		set_ts_once(r, NTP_TS_H_CMD_SENT, now);
	else if (slot == NTP_TS_H_DATA_SENT)
		set_ts_once(r, NTP_TS_H_DATA_SENT, now);
}

/*
 * What a socket send's entry found, for its exit: the entry reads the PDU
 * being sent (the queue's request or command, and its state: two probe
 * reads), the exit needs the same answer, and the driver cannot have moved
 * on between them (the PDU changes only after the socket call returns).
 * One queue sends from one thread at a time (nvme_tcp_try_send runs under
 * queue->send_mutex; nvmet_tcp_io_work is one work item per queue), so a
 * slot per queue, chosen by a multiplicative hash of its address, carries
 * the answer from the entry to the exit of the same send: an array lookup
 * the verifier inlines instead of the exit's two reads. The entry takes
 * the slot (a compare-and-exchange of its queue from 0, or the queue's own
 * from a send whose exit never came), the exit reads it and frees it: only
 * the owner writes it, so a read never mixes two queues' answers. A queue
 * whose slot another queue holds, and a kernel without BPF atomics
 * (has_atomic_fetch), read the PDU again at the exit. The entry writes it
 * only once it got past the table's count (cmds_none), and the exit looks
 * only once it got past the same count, so a send while nothing of the side
 * is sampled costs no more than the count. A slot can still hold an older
 * finding of its queue: an exit skipped (a missed kretprobe, or a count
 * that fell to zero during the call) leaves it owned, and the next exit of
 * that queue whose entry wrote nothing (no command in flight at the entry,
 * one claimed during the call) takes it stale. That is harmless:
 * send_slot_settle makes a slot valid only with a pending time in it, and
 * no entry wrote one for a command claimed after it (cmd_find of an older
 * command gone from the table finds nothing).
 */
struct ntp_send_stash {
	__u64 queue;		/* the owner, 0: free; 64 bits: drop_atomic_fetch (src/collector/collector.c) */
	__u64 key;		/* the PDU's sampled command, 0: none */
	__s64 slot;		/* the timestamp slot the send stamps, -1: none */
};

#define NTP_STASH_BITS 10

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << NTP_STASH_BITS);
	__type(key, __u32);
	__type(value, struct ntp_send_stash);
} send_stash SEC(".maps");

static __always_inline struct ntp_send_stash *send_stash_of(__u64 queue)
{
	__u32 i = queue_slot(queue, NTP_STASH_BITS);

	return bpf_map_lookup_elem(&send_stash, &i);
}

/* The entry of queue's send found key (0: no sampled command's PDU) and slot. */
static __always_inline void send_stash_put(__u64 queue, __u64 key, int slot)
{
	struct ntp_send_stash *s;

	if (!has_atomic_fetch || !queue)
		return;
	s = send_stash_of(queue);
	if (!s)
		return;
	if (!slot_owned(&s->queue, queue, true))
		return;
	s->key = key;
	s->slot = slot;
}

/* The exit of queue's send: 1 with the entry's finding in *key, *slot (the
 * slot freed); 0: none kept, read the PDU again. */
static __always_inline int send_stash_take(__u64 queue, __u64 *key, int *slot)
{
	struct ntp_send_stash *s;

	if (!has_atomic_fetch || !queue)
		return 0;
	s = send_stash_of(queue);
	if (!s || s->queue != queue)
		return 0;
	*key = s->key;
	*slot = s->slot;
	/* freed by a compare-and-exchange, which BPF orders fully: the loads
	 * above complete before another queue can see the slot free and
	 * claim it, also on a weakly ordered CPU (arm64), where a plain store
	 * after a compiler barrier may become visible first. Only the owner
	 * frees it, so it cannot fail. */
	__sync_val_compare_and_swap(&s->queue, queue, 0);
	return 1;
}

/* -- receive: packet arrival per host socket or target queue (arrival_note),
 * then the chunk being parsed -- */
/* The low bits of sk_user_data may carry flags (SK_USER_DATA_NOCOPY and
 * others, include/net/sock.h): masked off. */
#define NTP_SK_USER_DATA_PTRMASK (~7ULL)

/* target: with the queue (the socket's sk_user_data, nvmet_tcp_set_queue_sock),
 * whose blocked time the arrival notes; btf: an fentry program (NTP_RD) */
static __always_inline int sk_ready(struct sock *sk, int target, bool btf)
{
	/* The host asks for an arrival only for its sampled commands' responses
	 * and R2Ts, which arrive after the command was claimed (nvme_setup_cmd
	 * runs before the capsule is sent): with none in the table, no packet
	 * of now is one it will ask about. arrival_of finds the oldest noted
	 * packet past a byte; a packet not noted came before the command was
	 * claimed, hence before any byte of its answer (host_live,
	 * ntprof_common.bpf.h). The target picks after the capsule arrived:
	 * every packet is noted. */
	if (!target && cmds_none(&host_cmds))
		return 0;
	arrival_note(sk, target ? (__u64)NTP_RD(btf, sk, sk_user_data) & NTP_SK_USER_DATA_PTRMASK : 0, btf);
	return 0;
}

SEC("fentry/nvme_tcp_data_ready")
int BPF_PROG(ntp_h_ready_fe, struct sock *sk)
{
	return sk_ready(sk, 0, true);
}

SEC("kprobe/nvme_tcp_data_ready")
int BPF_KPROBE(ntp_h_ready_kp, struct sock *sk)
{
	return sk_ready(sk, 0, false);
}

/* nvme_tcp_recv_skb(desc, skb, offset, len) parses [offset, offset+len) of
 * skb; the responses it completes arrived at the latest with the chunk's last
 * byte. With one command in flight that byte is the response's own. Only the
 * byte is noted here, for every chunk; its arrival time is looked up
 * (arrival_of) only when a sampled command's response or R2T is among what
 * the chunk completes (host_rx_arrival). */
/* The host's receive context of a thread, as host_recv_enter notes it:
 * the queue, and the last byte of the chunk being parsed on its socket
 * (arrival_sk 0: none). */
struct ntp_rx_ctx {
	__u64 tid;		/* rx_slot: the owner, 0: free; 64 bits: drop_atomic_fetch (src/collector/collector.c) */
	__u64 queue;		/* struct nvme_tcp_queue * */
	__u64 arrival_sk;	/* its socket, 0: no chunk */
	__u32 arrival_seq;	/* the chunk's last byte */
	__u32 pad;
};

/* Per bucket of thread ids (tid % NTP_BP_BUCKETS), the receive context of
 * the one thread that owns the bucket: an array slot the verifier inlines
 * (no helper call, no hashing, no LRU list) in place of recv_ctx's lookup
 * at each chunk's entry and at each sampled command's completion; and 32
 * bytes in one place instead of a hash bucket and an element. A thread takes
 * a free bucket at the first chunk it parses while a sampled command is in
 * flight (a compare-and-exchange of its id) and
 * keeps it: there is no exit hook to free it at, and a receive worker (a
 * queue's io_work) comes back for every chunk. A thread whose bucket
 * another thread owns, one with id 0, and every thread where the kernel has
 * no BPF atomics (has_atomic_fetch) keep their context in recv_ctx as
 * before: a thread that does not own its bucket never will, so writer and
 * reader always look in the same place. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTP_BP_BUCKETS);
	__type(key, __u32);
	__type(value, struct ntp_rx_ctx);
} rx_slot SEC(".maps");

/* Thread t's bucket of rx_slot if t owns it; take: take it when free. */
static __always_inline struct ntp_rx_ctx *rx_slot_of(__u32 t, bool take)
{
	__u32 i = t % NTP_BP_BUCKETS;
	struct ntp_rx_ctx *s;

	if (!has_atomic_fetch || !t)
		return NULL;
	s = bpf_map_lookup_elem(&rx_slot, &i);
	return s && slot_owned(&s->tid, t, take) ? s : NULL;
}

/* btf: an fentry program (desc->arg.data, the skb's control block and
 * owner: plain loads) */
static __always_inline int host_recv_enter(read_descriptor_t *desc, struct sk_buff *skb,
					   __u32 offset, __u64 len, bool btf)
{
	struct nvme_tcp_queue___ntp *q;
	struct ntp_thread_ctx c = { .side = NTP_SIDE_HOST };
	__u32 seq = 0, t;
	struct ntp_thread_ctx *e;
	struct ntp_rx_ctx *s;

	/* No sampled command in flight: this chunk completes none of them. A
	 * context this skips leaves the thread's older one, which host_rx_ctx
	 * refuses (its chunk was consumed); a sampled command's response is
	 * parsed while it is in the table, so its chunk is noted. */
	if (cmds_none(&host_cmds))
		return 0;
	q = NTP_RD(btf, desc, arg.data);
	c.queue = (__u64)q;
	t = tid();
	if (len) {
		/* TCP_SKB_CB(skb)->seq: the first field of the control block */
		if (btf) {
			seq = *(__u32 *)__builtin_preserve_access_index(&skb->cb[0]);
			/* tcp_read_sock reads the queue's socket's receive
			 * queue (nvme_tcp_try_recv), whose skbs that socket
			 * owns (skb_set_owner_r in tcp_queue_rcv and
			 * tcp_data_queue_ofo): skb->sk is queue->sock->sk, a
			 * plain load; the two reads through the queue only
			 * where it is not set */
			c.arrival_sk = (__u64)skb->sk;
		} else {
			bpf_probe_read_kernel(&seq, sizeof(seq), __builtin_preserve_access_index(&skb->cb[0]));
		}
		if (!c.arrival_sk)
			c.arrival_sk = (__u64)BPF_CORE_READ(q, sock, sk);
		c.arrival_seq = seq + offset + (__u32)len - 1;
	}
	s = rx_slot_of(t, true);
	if (s) {
		s->queue = c.queue;
		s->arrival_sk = c.arrival_sk;
		s->arrival_seq = c.arrival_seq;
		return 0;
	}
	e = bpf_map_lookup_elem(&recv_ctx, &t);
	if (e)
		*e = c;
	else
		bpf_map_update_elem(&recv_ctx, &t, &c, BPF_ANY);
	return 0;
}

SEC("fentry/nvme_tcp_recv_skb")
int BPF_PROG(ntp_h_recv_fe, read_descriptor_t *desc, struct sk_buff *skb, unsigned int offset, size_t len)
{
	return host_recv_enter(desc, skb, offset, len, true);
}

SEC("kprobe/nvme_tcp_recv_skb")
int BPF_KPROBE(ntp_h_recv_kp, read_descriptor_t *desc, struct sk_buff *skb, unsigned int offset, size_t len)
{
	return host_recv_enter(desc, skb, offset, len, false);
}


/* Response parsed: 6.1 inlines nvme_tcp_process_nvme_cqe, which ends in
 * nvme_try_complete_req() -> blk_mq_complete_request_remote(rq) (exported,
 * never inlined), before nvme_complete_rq. Called for every blk-mq driver:
 * a lookup that misses for anything but our sampled host requests. */
/* The context of the nvme_tcp_recv_skb this thread is inside, in *out; 0:
 * none (rx_slot, or recv_ctx). No exit hook clears it: the entry noted the chunk's last byte, and
 * tcp_read_sock moves the socket's copied_seq past what its actor consumed
 * only after the actor returns (5.10 to 6.12: copied_seq is written after
 * the call, at the end of the loop or of the read), so while the thread is
 * inside, copied_seq is at most the chunk's first byte; once the chunk was
 * consumed it is past its last. A context left by an earlier call (a
 * timeout or a cancel completing a request on a worker that parsed a
 * chunk before) is told by that, without a pair of hooks per chunk. */
static __always_inline int host_rx_ctx(struct ntp_rx_ctx *out)
{
	__u32 t = tid();
	struct ntp_rx_ctx *s = rx_slot_of(t, false);
	struct ntp_thread_ctx *c;

	if (s) {
		out->queue = s->queue;
		out->arrival_sk = s->arrival_sk;
		out->arrival_seq = s->arrival_seq;
	} else {
		c = bpf_map_lookup_elem(&recv_ctx, &t);
		if (!c || c->side != NTP_SIDE_HOST)
			return 0;
		out->queue = c->queue;
		out->arrival_sk = c->arrival_sk;
		out->arrival_seq = c->arrival_seq;
	}
	if (!out->queue || !out->arrival_sk)
		return 0;
	if ((__s32)(sk_copied_seq(out->arrival_sk) - out->arrival_seq) > 0)
		return 0;
	return 1;
}

/* The arrival of the chunk this thread's nvme_tcp_recv_skb is parsing
 * (host_recv_enter), 0: not inside one, or unknown. The socket's packets
 * are noted only while a host command is recorded (host_live), so its ring
 * may hold packets from long before, whose sequence numbers a wrap of 2 GiB
 * can make look recent: an arrival before the command's own submission
 * (floor) is such a one, and unknown. */
static __always_inline __u64 host_rx_arrival(__u64 now, __u64 floor)
{
	struct ntp_rx_ctx c;
	__u64 arrive;

	if (!host_rx_ctx(&c))
		return 0;
	arrive = arrival_of(c.arrival_sk, c.arrival_seq, NULL);
	return arrive <= now && arrive >= floor ? arrive : 0;
}

static __always_inline int host_cqe(struct request *rq)
{
	__u64 key = (__u64)rq, now, arrive;
	struct ntp_record *r = cmd_find(&host_cmds, key);

	/* every blk-mq driver's completions come here: one lookup, nothing else */
	if (!r || has_ts(r, NTP_TS_H_RSP_DRV))
		return 0;
	now = bpf_ktime_get_ns();
	set_ts(r, NTP_TS_H_RSP_DRV, now);
	arrive = host_rx_arrival(now, r->ts[NTP_TS_H_DRV_SUBMIT]);
	if (arrive)
		set_ts(r, NTP_TS_H_RSP_ARRIVE, arrive);
	return 0;
}

SEC("fentry/blk_mq_complete_request_remote")
int BPF_PROG(ntp_h_cqe_fe, struct request *rq)
{
	return host_cqe(rq);
}

SEC("kprobe/blk_mq_complete_request_remote")
int BPF_KPROBE(ntp_h_cqe_kp, struct request *rq)
{
	return host_cqe(rq);
}

/* R2T handled: nvme_tcp_handle_r2t (inlined into the receive path) calls
 * nvme_tcp_setup_h2c_data_pdu(req) for the first H2C data PDU; the send path
 * calls it again for follow-on PDUs, which the has_ts check ignores. */
static __always_inline int host_r2t(__u64 key)
{
	struct ntp_record *r = cmd_find(&host_cmds, key);
	__u64 now, arrive;

	if (!r || has_ts(r, NTP_TS_H_R2T_DRV))
		return 0;
	now = bpf_ktime_get_ns();
	set_ts(r, NTP_TS_H_R2T_DRV, now);
	arrive = host_rx_arrival(now, r->ts[NTP_TS_H_DRV_SUBMIT]);
	if (arrive)
		set_ts(r, NTP_TS_H_R2T_ARRIVE, arrive);
	return 0;
}

SEC("fentry/nvme_tcp_setup_h2c_data_pdu")
int BPF_PROG(ntp_h_r2t_fe, void *req)
{
	return host_r2t(rq_of_tcp_req(req));
}

SEC("kprobe/nvme_tcp_setup_h2c_data_pdu")
int BPF_KPROBE(ntp_h_r2t_kp, void *req)
{
	return host_r2t(rq_of_tcp_req(req));
}

/* Where nvme_tcp_setup_h2c_data_pdu is inlined (5.10), so is its caller
 * nvme_tcp_handle_r2t, and its caller nvme_tcp_recv_pdu: all of the R2T
 * handling sits inside nvme_tcp_recv_skb, which parses many PDUs per call.
 * The first out-of-line call nvme_tcp_handle_r2t makes is the exported
 * blk_mq_tag_to_rq(tagset->tags[qid - 1], pdu->command_id), the lookup of the
 * request the R2T is for. It is hooked instead, used only when
 * nvme_tcp_setup_h2c_data_pdu is absent (src/collector/hooks.c). Every blk-mq
 * driver calls it, and nvme_tcp itself for C2H data and responses: it is an
 * R2T's lookup only inside nvme_tcp_recv_skb (this thread's receive
 * context: rx_slot, or recv_ctx) while
 * the queue's received PDU header (queue->pdu) is an R2T. The request is
 * read as the kernel returns it, tags->rqs[tag], at entry: no map filled at
 * send time, no chase through ctrl and tag set, and no command-id layout
 * (the generation bits later kernels add) to know. */
static __always_inline int host_r2t_lookup(struct blk_mq_tags___ntp *tags, __u32 tag)
{
	struct nvme_tcp_queue___ntp *q;
	struct ntp_rx_ctx c;
	struct request *rq = NULL, **rqs;
	__u8 type = 0;
	void *pdu;

	/* an R2T of an unsampled command: nothing to look up */
	if (cmds_none(&host_cmds))
		return 0;
	if (!host_rx_ctx(&c))
		return 0;
	q = (void *)c.queue;
	pdu = BPF_CORE_READ(q, pdu);
	if (!pdu || bpf_probe_read_kernel(&type, sizeof(type), pdu) || type != NTP_NVME_TCP_R2T)
		return 0;
	if (tag >= BPF_CORE_READ(tags, nr_tags))
		return 0;
	rqs = BPF_CORE_READ(tags, rqs);
	if (!rqs || bpf_probe_read_kernel(&rq, sizeof(rq), rqs + tag))
		return 0;
	return rq ? host_r2t((__u64)rq) : 0;
}

SEC("fentry/blk_mq_tag_to_rq")
int BPF_PROG(ntp_h_r2tq_fe, void *tags, unsigned int tag)
{
	return host_r2t_lookup(tags, tag);
}

SEC("kprobe/blk_mq_tag_to_rq")
int BPF_KPROBE(ntp_h_r2tq_kp, void *tags, unsigned int tag)
{
	return host_r2t_lookup(tags, tag);
}

/* =============================== target =============================== */

static __always_inline __u64 target_queue_of_work(void *work)
{
	return (__u64)work - bpf_core_field_offset(struct nvmet_tcp_queue___ntp, io_work);
}

SEC("fentry/nvmet_tcp_io_work")
int BPF_PROG(ntp_t_work_fe, struct work_struct *w)
{
	return ctx_enter(&send_ctx, target_queue_of_work(w), NTP_SIDE_TARGET);
}

SEC("fexit/nvmet_tcp_io_work")
int BPF_PROG(ntp_t_work_fx, struct work_struct *w)
{
	return ctx_leave(&send_ctx);
}

SEC("kprobe/nvmet_tcp_io_work")
int BPF_KPROBE(ntp_t_work_kp, struct work_struct *w)
{
	return ctx_enter(&send_ctx, target_queue_of_work(w), NTP_SIDE_TARGET);
}

SEC("kretprobe/nvmet_tcp_io_work")
int BPF_KRETPROBE(ntp_t_work_kr)
{
	return ctx_leave(&send_ctx);
}

SEC("fentry/nvmet_tcp_data_ready")
int BPF_PROG(ntp_t_ready_fe, struct sock *sk)
{
	return sk_ready(sk, 1, true);
}

SEC("kprobe/nvmet_tcp_data_ready")
int BPF_KPROBE(ntp_t_ready_kp, struct sock *sk)
{
	return sk_ready(sk, 1, false);
}

static __always_inline struct ntp_thread_ctx *target_ctx(void)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c = bpf_map_lookup_elem(&send_ctx, &t);

	return c && c->queue && c->side == NTP_SIDE_TARGET ? c : NULL;
}

/* nvmet-rdma: inside nvmet_rdma_recv_done (ntprof_rdma.bpf.c), polling
 * the CQ in bp_key, whose state gives a tracked command's arrival
 * (rdma_target_arrival, ntprof_rdma_cq.bpf.h): */
static __always_inline struct ntp_thread_ctx *target_rdma_ctx(void)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c = bpf_map_lookup_elem(&recv_ctx, &t);

	return c && c->queue && c->side == NTP_SIDE_TARGET ? c : NULL;
}

/* The target's hooks find a command's queue from the command itself, without
 * nvmet_tcp_io_work's per-thread context (tgt_sk_ready known: fentry flavour,
 * NVMe/TCP). */
static __always_inline bool tgt_direct(void)
{
	return ntp_transport == NTP_TRANSPORT_TCP && tgt_sk_ready;
}

/* The nvmet_tcp_queue of req, 0: req is not an nvmet-tcp command. An
 * nvmet-tcp request's sq is its queue's nvme_sq, so the queue is the sq's
 * container. Typed (btf), whether req is nvmet-tcp's is its transport's
 * type (req->ops, set by nvmet_req_init before its tracepoint): two plain
 * loads. Otherwise, and on a kernel without the field, the nvmet_req of
 * nvmet-tcp sits in a struct nvmet_tcp_cmd after its queue pointer: the
 * read through that container (a probe read: a typed load cannot reach
 * before req) is taken only when it points back at req's own sq (another
 * transport's request, nvmet-rdma's inside its rsp, fails the test). */
static __always_inline __u64 target_tcp_queue_of(struct nvmet_req___ntp *req, bool btf)
{
	struct nvmet_tcp_cmd___ntp *cmd;
	__u64 q, sq = (__u64)NTP_RD(btf, req, sq);

	if (!sq)
		return 0;
	if (btf && bpf_core_field_exists(req->ops) &&
	    bpf_core_field_exists(((struct nvmet_fabrics_ops___ntp *)0)->type)) {
		const struct nvmet_fabrics_ops___ntp *ops = req->ops;

		if (!ops || ops->type != NTP_NVMF_TRTYPE_TCP)
			return 0;
		return sq - bpf_core_field_offset(struct nvmet_tcp_queue___ntp, nvme_sq);
	}
	cmd = (void *)req - bpf_core_field_offset(struct nvmet_tcp_cmd___ntp, req);
	q = (__u64)BPF_CORE_READ(cmd, queue);
	if (!q || q + bpf_core_field_offset(struct nvmet_tcp_queue___ntp, nvme_sq) != sq)
		return 0;
	return q;
}

/* The thread's context in map, made on first use (a queue worker's). */
static __always_inline struct ntp_thread_ctx *thread_ctx(void *map, __u32 t)
{
	struct ntp_thread_ctx zero = { .side = NTP_SIDE_TARGET }, *c = bpf_map_lookup_elem(map, &t);

	if (c)
		return c;
	bpf_map_update_elem(map, &t, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &t);
}

/* A difference of two blocked-time readings, within [0, span]. */
static __always_inline __u64 bp_clamp(__u64 d, __u64 span)
{
	if ((__s64)d < 0)
		return 0;
	return d < span ? d : span;
}

/* nvmet_req_init fires in nvmet_tcp_done_recv_pdu (inlined into
 * nvmet_tcp_try_recv_pdu, inside io_work) once the command PDU's header is
 * read: the socket's copied_seq is just past the capsule. */
/* btf: a tp_btf program (NTP_RD) */
static __always_inline int target_req_init(struct nvmet_req___ntp *req, struct nvme_command___ntp *cmd, bool btf)
{
	int rdma = ntp_transport == NTP_TRANSPORT_RDMA;
	struct ntp_thread_ctx *c = NULL;
	__u64 key = (__u64)req, now, arrive, bp_arrive = 0, bp_key, tq = 0;
	struct nvmet_sq___ntp *sq;
	struct ntp_record *r;
	__u16 cid, nlb, qid;
	__u64 slba;
	__u8 opcode;
	int picked;

	/* whatever happens next, a stale record on this request must not
	 * absorb it (another transport's request never has one) */
	close_missed(&target_cmds, key, NTP_STAT_MISSED_TARGET);
	opcode = NTP_RD(btf, cmd, common.opcode);
	sq = NTP_RD(btf, req, sq);
	if (!sq)
		return 0;
	qid = NTP_RD(btf, sq, qid);
	if (!io_wanted(io_of(opcode)) || !qid)
		return 0;
	cid = NTP_RD(btf, cmd, common.command_id);
	slba = cmd_slba(cmd, btf);
	nlb = NTP_RD(btf, cmd, rw.length);
	picked = ntp_sample_pick(cid, slba, nlb, sampling_n);
	if (!picked && !exact_queues)
		return 0;
	/* Not the transport's receive path (nvmet-tcp's io_work, nvmet-rdma's
	 * recv_done), or (tgt_direct) not an nvmet-tcp command, which
	 * nvmet_tcp parses only in io_work. Asked after the pick: the answer
	 * costs loads through the request (target_tcp_queue_of: a probe read
	 * in the kprobe flavour) or a hash lookup (the thread's context), and
	 * an unsampled command needs none of it. */
	if (tgt_direct()) {
		tq = target_tcp_queue_of(req, btf);
		if (!tq)
			return 0;
	} else {
		c = rdma ? target_rdma_ctx() : target_ctx();
		if (!c)
			return 0;
	}
	r = cmd_claim(&target_cmds, key);
	if (!r) {
		stat_inc(NTP_STAT_TABLE_FULL);
		return 0;
	}
	now = bpf_ktime_get_ns();
	r->side = NTP_SIDE_TARGET;
	r->transport = ntp_transport;
	r->impl = NTP_IMPL_LINUX;
	r->cid = cid;
	r->slba = slba;
	r->nlb = nlb;
	r->opcode = opcode;
	r->nsid = NTP_RD(btf, cmd, common.nsid);
	r->qid = qid;
	r->cntlid = NTP_RD2(btf, sq, ctrl, cntlid);
	if (sampling_n <= 1)
		r->flags |= NTP_REC_F_SAMPLED_EXACT;
	if (picked)
		r->seq = next_seq(&seq_target);
	else
		r->flags |= NTP_REC_F_UNSAMPLED;	/* --exact-queues only */
	set_ts(r, NTP_TS_T_CMD_RECV, now);
	if (rdma && c) {
		bp_key = c->bp_key;
		arrive = rdma_target_arrival(bp_key, now, &bp_arrive);
	} else {
		/* the blocked time and the arrivals are kept per queue, the
		 * entry of the latter with the queue's socket (arrival_note) */
		struct ntp_arrivals *a;

		bp_key = tq ? tq : c ? c->queue : 0;
		a = arrivals_of(bp_key);
		arrive = a ? arrival_in(a, sk_copied_seq(a->sk) - 1, &bp_arrive) : 0;
	}
	if (arrive && arrive <= now) {
		set_ts(r, NTP_TS_T_CMD_ARRIVE, arrive);
		/* docs/backpressure.md: the part of arrival -> now that the
		 * queue's worker spent in a storage submission (a duration) */
		set_ts(r, NTP_TS_T_BP_RECV, bp_clamp(ntp_bp_read(bp_key, now) - bp_arrive, now - arrive));
	}
	return 0;
}

SEC("tp_btf/nvmet_req_init")
int BPF_PROG(ntp_t_init_tb, struct nvmet_req___ntp *req, struct nvme_command___ntp *cmd)
{
	if (!req || !cmd)
		return 0;
	return target_req_init(req, cmd, true);
}

SEC("raw_tp/nvmet_req_init")
int BPF_PROG(ntp_t_init_rt, struct nvmet_req___ntp *req, struct nvme_command___ntp *cmd)
{
	return target_req_init(req, cmd, false);
}

/* Submission to the backing block device (req->execute for a bdev
 * namespace). After an R2T, it runs when the last data byte was read: the
 * data's first byte sits transfer_len bytes before copied_seq, its last
 * byte just before it (target_exec). */
/* The context of the queue's worker this thread is (docs/backpressure.md):
 * nvmet-tcp's io_work or nvmet-rdma's CQ poll; NULL when the submission runs
 * elsewhere (an RDMA write's after its READ, the admin queue's). */
static __always_inline struct ntp_thread_ctx *worker_ctx(void)
{
	return ntp_transport == NTP_TRANSPORT_RDMA ? target_rdma_ctx() : target_ctx();
}

/* Every command's submission counts, sampled or not: the thread's bucket of
 * bp_thr, or else its context, notes the queue in place, so sched_switch
 * tells a worker inside a submission without a map update and delete per
 * command. */
/* btf: an fentry program (NTP_RD) */
static __always_inline int target_exec(struct nvmet_req___ntp *req, bool btf)
{
	__u64 key = (__u64)req, now, arrive, last, tq = 0, bpk;
	struct ntp_arrivals *a;
	struct ntp_thread_ctx *c;
	struct ntp_record *r;
	__u32 t = tid(), seq;

	/* no mark before the exit hook is attached too (bp_armed, set by
	 * user space): the record's timestamps below are stamped all the same */
	if (tgt_direct()) {
		/* every nvmet-tcp submission runs in its queue's io_work
		 * (nvmet_tcp_done_recv_pdu, nvmet_tcp_execute_request); its
		 * bucket of bp_thr, when free, spares the context's lookup */
		tq = target_tcp_queue_of(req, btf);
		bpk = tq;
		c = bp_armed && tq && !bp_thr_enter(t, tq) ? thread_ctx(&send_ctx, t) : NULL;
	} else {
		c = worker_ctx();
		if (c && ntp_transport == NTP_TRANSPORT_TCP)
			tq = c->queue;
		/* the key of bp_queues: the TCP queue, or the RDMA CQ; with
		 * none known the submission's blocked time is not counted */
		bpk = c ? (ntp_transport == NTP_TRANSPORT_RDMA ? c->bp_key : tq) : 0;
		if (!bp_armed || !bpk || bp_thr_enter(t, bpk))
			c = NULL;
	}
	if (bp_armed && bpk)
		ntp_bp_begin(bpk);
	if (c) {
		if (!c->bp_sub)
			bp_busy_add(t, 1);
		c->bp_sub = bpk;
		c->bp_slept = 0;
	}
	r = cmd_find(&target_cmds, key);
	if (!r)
		return 0;
	now = bpf_ktime_get_ns();
	set_ts_once(r, NTP_TS_T_STORAGE_SUBMIT, now);
	if (!has_ts(r, NTP_TS_T_R2T_SENT))
		return 0;
	/* RDMA stamps its READ's completion itself (ntprof_rdma.bpf.c) */
	if (ntp_transport != NTP_TRANSPORT_TCP) {
		set_ts_once(r, NTP_TS_T_DATA_RECV, now);
		return 0;
	}
	if (!tq)
		return 0;
	a = arrivals_of(tq);
	if (!a)
		return 0;
	/* docs/hooks.md: nvmet-tcp executes a write right after reading its
	 * last data byte (nvmet_tcp_try_recv_data, or its data digest:
	 * nvmet_tcp_try_recv_ddgst), so copied_seq is just past the data.
	 * DATA_ARRIVE: the arrival of the data's first byte (transfer_len
	 * bytes back); DATA_RECV: that of its last byte, when all the data
	 * had reached the target's stack. Not now: the driver's reading of
	 * the data and its wake-up for the last packet lie between the two,
	 * and are the target driver's data component. */
	seq = sk_copied_seq(a->sk);
	arrive = arrival_in(a, seq - (__u32)BPF_CORE_READ(req, transfer_len), NULL);
	if (!arrive || arrive > now)
		return 0;
	set_ts_once(r, NTP_TS_T_DATA_ARRIVE, arrive);
	last = arrival_in(a, seq - 1, NULL);
	if (last >= arrive && last <= now)
		set_ts_once(r, NTP_TS_T_DATA_RECV, last);
	return 0;
}

SEC("fentry/nvmet_bdev_execute_rw")
int BPF_PROG(ntp_t_exec_fe, struct nvmet_req___ntp *req)
{
	return target_exec(req, true);
}

SEC("kprobe/nvmet_bdev_execute_rw")
int BPF_KPROBE(ntp_t_exec_kp, struct nvmet_req___ntp *req)
{
	return target_exec(req, false);
}

/* The thread's context in the transport's map, whatever its queue (the
 * submission's hooks and sched_switch, which sees other threads too). */
static __always_inline struct ntp_thread_ctx *worker_ctx_of(__u32 t)
{
	return bpf_map_lookup_elem(ntp_transport == NTP_TRANSPORT_RDMA ? (void *)&recv_ctx : (void *)&send_ctx, &t);
}

/* The submission returned: the bio is in the block layer; a blocked span
 * (below) ends here. */
static __always_inline int target_exec_exit(void)
{
	__u32 t = tid();
	struct ntp_bp_thr *b = bp_thr_of(t);
	struct ntp_thread_ctx *c;

	if (b) {
		if (b->slept)
			ntp_bp_exit(b->queue, bpf_ktime_get_ns());
		bp_thr_free(b);
		return 0;
	}
	c = worker_ctx_of(t);
	if (!c || !c->bp_sub)
		return 0;
	if (c->bp_slept)
		ntp_bp_exit(c->bp_sub, bpf_ktime_get_ns());
	bp_busy_add(t, -1);
	c->bp_sub = 0;
	c->bp_slept = 0;
	return 0;
}

/* The scheduler's view: a worker inside a submission that gives up its CPU
 * of its own accord (preempt false: it called schedule(), as io_schedule()
 * in blk_mq_get_tag does while the drive has no free tag) is blocked on the
 * drive from then until the submission returns: its sleep, its wait for a
 * CPU once a tag is free, the rest of the submission. A submission that
 * never sleeps is not blocked, however long preemption, interrupts or
 * softirqs borrow its CPU. Every switch of the machine comes here: a thread
 * whose bucket of bp_busy is 0 is no worker in a submission, and costs a
 * load and a compare; only the others look their context up. */
static __always_inline int bp_switch(bool preempt, struct task_struct *prev, bool btf)
{
	struct ntp_thread_ctx *c;
	struct ntp_bp_thr *b;
	__u32 pid;

	if (preempt)
		return 0;
	pid = NTP_RD(btf, prev, pid);
	b = bp_thr_of(pid);
	if (b) {
		if (!b->slept) {
			ntp_bp_enter(b->queue, bpf_ktime_get_ns());
			b->slept = 1;
		}
		return 0;
	}
	/* the common case: no thread of prev's bucket is in a submission */
	if (!bp_busy_maybe(pid))
		return 0;
	c = worker_ctx_of(pid);
	/* a second sleep of the same submission: already blocked */
	if (!c || !c->bp_sub || c->bp_slept)
		return 0;
	ntp_bp_enter(c->bp_sub, bpf_ktime_get_ns());
	c->bp_slept = 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ntp_t_sched_tb, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (!prev)
		return 0;
	return bp_switch(preempt, prev, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(ntp_t_sched_rt, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return bp_switch(preempt, prev, false);
}

SEC("fexit/nvmet_bdev_execute_rw")
int BPF_PROG(ntp_t_exec_fx, struct nvmet_req___ntp *req)
{
	return target_exec_exit();
}

SEC("kretprobe/nvmet_bdev_execute_rw")
int BPF_KRETPROBE(ntp_t_exec_kr)
{
	return target_exec_exit();
}

/* The target's group key, cached per CPU (docs/hooks.md, "The target's
 * device name"): the namespace and the generation of namespace changes it
 * was read under. A namespace's device_path changes only while it is
 * disabled, and a namespace is freed only after nvmet_ns_free disables it:
 * every change passes nvmet_ns_disable, whose entry bumps ns_gen
 * (ntp_t_nsoff). tdev_cache_ok: user space sets it once that hook is
 * attached (src/collector/collector.c); until then, or without the hook,
 * every command reads its path. */
volatile __u32 tdev_cache_ok;
volatile __u64 ns_gen;

static __always_inline int ns_disable(void)
{
	__sync_fetch_and_add(&ns_gen, 1);
	return 0;
}

SEC("fentry/nvmet_ns_disable")
int BPF_PROG(ntp_t_nsoff_fe, void *ns)
{
	return ns_disable();
}

SEC("kprobe/nvmet_ns_disable")
int BPF_KPROBE(ntp_t_nsoff_kp, void *ns)
{
	return ns_disable();
}

/* "/dev/nullb0" -> "nullb0", as a NUL-terminated name of at most
 * NTP_DEV_LEN - 1 characters. One read of the path when the cache above
 * (cs's target_dev, this CPU's state: cpu_state_of) misses,
 * then a copy from the stack: constant offsets only, which the verifier
 * takes without a loop. */
static __always_inline void target_dev(struct nvmet_req___ntp *req, char *out, bool btf,
				       struct ntp_cpu_state *cs)
{
	char path[NTP_DEV_LEN + 5] = {};
	struct nvmet_ns___ntp *ns = NTP_RD(btf, req, ns);
	struct ntp_tdev_cache *c = NULL;
	const char *p;
	__u64 gen = 0;

	if (!ns)
		return;
	if (tdev_cache_ok) {
		/* the generation first: a disable after it makes this fill stale */
		gen = ns_gen;
		c = &cs->target_dev;
		if (c && !c->busy && c->ns == (__u64)ns && c->gen == gen) {
			__builtin_memcpy(out, c->name, NTP_DEV_LEN);
			return;
		}
		if (c && c->busy)
			c = NULL;
		if (c) {
			c->busy = 1;
			asm volatile("" ::: "memory");
		}
	}
	p = NTP_RD(btf, ns, device_path);
	if (p) {
		bpf_probe_read_kernel_str(path, sizeof(path), p);
		if (path[0] == '/' && path[1] == 'd' && path[2] == 'e' && path[3] == 'v' && path[4] == '/')
			__builtin_memcpy(out, path + 5, NTP_DEV_LEN);
		else
			__builtin_memcpy(out, path, NTP_DEV_LEN);
		out[NTP_DEV_LEN - 1] = 0;
	}
	if (c) {
		__builtin_memcpy(c->name, out, NTP_DEV_LEN);
		c->ns = (__u64)ns;
		c->gen = gen;
		asm volatile("" ::: "memory");
		c->busy = 0;
	}
}

/* Storage done (__nvmet_req_complete, before ->queue_response). Every
 * command is counted here, where its namespace and length are known. */
/* btf: a tp_btf program (NTP_RD) */
static __always_inline int target_req_complete(struct nvmet_req___ntp *req, bool btf)
{
	__u64 key = (__u64)req, now;
	__u64 devw[NTP_DEV_LEN / 8] = {};	/* 8-byte aligned for tdev_wanted() */
	char *dev = (char *)devw;
	struct ntp_cpu_state *cs;
	struct ntp_record *r;
	__u32 len;
	int io;

	io = io_of(NTP_RD2(btf, req, cmd, common.opcode));
	r = cmd_find(&target_cmds, key);
	if (!io_wanted(io) || !NTP_RD2(btf, req, sq, qid))
		return 0;
	len = NTP_RD(btf, req, transfer_len);
	if (!size_wanted(len)) {
		if (r)
			cmd_del(&target_cmds, key);
		return 0;
	}
	cs = cpu_state_of();	/* never missing: as in host_setup_cmd */
	if (!cs)
		return 0;
	target_dev(req, dev, btf, cs);
	/* another namespace than the session's: neither counted nor recorded */
	if (!tdev_wanted(dev)) {
		if (r)
			cmd_del(&target_cmds, key);
		return 0;
	}
	count_group(NTP_SIDE_TARGET, io, len, dev, cs);
	if (!r)
		return 0;
	now = bpf_ktime_get_ns();
	set_ts_once(r, NTP_TS_T_STORAGE_DONE, now);
	/* NVMe/TCP: the response waits for the queue's worker, which may be
	 * blocked in another command's submission; keep the blocked-time
	 * reading (slot not valid yet, target_sock_send takes the difference).
	 * nvmet-rdma posts the response from here: no such wait. The queue is
	 * known only inside nvmet_tcp loaded (CO-RE reads of its types). */
	/* Before any worker ever slept in a submission (bp_ever) every
	 * reading is 0: no read of the command's queue. */
	if (ntp_transport == NTP_TRANSPORT_TCP && bp_ever) {
		struct nvmet_tcp_cmd___ntp *cmd = (void *)req - bpf_core_field_offset(struct nvmet_tcp_cmd___ntp, req);

		r->ts[NTP_TS_T_BP_RSP] = ntp_bp_read((__u64)BPF_CORE_READ(cmd, queue), now);
	}
	r->len = len;
	__builtin_memcpy(r->dev, dev, NTP_DEV_LEN);
	return 0;
}

SEC("tp_btf/nvmet_req_complete")
int BPF_PROG(ntp_t_done_tb, struct nvmet_req___ntp *req)
{
	if (!req)
		return 0;
	return target_req_complete(req, true);
}

SEC("raw_tp/nvmet_req_complete")
int BPF_PROG(ntp_t_done_rt, struct nvmet_req___ntp *req)
{
	return target_req_complete(req, false);
}

/* ->queue_response also queues the R2T of a write before storage: only the
 * call after STORAGE_DONE is the response. */
static __always_inline int target_queue_response(struct nvmet_req___ntp *req)
{
	__u64 key = (__u64)req;
	struct ntp_record *r = cmd_find(&target_cmds, key);

	if (r && has_ts(r, NTP_TS_T_STORAGE_DONE))
		set_ts_once(r, NTP_TS_T_RSP_QUEUED, bpf_ktime_get_ns());
	return 0;
}

SEC("fentry/nvmet_tcp_queue_response")
int BPF_PROG(ntp_t_qresp_fe, struct nvmet_req___ntp *req)
{
	return target_queue_response(req);
}

SEC("kprobe/nvmet_tcp_queue_response")
int BPF_KPROBE(ntp_t_qresp_kp, struct nvmet_req___ntp *req)
{
	return target_queue_response(req);
}

/* A socket send inside the target's io_work: queue->snd_cmd is the command
 * being sent, cmd->state the PDU. The response's send is where the command
 * leaves the target: the record goes out. */
/* The key of the command the target queue is sending (queue->snd_cmd: its
 * nvmet_req, inside the nvmet_tcp_cmd), 0: none; its nvmet_tcp_cmd in *cmdp. */
static __always_inline __u64 target_send_key(__u64 queue, struct nvmet_tcp_cmd___ntp **cmdp)
{
	struct nvmet_tcp_queue___ntp *q = (void *)queue;
	struct nvmet_tcp_cmd___ntp *cmd = BPF_CORE_READ(q, snd_cmd);

	*cmdp = cmd;
	return cmd ? (__u64)cmd + bpf_core_field_offset(struct nvmet_tcp_cmd___ntp, req) : 0;
}

/* The record of the command the target queue is sending (NULL: none, or not
 * sampled), its key in *keyp, and in *slot what this send stamps from the
 * PDU the command is at (cmd->state): R2T_SENT, RSP_SENT; -1: none. */
static __always_inline struct ntp_record *target_send_at(__u64 queue, int *slot, __u64 *keyp)
{
	struct nvmet_tcp_cmd___ntp *cmd;
	struct ntp_record *r;
	__u64 key;
	int state;

	*slot = -1;
	*keyp = 0;
	/* none tracked: no read of the queue's snd_cmd (host_send_at) */
	if (cmds_none(&target_cmds))
		return NULL;
	key = target_send_key(queue, &cmd);
	*keyp = key;
	r = key ? cmd_find(&target_cmds, key) : NULL;
	if (!r)
		return NULL;
	state = BPF_CORE_READ(cmd, state);
	if (state == NTP_NVMET_TCP_SEND_R2T)
		*slot = NTP_TS_T_R2T_SENT;
	else if (state == NTP_NVMET_TCP_SEND_RESPONSE)
		*slot = NTP_TS_T_RSP_SENT;
	return r;
}

/* The response went out at `at`: the queue's blocked time since STORAGE_DONE,
 * and the record leaves the target. */
static __always_inline void target_rsp_sent(__u64 queue, __u64 key, struct ntp_record *r, __u64 at)
{
	set_ts(r, NTP_TS_T_RSP_SENT, at);
	if (has_ts(r, NTP_TS_T_STORAGE_DONE) && r->ts[NTP_TS_T_STORAGE_DONE] <= at)
		set_ts(r, NTP_TS_T_BP_RSP,
		       bp_clamp(ntp_bp_read(queue, at) - r->ts[NTP_TS_T_BP_RSP],
				at - r->ts[NTP_TS_T_STORAGE_DONE]));
	leave_side(&target_cmds, key, r);
}

static __always_inline void target_sock_send(__u64 queue, __u64 now)
{
	struct ntp_record *r;
	__u64 key;
	int slot;

	r = target_send_at(queue, &slot, &key);
	if (!r)
		return;
	if (slot == NTP_TS_T_R2T_SENT)
		set_ts_once(r, NTP_TS_T_R2T_SENT, now);
	else if (slot == NTP_TS_T_RSP_SENT)
		target_rsp_sent(queue, key, r, now);
}

/*
 * A socket send's entry and exit without the per-thread context, host or
 * target (map: &host_cmds or &target_cmds, a constant in every inlined
 * caller; the compiler folds the choice, as in cmds_live). The entry writes
 * its time into the PDU's slot, not yet valid (send_slot_pending: the clock
 * is read only for a sampled command; a retry after -EAGAIN overwrites it,
 * the retry is the send); the exit makes it valid when the call accepted
 * bytes, else clears it (send_slot_settle). The PDU cannot change during the
 * call: nvme-tcp moves on (queue->request = NULL) and nvmet-tcp too
 * (snd_cmd = NULL, the command put) only after the socket send returns. The
 * exit takes the PDU the entry found from send_stash and reads it again
 * only when the entry left none.
 */

/* The record of the sampled command whose PDU queue is sending (NULL:
 * none), its key in *keyp and in *slot the timestamp this send stamps. */
static __always_inline struct ntp_record *send_at(void *map, __u64 queue, int *slot, __u64 *keyp)
{
	if (map == (void *)&host_cmds)
		return host_send_at(queue, slot, keyp);
	return target_send_at(queue, slot, keyp);
}

/* slot is one that a socket send of map's side stamps */
static __always_inline bool send_stamps(void *map, int slot)
{
	if (map == (void *)&host_cmds)
		return slot == NTP_TS_H_CMD_SENT || slot == NTP_TS_H_DATA_SENT;
	return slot == NTP_TS_T_R2T_SENT || slot == NTP_TS_T_RSP_SENT;
}

/* The entry. stash: the exit takes the entry's finding (send_done); the
 * host's per-thread-context mode's exit (host_sock_send) reads the PDU again
 * and never takes it, so there the entry keeps none (a slot it claimed
 * would stay claimed). */
static __always_inline void send_pending(void *map, __u64 queue, bool stash)
{
	struct ntp_record *r;
	__u64 key;
	int slot;

	if (cmds_none(map))
		return;
	r = send_at(map, queue, &slot, &key);
	if (!r || !send_stamps(map, slot)) {
		if (stash)
			send_stash_put(queue, 0, -1);
		return;
	}
	send_slot_pending(r, slot);
	if (stash)
		send_stash_put(queue, key, slot);
}

/* The exit. A slot without a time is a newer command's on the same request
 * (the old one completed during the call, send_settle): not stamped, as a
 * host's send older than its command's submission is never its own. The
 * target's response made valid: the record leaves. */
static __always_inline void send_done(void *map, __u64 queue, long ret)
{
	bool host = map == (void *)&host_cmds;
	struct ntp_record *r;
	__u64 key;
	int slot;

	/* nothing sampled in flight: no hash, no lookup (send_at stops at the
	 * same count) */
	if (cmds_none(map))
		return;
	if (send_stash_take(queue, &key, &slot))
		r = key ? cmd_find(map, key) : NULL;
	else
		r = send_at(map, queue, &slot, &key);
	if (!r || !send_stamps(map, slot))
		return;
	if (send_slot_settle(r, slot, ret, host ? r->ts[NTP_TS_H_DRV_SUBMIT] : 0) && !host &&
	    slot == NTP_TS_T_RSP_SENT)
		target_rsp_sent(queue, key, r, r->ts[NTP_TS_T_RSP_SENT]);
}

/* =============================== sockets ============================== */

/*
 * A socket send inside nvme_tcp_try_send (host) or nvmet_tcp_io_work
 * (target). The entry remembers its time; the exit, when the call accepted
 * bytes (ret > 0), stamps that entry time on the PDU's slot. A call that
 * returned -EAGAIN (send buffer full) put nothing on the wire: its retry is
 * the send. The PDU is still the one being sent at the exit: the drivers move
 * on (queue->request = NULL, queue->snd_cmd = NULL) only after it returns.
 */
static __always_inline int sock_send_enter(__u64 ud)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c = bpf_map_lookup_elem(&send_ctx, &t);

	/* the socket must be the remembered queue's: a send on another socket
	 * from inside io_work is not the PDU's */
	if (!c || !c->queue || (ud && ud != c->queue))
		return 0;
	/* nothing of that side in flight: an exit without a time does nothing */
	if (c->side == NTP_SIDE_TARGET ? cmds_none(&target_cmds) : cmds_none(&host_cmds)) {
		c->send_ns = 0;
		return 0;
	}
	/* the target: the clock only for a sampled command's PDU */
	if (c->side == NTP_SIDE_TARGET) {
		struct nvmet_tcp_cmd___ntp *cmd;
		__u64 key = target_send_key(c->queue, &cmd);

		c->send_ns = key && cmd_find(&target_cmds, key) ? bpf_ktime_get_ns() : 0;
		return 0;
	}
	c->send_ns = bpf_ktime_get_ns();
	send_pending(&host_cmds, c->queue, false);
	return 0;
}

static __always_inline int sock_send_exit(long ret)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c = bpf_map_lookup_elem(&send_ctx, &t);

	if (!c || !c->queue || !c->send_ns)
		return 0;
	if (ret <= 0) {
		c->send_ns = 0;
		return 0;
	}
	if (c->side == NTP_SIDE_HOST)
		host_sock_send(c->queue, c->send_ns);
	else
		target_sock_send(c->queue, c->send_ns);
	c->send_ns = 0;
	return 0;
}

/*
 * Every socket send of the machine runs these hooks, NVMe or not. Both
 * drivers keep their queue in their socket's sk_user_data (nvme-tcp's
 * nvme_tcp_alloc_queue, nvmet-tcp's nvmet_tcp_set_queue_sock); an ordinary
 * application socket has none. The fentry/fexit flavour reads that field
 * (a plain load through the BTF pointer) before anything else: a socket
 * without it costs no map lookup (the low bits of sk_user_data are masked
 * off: NTP_SK_USER_DATA_PTRMASK). The kprobe flavour reads it too (a probe
 * read, still cheaper than a lookup); its kretprobe has no arguments and
 * asks send_busy (sock_stash).
 */
static __always_inline __u64 sk_queue(struct sock *sk)
{
	return sk ? (__u64)sk->sk_user_data & NTP_SK_USER_DATA_PTRMASK : 0;
}

/* A host queue's socket (fentry flavour, host_sk_ready known): its callback
 * is the host driver's. Then entry and exit find the request from the queue
 * in sk_user_data, without a per-thread context (the host sends only from
 * nvme_tcp_try_send, which sets queue->request before its socket sends and
 * clears it after). Any other socket with sk_user_data is taken to be a
 * target's, inside nvmet_tcp_io_work (its per-thread context). */
static __always_inline bool host_sock(struct sock *sk)
{
	return host_sk_ready && (__u64)sk->sk_data_ready == host_sk_ready;
}

/* A target queue's socket (tgt_direct): its callback is nvmet_tcp_data_ready. */
static __always_inline bool tgt_sock(struct sock *sk)
{
	return tgt_direct() && (__u64)sk->sk_data_ready == tgt_sk_ready;
}

/* With both callbacks' addresses known, a socket with sk_user_data that is
 * neither driver's (another kernel user of the field) costs nothing more. */
static __always_inline bool sock_needs_ctx(void)
{
	return !host_sk_ready || !tgt_direct();
}

static __always_inline int sock_enter_fe(struct sock *sk)
{
	__u64 q = sk_queue(sk);

	if (!q)
		return 0;
	if (host_sock(sk)) {
		send_pending(&host_cmds, q, true);
		return 0;
	}
	if (tgt_sock(sk)) {
		send_pending(&target_cmds, q, true);
		return 0;
	}
	return sock_needs_ctx() ? sock_send_enter(q) : 0;
}

static __always_inline int sock_exit_fe(struct sock *sk, long ret)
{
	__u64 q = sk_queue(sk);

	if (!q)
		return 0;
	if (host_sock(sk)) {
		send_done(&host_cmds, q, ret);
		return 0;
	}
	if (tgt_sock(sk)) {
		send_done(&target_cmds, q, ret);
		return 0;
	}
	return sock_needs_ctx() ? sock_send_exit(ret) : 0;
}

/*
 * The kprobe flavour with the drivers' callbacks' addresses known: the
 * kprobe has the socket, tells a host's or a target's by its sk_data_ready
 * (a probe read), does what the fentry does, and leaves the queue for its
 * kretprobe (which has no arguments) in the thread's context: no
 * nvme_tcp_try_send or nvmet_tcp_io_work hooks. The kretprobe of every
 * other send asks send_busy first (no lookup); the stack pointer tells the
 * stashed send's return from a later call's, should a kretprobe have been
 * missed (its instances exhausted).
 */
static __always_inline int sock_stash(struct pt_regs *ctx, __u64 q, __u8 side)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c;

	if (!ntp_armed)
		return 0;
	c = thread_ctx(&send_ctx, t);
	if (!c)
		return 0;
	if (!c->stash_q)
		bucket_add(send_busy, t, 1);
	c->stash_q = q;
	c->stash_side = side;
	c->stash_sp = PT_REGS_SP(ctx);
	return 0;
}

/* 1: the return of a stashed send, handled. */
static __always_inline int sock_unstash(struct pt_regs *ctx, long ret)
{
	__u32 t = tid();
	struct ntp_thread_ctx *c;
	__u64 q, sp = PT_REGS_SP(ctx);

	if (!bucket_maybe(send_busy, t))
		return 0;
	c = bpf_map_lookup_elem(&send_ctx, &t);
	if (!c || !c->stash_q)
		return 0;
	q = c->stash_q;
	c->stash_q = 0;
	bucket_add(send_busy, t, -1);
	/* x86-64: the return popped the return address; arm64: none */
	if (sp < c->stash_sp || sp - c->stash_sp > 16)
		return 1;
	if (c->stash_side == NTP_SIDE_HOST)
		send_done(&host_cmds, q, ret);
	else if (tgt_direct())
		send_done(&target_cmds, q, ret);
	return 1;
}

static __always_inline int sock_enter_kp(struct pt_regs *ctx, struct sock *sk)
{
	__u64 q = (__u64)BPF_CORE_READ(sk, sk_user_data) & NTP_SK_USER_DATA_PTRMASK, dr;

	if (!q)
		return 0;
	if (host_sk_ready || tgt_direct()) {
		dr = (__u64)BPF_CORE_READ(sk, sk_data_ready);
		/* nothing of the side in flight: no PDU read, no stash (its
		 * kretprobe then stops at send_busy) */
		if (host_sk_ready && dr == host_sk_ready) {
			if (cmds_none(&host_cmds))
				return 0;
			send_pending(&host_cmds, q, true);
			return sock_stash(ctx, q, NTP_SIDE_HOST);
		}
		if (tgt_direct() && dr == tgt_sk_ready) {
			if (cmds_none(&target_cmds))
				return 0;
			send_pending(&target_cmds, q, true);
			return sock_stash(ctx, q, NTP_SIDE_TARGET);
		}
	}
	return sock_needs_ctx() ? sock_send_enter(q) : 0;
}

static __always_inline int sock_exit_kp(struct pt_regs *ctx, long ret)
{
	if ((host_sk_ready || tgt_direct()) && sock_unstash(ctx, ret))
		return 0;
	return sock_needs_ctx() ? sock_send_exit(ret) : 0;
}

/* 6.1 sends PDUs with kernel_sendpage -> tcp_sendpage, and data it cannot
 * send as pages with kernel_sendmsg -> tcp_sendmsg; from 6.5 on everything
 * goes through tcp_sendmsg (MSG_SPLICE_PAGES) and tcp_sendpage is gone. */
SEC("fentry/tcp_sendpage")
int BPF_PROG(ntp_s_sendpage_fe, struct sock *sk)
{
	return sock_enter_fe(sk);
}

SEC("fexit/tcp_sendpage")
int BPF_PROG(ntp_s_sendpage_fx, struct sock *sk, struct page *page, int offset, size_t size, int flags,
	     int ret)
{
	return sock_exit_fe(sk, ret);
}

SEC("kprobe/tcp_sendpage")
int BPF_KPROBE(ntp_s_sendpage_kp, struct sock *sk)
{
	return sock_enter_kp(ctx, sk);
}

SEC("kretprobe/tcp_sendpage")
int BPF_KRETPROBE(ntp_s_sendpage_kr, int ret)
{
	return sock_exit_kp(ctx, ret);
}

SEC("fentry/tcp_sendmsg")
int BPF_PROG(ntp_s_sendmsg_fe, struct sock *sk)
{
	return sock_enter_fe(sk);
}

SEC("fexit/tcp_sendmsg")
int BPF_PROG(ntp_s_sendmsg_fx, struct sock *sk, struct msghdr *msg, size_t size, int ret)
{
	return sock_exit_fe(sk, ret);
}

SEC("kprobe/tcp_sendmsg")
int BPF_KPROBE(ntp_s_sendmsg_kp, struct sock *sk)
{
	return sock_enter_kp(ctx, sk);
}

SEC("kretprobe/tcp_sendmsg")
int BPF_KRETPROBE(ntp_s_sendmsg_kr, int ret)
{
	return sock_exit_kp(ctx, ret);
}

/* Does fentry work on this kernel at all (ntp_fentry_selftest, ntprof probe)?
 * Empty, and on a function of vmlinux: the socket programs above read the
 * NVMe modules' types, so a test with one of them failed its CO-RE
 * relocations (EINVAL) wherever nvme-tcp was not loaded, e.g. on a machine
 * that runs only SPDK. Not an ntp_ program: never in the hook table, never
 * loaded to record. */
SEC("fentry/tcp_sendmsg")
int BPF_PROG(fentry_selftest, struct sock *sk)
{
	return 0;
}
