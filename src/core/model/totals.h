/* SPDX-License-Identifier: GPL-2.0 */
/*
 * totals.h - arithmetic on rows of cumulative exact counters (struct
 * ntp_total): a recording started mid-run (ntprof-top's w) counts from its own
 * start, so it writes the counters minus those at its start; and the counters
 * at a time between or past two readings, as a replay knows them.
 */
#ifndef NTP_TOTALS_H
#define NTP_TOTALS_H

#include <stddef.h>
#include <stdint.h>
#include "../store/ntpfile.h"

/* out[i] = cur[i] less the row of the same key in base (none: cur[i] whole),
 * never below zero; --exact-queues sums too. out may not alias cur. */
void ntp_totals_since(const struct ntp_total *cur, size_t n, const struct ntp_total *base, size_t nb,
		      struct ntp_total *out);
/* The counts at t from readings prev (as of t0; n_prev 0: zero at t0) and cur
 * (as of t1 > t0): interpolated, or extrapolated past t1 at the rate between
 * them; t <= t0 gives prev, t1 <= t0 gives cur. Rows are cur's keys; the
 * stage sums are cur's. Returns n_cur. */
size_t ntp_totals_at(const struct ntp_total *prev, size_t n_prev, uint64_t t0, const struct ntp_total *cur,
		     size_t n_cur, uint64_t t1, uint64_t t, struct ntp_total *out);

#endif
