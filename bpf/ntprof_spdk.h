/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ntprof_spdk.h - what SPDK (patched with spdk/ntprof-usdt.patch) hands
 * ntprof once per sampled command and side, the name of the variable
 * through which ntprof tells SPDK how many commands to sample, and the count
 * of sampled commands in flight that ntprof's stop waits on.
 *
 * spdk/apply.sh copies this header (and ntprof_hash.h) into the SPDK tree, so
 * SPDK, the BPF side (bpf/ntprof_spdk.bpf.c) and the stand-in of the tests
 * (tests/tools/spdk-standin*.c) compile the same struct. docs/spdk.md.
 *
 * The probes, provider "ntprof", one per side and transport, fired when a
 * sampled command is finished on that side:
 *	ntprof:nvmf_tcp_done   ntprof:nvmf_rdma_done    (target, lib/nvmf)
 *	ntprof:nvme_tcp_done   ntprof:nvme_rdma_done    (host, lib/nvme)
 * with three arguments: NTP_SPDK_ABI, a pointer to a struct ntp_spdk_rec and
 * its size. ntprof reads the record with one bpf_probe_read_user.
 *
 * The record is versioned (abi, size) and fixed-width, 128 bytes: a multiple
 * of the cache line, so it can be a member of a request structure whose size
 * SPDK asserts to be one (struct nvme_tcp_req).
 */
#ifndef NTPROF_SPDK_H
#define NTPROF_SPDK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define NTP_SPDK_ABI		1
#define NTP_SPDK_PROVIDER	"ntprof"
/* One in N commands is sampled; 0 (the default) samples none. A
 * default-visibility global of the library that defines it (SPDK:
 * libspdk_nvme; the stand-in: libntp_standin.so). */
#define NTP_SPDK_SAMPLE_VAR	"ntprof_sample_n"
#define NTP_SPDK_TS		8

/*
 * Time stamps: CLOCK_MONOTONIC ns of the machine (what bpf_ktime_get_ns
 * reads), 0 = not reached. The host's slots:
 *   SUBMIT    the request reached the transport (qpair submit)
 *   CMD_SENT  the command capsule was queued on the socket (TCP: SPDK's sock
 *             layer writes it at its group's next flush, in the same poll) /
 *             its send posted (RDMA)
 *   R2T_RECV  (TCP writes) the R2T was handled
 *   DATA_SENT (TCP writes) the first H2C data was queued on the socket
 *   RSP_RECV  the first PDU of the answer (C2H data or response) was read
 *   COMPLETE  the completion is handed to the application's callback
 *   SEND_DONE the socket write of the capsule returned (TCP) / its send
 *             completed (RDMA); informational: over loopback a write returns
 *             only after the kernel ran the receiver's side of TCP
 * The target's:
 *   CMD_RECV  the command capsule was read from the socket / RECV completed
 *   R2T_SENT  (writes) the R2T was written / RDMA READ posted
 *   DATA_RECV (writes) all data is in
 *   EXEC      handed to the bdev (spdk_nvmf_request_exec)
 *   DONE      the bdev completed it
 *   RSP_QUEUED the response was queued (request_transfer_out)
 *   RSP_SENT  the answer (C2H data or response) was queued on the socket /
 *             its send posted
 *   BDEV_SUBMITTED the bdev accepted the I/O after waiting for resources
 *             (io_wait after NOMEM); 0 when it was accepted at once
 */
enum ntp_spdk_host_ts {
	NTP_SPDK_H_SUBMIT = 0,
	NTP_SPDK_H_CMD_SENT,
	NTP_SPDK_H_R2T_RECV,
	NTP_SPDK_H_DATA_SENT,
	NTP_SPDK_H_RSP_RECV,
	NTP_SPDK_H_COMPLETE,
	NTP_SPDK_H_SEND_DONE,
};

enum ntp_spdk_target_ts {
	NTP_SPDK_T_CMD_RECV = 0,
	NTP_SPDK_T_R2T_SENT,
	NTP_SPDK_T_DATA_RECV,
	NTP_SPDK_T_EXEC,
	NTP_SPDK_T_DONE,
	NTP_SPDK_T_RSP_QUEUED,
	NTP_SPDK_T_RSP_SENT,
	NTP_SPDK_T_BDEV_SUBMITTED,
};

struct ntp_spdk_rec {
	__u32 abi;		/* NTP_SPDK_ABI; 0: the request is not sampled */
	__u32 size;		/* sizeof(struct ntp_spdk_rec) */
	__u64 ts[NTP_SPDK_TS];	/* see above */
	__u64 slba;		/* from the SQE, as on the wire */
	__u32 nsid;
	__u32 len;		/* bytes transferred */
	__u16 cntlid;		/* controller id (the target's, as both sides know it) */
	__u16 sqid;		/* NVMe queue id */
	__u16 cid;		/* command id as on the wire */
	__u16 nlb;		/* 0-based, as on the wire */
	__u16 status;		/* completion status: sct << 8 | sc */
	__u16 lport;		/* TCP ports of the connection, 0 where unknown */
	__u16 rport;
	__u8 opc;
	__u8 flags;
	__u32 sample_n;		/* the N this command was sampled with */
	__u32 cyc;		/* SPDK's side only: slots still in CPU cycles
				 * (spdk/ntprof_usdt.h); 0 when the probe fires */
	__u64 rsvd[2];
};

/*
 * The sampled commands in flight, counted for the recorder's stop: it writes
 * 0 into the sampling variable and waits for the sampled commands begun
 * until then to be handed over (docs/spdk.md, "when it stops"). Per thread
 * that has sampled a command, a slot of its own, one cache line: begun
 * counts its sampled commands (spdk/ntprof_usdt.h, ntprof_begin), done
 * those whose probe has fired (NTPROF_DONE), so neither costs an atomic on
 * a line another reactor writes; ntprof reads the whole structure through
 * /proc/PID/mem and sums the slots. taken counts the slots handed out (one
 * atomic per thread, at its first sampled command); the threads beyond the
 * first NTP_SPDK_FLIGHT_SLOTS - 1 share the last slot, with atomic adds.
 * Unsampled commands touch none of it. A default-visibility global next to
 * the sampling variable; its ELF symbol's size tells its layout.
 */
#define NTP_SPDK_FLIGHT_VAR	"ntprof_inflight"
#define NTP_SPDK_FLIGHT_SLOTS	64
#define NTP_SPDK_FLIGHT_LINE	64

struct ntp_spdk_flight_slot {
	__u64 begun;
	__u64 done;
} __attribute__((aligned(NTP_SPDK_FLIGHT_LINE)));

struct ntp_spdk_flight {
	__u32 taken;
	struct ntp_spdk_flight_slot slot[NTP_SPDK_FLIGHT_SLOTS];
};

#ifndef __VMLINUX_H__
_Static_assert(sizeof(struct ntp_spdk_rec) == 128, "struct ntp_spdk_rec is 128 bytes");
_Static_assert(sizeof(struct ntp_spdk_flight) == (NTP_SPDK_FLIGHT_SLOTS + 1) * NTP_SPDK_FLIGHT_LINE,
	       "struct ntp_spdk_flight: taken and each slot on a cache line of their own");
#endif

#endif /* NTPROF_SPDK_H */
