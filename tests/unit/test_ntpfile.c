// SPDX-License-Identifier: GPL-2.0
/*
 * test_ntpfile.c - the .ntp writer and reader: round trip, a small
 * multi-block file cut at every byte offset and with a flipped byte at every
 * offset, empty/wrong/newer files, a newer minor version's larger records and
 * unknown blocks, and the once-a-second flush (CRC32C: test_crc32c.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/store/ntpfile.h"
#include "core/store/ntpfile_int.h"
#include "smaps.h"

#define NSEC 1000000000ull

static char tmpdir[] = "/tmp/test_ntpfile.XXXXXX";

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static struct ntp_record mkrec(unsigned i)
{
	struct ntp_record r;

	memset(&r, 0, sizeof(r));
	for (int k = 0; k < NTP_TS_COUNT; k++)
		r.ts[k] = 1000000ull * i + (uint64_t)k * 1000 + 7;
	r.ts_valid = (1u << NTP_TS_COUNT) - 1 - (i % 3 ? 0 : 1u << 5);
	r.slba = 8ull * i;
	r.seq = i;
	r.len = 4096;
	r.nsid = 1;
	r.cntlid = 1;
	r.qid = (uint16_t)(1 + i % 4);
	r.cid = (uint16_t)(i & 0xffff);
	r.nlb = 7;
	r.opcode = 2;
	r.side = NTP_SIDE_HOST;
	r.transport = NTP_TRANSPORT_TCP;
	snprintf(r.dev, sizeof(r.dev), "nvme0n%u", i % 10);
	return r;
}

static struct ntp_file_info mkinfo(void)
{
	struct ntp_file_info info = { 0 };

	info.role = NTP_ROLE_HOST;
	info.transport = NTP_TRANSPORT_TCP;
	info.sampling = 100;
	info.start_mono_ns = 5 * NSEC;
	info.start_real_ns = 1700000000ull * NSEC;
	snprintf(info.hostname, sizeof(info.hostname), "testhost");
	snprintf(info.kernel, sizeof(info.kernel), "6.1.0-test");
	snprintf(info.tool_version, sizeof(info.tool_version), "9.9.9");
	return info;
}

static struct ntp_total mktotal(unsigned io, uint64_t n)
{
	struct ntp_total t;

	memset(&t, 0, sizeof(t));
	t.key.side = NTP_SIDE_HOST;
	t.key.io = (uint8_t)io;
	t.key.len = 4096;
	snprintf(t.key.dev, sizeof(t.key.dev), "nvme0n1");
	t.count.commands = n;
	t.count.bytes = n * 4096;
	return t;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void spew(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/*
 * The small file used by the cut and flip tests: 3 record blocks of 3, 1
 * and 2 records, a totals block after each of the first two, and a trailer.
 */
#define SMALL_RECS 6
static const unsigned small_blocks[] = { 3, 1, 2 };

static void write_small(const char *path)
{
	struct ntp_file_info info = mkinfo();
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, &info, err, sizeof(err));
	unsigned i = 0;

	assert_non_null(w);
	for (unsigned b = 0; b < 3; b++) {
		struct ntp_total t[2] = { mktotal(0, 100 * (b + 1)), mktotal(1, 7 * (b + 1)) };

		for (unsigned k = 0; k < small_blocks[b]; k++) {
			struct ntp_record r = mkrec(i++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
		}
		if (b < 2)
			assert_int_equal(ntp_writer_set_totals(w, t, 2, info.start_mono_ns + (b + 1) * NSEC), 0);
		assert_int_equal(ntp_writer_flush(w, info.start_mono_ns + (b + 1) * NSEC), 0);
	}
	assert_int_equal(ntp_writer_close(w, info.start_mono_ns + 10 * NSEC), 0);
}

/* Block boundaries of a file, found from the documented layout. */
struct blk { size_t start, end; uint16_t type; uint32_t count; };

static size_t layout(const uint8_t *buf, size_t len, struct blk *out, size_t max)
{
	uint32_t hlen;
	size_t off, n = 0;

	memcpy(&hlen, buf + 12, 4);
	for (off = hlen; off + NTP_BLOCK_HDR_LEN <= len && n < max; n++) {
		uint32_t l;

		memcpy(&out[n].type, buf + off + 4, 2);
		memcpy(&l, buf + off + 8, 4);
		memcpy(&out[n].count, buf + off + 12, 4);
		out[n].start = off;
		out[n].end = off + NTP_BLOCK_HDR_LEN + l;
		off = out[n].end;
	}
	assert_int_equal(off, len);
	return n;
}

/* Reads everything; checks each record is the original of its position,
 * the records from..from+gap-1 (a dropped block) left out. */
static uint64_t read_all_but(struct ntp_reader *r, uint64_t from, uint64_t gap)
{
	struct ntp_record got, want;
	uint64_t n = 0;

	while (ntp_reader_next(r, &got)) {
		want = mkrec((unsigned)(n < from ? n : n + gap));
		assert_memory_equal(&got, &want, sizeof(got));
		n++;
	}
	return n;
}

static uint64_t read_all(struct ntp_reader *r)
{
	return read_all_but(r, 0, 0);
}

static void test_round_trip(void **state)
{
	char path[256], err[256];
	struct ntp_file_info info = mkinfo();
	struct ntp_writer *w;
	struct ntp_reader *r;
	const struct ntp_file_info *ri;
	const struct ntp_read_stats *st;
	const struct ntp_total *tot;
	struct ntp_total t[2] = { mktotal(0, 12345), mktotal(1, 99) };
	size_t nt;
	uint64_t as_of;
	unsigned n = 3 * NTP_BLOCK_RECORDS + 17;	/* several full blocks and a partial one */

	(void)state;
	tmp_path(path, sizeof(path), "rt.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (unsigned i = 0; i < n; i++) {
		struct ntp_record rec = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &rec), 0);
	}
	assert_int_equal(ntp_writer_records(w), n);
	assert_int_equal(ntp_writer_set_totals(w, t, 2, 42 * NSEC), 0);
	assert_int_equal(ntp_writer_close(w, 50 * NSEC), 0);

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	ri = ntp_reader_info(r);
	assert_int_equal(ri->version_major, NTP_FORMAT_MAJOR);
	assert_int_equal(ri->version_minor, NTP_FORMAT_MINOR);
	assert_int_equal(ri->record_size, sizeof(struct ntp_record));
	assert_int_equal(ri->role, NTP_ROLE_HOST);
	assert_int_equal(ri->transport, NTP_TRANSPORT_TCP);
	assert_int_equal(ri->sampling, 100);
	assert_int_equal(ri->start_mono_ns, 5 * NSEC);
	assert_int_equal(ri->start_real_ns, 1700000000ull * NSEC);
	assert_string_equal(ri->hostname, "testhost");
	assert_string_equal(ri->kernel, "6.1.0-test");
	assert_string_equal(ri->tool_version, "9.9.9");
	assert_string_equal(ntp_reader_path(r), path);
	assert_int_equal(read_all(r), n);
	st = ntp_reader_stats(r);
	assert_int_equal(st->records, n);
	assert_int_equal(st->dropped, 0);
	assert_int_equal(st->truncated, 0);
	assert_int_equal(st->corrupt, 0);
	assert_string_equal(st->why, "");
	assert_int_equal(st->end_mono_ns, 50 * NSEC);
	tot = ntp_reader_totals(r, &nt, &as_of);
	assert_int_equal(nt, 2);
	assert_memory_equal(tot, t, sizeof(t));
	assert_int_equal(as_of, 50 * NSEC);	/* the trailer's totals, as of the end */
	/* the end stays the end */
	{
		struct ntp_record x;

		assert_int_equal(ntp_reader_next(r, &x), 0);
	}
	ntp_reader_close(r);
}

/* Cut the small file at every byte offset: mapped, with read(), from memory. */
static void test_truncate_every_offset(void **state)
{
	char path[256], cut[256], err[256];
	struct blk b[16];
	size_t len, nb;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "small.ntp");
	tmp_path(cut, sizeof(cut), "cut.ntp");
	write_small(path);
	buf = slurp(path, &len);
	nb = layout(buf, len, b, 16);
	assert_int_equal(nb, 6);	/* recs, totals, recs, totals, recs, end */

	for (size_t k = 0; k <= len; k++) {
		for (int src = 0; src < 3; src++) {
			struct ntp_reader *r;
			const struct ntp_read_stats *st;
			uint64_t want = 0, drop = 0, totals_n = 0;
			size_t nt;
			struct ntp_reader_opts rd = { .no_mmap = 1 };

			err[0] = '\0';
			if (src == 0) {
				spew(cut, buf, k);
				r = ntp_reader_open(cut, err, sizeof(err));	/* mapped */
			} else if (src == 2) {
				r = ntp_reader_open_opts(cut, &rd, err, sizeof(err));	/* read() */
			} else {
				r = ntp_reader_open_mem(buf, k, "mem.ntp", err, sizeof(err));
			}
			if (k < NTP_HEADER_LEN) {
				assert_null(r);
				assert_non_null(strstr(err, src == 1 ? "mem.ntp: " : cut));
				continue;
			}
			assert_non_null(r);
			for (size_t i = 0; i < nb; i++) {
				if (b[i].end <= k) {
					if (b[i].type == NTP_BLOCK_RECORDS_T)
						want += b[i].count;
					else
						totals_n = b[i].count;
				} else if (b[i].type == NTP_BLOCK_RECORDS_T && k >= b[i].start + NTP_BLOCK_HDR_LEN) {
					drop = b[i].count;	/* its header was read: the count is known */
				}
			}
			assert_int_equal(read_all(r), want);
			st = ntp_reader_stats(r);
			assert_int_equal(st->records, want);
			assert_int_equal(st->dropped, drop);
			assert_int_equal(st->corrupt, 0);
			assert_int_equal(st->truncated, k < len);
			assert_true((st->why[0] != '\0') == (k < len));
			ntp_reader_totals(r, &nt, NULL);
			assert_int_equal(nt, totals_n);
			ntp_reader_close(r);
		}
	}
	free(buf);
}

/* Flip one byte at every offset: never a wrong record, always detected. */
static void test_flip_every_byte(void **state)
{
	char path[256], err[256];
	struct blk b[16];
	size_t len, nb;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "small.ntp");
	write_small(path);
	buf = slurp(path, &len);
	nb = layout(buf, len, b, 16);
	for (size_t k = 0; k < len; k++) {
		for (int x = 0; x < 2; x++) {
			uint8_t flip = x ? 0xff : (uint8_t)(1u << (k % 8));
			struct ntp_reader *r;
			const struct ntp_read_stats *st;
			uint64_t before = 0, got;

			buf[k] ^= flip;
			r = ntp_reader_open_mem(buf, len, "flip.ntp", err, sizeof(err));
			if (k < NTP_HEADER_LEN) {
				/* every header byte is under its CRC */
				assert_null(r);
				assert_non_null(strstr(err, "flip.ntp: "));
				buf[k] ^= flip;
				continue;
			}
			assert_non_null(r);
			for (size_t i = 0; i < nb && b[i].end <= k; i++)
				if (b[i].type == NTP_BLOCK_RECORDS_T && b[i].end <= k)
					before += b[i].count;
			{
				uint64_t all = 0, lost = 0;
				size_t i = 0;

				while (b[i].end <= k)
					i++;
				for (size_t j = 0; j < nb; j++)
					if (b[j].type == NTP_BLOCK_RECORDS_T)
						all += b[j].count;
				if (b[i].type == NTP_BLOCK_RECORDS_T)
					lost = b[i].count;
				/* the records read are the originals, none of a damaged block */
				got = read_all_but(r, before, lost);
				st = ntp_reader_stats(r);
				assert_int_equal(st->corrupt, 1);
				/* a bad payload under a sound header, or a bad block header
				 * (reading resumes at the next sound one): that block alone
				 * is dropped, every other record is read, and the trailer's
				 * count says how many were lost */
				assert_int_equal(got, all - lost);
				assert_int_equal(st->dropped, lost);
				assert_int_equal(st->damaged_blocks, 1);
				if (b[i].type == NTP_BLOCK_END) {
					/* its trailer is gone, but for a flip of its header's
					 * magic, flags or own CRC: the type, length, count and
					 * payload CRC still say it is the trailer, which is
					 * read (ntpfile.c trailer_past_bad_header) */
					size_t o = k - b[i].start;
					int readable = o < 4 || (o >= 6 && o < 8) || (o >= 20 && o < NTP_BLOCK_HDR_LEN);

					assert_int_equal(st->truncated, !readable);
				} else
					assert_int_equal(st->truncated, 0);
				assert_int_equal(st->records + st->dropped, SMALL_RECS);
			}
			ntp_reader_close(r);
			buf[k] ^= flip;
		}
	}
	free(buf);
}

/*
 * A flipped bit in a block header of a long recording: the reader resumes at
 * the next sound block, so only that block's records are lost, and the
 * trailer's count says how many (without a trailer, the skipped bytes do).
 * Read mapped with a one-page window (the search crosses windows), with
 * read(), and from memory. A block cut out cleanly is found by the count.
 */
static void check_resync(const char *path, const uint8_t *buf, size_t len, uint64_t n, uint64_t from,
			 uint64_t gap, uint64_t dropped, int truncated, const char *why)
{
	for (int how = 0; how < 3; how++) {
		struct ntp_reader_opts o = { .no_mmap = how == 1, .map_window = 4096 };
		const struct ntp_read_stats *st;
		struct ntp_reader *r;
		char err[256];

		r = how == 2 ? ntp_reader_open_mem(buf, len, path, err, sizeof(err))
			     : ntp_reader_open_opts(path, &o, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(read_all_but(r, from, gap), n - gap);
		st = ntp_reader_stats(r);
		assert_int_equal(st->records, n - gap);
		assert_int_equal(st->dropped, dropped);
		assert_int_equal(st->corrupt, 1);
		assert_int_equal(st->truncated, truncated);
		if (!strstr(st->why, why))
			fail_msg("why: '%s', expected '%s' in it", st->why, why);
		ntp_reader_close(r);
	}
}

static void test_resync_after_bad_header(void **state)
{
	char path[256], err[256], why[64];
	struct ntp_file_info info = mkinfo();
	unsigned n = 4 * NTP_BLOCK_RECORDS + 17;
	struct ntp_writer *w;
	struct blk b[16];
	size_t len, nb;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "resync.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (unsigned i = 0; i < n; i++) {
		struct ntp_record rec = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &rec), 0);
	}
	assert_int_equal(ntp_writer_close(w, 50 * NSEC), 0);
	buf = slurp(path, &len);
	nb = layout(buf, len, b, 16);
	assert_int_equal(nb, 6);	/* 5 records blocks and the trailer */
	assert_int_equal(b[1].count, NTP_BLOCK_RECORDS);

	/* one bit of the second block's length */
	buf[b[1].start + 9] ^= 0x10;
	spew(path, buf, len);
	snprintf(why, sizeof(why), "bad block header at offset %zu", b[1].start);
	check_resync(path, buf, len, n, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, 0, why);

	/* the same without the trailer: the skipped bytes held one block */
	spew(path, buf, b[5].start);
	check_resync(path, buf, b[5].start, n, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, 1, why);

	/* the magic of the third block too: two blocks skipped in one search */
	buf[b[2].start] ^= 0x01;
	spew(path, buf, len);
	check_resync(path, buf, len, n, NTP_BLOCK_RECORDS, 2 * NTP_BLOCK_RECORDS, 2 * NTP_BLOCK_RECORDS, 0, why);
	buf[b[2].start] ^= 0x01;
	buf[b[1].start + 9] ^= 0x10;

	/* the second block cut out cleanly: only the trailer's count shows it */
	memmove(buf + b[1].start, buf + b[1].end, len - b[1].end);
	len -= b[1].end - b[1].start;
	spew(path, buf, len);
	snprintf(why, sizeof(why), "counts %u records, %u were found", n, n - NTP_BLOCK_RECORDS);
	check_resync(path, buf, len, n, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, NTP_BLOCK_RECORDS, 0, why);
	free(buf);
}

static void test_bad_files(void **state)
{
	char path[256], err[256];
	uint8_t *buf;
	size_t len;

	(void)state;
	/* missing */
	tmp_path(path, sizeof(path), "nonexistent.ntp");
	assert_null(ntp_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	/* empty */
	tmp_path(path, sizeof(path), "empty.ntp");
	spew(path, "", 0);
	assert_null(ntp_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "empty"));
	/* wrong magic: some other file */
	tmp_path(path, sizeof(path), "text.ntp");
	spew(path, "hello, this is not a recording at all, but it is long enough ............", 70);
	assert_null(ntp_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "wrong magic"));
	assert_null(strchr(err, '\n'));
	/* newer major version, with a valid CRC: refused by name, one line */
	tmp_path(path, sizeof(path), "small.ntp");
	write_small(path);
	buf = slurp(path, &len);
	buf[8] = NTP_FORMAT_MAJOR + 1;
	buf[10] = 0;	/* minor 0 of the next major */
	buf[11] = 0;
	{
		uint32_t crc = ntp_crc32c(0, buf, NTP_HEADER_LEN - 4);

		memcpy(buf + NTP_HEADER_LEN - 4, &crc, 4);
	}
	tmp_path(path, sizeof(path), "newer.ntp");
	spew(path, buf, len);
	assert_null(ntp_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "newer"));
	assert_non_null(strstr(err, "format 2.0"));
	assert_null(strchr(err, '\n'));
	/* a bit flipped in the version of a sound file's header: its CRC
	 * fails, so it is a corrupt header, not a newer format */
	free(buf);
	tmp_path(path, sizeof(path), "small.ntp");
	buf = slurp(path, &len);
	buf[8] ^= 0x40;
	assert_null(ntp_reader_open_mem(buf, len, "flip.ntp", err, sizeof(err)));
	assert_non_null(strstr(err, "flip.ntp: corrupt header (CRC mismatch; its version reads 65."));
	assert_null(strstr(err, "newer"));
	buf[8] ^= 0x41;		/* major 0 */
	assert_null(ntp_reader_open_mem(buf, len, "flip0.ntp", err, sizeof(err)));
	assert_non_null(strstr(err, "corrupt header (CRC mismatch; its version reads 0."));
	/* the next major, its CRC not this format's (a flip, or a newer
	 * layout that keeps header_len and moved its CRC): named both ways */
	buf[8] = NTP_FORMAT_MAJOR + 1;
	assert_null(ntp_reader_open_mem(buf, len, "next.ntp", err, sizeof(err)));
	assert_non_null(strstr(err, "next.ntp: recorded in format 2.2 by a newer ntprof, or its header is damaged"));
	assert_null(strchr(err, '\n'));
	/* cut inside the header: the CRC cannot be checked, the version stands */
	buf[8] = NTP_FORMAT_MAJOR + 1;
	assert_null(ntp_reader_open_mem(buf, 100, "short.ntp", err, sizeof(err)));
	assert_non_null(strstr(err, "newer"));
	/* even when the newer version changed the rest of the header entirely */
	memset(buf + 12, 0xAB, NTP_HEADER_LEN - 12);
	assert_null(ntp_reader_open_mem(buf, len, "newer2.ntp", err, sizeof(err)));
	assert_non_null(strstr(err, "newer"));
	free(buf);
}

static void put_block(FILE *f, uint16_t type, const void *payload, uint32_t len, uint32_t count)
{
	uint8_t h[NTP_BLOCK_HDR_LEN] = { 0 };
	uint32_t magic = NTP_BLOCK_MAGIC, pcrc = ntp_crc32c(0, payload, len), hcrc;

	memcpy(h, &magic, 4);
	memcpy(h + 4, &type, 2);
	memcpy(h + 8, &len, 4);
	memcpy(h + 12, &count, 4);
	memcpy(h + 16, &pcrc, 4);
	hcrc = ntp_crc32c(0, h, 20);
	memcpy(h + 20, &hcrc, 4);
	fwrite(h, 1, sizeof(h), f);
	fwrite(payload, 1, len, f);
}

/* Format 1.2: the host's queues in a longer header, read back entry by
 * entry; a file without them keeps the 256-byte header of 1.0 and reads
 * back none; an older reader's view (the fixed fields and the CRC at the
 * header's end) is unchanged by the table. */
static void test_host_queues(void **state)
{
	char path[256], err[256];
	struct ntp_file_info info = mkinfo();
	struct ntp_writer *w;
	struct ntp_reader *r;
	const struct ntp_file_info *ri;
	struct ntp_record rec = mkrec(0);
	uint8_t h[NTP_HOSTQ_OFF + 2 * NTP_HOSTQ_ENTRY + 4];
	uint32_t hlen, crc;
	FILE *f;

	(void)state;
	info.n_hostq = 2;
	snprintf(info.hostq[0].dev, sizeof(info.hostq[0].dev), "nvme0n1");
	info.hostq[0].hw_queues = 2;
	info.hostq[0].tags = 128;
	snprintf(info.hostq[1].dev, sizeof(info.hostq[1].dev), "nvme1n12");
	info.hostq[1].hw_queues = 16;
	info.hostq[1].tags = 1023;
	tmp_path(path, sizeof(path), "hostq.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(ntp_writer_add(w, &rec), 0);
	assert_int_equal(ntp_writer_close(w, 9 * NSEC), 0);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	ri = ntp_reader_info(r);
	assert_int_equal(ri->version_minor, 2);
	assert_int_equal(ri->n_hostq, 2);
	assert_string_equal(ri->hostq[0].dev, "nvme0n1");
	assert_int_equal(ri->hostq[0].hw_queues, 2);
	assert_int_equal(ri->hostq[0].tags, 128);
	assert_string_equal(ri->hostq[1].dev, "nvme1n12");
	assert_int_equal(ri->hostq[1].hw_queues, 16);
	assert_int_equal(ri->hostq[1].tags, 1023);
	assert_ptr_equal(ntp_hostq_find(ri, "nvme1n12"), &ri->hostq[1]);
	assert_null(ntp_hostq_find(ri, "nvme1n1"));
	assert_string_equal(ri->hostname, "testhost");
	assert_int_equal(read_all(r), 1);
	ntp_reader_close(r);

	/* the header on disk: a table of 2 x 40 bytes at 256, the CRC last */
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
	fclose(f);
	memcpy(&hlen, h + 12, 4);
	assert_int_equal(hlen, sizeof(h));
	assert_int_equal(h[208] | h[209] << 8, NTP_HOSTQ_OFF);
	assert_int_equal(h[212], 2);
	assert_int_equal(h[214], NTP_HOSTQ_ENTRY);
	assert_memory_equal(h + NTP_HOSTQ_OFF + NTP_HOSTQ_ENTRY, "nvme1n12", 9);
	memcpy(&crc, h + hlen - 4, 4);
	assert_int_equal(crc, ntp_crc32c(0, h, hlen - 4));

	/* a table that runs past the header is a corrupt header, not a guess */
	h[212] = 3;
	crc = ntp_crc32c(0, h, hlen - 4);
	memcpy(h + hlen - 4, &crc, 4);
	r = ntp_reader_open_mem(h, sizeof(h), "bad-table.ntp", err, sizeof(err));
	assert_null(r);
	assert_non_null(strstr(err, "bad-table.ntp: corrupt header (host queue table of 3 entries"));

	/* none (a target, an SPDK host, an older ntprof): the 1.0 header */
	info.n_hostq = 0;
	tmp_path(path, sizeof(path), "nohostq.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(ntp_writer_close(w, 9 * NSEC), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(h, 1, NTP_HEADER_LEN, f), NTP_HEADER_LEN);
	fclose(f);
	memcpy(&hlen, h + 12, 4);
	assert_int_equal(hlen, NTP_HEADER_LEN);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_info(r)->n_hostq, 0);
	ntp_reader_close(r);

	/* a 1.1 file (the reserved bytes zero): read as before, no table */
	h[10] = 1;
	crc = ntp_crc32c(0, h, NTP_HEADER_LEN - 4);
	memcpy(h + NTP_HEADER_LEN - 4, &crc, 4);
	r = ntp_reader_open_mem(h, NTP_HEADER_LEN, "old.ntp", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_info(r)->version_minor, 1);
	assert_int_equal(ntp_reader_info(r)->n_hostq, 0);
	assert_int_equal(ntp_reader_info(r)->sampling, 100);
	ntp_reader_close(r);
}

/* Joined files: each host file's namespaces, the first file's entry kept for
 * a name both carry. */
static void test_host_queues_merge(void **state)
{
	struct ntp_file_info a = mkinfo(), b = mkinfo();

	(void)state;
	a.n_hostq = 1;
	snprintf(a.hostq[0].dev, sizeof(a.hostq[0].dev), "nvme0n1");
	a.hostq[0].tags = 4;
	b.n_hostq = 2;
	snprintf(b.hostq[0].dev, sizeof(b.hostq[0].dev), "nvme0n1");
	b.hostq[0].tags = 8;
	snprintf(b.hostq[1].dev, sizeof(b.hostq[1].dev), "nvme2n1");
	b.hostq[1].tags = 16;
	ntp_hostq_merge(&a, &b);
	assert_int_equal(a.n_hostq, 2);
	assert_int_equal(ntp_hostq_find(&a, "nvme0n1")->tags, 4);
	assert_int_equal(ntp_hostq_find(&a, "nvme2n1")->tags, 16);
	ntp_hostq_merge(&a, &a);
	assert_int_equal(a.n_hostq, 2);
}

/* A file from a newer minor version: longer header, longer records with
 * fields we do not know, a block type we do not know. */
static void test_newer_minor(void **state)
{
	enum { HLEN = NTP_HEADER_LEN + 64, RSIZE = sizeof(struct ntp_record) + 24 };
	char path[256], err[256];
	uint8_t h[HLEN] = { 0 }, recs[3 * RSIZE], unknown[40], end[24] = { 0 };
	struct ntp_reader *r;
	const struct ntp_read_stats *st;
	uint16_t major = NTP_FORMAT_MAJOR, minor = NTP_FORMAT_MINOR + 3;
	uint32_t hlen = HLEN, rsize = RSIZE, samp = 7, crc, esize = sizeof(struct ntp_total);
	uint64_t three = 3;
	FILE *f;

	(void)state;
	memcpy(h, NTP_FILE_MAGIC, 8);
	memcpy(h + 8, &major, 2);
	memcpy(h + 10, &minor, 2);
	memcpy(h + 12, &hlen, 4);
	memcpy(h + 16, &rsize, 4);
	h[20] = NTP_ROLE_TARGET;
	h[21] = NTP_TRANSPORT_RDMA;
	memcpy(h + 24, &samp, 4);
	memcpy(h + 48, "newhost", 7);
	memset(h + NTP_HEADER_LEN, 0x5A, HLEN - NTP_HEADER_LEN - 4);	/* new header fields */
	crc = ntp_crc32c(0, h, HLEN - 4);
	memcpy(h + HLEN - 4, &crc, 4);
	for (unsigned i = 0; i < 3; i++) {
		struct ntp_record rec = mkrec(i);

		memcpy(recs + i * RSIZE, &rec, sizeof(rec));
		memset(recs + i * RSIZE + sizeof(rec), 0xEE, RSIZE - sizeof(rec));
	}
	memset(unknown, 0x33, sizeof(unknown));
	memcpy(end + 8, &three, 8);
	memcpy(end + 16, &esize, 4);

	tmp_path(path, sizeof(path), "minor.ntp");
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(h, 1, sizeof(h), f);
	put_block(f, NTP_BLOCK_RECORDS_T, recs, 2 * RSIZE, 2);
	put_block(f, 77, unknown, sizeof(unknown), 5);
	put_block(f, NTP_BLOCK_RECORDS_T, recs + 2 * RSIZE, RSIZE, 1);
	put_block(f, NTP_BLOCK_END, end, sizeof(end), 0);
	fclose(f);

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_info(r)->version_minor, NTP_FORMAT_MINOR + 3);
	assert_int_equal(ntp_reader_info(r)->record_size, RSIZE);
	assert_int_equal(ntp_reader_info(r)->role, NTP_ROLE_TARGET);
	assert_int_equal(ntp_reader_info(r)->sampling, 7);
	assert_string_equal(ntp_reader_info(r)->hostname, "newhost");
	assert_int_equal(read_all(r), 3);
	st = ntp_reader_stats(r);
	assert_int_equal(st->skipped_blocks, 1);
	assert_int_equal(st->truncated, 0);
	assert_int_equal(st->corrupt, 0);
	ntp_reader_close(r);
}

/* The lost block (type 4) as this reader and a newer one's would write it:
 * the latest count stands, a longer payload (a newer minor's fields) is read
 * by its first 16 bytes, read ahead the same; a payload too short to hold
 * the count is a damaged file. (A reader before type 4 skips it as any
 * unknown type, test_newer_minor: the default case of its block loop.) */
static void test_lost_block_read(void **state)
{
	char path[256], err[256];
	struct ntp_file_info info = mkinfo();
	struct ntp_record rec = mkrec(0);
	uint8_t lost1[NTP_LOST_HDR] = { 0 }, lost2[NTP_LOST_HDR + 24], end[24] = { 0 };
	uint64_t v, one = 1;
	uint32_t esize = sizeof(struct ntp_total);
	struct ntp_writer *w;
	struct ntp_reader *r;
	FILE *f;

	(void)state;
	tmp_path(path, sizeof(path), "lostread.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));	/* the header */
	assert_non_null(w);
	assert_int_equal(ntp_writer_close(w, 6 * NSEC), 0);
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, NTP_HEADER_LEN, SEEK_SET);
	v = 41;
	memcpy(lost1 + 8, &v, 8);
	memset(lost2, 0x77, sizeof(lost2));
	v = 43;
	memcpy(lost2 + 8, &v, 8);
	memcpy(end + 8, &one, 8);
	memcpy(end + 16, &esize, 4);
	put_block(f, NTP_BLOCK_LOST, lost1, sizeof(lost1), 0);
	put_block(f, NTP_BLOCK_RECORDS_T, &rec, sizeof(rec), 1);
	put_block(f, NTP_BLOCK_LOST, lost2, sizeof(lost2), 0);
	put_block(f, NTP_BLOCK_END, end, sizeof(end), 0);
	fclose(f);
	for (int ahead = 0; ahead < 2; ahead++) {
		r = ntp_reader_open(path, err, sizeof(err));
		assert_non_null(r);
		if (ahead)
			ntp_reader_read_ahead(r);
		assert_int_equal(read_all(r), 1);
		assert_int_equal(ntp_reader_stats(r)->lost_before, 43);
		assert_int_equal(ntp_reader_stats(r)->skipped_blocks, 0);
		assert_int_equal(ntp_reader_stats(r)->corrupt, 0);
		assert_int_equal(ntp_reader_stats(r)->truncated, 0);
		ntp_reader_close(r);
	}

	/* 8 bytes: no count */
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(ntp_writer_close(w, 6 * NSEC), 0);
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, NTP_HEADER_LEN, SEEK_SET);
	put_block(f, NTP_BLOCK_LOST, lost1, 8, 0);
	put_block(f, NTP_BLOCK_END, end, sizeof(end), 0);
	fclose(f);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	read_all(r);
	assert_int_equal(ntp_reader_stats(r)->corrupt, 1);
	assert_non_null(strstr(ntp_reader_stats(r)->why, "bad lost block"));
	ntp_reader_close(r);
	unlink(path);
}

static off_t file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

/* The writer flushes at least once a second of the injected clock, and a
 * reader of the still-open file sees what was flushed, totals included. */
static void test_flush_every_second(void **state)
{
	char path[256], err[256];
	struct ntp_file_info info = mkinfo();	/* starts at 5 s */
	struct ntp_writer *w;
	struct ntp_reader *r;
	struct ntp_record rec = mkrec(0);
	struct ntp_total t = mktotal(0, 555);
	const struct ntp_total *rt;
	size_t nt;
	uint64_t as_of;
	off_t base, one = NTP_BLOCK_HDR_LEN + sizeof(struct ntp_record);

	(void)state;
	tmp_path(path, sizeof(path), "flush.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	base = file_size(path);
	assert_int_equal(base, NTP_HEADER_LEN);
	assert_int_equal(ntp_writer_add(w, &rec), 0);
	assert_int_equal(ntp_writer_tick(w, 5 * NSEC + NSEC / 2), 0);
	assert_int_equal(file_size(path), base);		/* 0.5 s: still buffered */
	assert_int_equal(ntp_writer_tick(w, 6 * NSEC - 1), 0);
	assert_int_equal(file_size(path), base);		/* just under a second */
	assert_int_equal(ntp_writer_tick(w, 6 * NSEC), 0);
	assert_int_equal(file_size(path), base + one);	/* a second: flushed */
	/* totals alone are flushed too, a second after the last flush */
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, 6 * NSEC + 100), 0);
	assert_int_equal(ntp_writer_tick(w, 6 * NSEC + NSEC / 2), 0);
	assert_int_equal(file_size(path), base + one);
	assert_int_equal(ntp_writer_tick(w, 7 * NSEC), 0);
	assert_int_equal(file_size(path), base + one + NTP_BLOCK_HDR_LEN + 16 + sizeof(t));
	/* nothing new: nothing written */
	assert_int_equal(ntp_writer_tick(w, 9 * NSEC), 0);
	assert_int_equal(file_size(path), base + one + NTP_BLOCK_HDR_LEN + 16 + sizeof(t));

	/* a recorder killed now leaves this: records and recent totals survive */
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(read_all(r), 1);
	assert_int_equal(ntp_reader_stats(r)->truncated, 1);
	assert_int_equal(ntp_reader_stats(r)->dropped, 0);
	assert_non_null(strstr(ntp_reader_stats(r)->why, "trailer"));
	rt = ntp_reader_totals(r, &nt, &as_of);
	assert_int_equal(nt, 1);
	assert_int_equal(rt[0].count.commands, 555);
	assert_int_equal(as_of, 6 * NSEC + 100);
	assert_int_equal(ntp_reader_stats(r)->end_mono_ns, 6 * NSEC + 100);
	ntp_reader_close(r);
	assert_int_equal(ntp_writer_close(w, 10 * NSEC), 0);
}

/* The block API hands out the same records, in place. */
static void test_next_block(void **state)
{
	char path[256], err[256];
	struct ntp_reader *r;
	const struct ntp_record *recs;
	size_t n, total = 0, blocks = 0;

	(void)state;
	tmp_path(path, sizeof(path), "small.ntp");
	write_small(path);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n)) {
		assert_int_equal(n, small_blocks[blocks]);
		assert_int_equal((uintptr_t)recs % 8, 0);
		for (size_t i = 0; i < n; i++) {
			struct ntp_record want = mkrec((unsigned)(total + i));

			assert_memory_equal(&recs[i], &want, sizeof(want));
		}
		total += n;
		blocks++;
	}
	assert_int_equal(total, SMALL_RECS);
	ntp_reader_close(r);
}

/* ---- the mmap window against read() and memory ---- */

struct outcome {
	uint64_t records, dropped, skipped;
	int truncated, corrupt, opened;
	uint32_t crc;			/* of every record returned, in order */
	size_t ntotals;
	char why[160];
	char err[256];
};

static void outcome_of(struct ntp_reader *r, const char *err, struct outcome *o)
{
	const struct ntp_record *recs;
	const struct ntp_read_stats *st;
	size_t n;

	memset(o, 0, sizeof(*o));
	if (!r) {
		/* the name differs by source: compare from the first ": " on */
		const char *c = strstr(err, ": ");

		snprintf(o->err, sizeof(o->err), "%s", c ? c : err);
		return;
	}
	o->opened = 1;
	while (ntp_reader_next_block(r, &recs, &n)) {
		assert_int_equal((uintptr_t)recs % 8, 0);
		o->crc = ntp_crc32c(o->crc, recs, n * sizeof(*recs));
	}
	st = ntp_reader_stats(r);
	o->records = st->records;
	o->dropped = st->dropped;
	o->skipped = st->skipped_blocks;
	o->truncated = st->truncated;
	o->corrupt = st->corrupt;
	snprintf(o->why, sizeof(o->why), "%s", st->why);
	ntp_reader_totals(r, &o->ntotals, NULL);
	ntp_reader_close(r);
}

static void assert_same_outcome(const struct outcome *a, const struct outcome *b)
{
	assert_int_equal(a->opened, b->opened);
	assert_string_equal(a->err, b->err);
	assert_int_equal(a->records, b->records);
	assert_int_equal(a->dropped, b->dropped);
	assert_int_equal(a->skipped, b->skipped);
	assert_int_equal(a->truncated, b->truncated);
	assert_int_equal(a->corrupt, b->corrupt);
	assert_int_equal(a->crc, b->crc);
	assert_int_equal(a->ntotals, b->ntotals);
	assert_string_equal(a->why, b->why);
}

/* Blocks of 1..61 records (up to 16.6 KB, more than a 4 KiB window) and a
 * totals block now and then: about 140 KB, so one-page windows slide over
 * block boundaries and blocks larger than the window. */
static size_t write_medium(const char *path)
{
	struct ntp_file_info info = mkinfo();
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, &info, err, sizeof(err));
	unsigned i = 0;

	assert_non_null(w);
	for (unsigned b = 0; b < 16; b++) {
		unsigned n = 1 + (b * 37) % 61;

		for (unsigned k = 0; k < n; k++) {
			struct ntp_record r = mkrec(i++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
		}
		if (b % 3 == 0) {
			struct ntp_total t[1] = { mktotal(0, 10 * b) };

			assert_int_equal(ntp_writer_set_totals(w, t, 1, info.start_mono_ns + b * NSEC), 0);
		}
		assert_int_equal(ntp_writer_flush(w, info.start_mono_ns + b * NSEC), 0);
	}
	assert_int_equal(ntp_writer_close(w, info.start_mono_ns + 20 * NSEC), 0);
	return i;
}

/* Near a page or block boundary, or on a stride: the cuts worth trying. */
static int interesting_cut(size_t k, const struct blk *b, size_t nb)
{
	if (k % 97 == 0 || k % 4096 < 3 || k % 4096 > 4093)
		return 1;
	for (size_t i = 0; i < nb; i++)
		if (k + 2 >= b[i].start && k <= b[i].start + NTP_BLOCK_HDR_LEN + 1)
			return 1;
	return 0;
}

/* The same bytes give the same records, counts and message whether read
 * from memory, with read(), mapped in one window, in one-page windows, or
 * mapped until mmap fails and read() takes over; cut anywhere interesting
 * and with a flipped byte. */
static struct ntp_reader *read_alone(struct ntp_reader *r)
{
	if (r)
		assert_int_equal(ntp_reader_read_alone(r), 0);
	return r;
}

static struct ntp_reader *while_cheap(struct ntp_reader *r)
{
	if (r)
		assert_int_equal(ntp_reader_map_while_cheap(r), 0);
	return r;
}

/* The address and file offset of this process's mapping of a file whose
 * path ends with name: 1 found, 0 not. */
static int file_mapping(const char *name, uintptr_t *addr, uint64_t *off)
{
	char line[1024];
	size_t nl = strlen(name);
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		unsigned long long a, b, o;

		if (n >= nl && !memcmp(line + n - nl, name, nl) &&
		    sscanf(line, "%llx-%llx %*s %llx", &a, &b, &o) == 3) {
			*addr = (uintptr_t)a;
			*off = o;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* Whether this process maps a file whose path ends with name. */
static int mapped_here(const char *name)
{
	uintptr_t addr;
	uint64_t off;

	return file_mapping(name, &addr, &off);
}

/* ntp_reader_read_alone: the file read with read() once the header is
 * parsed (no window left mapped), the same blocks as mapped (the outcomes
 * in test_map_matches_read); too late once a block was handed out, and
 * nothing to do for a memory source or with read-ahead's windows asked
 * for. */
static void test_read_alone(void **state)
{
	struct ntp_reader_opts keep = { .ahead_map = 1 };
	char path[256], err[256];
	const struct ntp_record *recs;
	struct ntp_reader *r;
	uint8_t *buf;
	size_t n, len, nrec;

	(void)state;
	tmp_path(path, sizeof(path), "alone.ntp");
	nrec = write_medium(path);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
	assert_true(mapped_here("/alone.ntp"));
	assert_int_equal(ntp_reader_read_alone(r), 1);	/* a block handed out */
	ntp_reader_close(r);
	assert_false(mapped_here("/alone.ntp"));

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_read_alone(r), 0);
	assert_false(mapped_here("/alone.ntp"));
	assert_int_equal(read_all(r), nrec);
	assert_false(mapped_here("/alone.ntp"));
	assert_string_equal(ntp_reader_stats(r)->why, "");
	ntp_reader_close(r);

	r = ntp_reader_open_opts(path, &keep, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_read_alone(r), 0);
	assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
	assert_true(mapped_here("/alone.ntp"));
	ntp_reader_close(r);

	buf = slurp(path, &len);
	r = ntp_reader_open_mem(buf, len, "m", err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_read_alone(r), 0);
	assert_int_equal(read_all(r), nrec);
	ntp_reader_close(r);
	free(buf);
}

/* A file of nfull of the writer's full records blocks, cut inside the
 * next one when cut: returns the records of the whole blocks. */
static size_t write_full_blocks(const char *path, unsigned nfull, int cut)
{
	struct ntp_file_info info = mkinfo();
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, &info, err, sizeof(err));
	unsigned n = (nfull + (cut ? 1 : 0)) * NTP_BLOCK_RECORDS;

	assert_non_null(w);
	for (unsigned i = 0; i < n; i++) {
		struct ntp_record r = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &r), 0);
	}
	assert_int_equal(ntp_writer_close(w, info.start_mono_ns + NSEC), 0);
	if (cut)
		assert_int_equal(truncate(path, file_size(path) - 1000 - 3 * (off_t)sizeof(struct ntp_record)), 0);
	return (size_t)nfull * NTP_BLOCK_RECORDS;
}

enum { LONG_BLOCK = 4 * NTP_BLOCK_RECORDS };

/* The writer's header, a full block, a long one of LONG_BLOCK records
 * (older writers packed up to 4096), two full ones, the trailer: records
 * mkrec(0) on, built in recs (LONG_BLOCK of room). Their number. */
static uint64_t write_long_block(const char *path, struct ntp_record *recs)
{
	uint8_t end[24] = { 0 }, *buf;
	uint32_t esize = sizeof(struct ntp_total), hlen;
	uint64_t total = 3 * NTP_BLOCK_RECORDS + LONG_BLOCK;
	size_t len;
	FILE *f;

	write_full_blocks(path, 0, 0);
	buf = slurp(path, &len);
	memcpy(&hlen, buf + 12, 4);
	f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(buf, 1, hlen, f);
	for (unsigned i = 0, k = 0; i < 4; i++) {
		unsigned n = i == 1 ? LONG_BLOCK : NTP_BLOCK_RECORDS;

		for (unsigned j = 0; j < n; j++)
			recs[j] = mkrec(k + j);
		put_block(f, NTP_BLOCK_RECORDS_T, recs, n * (uint32_t)sizeof(*recs), n);
		k += n;
	}
	memcpy(end + 8, &total, 8);
	memcpy(end + 16, &esize, 4);
	put_block(f, NTP_BLOCK_END, end, sizeof(end), 0);
	fclose(f);
	free(buf);
	return total;
}

/* n records, the ones written as record numbers from on (mkrec). */
static void check_recs(const struct ntp_record *recs, size_t n, size_t from)
{
	for (size_t i = 0; i < n; i++) {
		struct ntp_record want = mkrec((unsigned)(from + i));

		assert_memory_equal(&recs[i], &want, sizeof(want));
	}
}

/* Reads r to its end, its next record number from: every record the one
 * written in its place, and the blocks handed out all within span bytes
 * of each other (0: any). The records read. */
static size_t read_checked_from(struct ntp_reader *r, size_t span, size_t from)
{
	const uint8_t *lo = NULL, *hi = NULL;
	const struct ntp_record *recs;
	size_t n, got = 0;

	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n) == 1) {
		const uint8_t *a = (const uint8_t *)recs, *b = (const uint8_t *)(recs + n);

		check_recs(recs, n, from + got);
		got += n;
		lo = !lo || a < lo ? a : lo;
		hi = !hi || b > hi ? b : hi;
	}
	if (span)
		assert_true((size_t)(hi - lo) <= span);
	return got;
}

static size_t read_checked(struct ntp_reader *r, size_t span)
{
	return read_checked_from(r, span, 0);
}

/* The bytes malloc'ed and not freed (AddressSanitizer's count), 0 without it. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t allocated(void)
{
	return __sanitizer_get_current_allocated_bytes ? __sanitizer_get_current_allocated_bytes() : 0;
}

/* The read() calls this process made so far (/proc/self/io's syscr), 0
 * where it cannot tell. */
static unsigned long long reads_so_far(void)
{
	unsigned long long n = 0;
	char line[128];
	FILE *f = fopen("/proc/self/io", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* The read buffer of a reader read in its caller's thread is reused, at
 * most NTP_READ_BUF_MAX bytes (so it stays in the core's cache) while the
 * blocks are the writer's; whole or cut, with read() from the open
 * (NTPROF_NO_MMAP) or from the header's window on (read alone), the same
 * records; a longer block (older writers packed up to 4096 records)
 * grows the buffer (to what it needs, the old one freed) and the blocks
 * after it read on. A buffer filled from front to back over 2 MiB fails
 * the span. One read() per block. */
static void test_read_buffer_reused(void **state)
{
	struct ntp_reader_opts no_mmap = { .no_mmap = 1 };
	char path[256], err[256];
	struct ntp_record *recs = malloc(LONG_BLOCK * sizeof(*recs));
	uint64_t total;
	size_t want;

	(void)state;
	assert_non_null(recs);
	tmp_path(path, sizeof(path), "full.ntp");
	for (int cut = 0; cut < 2; cut++) {
		want = write_full_blocks(path, 12, cut);
		for (int o = 0; o < 2; o++) {
			struct ntp_reader *r = o ? ntp_reader_open_opts(path, &no_mmap, err, sizeof(err))
						 : read_alone(ntp_reader_open(path, err, sizeof(err)));
			unsigned long long before = reads_so_far();

			assert_int_equal(read_checked(r, NTP_READ_BUF_MAX), want);
			assert_int_equal(ntp_reader_stats(r)->truncated, cut);
			/* one read() per block (and the next one's header), a few
			 * at the end and for /proc/self/io itself */
			if (before)
				assert_true(reads_so_far() - before <= want / NTP_BLOCK_RECORDS + 6);
			ntp_reader_close(r);
		}
	}

	total = write_long_block(path, recs);
	for (int o = 0; o < 2; o++) {
		size_t before = allocated();
		struct ntp_reader *r = o ? ntp_reader_open_opts(path, &no_mmap, err, sizeof(err))
					 : read_alone(ntp_reader_open(path, err, sizeof(err)));

		assert_int_equal(read_checked(r, 0), total);
		assert_string_equal(ntp_reader_stats(r)->why, "");
		/* the outgrown buffer freed, the grown one what the long block
		 * needs to a page (not doubled), and the reader itself */
		if (before)
			assert_true(allocated() - before < LONG_BLOCK * sizeof(*recs) + 3 * 4096);
		ntp_reader_close(r);
	}
	free(recs);
}

/* The page cache of path dropped and read back a page at a time with no
 * read-ahead: every folio one page (where the cache can be dropped). */
static int small_pages(const char *path)
{
	char page[4096];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	while (read(fd, page, sizeof(page)) > 0)
		;
	close(fd);
	return 1;
}

/* Whether tmpfs may hold a file in huge pages (shmem_enabled not "never"). */
static int shmem_huge(void)
{
	char line[256] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return !strstr(line, "[never]") && !strstr(line, "[deny]");
}

/* the records' bytes of cheap_turns' first 'r' turn */
static size_t first_read_turn;

/* Reads the file cheap.ntp at path to its end under
 * ntp_reader_map_while_cheap with options o, every record checked (want of
 * them): in turns, 'm' and 'r' as the blocks came from a window or from
 * read() (up to 8 turns). */
static const char *cheap_turns(const char *path, const struct ntp_reader_opts *o, size_t want, char turns[9])
{
	const struct ntp_record *recs;
	struct ntp_reader *r;
	char err[256];
	size_t n, got = 0, turned = 0;
	int was = -1;

	first_read_turn = 0;
	r = ntp_reader_open_opts(path, o, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_map_while_cheap(r), 0);
	while (ntp_reader_next_block(r, &recs, &n) == 1) {
		int m = mapped_here("/cheap.ntp");

		check_recs(recs, n, got);
		got += n;
		if (m != was && turned < 8)
			turns[turned++] = (char)(m ? 'm' : 'r');
		was = m;
		if (!m && turned == 2)
			first_read_turn += n * sizeof(*recs);
	}
	turns[turned] = '\0';
	assert_int_equal(got, want);
	assert_string_equal(ntp_reader_stats(r)->why, "");
	ntp_reader_close(r);
	return turns;
}

/* ntp_reader_map_while_cheap over a file of several 2 MiB: each window
 * but the header's starts at a 2 MiB boundary of the file and of memory
 * (where a 2 MiB folio can be mapped whole), even where the read offset
 * is past it, and every record comes out as written. A window faulting
 * too often (map_dear) is let go before a block comes from it: the first
 * one only, read() for a window's length from its start, then mapped for
 * good; every one, read() to the end (for a window's length, then twice
 * that, each window in between let go): the same records; the same when
 * the file is in 4 KiB pages and the faults are counted. Too late once a
 * block was handed out; nothing to do for read(). */
static void test_map_while_cheap(void **state)
{
	struct ntp_reader_opts two = { .map_window = 2u << 20, .map_dear = -1 };
	struct ntp_reader_opts dear = { .map_window = 2u << 20, .map_dear = 1 };
	struct ntp_reader_opts dear_once = { .map_window = 2u << 20, .map_dear = 2 };
	struct ntp_reader_opts counted = { .map_window = 2u << 20 };
	struct ntp_reader_opts rd = { .no_mmap = 1 };
	const uint64_t mib2 = 2u << 20;
	const struct ntp_record *recs;
	char path[256], err[256];
	struct ntp_reader *r;
	size_t n, want, got = 0, windows = 0;
	char turns[9];
	uintptr_t addr;
	uint64_t off;

	(void)state;
	tmp_path(path, sizeof(path), "cheap.ntp");
	want = write_full_blocks(path, 40, 0);	/* about 10.6 MiB */
	r = ntp_reader_open_opts(path, &two, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_map_while_cheap(r), 0);
	while (ntp_reader_next_block(r, &recs, &n) == 1) {
		check_recs(recs, n, got);
		got += n;
		assert_true(file_mapping("/cheap.ntp", &addr, &off));
		if (!off)
			continue;	/* the header's window */
		assert_int_equal(off % mib2, 0);
		assert_int_equal(addr % mib2, 0);
		windows++;
	}
	assert_int_equal(got, want);
	assert_true(windows > 0);
	assert_string_equal(ntp_reader_stats(r)->why, "");
	ntp_reader_close(r);
	assert_false(mapped_here("/cheap.ntp"));

	/* mapped (the header's window, 1 MiB), read() for 2 MiB from the
	 * first block it did not hold whole, mapped from there on */
	assert_string_equal(cheap_turns(path, &dear_once, want, turns), "mrm");
	assert_true(first_read_turn > mib2 - 4096);
	assert_true(first_read_turn <= mib2 + NTP_BLOCK_RECORDS * sizeof(*recs));
	/* mapped (the header's window), read() for the rest */
	assert_string_equal(cheap_turns(path, &dear, want, turns), "mr");

	/* The same file in 4 KiB pages, counted for real: its page cache
	 * dropped and read back a page at a time with no read-ahead, so every
	 * folio is one page, and a window faults once per 64 KiB (the kernel's
	 * default fault-around), 16 times per MiB: every window let go, as
	 * when told so. (On tmpfs nothing is dropped; its pages are small
	 * unless shmem huge pages are on: then say so and stop.) */
	assert_true(small_pages(path));
	if (strcmp(cheap_turns(path, &counted, want, turns), "mr") && shmem_huge())
		print_message("shmem huge pages on: the counted case not checked\n");
	else
		assert_string_equal(turns, "mr");

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
	assert_int_equal(ntp_reader_map_while_cheap(r), 1);	/* a block handed out */
	ntp_reader_close(r);

	r = ntp_reader_open_opts(path, &rd, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_map_while_cheap(r), 0);
	assert_int_equal(read_checked(r, 0), want);
	ntp_reader_close(r);
}

/* ntp_map_touch_dear, the verdict on a window's touched pages: at a
 * stretch, whether their faults took longer than read() of the bytes
 * would (16 GB/s: 65536 ns a MiB), however few they were; at the
 * window's end, that or more than 8 faults a MiB, however quick. */
static void test_map_touch_dear(void **state)
{
	const uint64_t mib = 1u << 20, len = 16 * mib;

	(void)state;
	/* 2 MiB in 1 MiB folios, a fault each, 400 us: dear at once */
	assert_true(ntp_map_touch_dear(2, 400000, 2 * mib, len));
	/* the bound itself is not past it */
	assert_false(ntp_map_touch_dear(2, 2 * 65536, 2 * mib, len));
	assert_true(ntp_map_touch_dear(2, 2 * 65536 + 1, 2 * mib, len));
	/* many quick faults: on to the window's end */
	assert_false(ntp_map_touch_dear(32, 100000, 2 * mib, len));
	assert_false(ntp_map_touch_dear(8 * 16, 1000000, len, len));
	assert_true(ntp_map_touch_dear(8 * 16 + 1, 1000000, len, len));
	/* slow over the whole window, however few */
	assert_true(ntp_map_touch_dear(8, 16 * 65536 + 1, len, len));
	/* a window of 2 MiB folios: a fault per 2 MiB, quick */
	assert_false(ntp_map_touch_dear(8, 200000, len, len));
}

/* full records blocks of a file longer than NTP_AHEAD_MIN_BYTES */
#define AHEAD_LONG_BLOCKS ((unsigned)(NTP_AHEAD_MIN_BYTES / (NTP_BLOCK_RECORDS * sizeof(struct ntp_record))) + 1)

/* How ntp_readers_full_speed read each of k files (most: the lone target,
 * SIZE_MAX none), after one block of each: 'a' read ahead, 'r' with read()
 * in this thread, 'm' mapped. ahead_fail: no read-ahead thread starts. */
static void full_speed_modes(char (*path)[256], size_t k, size_t most, int ahead_fail, char *modes)
{
	struct ntp_reader_opts o = { .ahead_fail = ahead_fail };
	struct ntp_reader *r[NTP_AHEAD_FILES + 2];
	const struct ntp_record *recs;
	char name[32], err[256];
	size_t n;

	for (size_t i = 0; i < k; i++)
		assert_non_null(r[i] = ntp_reader_open_opts(path[i], &o, err, sizeof(err)));
	ntp_readers_full_speed(r, k, most);
	for (size_t i = 0; i < k; i++) {
		assert_int_equal(ntp_reader_next_block(r[i], &recs, &n), 1);
		snprintf(name, sizeof(name), "/speed%zu.ntp", i);
		modes[i] = ntp_reader_ahead(r[i]) ? 'a' : mapped_here(name) ? 'm' : 'r';
	}
	modes[k] = '\0';
	for (size_t i = 0; i < k; i++)
		ntp_reader_close(r[i]);
}

/* ntp_readers_full_speed over its cases: 1 and NTP_AHEAD_FILES files, one
 * and two more, with a lone target or none; one CPU (the process's
 * affinity, and NTPROF_THREADS=0), two CPUs, two CPUs with no thread
 * starting (the target falls back to read()). Few files: each read ahead
 * on two CPUs, mapped on one (while cheap: ntp_reader_map_while_cheap),
 * with read() where no thread starts; many: the target read ahead on two
 * CPUs, else with read(), the others (all without a target) with read().
 * File 1 is shorter than NTP_AHEAD_MIN_BYTES, the others longer: it is
 * never read ahead (mapped as on one CPU, a target of many read()). */
static void test_readers_full_speed(void **state)
{
	enum { N = NTP_AHEAD_FILES + 2 };
	static const size_t ks[] = { 1, NTP_AHEAD_FILES, NTP_AHEAD_FILES + 1, N };
	char path[N][256], name[32], modes[N + 1], want[N + 1];
	const char *was = getenv("NTPROF_THREADS");
	char *keep = was ? strdup(was) : NULL;
	cpu_set_t all, one;
	int cpu0 = -1, ncpu;

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "speed%d.ntp", i);
		tmp_path(path[i], sizeof(path[i]), name);
		if (i == 1)
			write_medium(path[i]);
		else
			write_full_blocks(path[i], AHEAD_LONG_BLOCKS, 0);
		assert_true((file_size(path[i]) >= (off_t)NTP_AHEAD_MIN_BYTES) == (i != 1));
	}
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	ncpu = CPU_COUNT(&all);
	for (int c = 0; c < CPU_SETSIZE && cpu0 < 0; c++)
		if (CPU_ISSET(c, &all))
			cpu0 = c;
	CPU_ZERO(&one);
	CPU_SET(cpu0, &one);
	/* setup: 0 NTPROF_THREADS=0, 1 one CPU, 2 two CPUs, 3 two and no thread */
	for (int setup = 0; setup < 4; setup++) {
		int two = setup >= 2;

		if (two && ncpu < 2) {
			print_message("one CPU only: read-ahead's cases not tried\n");
			break;
		}
		if (setup == 0)
			setenv("NTPROF_THREADS", "0", 1);
		else
			unsetenv("NTPROF_THREADS");
		assert_int_equal(sched_setaffinity(0, sizeof(cpu_set_t), setup == 1 ? &one : &all), 0);
		for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
			size_t k = ks[j];

			for (size_t most = 0; most <= k; most++) {
				size_t m = most == k ? SIZE_MAX : most;

				for (size_t i = 0; i < k; i++)
					want[i] = i != 1 && (k <= NTP_AHEAD_FILES || i == m) && setup == 2 ? 'a'
						  : k <= NTP_AHEAD_FILES && (setup < 2 || i == 1) ? 'm' : 'r';
				want[k] = '\0';
				full_speed_modes(path, k, m, setup == 3, modes);
				if (strcmp(modes, want))
					print_message("setup %d, %zu files, target %zu\n", setup, k, most);
				assert_string_equal(modes, want);
			}
		}
	}
	assert_int_equal(sched_setaffinity(0, sizeof(cpu_set_t), &all), 0);
	if (keep)
		setenv("NTPROF_THREADS", keep, 1);
	else
		unsetenv("NTPROF_THREADS");
	free(keep);
}

/* More files than NTP_AHEAD_FILES read at full speed in this thread
 * (ntpfile.c struct ntp_buf_arena): their first blocks lie in one
 * mapping, advised huge pages where the kernel has them; every file's
 * records come out as written, one whose long block outgrows its buffer
 * (a malloc'd one then) too; the mapping stays while a reader still
 * reads in it and goes with the last reader. */
static void test_many_files_one_arena(void **state)
{
	enum { N = NTP_AHEAD_FILES + 3 };
	char path[N][256], name[32], err[256];
	struct ntp_reader *r[N];
	struct ntp_record *recs = malloc(LONG_BLOCK * sizeof(*recs));
	const struct ntp_record *first;
	size_t n, got[N], want[N];
	uintptr_t lo = 0, hi = 0, lo2, hi2;
	int hg = 0, hg2, thp = have_thp();

	(void)state;
	assert_non_null(recs);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "arena%d.ntp", i);
		tmp_path(path[i], sizeof(path[i]), name);
		want[i] = i == N - 1 ? write_long_block(path[i], recs) : write_full_blocks(path[i], 2 + i % 2, 0);
		assert_non_null(r[i] = ntp_reader_open(path[i], err, sizeof(err)));
	}
	ntp_readers_full_speed(r, N, SIZE_MAX);
	for (int i = 0; i < N; i++) {
		assert_int_equal(ntp_reader_next_block(r[i], &first, &n), 1);
		assert_null(ntp_reader_ahead(r[i]));
		if (!i) {
			assert_true(mapping_of(first, &lo, &hi, &hg));
			if (thp)
				assert_true(hg);
		}
		/* every file's first block in the one mapping */
		assert_true((uintptr_t)first >= lo && (uintptr_t)(first + n) <= hi);
		check_recs(first, n, 0);
		got[i] = n;
	}
	for (int i = 1; i < N; i++) {
		got[i] += read_checked_from(r[i], 0, got[i]);
		assert_int_equal(got[i], want[i]);
		assert_string_equal(ntp_reader_stats(r[i])->why, "");
		ntp_reader_close(r[i]);
	}
	/* the first reader reads on in the mapping, the others closed */
	assert_true(mapping_of((const void *)lo, &lo2, &hi2, &hg2));
	got[0] += read_checked_from(r[0], 0, got[0]);
	assert_int_equal(got[0], want[0]);
	ntp_reader_close(r[0]);
	assert_false(mapping_of((const void *)lo, &lo2, &hi2, &hg2) && lo2 == lo && hi2 == hi);
	free(recs);
}

/* A few files read at full speed in this thread (NTPROF_THREADS=0), every
 * window found to fault too often (map_dear): read() into buffers of the
 * one arena too, advised huge pages where the kernel has them (a buffer
 * of malloc's took a fault per 4 KiB at its first read()); the records
 * as written. */
static void test_few_files_one_arena(void **state)
{
	struct ntp_reader_opts dear = { .map_dear = 1 };
	const char *was = getenv("NTPROF_THREADS");
	char *keep = was ? strdup(was) : NULL;
	char path[2][256], err[256];
	struct ntp_reader *r[2];
	const struct ntp_record *first;
	size_t n, got, want[2];
	uintptr_t lo = 0, hi = 0;
	int hg = 0, thp = have_thp();

	(void)state;
	setenv("NTPROF_THREADS", "0", 1);
	for (int i = 0; i < 2; i++) {
		tmp_path(path[i], sizeof(path[i]), i ? "few1.ntp" : "few0.ntp");
		want[i] = write_full_blocks(path[i], 12, 0);
		assert_non_null(r[i] = ntp_reader_open_opts(path[i], &dear, err, sizeof(err)));
	}
	ntp_readers_full_speed(r, 2, SIZE_MAX);
	for (int i = 0; i < 2; i++) {
		int read_here = 0;

		got = 0;
		while (ntp_reader_next_block(r[i], &first, &n) == 1) {
			assert_null(ntp_reader_ahead(r[i]));
			check_recs(first, n, got);
			got += n;
			if (read_here || mapped_here(i ? "/few1.ntp" : "/few0.ntp"))
				continue;	/* the header's window */
			/* the first block read(): in the arena */
			read_here = 1;
			if (!i) {
				assert_true(mapping_of(first, &lo, &hi, &hg));
				if (thp)
					assert_true(hg);
			}
			assert_true((uintptr_t)first >= lo && (uintptr_t)(first + n) <= hi);
		}
		assert_true(read_here);
		assert_int_equal(got, want[i]);
		assert_string_equal(ntp_reader_stats(r[i])->why, "");
	}
	for (int i = 0; i < 2; i++)
		ntp_reader_close(r[i]);
	if (keep)
		setenv("NTPROF_THREADS", keep, 1);
	else
		unsetenv("NTPROF_THREADS");
	free(keep);
}

/* Readers open one after another on one read() buffer (ntp_buf_arena_new,
 * the alignment's samples): each file's records come out as written, each
 * first block in the one mapping, advised huge pages where the kernel has
 * them; the caller's put before a reader is done leaves the mapping to
 * that reader, which the last put unmaps. */
static void test_one_buffer_in_turn(void **state)
{
	struct ntp_buf_arena *a = ntp_buf_arena_new(1, 0);
	struct ntp_reader_opts o = { .no_mmap = 1, .arena = a };
	char path[2][256], err[256];
	const struct ntp_record *first;
	size_t n, got, want[2];
	uintptr_t lo = 0, hi = 0;
	int hg = 0, thp = have_thp();

	(void)state;
	assert_non_null(a);
	for (int i = 0; i < 2; i++) {
		struct ntp_reader *r;

		tmp_path(path[i], sizeof(path[i]), i ? "turn1.ntp" : "turn0.ntp");
		want[i] = write_full_blocks(path[i], 6, 0);
		assert_non_null(r = ntp_reader_open_opts(path[i], &o, err, sizeof(err)));
		if (i)
			ntp_buf_arena_put(a);	/* the caller's: r reads on in it */
		got = 0;
		while (ntp_reader_next_block(r, &first, &n) == 1) {
			if (!got && !i) {
				assert_true(mapping_of(first, &lo, &hi, &hg));
				assert_true(hi - lo >= NTP_READ_BUF_MAX);
				if (thp)
					assert_true(hg);
			}
			if (!got)
				assert_true((uintptr_t)first >= lo && (uintptr_t)(first + n) <= hi);
			check_recs(first, n, got);
			got += n;
		}
		assert_int_equal(got, want[i]);
		assert_string_equal(ntp_reader_stats(r)->why, "");
		ntp_reader_close(r);
	}
}

static void test_map_matches_read(void **state)
{
	struct ntp_reader_opts rd = { .no_mmap = 1 }, page = { .map_window = 1 };
	struct ntp_reader_opts dear = { .map_window = 1, .map_dear = 1 };
	char path[256], cut[256], err[256];
	struct blk b[64];
	size_t len, nb, nrec, tried = 0;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "medium.ntp");
	tmp_path(cut, sizeof(cut), "medium-cut.ntp");
	nrec = write_medium(path);
	buf = slurp(path, &len);
	nb = layout(buf, len, b, 64);
	assert_true(len > 8 * 4096);
	for (size_t k = 0; k <= len; k++) {
		for (int flip = 0; flip < 2; flip++) {
			struct outcome mem, rdo, map, map1, fail, alone, cheap, cheap_fail;
			struct ntp_reader_opts late = { .map_window = 1, .map_fail_from = 3 * 4096 + 100 };
			struct ntp_reader_opts dear_late = { .map_window = 1, .map_dear = 1,
							     .map_fail_from = 5 * 4096 + 100 };

			if (!interesting_cut(k, b, nb) || (flip && k == len))
				continue;
			if (flip)
				buf[k] ^= 0x10;
			spew(cut, buf, flip ? len : k);
			outcome_of(ntp_reader_open_mem(buf, flip ? len : k, "m", err, sizeof(err)), err, &mem);
			outcome_of(ntp_reader_open_opts(cut, &rd, err, sizeof(err)), err, &rdo);
			outcome_of(ntp_reader_open(cut, err, sizeof(err)), err, &map);
			outcome_of(ntp_reader_open_opts(cut, &page, err, sizeof(err)), err, &map1);
			/* mapped, then mmap fails midway: read() takes over */
			outcome_of(ntp_reader_open_opts(cut, &late, err, sizeof(err)), err, &fail);
			/* mapped for the header, then read() (ntp_reader_read_alone) */
			outcome_of(read_alone(ntp_reader_open(cut, err, sizeof(err))), err, &alone);
			/* mapped, then read() as windows fault too often, mapped
			 * again, ...; and so until mmap fails midway */
			outcome_of(while_cheap(ntp_reader_open_opts(cut, &dear, err, sizeof(err))), err, &cheap);
			outcome_of(while_cheap(ntp_reader_open_opts(cut, &dear_late, err, sizeof(err))), err, &cheap_fail);
			if (flip)
				buf[k] ^= 0x10;
			assert_same_outcome(&mem, &rdo);
			assert_same_outcome(&mem, &map);
			assert_same_outcome(&mem, &map1);
			assert_same_outcome(&mem, &fail);
			assert_same_outcome(&mem, &alone);
			assert_same_outcome(&mem, &cheap);
			assert_same_outcome(&mem, &cheap_fail);
			if (k == len) {
				assert_int_equal(mem.records, nrec);
				assert_string_equal(mem.why, "");
			}
			tried++;
		}
	}
	assert_true(tried > 1000);
	free(buf);
}

/* A file that grows after the reader reached its end of the moment is read
 * on, mapped or with read() (its size taken again where a block would
 * reach past the old one): a recording still being written. */
static void read_growing(const char *path, const uint8_t *buf, size_t len, const struct ntp_reader_opts *o,
			 int alone);

static void test_map_growing_file(void **state)
{
	/* one-page windows, read() (no_mmap), read() after the header's window */
	struct ntp_reader_opts opts[] = { { .map_window = 1 }, { .no_mmap = 1 }, { 0 } };
	char path[256];
	size_t len;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "grow-src.ntp");
	write_medium(path);
	buf = slurp(path, &len);
	tmp_path(path, sizeof(path), "grow.ntp");
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++)
		read_growing(path, buf, len, &opts[o], o == 2);
	free(buf);
}

/* path holds the first half of buf's len bytes; read its first block, then
 * the rest arrives: read on to the end, every record and no complaint. */
static void read_growing(const char *path, const uint8_t *buf, size_t len, const struct ntp_reader_opts *o,
			 int alone)
{
	char err[256];
	struct ntp_reader *r;
	const struct ntp_record *recs;
	size_t half = len / 2, n, got = 0;
	int fd;

	spew(path, buf, half);
	r = ntp_reader_open_opts(path, o, err, sizeof(err));
	assert_non_null(r);
	if (alone)
		read_alone(r);
	/* read the first block, then the rest of the file arrives */
	assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
	got += n;
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf + half, len - half), (ssize_t)(len - half));
	close(fd);
	while (ntp_reader_next_block(r, &recs, &n))
		got += n;
	assert_string_equal(ntp_reader_stats(r)->why, "");
	assert_int_equal(got, ntp_reader_stats(r)->records);
	ntp_reader_close(r);
	{
		struct outcome whole;

		outcome_of(ntp_reader_open_mem(buf, len, "m", err, sizeof(err)), err, &whole);
		assert_int_equal(got, whole.records);
	}
}

/* Truncated by another process while mapped: with ntp_reader_catch_sigbus()
 * the process says which file and exits 1 instead of dying of SIGBUS. */
static void truncated_under_reader(int ahead)
{
	char path[256], err[256], msg[512] = "";
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;

	tmp_path(path, sizeof(path), "shrink.ntp");
	write_medium(path);
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ntp_reader_opts o = { .ahead_map = 1 };	/* read-ahead through windows */
		const struct ntp_record *recs;
		struct ntp_reader *r;
		size_t k;

		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		if (ntp_reader_catch_sigbus("test_ntpfile"))
			_exit(3);
		r = ntp_reader_open_opts(path, &o, err, sizeof(err));	/* one window holds the file */
		if (!r)
			_exit(4);
		if (truncate(path, 4096))
			_exit(5);
		/* with read-ahead, the thread that touches the window faults */
		if (ahead && ntp_reader_read_ahead(r))
			_exit(6);
		while (ntp_reader_next_block(r, &recs, &k))
			;
		_exit(0);	/* not reached: the pages past 4096 are gone */
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(msg, "test_ntpfile: "));
	assert_non_null(strstr(msg, "shrink.ntp: the file was truncated while being read"));
}

static void test_map_truncated_under_reader(void **state)
{
	(void)state;
	truncated_under_reader(0);
	truncated_under_reader(1);
}


/* ---- read-ahead: a second thread reads the blocks (ntpfile_ahead.c) ---- */

/* Appends to log what the caller sees after each block: its records, the
 * stats and the totals as of it. ahead: with read-ahead; pause: let the
 * thread run ahead before the block is read (its window must stay). */
static void block_log(struct ntp_reader *r, int ahead, int pause, char *log, size_t cap)
{
	const struct ntp_record *recs;
	size_t n, len = strlen(log), k = 0;

	if (!r) {
		snprintf(log + len, cap - len, "no reader\n");
		return;
	}
	if (ahead)
		assert_int_equal(ntp_reader_read_ahead(r), 0);
	for (;;) {
		const struct ntp_read_stats *st;
		const struct ntp_total *t;
		uint64_t as_of;
		size_t nt;
		int more = ntp_reader_next_block(r, &recs, &n);
		uint32_t crc = 0;

		if (more && pause && k++ % 3 == 0)
			usleep(2000);
		if (more)
			crc = ntp_crc32c(0, recs, n * sizeof(*recs));
		st = ntp_reader_stats(r);
		t = ntp_reader_totals(r, &nt, &as_of);
		len += (size_t)snprintf(log + len, cap - len,
					"%d %zu %08x | %llu %llu %llu %llu %d %d %llu '%s' | %zu %llu %llu\n",
					more, more ? n : 0, crc, (unsigned long long)st->records,
					(unsigned long long)st->dropped, (unsigned long long)st->skipped_blocks,
					(unsigned long long)st->damaged_blocks, st->truncated, st->corrupt,
					(unsigned long long)st->end_mono_ns, st->why, nt,
					(unsigned long long)as_of,
					(unsigned long long)(nt ? t[nt - 1].count.commands : 0));
		assert_true(len < cap);
		if (!more)
			break;
	}
	ntp_reader_close(r);
}

/* The blocks of path read with read-ahead (pausing or not) logged into got,
 * which must equal the one-thread reader's log (want, both of cap bytes);
 * returns got's last line (the stats after the end). */
static const char *ahead_log_matches(const char *path, const struct ntp_reader_opts *o, int pause, char *want,
				     char *got, size_t cap)
{
	char err[256];
	const char *last;

	want[0] = got[0] = '\0';
	block_log(ntp_reader_open_opts(path, o, err, sizeof(err)), 0, 0, want, cap);
	block_log(ntp_reader_open_opts(path, o, err, sizeof(err)), 1, pause, got, cap);
	assert_string_equal(want, got);
	last = strrchr(got, '\n');
	assert_non_null(last);
	while (last > got && last[-1] != '\n')
		last--;
	return last;
}

/* With read-ahead, block by block, the caller sees what it sees without:
 * the same records, stats and totals after each block, whatever the source
 * (read() into buffers the thread leaves behind while the caller still reads
 * in them; one window, one-page windows, mmap failing midway), for a whole,
 * cut or damaged file; and a reader closed early stops its thread. */
static void test_read_ahead_matches(void **state)
{
	static char want[1 << 16], got[1 << 16];
	struct ntp_reader_opts opts[] = {
		{ 0 }, { .no_mmap = 1 }, { .map_window = 1 }, { .ahead_map = 1 },
		{ .map_window = 1, .ahead_map = 1 },
		{ .map_window = 1, .map_fail_from = 3 * 4096 + 100, .ahead_map = 1 },
	};
	char path[256], cut[256], err[256];
	size_t len, tried = 0;
	uint8_t *buf;

	(void)state;
	tmp_path(path, sizeof(path), "ahead.ntp");
	tmp_path(cut, sizeof(cut), "ahead-cut.ntp");
	write_medium(path);
	buf = slurp(path, &len);
	for (size_t k = 0; k <= len; k += k == len ? 1 : 1 + k % 3001) {
		for (int flip = 0; flip < 2; flip++) {
			if (flip && k == len)
				continue;
			if (flip)
				buf[k] ^= 0x10;
			spew(cut, buf, flip ? len : k);
			if (flip)
				buf[k] ^= 0x10;
			for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
				want[0] = got[0] = '\0';
				block_log(ntp_reader_open_opts(cut, &opts[o], err, sizeof(err)), 0, 0,
					  want, sizeof(want));
				block_log(ntp_reader_open_opts(cut, &opts[o], err, sizeof(err)), 1,
					  k == len || k % 2, got, sizeof(got));
				assert_string_equal(want, got);
				tried++;
			}
		}
	}
	assert_true(tried > 200);
	/* memory needs no thread; nor does a reader that handed out a block */
	{
		struct ntp_reader *r = ntp_reader_open_mem(buf, len, "m", err, sizeof(err));
		const struct ntp_record *recs;
		size_t n;

		assert_int_equal(ntp_reader_read_ahead(r), 1);
		ntp_reader_close(r);
		r = ntp_reader_open(path, err, sizeof(err));
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(ntp_reader_read_ahead(r), 1);
		ntp_reader_close(r);
		/* closed after two blocks, the thread waiting for room */
		for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
			r = ntp_reader_open_opts(path, &opts[o], err, sizeof(err));
			assert_int_equal(ntp_reader_read_ahead(r), 0);
			assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
			assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
			usleep(2000);
			ntp_reader_close(r);
		}
	}
	free(buf);
}

/* A file of full blocks larger than twice read-ahead's buffer (AHEAD_BUF,
 * ntpfile.c): the thread moves to new buffers again and again while the
 * caller, pausing, still reads blocks in the old ones, which must be
 * retired, not moved (read() as the reader's own, or after the header's
 * window). */
static void test_read_ahead_large(void **state)
{
	static char want[1 << 14], got[1 << 14];
	struct ntp_reader_opts opts[] = { { 0 }, { .no_mmap = 1 } };
	char path[256];
	size_t nrec;

	(void)state;
	tmp_path(path, sizeof(path), "ahead-large.ntp");
	nrec = write_full_blocks(path, 20, 0);
	assert_true(file_size(path) > 2 * (2 << 20));
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		for (int pause = 0; pause < 2; pause++) {
			const char *last = ahead_log_matches(path, &opts[o], pause, want, got, sizeof(got));
			unsigned long long records = 0;

			assert_int_equal(sscanf(last, "0 0 00000000 | %llu", &records), 1);
			assert_int_equal(records, nrec);
			assert_non_null(strstr(last, " '' |"));
		}
	}
}

/* Read-ahead's buffers (AHEAD_BUF, ntpfile.c buf_new) are advised huge
 * pages where the kernel has them: the blocks the thread hands out lie in
 * such a mapping, and every record comes out as written; the mappings go
 * with the reader. */
static void test_read_ahead_huge(void **state)
{
	struct ntp_reader_opts o = { .no_mmap = 1 };
	int thp = have_thp(), hg2;
	char path[256], err[256];
	const struct ntp_record *first;
	size_t n, got = 0, want, in_huge = 0;
	uintptr_t huge_lo = 0, huge_hi = 0, lo2, hi2;
	struct ntp_reader *r;

	(void)state;
	tmp_path(path, sizeof(path), "ahead-huge.ntp");
	want = write_full_blocks(path, 12, 0);
	assert_non_null(r = ntp_reader_open_opts(path, &o, err, sizeof(err)));
	assert_int_equal(ntp_reader_read_ahead(r), 0);
	while (ntp_reader_next_block(r, &first, &n) == 1) {
		uintptr_t lo, hi;
		int hg = 0;

		check_recs(first, n, got);
		got += n;
		assert_true(mapping_of(first, &lo, &hi, &hg));
		if (hg && hi - lo >= (2u << 20)) {
			in_huge++;
			huge_lo = lo;
			huge_hi = hi;
		}
	}
	assert_int_equal(got, want);
	if (thp)
		assert_true(in_huge > 0);
	ntp_reader_close(r);
	if (in_huge)
		assert_false(mapping_of((const void *)huge_lo, &lo2, &hi2, &hg2) && lo2 == huge_lo && hi2 == huge_hi);
}

/* The records blocks of a file's bytes: where each starts, its payload's
 * length and records. */
struct rblk { size_t at, len; unsigned count; };

static size_t records_blocks(const uint8_t *buf, size_t len, struct rblk *out, size_t max)
{
	static struct blk all[1024];
	size_t nall = layout(buf, len, all, 1024), n = 0;

	for (size_t i = 0; i < nall && n < max; i++)
		if (all[i].type == NTP_BLOCK_RECORDS_T)
			out[n++] = (struct rblk){ all[i].start, all[i].end - all[i].start - NTP_BLOCK_HDR_LEN,
						  all[i].count };
	return n;
}

/* write_medium() into the temporary file NAME, read back whole; its records
 * blocks (up to 32) in b[], how many in *nb, the records written in *written. */
static uint8_t *medium_blocks(const char *name, struct rblk *b, size_t *nb, size_t *len, size_t *written)
{
	char path[256];
	uint8_t *buf;

	tmp_path(path, sizeof(path), name);
	*written = write_medium(path);
	buf = slurp(path, len);
	*nb = records_blocks(buf, *len, b, 32);
	return buf;
}

/*
 * With read-ahead the thread checks the first part of a records block's
 * CRC and the caller the rest (ntpfile_ahead.c): a payload damaged in
 * either part, at any share, leaves what the caller sees after each block
 * as without the thread: the records of every later block counted, the
 * damaged ones dropped, and the first damage's note, even when a cut or a
 * bad header follows (which the thread, not knowing of the damage, notes
 * first).
 */
static void test_read_ahead_split_crc(void **state)
{
	static char want[1 << 16], got[1 << 16];
	static const char *splits[] = { "0", "1", "4", "8", "12", "15", "16" };
	struct ntp_reader_opts opts[] = { { 0 }, { .no_mmap = 1 }, { .ahead_map = 1 } };
	char bad[256], note[128];
	struct rblk b[32];
	size_t len, nb, written;
	uint8_t *buf;

	(void)state;
	tmp_path(bad, sizeof(bad), "split-bad.ntp");
	buf = medium_blocks("split.ntp", b, &nb, &len, &written);
	assert_true(nb >= 12);
	for (int c = 0; c < 6; c++) {
		uint8_t *d = malloc(len);
		size_t dlen = len, lost = b[2].count + b[5].count;

		assert_non_null(d);
		memcpy(d, buf, len);
		switch (c) {
		case 0:	/* the last byte of two payloads: the caller's part */
		case 3:	/* ... then a cut inside a later block */
		case 4:	/* ... then a bad block header */
			d[b[2].at + NTP_BLOCK_HDR_LEN + b[2].len - 1] ^= 1;
			d[b[5].at + NTP_BLOCK_HDR_LEN + b[5].len - 1] ^= 1;
			break;
		case 1:	/* the first byte: the thread's part (but at share 0) */
			d[b[2].at + NTP_BLOCK_HDR_LEN] ^= 1;
			d[b[5].at + NTP_BLOCK_HDR_LEN] ^= 1;
			break;
		case 2:	/* the middle of each */
		case 5:
			d[b[2].at + NTP_BLOCK_HDR_LEN + b[2].len / 2] ^= 0x80;
			d[b[5].at + NTP_BLOCK_HDR_LEN + b[5].len / 2] ^= 0x80;
			break;
		}
		if (c == 3)
			dlen = b[9].at + NTP_BLOCK_HDR_LEN + b[9].len / 2;
		if (c == 4)
			d[b[9].at] ^= 1;	/* its magic */
		if (c == 5)
			dlen = b[nb - 1].at + NTP_BLOCK_HDR_LEN + b[nb - 1].len;	/* no trailer */
		spew(bad, d, dlen);
		free(d);
		snprintf(note, sizeof(note), "'block at offset %zu fails its CRC'", b[2].at);
		for (size_t sp = 0; sp < sizeof(splits) / sizeof(splits[0]); sp++) {
			setenv("NTPROF_CRC_SPLIT", splits[sp], 1);
			for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
				const char *last;

				/* and what that is: the last line, after the end */
				last = ahead_log_matches(bad, &opts[o], (int)(sp + o) % 2, want, got, sizeof(got));
				assert_non_null(strstr(last, note));
				if (c < 3) {
					char counts[64];

					snprintf(counts, sizeof(counts), "| %zu %zu 0 2 0 1 ", written - lost, lost);
					assert_non_null(strstr(last, counts));
				}
			}
		}
	}
	unsetenv("NTPROF_CRC_SPLIT");
	free(buf);
}

/* A read-ahead thread that cannot start (pthread_create refused: a process
 * or pids limit) leaves the reader on its own: every block's CRC checked
 * whole, a damaged block in either part of the payload skipped and named,
 * as without read-ahead. */
static void test_read_ahead_thread_fails(void **state)
{
	static char want[1 << 16], got[1 << 16];
	struct ntp_reader_opts fail = { .ahead_fail = 1 };
	char bad[256], err[256], note[128], counts[64];
	struct rblk b[32];
	size_t len, nb, written;
	uint8_t *buf;

	(void)state;
	tmp_path(bad, sizeof(bad), "nothread-bad.ntp");
	buf = medium_blocks("nothread.ntp", b, &nb, &len, &written);
	assert_true(nb >= 6);
	/* records read, dropped; skipped blocks 0, damaged 2, not cut, damaged */
	snprintf(counts, sizeof(counts), "| %zu %zu 0 2 0 1 ", written - b[2].count - b[5].count,
		 (size_t)b[2].count + b[5].count);
	buf[b[2].at + NTP_BLOCK_HDR_LEN + b[2].len - 1] ^= 1;	/* the caller's part of a split */
	buf[b[5].at + NTP_BLOCK_HDR_LEN] ^= 1;			/* the thread's part */
	spew(bad, buf, len);
	for (int src = 0; src < 2; src++) {
		struct ntp_reader_opts o = { .no_mmap = src };
		struct ntp_reader *r;

		fail.no_mmap = src;
		want[0] = got[0] = '\0';
		block_log(ntp_reader_open_opts(bad, &o, err, sizeof(err)), 0, 0, want, sizeof(want));
		r = ntp_reader_open_opts(bad, &fail, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_read_ahead(r), 1);
		block_log(r, 0, 0, got, sizeof(got));
		assert_string_equal(want, got);
		snprintf(note, sizeof(note), "'block at offset %zu fails its CRC'", b[2].at);
		assert_non_null(strstr(got, note));
		assert_non_null(strstr(got, counts));
	}
	free(buf);
	/* a file larger than read-ahead's buffer, read in this thread: a
	 * block's buffer, not read-ahead's */
	for (int src = 0; src < 2; src++) {
		struct ntp_reader *r;
		size_t before = allocated();

		fail.no_mmap = src;
		tmp_path(bad, sizeof(bad), "nothread-large.ntp");
		written = write_full_blocks(bad, 12, 0);
		r = ntp_reader_open_opts(bad, &fail, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_read_ahead(r), 1);
		assert_int_equal(read_checked(r, 0), written);
		if (before)
			assert_true(allocated() - before < NTP_READ_BUF_MAX);
		ntp_reader_close(r);
	}
}

/*
 * A read error after a damaged block: in one thread the damaged block's
 * note is written over by the read error's (the only note not kept first,
 * ntpfile.c fill); with read-ahead the caller, who finds the damage in its
 * part of the CRC after the thread went on, must leave the read error's
 * note standing too (ntpfile_ahead.c take_stats, the reader's why_over).
 * Block by block, at CRC shares from 0 to 16, through read(), mmap falling
 * back to read(), and the thread's own windows, the bad offset at a block's
 * start, inside a block, in the trailer, and before the damage.
 */
static void test_read_ahead_read_error(void **state)
{
	static char want[1 << 16], got[1 << 16];
	static const char *splits[] = { "0", "1", "4", "8", "12", "15", "16" };
	/* skipped blocks, damaged, cut, damaged: the blocks before the bad offset */
	static const char *counts[] = { " 0 1 1 1 ", " 0 2 1 1 ", " 0 2 1 1 ", " 0 0 1 0 " };
	char bad[256], note[128];
	struct rblk b[32];
	size_t len, nb, written, from[4];
	uint8_t *buf;

	(void)state;
	tmp_path(bad, sizeof(bad), "readerr-bad.ntp");
	buf = medium_blocks("readerr.ntp", b, &nb, &len, &written);
	assert_true(nb >= 12);
	/* the last byte of two payloads: the caller's part of a split CRC */
	buf[b[2].at + NTP_BLOCK_HDR_LEN + b[2].len - 1] ^= 1;
	buf[b[5].at + NTP_BLOCK_HDR_LEN + b[5].len - 1] ^= 1;
	spew(bad, buf, len);
	from[0] = b[3].at;				/* the block after the damage */
	from[1] = b[9].at + NTP_BLOCK_HDR_LEN + 100;	/* inside a later one */
	from[2] = b[nb - 1].at + NTP_BLOCK_HDR_LEN + b[nb - 1].len + 40;	/* in the trailer */
	from[3] = b[1].at + 30;				/* before the damage */
	assert_true(from[2] < len);
	for (size_t f = 0; f < 4; f++) {
		struct ntp_reader_opts opts[] = {
			{ .no_mmap = 1 }, { 0 }, { .ahead_map = 1 },
			{ .map_window = 1, .ahead_map = 1 },
		};

		snprintf(note, sizeof(note), "'read error at offset %zu: %s'", from[f], strerror(EIO));
		for (size_t sp = 0; sp < sizeof(splits) / sizeof(splits[0]); sp++) {
			setenv("NTPROF_CRC_SPLIT", splits[sp], 1);
			for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
				const char *last;

				opts[o].read_fail_from = from[f];
				/* the last line, after the end: the read error's note,
				 * the damaged blocks read before it counted */
				last = ahead_log_matches(bad, &opts[o], (int)(sp + o) % 2, want, got, sizeof(got));
				assert_non_null(strstr(last, note));
				assert_non_null(strstr(last, counts[f]));
			}
		}
	}
	unsetenv("NTPROF_CRC_SPLIT");
	free(buf);
}

static void wake_deadlock(int sig)
{
	static const char msg[] = "test_ntpfile: read-ahead stuck (the caller asleep, the thread "
				  "waiting for it to let go of a block)\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/*
 * The caller asleep on an empty ring is woken only once half a ring is
 * ready (ntpfile_ahead.c WAKE_CALLER); a thread that must wait for it to let
 * go of a block before it can read on (its retired windows are full,
 * ntpfile.c retire) wakes it whatever the count (ntp_ahead_wait_released).
 * Here each small records block is followed by totals blocks longer than a
 * one-page window, two windows each: more windows are left behind between
 * two records blocks than the reader keeps, so the thread waits for the
 * caller at almost every block. Without that wake both sleep for ever: the
 * alarm ends the test.
 */
static void test_read_ahead_wake(void **state)
{
	static char want[1 << 16], got[1 << 16];
	static struct ntp_total t[100];
	struct ntp_reader_opts o = { .map_window = 1, .ahead_map = 1 };
	struct ntp_file_info info = mkinfo();
	char path[256], err[256];
	struct ntp_writer *w;
	unsigned i = 0;

	(void)state;
	tmp_path(path, sizeof(path), "wake.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (unsigned b = 0; b < 40; b++) {
		for (unsigned k = 0; k < 3; k++) {
			struct ntp_record r = mkrec(i++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
		}
		assert_int_equal(ntp_writer_flush(w, info.start_mono_ns + b * NSEC), 0);
		for (unsigned k = 0; k < 8; k++) {
			for (unsigned g = 0; g < 100; g++)
				t[g] = mktotal(g % 2, 10 * b + k + g);
			assert_int_equal(ntp_writer_set_totals(w, t, 100, info.start_mono_ns + b * NSEC + k), 0);
			assert_int_equal(ntp_writer_flush(w, info.start_mono_ns + b * NSEC + k), 0);
		}
	}
	assert_int_equal(ntp_writer_close(w, info.start_mono_ns + 50 * NSEC), 0);
	signal(SIGALRM, wake_deadlock);
	for (int round = 0; round < 3; round++) {
		want[0] = got[0] = '\0';
		block_log(ntp_reader_open_opts(path, &o, err, sizeof(err)), 0, 0, want, sizeof(want));
		alarm(30);
		block_log(ntp_reader_open_opts(path, &o, err, sizeof(err)), 1, 0, got, sizeof(got));
		alarm(0);
		assert_string_equal(want, got);
		assert_non_null(strstr(got, "0 0 00000000 | 120 0 0 0 0 0 "));
	}
	signal(SIGALRM, SIG_DFL);
}

/* A pipe, whose length is not known, is read ahead on two CPUs however
 * short the recording it brings (ntp_readers_full_speed): what a live
 * recorder sends through one may go on for hours. */
static void test_full_speed_pipe(void **state)
{
	char path[256], src[64], err[256];
	struct ntp_reader *r;
	const struct ntp_record *recs;
	size_t len, n, got = 0, want;
	cpu_set_t all;
	uint8_t *buf;
	int data[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) < 2 || (getenv("NTPROF_THREADS") && !strcmp(getenv("NTPROF_THREADS"), "0"))) {
		print_message("one CPU, or no threads: not tried\n");
		return;
	}
	tmp_path(path, sizeof(path), "speedpipe.ntp");
	want = write_medium(path);
	buf = slurp(path, &len);
	assert_true(len < NTP_AHEAD_MIN_BYTES);
	assert_int_equal(pipe(data), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(data[0]);
		_exit(write(data[1], buf, len) == (ssize_t)len ? 0 : 3);
	}
	close(data[1]);
	snprintf(src, sizeof(src), "/dev/fd/%d", data[0]);
	assert_non_null(r = ntp_reader_open(src, err, sizeof(err)));
	ntp_readers_full_speed(&r, 1, SIZE_MAX);
	assert_non_null(ntp_reader_ahead(r));
	while (ntp_reader_next_block(r, &recs, &n) == 1)
		got += n;
	assert_int_equal(got, want);
	ntp_reader_close(r);
	close(data[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(buf);
}

/*
 * A pipe fed by a live recorder: each block is the caller's as soon as it is
 * whole, with read-ahead too (not once half a ring is ready, as for a
 * file). The writer sends one records block, then waits for the reader to
 * say it got it before it sends the next; it gives up waiting after a few
 * seconds and says so in its exit status.
 */
static void test_read_ahead_pipe(void **state)
{
	struct blk blk[64];
	char path[256], err[256];
	int data[2], ack[2], status;
	size_t len, nblk, nrec = 0, got = 0, blocks = 0;
	uint8_t *buf;
	pid_t pid;

	(void)state;
	tmp_path(path, sizeof(path), "pipe.ntp");
	write_medium(path);
	buf = slurp(path, &len);
	nblk = layout(buf, len, blk, 64);
	for (size_t i = 0; i < nblk; i++)
		nrec += blk[i].type == NTP_BLOCK_RECORDS_T ? 1 : 0;
	assert_int_equal(pipe(data), 0);
	assert_int_equal(pipe(ack), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int lagged = 0;

		close(data[0]);
		close(ack[1]);
		if (write(data[1], buf, blk[0].start) != (ssize_t)blk[0].start)
			_exit(3);
		for (size_t i = 0; i < nblk; i++) {
			size_t l = blk[i].end - blk[i].start;
			struct pollfd p = { .fd = ack[0], .events = POLLIN };
			char c;

			if (write(data[1], buf + blk[i].start, l) != (ssize_t)l)
				_exit(3);
			if (blk[i].type != NTP_BLOCK_RECORDS_T || lagged)
				continue;
			if (poll(&p, 1, 5000) != 1 || read(ack[0], &c, 1) != 1)
				lagged = 1;	/* the block was not handed out alone */
		}
		_exit(lagged ? 2 : 0);
	}
	close(data[1]);
	close(ack[0]);
	signal(SIGPIPE, SIG_IGN);	/* the writer may have given up */
	{
		char src[64];
		struct ntp_reader *r;
		const struct ntp_record *recs;
		size_t n;

		snprintf(src, sizeof(src), "/dev/fd/%d", data[0]);
		r = ntp_reader_open(src, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_read_ahead(r), 0);
		while (ntp_reader_next_block(r, &recs, &n)) {
			for (size_t k = 0; k < n; k++) {
				struct ntp_record want = mkrec((unsigned)(got + k));

				assert_memory_equal(&recs[k], &want, sizeof(want));
			}
			got += n;
			blocks++;
			if (write(ack[1], "+", 1) != 1)
				break;
		}
		assert_string_equal(ntp_reader_stats(r)->why, "");
		ntp_reader_close(r);
	}
	close(ack[1]);
	close(data[0]);
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(blocks, nrec);
	free(buf);
}

/* A test that failed an assertion with its alarm armed or SIGPIPE ignored
 * leaves neither to the tests after it. */
static int signals_reset(void **state)
{
	(void)state;
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * Following a file still being written (ntp_reader_follow): at the end of
 * the whole blocks, a block cut by the writer's write still under way is
 * -EAGAIN, not a cut tail; the rest appended, the reader reads on to the
 * trailer. A file that stops growing ends cut short once the idle time
 * passed, at once when its mtime is older than that. Both ways of reading
 * (mmap windows, read()).
 */
static void append(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "ab");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_follow(void **state)
{
	char path[300], grow[300];
	struct ntp_file_info info = mkinfo();
	struct ntp_total t = mktotal(NTP_IO_READ, 3 * NTP_BLOCK_RECORDS);
	const size_t blk = NTP_BLOCK_HDR_LEN + NTP_BLOCK_RECORDS * sizeof(struct ntp_record);
	const struct ntp_record *recs;
	struct ntp_writer *w;
	struct ntp_total *rows;
	char err[256];
	uint8_t *whole;
	size_t len, n, cut;

	(void)state;
	tmp_path(path, sizeof(path), "follow_src.ntp");
	tmp_path(grow, sizeof(grow), "follow.ntp");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (unsigned i = 0; i < 3 * NTP_BLOCK_RECORDS; i++) {
		struct ntp_record r = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &r), 0);
	}
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, 9 * NSEC), 0);
	assert_int_equal(ntp_writer_close(w, 9 * NSEC), 0);
	whole = slurp(path, &len);
	/* the trailer's rows, read from the file's end */
	assert_int_equal(ntp_file_last_totals(path, 1u << 20, &rows), 1);
	assert_int_equal(rows[0].count.commands, 3 * NTP_BLOCK_RECORDS);
	assert_string_equal(rows[0].key.dev, "nvme0n1");
	free(rows);
	/* not within a tail shorter than the file: unknown, not none */
	assert_int_equal(ntp_file_last_totals(path, 100, &rows), -1);
	assert_null(rows);
	/* a file with no totals block at all, all within the tail: none */
	spew(grow, whole, NTP_HEADER_LEN + blk);
	assert_int_equal(ntp_file_last_totals(grow, 1u << 20, &rows), 0);
	assert_null(rows);
	/* a FIFO without a writer: refused, its open() not waiting for one */
	unlink(grow);
	assert_int_equal(mkfifo(grow, 0600), 0);
	alarm(10);
	assert_int_equal(ntp_file_last_totals(grow, 1u << 20, &rows), -1);
	alarm(0);
	assert_null(rows);
	unlink(grow);
	cut = NTP_HEADER_LEN + blk + blk / 2;	/* inside the second block */
	for (int no_mmap = 0; no_mmap < 2; no_mmap++) {
		struct ntp_reader_opts o = { .no_mmap = no_mmap };
		struct ntp_reader *r;
		struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };

		spew(grow, whole, cut);
		r = ntp_reader_open_opts(grow, &o, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_follow(r, 2 * NSEC), 0);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(n, NTP_BLOCK_RECORDS);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), -EAGAIN);
		assert_true(ntp_reader_waiting(r));
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), -EAGAIN);
		assert_false(ntp_reader_stats(r)->truncated);
		assert_int_equal(ntp_reader_stats(r)->dropped, 0);
		/* the rest, in two writes: a block header cut, then the end */
		append(grow, whole + cut, blk / 2 + 10);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(recs[0].seq, NTP_BLOCK_RECORDS);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), -EAGAIN);
		append(grow, whole + cut + blk / 2 + 10, len - cut - blk / 2 - 10);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(recs[n - 1].seq, 3 * NTP_BLOCK_RECORDS - 1);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 0);
		assert_false(ntp_reader_waiting(r));
		assert_false(ntp_reader_stats(r)->truncated);
		assert_false(ntp_reader_stats(r)->corrupt);
		assert_int_equal(ntp_reader_stats(r)->records, 3 * NTP_BLOCK_RECORDS);
		ntp_reader_close(r);

		/* stops growing: cut short after the idle time */
		spew(grow, whole, cut);
		r = ntp_reader_open_opts(grow, &o, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_follow(r, NSEC / 5), 0);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), -EAGAIN);
		usleep(250000);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 0);
		assert_true(ntp_reader_stats(r)->truncated);
		assert_int_equal(ntp_reader_stats(r)->dropped, NTP_BLOCK_RECORDS);
		ntp_reader_close(r);

		/* written long ago: it ends at once, as without following */
		assert_int_equal(utimensat(AT_FDCWD, grow, old, 0), 0);
		r = ntp_reader_open_opts(grow, &o, err, sizeof(err));
		assert_non_null(r);
		assert_int_equal(ntp_reader_follow(r, 10 * NSEC), 0);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 1);
		assert_int_equal(ntp_reader_next_block(r, &recs, &n), 0);
		assert_true(ntp_reader_stats(r)->truncated);
		/* no read-ahead while following */
		ntp_reader_close(r);
		r = ntp_reader_open_opts(grow, &o, err, sizeof(err));
		assert_int_equal(ntp_reader_follow(r, NSEC), 0);
		assert_int_equal(ntp_reader_read_ahead(r), 1);
		ntp_reader_close(r);
	}
	free(whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncate_every_offset),
		cmocka_unit_test(test_flip_every_byte),
		cmocka_unit_test(test_resync_after_bad_header),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_newer_minor),
		cmocka_unit_test(test_lost_block_read),
		cmocka_unit_test(test_flush_every_second),
		cmocka_unit_test(test_host_queues),
		cmocka_unit_test(test_host_queues_merge),
		cmocka_unit_test(test_next_block),
		cmocka_unit_test(test_map_matches_read),
		cmocka_unit_test(test_read_alone),
		cmocka_unit_test(test_map_while_cheap),
		cmocka_unit_test(test_map_touch_dear),
		cmocka_unit_test(test_read_buffer_reused),
		cmocka_unit_test(test_readers_full_speed),
		cmocka_unit_test(test_full_speed_pipe),
		cmocka_unit_test(test_many_files_one_arena),
		cmocka_unit_test(test_few_files_one_arena),
		cmocka_unit_test(test_one_buffer_in_turn),
		cmocka_unit_test(test_map_growing_file),
		cmocka_unit_test(test_map_truncated_under_reader),
		cmocka_unit_test(test_read_ahead_matches),
		cmocka_unit_test(test_read_ahead_large),
		cmocka_unit_test(test_read_ahead_huge),
		cmocka_unit_test(test_read_ahead_split_crc),
		cmocka_unit_test(test_read_ahead_thread_fails),
		cmocka_unit_test(test_read_ahead_read_error),
		cmocka_unit_test_teardown(test_read_ahead_wake, signals_reset),
		cmocka_unit_test_teardown(test_read_ahead_pipe, signals_reset),
		cmocka_unit_test(test_follow),
	};

	return cmocka_run_group_tests_name("ntpfile", tests, setup, teardown);
}
