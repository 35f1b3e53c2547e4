// SPDX-License-Identifier: GPL-2.0
/* hist.c - log-linear histogram: reset, merge, quantiles (see hist.h). */
#include <math.h>
#include <stdlib.h>
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

/*
 * The quantile walk over chunks of 64 buckets (NULL: all zero), shared by
 * the dense and the sparse histograms so both give the same answer.
 */
#define CHUNK (1u << NTP_HIST_SUB_BITS)

static double quantile_chunks(const uint32_t *const pos[NTP_HIST_CHUNKS],
			      const uint32_t *const neg[NTP_HIST_CHUNKS], uint64_t n, double q);

/* The rank of the q-quantile of n values (n > 0): ceil(q x n) in [1, n]. */
static uint64_t rank_of(uint64_t n, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank;
}

/* The values counted in a chunk: summed in vector registers, where a
 * walk takes three instructions a bucket. */
static uint64_t chunk_sum(const uint32_t *c)
{
	uint64_t n = 0;

	for (unsigned j = 0; j < CHUNK; j++)
		n += c[j];
	return n;
}

/*
 * Several quantiles, q[] ascending, in one walk (a walk per quantile went
 * over the same buckets again): the rank of each is met in the order of
 * q[], so each gets the bucket a walk of its own stops at. A chunk that
 * holds none of the ranks left is passed with its sum, not bucket by
 * bucket.
 */
static void quantiles_chunks(const uint32_t *const pos[NTP_HIST_CHUNKS],
			     const uint32_t *const neg[NTP_HIST_CHUNKS], uint64_t n, const double *q,
			     double *out, unsigned nq)
{
	uint64_t rank[NTP_HIST_MAX_Q], seen = 0;
	unsigned at = 0;

	if (!nq)
		return;
	if (!n) {
		for (unsigned i = 0; i < nq; i++)
			out[i] = 0;
		return;
	}
	for (unsigned i = 0; i < nq; i++)
		rank[i] = rank_of(n, q[i]);
	/* Most negative first, then upwards. */
	for (unsigned k = NTP_HIST_CHUNKS; k-- > 0;) {
		uint64_t sum;

		if (!neg[k])
			continue;
		sum = chunk_sum(neg[k]);
		if (seen + sum < rank[at]) {
			seen += sum;
			continue;
		}
		for (unsigned j = CHUNK; j-- > 0;) {
			seen += neg[k][j];
			while (seen >= rank[at]) {
				out[at] = -mid(k * CHUNK + j);
				if (++at == nq)
					return;
			}
		}
	}
	for (unsigned k = 0; k < NTP_HIST_CHUNKS; k++) {
		uint64_t sum;

		if (!pos[k])
			continue;
		sum = chunk_sum(pos[k]);
		if (seen + sum < rank[at]) {
			seen += sum;
			continue;
		}
		for (unsigned j = 0; j < CHUNK; j++) {
			seen += pos[k][j];
			while (seen >= rank[at]) {
				out[at] = mid(k * CHUNK + j);
				if (++at == nq)
					return;
			}
		}
	}
	while (at < nq)
		out[at++] = mid(NTP_HIST_BUCKETS - 1);
}

static double quantile_chunks(const uint32_t *const pos[NTP_HIST_CHUNKS],
			      const uint32_t *const neg[NTP_HIST_CHUNKS], uint64_t n, double q)
{
	double v;

	quantiles_chunks(pos, neg, n, &q, &v, 1);
	return v;
}

double ntp_hist_quantile(const struct ntp_hist *h, uint64_t n, double q)
{
	const uint32_t *pos[NTP_HIST_CHUNKS], *neg[NTP_HIST_CHUNKS];

	for (unsigned k = 0; k < NTP_HIST_CHUNKS; k++) {
		pos[k] = &h->pos[k * CHUNK];
		neg[k] = &h->neg[k * CHUNK];
	}
	return quantile_chunks(pos, neg, n, q);
}

/* ---- sparse sets ---- */

void *(*ntp_hset_realloc)(void *p, size_t size) = realloc;

uint32_t *ntp_hset_chunk(struct ntp_hset *s, uint16_t *d)
{
	static uint32_t sink[CHUNK];	/* out of memory: counts land here, lost */
	uint32_t *c;

	if (!s->used)
		s->used = 1;	/* chunk 0: "none" in the directory */
	if (s->used >= s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : NTP_HSET_FIRST;
		uint32_t *p;

		if (cap > NTP_HSET_MAX * 2 * NTP_HIST_CHUNKS + 1)
			cap = NTP_HSET_MAX * 2 * NTP_HIST_CHUNKS + 1;
		p = s->used < cap ? ntp_hset_realloc(s->chunks, (size_t)cap * CHUNK * sizeof(uint32_t)) : NULL;
		if (!p) {
			s->oom = 1;	/* (full cannot happen: every chunk of every histogram fits) */
			return sink;
		}
		s->chunks = p;
		s->cap = cap;
	}
	c = s->chunks + (size_t)s->used * CHUNK;
	memset(c, 0, CHUNK * sizeof(uint32_t));
	*d = (uint16_t)s->used++;
	s->rows |= 1u << ((size_t)(d - &s->dir[0][0]) / (2 * NTP_HIST_CHUNKS));
	return c;
}

/* The rows of dir that hold chunk numbers, zeroed. */
static void clear_rows(struct ntp_hset *s)
{
	for (uint32_t r = s->rows; r; r &= r - 1)
		memset(s->dir[__builtin_ctz(r)], 0, sizeof(s->dir[0]));
	s->rows = 0;
}

void ntp_hset_reset(struct ntp_hset *s)
{
	clear_rows(s);
	s->used = s->used ? 1 : 0;
	s->oom = 0;
}

void ntp_hset_free(struct ntp_hset *s)
{
	free(s->chunks);
	s->chunks = NULL;
	clear_rows(s);
	s->used = s->cap = 0;
	s->oom = 0;
}

static const uint32_t *chunk_at(const struct ntp_hset *s, unsigned h, unsigned k)
{
	unsigned d = s->dir[h][k];

	return d ? s->chunks + (size_t)d * CHUNK : NULL;
}

void ntp_hset_merge(struct ntp_hset *dst, const struct ntp_hset *src, unsigned nh)
{
	for (unsigned h = 0; h < nh && h < NTP_HSET_MAX; h++)
		for (unsigned k = 0; k < 2 * NTP_HIST_CHUNKS; k++) {
			const uint32_t *from = chunk_at(src, h, k);
			uint32_t *to;

			if (!from)
				continue;
			/* the chunk first: it may move dst's chunks */
			to = dst->dir[h][k] ? dst->chunks + (size_t)dst->dir[h][k] * CHUNK
					    : ntp_hset_chunk(dst, &dst->dir[h][k]);
			for (unsigned j = 0; j < CHUNK; j++)
				to[j] += from[j];
		}
	dst->oom |= src->oom;
}

void ntp_hset_take_dense(struct ntp_hset *s, unsigned h, uint32_t *pos)
{
	for (unsigned k = 0; k < NTP_HIST_CHUNKS; k++) {
		uint32_t *from = pos + (size_t)k * CHUNK, any = 0, *to;

		for (unsigned j = 0; j < CHUNK; j++)
			any |= from[j];
		if (!any)
			continue;	/* not written: its page may not even be resident */
		to = s->dir[h][k] ? s->chunks + (size_t)s->dir[h][k] * CHUNK : ntp_hset_chunk(s, &s->dir[h][k]);
		for (unsigned j = 0; j < CHUNK; j++)
			to[j] += from[j];
		memset(from, 0, CHUNK * sizeof(*from));
	}
}

static void chunks_of(const struct ntp_hset *s, unsigned h, const uint32_t *pos[NTP_HIST_CHUNKS],
		      const uint32_t *neg[NTP_HIST_CHUNKS])
{
	for (unsigned k = 0; k < NTP_HIST_CHUNKS; k++) {
		pos[k] = chunk_at(s, h, k);
		neg[k] = chunk_at(s, h, NTP_HIST_CHUNKS + k);
	}
}

uint64_t ntp_hset_count(const struct ntp_hset *s, unsigned h)
{
	const uint32_t *pos[NTP_HIST_CHUNKS], *neg[NTP_HIST_CHUNKS];
	uint64_t n = 0;

	chunks_of(s, h, pos, neg);
	for (unsigned k = 0; k < NTP_HIST_CHUNKS; k++)
		for (unsigned j = 0; j < CHUNK; j++)
			n += (pos[k] ? pos[k][j] : 0) + (neg[k] ? neg[k][j] : 0);
	return n;
}

double ntp_hset_quantile(const struct ntp_hset *s, unsigned h, uint64_t n, double q)
{
	const uint32_t *pos[NTP_HIST_CHUNKS], *neg[NTP_HIST_CHUNKS];

	chunks_of(s, h, pos, neg);
	return quantile_chunks(pos, neg, n, q);
}

void ntp_hset_quantiles(const struct ntp_hset *s, unsigned h, uint64_t n, const double *q, double *out,
			unsigned nq)
{
	const uint32_t *pos[NTP_HIST_CHUNKS], *neg[NTP_HIST_CHUNKS];

	chunks_of(s, h, pos, neg);
	/* quantiles_chunks ranks at most NTP_HIST_MAX_Q at once */
	for (unsigned i = 0; i < nq; i += NTP_HIST_MAX_Q)
		quantiles_chunks(pos, neg, n, q + i, out + i,
				 nq - i < NTP_HIST_MAX_Q ? nq - i : NTP_HIST_MAX_Q);
}

size_t ntp_hset_bytes(const struct ntp_hset *s)
{
	return sizeof(*s) + (size_t)s->cap * CHUNK * sizeof(uint32_t);
}

int ntp_pct_enough(uint64_t n, double q)
{
	return (double)n * (1.0 - q) >= 1.0 - 1e-9;
}
