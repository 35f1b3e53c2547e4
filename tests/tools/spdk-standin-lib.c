// SPDX-License-Identifier: GPL-2.0
/*
 * spdk-standin-lib.c - libntp_standin.so: the stand-in's "SPDK library". It
 * defines ntprof's sampling variable and runs one command per call through
 * the same helpers the SPDK patch calls (spdk/ntprof_usdt.h), in the order
 * SPDK stamps them (bpf/ntprof_spdk.h), firing the same USDT probes.
 */
#include <time.h>
#include "spdk/ntprof_usdt.h"
#include "spdk-standin.h"

volatile uint32_t ntprof_sample_n;

uint32_t standin_sampling(void)
{
	return ntprof_sample_n;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	if (ns)
		nanosleep(&ts, NULL);
}

static int is_write_r2t(const struct standin_cmd *c, const struct standin_delays *d)
{
	return c->opc == 0x01 && c->len > 8192 && d->r2t_ns;
}

int standin_host_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma)
{
	struct ntp_spdk_rec r;
	uint32_t cdw12 = c->nlb;
	int sampled;

	ntprof_begin(&r, c->qid, c->cid, c->opc, c->nsid, (uint32_t)c->slba, (uint32_t)(c->slba >> 32), cdw12,
		     NTP_SPDK_H_SUBMIT, 0);
	sampled = r.abi != 0;
	NTPROF_STAMP(&r, NTP_SPDK_H_CMD_SENT);
	if (!rdma && is_write_r2t(c, d)) {
		pause_ns(d->r2t_ns);
		NTPROF_STAMP(&r, NTP_SPDK_H_R2T_RECV);
		NTPROF_STAMP(&r, NTP_SPDK_H_DATA_SENT);
	}
	pause_ns(d->wait_ns);
	NTPROF_STAMP(&r, NTP_SPDK_H_RSP_RECV);
	NTPROF_STAMP(&r, NTP_SPDK_H_COMPLETE);
	r.cntlid = c->cntlid;
	r.len = c->len;
	if (rdma)
		NTPROF_DONE(nvme_rdma_done, &r);
	else
		NTPROF_DONE(nvme_tcp_done, &r);
	return sampled;
}

int standin_target_cmd(const struct standin_cmd *c, const struct standin_delays *d, int rdma)
{
	struct ntp_spdk_rec r;
	int sampled;

	ntprof_begin(&r, c->qid, c->cid, c->opc, c->nsid, (uint32_t)c->slba, (uint32_t)(c->slba >> 32), c->nlb,
		     NTP_SPDK_T_CMD_RECV, 0);
	sampled = r.abi != 0;
	if (is_write_r2t(c, d)) {
		NTPROF_STAMP(&r, NTP_SPDK_T_R2T_SENT);
		pause_ns(d->r2t_ns);
		NTPROF_STAMP(&r, NTP_SPDK_T_DATA_RECV);
	}
	r.len = c->len;
	NTPROF_STAMP(&r, NTP_SPDK_T_EXEC);
	pause_ns(d->storage_ns);
	NTPROF_STAMP(&r, NTP_SPDK_T_DONE);
	NTPROF_STAMP(&r, NTP_SPDK_T_RSP_QUEUED);
	NTPROF_STAMP(&r, NTP_SPDK_T_RSP_SENT);
	r.cntlid = c->cntlid;
	if (rdma)
		NTPROF_DONE(nvmf_rdma_done, &r);
	else
		NTPROF_DONE(nvmf_tcp_done, &r);
	return sampled;
}
