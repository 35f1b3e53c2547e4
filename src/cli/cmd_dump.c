// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_dump.c - `ntprof dump FILE`: every record as one CSV row (RFC 4180:
 * comma separated, CRLF line ends, a header row, fields quoted when they
 * hold a comma, quote or line break). A timestamp slot that was not seen is
 * an empty cell, so "0" always means a real clock value.
 */
#include <errno.h>
#include <stdio.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "options.h"
#include "core/out.h"
#include "core/ntpfile.h"
#include "core/esc.h"

static const char *const ts_names[NTP_TS_COUNT] = {
	"h_blk_submit", "h_drv_submit", "h_cmd_sent", "h_r2t_arrive", "h_r2t_drv", "h_data_sent",
	"h_rsp_arrive", "h_rsp_drv", "h_drv_complete", "h_blk_complete", "h_send_done",
	"t_cmd_arrive", "t_cmd_recv", "t_r2t_sent", "t_data_arrive", "t_data_recv",
	"t_storage_submit", "t_storage_done", "t_rsp_queued", "t_rsp_sent", "t_rsp_send_done",
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof dump [--header] FILE\n"
"Prints every record of a recording as CSV (RFC 4180), one row per record and\n"
"side, with a header row. Columns: side, cntlid, qid, cid, opcode, nsid, slba,\n"
"nlb, len, dev, transport, impl, cpu, seq, flags, ts_valid, then one column per\n"
"timestamp (CLOCK_MONOTONIC ns of the machine that took it; empty when that\n"
"timestamp was not seen).\n"
"A file cut short is printed up to its last whole block, with a note on stderr\n"
"saying how it ended (exit 0); a block that fails its CRC is left out, the\n"
"blocks after it are printed, and a one-line error follows (exit 1).\n"
"With --header, the file's header as \"field: value\" lines instead: format,\n"
"machine, sampling, start, and the host's queues per namespace.\n"
"\n");
	ntp_cmd_help(f, "dump");
}

static const char *impl_name(uint8_t impl);

/* --header: what the header says (docs/ntp-format.md), one field a line. */
static int print_header(const struct ntp_reader *r)
{
	const struct ntp_file_info *fi = ntp_reader_info(r);

	printf("file: %s\n", ntp_esc(ntp_reader_path(r)));
	printf("format: %u.%u\n", fi->version_major, fi->version_minor);
	printf("role: %s\n", ntp_role_name(fi->role));
	printf("transport: %s\n", ntp_transport_name(fi->transport));
	printf("impl: host %s, target %s\n", impl_name(fi->impl_host), impl_name(fi->impl_target));
	printf("sampling: 1 in %u\n", fi->sampling);
	printf("record_size: %u\n", fi->record_size);
	printf("start_mono_ns: %llu\n", (unsigned long long)fi->start_mono_ns);
	printf("start_real_ns: %llu\n", (unsigned long long)fi->start_real_ns);
	printf("hostname: %s\n", ntp_esc(fi->hostname));
	printf("kernel: %s\n", ntp_esc(fi->kernel));
	printf("tool_version: %s\n", ntp_esc(fi->tool_version));
	if (!fi->n_hostq)
		printf("host_queues: none recorded\n");
	for (uint32_t i = 0; i < fi->n_hostq; i++)
		printf("host_queues: %s %u hardware queue%s x %u tags\n", ntp_esc(fi->hostq[i].dev),
		       fi->hostq[i].hw_queues, fi->hostq[i].hw_queues == 1 ? "" : "s", fi->hostq[i].tags);
	return ntp_out_flush(stdout) ? ntp_err("dump: cannot write to stdout: %m") : 0;
}

/* Appends s as one CSV field, quoted when it holds a comma, quote or line break. */
static char *put_field(char *p, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		size_t n = strlen(s);

		memcpy(p, s, n);
		return p + n;
	}
	*p++ = '"';
	for (; *s; s++) {
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/*
 * Decimal without printf: dump of millions of rows is bound by formatting.
 * Eight digits at a time in one 64-bit register (one digit per byte, most
 * significant in the lowest byte, so one 8-byte store writes them in
 * order): the quotients by 10^4, 10^2 and 10 of the halves, quarters and
 * eighths are taken side by side by multiplying by their reciprocals in
 * fixed point, exact for the ranges they see (v < 10^8, lanes < 10^4, < 10^2).
 * No digit goes through memory in small pieces: digits stored two bytes at
 * a time and then copied on as a whole stall each copy on store forwarding.
 */
static inline uint64_t digits8(uint32_t v)	/* v < 10^8: 8 digits 0..9, not ASCII */
{
	uint64_t x = v, q;

	q = (x * 109951163) >> 40;			/* v / 10^4 */
	x = q | ((x - q * 10000) << 32);		/* 2 lanes of 4 digits */
	q = ((x * 10486) >> 20) & 0x0000007F0000007Full;	/* each / 100 */
	x = q | ((x - q * 100) << 16);			/* 4 lanes of 2 digits */
	q = ((x * 103) >> 10) & 0x000F000F000F000Full;	/* each / 10 */
	return q | ((x - q * 10) << 8);			/* 8 digits */
}

/*
 * digits8 of two values at once, a and b < 10^8, in the lanes of one SSE2
 * register (every x86-64 has it): the same steps, the divisions by 10^4 in
 * 64-bit lanes, by 100 and by 10 as 16-bit multiplies by reciprocals
 * (x * 5243 >> 19 is x / 100 for x < 43699, x * 6554 >> 16 is x / 10 for
 * x < 16389), about half the instructions of two digits8.
 */
static inline __attribute__((always_inline)) void digits8x2(uint32_t a, uint32_t b, uint64_t *da, uint64_t *db)
{
#ifdef __SSE2__
	__m128i x = _mm_set_epi64x((long long)b, (long long)a), q, r;

	q = _mm_srli_epi64(_mm_mul_epu32(x, _mm_set1_epi64x(109951163)), 40);	/* / 10^4 */
	r = _mm_sub_epi64(x, _mm_mul_epu32(q, _mm_set1_epi64x(10000)));
	x = _mm_or_si128(q, _mm_slli_epi64(r, 32));		/* 2 x 2 lanes of 4 digits */
	q = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi16(5243)), 3);	/* / 100 */
	r = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(100)));
	x = _mm_or_si128(q, _mm_slli_epi32(r, 16));		/* 2 x 4 lanes of 2 digits */
	q = _mm_mulhi_epu16(x, _mm_set1_epi16(6554));		/* / 10 */
	r = _mm_sub_epi16(x, _mm_mullo_epi16(q, _mm_set1_epi16(10)));
	x = _mm_or_si128(q, _mm_slli_epi16(r, 8));		/* 2 x 8 digits */
	*da = (uint64_t)_mm_cvtsi128_si64(x);
	*db = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
#else
	*da = digits8(a);
	*db = digits8(b);
#endif
}

/* 1 to 8 digits of v < 10^8; writes 8 bytes at p. */
/* The digits d (digits8 of a value), leading zeros dropped; writes 8 bytes at p. */
static inline __attribute__((always_inline)) char *put_digits(char *p, uint64_t d)
{
	unsigned lead = d ? (unsigned)__builtin_ctzll(d) / 8 : 7;	/* leading zeros */

	d = (d | 0x3030303030303030ull) >> (8 * lead);
	memcpy(p, &d, 8);
	return p + 8 - lead;
}

static inline __attribute__((always_inline)) char *put_upto8(char *p, uint32_t v)
{
	uint64_t d = digits8(v);
	unsigned lead = d ? (unsigned)__builtin_ctzll(d) / 8 : 7;	/* leading zeros */

	d = (d | 0x3030303030303030ull) >> (8 * lead);
	memcpy(p, &d, 8);
	return p + 8 - lead;
}

static inline __attribute__((always_inline)) char *put_8(char *p, uint32_t v)	/* exactly 8 digits */
{
	uint64_t d = digits8(v) | 0x3030303030303030ull;

	memcpy(p, &d, 8);
	return p + 8;
}

/* Writes up to 8 bytes past the digits (scratch the next fields overwrite):
 * the row buffer keeps room past any row. */
static inline __attribute__((always_inline)) char *put_u64(char *p, uint64_t v)
{
	uint64_t hi;

	if (v < 100000000)
		return put_upto8(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi < 100000000) {
		p = put_upto8(p, (uint32_t)hi);
	} else {
		p = put_upto8(p, (uint32_t)(hi / 100000000));	/* < 10^4: u64 has 20 digits */
		p = put_8(p, (uint32_t)(hi % 100000000));
	}
	return put_8(p, (uint32_t)(v % 100000000));
}

/* 0x and the hex digits of v, no leading zero; writes 10 bytes at p. The
 * nibbles are spread one per byte (most significant in the lowest byte),
 * then made ASCII all at once: + '0', and + 'a' - '0' - 10 more where a
 * nibble is over 9 (adding 6 carries it into bit 4). */
static inline char *put_hex(char *p, uint32_t v)
{
	uint64_t x = v;
	unsigned lead = v ? (unsigned)__builtin_clz(v) / 4 : 7;	/* leading zero nibbles */

	x = (x | x << 16) & 0x0000FFFF0000FFFFull;
	x = (x | x << 8) & 0x00FF00FF00FF00FFull;
	x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;	/* nibble k of v in byte k */
	x = __builtin_bswap64(x);			/* most significant first */
	x += 0x3030303030303030ull + (((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * ('a' - '0' - 10);
	x >>= 8 * lead;
	p[0] = '0';
	p[1] = 'x';
	memcpy(p + 2, &x, 8);
	return p + 2 + 8 - lead;
}

static const char *side_name(uint8_t side)
{
	return side == NTP_SIDE_HOST ? "host" : side == NTP_SIDE_TARGET ? "target" : "unknown";
}

static const char *impl_name(uint8_t impl)
{
	return impl == NTP_IMPL_SPDK ? "spdk" : impl == NTP_IMPL_LINUX ? "linux" : "unknown";
}

/*
 * What a row repeats from the rows before, formatted once: the device
 * (the same 32 bytes row after row; its CSV field may be quoted), the
 * names of side, transport and implementation, and the high digits of a
 * timestamp (ns since boot: its digits above the eighth change every 0.1
 * s, so the timestamps of a row, and of the rows around it, share them).
 */
struct text {
	int key;		/* what it is the text of; -1: none yet */
	unsigned len;
	char s[16];		/* 16 bytes stored whatever len */
};

/* A field's last value and its digits (a u32 has at most 10). */
struct num {
	uint64_t v;
	int set;
	unsigned len;
	char s[16];		/* 16 bytes stored whatever len */
};

struct row_cache {
	char dev_raw[NTP_DEV_LEN];
	int dev_set;
	unsigned dev_len;
	char dev[2 * NTP_DEV_LEN + 2 + 16];	/* the field; 16 bytes of slack, stored whole */
	struct text side, transport, impl;
	/* fields that repeat from row to row: a host's controller and
	 * namespace, a queue's CPU, the opcode and size of most commands */
	struct num cntlid, qid, opcode, nsid, nlb, len, cpu;
	struct num flags, ts_valid;	/* in hex: a side's records have the same */
	uint64_t ts_hi;		/* timestamp / 10^8 of ts_hi_digits; UINT64_MAX: none */
	uint64_t ts_base;	/* ts_hi x 10^8 (when ts_hi is set) */
	uint64_t ts_hi_digits;	/* its 1 to 8 digits, ASCII, from the lowest byte */
	unsigned ts_hi_len;
};

static void cache_init(struct row_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->side.key = c->transport.key = c->impl.key = -1;
	c->ts_hi = UINT64_MAX;
}

/* A name (at most 16 bytes: longer ones are written as they are). */
static inline char *put_text(char *p, struct text *t, int key, const char *(*name)(uint8_t))
{
	if (t->key != key) {
		const char *s = name((uint8_t)key);
		size_t n = strlen(s);

		if (n > sizeof(t->s))
			return put_str(p, s);
		memset(t->s, 0, sizeof(t->s));
		memcpy(t->s, s, n);
		t->len = (unsigned)n;
		t->key = key;
	}
	memcpy(p, t->s, sizeof(t->s));
	return p + t->len;
}

/* v < 2^32 as put_u64 (or, hex, as put_hex) writes it, from the cache when
 * it is the last value; hex is a constant at every call, folded away. */
static inline __attribute__((always_inline)) char *put_cached(char *p, struct num *c, uint32_t v, bool hex)
{
	if (!c->set || c->v != v) {
		char tmp[32];

		_Static_assert(sizeof(c->s) >= 10, "a u32's digits, or 0x and its hex digits, fit");
		c->len = (unsigned)((hex ? put_hex(tmp, v) : put_u64(tmp, v)) - tmp);
		memcpy(c->s, tmp, sizeof(c->s));
		c->v = v;
		c->set = 1;
	}
	memcpy(p, c->s, sizeof(c->s));
	return p + c->len;
}

static inline __attribute__((always_inline)) char *put_num(char *p, struct num *c, uint32_t v)
{
	return put_cached(p, c, v, false);
}

static inline __attribute__((always_inline)) char *put_hex_num(char *p, struct num *c, uint32_t v)
{
	return put_cached(p, c, v, true);
}

/* A timestamp: as put_u64, with the digits above the eighth from the cache. */
static inline __attribute__((always_inline)) char *put_ts(char *p, struct row_cache *c, uint64_t v)
{
	uint64_t hi, lo = v - c->ts_base;

	/* the high digits of the last one (most): no division */
	if (lo < 100000000 && c->ts_hi != UINT64_MAX) {
		memcpy(p, &c->ts_hi_digits, 8);
		return put_8(p + c->ts_hi_len, (uint32_t)lo);
	}
	if (v < 100000000)
		return put_upto8(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi >= 100000000)
		return put_u64(p, v);
	if (hi != c->ts_hi) {
		uint64_t d = digits8((uint32_t)hi);
		unsigned lead = d ? (unsigned)__builtin_ctzll(d) / 8 : 7;

		c->ts_hi_digits = (d | 0x3030303030303030ull) >> (8 * lead);
		c->ts_hi_len = 8 - lead;
		c->ts_hi = hi;
		c->ts_base = hi * 100000000;
	}
	memcpy(p, &c->ts_hi_digits, 8);
	p += c->ts_hi_len;
	return put_8(p, (uint32_t)(v - hi * 100000000));
}

static const char commas[8] = { ',', ',', ',', ',', ',', ',', ',', ',' };

/* n <= 24 commas; writes 24 bytes at p whatever n (fewer stores than a loop). */
static inline char *put_commas(char *p, unsigned n)
{
	memcpy(p, commas, 8);
	memcpy(p + 8, commas, 8);
	memcpy(p + 16, commas, 8);
	return p + n;
}

/* The 32 bytes of two devices equal: two vector compares, no call. */
static inline int dev_same(const char *a, const char *b)
{
#ifdef __SSE2__
	_Static_assert(NTP_DEV_LEN == 32, "two 16-byte halves");
	__m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)a), _mm_loadu_si128((const __m128i *)b));
	__m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(a + 16)),
				    _mm_loadu_si128((const __m128i *)(b + 16)));

	return _mm_movemask_epi8(_mm_and_si128(e0, e1)) == 0xffff;
#else
	return !memcmp(a, b, NTP_DEV_LEN);
#endif
}

/* One row; buf holds at least ROW_MAX bytes. Returns its length. */
#define ROW_MAX 1024
static size_t row(char *buf, const struct ntp_record *r, struct row_cache *c)
{
	char *p = buf;
	uint32_t valid = r->ts_valid & ((1u << NTP_TS_COUNT) - 1);
	unsigned at = 0;
	/* slba and seq below 10^8 (most): their digits side by side */
	int pair = r->slba < 100000000 && r->seq < 100000000;
	uint64_t dslba = 0, dseq = 0;

	if (pair)
		digits8x2((uint32_t)r->slba, (uint32_t)r->seq, &dslba, &dseq);

	p = put_text(p, &c->side, r->side, side_name);
	*p++ = ',';
	p = put_num(p, &c->cntlid, r->cntlid);
	*p++ = ',';
	p = put_num(p, &c->qid, r->qid);
	*p++ = ',';
	p = put_u64(p, r->cid);
	*p++ = ',';
	p = put_num(p, &c->opcode, r->opcode);
	*p++ = ',';
	p = put_num(p, &c->nsid, r->nsid);
	*p++ = ',';
	p = pair ? put_digits(p, dslba) : put_u64(p, r->slba);
	*p++ = ',';
	p = put_num(p, &c->nlb, r->nlb);
	*p++ = ',';
	p = put_num(p, &c->len, r->len);
	*p++ = ',';
	if (!c->dev_set || !dev_same(c->dev_raw, r->dev)) {
		char dev[NTP_DEV_LEN + 1];

		memcpy(dev, r->dev, NTP_DEV_LEN);
		dev[NTP_DEV_LEN] = '\0';
		memcpy(c->dev_raw, r->dev, NTP_DEV_LEN);
		c->dev_len = (unsigned)(put_field(c->dev, dev) - c->dev);	/* at most 2 * 32 + 2 bytes */
		c->dev_set = 1;
	}
	memcpy(p, c->dev, sizeof(c->dev));
	p += c->dev_len;
	*p++ = ',';
	p = put_text(p, &c->transport, r->transport, ntp_transport_name);
	*p++ = ',';
	p = put_text(p, &c->impl, r->impl, impl_name);
	*p++ = ',';
	p = put_num(p, &c->cpu, r->cpu);
	*p++ = ',';
	p = pair ? put_digits(p, dseq) : put_u64(p, r->seq);
	*p++ = ',';
	p = put_hex_num(p, &c->flags, r->flags);
	*p++ = ',';
	p = put_hex_num(p, &c->ts_valid, r->ts_valid);
	/* one column per timestamp: the commas up to each one seen, then
	 * those of the empty ones after the last */
	for (uint32_t v = valid; v; v &= v - 1) {
		unsigned i = (unsigned)__builtin_ctz(v);
		uint32_t w = v & (v - 1);

		/* two timestamps with the cached high digits: their low eight
		 * digits side by side (the common case) */
		if (w && c->ts_hi != UINT64_MAX) {
			unsigned j = (unsigned)__builtin_ctz(w);
			uint64_t li = r->ts[i] - c->ts_base, lj = r->ts[j] - c->ts_base, di, dj;

			if (li < 100000000 && lj < 100000000) {
				digits8x2((uint32_t)li, (uint32_t)lj, &di, &dj);
				di |= 0x3030303030303030ull;
				dj |= 0x3030303030303030ull;
				p = put_commas(p, i + 1 - at);
				memcpy(p, &c->ts_hi_digits, 8);
				p += c->ts_hi_len;
				memcpy(p, &di, 8);
				p = put_commas(p + 8, j - i);
				memcpy(p, &c->ts_hi_digits, 8);
				p += c->ts_hi_len;
				memcpy(p, &dj, 8);
				p += 8;
				at = j + 1;
				v = w;
				continue;
			}
		}
		p = put_commas(p, i + 1 - at);
		at = i + 1;
		p = put_ts(p, c, r->ts[i]);
	}
	_Static_assert(NTP_TS_COUNT <= 24, "the empty columns fit put_commas");
	p = put_commas(p, NTP_TS_COUNT - at);
	*p++ = '\r';
	*p++ = '\n';
	return (size_t)(p - buf);
}

/* The rows go straight to the file descriptor in batches: through stdio
 * they were copied once more. 0, or -1 with errno set. */
/* The failed write's errno, kept across closing the reader. */
static int write_failed(struct ntp_reader *r)
{
	int e = errno;

	ntp_reader_close(r);
	return ntp_err("dump: cannot write to stdout: %s", strerror(e));
}

static int write_out(const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(STDOUT_FILENO, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &o };
	static char obuf[1 << 16], rows[1 << 18];
	/* one per side: a file's host and target rows alternate */
	static struct row_cache cache[3];
	size_t rows_len = 0;
	int werr = 0;
	const struct ntp_read_stats *st;
	struct ntp_reader *r;
	const struct ntp_record *recs;
	char err[NTP_ERR_LEN];
	size_t n;
	int first;

	first = ntp_cmd_parse("dump", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	if (argc - first != 1)
		return ntp_err(argc - first ? "dump takes one FILE" : "dump: a FILE is needed (ntprof dump --help)");
	r = ntp_reader_open(argv[first], err, sizeof(err));
	if (!r)
		return ntp_err("%s", err);
	if (o.header) {
		int ret = print_header(r);

		ntp_reader_close(r);
		return ret;
	}
	if (ntp_read_ahead_wanted(1))
		ntp_reader_read_ahead(r);	/* blocks checked by a second thread (ntpfile.h) */
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	for (int k = 0; k < 3; k++)
		cache_init(&cache[k]);
	fputs("side,cntlid,qid,cid,opcode,nsid,slba,nlb,len,dev,transport,impl,cpu,seq,flags,ts_valid", stdout);
	for (int i = 0; i < NTP_TS_COUNT; i++)
		printf(",%s", ts_names[i]);
	fputs("\r\n", stdout);
	if (fflush(stdout))
		return write_failed(r);
	while (!werr && ntp_reader_next_block(r, &recs, &n))
		for (size_t i = 0; i < n && !werr; i++) {
			/* rows are formatted into a batch written as one: a write
			 * through stdio per row cost as much as its formatting */
			if (rows_len > sizeof(rows) - ROW_MAX - 128) {
				werr = write_out(rows, rows_len);
				rows_len = 0;
			}
			rows_len += row(rows + rows_len, &recs[i], &cache[recs[i].side < 3 ? recs[i].side : 0]);
		}
	if (werr || write_out(rows, rows_len))
		return write_failed(r);
	/* fflush() and ferror(): an early failed write is not forgotten */
	if (ntp_out_flush(stdout))
		return write_failed(r);
	st = ntp_reader_stats(r);
	if (st->corrupt) {
		ntp_err("%s: %s; %llu records read, %llu dropped", argv[first], st->why,
			(unsigned long long)st->records, (unsigned long long)st->dropped);
		ntp_reader_close(r);
		return 1;
	}
	if (st->truncated)
		ntp_note("%s: %s; %llu records read, %llu dropped", argv[first], st->why,
			 (unsigned long long)st->records, (unsigned long long)st->dropped);
	ntp_reader_close(r);
	return 0;
}
