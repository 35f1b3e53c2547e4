// SPDX-License-Identifier: GPL-2.0
/*
 * crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of every .ntp header and block.
 *
 * The reader checks every byte it returns, so this sits on the hot path of
 * `ntprof report`: on x86-64 with SSE4.2 the crc32 instruction does 8 bytes
 * per step, and three independent streams are run side by side to hide its
 * 3-cycle latency; the streams are joined with a carry-less multiplication
 * (PCLMULQDQ) by a power of x (docs/performance.md says why this and not
 * a library). With SSE4.2 alone one stream, elsewhere a slicing-by-8 table
 * version. All give the same result (tested).
 *
 * Convention: ntp_crc32c(0, buf, len) is the standard CRC-32C (initial value
 * ~0, final xor ~0), and ntp_crc32c(crc, more, n) continues a previous result.
 */
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "ntpfile.h"

#define POLY 0x82F63B78u

static uint32_t tab8[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;
static int have_sse42, have_pclmul;

static void tables_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		tab8[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			tab8[t][i] = (tab8[t - 1][i] >> 8) ^ tab8[0][tab8[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2");
	have_pclmul = __builtin_cpu_supports("pclmul");
#endif
}

/* Raw (no pre/post inversion) slicing-by-8 update. */
static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ tab8[0][(c ^ *p++) & 0xff];
		n--;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= c;
		c = tab8[7][w & 0xff] ^ tab8[6][(w >> 8) & 0xff] ^
		    tab8[5][(w >> 16) & 0xff] ^ tab8[4][(w >> 24) & 0xff] ^
		    tab8[3][(w >> 32) & 0xff] ^ tab8[2][(w >> 40) & 0xff] ^
		    tab8[1][(w >> 48) & 0xff] ^ tab8[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ tab8[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
/*
 * x^n mod P, bit-reflected as the crc32 instruction keeps its state (bit i
 * of a 32-bit value is the coefficient of x^(31-i)). Two facts of that
 * representation: the carry-less product of two 32-bit values, read as 64
 * bits, is x * A * B, and crc32 of 64 data bits D from a zero state is
 * D * x^32 mod P; so "crc32(0, clmul(a, a))" squares a and multiplies it by
 * x^33, and the same with the product shifted up one bit (a division by x)
 * multiplies by x^32. Square and multiply from a small power: n is halved
 * (less 16) until it is below 192, the bits that halving drops recorded,
 * then each squaring restores one: 2m + 33 - low = n with low = 1 for an
 * even n. The small power x^(32q + r) is x^r shifted by q crc32 steps of
 * zero data (each a multiplication by x^32). log2(n) steps: a block's
 * three streams need two such powers per call.
 */
__attribute__((target("sse4.2,pclmul")))
static uint32_t xpow_mod(uint64_t n)
{
	uint64_t drops = 0, depth = 0;
	uint32_t acc;

	for (; n > 191; n = (n >> 1) - 16, depth++)
		drops |= (uint64_t)(~n & 1) << depth;	/* low of this level: 1 for an even n */
	acc = 0x80000000u >> (n & 31);			/* x^(n mod 32) */
	for (n >>= 5; n; n--)
		acc = __builtin_ia32_crc32si(acc, 0);	/* times x^32 */
	while (depth--) {
		__m128i a = _mm_cvtsi32_si128((int)acc);
		uint64_t y = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(a, a, 0));

		acc = (uint32_t)__builtin_ia32_crc32di(0, y << ((drops >> depth) & 1));
	}
	return acc;
}

/* A raw CRC state c followed by n bytes, as 64 bits to xor into the
 * 8 data bytes at the end of those n (n >= 8): C * x^(8n - 32) as clmul
 * gives it (the x of the product is the 33rd). */
__attribute__((target("sse4.2,pclmul")))
static uint64_t shift_over(uint32_t c, size_t n)
{
	__m128i a = _mm_cvtsi32_si128((int)c), k = _mm_cvtsi32_si128((int)xpow_mod((uint64_t)n * 8 - 33));

	return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(a, k, 0));
}

/* One stream: the crc32 instruction's latency (3 cycles per 8 bytes). */
__attribute__((target("sse4.2")))
static uint32_t crc_hw1(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c0 = c;

	while (n && ((uintptr_t)p & 7)) {
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
		n--;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c0 = __builtin_ia32_crc32di(c0, w);
		p += 8;
		n -= 8;
	}
	while (n--)
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
	return (uint32_t)c0;
}

/*
 * Three streams side by side hide the instruction's latency: one crc32
 * per cycle, 8 bytes (a records block is read at the instruction's
 * throughput, the reader's part of every report). The buffer is cut in
 * three equal parts of k bytes (a multiple of 32: four steps a turn) and
 * 8 to 103 left over; the first two
 * streams' states are carried over the rest by xoring shift_over() into
 * the 8 bytes after the third (raw CRCs are linear: crc(A||B) =
 * crc(A) * x^(8|B|) ^ crc0(B)). The parts are not a multiple of 4 KiB
 * apart unless by chance, where fixed 4 KiB streams made the three loads
 * of a step contend for one cache set. Below HW3_MIN bytes the two powers
 * cost more than the streams save.
 */
#define HW3_MIN 1024
__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_hw3(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c0, c1 = 0, c2 = 0, w, x;
	size_t head = (size_t)(-(uintptr_t)p & 7), k;	/* to the streams' aligned loads */

	if (n < HW3_MIN + head)
		return crc_hw1(c, p, n);
	c0 = head ? crc_hw1(c, p, head) : c;
	p += head;
	n -= head;
	k = (n - 8) / 96 * 32;		/* whole steps of 32 bytes a stream */
	for (size_t i = 0; i < k; i += 32) {
#pragma GCC unroll 4
		for (size_t j = i; j < i + 32; j += 8) {
			memcpy(&w, p + j, 8);
			c0 = __builtin_ia32_crc32di(c0, w);
			memcpy(&w, p + k + j, 8);
			c1 = __builtin_ia32_crc32di(c1, w);
			memcpy(&w, p + 2 * k + j, 8);
			c2 = __builtin_ia32_crc32di(c2, w);
		}
	}
	x = shift_over((uint32_t)c0, 2 * k + 8) ^ shift_over((uint32_t)c1, k + 8);
	memcpy(&w, p + 3 * k, 8);
	c2 = __builtin_ia32_crc32di(c2, w ^ x);
	return crc_hw1((uint32_t)c2, p + 3 * k + 8, n - 3 * k - 8);
}
#endif

uint32_t ntp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;

	pthread_once(&tab_once, tables_init);
#if defined(__x86_64__)
	if (have_sse42 && have_pclmul)
		return ~crc_hw3(c, buf, len);
	if (have_sse42)
		return ~crc_hw1(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}

/* The table version alone, so tests can check both paths agree. */
uint32_t ntp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return ~crc_sw(~crc, buf, len);
}
