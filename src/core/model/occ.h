/* SPDX-License-Identifier: GPL-2.0 */
/*
 * occ.h - counted queue depths (--exact-queues): the kernel's per-group sums
 * of every command's stage times (struct ntp_group_occ) reduced to each
 * stage's average occupancy over an interval. The time integral of a queue's
 * occupancy is the sum of its commands' residence times in it, so
 * sum / interval is the average number of commands in the stage: counted,
 * where the default is Little's law (sampled mean x exact command rate).
 *
 * A command's times enter the interval in which it leaves its side: per
 * interval the count is exact up to the commands in flight at its two edges
 * (at most their residence so far, divided by the interval); over a whole
 * recording the edges are only its start and end.
 */
#ifndef NTP_OCC_H
#define NTP_OCC_H

#include <stdint.h>
#include "../../../bpf/ntprof_event.h"
#include "stage.h"

struct ntp_occ_qd {
	double stage[NTP_STAGE_COUNT];	/* average commands in each stage */
	double host_recv;		/* host-only: the host's receive paths, part of NETWORK */
	uint64_t summed, incomplete;	/* commands behind the sums (the host's when recorded) */
};

/*
 * host and/or target: the growth of a group's sums over `seconds` (NULL: the
 * side was not recorded; not both NULL). The network stage:
 *   both sides   host's wait - target's residence + both receive paths
 *                = H_WAIT + H_RECV - T_DRIVER - T_STORAGE (residence = T_RECV + T_DRIVER + T_STORAGE)
 *   host only    network and target: H_WAIT + H_RECV
 *   target only  its receive paths and the data transfer: T_RECV + T_XFER
 * Returns 0, or -1 when seconds <= 0.
 */
int ntp_occ_stage_qd(const struct ntp_group_occ *host, const struct ntp_group_occ *target, double seconds,
		     struct ntp_occ_qd *out);

/* a += b, and d = cur - base (cumulative sums, modulo 2^64 like the kernel's). */
void ntp_occ_add_to(struct ntp_group_occ *a, const struct ntp_group_occ *b);
void ntp_occ_delta(const struct ntp_group_occ *cur, const struct ntp_group_occ *base, struct ntp_group_occ *d);
/* Any command behind these sums? (a totals row without --exact-queues has none) */
int ntp_occ_any(const struct ntp_group_occ *o);

#endif
