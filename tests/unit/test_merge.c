// SPDX-License-Identifier: GPL-2.0
/* test_merge.c - the k-way merge of recordings: time order on the common
 * clock, ties to the lower file, every record once, across blocks, with
 * empty files among them; the same order as choosing the minimum by a scan
 * (the reference merge), for counts of files at, below and above powers of
 * two (the loser tree's leaves past the files, and files ending one by one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/merge.h"

#define FILES_MAX 9
#define PER 1500	/* several blocks per file */

static char tmpdir[] = "/tmp/test_merge.XXXXXX";

/* A record's key: its time on the common clock, a time before 0 as 0. */
static uint64_t mapped(uint64_t t, int64_t off)
{
	int64_t x = (int64_t)t + off;

	return x < 0 ? 0 : (uint64_t)x;
}

/* Record j of file f: last timestamp t (two timestamps set, the later one
 * counts), seq = f * PER + j to recognise it. */
static struct ntp_record rec(unsigned f, unsigned j, uint64_t t)
{
	struct ntp_record r;

	memset(&r, 0, sizeof(r));
	r.side = NTP_SIDE_HOST;
	r.ts[NTP_TS_H_BLK_SUBMIT] = t - 50;
	r.ts[NTP_TS_H_BLK_COMPLETE] = t;
	r.ts[NTP_TS_H_SEND_DONE] = t + 1000;	/* not valid: must not count */
	r.ts_valid = 1u << NTP_TS_H_BLK_SUBMIT | 1u << NTP_TS_H_BLK_COMPLETE;
	r.seq = (uint64_t)f * PER + j;
	return r;
}

static void merge_order(unsigned files)
{
	struct ntp_reader *r[FILES_MAX];
	int64_t off[FILES_MAX];
	static uint64_t t[FILES_MAX][PER];
	uint64_t n_of[FILES_MAX];
	unsigned got[FILES_MAX] = { 0 }, total = 0, expect = 0;
	uint64_t last_t = 0;
	size_t last_f = 0;
	struct ntp_merge *m;

	strcpy(tmpdir, "/tmp/test_merge.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	srandom(11 + files);
	for (unsigned f = 0; f < files; f++) {
		struct ntp_file_info info = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP,
					      .sampling = 1, .start_mono_ns = 1 };
		char path[256], err[256];
		struct ntp_writer *w;
		uint64_t now = 1000;

		snprintf(path, sizeof(path), "%s/f%u.ntp", tmpdir, f);
		w = ntp_writer_open(path, &info, err, sizeof(err));
		assert_non_null(w);
		/* file 3 is empty; the others in increasing time, coarse steps so
		 * times repeat across files (ties), of different lengths so they
		 * end one by one */
		n_of[f] = f == 3 ? 0 : PER - 100 * f;
		for (unsigned j = 0; j < n_of[f]; j++) {
			struct ntp_record x;

			now += (uint64_t)(random() % 4) * 1000;
			t[f][j] = now;
			x = rec(f, j, now);
			assert_int_equal(ntp_writer_add(w, &x), 0);
		}
		assert_int_equal(ntp_writer_close(w, now + 1), 0);
		r[f] = ntp_reader_open(path, err, sizeof(err));
		assert_non_null(r[f]);
		off[f] = f % 2 ? 3000 : -5000;	/* onto one clock; the first times of even files map below 0 */
		expect += (unsigned)n_of[f];
	}
	m = ntp_merge_new(r, files, off);
	assert_non_null(m);
	for (;;) {
		const struct ntp_record *x;
		size_t f;
		uint64_t key;

		if (!ntp_merge_next(m, &x, &f, &key))
			break;
		assert_true(f < files);
		/* this file's records in their order, each once */
		assert_int_equal(x->seq, f * PER + got[f]);
		assert_int_equal(key, mapped(t[f][got[f]], off[f]));
		assert_int_equal(ntp_record_last_ts(x), t[f][got[f]]);
		/* the smallest time first, ties to the lower file: what a scan
		 * over the files' next records would pick */
		for (size_t o = 0; o < files; o++) {
			uint64_t to;

			if (o == f || got[o] >= n_of[o])
				continue;
			to = mapped(t[o][got[o]], off[o]);
			assert_true(key < to || (key == to && f < o));
		}
		assert_true(key > last_t || (key == last_t && f >= last_f));
		last_t = key;
		last_f = f;
		got[f]++;
		total++;
	}
	assert_int_equal(total, expect);
	for (unsigned f = 0; f < files; f++)
		assert_int_equal(got[f], n_of[f]);
	/* the end stays the end */
	{
		const struct ntp_record *x;
		size_t f;

		assert_int_equal(ntp_merge_next(m, &x, &f, NULL), 0);
	}
	ntp_merge_free(m);
	for (unsigned f = 0; f < files; f++) {
		char path[256];

		ntp_reader_close(r[f]);
		snprintf(path, sizeof(path), "%s/f%u.ntp", tmpdir, f);
		unlink(path);
	}
	rmdir(tmpdir);
}

static void test_merge_order(void **state)
{
	(void)state;
	for (unsigned files = 1; files <= FILES_MAX; files++)
		merge_order(files);
}

/* No file at all: nothing to merge, and the end stays the end. */
static void test_merge_none(void **state)
{
	const struct ntp_record *x;
	struct ntp_merge *m;
	size_t f;

	(void)state;
	m = ntp_merge_new(NULL, 0, NULL);
	assert_non_null(m);
	assert_int_equal(ntp_merge_next(m, &x, &f, NULL), 0);
	assert_int_equal(ntp_merge_next(m, &x, &f, NULL), 0);
	ntp_merge_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_merge_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
