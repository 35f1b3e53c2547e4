/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ntprof_usdt.h - the few helpers that spdk/ntprof-usdt.patch calls from
 * SPDK's NVMe-oF code (and tests/tools/spdk-standin*.c from its own):
 * decide with the kernel side's hash whether a command is sampled, stamp
 * the sampled ones, fire the probe when the command is finished on its side.
 *
 * spdk/apply.sh copies it with bpf/ntprof_spdk.h and bpf/ntprof_hash.h into
 * the SPDK tree's include/spdk_internal/. An unsampled command costs one load
 * of the sampling variable and, when it is not 0, one hash (docs/spdk.md).
 */
#ifndef NTPROF_USDT_H
#define NTPROF_USDT_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/sdt.h>
#include "ntprof_hash.h"
#include "ntprof_spdk.h"

/* 0: sample nothing (the default); N: one command in N. ntprof writes it in
 * the running process through /proc/PID/mem. Defined once per process (SPDK:
 * lib/nvme), exported by that library's version script. */
extern volatile uint32_t ntprof_sample_n;

static inline uint64_t ntprof_now(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC is the kernel's ktime: SPDK's stamps subtract from
	 * the kernel side's (bpf_ktime_get_ns) on the same machine. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A command's identity from its SQE, and the decision. The hash's inputs are
 * the kernel side's (bpf/ntprof.bpf.c): cid, SQE dwords 10-11 and the low
 * half of dword 12, on I/O queues only. t0 is the side's first stamp.
 */
static inline void ntprof_begin(struct ntp_spdk_rec *r, uint16_t sqid, uint16_t cid, uint8_t opc,
				uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw12,
				unsigned first_slot, uint64_t t0)
{
	uint32_t n = ntprof_sample_n;
	uint64_t slba = (uint64_t)cdw11 << 32 | cdw10;
	uint16_t nlb = (uint16_t)(cdw12 & 0xffff);

	r->abi = 0;
	if (__builtin_expect(n == 0, 1) || sqid == 0 || !ntp_sample_pick(cid, slba, nlb, n))
		return;
	memset(r, 0, sizeof(*r));
	r->abi = NTP_SPDK_ABI;
	r->size = sizeof(*r);
	r->sample_n = n;
	r->sqid = sqid;
	r->cid = cid;
	r->opc = opc;
	r->nsid = nsid;
	r->slba = slba;
	r->nlb = nlb;
	r->ts[first_slot] = t0 ? t0 : ntprof_now();
}

/* The first time a sampled command reaches slot i. */
#define NTPROF_STAMP(r, i) do {						\
	if (__builtin_expect((r)->abi != 0, 0) && !(r)->ts[(i)])		\
		(r)->ts[(i)] = ntprof_now();					\
} while (0)

/* The command is finished on this side: hand the record over, once. */
#define NTPROF_DONE(probe, r) do {						\
	if (__builtin_expect((r)->abi != 0, 0)) {				\
		DTRACE_PROBE3(ntprof, probe, NTP_SPDK_ABI, (r), sizeof(*(r)));	\
		(r)->abi = 0;							\
	}									\
} while (0)

#endif /* NTPROF_USDT_H */
