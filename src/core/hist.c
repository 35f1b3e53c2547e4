// SPDX-License-Identifier: GPL-2.0
/* hist.c - log-linear histogram: reset, merge, quantiles (see hist.h). */
#include <math.h>
#include <string.h>
#include "hist.h"

void ntp_hist_reset(struct ntp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void ntp_hist_merge(struct ntp_hist *dst, const struct ntp_hist *src)
{
	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++) {
		dst->pos[i] += src->pos[i];
		dst->neg[i] += src->neg[i];
	}
}

uint64_t ntp_hist_count(const struct ntp_hist *h)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++)
		n += (uint64_t)h->pos[i] + h->neg[i];
	return n;
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

double ntp_hist_quantile(const struct ntp_hist *h, uint64_t n, double q)
{
	uint64_t rank, seen = 0;

	if (!n)
		return 0;
	rank = (uint64_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	/* Most negative first, then upwards. */
	for (unsigned i = NTP_HIST_BUCKETS; i-- > 0;) {
		seen += h->neg[i];
		if (seen >= rank)
			return -mid(i);
	}
	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++) {
		seen += h->pos[i];
		if (seen >= rank)
			return mid(i);
	}
	return mid(NTP_HIST_BUCKETS - 1);
}
