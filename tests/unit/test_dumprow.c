// SPDX-License-Identifier: GPL-2.0
/*
 * test_dumprow.c - `ntprof dump`'s formatting without printf (src/core/render/
 * digits.h, dumprow.c) against snprintf(): the digit functions at their
 * edges (0, every power of ten and its neighbours, the largest u64, the
 * boundaries of each fixed-point division), and whole rows of records
 * built to hit every path of the row (its caches kept and replaced, the
 * timestamps' high digits changing within a row, values past 10^8,
 * 10^16, 10^17, 10^19 and up to the largest u64, quoted devices, unknown names), in both flavours (AVX2 and SSE2).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/render/digits.h"
#include "core/render/dumprow.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)	/* xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

/* v and a few of its neighbours, every power of ten around it included */
static void check_u64(uint64_t v)
{
	char got[64], want[32];
	char *end;

	memset(got, 'x', sizeof(got));
	end = ntp_put_u64(got, v);
	snprintf(want, sizeof(want), "%" PRIu64, v);
	assert_int_equal(end - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
}

static void check_upto8(uint32_t v)
{
	char got[16], want[16];
	uint64_t d = ntp_digits8(v);

	snprintf(want, sizeof(want), "%" PRIu32, v);
	assert_int_equal(ntp_put_upto8(got, v) - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	assert_int_equal(ntp_put_digits(got, d) - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	snprintf(want, sizeof(want), "%08" PRIu32, v);
	assert_int_equal(ntp_put_8(got, v) - got, 8);
	assert_memory_equal(got, want, 8);
}

static void check_hex(uint32_t v)
{
	char got[16], want[16];

	snprintf(want, sizeof(want), "0x%x", v);
	assert_int_equal(ntp_put_hex32(got, v) - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
}

static void test_u64(void **state)
{
	uint64_t p = 1;

	(void)state;
	check_u64(0);
	check_u64(UINT64_MAX);
	check_u64(UINT64_MAX - 1);
	for (int k = 0; k < 20; k++, p *= 10) {	/* 10^0 .. 10^19 */
		check_u64(p);
		check_u64(p - 1);
		check_u64(p + 1);
		check_u64(p * 9 + (p - 1));	/* 99...9 */
	}
	for (int b = 0; b < 64; b++) {
		check_u64(1ull << b);
		check_u64((1ull << b) - 1);
		check_u64((1ull << b) + 1);
	}
	/* the splits at 10^8 and 10^16 */
	for (uint64_t v = 100000000ull - 50; v < 100000000ull + 50; v++)
		check_u64(v);
	for (uint64_t v = 10000000000000000ull - 50; v < 10000000000000000ull + 50; v++)
		check_u64(v);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = next();

		check_u64(v >> (next() % 64));	/* every magnitude */
	}
}

static void test_upto8(void **state)
{
	(void)state;
	/* every value below 10^5 (every lane of 4 digits, below 100 and 10) */
	for (uint32_t v = 0; v < 100000; v++)
		check_upto8(v);
	/* each side of every multiple of 10^4 and 10^2 below 10^8, where a
	 * reciprocal's rounding would show first */
	for (uint32_t m = 10000; m < 100000000; m += 10000) {
		check_upto8(m - 1);
		check_upto8(m);
		check_upto8(m + 99);
		check_upto8(m + 9999 - (m / 10000) % 100);
	}
	check_upto8(99999999);
	for (uint32_t v = 0; v < 100000000; v += 9973)
		check_upto8(v);
	for (int i = 0; i < 100000; i++)
		check_upto8((uint32_t)(next() % 100000000));
}

static void test_hex(void **state)
{
	(void)state;
	check_hex(0);
	check_hex(UINT32_MAX);
	for (int b = 0; b < 32; b++) {
		check_hex(1u << b);
		check_hex((1u << b) - 1);
	}
	for (uint32_t v = 0; v < 0x10000; v++)	/* every nibble 0-9 and a-f in each place */
		check_hex(v);
	for (int i = 0; i < 100000; i++)
		check_hex((uint32_t)next());
}

#ifdef NTP_HAVE_AVX2_DIGITS
static __attribute__((target("avx2"), noinline)) void digits8x4(const uint64_t *v, uint64_t *d)
{
	_mm256_storeu_si256((__m256i *)d, ntp_digits8x4_avx2(_mm256_loadu_si256((const __m256i *)v)));
}
#endif

/* The vector flavours give ntp_digits8's digits, lane by lane. */
static void test_lanes(void **state)
{
	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint32_t a = (uint32_t)(next() % 100000000), b = (uint32_t)(next() % 100000000);
		uint64_t da, db;

		if (i < 4) {	/* the ends of the range */
			a = i & 1 ? 99999999 : 0;
			b = i & 2 ? 99999999 : 0;
		}
		ntp_digits8x2(a, b, &da, &db);
		assert_int_equal(da, ntp_digits8(a));
		assert_int_equal(db, ntp_digits8(b));
	}
#ifdef NTP_HAVE_AVX2_DIGITS
	if (!__builtin_cpu_supports("avx2"))
		return;
	for (int i = 0; i < 200000; i++) {
		uint64_t v[4], d[4];

		for (int k = 0; k < 4; k++)
			v[k] = i < 16 ? ((i >> k) & 1) * 99999999ull : next() % 100000000;
		digits8x4(v, d);
		for (int k = 0; k < 4; k++)
			assert_int_equal(d[k], ntp_digits8((uint32_t)v[k]));
	}
#endif
}

/* ---- whole rows against snprintf ---- */

static const char *ref_side(uint8_t s)
{
	return s == NTP_SIDE_HOST ? "host" : s == NTP_SIDE_TARGET ? "target" : "unknown";
}

static const char *ref_transport(uint8_t t)
{
	return t == NTP_TRANSPORT_TCP ? "tcp" : t == NTP_TRANSPORT_RDMA ? "rdma" : "unknown";
}

static const char *ref_impl(uint8_t i)
{
	return i == NTP_IMPL_LINUX ? "linux" : i == NTP_IMPL_SPDK ? "spdk" : "unknown";
}

/* The row as RFC 4180 CSV with snprintf, the columns of dumprow.h. */
static size_t ref_row(char *out, size_t len, const struct ntp_record *r)
{
	char dev[NTP_DEV_LEN + 1];
	size_t n = 0;

#define ADD(...) (n += (size_t)snprintf(out + n, len - n, __VA_ARGS__))
	memcpy(dev, r->dev, NTP_DEV_LEN);
	dev[NTP_DEV_LEN] = '\0';
	ADD("%s,%u,%u,%u,%u,%u,%llu,%u,%u,", ref_side(r->side), r->cntlid, r->qid, r->cid, r->opcode,
	    r->nsid, (unsigned long long)r->slba, r->nlb, r->len);
	if (strpbrk(dev, ",\"\r\n")) {
		ADD("\"");
		for (const char *s = dev; *s; s++)
			ADD("%.*s%c", *s == '"', "\"", *s);
		ADD("\"");
	} else {
		ADD("%s", dev);
	}
	ADD(",%s,%s,%u,%llu,0x%x,0x%x", ref_transport(r->transport), ref_impl(r->impl), r->cpu,
	    (unsigned long long)r->seq,
	    r->flags, r->ts_valid);
	/* the timestamps, then the backpressure durations T_BP_RECV, T_BP_RSP,
	 * then the bio's submission H_BIO_SUBMIT: every slot */
	for (int i = 0; i < NTP_TS_SLOTS; i++) {
		ADD(",");
		if (r->ts_valid & (1u << i))
			ADD("%llu", (unsigned long long)r->ts[i]);
	}
	ADD("\r\n");
#undef ADD
	return n;
}

static void check_row(struct ntp_dump_rows *d, const struct ntp_record *r)
{
	char got[NTP_DUMP_ROW_MAX], want[NTP_DUMP_ROW_MAX];
	size_t n = ntp_dump_row(d, got, r), m = ref_row(want, sizeof(want), r);

	if (n != m || memcmp(got, want, n))
		fail_msg("row differs:\n got: %.*s\nwant: %.*s", (int)n, got, (int)m, want);
}

static const uint32_t shapes[] = {
	0x3c7, 0xf1800, 0x3ff, 0x1ff800, 0, 1, 1u << 20, 0x1fffff, 0xffffffff, 0x155555, 0xaaaaa, 0x3c7 | (1u << 22),
	0xf1800 | (1u << 21), 0x1ff800 | (3u << 21), 0x7fffff, 0x3c7 | (1u << 23), 0xffffff, 1u << 23,
};

static const char *const devs[] = {
	"nvme1n1", "nullb0", "spdk-c1n1", "a,b", "say \"hi\"", "line\r\nbreak", "",
	"0123456789abcdef0123456789abcdef",	/* 32 bytes, no NUL */
	"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"",
};

/* A record like a recording's: a side's clock near t, its fields from a
 * few sets (so rows repeat what the rows before had), now and then an edge. */
static void make(struct ntp_record *r, uint64_t t, int edge)
{
	uint64_t u = next();

	memset(r, 0, sizeof(*r));
	r->side = (uint8_t)(u % 8 < 7 ? 1 + u % 2 : u % 5);	/* host, target, now and then unknown */
	r->cntlid = (uint16_t)(u >> 8 & 3);
	r->qid = (uint16_t)(1 + (u >> 10 & 3));
	r->cid = (uint16_t)next();
	r->opcode = (uint8_t)(u >> 12 & 1 ? 2 : 1);
	r->nsid = 1;
	r->slba = next() % 4000000000ull;
	r->nlb = (uint16_t)(u >> 13 & 1 ? 7 : 255);
	r->len = (r->nlb + 1u) * 512;
	r->transport = (uint8_t)(u >> 14 & 1 ? NTP_TRANSPORT_TCP : NTP_TRANSPORT_RDMA);
	r->impl = (uint8_t)(u >> 15 & 1 ? NTP_IMPL_LINUX : NTP_IMPL_SPDK);
	r->cpu = (uint32_t)(u >> 16 & 1);
	r->seq = next() % 1000000;
	r->flags = (uint32_t)(u >> 17 & 7);
	r->ts_valid = shapes[(u >> 20) % 3];
	snprintf(r->dev, NTP_DEV_LEN, "%s", r->side == NTP_SIDE_HOST ? "nvme1n1" : "nullb0");
	for (int i = 0; i < NTP_TS_SLOTS; i++)
		r->ts[i] = t + next() % 200000 + (r->side == NTP_SIDE_TARGET ? 5000000000ull : 0);
	if (!edge)
		return;
	switch (next() % 18) {
	case 0: r->slba = next() >> (next() % 64); break;
	case 1: r->seq = next() >> (next() % 64); break;
	case 2: r->slba = UINT64_MAX; r->seq = 100000000; break;
	case 3: r->ts_valid = shapes[next() % (sizeof(shapes) / sizeof(shapes[0]))]; break;
	case 4: {
		const char *s = devs[next() % (sizeof(devs) / sizeof(devs[0]))];

		memset(r->dev, 0, NTP_DEV_LEN);
		memcpy(r->dev, s, strlen(s) < NTP_DEV_LEN ? strlen(s) : NTP_DEV_LEN);
		break;
	}
	case 5: r->transport = (uint8_t)next(); r->impl = (uint8_t)next(); r->side = (uint8_t)next(); break;
	case 6: r->cntlid = r->qid = r->cid = r->nlb = UINT16_MAX; r->opcode = UINT8_MAX;
		r->nsid = r->len = r->cpu = r->flags = UINT32_MAX; break;
	case 7:	/* a timestamp in the next 10^8 ns, or far off */
		r->ts[next() % NTP_TS_COUNT] += next() % 2 ? 100000000 : 1000000000000ull;
		break;
	case 8: for (int i = 0; i < NTP_TS_SLOTS; i++) r->ts[i] = next() % 100000000; break;	/* < 10^8 */
	case 9: for (int i = 0; i < NTP_TS_SLOTS; i++) r->ts[i] = next() >> (next() % 64); break;
	case 10: r->ts[next() % NTP_TS_COUNT] = UINT64_MAX; break;
	case 11: r->ts[next() % NTP_TS_COUNT] = 0; break;
	case 12: r->len = (uint32_t)next(); r->nlb = (uint16_t)next(); break;	/* many distinct rows */
	case 13: r->cpu = (uint32_t)(next() % 64); r->qid = (uint16_t)(next() % 64); break;
	case 14:	/* the first ns of the next 10^8, the last of this one */
	case 15: {
		uint64_t b = (r->ts[0] / 100000000 + 1) * 100000000;

		r->ts[next() % NTP_TS_COUNT] = b - (next() % 2);
		r->ts[next() % NTP_TS_COUNT] = b - 100000000;
		break;
	}
	case 16:	/* a target's backpressure: durations of a few digits */
		r->ts_valid |= (uint32_t)(next() % 4) << NTP_TS_T_BP_RECV;
		r->ts[NTP_TS_T_BP_RECV] = next() % 1000000;
		r->ts[NTP_TS_T_BP_RSP] = next() % 1000;
		break;
	case 17:	/* a host's bio stamp: before the request, now and then by 10^8 ns or more */
		r->ts_valid |= 1u << NTP_TS_H_BIO_SUBMIT;
		r->ts[NTP_TS_H_BIO_SUBMIT] = r->ts[0] - next() % (next() % 2 ? 1000000 : 300000000);
		break;
	}
}

static void rows(int avx2)
{
	/* a clock that crosses 10^8 ns boundaries (and starts below 10^8),
	 * then starts again 20 ms before one at each magnitude: where the
	 * clock's digits grow from 8 to 9 (10^16), 9 (10^17), 11 to 12
	 * (10^19), and at the top of a u64 (the target's 5 s included) */
	static const uint64_t from[] = {
		9000000000000000000ull, 123456789012345ull, 10000000000000000ull - 20000000,
		99999999900000000ull - 20000000, 100000000000000000ull - 20000000,
		10000000000000000000ull - 20000000, 18446744068600000000ull - 20000000,
	};
	struct ntp_dump_rows *d = ntp_dump_rows_new();
	struct ntp_record r;
	uint64_t t = 99000000;

	assert_non_null(d);
	ntp_dump_rows_avx2(d, avx2);
	for (int i = 0; i < 360000; i++) {
		make(&r, t, next() % 16 == 0);
		check_row(d, &r);
		t += next() % 3000;
		if (i >= 150000 && i % 30000 == 0)
			t = from[(i - 150000) / 30000];
	}
	/* the last ns of a u64, the clock's last 10^8 */
	make(&r, 0, 0);
	for (int i = 0; i < NTP_TS_SLOTS; i++)
		r.ts[i] = UINT64_MAX - (uint64_t)i * 1000;
	for (int k = 0; k < 4; k++) {
		r.side = (uint8_t)k;
		r.ts_valid = k & 1 ? 0x1fffff : 0x3c7;
		check_row(d, &r);
		check_row(d, &r);
	}
	/* a record of zeros, and every field at its largest */
	memset(&r, 0, sizeof(r));
	check_row(d, &r);
	memset(&r, 0xff, sizeof(r));
	check_row(d, &r);
	check_row(d, &r);
	/* the longest row: every field at its largest, a device of quotes */
	memset(r.dev, '"', NTP_DEV_LEN);
	check_row(d, &r);
	check_row(d, &r);
	ntp_dump_rows_free(d);
}

/* Rows that differ from the row before in one byte of the record, each
 * byte in turn: whatever is kept from the row before must not hide it. */
static void bytes(int avx2)
{
	struct ntp_dump_rows *d = ntp_dump_rows_new();
	struct ntp_record r, m;

	assert_non_null(d);
	ntp_dump_rows_avx2(d, avx2);
	make(&r, 123456789012345ull, 0);
	r.side = NTP_SIDE_HOST;
	memcpy(r.dev, "nvme-subsystem-0123456789abcdefg", NTP_DEV_LEN);	/* no NUL */
	for (size_t b = 0; b < sizeof(r); b++) {
		for (int bit = 0; bit < 8; bit += 3) {
			m = r;
			((unsigned char *)&m)[b] ^= (unsigned char)(1u << bit);
			check_row(d, &r);
			check_row(d, &m);
			check_row(d, &m);
			check_row(d, &r);
		}
	}
	ntp_dump_rows_free(d);
}

/* Rows of a side whose clock is not set yet (no timestamp seen), without
 * timestamps, in slots a row with timestamps of the other side used
 * before: they print 21 empty columns, nothing of the slot's previous
 * template. 2048 distinct rows of each side fill all 1024 slots. */
static void stale(int avx2)
{
	struct ntp_dump_rows *d = ntp_dump_rows_new();
	struct ntp_record r;

	assert_non_null(d);
	ntp_dump_rows_avx2(d, avx2);
	for (uint32_t i = 0; i < 2048; i++) {
		make(&r, 123456789012345ull, 0);
		r.side = NTP_SIDE_HOST;
		r.ts_valid = 0x3c7;
		r.len = i;	/* a distinct ident */
		check_row(d, &r);
	}
	for (uint32_t i = 0; i < 4096; i++) {
		make(&r, 123456789012345ull, 0);
		r.side = i & 1 ? NTP_SIDE_TARGET : 7;	/* target, unknown: neither clock set */
		r.ts_valid = i & 2 ? 1u << 31 : 0;	/* no timestamp column (bit 31: no slot) */
		r.len = i;
		check_row(d, &r);
	}
	ntp_dump_rows_free(d);
}

static void test_stale(void **state)
{
	(void)state;
	stale(1);
	stale(0);
}

static void test_bytes(void **state)
{
	(void)state;
	bytes(1);
	bytes(0);
}

static void test_rows_avx2(void **state)
{
	(void)state;
	rows(1);
}

static void test_rows_sse2(void **state)
{
	(void)state;
	rows(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_upto8),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_lanes),
		cmocka_unit_test(test_rows_avx2),
		cmocka_unit_test(test_rows_sse2),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_stale),
	};

	return cmocka_run_group_tests_name("dumprow", tests, NULL, NULL);
}
