// SPDX-License-Identifier: GPL-2.0
/*
 * ntprof_spdk.bpf.c - ntprof's side of SPDK: one USDT program per probe that
 * spdk/ntprof-usdt.patch adds (bpf/ntprof_spdk.h). SPDK decides which
 * commands are sampled (the kernel side's hash, bpf/ntprof_hash.h), keeps
 * their stage times itself and fires the probe once per sampled command and
 * side; each program reads that record with one bpf_probe_read_user and maps
 * it onto ntprof's one record format (bpf/ntprof_event.h, impl SPDK).
 *
 * Slots, SPDK's -> ntprof's (docs/spdk.md):
 *   host   SUBMIT -> DRV_SUBMIT; CMD_SENT -> CMD_SENT; R2T_RECV -> R2T_ARRIVE
 *          and R2T_DRV; DATA_SENT -> DATA_SENT; RSP_RECV -> RSP_ARRIVE and
 *          RSP_DRV; COMPLETE -> DRV_COMPLETE; SEND_DONE -> SEND_DONE. No
 *          block layer: no BLK_* slot (src/core/model/stage.c).
 *   target CMD_RECV -> CMD_ARRIVE and CMD_RECV; R2T_SENT -> R2T_SENT;
 *          DATA_RECV -> DATA_ARRIVE and DATA_RECV; EXEC -> STORAGE_SUBMIT;
 *          DONE -> STORAGE_DONE; RSP_QUEUED; RSP_SENT.
 * SPDK reads the socket itself: the time a packet reached the kernel's stack
 * is not in its record. Over TCP the socket hooks (ntprof_spdk_sock.bpf.h)
 * give it: host RSP_ARRIVE and R2T_ARRIVE, target CMD_ARRIVE and
 * DATA_ARRIVE, and the target's RSP_SENT (the send that carried the
 * response); where they found nothing (not attached, or the connection's
 * rings no longer cover the command), arrival and handling share SPDK's one
 * stamp and the receive path counts in the network's wire component.
 *
 * The controller/namespace name (spdk-c<cntlid>n<nsid>) is written in user
 * space (src/collector/spdk.c): no string formatting here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "ntprof_event.h"
#include "ntprof_spdk.h"
#include "ntprof_spdk_sock.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define NTP_MAX_SIZES_BPF 16

/* ---- set before load ---- */
const volatile int filter_io = -1;		/* -1 all, else enum ntp_io_type */
const volatile __u32 filter_n_sizes = 0;
const volatile __u32 filter_sizes[NTP_MAX_SIZES_BPF] = {};

volatile __u64 seq_host = 0;
volatile __u64 seq_target = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} spdk_events SEC(".maps");

enum ntp_spdk_stat {
	NTP_SPDK_STAT_LOST = 0,		/* ring buffer full */
	NTP_SPDK_STAT_BAD_ABI,		/* a record of another ABI or size */
	NTP_SPDK_STAT_READ_FAIL,	/* bpf_probe_read_user failed */
	NTP_SPDK_STAT_FILTERED,		/* --io-type / --size left it out */
	NTP_SPDK_STAT_N,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NTP_SPDK_STAT_N);
	__type(key, __u32);
	__type(value, __u64);
} spdk_stats SEC(".maps");

static __always_inline void stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&spdk_stats, &i);

	if (v)
		*v += 1;
}

static __always_inline int io_of(__u8 opc)
{
	return opc == 0x02 ? NTP_IO_READ : opc == 0x01 ? NTP_IO_WRITE : NTP_IO_OTHER;
}

static __always_inline bool wanted(const struct ntp_spdk_rec *s)
{
	/* reads and writes only, as the kernel side (io_wanted): not the
	 * Fabrics Connect each I/O queue starts with, nor flushes */
	if (io_of(s->opc) == NTP_IO_OTHER)
		return false;
	if (filter_io >= 0 && io_of(s->opc) != filter_io)
		return false;
	if (filter_n_sizes) {
		for (int i = 0; i < NTP_MAX_SIZES_BPF; i++) {
			if (i >= filter_n_sizes)
				break;
			if (filter_sizes[i] == s->len)
				return true;
		}
		return false;
	}
	return true;
}

static __always_inline void put(struct ntp_record *r, int slot, __u64 t)
{
	if (!t)
		return;
	r->ts[slot] = t;
	r->ts_valid |= 1u << slot;
}

static __always_inline int spdk_done(long abi, const void *urec, long size, __u8 side, __u8 transport)
{
	struct ntp_spdk_rec s;
	struct ntp_sconn *c;
	struct ntp_record *r;

	if (abi != NTP_SPDK_ABI || size != sizeof(s)) {
		stat_inc(NTP_SPDK_STAT_BAD_ABI);
		return 0;
	}
	if (bpf_probe_read_user(&s, sizeof(s), urec)) {
		stat_inc(NTP_SPDK_STAT_READ_FAIL);
		return 0;
	}
	if (s.abi != NTP_SPDK_ABI || s.size != sizeof(s)) {
		stat_inc(NTP_SPDK_STAT_BAD_ABI);
		return 0;
	}
	if (!wanted(&s)) {
		stat_inc(NTP_SPDK_STAT_FILTERED);
		return 0;
	}
	r = bpf_ringbuf_reserve(&spdk_events, sizeof(*r), 0);
	if (!r) {
		stat_inc(NTP_SPDK_STAT_LOST);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	c = transport == NTP_TRANSPORT_TCP ? sconn_of(s.lport, s.rport) : NULL;
	if (side == NTP_SIDE_HOST) {
		put(r, NTP_TS_H_DRV_SUBMIT, s.ts[NTP_SPDK_H_SUBMIT]);
		put(r, NTP_TS_H_CMD_SENT, s.ts[NTP_SPDK_H_CMD_SENT]);
		put(r, NTP_TS_H_R2T_ARRIVE, s.ts[NTP_SPDK_H_R2T_RECV]);
		put(r, NTP_TS_H_R2T_DRV, s.ts[NTP_SPDK_H_R2T_RECV]);
		put(r, NTP_TS_H_DATA_SENT, s.ts[NTP_SPDK_H_DATA_SENT]);
		put(r, NTP_TS_H_RSP_ARRIVE, s.ts[NTP_SPDK_H_RSP_RECV]);
		if (c) {
			__u64 sent = s.ts[NTP_SPDK_H_CMD_SENT];
			__u64 a = sconn_arrival(c, s.ts[NTP_SPDK_H_RSP_RECV],
						s.ts[NTP_SPDK_H_DATA_SENT] ? s.ts[NTP_SPDK_H_DATA_SENT] : sent);

			/* the capsule left at the first send on the connection
			 * after SPDK queued it, as the target's answer does */
			put(r, NTP_TS_H_CMD_SENT, sconn_send_after(c, sent));

			if (a) {
				put(r, NTP_TS_H_RSP_ARRIVE, a);
				r->flags |= NTP_REC_F_SOCK_SPLIT;
			}
			if (s.ts[NTP_SPDK_H_R2T_RECV] && (a = sconn_arrival(c, s.ts[NTP_SPDK_H_R2T_RECV], sent)))
				put(r, NTP_TS_H_R2T_ARRIVE, a);
		}
		put(r, NTP_TS_H_RSP_DRV, s.ts[NTP_SPDK_H_RSP_RECV]);
		put(r, NTP_TS_H_DRV_COMPLETE, s.ts[NTP_SPDK_H_COMPLETE]);
		put(r, NTP_TS_H_SEND_DONE, s.ts[NTP_SPDK_H_SEND_DONE]);
		r->seq = __sync_fetch_and_add(&seq_host, 1);
	} else {
		put(r, NTP_TS_T_CMD_ARRIVE, s.ts[NTP_SPDK_T_CMD_RECV]);
		put(r, NTP_TS_T_CMD_RECV, s.ts[NTP_SPDK_T_CMD_RECV]);
		put(r, NTP_TS_T_R2T_SENT, s.ts[NTP_SPDK_T_R2T_SENT]);
		put(r, NTP_TS_T_DATA_ARRIVE, s.ts[NTP_SPDK_T_DATA_RECV]);
		put(r, NTP_TS_T_DATA_RECV, s.ts[NTP_SPDK_T_DATA_RECV]);
		put(r, NTP_TS_T_STORAGE_SUBMIT, s.ts[NTP_SPDK_T_EXEC]);
		put(r, NTP_TS_T_STORAGE_DONE, s.ts[NTP_SPDK_T_DONE]);
		put(r, NTP_TS_T_RSP_QUEUED, s.ts[NTP_SPDK_T_RSP_QUEUED]);
		put(r, NTP_TS_T_RSP_SENT, s.ts[NTP_SPDK_T_RSP_SENT]);
		if (c) {
			__u64 a = sconn_arrival(c, s.ts[NTP_SPDK_T_CMD_RECV], 0);

			if (a) {
				put(r, NTP_TS_T_CMD_ARRIVE, a);
				r->flags |= NTP_REC_F_SOCK_SPLIT;
			}
			/* after an R2T: the data came after the R2T went out */
			if (s.ts[NTP_SPDK_T_R2T_SENT] &&
			    (a = sconn_arrival(c, s.ts[NTP_SPDK_T_DATA_RECV], s.ts[NTP_SPDK_T_R2T_SENT])))
				put(r, NTP_TS_T_DATA_ARRIVE, a);
			a = sconn_send_after(c, s.ts[NTP_SPDK_T_RSP_QUEUED]);
			if (a)
				put(r, NTP_TS_T_RSP_SENT, a);
		}
		r->seq = __sync_fetch_and_add(&seq_target, 1);
	}
	r->slba = s.slba;
	r->len = s.len;
	r->nsid = s.nsid;
	if (s.sample_n == 1)
		r->flags |= NTP_REC_F_SAMPLED_EXACT;
	r->cntlid = s.cntlid;
	r->qid = s.sqid;
	r->cid = s.cid;
	r->nlb = s.nlb;
	r->opcode = s.opc;
	r->side = side;
	r->transport = transport;
	r->impl = NTP_IMPL_SPDK;
	r->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int BPF_USDT(ntp_u_nvmf_tcp_done, long abi, void *rec, long size)
{
	return spdk_done(abi, rec, size, NTP_SIDE_TARGET, NTP_TRANSPORT_TCP);
}

SEC("usdt")
int BPF_USDT(ntp_u_nvmf_rdma_done, long abi, void *rec, long size)
{
	return spdk_done(abi, rec, size, NTP_SIDE_TARGET, NTP_TRANSPORT_RDMA);
}

SEC("usdt")
int BPF_USDT(ntp_u_nvme_tcp_done, long abi, void *rec, long size)
{
	return spdk_done(abi, rec, size, NTP_SIDE_HOST, NTP_TRANSPORT_TCP);
}

SEC("usdt")
int BPF_USDT(ntp_u_nvme_rdma_done, long abi, void *rec, long size)
{
	return spdk_done(abi, rec, size, NTP_SIDE_HOST, NTP_TRANSPORT_RDMA);
}
