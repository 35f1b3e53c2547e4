// SPDX-License-Identifier: GPL-2.0
/* test_join_align.c - the alignment's offset from a host sample and a target
 * sample, found through the target's command table (join_align.c), against
 * the walk it replaced: both samples sorted by command and time, walked side
 * by side, each command's instances given to best_shift, the differences'
 * densest window. Random samples over few commands (many instances of one
 * command, host instances the target lacks and the reverse), any times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* the file's static functions, its one external one renamed (the library's
 * copy is linked in too) */
#define ntp_join_align test_copy_of_ntp_join_align
#include "../../src/core/join_align.c"
#undef ntp_join_align

static int cmp_ref(const void *pa, const void *pb)
{
	const struct mark *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->slba != b->slba)
		return a->slba < b->slba ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->opcode != b->opcode)
		return a->opcode < b->opcode ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* The walk over two sorted samples (the reference). */
static size_t ref_offset(struct mark *h, size_t nh, struct mark *t, size_t nt, int64_t *d, int64_t *out)
{
	size_t i = 0, j = 0, nd = 0, l = 0, best = 0, best_l = 0;
	static int64_t ht[ALIGN_SAMPLE], tt[ALIGN_SAMPLE];

	qsort(h, nh, sizeof(*h), cmp_ref);
	qsort(t, nt, sizeof(*t), cmp_ref);
	while (i < nh && j < nt) {
		if (same_cmd(&h[i], &t[j])) {
			size_t i1 = i, j1 = j;

			while (i1 < nh && same_cmd(&h[i1], &h[i]))
				i1++;
			while (j1 < nt && same_cmd(&t[j1], &t[j]))
				j1++;
			for (size_t k = i; k < i1; k++)
				ht[k - i] = h[k].t;
			for (size_t k = j; k < j1; k++)
				tt[k - j] = t[k].t;
			nd = best_shift(ht, i1 - i, tt, j1 - j, d, nd);
			i = i1;
			j = j1;
		} else if (cmp_ref(&h[i], &t[j]) < 0) {
			i++;
		} else {
			j++;
		}
	}
	if (nd < ALIGN_MIN_PAIRS)
		return 0;
	sort_i64(d, nd);
	for (size_t r = 0; r < nd; r++) {
		while ((__int128)d[r] - d[l] > ALIGN_WINDOW_NS)
			l++;
		if (r - l + 1 > best) {
			best = r - l + 1;
			best_l = l;
		}
	}
	*out = d[best_l + best / 2];
	return best;
}

static struct mark random_mark(unsigned keys, unsigned lbas, int64_t t)
{
	struct mark m;

	memset(&m, 0, sizeof(m));
	m.key = (uint64_t)(random() % keys) << 16 | 1;
	m.slba = (uint64_t)(random() % lbas);
	m.len = random() % 8 ? 4096 : 8192;
	m.opcode = random() % 4 ? 2 : 1;
	m.t = t;
	return m;
}

static void one_case(unsigned keys, unsigned lbas, size_t nh, size_t nt, int wild, unsigned seed)
{
	static struct mark h[ALIGN_SAMPLE], t[ALIGN_SAMPLE], hc[ALIGN_SAMPLE], tc[ALIGN_SAMPLE];
	static int64_t d1[ALIGN_SAMPLE], d2[ALIGN_SAMPLE];
	int64_t off = (int64_t)(random() % 1000000000) - 500000000, o1 = 0, o2 = 0;
	struct tindex x;
	size_t c1, c2;

	srandom(seed);
	/* the target's instances, then host instances: copies of some of them
	 * at the offset plus a trip, and commands of their own */
	for (size_t j = 0; j < nt; j++)
		t[j] = random_mark(keys, lbas, wild && random() % 50 == 0 ? (int64_t)((uint64_t)random() << 33)
									    : (int64_t)(j * 5000 + random() % 3000));
	for (size_t i = 0; i < nh; i++) {
		if (nt && random() % 3) {
			h[i] = t[(size_t)random() % nt];
			h[i].t = h[i].t - off - 20000 - random() % 4000;
		} else {
			h[i] = random_mark(keys, lbas, (int64_t)(i * 5000));
		}
		if (wild && random() % 40 == 0)
			h[i].t = (int64_t)((uint64_t)random() << 40 ^ (uint64_t)random());
	}
	memcpy(hc, h, nh * sizeof(*h));
	memcpy(tc, t, nt * sizeof(*t));
	c1 = ref_offset(hc, nh, tc, nt, d1, &o1);
	memset(&x, 0, sizeof(x));
	assert_int_equal(tindex_build(&x, t, nt), 0);
	c2 = median_offset(h, nh, &x, nt, d2, &o2);
	/* a second host sample on the same table (the stamps tell the calls apart) */
	c2 = median_offset(h, nh, &x, nt, d2, &o2);
	tindex_free(&x);
	assert_int_equal(c2, c1);
	if (c1)
		assert_int_equal(o2, o1);
}

static void test_align_against_walk(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 60; seed++) {
		srandom(seed);
		/* commands of many instances, of one or two, none in common */
		one_case(1 + seed % 5, 1 + seed % 7, 300 + seed * 7, 200 + seed * 11, seed % 3 == 0, seed);
		one_case(64, 4096, 4096, 32768, seed % 2, seed + 1000);
		one_case(2, 3, 700, 900, 1, seed + 2000);	/* past ALIGN_GROUP_MAX instances */
	}
	one_case(5, 5, 0, 100, 0, 7);
	one_case(5, 5, 100, 0, 0, 8);
}

/* The differences' radix sort against the merge sort: any 64-bit values,
 * repeats, the extremes. */
static void test_sort_diffs(void **state)
{
	static int64_t a[40000], b[40000];

	(void)state;
	srandom(3);
	for (size_t n = 0; n <= 40000; n = n * 3 + 7) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = (uint64_t)random() << 42 ^ (uint64_t)random() << 21 ^ (uint64_t)random();

			a[i] = random() % 5 == 0 ? (int64_t)(v % 7) - 3 : random() % 50 == 0 ? INT64_MIN
			     : random() % 50 == 0 ? INT64_MAX : (int64_t)v;
		}
		memcpy(b, a, n * sizeof(*a));
		sort_diffs(a, n);
		sort_i64(b, n);
		assert_memory_equal(a, b, n * sizeof(*a));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align_against_walk),
		cmocka_unit_test(test_sort_diffs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
