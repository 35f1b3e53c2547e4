/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pump_live.h - the live collector as a pump source (core/pump.h), shared by
 * `ntprof record` and ntprof-top: each pull drains the ring buffer for up to
 * poll_ms, stamps the data clock with CLOCK_MONOTONIC (the clock of
 * bpf_ktime_get_ns(), so of the records), and reads the exact totals and the
 * lost count when the pump's boundary is reached.
 */
#ifndef NTP_PUMP_LIVE_H
#define NTP_PUMP_LIVE_H

#include <stdint.h>
#include "collector.h"
#include "core/pump/pump.h"

#define NTP_LIVE_MAX_TOTALS 1024

struct ntp_live_source {
	struct ntp_collector *c;
	int poll_ms;			/* 0: 100 */
	/* called before each poll (ntprof-top applies its keys there); a
	 * non-zero return is passed on as pull's */
	int (*before_poll)(void *ctx, struct ntp_pump *p);
	void *ctx;
	/* -d's end (0: none): the pull that reaches it drains what is left
	 * (ntp_live_drain) and ends the source, so the pump closes its last
	 * interval with every record the file gets (docs/recording.md); the
	 * pump's own end_ns is then 0, else it would close that interval at
	 * -d's end, before the stamps of the records drained after it */
	uint64_t end_ns;
	uint64_t drained;		/* the time the drain ended at, 0 before */
	uint64_t last_ts;		/* the latest stamp of a record fed */
	struct ntp_pump *pump;		/* the pump being fed (during a pull) */
	struct ntp_total tot[NTP_LIVE_MAX_TOTALS];
};

/* struct ntp_pump_source's pull; ctx is a struct ntp_live_source. */
int ntp_live_pull(void *ctx, struct ntp_pump *p, uint64_t until_ns, uint64_t *reached);
/* At the stop: what is left in the ring buffer and the SPDK commands still
 * in flight (ntp_collector_stop), then the totals and lost count as of the
 * returned time: the end (clamped to end_ns when not 0), or the latest
 * stamp of a record fed when later (so a file's report ends there too). Once only: after
 * the pull that reached ls->end_ns drained, it returns that time and does
 * nothing. */
uint64_t ntp_live_drain(struct ntp_live_source *ls, struct ntp_pump *p, int drain, uint64_t end_ns);
/* The .ntp header of a live recording on this machine, from the collector
 * options, started at start_mono_ns (CLOCK_MONOTONIC) on this clock. */
void ntp_live_file_info(struct ntp_file_info *fi, const struct ntp_collector_opts *co,
			uint64_t start_mono_ns, const char *tool);

#endif
