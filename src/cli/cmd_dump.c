// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_dump.c - `ntprof dump FILE`: every record as one CSV row (RFC 4180:
 * comma separated, CRLF line ends, a header row, fields quoted when they
 * hold a comma, quote or line break). A timestamp slot that was not seen is
 * an empty cell, so "0" always means a real clock value.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "options.h"
#include "core/render/out.h"
#include "core/store/ntpfile.h"
#include "core/render/dumprow.h"
#include "core/render/esc.h"

/* the timestamps, then the target's backpressure durations, then the bio's
 * submission (dumprow.h) */
static const char *const ts_names[NTP_DUMP_SLOTS] = {
	"h_blk_submit", "h_drv_submit", "h_cmd_sent", "h_r2t_arrive", "h_r2t_drv", "h_data_sent",
	"h_rsp_arrive", "h_rsp_drv", "h_drv_complete", "h_blk_complete", "h_send_done",
	"t_cmd_arrive", "t_cmd_recv", "t_r2t_sent", "t_data_arrive", "t_data_recv",
	"t_storage_submit", "t_storage_done", "t_rsp_queued", "t_rsp_sent", "t_rsp_send_done",
	"t_bp_recv", "t_bp_rsp", "h_bio_submit",
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof dump [--header] FILE\n"
"Prints every record of a recording as CSV (RFC 4180), one row per record and\n"
"side, with a header row. Columns: side, cntlid, qid, cid, opcode, nsid, slba,\n"
"nlb, len, dev, transport, impl, cpu, seq, flags, ts_valid, then one column per\n"
"timestamp (CLOCK_MONOTONIC ns of the machine that took it; empty when that\n"
"timestamp was not seen), then t_bp_recv and t_bp_rsp, the target's storage\n"
"backpressure durations (ns; empty when not measured), then h_bio_submit, the\n"
"bio's submission on the host (empty where the kernel did not stamp it).\n"
"A file cut short is printed up to its last whole block, with a note on stderr\n"
"saying how it ended (exit 0); a block that fails its CRC is left out, the\n"
"blocks after it are printed, and a one-line error follows (exit 1).\n"
"Records lost before they reached the recording (the file counts them) are\n"
"said in a note on stderr.\n"
"With --header, the file's header as \"field: value\" lines instead: format,\n"
"machine, sampling, start, and the host's queues per namespace.\n"
"\n");
	ntp_cmd_help(f, "dump");
}

/* --header: what the header says (docs/ntp-format.md), one field a line. */
static int print_header(const struct ntp_reader *r)
{
	const struct ntp_file_info *fi = ntp_reader_info(r);

	printf("file: %s\n", ntp_esc(ntp_reader_path(r)));
	printf("format: %u.%u\n", fi->version_major, fi->version_minor);
	printf("role: %s\n", ntp_role_name(fi->role));
	printf("transport: %s\n", ntp_transport_name(fi->transport));
	printf("impl: host %s, target %s\n", ntp_impl_name(fi->impl_host), ntp_impl_name(fi->impl_target));
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

/* The rows go straight to the file descriptor in batches: through stdio
 * they were copied once more. 0, or -1 with errno set. */
/* The failed write's errno, kept across closing the reader. */
static int write_failed(struct ntp_reader *r, struct ntp_dump_rows *d)
{
	int e = errno;

	ntp_dump_rows_free(d);
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
	struct ntp_dump_rows *d;
	size_t rows_len = 0;
	int werr = 0;
	const struct ntp_read_stats *st;
	struct ntp_reader *r;
	const struct ntp_record *recs;
	char err[NTP_ERR_LEN];
	size_t n;
	int first, live;

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
	ntp_readers_full_speed(&r, 1, SIZE_MAX);	/* read ahead, or read() (ntpfile.h) */
	d = ntp_dump_rows_new();
	if (!d) {
		ntp_reader_close(r);
		return ntp_err("dump: out of memory");
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	fputs("side,cntlid,qid,cid,opcode,nsid,slba,nlb,len,dev,transport,impl,cpu,seq,flags,ts_valid", stdout);
	for (int i = 0; i < NTP_DUMP_SLOTS; i++)
		printf(",%s", ts_names[i]);
	fputs("\r\n", stdout);
	if (fflush(stdout))
		return write_failed(r, d);
	live = ntp_reader_stream(r);
	while (!werr && ntp_reader_next_block(r, &recs, &n)) {
		for (size_t i = 0, done; i < n && !werr; i += done) {
			/* rows are formatted into a batch written as one: a write
			 * through stdio per row cost as much as its formatting */
			rows_len += ntp_dump_rows_write(d, rows + rows_len, sizeof(rows) - rows_len, recs + i, n - i,
							&done);
			if (i + done < n) {
				werr = write_out(rows, rows_len);
				rows_len = 0;
			}
		}
		/* a pipe fed by a live recorder: each block's rows as it comes,
		 * not when the batch is full or the recorder stops */
		if (live && rows_len && !werr) {
			werr = write_out(rows, rows_len);
			rows_len = 0;
		}
	}
	if (werr || write_out(rows, rows_len))
		return write_failed(r, d);
	/* fflush() and ferror(): an early failed write is not forgotten */
	if (ntp_out_flush(stdout))
		return write_failed(r, d);
	ntp_dump_rows_free(d);
	st = ntp_reader_stats(r);
	/* the rows are the records the file has: it says what it lacks */
	if (st->lost_before)
		ntp_note("%s: records lost before reaching the recording: %llu (%s)", argv[first],
			 (unsigned long long)st->lost_before, NTP_LOST_WHY);
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
