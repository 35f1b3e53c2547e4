/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spdk-standin.h - the interface between the stand-in program and its
 * library (libntp_standin.so), which, like SPDK's build/lib/libspdk_nvme.so
 * and libspdk_nvmf.so, defines the sampling variable and holds the probes.
 */
#ifndef NTP_SPDK_STANDIN_H
#define NTP_SPDK_STANDIN_H

#include <stdint.h>

struct standin_cmd {
	uint16_t cntlid, qid, cid, nlb;
	uint8_t opc;
	uint32_t nsid, len;
	uint64_t slba;
};

/* Per-stage delays, ns (slept, so the stand-in costs little CPU; --spin:
 * spun). */
struct standin_delays {
	uint64_t wait_ns;	/* host: capsule queued -> answer read (network and target) */
	uint64_t storage_ns;	/* target: handed to the bdev -> completed */
	uint64_t r2t_ns;	/* TCP writes: R2T out -> data in (target), R2T wait (host) */
	uint64_t flush_ns;	/* --sock: response (target) / capsule (host) queued -> written */
	int hold;		/* --hold-us: a sampled command waits until the recorder's stop */
	uint64_t hold_ns;	/* ... then this long more */
	int abandon;		/* --abandon: the first held one is dropped at the stop, unhanded */
	int rearm;		/* --rearm: ... and waits for the next recorder's write */
	int submit_fail;	/* --submit-fail: the host's first sampled command fails its submission */
	int spin;		/* --spin: delays spun, not slept */
};

/* Called just before a sampled command's done probe fires (after 0) and
 * just after (after 1): the stand-in's --bpf-time reads there. */
extern void (*standin_done_hook)(int after);

/* Set by the program's SIGTERM/SIGINT: a held command stops waiting. */
extern volatile int standin_quit;

/* Run one command on that side; 1 when it was sampled (the probe fired). */
int standin_host_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma);
int standin_target_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma);
uint32_t standin_sampling(void);
/* --sock: every command's PDUs cross a real loopback TCP connection, whose
 * other end is a thread of this process playing the peer (the host of a
 * target, the target of a host); reads wait in poll() and read non-blocking,
 * as SPDK's poller does. A target's peer keeps qd capsules outstanding.
 * 0, or -1 with errno. */
int standin_sock_open(int target, const struct standin_delays *d, int qd);
void standin_sock_close(void);

#endif
