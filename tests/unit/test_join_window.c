// SPDX-License-Identifier: GPL-2.0
/* test_join_window.c - a join of many files maps each block of a file once:
 * the readers open at once share the mmap window (ntpfile.c "mmap window"),
 * and with 64 of them a share is shorter than a full block of records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/store/ntpfile.h"

#define READERS 64
#define RECORDS (8 * NTP_BLOCK_RECORDS)

/* The file mappings the reader makes, seen by standing in for mmap(): this
 * definition in the program is the one the reader's calls bind to. */
static int counting;
static size_t nmaps;
static off_t map_off[4 * RECORDS / NTP_BLOCK_RECORDS + 16];

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (counting && fd >= 0 && nmaps < sizeof(map_off) / sizeof(map_off[0]))
		map_off[nmaps++] = off;
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void write_host_file(const char *path)
{
	struct ntp_file_info fi = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1,
				    .start_mono_ns = 1000000000ull, .start_real_ns = 1700000000000000000ull };
	char err[256];
	struct ntp_writer *w;
	struct ntp_record r;

	snprintf(fi.hostname, sizeof(fi.hostname), "h");
	w = ntp_writer_open(path, &fi, err, sizeof(err));
	assert_non_null(w);
	memset(&r, 0, sizeof(r));
	r.side = NTP_SIDE_HOST;
	r.transport = NTP_TRANSPORT_TCP;
	r.opcode = 0x02;
	r.len = 4096;
	for (uint32_t i = 0; i < RECORDS; i++) {
		r.cid = (uint16_t)i;
		r.ts[NTP_TS_H_CMD_SENT] = fi.start_mono_ns + 1000ull * i;
		r.ts_valid = 1u << NTP_TS_H_CMD_SENT;
		assert_int_equal(ntp_writer_add(w, &r), 0);
	}
	assert_int_equal(ntp_writer_close(w, fi.start_mono_ns + 1000ull * RECORDS), 0);
}

/* 64 readers of one file open (a share of the window below a block), one
 * read to its end: every block whole and in order, and no file offset
 * mapped twice in a row (a window for a block's header, then the block). */
static void test_block_mapped_once(void **state)
{
	char path[] = "/tmp/ntprof-test-join-window-XXXXXX";
	int fd = mkstemp(path);
	struct ntp_reader *r[READERS];
	const struct ntp_record *recs;
	size_t k, got = 0, blocks = 0;
	char err[256];

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_host_file(path);
	for (int i = 0; i < READERS; i++) {
		r[i] = ntp_reader_open(path, err, sizeof(err));
		if (!r[i])
			unlink(path);
		assert_non_null(r[i]);
	}
	unlink(path);	/* the readers hold it open: nothing left behind by a failed check */
	if (!ntp_reader_info(r[0]) || getenv("NTPROF_NO_MMAP")) {
		for (int i = 0; i < READERS; i++)
			ntp_reader_close(r[i]);
		skip();
	}
	counting = 1;
	while (ntp_reader_next_block(r[0], &recs, &k) == 1) {
		for (size_t j = 0; j < k; j++)
			assert_int_equal(recs[j].cid, (uint16_t)(got + j));
		got += k;
		blocks++;
	}
	counting = 0;
	assert_int_equal(got, RECORDS);
	assert_int_equal(ntp_reader_stats(r[0])->corrupt, 0);
	/* the header's window held the first block(s): at most one mapping
	 * per block after it */
	assert_true(nmaps >= 1 && nmaps <= blocks);
	for (size_t i = 1; i < nmaps; i++)
		assert_true(map_off[i] != map_off[i - 1]);
	for (int i = 0; i < READERS; i++)
		ntp_reader_close(r[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_mapped_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
