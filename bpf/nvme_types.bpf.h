/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme_types.bpf.h - the few NVMe structures and fields ntprof reads.
 *
 * The NVMe types live only in the nvme_core / nvme_tcp / nvmet / nvmet_tcp
 * module BTF, never in vmlinux BTF, so vmlinux.h cannot provide them and the
 * build must not need an NVMe module. libbpf-tools style: declare just the
 * fields we read (no others: src/collector/btf_need.c requires of the
 * kernel what the programs relocate, whatever is declared here), with
 * preserve_access_index, and let CO-RE relocate every
 * access against the module BTF at load time. The "___ntp" flavour suffix
 * keeps these declarations from clashing with a vmlinux.h that happens to
 * carry a type of the same name; libbpf ignores the suffix when matching.
 */
#ifndef NTP_NVME_TYPES_BPF_H
#define NTP_NVME_TYPES_BPF_H

#define __ntp_core __attribute__((preserve_access_index))

/* include/linux/nvme.h */
struct nvme_common_command___ntp {
	__u8 opcode;
	__u16 command_id;
	__u32 nsid;
	__u32 cdw10;		/* with cdw11: rw.slba (cmd_slba) */
	__u32 cdw11;
} __ntp_core;

struct nvme_rw_command___ntp {
	__u64 slba;
	__u16 length;		/* 0-based number of logical blocks */
} __ntp_core;

struct nvme_command___ntp {
	union {
		struct nvme_common_command___ntp common;
		struct nvme_rw_command___ntp rw;
	};
} __ntp_core;

/* drivers/nvme/host/nvme.h: nvme_req(rq) is the start of the driver's pdu,
 * right after struct request (blk_mq_rq_to_pdu). */
struct nvme_ctrl___ntp {
	__u16 cntlid;
} __ntp_core;

struct nvme_request___ntp {
	struct nvme_ctrl___ntp *ctrl;
} __ntp_core;

/* drivers/nvme/host/tcp.c */
struct nvme_tcp_queue___ntp;

/* CO-RE matches an enum field only with an enum of the same (essential) name */
enum nvme_tcp_send_state___ntp { NTP_NVME_TCP_SEND_STATE_ANY };

struct nvme_tcp_request___ntp {
	enum nvme_tcp_send_state___ntp state;
} __ntp_core;

struct nvme_tcp_queue___ntp {
	struct socket *sock;
	struct nvme_tcp_request___ntp *request;	/* the request nvme_tcp_try_send is sending */
	void *pdu;		/* the PDU header being received; its first byte is the type */
} __ntp_core;

/* enum nvme_tcp_pdu_type (include/linux/nvme-tcp.h): fixed by the NVMe/TCP spec */
#define NTP_NVME_TCP_R2T		0x9

/* block/blk-mq-tag.h (include/linux/blk-mq.h from 5.16): a vmlinux type */
struct blk_mq_tags___ntp {
	unsigned int nr_tags;
	struct request **rqs;
} __ntp_core;

/* enum nvme_tcp_send_state: unchanged from 5.10 to 7.2 */
#define NTP_NVME_TCP_SEND_CMD_PDU	0
#define NTP_NVME_TCP_SEND_H2C_PDU	1
#define NTP_NVME_TCP_SEND_DATA		2
#define NTP_NVME_TCP_SEND_DDGST		3

/* drivers/nvme/target/nvmet.h */
struct nvmet_ctrl___ntp {
	__u16 cntlid;
} __ntp_core;

struct nvmet_sq___ntp {
	struct nvmet_ctrl___ntp *ctrl;
	__u16 qid;
} __ntp_core;

struct nvmet_ns___ntp {
	const char *device_path;
} __ntp_core;

/* drivers/nvme/target/nvmet.h: the transport's operations; type is the
 * NVMe-oF transport type (include/linux/nvme.h, the spec's TRTYPE) */
#define NTP_NVMF_TRTYPE_TCP 3

struct nvmet_fabrics_ops___ntp {
	unsigned int type;
} __ntp_core;

struct nvmet_req___ntp {
	struct nvme_command___ntp *cmd;
	struct nvmet_sq___ntp *sq;
	struct nvmet_ns___ntp *ns;
	const struct nvmet_fabrics_ops___ntp *ops;	/* set before trace_nvmet_req_init */
	__u64 transfer_len;		/* size_t */
} __ntp_core;

/* drivers/nvme/target/tcp.c */
struct nvmet_tcp_queue___ntp;

enum nvmet_tcp_send_state___ntp { NTP_NVMET_TCP_SEND_STATE_ANY };

struct nvmet_tcp_cmd___ntp {
	struct nvmet_tcp_queue___ntp *queue;
	struct nvmet_req___ntp req;
	enum nvmet_tcp_send_state___ntp state;
} __ntp_core;

struct nvmet_tcp_queue___ntp {
	struct socket *sock;
	struct work_struct io_work;
	struct nvmet_sq___ntp nvme_sq;		/* its nvmet_req's sq */
	struct nvmet_tcp_cmd___ntp *snd_cmd;	/* the command being sent */
} __ntp_core;

/* enum nvmet_tcp_send_state: unchanged from 5.10 to 7.2 */
#define NTP_NVMET_TCP_SEND_DATA_PDU	0
#define NTP_NVMET_TCP_SEND_DATA		1
#define NTP_NVMET_TCP_SEND_R2T		2
#define NTP_NVMET_TCP_SEND_DDGST	3
#define NTP_NVMET_TCP_SEND_RESPONSE	4

/* ---- NVMe/RDMA (ib_core, nvme_rdma, nvmet_rdma module BTF) ---- */

/* include/rdma/ib_verbs.h: a work completion names its request by the
 * struct ib_cqe embedded in the ULP's own structure (container_of). */
struct ib_cqe___ntp {		/* only where it sits is used, no member */
} __ntp_core;

struct ib_qp___ntp {
	void *qp_context;	/* nvme_rdma_queue * / nvmet_rdma_queue * */
} __ntp_core;

enum ib_wc_status___ntp { NTP_IB_WC_SUCCESS = 0 };

struct ib_wc___ntp {
	struct ib_cqe___ntp *wr_cqe;	/* in a union with wr_id */
	enum ib_wc_status___ntp status;
	struct ib_qp___ntp *qp;
} __ntp_core;

/* include/linux/nvme.h */
struct nvme_completion___ntp {
	__u16 command_id;
} __ntp_core;

/* drivers/nvme/host/rdma.c: the command capsule's send queue entry sits in
 * the request's pdu; the response's receive entry holds the CQE in data. */
struct nvme_rdma_qe___ntp {
	struct ib_cqe___ntp cqe;
	void *data;
} __ntp_core;

struct nvme_rdma_request___ntp {
	struct nvme_rdma_qe___ntp sqe;
} __ntp_core;

/* drivers/nvme/target/rdma.c: one rsp per command in flight; its cqes are
 * the response's SEND and the RDMA READ of a write's data. */
struct nvmet_rdma_rsp___ntp {
	struct ib_cqe___ntp send_cqe;
	struct ib_cqe___ntp read_cqe;
	struct nvmet_req___ntp req;
} __ntp_core;

/* Before "block: remove the ->rq_disk field in struct request" (5.16) the
 * disk hung off the request itself; later it is req->q->disk. */
struct request___old {
	struct gendisk *rq_disk;
} __ntp_core;

#endif
