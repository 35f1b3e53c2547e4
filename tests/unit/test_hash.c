// SPDX-License-Identifier: GPL-2.0
/*
 * test_hash.c - the coordinated-sampling hash of bpf/ntprof_hash.h against
 * the test vectors of docs/sampling-hash.md (computed there by an
 * independent Python implementation of the pseudo-code), and its sampling
 * ratio over structured inputs like real I/O streams.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include "ntprof_hash.h"

static const struct {
	uint16_t cid;
	uint64_t slba;
	uint16_t nlb;
	uint64_t hash;
	unsigned mod2, mod100, mod1000;
} vec[] = {
	/* cid, slba, nlb (0-based), ntp_sample_hash, hash % 2, % 100, % 1000 */
	{ 0x0000, 0x0000000000000000ull, 0x0000, 0xa706dd2f4d197e6full, 1, 55, 55 },
	{ 0x0001, 0x0000000000000000ull, 0x0000, 0xf884bef13264f483ull, 1, 91, 491 },
	{ 0x0000, 0x0000000000000001ull, 0x0000, 0x5e41ab087439611eull, 0, 58, 158 },
	{ 0x0000, 0x0000000000000000ull, 0x0001, 0x08b4fda8c892b50eull, 0, 30, 430 },
	{ 0x1001, 0x0000000000012345ull, 0x0007, 0x1e2f02537245d58dull, 1, 9, 309 },
	{ 0x3fff, 0x0000000000000000ull, 0x00ff, 0x6875c01052e5839cull, 0, 72, 972 },
	{ 0xffff, 0xffffffffffffffffull, 0xffff, 0xe95677299c66e604ull, 0, 36, 236 },
	{ 0x2005, 0x00000000001ffff8ull, 0x0007, 0x0bd588010fa9dfeeull, 0, 6, 6 },
	{ 0x5a5a, 0x1122334455667788ull, 0x001f, 0x9da784872d485c7dull, 1, 85, 885 },
	{ 0x002a, 0x0000000000000008ull, 0x0000, 0x2d8a9e17a798cd61ull, 1, 85, 185 },
	{ 0x1001, 0x00000000000002d0ull, 0x0007, 0xd70a45133454450cull, 0, 0, 900 },
	{ 0x1001, 0x00000000000003b8ull, 0x0007, 0x59fca147613aa980ull, 0, 0, 0 },
};

static void test_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		uint64_t h = ntp_sample_hash(vec[i].cid, vec[i].slba, vec[i].nlb);

		assert_int_equal(h, vec[i].hash);
		assert_int_equal(h % 2, vec[i].mod2);
		assert_int_equal(h % 100, vec[i].mod100);
		assert_int_equal(h % 1000, vec[i].mod1000);
		assert_int_equal(ntp_sample_pick(vec[i].cid, vec[i].slba, vec[i].nlb, 100), vec[i].mod100 == 0);
		assert_int_equal(ntp_sample_pick(vec[i].cid, vec[i].slba, vec[i].nlb, 2), vec[i].mod2 == 0);
		/* n = 0 and n = 1 take every command */
		assert_true(ntp_sample_pick(vec[i].cid, vec[i].slba, vec[i].nlb, 0));
		assert_true(ntp_sample_pick(vec[i].cid, vec[i].slba, vec[i].nlb, 1));
	}
	/* splitmix64's finaliser of 0 (a published value) */
	assert_int_equal(ntp_hash_mix64(0), 0xe220a8397b1dcdafull);
}

/* Deterministic input streams shaped like real I/O. */
static void input(int kind, uint64_t i, uint16_t *cid, uint64_t *slba, uint16_t *nlb)
{
	switch (kind) {
	case 0:	/* sequential 4 KiB reads, QD 32: tags cycle, genctr bumps */
		*cid = (uint16_t)((((i / 32) & 0xf) << 12) | (i % 32));
		*slba = i * 8;
		*nlb = 7;
		break;
	case 1:	/* one tag, one LBA, genctr only: a hot block re-read at QD 1 */
		*cid = (uint16_t)(((i & 0xf) << 12) | 3);
		*slba = 4096 + (i >> 4) * 8;
		*nlb = 7;
		break;
	case 2:	/* 128 KiB strided writes, LBA space scattered */
		*cid = (uint16_t)(i * 7919);
		*slba = (i * 0x9E3779B1ull) & ((1ull << 40) - 8);
		*nlb = 255;
		break;
	default: /* mixed sizes */
		*cid = (uint16_t)(i & 0xfff);
		*slba = i << 3;
		*nlb = (uint16_t)((8u << (i % 6)) - 1);
		break;
	}
}

/*
 * 1 M inputs per stream, one in N picked: the count is binomial (1e6, 1/N);
 * the bound of 6 standard deviations is met by a fair hash with probability
 * 1 - 2e-9, and the inputs are fixed, so the test cannot flake.
 * The residues mod 100 are also checked for flatness (chi-square, 99 degrees
 * of freedom: mean 99, sd 14; bound 99 + 6 sd).
 */
static void test_ratio(void **state)
{
	static const uint32_t ns[] = { 2, 7, 100, 1000 };
	const uint64_t total = 1000000;

	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		uint64_t bucket[100] = { 0 };
		double chi2 = 0;

		for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
			uint64_t picked = 0;
			double p = 1.0 / ns[j], mean = total * p, sd = sqrt(total * p * (1 - p));

			for (uint64_t i = 0; i < total; i++) {
				uint16_t cid, nlb;
				uint64_t slba;

				input(kind, i, &cid, &slba, &nlb);
				picked += ntp_sample_pick(cid, slba, nlb, ns[j]);
				if (j == 0)
					bucket[ntp_sample_hash(cid, slba, nlb) % 100]++;
			}
			if (fabs(picked - mean) > 6 * sd)
				fail_msg("stream %d, n=%u: %llu picked of %llu, expected %.0f +- %.0f", kind, ns[j],
					 (unsigned long long)picked, (unsigned long long)total, mean, 6 * sd);
		}
		for (int b = 0; b < 100; b++)
			chi2 += (bucket[b] - total / 100.0) * (bucket[b] - total / 100.0) / (total / 100.0);
		if (chi2 > 99 + 6 * 14)
			fail_msg("stream %d: residues mod 100 not flat, chi2 = %.1f", kind, chi2);
	}
}

/* Host and target see the same (cid, slba, nlb): the same pick, and a
 * change of any input bit changes the pick independently. */
static void test_avalanche(void **state)
{
	uint64_t flips = 0, trials = 0;

	(void)state;
	for (uint64_t i = 0; i < 20000; i++) {
		uint16_t cid = (uint16_t)i, nlb = 7;
		uint64_t slba = i * 8, h = ntp_sample_hash(cid, slba, nlb);

		for (int b = 0; b < 64; b++) {
			flips += (uint64_t)__builtin_popcountll(h ^ ntp_sample_hash(cid, slba ^ (1ull << b), nlb));
			trials++;
		}
		for (int b = 0; b < 16; b++) {
			flips += (uint64_t)__builtin_popcountll(h ^ ntp_sample_hash((uint16_t)(cid ^ (1u << b)), slba, nlb));
			flips += (uint64_t)__builtin_popcountll(h ^ ntp_sample_hash(cid, slba, (uint16_t)(nlb ^ (1u << b))));
			trials += 2;
		}
	}
	/* each input bit flips half of the 64 output bits on average */
	assert_true(fabs((double)flips / trials - 32.0) < 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_avalanche),
	};

	return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
