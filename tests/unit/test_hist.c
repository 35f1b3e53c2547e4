// SPDX-License-Identifier: GPL-2.0
/* test_hist.c - log-linear histogram: buckets, quantiles against a sorted reference, merge. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/hist.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The reference: the value of rank ceil(q n) in sorted order. */
static int64_t ref_quantile(const int64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/* Within 1 % of the reference (values under 128 ns are exact). */
static void assert_close(double got, int64_t want)
{
	double err = fabs(got - (double)want);

	if (llabs(want) < 128) {
		if (err > 0.5)
			fail_msg("got %.1f want %lld (exact range)", got, (long long)want);
		return;
	}
	if (err > 0.01 * (double)llabs(want))
		fail_msg("got %.1f want %lld: %.3f %% off", got, (long long)want,
			 100 * err / (double)llabs(want));
}

static struct ntp_hist *new_hist(void)
{
	struct ntp_hist *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	return h;
}

static void check_distribution(int64_t (*gen)(void), size_t n)
{
	static const double qs[] = { 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0 };
	struct ntp_hist *h = new_hist();
	int64_t *v = malloc(n * sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++) {
		v[i] = gen();
		ntp_hist_add(h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_i64);
	assert_int_equal(ntp_hist_count(h), n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		assert_close(ntp_hist_quantile(h, n, qs[i]), ref_quantile(v, n, qs[i]));
	free(v);
	free(h);
}

static int64_t gen_lognormal(void)
{
	/* Latency-like: 80 us median, long tail. */
	double u1 = (random() + 1.0) / 2147483649.0, u2 = random() / 2147483648.0;
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);

	return (int64_t)(80000 * exp(0.6 * z));
}

static int64_t gen_uniform_wide(void)
{
	return (int64_t)(((uint64_t)random() << 10) % 5000000000ull);
}

static int64_t gen_small(void)
{
	return random() % 300;
}

static int64_t gen_signed(void)
{
	/* A loopback wire: mostly small positive, some negative. */
	return (int64_t)(random() % 40000) - 8000;
}

static void test_quantiles_lognormal(void **s) { (void)s; srandom(1); check_distribution(gen_lognormal, 200000); }
static void test_quantiles_wide(void **s) { (void)s; srandom(2); check_distribution(gen_uniform_wide, 100000); }
static void test_quantiles_small(void **s) { (void)s; srandom(3); check_distribution(gen_small, 50000); }
static void test_quantiles_signed(void **s) { (void)s; srandom(4); check_distribution(gen_signed, 100000); }

/* Every bucket's midpoint is within 1/128 of any value in it; indexes are monotonic. */
static void test_bucket_bound(void **state)
{
	unsigned prev = 0;

	(void)state;
	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++) {
		uint64_t lo = ntp_hist_bucket_low(i), w = ntp_hist_bucket_width(i);

		assert_int_equal(ntp_hist_index(lo), i);
		assert_int_equal(ntp_hist_index(lo + w - 1), i);
		if (i + 1 < NTP_HIST_BUCKETS)
			assert_int_equal(ntp_hist_bucket_low(i + 1), lo + w);
		if (lo >= 128)
			assert_true((double)(w - 1) / 2.0 <= (double)lo / 128.0);
	}
	srandom(5);
	for (int k = 0; k < 1000000; k++) {
		uint64_t v = ((uint64_t)random() << 31 | (uint64_t)random()) >> (random() % 62);
		unsigned i = ntp_hist_index(v);

		assert_true(i < NTP_HIST_BUCKETS);
		if (v < (1ull << 41)) {
			assert_true(v >= ntp_hist_bucket_low(i));
			assert_true(v < ntp_hist_bucket_low(i) + ntp_hist_bucket_width(i));
		} else {
			assert_int_equal(i, NTP_HIST_BUCKETS - 1);	/* 36 min and more */
		}
	}
	for (uint64_t v = 0; v < 100000; v++) {
		unsigned i = ntp_hist_index(v);

		assert_true(i >= prev);
		prev = i;
	}
	/* Beyond the range: the last bucket. */
	assert_int_equal(ntp_hist_index(UINT64_MAX), NTP_HIST_BUCKETS - 1);
	assert_int_equal(ntp_hist_index(1ull << 63), NTP_HIST_BUCKETS - 1);
	assert_int_equal(ntp_hist_index((1ull << 53) + 1), NTP_HIST_BUCKETS - 1);
	assert_int_equal(ntp_hist_index(1ull << 41), NTP_HIST_BUCKETS - 1);
	assert_int_equal(ntp_hist_index((1ull << 40) - 1), NTP_HIST_BUCKETS - 65);	/* top of 2^39 */
}

static void test_merge_reset_empty(void **state)
{
	struct ntp_hist *a = new_hist(), *b = new_hist(), *all = new_hist();

	(void)state;
	assert_true(ntp_hist_quantile(a, 0, 0.5) == 0);
	srandom(6);
	for (int i = 0; i < 50000; i++) {
		int64_t v = gen_lognormal() - 20000;

		ntp_hist_add(i % 3 ? a : b, v);
		ntp_hist_add(all, v);
	}
	ntp_hist_merge(a, b);
	assert_int_equal(ntp_hist_count(a), 50000);
	assert_memory_equal(a->pos, all->pos, sizeof(a->pos));
	assert_memory_equal(a->neg, all->neg, sizeof(a->neg));
	ntp_hist_reset(a);
	assert_int_equal(ntp_hist_count(a), 0);
	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++)
		assert_int_equal(a->pos[i] | a->neg[i], 0);
	ntp_hist_add(a, -5);
	assert_true(ntp_hist_quantile(a, 1, 0.5) == -5);
	assert_true(ntp_hist_quantile(a, 1, 1.0) == -5);
	free(a);
	free(b);
	free(all);
}

/*
 * The sparse set gives the dense histogram's quantiles exactly, for values of
 * every range and sign spread over several histograms; merge and reset keep
 * that; memory is the chunks in use, not 22 dense histograms.
 */
static void test_hset_equals_dense(void **state)
{
	static const double qs[] = { 0.001, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0 };
	int64_t (*gens[])(void) = { gen_lognormal, gen_uniform_wide, gen_small, gen_signed };
	enum { NH = 22, NG = sizeof(gens) / sizeof(gens[0]) };
	struct ntp_hset *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *all = calloc(1, sizeof(*all));
	struct ntp_hist *d = calloc(NH, sizeof(*d));
	uint64_t n[NH] = { 0 };

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(all);
	assert_non_null(d);
	srandom(7);
	for (int round = 0; round < 2; round++) {
		struct ntp_hset *s = round ? b : a;

		for (int i = 0; i < 200000; i++) {
			unsigned h = (unsigned)random() % NH;
			int64_t v = gens[h % NG]();

			ntp_hset_add(s, h, v);
			ntp_hist_add(&d[h], v);
			n[h]++;
		}
	}
	/* a small lognormal set needs few chunks: far less than dense */
	assert_true(ntp_hset_bytes(a) < NH * sizeof(struct ntp_hist) / 2);
	ntp_hset_merge(all, a, NH);
	ntp_hset_merge(all, b, NH);
	for (unsigned h = 0; h < NH; h++) {
		assert_int_equal(ntp_hset_count(all, h), n[h]);
		assert_int_equal(ntp_hset_count(a, h) + ntp_hset_count(b, h), n[h]);
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			double want = ntp_hist_quantile(&d[h], n[h], qs[i]);

			if (ntp_hset_quantile(all, h, n[h], qs[i]) != want)
				fail_msg("histogram %u q %g: %.1f, dense %.1f", h, qs[i],
					 ntp_hset_quantile(all, h, n[h], qs[i]), want);
		}
	}
	/* reset: empty, and reused without new memory */
	size_t bytes = ntp_hset_bytes(a);

	ntp_hset_reset(a);
	for (unsigned h = 0; h < NH; h++) {
		assert_int_equal(ntp_hset_count(a, h), 0);
		assert_true(ntp_hset_quantile(a, h, 0, 0.5) == 0);
	}
	ntp_hset_add(a, 3, -5);
	assert_true(ntp_hset_quantile(a, 3, 1, 0.5) == -5);
	assert_int_equal(ntp_hset_bytes(a), bytes);
	assert_false(a->oom || all->oom);
	/* reset and free clear the directory's rows that chunks were handed
	 * to (rows), whether by add or by merge: every entry is zero after */
	static const struct ntp_hset zero;

	ntp_hset_reset(all);
	assert_memory_equal(all->dir, zero.dir, sizeof(zero.dir));
	assert_int_equal(all->rows, 0);
	ntp_hset_free(b);
	assert_memory_equal(b->dir, zero.dir, sizeof(zero.dir));
	assert_null(b->chunks);
	ntp_hset_free(a);
	ntp_hset_free(b);
	ntp_hset_free(all);
	free(a);
	free(b);
	free(all);
	free(d);
}

/*
 * A dense histogram's non-negative counts taken into a set (model.c's end to
 * end, counted densely per command, into its set at a close): the set then
 * holds what adding each value to it gives (counts, quantiles, and no chunk
 * for a part of the range without counts), with negative values added to
 * the set directly, and the dense one is left zeroed; a second take adds.
 */
static void test_hset_take_dense(void **state)
{
	static const double qs[] = { 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct ntp_hset *s = calloc(1, sizeof(*s)), *want = calloc(1, sizeof(*want));
	struct ntp_hist *d = calloc(1, sizeof(*d));
	uint64_t n = 0;

	(void)state;
	assert_non_null(s);
	assert_non_null(want);
	assert_non_null(d);
	srandom(9);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 100000; i++) {
			int64_t v = round ? gen_signed() : gen_lognormal();

			if (v >= 0)
				d->pos[ntp_hist_index((uint64_t)v)]++;
			else
				ntp_hset_add(s, 1, v);
			ntp_hset_add(want, 1, v);
			n++;
		}
		ntp_hset_take_dense(s, 1, d->pos);
		for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++)
			assert_int_equal(d->pos[i], 0);
		assert_int_equal(ntp_hset_count(s, 1), n);
		assert_int_equal(ntp_hset_bytes(s), ntp_hset_bytes(want));
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
			if (ntp_hset_quantile(s, 1, n, qs[i]) != ntp_hset_quantile(want, 1, n, qs[i]))
				fail_msg("round %d q %g: %.1f, want %.1f", round, qs[i], ntp_hset_quantile(s, 1, n, qs[i]),
					 ntp_hset_quantile(want, 1, n, qs[i]));
	}
	assert_int_equal(ntp_hset_count(s, 0), 0);
	assert_false(s->oom);
	ntp_hset_free(s);
	ntp_hset_free(want);
	free(s);
	free(want);
	free(d);
}

/* The q-quantile by the definition (hist.h), bucket by bucket over the
 * dense histogram: the rank ceil(q n) in [1, n], most negative first. */
static double naive_quantile(const struct ntp_hist *h, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)n), seen = 0;

	if (!n)
		return 0;
	rank = rank < 1 ? 1 : rank > n ? n : rank;
	for (unsigned i = NTP_HIST_BUCKETS; i-- > 0;)
		if ((seen += h->neg[i]) >= rank)
			return -((double)ntp_hist_bucket_low(i) + (double)(ntp_hist_bucket_width(i) - 1) / 2.0);
	for (unsigned i = 0; i < NTP_HIST_BUCKETS; i++)
		if ((seen += h->pos[i]) >= rank)
			return (double)ntp_hist_bucket_low(i) + (double)(ntp_hist_bucket_width(i) - 1) / 2.0;
	return (double)ntp_hist_bucket_low(NTP_HIST_BUCKETS - 1) +
	       (double)(ntp_hist_bucket_width(NTP_HIST_BUCKETS - 1) - 1) / 2.0;
}

/*
 * Several quantiles in one walk (ntp_hset_quantiles, chunks without a
 * rank passed whole) give each what the definition does: sets of every
 * size from empty to many values, of both signs, several quantiles in one
 * bucket or one chunk, a count n below the values held (ranks end early).
 */
static void test_hset_quantiles_one_walk(void **state)
{
	static const double qs[] = { 0.001, 0.25, 0.5, 0.5, 0.9, 0.99, 0.999, 0.9999 };
	enum { NQ = sizeof(qs) / sizeof(qs[0]) };
	int64_t (*gens[])(void) = { gen_lognormal, gen_uniform_wide, gen_small, gen_signed };
	struct ntp_hset *s = calloc(1, sizeof(*s));
	struct ntp_hist *d = calloc(1, sizeof(*d));

	(void)state;
	assert_non_null(s);
	assert_non_null(d);
	srandom(11);
	for (unsigned round = 0; round < 200; round++) {
		unsigned n = round < 20 ? round : (unsigned)random() % 5000, g = round % 4;
		double out[NQ];

		ntp_hset_reset(s);
		ntp_hist_reset(d);
		for (unsigned i = 0; i < n; i++) {
			int64_t v = gens[g]();

			ntp_hset_add(s, 1, v);
			ntp_hist_add(d, v);
		}
		for (unsigned k = 0; k < 2; k++) {
			uint64_t cnt = k ? n / 2 : n;	/* k 1: fewer than held */

			ntp_hset_quantiles(s, 1, cnt, qs, out, NQ);
			for (unsigned i = 0; i < NQ; i++) {
				double want = naive_quantile(d, cnt, qs[i]);

				if (out[i] != want || ntp_hset_quantile(s, 1, cnt, qs[i]) != want)
					fail_msg("round %u n %u q %g: %.1f (alone %.1f), by definition %.1f", round,
						 (unsigned)cnt, qs[i], out[i], ntp_hset_quantile(s, 1, cnt, qs[i]), want);
			}
		}
	}
	ntp_hset_free(s);
	free(s);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_bound),
		cmocka_unit_test(test_quantiles_lognormal),
		cmocka_unit_test(test_quantiles_wide),
		cmocka_unit_test(test_quantiles_small),
		cmocka_unit_test(test_quantiles_signed),
		cmocka_unit_test(test_merge_reset_empty),
		cmocka_unit_test(test_hset_equals_dense),
		cmocka_unit_test(test_hset_take_dense),
		cmocka_unit_test(test_hset_quantiles_one_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
