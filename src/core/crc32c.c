// SPDX-License-Identifier: GPL-2.0
/*
 * crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of every .ntp header and block.
 *
 * The reader checks every byte it returns, so this sits on the hot path of
 * `ntprof report`: on x86-64 with SSE4.2 the crc32 instruction does 8 bytes
 * per step, and three independent streams are run side by side to hide its
 * 3-cycle latency; the streams are combined with a carry-less "shift by N
 * zero bytes" operator built from tables at first use (docs/performance.md
 * says why this and not a library). Elsewhere a
 * slicing-by-8 table version is used. Both give the same result (tested).
 *
 * Convention: ntp_crc32c(0, buf, len) is the standard CRC-32C (initial value
 * ~0, final xor ~0), and ntp_crc32c(crc, more, n) continues a previous result.
 */
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include "ntpfile.h"

#define POLY 0x82F63B78u

static uint32_t tab8[8][256];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;
static int have_sse42;

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
 * Shifting a raw CRC state over LEN zero bytes is linear over GF(2): a
 * 32x32 bit matrix, applied here with four 256-entry tables (one per input
 * byte). Built once for the stream length used below.
 */
#define STREAM 4096			/* bytes per stream per round */
static uint32_t shift_tab[4][256];

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (int i = 0; vec; i++, vec >>= 1)
		if (vec & 1)
			sum ^= mat[i];
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		sq[n] = gf2_times(mat, mat[n]);
}

static void shift_init(void)
{
	uint32_t odd[32], even[32], m[32], r[32];
	size_t len = STREAM;

	/* operator for one zero bit, then squared up to one zero byte (zlib's crc32_combine) */
	odd[0] = POLY;
	for (int n = 1; n < 32; n++)
		odd[n] = 1u << (n - 1);
	gf2_square(even, odd);		/* 2 bits */
	gf2_square(odd, even);		/* 4 bits */
	gf2_square(m, odd);		/* 8 bits = one byte */
	/* r = identity, then multiply in the powers of m for each set bit of len */
	for (int n = 0; n < 32; n++)
		r[n] = 1u << n;
	while (len) {
		if (len & 1) {
			uint32_t t[32];

			for (int n = 0; n < 32; n++)
				t[n] = gf2_times(m, r[n]);
			memcpy(r, t, sizeof(r));
		}
		len >>= 1;
		if (len) {
			uint32_t t[32];

			gf2_square(t, m);
			memcpy(m, t, sizeof(m));
		}
	}
	for (int b = 0; b < 4; b++)
		for (uint32_t v = 0; v < 256; v++)
			shift_tab[b][v] = gf2_times(r, v << (8 * b));
}

static inline uint32_t shift_stream(uint32_t c)
{
	return shift_tab[0][c & 0xff] ^ shift_tab[1][(c >> 8) & 0xff] ^
	       shift_tab[2][(c >> 16) & 0xff] ^ shift_tab[3][c >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c0 = c;

	while (n && ((uintptr_t)p & 7)) {
		c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
		n--;
	}
	/* three interleaved streams of STREAM bytes each */
	while (n >= 3 * STREAM) {
		uint64_t c1 = 0, c2 = 0, w;

		for (size_t i = 0; i < STREAM; i += 64) {
			/* Each stream starts a new page every round, where the
			 * hardware prefetcher stops: fetch the next round's lines
			 * a round ahead (prefetches never fault, even past the end). */
			__builtin_prefetch(p + 3 * STREAM + i);
			__builtin_prefetch(p + 4 * STREAM + i);
			__builtin_prefetch(p + 5 * STREAM + i);
#pragma GCC unroll 8
			for (size_t j = i; j < i + 64; j += 8) {
				memcpy(&w, p + j, 8);
				c0 = __builtin_ia32_crc32di(c0, w);
				memcpy(&w, p + STREAM + j, 8);
				c1 = __builtin_ia32_crc32di(c1, w);
				memcpy(&w, p + 2 * STREAM + j, 8);
				c2 = __builtin_ia32_crc32di(c2, w);
			}
		}
		/* raw CRC is linear: crc(A||B) = shift(crc(A), |B|) ^ crc0(B) */
		c0 = shift_stream((uint32_t)c0) ^ c1;
		c0 = shift_stream((uint32_t)c0) ^ c2;
		p += 3 * STREAM;
		n -= 3 * STREAM;
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
#endif

static void init_all(void)
{
	tables_init();
#if defined(__x86_64__)
	shift_init();
#endif
}

uint32_t ntp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;

	pthread_once(&tab_once, init_all);
#if defined(__x86_64__)
	if (have_sse42)
		return ~crc_hw(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}

/* The table version alone, so tests can check both paths agree. */
uint32_t ntp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tab_once, init_all);
	return ~crc_sw(~crc, buf, len);
}
