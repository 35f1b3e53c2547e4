/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hist.h - fixed-memory log-linear histogram of signed nanosecond values.
 *
 * Values 0..127 have a bucket each; above, every power of two [2^e, 2^(e+1))
 * is cut into 64 equal buckets (width 2^(e-6)), up to 2^41 ns (36 min; larger
 * values land in the last bucket). A quantile is reported as its bucket's
 * midpoint, clamped to the exact minimum and maximum, so its relative error is
 * at most half a bucket width over the bucket's low edge: 2^(e-7)/2^e = 1/128
 * (0.78 %). Negative values (a loopback wire) use a mirrored set of buckets.
 * 2 x 2304 32-bit counters: 18 KiB, whatever the number of values.
 */
#ifndef NTP_HIST_H
#define NTP_HIST_H

#include <stdint.h>

#define NTP_HIST_SUB_BITS 6
#define NTP_HIST_MAX_EXP 40
#define NTP_HIST_BUCKETS (((NTP_HIST_MAX_EXP - 5) << NTP_HIST_SUB_BITS) + 64)	/* 2304 */

struct ntp_hist {
	uint64_t n;
	int64_t min, max;
	uint16_t hi_pos, hi_neg;	/* highest bucket used + 1: bounds reset/merge/quantile */
	uint32_t pos[NTP_HIST_BUCKETS];
	uint32_t neg[NTP_HIST_BUCKETS];	/* bucket of -v for v < 0 */
};

/* Bucket of a non-negative value: the exponent comes from clz, no division. */
static inline unsigned ntp_hist_index(uint64_t v)
{
	unsigned e;

	if (v < 128)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	if (e > NTP_HIST_MAX_EXP)
		return NTP_HIST_BUCKETS - 1;
	return ((e - 5) << NTP_HIST_SUB_BITS) + (unsigned)(v >> (e - NTP_HIST_SUB_BITS)) - 64;
}

static inline void ntp_hist_add(struct ntp_hist *h, int64_t v)
{
	unsigned i;

	if (h->n == 0) {
		h->min = h->max = v;
	} else {
		if (v < h->min)
			h->min = v;
		if (v > h->max)
			h->max = v;
	}
	h->n++;
	if (v >= 0) {
		i = ntp_hist_index((uint64_t)v);
		h->pos[i]++;
		if (i >= h->hi_pos)
			h->hi_pos = (uint16_t)(i + 1);
	} else {
		i = ntp_hist_index((uint64_t)0 - (uint64_t)v);
		h->neg[i]++;
		if (i >= h->hi_neg)
			h->hi_neg = (uint16_t)(i + 1);
	}
}

void ntp_hist_reset(struct ntp_hist *h);
void ntp_hist_merge(struct ntp_hist *dst, const struct ntp_hist *src);
/* Lowest value and width of bucket i (of magnitudes). */
uint64_t ntp_hist_bucket_low(unsigned i);
uint64_t ntp_hist_bucket_width(unsigned i);
/* The q-quantile (0 < q <= 1): the value of rank ceil(q x n), in ns. 0 when empty. */
double ntp_hist_quantile(const struct ntp_hist *h, double q);

#endif
