// SPDX-License-Identifier: GPL-2.0
/* hist.c - log-linear histogram: reset, merge, quantiles (see hist.h). */
#include <math.h>
#include <string.h>
#include "hist.h"

void ntp_hist_reset(struct ntp_hist *h)
{
	/* Only the used prefix of each array is dirty. */
	memset(h->pos, 0, h->hi_pos * sizeof(h->pos[0]));
	memset(h->neg, 0, h->hi_neg * sizeof(h->neg[0]));
	h->n = 0;
	h->min = h->max = 0;
	h->hi_pos = h->hi_neg = 0;
}

void ntp_hist_merge(struct ntp_hist *dst, const struct ntp_hist *src)
{
	if (!src->n)
		return;
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (!dst->n || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	for (unsigned i = 0; i < src->hi_pos; i++)
		dst->pos[i] += src->pos[i];
	for (unsigned i = 0; i < src->hi_neg; i++)
		dst->neg[i] += src->neg[i];
	if (src->hi_pos > dst->hi_pos)
		dst->hi_pos = src->hi_pos;
	if (src->hi_neg > dst->hi_neg)
		dst->hi_neg = src->hi_neg;
}

uint64_t ntp_hist_bucket_low(unsigned i)
{
	unsigned e;

	if (i < 128)
		return i;
	e = (i >> NTP_HIST_SUB_BITS) + 5;
	return (uint64_t)(64 + (i & 63)) << (e - NTP_HIST_SUB_BITS);
}

uint64_t ntp_hist_bucket_width(unsigned i)
{
	if (i < 128)
		return 1;
	return (uint64_t)1 << ((i >> NTP_HIST_SUB_BITS) + 5 - NTP_HIST_SUB_BITS);
}

static double mid(unsigned i)
{
	return (double)ntp_hist_bucket_low(i) + (double)(ntp_hist_bucket_width(i) - 1) / 2.0;
}

double ntp_hist_quantile(const struct ntp_hist *h, double q)
{
	uint64_t rank, seen = 0;
	double v = 0;
	int found = 0;

	if (!h->n)
		return 0;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	/* Most negative first, then upwards. */
	for (unsigned i = h->hi_neg; i-- > 0 && !found;) {
		seen += h->neg[i];
		if (seen >= rank) {
			v = -mid(i);
			found = 1;
		}
	}
	for (unsigned i = 0; i < h->hi_pos && !found; i++) {
		seen += h->pos[i];
		if (seen >= rank) {
			v = mid(i);
			found = 1;
		}
	}
	if (v < (double)h->min)
		v = (double)h->min;
	if (v > (double)h->max)
		v = (double)h->max;
	return v;
}
