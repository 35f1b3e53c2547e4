/* SPDX-License-Identifier: GPL-2.0 */
/*
 * digits.h - decimal and hexadecimal digits without printf, for outputs of
 * millions of numbers (`ntprof dump`, dumprow.c), which are bound by their
 * formatting. Every function writes a fixed number of bytes (8 or 10, or
 * more for ntp_put_u64) whatever the length of the number: the caller's
 * buffer keeps that much room past the digits (scratch that the next
 * field overwrites); each returns the end of the digits.
 *
 * Eight digits at a time in one 64-bit register (one digit per byte, most
 * significant in the lowest byte, so one 8-byte store writes them in
 * order): the quotients by 10^4, 10^2 and 10 of the halves, quarters and
 * eighths are taken side by side by multiplying by their reciprocals in
 * fixed point, exact for the ranges they see (v < 10^8, lanes < 10^4,
 * < 10^2). No digit goes through memory in small pieces: digits stored two
 * bytes at a time and then copied on as a whole stall each copy on store
 * forwarding. tests/unit/test_dumprow.c checks them against snprintf().
 */
#ifndef NTP_CORE_DIGITS_H
#define NTP_CORE_DIGITS_H

#include <stdint.h>
#include <string.h>
/* decided once, before any header of intrinsics (which may define
 * __SSE2__ for the code they hold). NTP_NO_SIMD: the scalar code only, as
 * on a CPU without SSE2 (`make check` builds test_dumprow so, mk/check.mk). */
#if defined(__SSE2__) && !defined(NTP_NO_SIMD)
#define NTP_SSE2 1
#include <emmintrin.h>
#endif

#define NTP_ASCII0x8 0x3030303030303030ull	/* '0' in each byte */

/* v < 10^8: its 8 digits 0..9 (not ASCII), most significant in the lowest byte. */
static inline uint64_t ntp_digits8(uint32_t v)
{
	uint64_t x = v, q;

	q = (x * 109951163) >> 40;			/* v / 10^4 */
	x = q | ((x - q * 10000) << 32);		/* 2 lanes of 4 digits */
	q = ((x * 10486) >> 20) & 0x0000007F0000007Full;	/* each / 100 */
	x = q | ((x - q * 100) << 16);			/* 4 lanes of 2 digits */
	q = ((x * 103) >> 10) & 0x000F000F000F000Full;	/* each / 10 */
	return q | ((x - q * 10) << 8);			/* 8 digits */
}

/* 100 and 10 in every 16-bit lane, in variables (digits.c) whose values
 * the compiler does not see: it would turn each multiply by a known 100 or
 * 10 into four or five shifts and adds. */
extern uint16_t ntp_digits_k100[16], ntp_digits_k10[16];

/*
 * ntp_digits8 of each 64-bit lane of x (each < 10^8) in a vector register:
 * the same steps, the divisions by 10^4 in 64-bit lanes, by 100 and by 10
 * as 16-bit multiplies by reciprocals (x * 5243 >> 19 is x / 100 for
 * x < 43699, x * 6554 >> 16 is x / 10 for x < 16389), about half the
 * instructions of ntp_digits8 per lane. One body for both widths: V is the
 * intrinsics' prefix (_mm, _mm256), S the register's suffix (si128, si256).
 */
#define NTP_DIGITS8_LANES(V, S, x)                                                                     \
	({                                                                                              \
		__typeof__(x) x_ = (x), q_, r_;                                                         \
		__typeof__(x) c100_ = V##_load_##S((const __typeof__(x) *)ntp_digits_k100);             \
		__typeof__(x) c10_ = V##_load_##S((const __typeof__(x) *)ntp_digits_k10);               \
		q_ = V##_srli_epi64(V##_mul_epu32(x_, V##_set1_epi64x(109951163)), 40); /* / 10^4 */    \
		r_ = V##_sub_epi64(x_, V##_mul_epu32(q_, V##_set1_epi64x(10000)));                      \
		x_ = V##_or_##S(q_, V##_slli_epi64(r_, 32));	/* lanes of 2 x 4 digits */             \
		q_ = V##_srli_epi16(V##_mulhi_epu16(x_, V##_set1_epi16(5243)), 3);	/* / 100 */     \
		r_ = V##_sub_epi16(x_, V##_mullo_epi16(q_, c100_));                                     \
		x_ = V##_or_##S(q_, V##_slli_epi32(r_, 16));	/* lanes of 4 x 2 digits */             \
		q_ = V##_mulhi_epu16(x_, V##_set1_epi16(6554));	/* / 10 */                              \
		r_ = V##_sub_epi16(x_, V##_mullo_epi16(q_, c10_));                                      \
		V##_or_##S(q_, V##_slli_epi16(r_, 8));	/* lanes of 8 digits */                         \
	})

#ifdef NTP_SSE2
/* Two lanes, in an SSE2 register (every x86-64 has it). */
static inline __attribute__((always_inline)) __m128i ntp_digits8x2_sse(__m128i x)
{
	return NTP_DIGITS8_LANES(_mm, si128, x);
}
#endif

#if defined(NTP_SSE2) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define NTP_HAVE_AVX2_DIGITS 1
/* Four lanes, for CPUs with AVX2 (the caller asks __builtin_cpu_supports
 * first). */
static inline __attribute__((target("avx2"), always_inline)) __m256i ntp_digits8x4_avx2(__m256i x)
{
	return NTP_DIGITS8_LANES(_mm256, si256, x);
}
#endif

/* ntp_digits8 of a and b (each < 10^8), side by side where SSE2 is. */
static inline __attribute__((always_inline)) void ntp_digits8x2(uint32_t a, uint32_t b, uint64_t *da, uint64_t *db)
{
#ifdef NTP_SSE2
	__m128i x = ntp_digits8x2_sse(_mm_set_epi64x((long long)b, (long long)a));

	*da = (uint64_t)_mm_cvtsi128_si64(x);
	*db = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
#else
	*da = ntp_digits8(a);
	*db = ntp_digits8(b);
#endif
}

/* The digits d (ntp_digits8 of a value), leading zeros dropped ("0" for 0);
 * writes 8 bytes at p. */
static inline __attribute__((always_inline)) char *ntp_put_digits(char *p, uint64_t d)
{
	/* leading zeros: the lowest digit that is not 0, or 7 (0 is "0") */
	unsigned lead = (unsigned)__builtin_ctzll(d | 1ull << 56) / 8;

	d = (d | NTP_ASCII0x8) >> (8 * lead);
	memcpy(p, &d, 8);
	return p + 8 - lead;
}

/* v < 10^8, 1 to 8 digits; writes 8 bytes at p. */
static inline __attribute__((always_inline)) char *ntp_put_upto8(char *p, uint32_t v)
{
	return ntp_put_digits(p, ntp_digits8(v));
}

/* v < 10^8, exactly 8 digits (leading zeros kept); writes 8 bytes at p. */
static inline __attribute__((always_inline)) char *ntp_put_8(char *p, uint32_t v)
{
	uint64_t d = ntp_digits8(v) | NTP_ASCII0x8;

	memcpy(p, &d, 8);
	return p + 8;
}

/* Any v, as "%llu" writes it; writes up to 8 bytes past the digits. */
static inline __attribute__((always_inline)) char *ntp_put_u64(char *p, uint64_t v)
{
	uint64_t hi;

	if (v < 100000000)
		return ntp_put_upto8(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi < 100000000) {
		p = ntp_put_upto8(p, (uint32_t)hi);
	} else {
		p = ntp_put_upto8(p, (uint32_t)(hi / 100000000));	/* < 10^4: u64 has 20 digits */
		p = ntp_put_8(p, (uint32_t)(hi % 100000000));
	}
	return ntp_put_8(p, (uint32_t)(v % 100000000));
}

/* "0x%x": 0x and the hex digits of v, no leading zero; writes 10 bytes at p.
 * The nibbles are spread one per byte (most significant in the lowest
 * byte), then made ASCII all at once: + '0', and + 'a' - '0' - 10 more
 * where a nibble is over 9 (adding 6 carries it into bit 4). */
static inline char *ntp_put_hex32(char *p, uint32_t v)
{
	uint64_t x = v;
	unsigned lead = v ? (unsigned)__builtin_clz(v) / 4 : 7;	/* leading zero nibbles */

	x = (x | x << 16) & 0x0000FFFF0000FFFFull;
	x = (x | x << 8) & 0x00FF00FF00FF00FFull;
	x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;	/* nibble k of v in byte k */
	x = __builtin_bswap64(x);			/* most significant first */
	x += NTP_ASCII0x8 + (((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * ('a' - '0' - 10);
	x >>= 8 * lead;
	p[0] = '0';
	p[1] = 'x';
	memcpy(p + 2, &x, 8);
	return p + 2 + 8 - lead;
}

#endif
