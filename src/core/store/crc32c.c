// SPDX-License-Identifier: GPL-2.0
/*
 * crc32c.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of every .ntp header and block.
 *
 * The reader checks every byte it returns, so this sits on the hot path of
 * `ntprof report`, where the CRC's pass is the first touch of a block's
 * memory. Where the CPU has VPCLMULQDQ (with AVX-512, or with AVX2), the
 * buffer is folded with carry-less multiplications, 64 (or 32) bytes per
 * register and four registers side by side, at about the speed of memory;
 * elsewhere on x86-64 with SSE4.2 the crc32 instruction does 8 bytes per
 * step, three streams side by side to hide its latency, joined with one
 * carry-less multiplication (PCLMULQDQ) by a power of x; with SSE4.2 alone
 * one stream, elsewhere a slicing-by-8 table version. The choice is made
 * once, at the first call. A buffer in the core's cache (ntp_crc32c_cached:
 * a block read() has just copied) is folded beside three crc32 streams.
 * All give the same result (tests/unit/test_crc32c.c runs each this CPU
 * can run); docs/performance.md says why this and not a library.
 *
 * Convention: ntp_crc32c(0, buf, len) is the standard CRC-32C (initial value
 * ~0, final xor ~0), and ntp_crc32c(crc, more, n) continues a previous result.
 */
#include <stdbool.h>
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
static int have_sse42, have_pclmul, have_fold256, have_fold512;
static enum ntp_crc_impl best = NTP_CRC_TABLE;	/* what ntp_crc32c runs */
#if defined(__x86_64__)
static void fold_init(void);
#endif

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
	have_fold256 = have_sse42 && have_pclmul && __builtin_cpu_supports("avx2") &&
		       __builtin_cpu_supports("vpclmulqdq");
	have_fold512 = have_fold256 && __builtin_cpu_supports("avx512f");
	if (have_fold256)
		fold_init();
	best = have_fold512 ? NTP_CRC_FOLD512 : have_fold256 ? NTP_CRC_FOLD256 :
	       have_sse42 && have_pclmul ? NTP_CRC_HW3 : have_sse42 ? NTP_CRC_HW1 : NTP_CRC_TABLE;
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
/*
 * Folding. A buffer's bytes, 16 at a time loaded into a 128-bit lane, are
 * a polynomial of degree < 128 in the reflected order (bit k of the lane is
 * the coefficient of x^(127-k) counted from the lane's end): the lane's low
 * 64 bits L and high 64 bits H stand for L * x^64 + H. Moving a lane D bits
 * further on (to xor it into the data there) multiplies it by x^D, and mod
 * P that is two carry-less products with 32-bit constants: L * x^(D+31)
 * and H * x^(D-33), each product carrying the x^33 of clmul's reflected
 * order with a 32-bit operand (see xpow_mod). The constants are computed
 * once by xpow_mod (fold_init). Four registers of lanes run side by side,
 * each folded over the four registers' width a turn; at the end they are
 * folded into the last register, its lanes into the last lane, and that
 * lane's 128 bits become the CRC with two crc32 steps (crc32 of 64 bits
 * multiplies by x^32 mod P: crc32(crc32(0, L), H) = (L * x^64 + H) * x^32).
 * The raw state to continue from is xored into the first 32 bits, as the
 * crc32 instruction does. The head up to the registers' alignment and the
 * tail of fewer than a register's bytes are left to the crc32 instruction;
 * below FOLD_MIN bytes the three streams do it all.
 */
#define FOLD_MIN 256
static uint64_t kfold[17][2];	/* [D / 128]: x^(D+31), x^(D-33) mod P */

__attribute__((target("sse4.2,pclmul")))
static void fold_init(void)
{
	for (unsigned i = 1; i < 17; i++) {
		kfold[i][0] = xpow_mod(128 * i + 31);
		kfold[i][1] = xpow_mod(128 * i - 33);
	}
}

/* The last 128-bit lane, L * x^64 + H, to a raw CRC state. */
__attribute__((target("sse4.2")))
static uint32_t lane_crc(__m128i x)
{
	uint64_t lo = (uint64_t)_mm_cvtsi128_si64(x), hi = (uint64_t)_mm_extract_epi64(x, 1);

	return (uint32_t)__builtin_ia32_crc32di(__builtin_ia32_crc32di(0, lo), hi);
}

/* Lane x moved D = 128 * i bits on, xored with y. */
__attribute__((target("sse4.2,pclmul")))
static __m128i fold128(__m128i x, unsigned i, __m128i y)
{
	__m128i k = _mm_loadu_si128((const __m128i *)kfold[i]);

	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), y);
}

__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
static inline __m256i fold256(__m256i x, __m256i k, __m256i y)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
						 _mm256_clmulepi64_epi128(x, k, 0x11)), y);
}

__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
static inline __m256i kfold256(unsigned i)
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kfold[i]));
}

__attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
static uint32_t crc_fold256(uint32_t c, const uint8_t *p, size_t n)
{
	size_t head = (size_t)(-(uintptr_t)p & 31);
	__m256i x[8], k;

	if (n < FOLD_MIN + head)
		return crc_hw3(c, p, n);
	c = crc_hw1(c, p, head);
	p += head;
	n -= head;
	for (int i = 0; i < 8; i++)
		x[i] = _mm256_load_si256((const __m256i *)(p + 32 * i));
	x[0] = _mm256_xor_si256(x[0], _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)c)));
	k = kfold256(16);
	for (p += 256, n -= 256; n >= 256; p += 256, n -= 256)
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			x[i] = fold256(x[i], k, _mm256_load_si256((const __m256i *)(p + 32 * i)));
#pragma GCC unroll 7
	for (int i = 0; i < 7; i++)
		x[7] = fold256(x[i], kfold256(2 * (7 - i)), x[7]);
	for (k = kfold256(2); n >= 32; p += 32, n -= 32)
		x[7] = fold256(x[7], k, _mm256_load_si256((const __m256i *)p));
	c = lane_crc(fold128(_mm256_castsi256_si128(x[7]), 1, _mm256_extracti128_si256(x[7], 1)));
	return crc_hw1(c, p, n);
}

__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static inline __m512i fold512(__m512i x, __m512i k, __m512i y)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), y, 0x96);
}

__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static inline __m512i kfold512(unsigned i)
{
	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kfold[i]));
}

/* The first 256 bytes at p (on a 64-byte line) in the four registers,
 * the raw state c to continue from xored into the first 32 bits. */
__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static inline void fold512_load(__m512i x[4], const uint8_t *p, uint32_t c)
{
	for (int i = 0; i < 4; i++)
		x[i] = _mm512_load_si512(p + 64 * i);
	x[0] = _mm512_xor_si512(x[0], _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
}

/* The four registers folded into the last. */
__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static inline __m512i fold512_last(const __m512i x[4])
{
	__m512i y = x[3];

#pragma GCC unroll 3
	for (int i = 0; i < 3; i++)
		y = fold512(x[i], kfold512(4 * (3 - i)), y);
	return y;
}

/* A register's four lanes folded into its last, as a raw CRC state. */
__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static inline uint32_t fold512_crc(__m512i x)
{
	__m128i r = _mm512_extracti32x4_epi32(x, 3);

	r = fold128(_mm512_extracti32x4_epi32(x, 2), 1, r);
	r = fold128(_mm512_extracti32x4_epi32(x, 1), 2, r);
	r = fold128(_mm512_castsi512_si128(x), 3, r);
	return lane_crc(r);
}

__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static uint32_t crc_fold512(uint32_t c, const uint8_t *p, size_t n)
{
	size_t head = (size_t)(-(uintptr_t)p & 63);
	__m512i x[4], k;

	if (n < FOLD_MIN + head)
		return crc_hw3(c, p, n);
	c = crc_hw1(c, p, head);
	p += head;
	n -= head;
	fold512_load(x, p, c);
	k = kfold512(16);
	for (p += 256, n -= 256; n >= 256; p += 256, n -= 256)
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			x[i] = fold512(x[i], k, _mm512_load_si512(p + 64 * i));
	x[3] = fold512_last(x);
	for (k = kfold512(4); n >= 64; p += 64, n -= 64)
		x[3] = fold512(x[3], k, _mm512_load_si512(p));
	return crc_hw1(fold512_crc(x[3]), p, n);
}

/*
 * Folding beside three crc32 streams, for a buffer this core has just
 * written (read()'s copy, in its second-level cache): the folding is
 * bound by the carry-less multiplier, the crc32 instruction runs on
 * another unit, and the two side by side check more bytes a cycle than
 * either alone (the "fusion" of github.com/corsix/fast-crc32, here with
 * AVX-512 registers). The buffer is cut in four: A, folded 256 bytes a
 * turn as crc_fold512 does, then B1, B2 and B3, MIX_STREAM bytes a turn
 * each, in the same loop; then A, B1 and B2 are carried over to the 8
 * bytes after B3 as crc_hw3 joins its streams, and the rest goes to one
 * stream. MIX_STREAM balances the two units (docs/performance.md). From
 * memory the four places read at once cost more than they save, and
 * below MIX_MIN bytes the three carries do: crc_fold512 then.
 */
#define MIX_STREAM 40
#define MIX_MIN (32u << 10)
__attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))
static uint32_t crc_fold512x3(uint32_t c, const uint8_t *p, size_t n)
{
	size_t head = (size_t)(-(uintptr_t)p & 63), turns, la, lb;
	uint64_t c1 = 0, c2 = 0, c3 = 0, w, carry;
	const uint8_t *b1, *b2, *b3;
	__m512i x[4], k;

	if (n < MIX_MIN + head)
		return crc_fold512(c, p, n);
	c = crc_hw1(c, p, head);
	p += head;
	n -= head;
	turns = (n - 8) / (256 + 3 * MIX_STREAM);
	la = 256 * turns;
	lb = MIX_STREAM * turns;
	b1 = p + la;
	b2 = b1 + lb;
	b3 = b2 + lb;
	fold512_load(x, p, c);
	k = kfold512(16);
	for (size_t t = 0, o = 0; t < turns; t++, o += MIX_STREAM) {
		if (t) {
#pragma GCC unroll 4
			for (int i = 0; i < 4; i++)
				x[i] = fold512(x[i], k, _mm512_load_si512(p + 256 * t + 64 * i));
		}
#pragma GCC unroll 5
		for (size_t j = o; j < o + MIX_STREAM; j += 8) {
			memcpy(&w, b1 + j, 8);
			c1 = __builtin_ia32_crc32di(c1, w);
			memcpy(&w, b2 + j, 8);
			c2 = __builtin_ia32_crc32di(c2, w);
			memcpy(&w, b3 + j, 8);
			c3 = __builtin_ia32_crc32di(c3, w);
		}
	}
	carry = shift_over(fold512_crc(fold512_last(x)), 3 * lb + 8) ^ shift_over((uint32_t)c1, 2 * lb + 8) ^
		shift_over((uint32_t)c2, lb + 8);
	memcpy(&w, b3 + lb, 8);
	c3 = __builtin_ia32_crc32di(c3, w ^ carry);
	return crc_hw1((uint32_t)c3, b3 + lb + 8, n - la - 3 * lb - 8);
}
#endif

static uint32_t crc_raw(enum ntp_crc_impl impl, uint32_t c, const uint8_t *p, size_t n)
{
	switch (impl) {
#if defined(__x86_64__)
	case NTP_CRC_FOLD512X3:
		return crc_fold512x3(c, p, n);
	case NTP_CRC_FOLD512:
		return crc_fold512(c, p, n);
	case NTP_CRC_FOLD256:
		return crc_fold256(c, p, n);
	case NTP_CRC_HW3:
		return crc_hw3(c, p, n);
	case NTP_CRC_HW1:
		return crc_hw1(c, p, n);
#endif
	default:
		return crc_sw(c, p, n);
	}
}

uint32_t ntp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return ~crc_raw(best, ~crc, buf, len);
}

uint32_t ntp_crc32c_cached(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return ~crc_raw(best == NTP_CRC_FOLD512 ? NTP_CRC_FOLD512X3 : best, ~crc, buf, len);
}

/* The table version alone, so tests can check both paths agree. */
uint32_t ntp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&tab_once, tables_init);
	return ~crc_sw(~crc, buf, len);
}

bool ntp_crc32c_has(enum ntp_crc_impl impl)
{
	pthread_once(&tab_once, tables_init);
	switch (impl) {
	case NTP_CRC_TABLE:
		return true;
	case NTP_CRC_HW1:
		return have_sse42;
	case NTP_CRC_HW3:
		return have_sse42 && have_pclmul;
	case NTP_CRC_FOLD256:
		return have_fold256;
	case NTP_CRC_FOLD512:
	case NTP_CRC_FOLD512X3:
		return have_fold512;
	default:
		return false;
	}
}

uint32_t ntp_crc32c_by(enum ntp_crc_impl impl, uint32_t crc, const void *buf, size_t len)
{
	return ntp_crc32c_has(impl) ? ~crc_raw(impl, ~crc, buf, len) : ntp_crc32c_sw(crc, buf, len);
}
