/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_event.h - the one record format shared by the BPF programs, the
 * .ntp file format and every user-space consumer.
 *
 * Fixed-width types only, no pointers, no padding holes: the same bytes are
 * written by a BPF program into the ring buffer, copied verbatim into .ntp
 * record blocks, and read back by `ntprof report` on any x86-64/arm64 machine
 * (little-endian; the file header carries the record size so later minor
 * versions may append fields).
 *
 * This header must compile both under clang -target bpf (with vmlinux.h
 * providing __u64 & co.) and in user space (with <linux/types.h>).
 */
#ifndef NTPROF_EVENT_H
#define NTPROF_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define NTP_DEV_LEN 32

/* Which machine's view a record is. */
enum ntp_side {
	NTP_SIDE_HOST = 1,
	NTP_SIDE_TARGET = 2,
};

/* What a recording covers (file header, -r). */
enum ntp_role {
	NTP_ROLE_HOST = 1,
	NTP_ROLE_TARGET = 2,
	NTP_ROLE_BOTH = 3,
};

enum ntp_transport {
	NTP_TRANSPORT_TCP = 1,
	NTP_TRANSPORT_RDMA = 2,
};

/* Which software produced a side's timestamps. */
enum ntp_impl {
	NTP_IMPL_LINUX = 0,
	NTP_IMPL_SPDK = 1,
};

/* The I/O type of a group. */
enum ntp_io_type {
	NTP_IO_READ = 0,
	NTP_IO_WRITE = 1,
	NTP_IO_OTHER = 2,
};

/*
 * Timestamp slots, CLOCK_MONOTONIC nanoseconds of the machine that took them
 * (bpf_ktime_get_ns()). Only differences of one side's slots are ever taken.
 * A slot counts only when its bit is set in ntp_record.ts_valid.
 *
 * Host, in path order:
 *   BLK_SUBMIT   request entered blk-mq (rq->start_time_ns, or block_rq_insert)
 *   DRV_SUBMIT   NVMe driver got it (nvme_setup_cmd / ->queue_rq)
 *   CMD_SENT     command capsule handed to the network (socket send / RDMA post)
 *   R2T_ARRIVE   (TCP writes) R2T PDU's first packet reached the host stack
 *   R2T_DRV      (TCP writes) host driver handled the R2T
 *   DATA_SENT    (TCP writes) H2C data handed to the network
 *   RSP_ARRIVE   response's first packet reached the host stack (skb time)
 *   RSP_DRV      host driver handled the response (CQE parsed)
 *   DRV_COMPLETE nvme_complete_rq
 *   BLK_COMPLETE block_rq_complete
 *   SEND_DONE    (RDMA) send completion of the command capsule, informational
 * Target, in path order:
 *   CMD_ARRIVE   command's first packet reached the target stack
 *   CMD_RECV     target driver has the capsule (nvmet_req_init)
 *   R2T_SENT     (writes) R2T handed to the network / RDMA READ posted
 *   DATA_ARRIVE  (writes) data's first packet arrived / RDMA READ completed
 *   DATA_RECV    (writes) all data is in: TCP its last packet arrived (not the
 *                driver's read of it: docs/hooks.md) / RDMA READ's handler
 *   STORAGE_SUBMIT submission to the backing device (req->execute)
 *   STORAGE_DONE storage completion (nvmet_req_complete)
 *   RSP_QUEUED   response queued (->queue_response)
 *   RSP_SENT     response handed to the network (socket send / RDMA post)
 *   RSP_SEND_DONE (RDMA) send completion of the response, informational
 */
enum ntp_ts_id {
	NTP_TS_H_BLK_SUBMIT = 0,
	NTP_TS_H_DRV_SUBMIT,
	NTP_TS_H_CMD_SENT,
	NTP_TS_H_R2T_ARRIVE,
	NTP_TS_H_R2T_DRV,
	NTP_TS_H_DATA_SENT,
	NTP_TS_H_RSP_ARRIVE,
	NTP_TS_H_RSP_DRV,
	NTP_TS_H_DRV_COMPLETE,
	NTP_TS_H_BLK_COMPLETE,
	NTP_TS_H_SEND_DONE,
	NTP_TS_T_CMD_ARRIVE,		/* 11 */
	NTP_TS_T_CMD_RECV,
	NTP_TS_T_R2T_SENT,
	NTP_TS_T_DATA_ARRIVE,
	NTP_TS_T_DATA_RECV,
	NTP_TS_T_STORAGE_SUBMIT,
	NTP_TS_T_STORAGE_DONE,
	NTP_TS_T_RSP_QUEUED,
	NTP_TS_T_RSP_SENT,
	NTP_TS_T_RSP_SEND_DONE,
	NTP_TS_COUNT,			/* 21 used */
};

/* Slots reserved in the record so later versions keep the layout. */
#define NTP_TS_SLOTS 24

/*
 * Durations in the slots after the timestamps (ns, valid by their ts_valid
 * bit like a timestamp; NOT timestamps: loops over timestamps stop at
 * NTP_TS_COUNT). Measured on the target, one machine's clock
 * (docs/backpressure.md):
 *   T_BP_RECV  of CMD_ARRIVE -> CMD_RECV, the time the queue's worker spent
 *              in storage submissions (blocked on the drive's tags)
 *   T_BP_RSP   (TCP) of STORAGE_DONE -> RSP_SENT, the same
 * A host timestamp after them (host clock, like the enum's; outside the
 * loops over NTP_TS_COUNT, so records without it read as before):
 *   H_BIO_SUBMIT  the bio's submission (struct bio's bi_issue, stamped by
 *                 submit_bio_noacct with CONFIG_BLK_CGROUP; from 6.18 its
 *                 issue_time_ns, stamped by blk_mq_submit_bio only where
 *                 blk-iolatency asks), before the request and its tag
 *                 existed: end to end starts there when set
 *                 (docs/stage-model.md, "What end to end spans")
 */
#define NTP_TS_T_BP_RECV 21
#define NTP_TS_T_BP_RSP 22
#define NTP_TS_H_BIO_SUBMIT 23
/* bio_issue keeps the low 51 bits of ktime_get_ns (BIO_ISSUE_TIME_MASK) */
#define NTP_BIO_ISSUE_BITS 51
/* A bio stamp older than this at nvme_setup_cmd is not believed: an unset
 * or reused bi_issue reads as a time up to 2^51 ns (26 days) back. */
#define NTP_BIO_ISSUE_MAX_AGE_NS 10000000000ull

/* The full time of a bio_issue value seen at now (both ktime_get_ns):
 * the upper bits from now, one wrap of the 51 bits back if that lands
 * after now. 0: unset or older than NTP_BIO_ISSUE_MAX_AGE_NS. */
static inline __u64 ntp_bio_issue_time(__u64 value, __u64 now)
{
	__u64 mask = (1ull << NTP_BIO_ISSUE_BITS) - 1, t;

	if (!(value & mask))
		return 0;
	t = (now & ~mask) | (value & mask);
	if (t > now) {
		if (t < (1ull << NTP_BIO_ISSUE_BITS))
			return 0;
		t -= 1ull << NTP_BIO_ISSUE_BITS;
	}
	return now - t <= NTP_BIO_ISSUE_MAX_AGE_NS ? t : 0;
}

/* The time of a bio's issue_time_ns (6.18 on: the whole ktime_get_ns) seen
 * at now. 0: unset (bio_init clears it; only blk-iolatency's disks have it
 * set), after now, or older than NTP_BIO_ISSUE_MAX_AGE_NS. */
static inline __u64 ntp_bio_issue_ns(__u64 value, __u64 now)
{
	return value && value <= now && now - value <= NTP_BIO_ISSUE_MAX_AGE_NS ? value : 0;
}

/* ntp_record.flags */
#define NTP_REC_F_CLOSED_MISSED  (1u << 0) /* completion never seen: closed by the next command on the same request */
#define NTP_REC_F_RSP_FALLBACK   (1u << 1) /* RSP_SENT missing, STORAGE_DONE used instead (docs/stage-model.md) */
#define NTP_REC_F_SAMPLED_EXACT  (1u << 2) /* recorded with -s 1 */
/* Kernel-internal, never in an emitted record: with --exact-queues every
 * command is tracked for its stage times, and this one was not sampled. */
#define NTP_REC_F_UNSAMPLED      (1u << 3)
/* SPDK over TCP: the receive path's arrival came from the kernel's socket
 * hooks (docs/spdk.md); without it SPDK's parse time stands in for it. */
#define NTP_REC_F_SOCK_SPLIT     (1u << 4)

/*
 * One record per sampled command and side, written when the command leaves
 * that side. 272 bytes, 8-byte aligned, no holes.
 */
struct ntp_record {
	__u64 ts[NTP_TS_SLOTS];	/* ns, see enum ntp_ts_id */
	__u64 slba;		/* start LBA as on the wire */
	__u64 seq;		/* per-side sequence number of the sampled command */
	__u32 ts_valid;		/* bit i set: ts[i] was seen */
	__u32 len;		/* bytes transferred */
	__u32 nsid;
	__u32 flags;		/* NTP_REC_F_* */
	__u16 cntlid;		/* controller id as the target knows it */
	__u16 qid;		/* NVMe queue id (0 = admin) */
	__u16 cid;		/* command id as on the wire (with the host's genctr bits) */
	__u16 nlb;		/* 0-based number of logical blocks, as on the wire */
	__u8 opcode;		/* NVMe opcode (0x01 write, 0x02 read, ...) */
	__u8 side;		/* enum ntp_side */
	__u8 transport;		/* enum ntp_transport */
	__u8 impl;		/* enum ntp_impl */
	__u32 cpu;		/* CPU that emitted the record */
	char dev[NTP_DEV_LEN];	/* host: nvmeXnY; target: backing device; SPDK: spdk-cXnY */
};

/*
 * Key of the exact per-group command counters kept in the kernel (per-CPU
 * hash map) and written to the .ntp totals block. 40 bytes.
 */
struct ntp_group_key {
	__u8 side;		/* enum ntp_side */
	__u8 io;		/* enum ntp_io_type */
	__u16 pad;
	__u32 len;		/* bytes */
	char dev[NTP_DEV_LEN];
};

struct ntp_group_count {
	__u64 commands;		/* every command seen, sampled or not */
	__u64 bytes;
};

/*
 * A per-CPU slot of the same counters (struct ntp_cpu_state's slot[],
 * count_group in bpf/ntprof_common.bpf.h): a group's key owns the slot its
 * hash picks on a CPU from its first command there on, and counts in it; a
 * group whose slot another owns counts in group_counts. User space sums
 * both, by key. 64 bytes, a cache line.
 */
enum ntp_group_slot_state {
	NTP_GROUP_SLOT_FREE = 0,
	NTP_GROUP_SLOT_CLAIMING = 1,	/* key being written: not yet readable */
	NTP_GROUP_SLOT_OWNED = 2,	/* key valid, count counting */
};

struct ntp_group_slot {
	__u64 state;		/* enum ntp_group_slot_state; 64 bits: drop_atomic_fetch (src/collector/collector.c) */
	struct ntp_group_key key;
	struct ntp_group_count count;
};

#define NTP_GROUP_SLOT_BITS 6
#define NTP_GROUP_SLOTS (1 << NTP_GROUP_SLOT_BITS)

/* The host's last disk on a CPU and its name (host_dev in bpf/ntprof.bpf.c). */
struct ntp_dev_cache {
	__u64 disk;		/* struct gendisk * */
	__u64 diskseq;
	__u64 name[NTP_DEV_LEN / 8];
};

/* The target's last namespace on a CPU and its device's name (target_dev in
 * bpf/ntprof.bpf.c). */
struct ntp_tdev_cache {
	__u64 ns;		/* struct nvmet_ns * */
	__u64 gen;		/* ns_gen when it was read */
	__u64 busy;		/* being filled: an interrupt's command on this CPU reads the path itself */
	__u64 name[NTP_DEV_LEN / 8];
};

/*
 * What every command, sampled or not, reads and writes on its CPU, in one
 * value of the per-CPU array cpu_state (bpf/ntprof_common.bpf.h): one
 * lookup per command for the group's counter and the device's name
 * (before 6.10 a per-CPU array's lookup is a helper call; later kernels
 * inline it). User space reads the slots, all CPUs in one lookup.
 */
struct ntp_cpu_state {
	struct ntp_group_slot slot[NTP_GROUP_SLOTS];
	struct ntp_dev_cache host_dev;
	struct ntp_tdev_cache target_dev;
};

/*
 * --exact-queues: per group, the stage residence times of EVERY command,
 * summed when the command leaves its side (per-CPU hash map group_occ, same
 * key as group_counts; the .ntp totals rows carry it after the counts).
 * The time integral of a queue's occupancy equals the sum of its commands'
 * residence times in it, so a sum's growth over an interval divided by the
 * interval's length is the stage's average occupancy, counted, not
 * estimated. One side's slots only (ntprof_occ.h computes them from a record
 * exactly as src/core/model/stage.c does):
 *   host   ns[0] block layer   (submission + completion)
 *          ns[1] driver        (submission [+ R2T to data] + completion)
 *          ns[2] receive paths (packet arrival -> driver: response [+ R2T])
 *          ns[3] wait          (handed to the network -> answer arrived), per round trip
 *   target ns[0] receive paths (command [+ data])
 *          ns[1] driver        (submission [+ data] + completion)
 *          ns[2] storage       (target block layer and drive)
 *          ns[3] data transfer (TCP R2T handed out -> data arrived; only
 *                              target-only reports use it)
 * A command lacking a timestamp the stages need (or closed after a missed
 * completion without a fallback) is counted in `incomplete`, not summed.
 * 48 bytes.
 */
#define NTP_OCC_SLOTS 4
enum ntp_occ_slot {
	NTP_OCC_H_BLOCK = 0,
	NTP_OCC_H_DRIVER = 1,
	NTP_OCC_H_RECV = 2,
	NTP_OCC_H_WAIT = 3,
	NTP_OCC_T_RECV = 0,
	NTP_OCC_T_DRIVER = 1,
	NTP_OCC_T_STORAGE = 2,
	NTP_OCC_T_XFER = 3,
};

struct ntp_group_occ {
	__u64 summed;			/* commands whose times are in ns[] */
	__u64 incomplete;		/* commands left out of ns[] */
	__u64 ns[NTP_OCC_SLOTS];	/* summed residence, ns (see above) */
};

#endif /* NTPROF_EVENT_H */
