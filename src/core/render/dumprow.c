// SPDX-License-Identifier: GPL-2.0
/*
 * dumprow.c - a record as `ntprof dump`'s CSV row (dumprow.h), without
 * printf: a dump of millions of rows is bound by their formatting
 * (docs/performance.md).
 *
 * A row is four fields that change from command to command (cid, slba,
 * seq, the timestamps) between text that repeats: a side's controller,
 * queue, opcode, namespace, size, device, names, CPU, flags and which
 * timestamps were seen. Those fields are the record's last 64 bytes but
 * cid, so the repeating text is kept formatted per distinct value of those
 * bytes (`struct ident`, found by a hash and one compare), in four pieces
 * around cid, slba and seq, with the columns of the timestamps seen.
 *
 * The timestamps (ns since boot) share their digits above the eighth
 * (up to twelve: a u64 has twenty), which change every 0.1 s, with the
 * rows before of the same side (host and target have clocks of their
 * own): those are kept formatted per side (`struct clock`). With them
 * fixed, every timestamp column has the same width, so a row's timestamp
 * columns are a template per ident and clock (commas, high digits, line
 * end) into which the low eight digits of four timestamps at a time (two
 * without AVX2) are stored (digits.h). A row whose timestamps are not all
 * within the clock's 10^8 ns, or whose side has no clock yet (no
 * timestamp of 10^8 ns or more seen), goes the long way, one timestamp at
 * a time.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "digits.h"
#include "dumprow.h"
#include "../store/ntpfile.h"

/* the fields of an ident: the record from ts_valid to its end */
#define KEY_OFF offsetof(struct ntp_record, ts_valid)
#define CID_OFF (offsetof(struct ntp_record, cid) - KEY_OFF)
_Static_assert(sizeof(struct ntp_record) - KEY_OFF == 64, "ts_valid to the end is 64 bytes");
_Static_assert(offsetof(struct ntp_record, dev) + NTP_DEV_LEN == sizeof(struct ntp_record), "dev is last");
_Static_assert(offsetof(struct ntp_record, slba) < KEY_OFF && offsetof(struct ntp_record, seq) < KEY_OFF &&
	       offsetof(struct ntp_record, ts) < KEY_OFF, "what changes per command is before ts_valid, but cid");
_Static_assert(CID_OFF == 20 && sizeof(((struct ntp_record *)0)->cid) == 2, "cid in the key's second 16 bytes");
_Static_assert(NTP_DUMP_SLOTS <= 32 && NTP_TS_T_BP_RECV == NTP_TS_COUNT && NTP_TS_T_BP_RSP == NTP_TS_COUNT + 1 &&
	       NTP_TS_H_BIO_SUBMIT == NTP_TS_T_BP_RSP + 1 && NTP_DUMP_SLOTS == NTP_TS_SLOTS,
	       "the empty columns fit the 32 commas stored at a time; the durations follow the timestamps, "
	       "the bio's submission the durations, and every slot has its column");

#define IDENT_BITS 10	/* 1024 slots: a file's distinct sizes, queues and CPUs per side */
#define HI_MAX 12	/* a clock's digits: a u64 / 10^8 has at most 12 */
/* every timestamp of 20 digits, the commas, CRLF: copied 64 bytes at a time */
#define TPL_MAX 512
_Static_assert(TPL_MAX >= NTP_DUMP_SLOTS * (HI_MAX + 8 + 1) + 2 && TPL_MAX % 64 == 0, "any template fits");
/* a row's fields before its timestamps (a, cid, b, slba, c, seq, d) take
 * under 256 bytes; the template is copied whole past them */
_Static_assert(NTP_DUMP_ROW_MAX >= 256 + TPL_MAX, "a row's room holds the template's copy");

struct ident {
	unsigned char key[64];	/* the record from ts_valid on, cid zeroed */
	char a[32];		/* "side,cntlid,qid," */
	char b[16];		/* ",opcode,nsid," */
	char c[128];		/* ",nlb,len,dev,transport,impl,cpu," */
	char d[32];		/* ",flags,ts_valid" */
	uint8_t la, lb, ld, set;
	uint16_t lc;
	uint8_t n;		/* timestamps seen */
	uint8_t tail;		/* commas after the last one seen */
	uint8_t idx[NTP_DUMP_SLOTS + 3];	/* their slots; three more, the last again (fours) */
	uint8_t gap[NTP_DUMP_SLOTS + 1];	/* commas before each */
	/* the timestamp columns and the line end for the side's clock at
	 * tpl_hi: commas and high digits in place, low digits at off[] */
	uint64_t tpl_hi;	/* 0: none (a clock's hi is never 0) */
	uint16_t tpl_len;
	uint16_t off[NTP_DUMP_SLOTS + 3];	/* three more, the last again (fours) */
	char tpl[TPL_MAX];
} __attribute__((aligned(16)));

/* A side's clock: the digits of its timestamps above the eighth. */
struct clock {
	uint64_t hi;		/* timestamp / 10^8 of hi_digits; UINT64_MAX: none yet */
	uint64_t base;		/* hi x 10^8 */
	char hi_digits[16];	/* its 1 to HI_MAX digits (stored 16 bytes at a time) */
	unsigned hi_len;
	struct ident *last;	/* the side's last row's (most rows repeat it) */
};

struct ntp_dump_rows {
	size_t (*rows)(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs, size_t n,
		       size_t *done);
	struct clock clock[3];	/* per side: unknown, host, target */
	struct clock *clock_of[256];	/* of each value of side (unknown ones: clock[0]) */
	struct ident ident[1u << IDENT_BITS];
};

struct ntp_dump_rows *ntp_dump_rows_new(void)
{
	struct ntp_dump_rows *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	for (int i = 0; i < 3; i++)
		d->clock[i].hi = UINT64_MAX;
	for (int i = 0; i < 256; i++)
		d->clock_of[i] = &d->clock[i < 3 ? i : 0];
	ntp_dump_rows_avx2(d, !getenv("NTPROF_NO_AVX2"));
	return d;
}

void ntp_dump_rows_free(struct ntp_dump_rows *d)
{
	free(d);
}

static const char *side_name(uint8_t side)
{
	return side == NTP_SIDE_HOST ? "host" : side == NTP_SIDE_TARGET ? "target" : "unknown";
}

const char *ntp_impl_name(uint8_t impl)
{
	return impl == NTP_IMPL_SPDK ? "spdk" : impl == NTP_IMPL_LINUX ? "linux" : "unknown";
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* s as one CSV field, quoted when it holds a comma, quote or line break. */
static char *put_field(char *p, const char *s)
{
	if (!strpbrk(s, ",\"\r\n"))
		return put_str(p, s);
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/* 32 commas at p (the empty columns before a timestamp, at most NTP_DUMP_SLOTS). */
static inline __attribute__((always_inline)) void put_commas(char *p)
{
	static const char commas[32] = ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,";

	memcpy(p, commas, 32);
}

/* The cid bytes of a key's third 8-byte word, as a mask (any byte order). */
static inline uint64_t cid_mask(void)
{
	static const unsigned char m[8] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0xff, 0xff };
	uint64_t w;

	_Static_assert(CID_OFF / 8 == 2 && CID_OFF % 8 == 4, "cid in bytes 4 and 5 of word 2");
	memcpy(&w, m, 8);
	return w;
}

static inline __attribute__((always_inline)) struct ident *ident_slot(struct ntp_dump_rows *d, const unsigned char *k)
{
	uint64_t w[5], x;

	memcpy(w, k, sizeof(w));
	x = (w[0] + w[1] * 0x9E3779B97F4A7C15ull) ^ ((w[2] & cid_mask()) + w[3] * 0xC2B2AE3D27D4EB4Full) ^
	    (w[4] * 0x165667B19E3779F9ull);
	return &d->ident[(x * 0xD6E8FEB86659FD93ull) >> (64 - IDENT_BITS)];
}

/* e holds the fields of the record whose key bytes are k (cid aside). */
static inline __attribute__((always_inline)) bool ident_same(const struct ident *e, const unsigned char *k)
{
#ifdef NTP_SSE2
	const __m128i *ek = (const __m128i *)e->key;
	__m128i cid = _mm_setr_epi8(0, 0, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	__m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)k), _mm_load_si128(ek));
	__m128i e1 = _mm_or_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(k + 16)), _mm_load_si128(ek + 1)), cid);
	__m128i e2 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(k + 32)), _mm_load_si128(ek + 2));
	__m128i e3 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(k + 48)), _mm_load_si128(ek + 3));

	return _mm_movemask_epi8(_mm_and_si128(_mm_and_si128(e0, e1), _mm_and_si128(e2, e3))) == 0xffff && e->set;
#else
	unsigned char t[64];

	memcpy(t, k, 64);
	t[CID_OFF] = t[CID_OFF + 1] = 0;
	return e->set && !memcmp(t, e->key, 64);
#endif
}

/* Formats e's pieces for the record r. */
static __attribute__((noinline)) void ident_build(struct ident *e, const struct ntp_record *r)
{
	char t[256], dev[NTP_DEV_LEN + 1], *p;
	uint32_t valid = r->ts_valid & ((1u << NTP_DUMP_SLOTS) - 1);
	unsigned at = 0, n = 0;

	memcpy(e->key, (const unsigned char *)r + KEY_OFF, 64);
	e->key[CID_OFF] = e->key[CID_OFF + 1] = 0;

	p = put_str(t, side_name(r->side));
	*p++ = ',';
	p = ntp_put_u64(p, r->cntlid);
	*p++ = ',';
	p = ntp_put_u64(p, r->qid);
	*p++ = ',';
	e->la = (uint8_t)(p - t);
	memcpy(e->a, t, sizeof(e->a));

	p = t;
	*p++ = ',';
	p = ntp_put_u64(p, r->opcode);
	*p++ = ',';
	p = ntp_put_u64(p, r->nsid);
	*p++ = ',';
	e->lb = (uint8_t)(p - t);
	memcpy(e->b, t, sizeof(e->b));

	memcpy(dev, r->dev, NTP_DEV_LEN);
	dev[NTP_DEV_LEN] = '\0';
	p = t;
	*p++ = ',';
	p = ntp_put_u64(p, r->nlb);
	*p++ = ',';
	p = ntp_put_u64(p, r->len);
	*p++ = ',';
	p = put_field(p, dev);		/* at most 2 * 32 + 2 bytes */
	*p++ = ',';
	p = put_str(p, ntp_transport_name(r->transport));
	*p++ = ',';
	p = put_str(p, ntp_impl_name(r->impl));
	*p++ = ',';
	p = ntp_put_u64(p, r->cpu);
	*p++ = ',';
	e->lc = (uint16_t)(p - t);
	memcpy(e->c, t, sizeof(e->c));

	p = t;
	*p++ = ',';
	p = ntp_put_hex32(p, r->flags);
	*p++ = ',';
	p = ntp_put_hex32(p, r->ts_valid);
	e->ld = (uint8_t)(p - t);
	memcpy(e->d, t, sizeof(e->d));

	for (uint32_t v = valid; v; v &= v - 1) {
		unsigned i = (unsigned)__builtin_ctz(v);

		e->idx[n] = (uint8_t)i;
		e->gap[n++] = (uint8_t)(i + 1 - at);
		at = i + 1;
	}
	for (unsigned k = n; k < n + 3; k++)
		e->idx[k] = n ? e->idx[n - 1] : 0;
	e->gap[n] = 0;
	e->n = (uint8_t)n;
	e->tail = (uint8_t)(NTP_DUMP_SLOTS - at);
	e->tpl_hi = 0;	/* the slot's template was its previous ident's */
	e->tpl_len = 0;
	e->set = 1;
}

/* e's template for the clock c (c->hi set). Every timestamp is then the
 * clock's high digits and eight more, so every column has the same width
 * and the commas are in the same places row after row. A row with a
 * backpressure duration (a few digits, not near the clock) does not fit
 * it and goes the long way. */
static __attribute__((noinline)) void tpl_build(struct ident *e, const struct clock *c)
{
	char *p = e->tpl;

	e->tpl_hi = c->hi;
	for (unsigned k = 0; k < e->n; k++) {
		memset(p, ',', e->gap[k]);
		p += e->gap[k];
		memcpy(p, c->hi_digits, c->hi_len);
		p += c->hi_len;
		e->off[k] = (uint16_t)(p - e->tpl);
		memset(p, '0', 8);
		p += 8;
	}
	for (unsigned k = e->n; k < e->n + 3u; k++)
		e->off[k] = e->n ? e->off[e->n - 1] : 0;
	memset(p, ',', e->tail);
	p += e->tail;
	*p++ = '\r';
	*p++ = '\n';
	e->tpl_len = (uint16_t)(p - e->tpl);
}

/* No clock for the last 10^8 ns of a u64, which it holds in part: there,
 * v - base < 10^8 would also hold for a small v, wrapping around. */
#define CLOCK_TOP (UINT64_MAX / 100000000 * 100000000)

/* The clock c set to the high digits hi (v / 10^8, 1 to HI_MAX digits). */
static __attribute__((noinline)) void clock_set(struct clock *c, uint64_t hi)
{
	char t[HI_MAX + 16];

	memset(t, 0, sizeof(t));
	c->hi_len = (unsigned)(ntp_put_u64(t, hi) - t);
	memcpy(c->hi_digits, t, sizeof(c->hi_digits));
	c->hi = hi;
	c->base = hi * 100000000;
}

/* A timestamp, as ntp_put_u64 writes it, with the digits above the eighth
 * from the side's clock (kept for the next ones when they change); writes
 * up to 20 bytes at p. */
static char *put_ts(char *p, struct clock *c, uint64_t v)
{
	if (v - c->base >= 100000000 || c->hi == UINT64_MAX) {
		if (v < 100000000 || v >= CLOCK_TOP)
			return ntp_put_u64(p, v);
		clock_set(c, v / 100000000);
	}
	memcpy(p, c->hi_digits, 16);
	return ntp_put_8(p + c->hi_len, (uint32_t)(v - c->base));
}

/* The timestamp columns one at a time: the long way. */
static __attribute__((noinline)) char *put_ts_all(char *p, const struct ident *e, struct clock *c, const struct ntp_record *r)
{
	for (unsigned k = 0; k < e->n; k++) {
		put_commas(p);
		p = put_ts(p + e->gap[k], c, r->ts[e->idx[k]]);
	}
	return p;
}

#ifdef NTP_HAVE_AVX2_DIGITS
/* The template's low digits, four timestamps at a time: false when one is
 * not within the clock's 10^8 ns (the caller then writes the columns the
 * long way, over what was stored). */
static inline __attribute__((target("avx2"))) bool
tpl_fill_avx2(char *p, const struct ident *e, const struct ntp_record *r, uint64_t base)
{
	/* unsigned compares as signed ones, the sign bit flipped: a
	 * timestamp below base wraps to a large value and fails too */
	const __m256i sign = _mm256_set1_epi64x(INT64_MIN), vb = _mm256_set1_epi64x((long long)base);
	const __m256i top = _mm256_set1_epi64x((long long)(100000000 - 1) ^ INT64_MIN);

	for (unsigned i = 0; i < e->n; i += 4) {
		__m128i t01 = _mm_loadl_epi64((const __m128i *)&r->ts[e->idx[i]]);
		__m128i t23 = _mm_loadl_epi64((const __m128i *)&r->ts[e->idx[i + 2]]);
		__m256i t;

		t01 = _mm_insert_epi64(t01, (long long)r->ts[e->idx[i + 1]], 1);
		t23 = _mm_insert_epi64(t23, (long long)r->ts[e->idx[i + 3]], 1);
		t = _mm256_sub_epi64(_mm256_inserti128_si256(_mm256_castsi128_si256(t01), t23, 1), vb);
		if (!_mm256_testz_si256(_mm256_cmpgt_epi64(_mm256_xor_si256(t, sign), top), _mm256_set1_epi8(-1)))
			return false;
		__m256i x = _mm256_or_si256(ntp_digits8x4_avx2(t), _mm256_set1_epi64x((long long)NTP_ASCII0x8));
		__m128i lo = _mm256_castsi256_si128(x), hi = _mm256_extracti128_si256(x, 1);

		_mm_storel_epi64((__m128i *)(p + e->off[i]), lo);
		_mm_storeh_pi((__m64 *)(p + e->off[i + 1]), _mm_castsi128_ps(lo));
		_mm_storel_epi64((__m128i *)(p + e->off[i + 2]), hi);
		_mm_storeh_pi((__m64 *)(p + e->off[i + 3]), _mm_castsi128_ps(hi));
	}
	return true;
}
#define TPL_FILL_AVX2 tpl_fill_avx2

/* ntp_digits8 of a, b and c (each < 10^8) at once. */
static inline __attribute__((target("avx2"))) void
digits3_avx2(uint32_t a, uint32_t b, uint32_t c, uint64_t *da, uint64_t *db, uint64_t *dc)
{
	__m256i x = ntp_digits8x4_avx2(_mm256_set_epi64x(0, c, b, a));
	__m128i lo = _mm256_castsi256_si128(x);

	*da = (uint64_t)_mm_cvtsi128_si64(lo);
	*db = (uint64_t)_mm_extract_epi64(lo, 1);
	*dc = (uint64_t)_mm_cvtsi128_si64(_mm256_extracti128_si256(x, 1));
}
#define DIGITS3_AVX2 digits3_avx2
#else
#define TPL_FILL_AVX2 tpl_fill
#define DIGITS3_AVX2(a, b, c, da, db, dc) (*(da) = ntp_digits8(a), ntp_digits8x2(b, c, db, dc))
#endif

/* The same, two at a time. */
static inline __attribute__((always_inline)) bool
tpl_fill(char *p, const struct ident *e, const struct ntp_record *r, uint64_t base)
{
	for (unsigned i = 0; i < e->n; i += 2) {
		uint64_t la = r->ts[e->idx[i]] - base, lb = r->ts[e->idx[i + 1]] - base;

		if ((la > lb ? la : lb) >= 100000000)
			return false;
#ifdef NTP_SSE2
		__m128i x = _mm_or_si128(ntp_digits8x2_sse(_mm_set_epi64x((long long)lb, (long long)la)),
					 _mm_set1_epi64x((long long)NTP_ASCII0x8));

		_mm_storel_epi64((__m128i *)(p + e->off[i]), x);
		_mm_storeh_pi((__m64 *)(p + e->off[i + 1]), _mm_castsi128_ps(x));
#else
		uint64_t da, db;

		ntp_digits8x2((uint32_t)la, (uint32_t)lb, &da, &db);
		da |= NTP_ASCII0x8;
		db |= NTP_ASCII0x8;
		memcpy(p + e->off[i], &da, 8);
		memcpy(p + e->off[i + 1], &db, 8);
#endif
	}
	return true;
}

/* A row; avx2 a constant at each call (the two flavours below). */
static inline __attribute__((always_inline)) size_t
row(struct ntp_dump_rows *d, char *buf, const struct ntp_record *r, const bool avx2)
{
	const unsigned char *k = (const unsigned char *)r + KEY_OFF;
	struct clock *c = d->clock_of[r->side];
	struct ident *e = c->last;
	char *p = buf, *ts;
	uint64_t base = c->base;

	if (!e || !ident_same(e, k)) {
		e = ident_slot(d, k);
		if (!ident_same(e, k))
			ident_build(e, r);
		c->last = e;
	}
	if ((r->slba > r->seq ? r->slba : r->seq) < 100000000) {	/* most: the three side by side */
		uint64_t dcid, dslba, dseq;

		if (avx2) {
			DIGITS3_AVX2(r->cid, (uint32_t)r->slba, (uint32_t)r->seq, &dcid, &dslba, &dseq);
		} else {
			dcid = ntp_digits8(r->cid);
			ntp_digits8x2((uint32_t)r->slba, (uint32_t)r->seq, &dslba, &dseq);
		}
		memcpy(p, e->a, sizeof(e->a));
		p = ntp_put_digits(p + e->la, dcid);
		memcpy(p, e->b, sizeof(e->b));
		p = ntp_put_digits(p + e->lb, dslba);
		memcpy(p, e->c, 64);
		if (e->lc > 64)
			memcpy(p + 64, e->c + 64, sizeof(e->c) - 64);
		p = ntp_put_digits(p + e->lc, dseq);
	} else {
		memcpy(p, e->a, sizeof(e->a));
		p = ntp_put_upto8(p + e->la, r->cid);
		memcpy(p, e->b, sizeof(e->b));
		p = ntp_put_u64(p + e->lb, r->slba);
		memcpy(p, e->c, sizeof(e->c));
		p = ntp_put_u64(p + e->lc, r->seq);
	}
	memcpy(p, e->d, sizeof(e->d));
	p += e->ld;

	/* the timestamps: into the template when the side has a clock and
	 * all are within its 10^8 ns (any template fits in tpl: TPL_MAX) */
	ts = p;
	if (c->hi != UINT64_MAX) {
		if (e->tpl_hi != c->hi)
			tpl_build(e, c);
		/* the slots past the last repeat it: whole fours and pairs */
		memcpy(p, e->tpl, 64);
		for (unsigned o = 64; o < e->tpl_len; o += 64)
			memcpy(p + o, e->tpl + o, 64);
		if (avx2 ? TPL_FILL_AVX2(p, e, r, base) : tpl_fill(p, e, r, base))
			return (size_t)(p + e->tpl_len - buf);
	}
	p = put_ts_all(ts, e, c, r);
	put_commas(p);
	p += e->tail;
	p[0] = '\r';
	p[1] = '\n';
	return (size_t)(p + 2 - buf);
}

/* The rows of recs[0..n) while one more fits in room; *done of them. */
static inline __attribute__((always_inline)) size_t
rows_write(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs, size_t n,
	   size_t *done, const bool avx2)
{
	size_t len = 0, i;

	for (i = 0; i < n && room - len >= NTP_DUMP_ROW_MAX; i++)
		len += row(d, buf + len, &recs[i], avx2);
	*done = i;
	return len;
}

#ifdef NTP_HAVE_AVX2_DIGITS
static __attribute__((target("avx2"))) size_t
rows_avx2(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs, size_t n, size_t *done)
{
	return rows_write(d, buf, room, recs, n, done, true);
}
#endif

static size_t rows_sse2(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs, size_t n,
			size_t *done)
{
	return rows_write(d, buf, room, recs, n, done, false);
}

size_t ntp_dump_rows_write(struct ntp_dump_rows *d, char *buf, size_t room, const struct ntp_record *recs,
			   size_t n, size_t *done)
{
	return d->rows(d, buf, room, recs, n, done);
}

size_t ntp_dump_row(struct ntp_dump_rows *d, char *buf, const struct ntp_record *r)
{
	size_t done;

	return d->rows(d, buf, NTP_DUMP_ROW_MAX, r, 1, &done);
}

void ntp_dump_rows_avx2(struct ntp_dump_rows *d, int on)
{
#ifdef NTP_HAVE_AVX2_DIGITS
	d->rows = on && __builtin_cpu_supports("avx2") ? rows_avx2 : rows_sse2;
#else
	(void)on;
	d->rows = rows_sse2;
#endif
}
