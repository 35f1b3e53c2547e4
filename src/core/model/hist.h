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

#include <stddef.h>
#include <stdint.h>

#define NTP_HIST_SUB_BITS 6
#define NTP_HIST_MAX_EXP 40
#define NTP_HIST_BUCKETS (((NTP_HIST_MAX_EXP - 5) << NTP_HIST_SUB_BITS) + 64)	/* 2304 */

/* Only the buckets: the counts (n) live with the caller, and the hot path
 * touches one cache line per value. */
struct ntp_hist {
	uint32_t pos[NTP_HIST_BUCKETS];
	uint32_t neg[NTP_HIST_BUCKETS];	/* bucket of -v for v < 0 */
};

/*
 * Bucket of a non-negative value, without division or branch (it runs ~16
 * times per command in `ntprof report`). For v >= 64 with exponent e (2^e <=
 * v < 2^(e+1)) the bucket is ((e - 5) << 6) + the 6 bits after the leading
 * one, and those are exactly the top bits of the IEEE double of v: biased
 * exponent (1023 + e) and the mantissa's first 6 bits, so the bucket is
 * (bits >> 46) - ((1023 + 5) << 6). The conversion is exact below 2^53; above
 * 2^41 (and for v >= 2^63, a negative int64) the result is past the last
 * bucket and clamped to it. Below 64 the bucket is v. tests/unit/test_hist.c
 * checks every bucket's edges and a million values against the definition.
 */
static inline unsigned ntp_hist_index(uint64_t v)
{
	double d = (double)(int64_t)v;
	uint64_t bits, i;

	__builtin_memcpy(&bits, &d, sizeof(bits));
	i = (bits >> (52 - NTP_HIST_SUB_BITS)) - ((1023u + 5u) << NTP_HIST_SUB_BITS);
	i = v < 64 ? v : i;
	return i < NTP_HIST_BUCKETS - 1 ? (unsigned)i : NTP_HIST_BUCKETS - 1;
}

static inline void ntp_hist_add(struct ntp_hist *h, int64_t v)
{
	if (v >= 0)
		h->pos[ntp_hist_index((uint64_t)v)]++;
	else
		h->neg[ntp_hist_index((uint64_t)0 - (uint64_t)v)]++;
}

/*
 * A set of histograms with the same buckets, stored sparsely: each one's
 * buckets in chunks of 64 (one power of two, 256 bytes), allocated from
 * one growing array at the first value that lands in them. Latencies of one kind span a
 * few powers of two, so a set of two dozen histograms (a group's e2e, stages and
 * components in model.c) holds tens of KiB where dense ones held 400 KiB,
 * and reset and merge touch only the chunks in use. Quantiles are the same
 * as struct ntp_hist's for the same values (same buckets, same walk).
 * All zero (calloc) is an empty set; ntp_hset_free() releases the chunks.
 */
#define NTP_HIST_CHUNKS (NTP_HIST_BUCKETS >> NTP_HIST_SUB_BITS)	/* 36 */
#define NTP_HSET_MAX 32		/* histograms per set */
#define NTP_HSET_FIRST 4	/* chunks of the first allocation (1 KiB): chunk 0 and a few */

struct ntp_hset {
	/* the chunks, contiguous; grows by doubling (realloc), so the
	 * directory holds chunk numbers, not pointers */
	uint32_t *chunks;
	/* before the directory, on the chunks' line: a set that no value
	 * reached is freed without touching the directory's pages */
	uint32_t used;		/* chunks handed out, chunk 0 included (0: none allocated) */
	uint32_t cap;		/* chunks allocated */
	/* bit h: histogram h has a chunk (its row of dir is not all zero), so
	 * that reset and free clear those rows only: a report's sets hold the
	 * end to end's alone, and clearing the whole directory wrote pages of
	 * it that nothing had touched (each a page fault of zeroed memory) */
	uint32_t rows;
	int oom;		/* a chunk could not be allocated: counts were lost */
	/* histogram h's chunk k: dir[h][k] for v >= 0, dir[h][NTP_HIST_CHUNKS + k]
	 * for v < 0, a chunk number; 0: none yet (chunk 0 is never handed
	 * out). 16 bits: 4.5 KiB, where pointers took 18 KiB that every
	 * group's allocation, reset and free wrote whole. */
	uint16_t dir[NTP_HSET_MAX][2 * NTP_HIST_CHUNKS];
};
_Static_assert(NTP_HSET_MAX * 2 * NTP_HIST_CHUNKS < 65535, "chunk numbers fit 16 bits");
_Static_assert(NTP_HSET_MAX <= 32, "a bit of rows per histogram");

/* How the sets' chunks are allocated: realloc (tests put in one that fails,
 * to see the set's oom and what reports it). */
extern void *(*ntp_hset_realloc)(void *p, size_t size);

/* Slow path of ntp_hset_add: a zeroed chunk for dir entry *d. */
uint32_t *ntp_hset_chunk(struct ntp_hset *s, uint16_t *d);

static inline void ntp_hset_add(struct ntp_hset *s, unsigned h, int64_t v)
{
	uint64_t neg = (uint64_t)(v >> 63);		/* 0 or all ones */
	unsigned i = ntp_hist_index(((uint64_t)v ^ neg) - neg);
	uint16_t *d = &s->dir[h][(i >> NTP_HIST_SUB_BITS) + (neg & NTP_HIST_CHUNKS)];
	uint32_t *c = __builtin_expect(*d != 0, 1) ? s->chunks + ((size_t)*d << NTP_HIST_SUB_BITS)
						   : ntp_hset_chunk(s, d);

	c[i & ((1u << NTP_HIST_SUB_BITS) - 1)]++;
}

/* Adds the counts of a dense histogram of non-negative values (pos, the
 * NTP_HIST_BUCKETS buckets of struct ntp_hist's pos) into histogram h of the
 * set, and zeroes them (only the chunks that held counts are written). */
void ntp_hset_take_dense(struct ntp_hset *s, unsigned h, uint32_t *pos);
/* Empties every histogram of the set; keeps the chunks' memory for reuse. */
void ntp_hset_reset(struct ntp_hset *s);
void ntp_hset_free(struct ntp_hset *s);
/* dst's histograms += src's (the first nh of each). */
void ntp_hset_merge(struct ntp_hset *dst, const struct ntp_hset *src, unsigned nh);
uint64_t ntp_hset_count(const struct ntp_hset *s, unsigned h);
/* As ntp_hist_quantile, for histogram h of the set. */
double ntp_hset_quantile(const struct ntp_hset *s, unsigned h, uint64_t n, double q);
/* ntp_hset_quantile of q[0..nq) (ascending, nq <= NTP_HIST_MAX_Q) into
 * out[0..nq), in one walk of the buckets. */
#define NTP_HIST_MAX_Q 8
void ntp_hset_quantiles(const struct ntp_hset *s, unsigned h, uint64_t n, const double *q, double *out,
			unsigned nq);
/* Bytes the set holds (directory and chunks). */
size_t ntp_hset_bytes(const struct ntp_hset *s);

void ntp_hist_reset(struct ntp_hist *h);
void ntp_hist_merge(struct ntp_hist *dst, const struct ntp_hist *src);
/* Lowest value and width of bucket i (of magnitudes). */
uint64_t ntp_hist_bucket_low(unsigned i);
uint64_t ntp_hist_bucket_width(unsigned i);
/* Values counted (sums the buckets: for tests and snapshots, not the hot path). */
uint64_t ntp_hist_count(const struct ntp_hist *h);
/* The q-quantile (0 < q <= 1) of the h's n values: the midpoint of the bucket
 * holding rank ceil(q x n), in ns. 0 when empty. */
double ntp_hist_quantile(const struct ntp_hist *h, uint64_t n, double q);
/* Enough samples for the quantile q (0.99, 0.999): at least 1/(1-q), so that
 * one sample at least lies above it (100 for p99, 1000 for p99.9); from fewer,
 * the figure is the largest sample seen, and the reports say so
 * (docs/percentiles.md). */
int ntp_pct_enough(uint64_t n, double q);

#endif
