// SPDX-License-Identifier: GPL-2.0
/*
 * test_crc32c.c - CRC-32C (src/core/store/crc32c.c): the check values, and every
 * implementation this CPU can run (ntp_crc32c_has) against the table
 * version: every length up to past the folding's and the three streams'
 * thresholds at every alignment of a register, the edges of the folding
 * beside the streams, records blocks' sizes and long buffers, and a CRC
 * continued over a second buffer against one pass.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/store/ntpfile.h"

static const char *const impl_name[NTP_CRC_IMPLS] = {
	"table", "crc32 one stream", "crc32 three streams", "fold 256", "fold 512",
	"fold 512 beside three streams",
};

static uint8_t *pattern(size_t n, uint32_t mul)
{
	uint8_t *b = malloc(n);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * mul >> 13);
	return b;
}

static void test_check_values(void **state)
{
	static const char check[] = "123456789";
	uint8_t zero[32] = { 0 };

	(void)state;
	for (int v = 0; v < NTP_CRC_IMPLS; v++) {
		if (!ntp_crc32c_has(v))
			continue;
		/* the CRC-32C check value (RFC 3720 / iSCSI), 32 zero bytes (B.4) */
		assert_int_equal(ntp_crc32c_by(v, 0, check, 9), 0xE3069283u);
		assert_int_equal(ntp_crc32c_by(v, 0, "", 0), 0);
		assert_int_equal(ntp_crc32c_by(v, 0, zero, 32), 0x8A9136AAu);
	}
	assert_int_equal(ntp_crc32c(0, check, 9), 0xE3069283u);
	assert_int_equal(ntp_crc32c_sw(0, check, 9), 0xE3069283u);
	/* the table version always runs; x86-64 has SSE4.2 where the tests run */
	assert_true(ntp_crc32c_has(NTP_CRC_TABLE));
	assert_false(ntp_crc32c_has(NTP_CRC_IMPLS));
	for (int v = 0; v < NTP_CRC_IMPLS; v++)
		print_message("crc32c: %s: %s\n", impl_name[v], ntp_crc32c_has(v) ? "tested" : "not on this CPU");
}

/* The table version's CRC of len bytes at p (offset a in its line) from
 * state c, after every other implementation this CPU has gave the same. */
static uint32_t every_impl(uint32_t c, const uint8_t *p, size_t len, size_t a)
{
	uint32_t want = ntp_crc32c_sw(c, p, len);

	for (int v = 1; v < NTP_CRC_IMPLS; v++)
		if (ntp_crc32c_has(v) && ntp_crc32c_by(v, c, p, len) != want)
			fail_msg("%s: length %zu at offset %zu", impl_name[v], len, a);
	return want;
}

/* Every length from 0 to past 1 KiB (the folding's start, its loops of
 * four registers and of one, its tail; the three streams' threshold) at
 * every offset from a 64-byte line, from a nonzero state. */
static void test_every_length(void **state)
{
	uint8_t *buf = pattern(1200 + 64, 2654435761u);

	(void)state;
	for (size_t len = 0; len <= 1200; len++)
		for (size_t a = 0; a < 64; a += len < 700 ? 1 : 5) {
			uint32_t want = every_impl(0x1234567u, buf + a, len, a);

			assert_int_equal(ntp_crc32c(0x1234567u, buf + a, len), want);
		}
	free(buf);
}

/* Records blocks' sizes (1024 and 4096 records of 272 bytes), a buffer of
 * 4 MiB, and lengths growing by half over the whole of it. */
static void test_long(void **state)
{
	size_t big = 4u << 20;
	uint8_t *b = pattern(big + 64, 2246822519u);

	(void)state;
	for (int v = 1; v < NTP_CRC_IMPLS; v++) {
		if (!ntp_crc32c_has(v))
			continue;
		for (size_t len = 1024 * 272 - 3; len < 1024 * 272 + 3; len++)
			assert_int_equal(ntp_crc32c_by(v, 0, b + 1, len), ntp_crc32c_sw(0, b + 1, len));
		assert_int_equal(ntp_crc32c_by(v, 7, b, 4096 * 272), ntp_crc32c_sw(7, b, 4096 * 272));
		assert_int_equal(ntp_crc32c_by(v, ~0u, b + 33, big), ntp_crc32c_sw(~0u, b + 33, big));
		for (size_t len = 1201; len < big; len = len * 3 / 2 + 7)
			assert_int_equal(ntp_crc32c_by(v, 0, b + (len & 63), len),
					 ntp_crc32c_sw(0, b + (len & 63), len));
	}
	free(b);
}

/* The folding beside three streams (crc32c.c crc_fold512x3) cuts a buffer
 * from 32 KiB on into a folded part and three streams of turns of 256 and
 * 3 x 40 bytes, the rest to one stream: lengths about its threshold and a
 * whole number of turns (plus the 8 bytes that join the streams) from it,
 * at offsets across a 64-byte line; and ntp_crc32c_cached, which runs it,
 * against the table version. */
static void test_mix_edges(void **state)
{
	enum { MIX_MIN = 32 << 10, TURN = 256 + 3 * 40 };
	static const size_t base[] = { MIX_MIN, MIX_MIN + 7 * TURN + 8, MIX_MIN + 100 * TURN + 8, 278552 };
	uint8_t *b = pattern(300000 + 64, 2246822519u);

	(void)state;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		for (size_t len = base[i] - 9; len <= base[i] + 9; len++)
			for (size_t a = 0; a < 64; a += 9) {
				uint32_t want = every_impl(0x89abcdefu, b + a, len, a);

				assert_int_equal(ntp_crc32c_cached(0x89abcdefu, b + a, len), want);
			}
	free(b);
}

/* crc(a || b) is crc(b) continued from crc(a), at cuts short and long of
 * either part, with each implementation on both sides. */
static void test_chained(void **state)
{
	size_t n = 70000;
	uint8_t *b = pattern(n, 2654435761u);
	uint32_t whole = ntp_crc32c_sw(0, b, n);
	static const size_t cut[] = { 0, 1, 7, 63, 64, 255, 256, 257, 511, 1000, 4096, 12345, 34999, 69743, 69999, 70000 };

	(void)state;
	for (int v = 0; v < NTP_CRC_IMPLS; v++) {
		if (!ntp_crc32c_has(v))
			continue;
		assert_int_equal(ntp_crc32c_by(v, 0, b, n), whole);
		for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
			for (int w = 0; w < NTP_CRC_IMPLS; w++)
				if (ntp_crc32c_has(w) &&
				    ntp_crc32c_by(w, ntp_crc32c_by(v, 0, b, cut[i]), b + cut[i], n - cut[i]) != whole)
					fail_msg("%s then %s: cut at %zu", impl_name[v], impl_name[w], cut[i]);
	}
	assert_int_equal(ntp_crc32c(ntp_crc32c(0, b, 12345), b + 12345, n - 12345), whole);
	free(b);
}

/* A flipped bit anywhere changes the CRC (each implementation's own
 * answer, not only its agreement with the table). */
static void test_flip(void **state)
{
	size_t n = 4096, nbig = 40000;
	uint8_t *b = pattern(n, 2654435761u), *big = pattern(nbig, 2246822519u);

	(void)state;
	for (int v = 0; v < NTP_CRC_IMPLS; v++) {
		uint32_t good;

		if (!ntp_crc32c_has(v))
			continue;
		good = ntp_crc32c_by(v, 0, b, n);
		for (size_t i = 0; i < n * 8; i += 13) {
			b[i / 8] ^= (uint8_t)(1u << (i % 8));
			assert_int_not_equal(ntp_crc32c_by(v, 0, b, n), good);
			b[i / 8] ^= (uint8_t)(1u << (i % 8));
		}
		/* past the threshold of the folding beside the streams: a bit
		 * in each of its four parts and in the rest */
		good = ntp_crc32c_by(v, 0, big, nbig);
		for (size_t i = 0; i < nbig * 8; i += 4093) {
			big[i / 8] ^= (uint8_t)(1u << (i % 8));
			assert_int_not_equal(ntp_crc32c_by(v, 0, big, nbig), good);
			big[i / 8] ^= (uint8_t)(1u << (i % 8));
		}
	}
	free(b);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_values),
		cmocka_unit_test(test_every_length),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_mix_edges),
		cmocka_unit_test(test_chained),
		cmocka_unit_test(test_flip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
