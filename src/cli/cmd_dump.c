// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_dump.c - `ntprof dump FILE`: every record as one CSV row (RFC 4180:
 * comma separated, CRLF line ends, a header row, fields quoted when they
 * hold a comma, quote or line break). A timestamp slot that was not seen is
 * an empty cell, so "0" always means a real clock value.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "options.h"
#include "core/out.h"
#include "core/ntpfile.h"

static const char *const ts_names[NTP_TS_COUNT] = {
	"h_blk_submit", "h_drv_submit", "h_cmd_sent", "h_r2t_arrive", "h_r2t_drv", "h_data_sent",
	"h_rsp_arrive", "h_rsp_drv", "h_drv_complete", "h_blk_complete", "h_send_done",
	"t_cmd_arrive", "t_cmd_recv", "t_r2t_sent", "t_data_arrive", "t_data_recv",
	"t_storage_submit", "t_storage_done", "t_rsp_queued", "t_rsp_sent", "t_rsp_send_done",
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof dump FILE\n"
"Prints every record of a recording as CSV (RFC 4180), one row per record and\n"
"side, with a header row. Columns: side, cntlid, qid, cid, opcode, nsid, slba,\n"
"nlb, len, dev, transport, impl, cpu, seq, flags, ts_valid, then one column per\n"
"timestamp (CLOCK_MONOTONIC ns of the machine that took it; empty when that\n"
"timestamp was not seen).\n"
"A file cut short is printed up to its last whole block, with a note on stderr\n"
"saying how it ended (exit 0); a block that fails its CRC is left out, the\n"
"blocks after it are printed, and a one-line error follows (exit 1).\n"
"\n"
"  -h, --help    this help\n");
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

/* Decimal without printf: dump of millions of rows is bound by formatting. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_hex(char *p, uint32_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[8];
	int n = 0;

	*p++ = '0';
	*p++ = 'x';
	do {
		tmp[n++] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static const char *side_name(uint8_t side)
{
	return side == NTP_SIDE_HOST ? "host" : side == NTP_SIDE_TARGET ? "target" : "unknown";
}

static const char *impl_name(uint8_t impl)
{
	return impl == NTP_IMPL_SPDK ? "spdk" : impl == NTP_IMPL_LINUX ? "linux" : "unknown";
}

/* One row; buf holds at least ROW_MAX bytes. Returns its length. */
#define ROW_MAX 1024
static size_t row(char *buf, const struct ntp_record *r)
{
	char dev[NTP_DEV_LEN + 1], *p = buf;

	memcpy(dev, r->dev, NTP_DEV_LEN);
	dev[NTP_DEV_LEN] = '\0';
	p = put_str(p, side_name(r->side));
	*p++ = ',';
	p = put_u64(p, r->cntlid);
	*p++ = ',';
	p = put_u64(p, r->qid);
	*p++ = ',';
	p = put_u64(p, r->cid);
	*p++ = ',';
	p = put_u64(p, r->opcode);
	*p++ = ',';
	p = put_u64(p, r->nsid);
	*p++ = ',';
	p = put_u64(p, r->slba);
	*p++ = ',';
	p = put_u64(p, r->nlb);
	*p++ = ',';
	p = put_u64(p, r->len);
	*p++ = ',';
	p = put_field(p, dev);		/* at most 2 * 32 + 2 bytes */
	*p++ = ',';
	p = put_str(p, ntp_transport_name(r->transport));
	*p++ = ',';
	p = put_str(p, impl_name(r->impl));
	*p++ = ',';
	p = put_u64(p, r->cpu);
	*p++ = ',';
	p = put_u64(p, r->seq);
	*p++ = ',';
	p = put_hex(p, r->flags);
	*p++ = ',';
	p = put_hex(p, r->ts_valid);
	for (int i = 0; i < NTP_TS_COUNT; i++) {
		*p++ = ',';
		if (r->ts_valid & (1u << i))
			p = put_u64(p, r->ts[i]);
	}
	*p++ = '\r';
	*p++ = '\n';
	return (size_t)(p - buf);
}

int cmd_dump(int argc, char **argv)
{
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &o };
	static char obuf[1 << 16];
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
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	fputs("side,cntlid,qid,cid,opcode,nsid,slba,nlb,len,dev,transport,impl,cpu,seq,flags,ts_valid", stdout);
	for (int i = 0; i < NTP_TS_COUNT; i++)
		printf(",%s", ts_names[i]);
	fputs("\r\n", stdout);
	while (ntp_reader_next_block(r, &recs, &n))
		for (size_t i = 0; i < n; i++) {
			char line[ROW_MAX];

			fwrite(line, 1, row(line, &recs[i]), stdout);
		}
	/* fflush() and ferror(): an early failed write is not forgotten */
	if (ntp_out_flush(stdout)) {
		ntp_reader_close(r);
		return ntp_err("dump: cannot write to stdout: %m");
	}
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
