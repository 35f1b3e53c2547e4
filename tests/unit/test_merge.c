// SPDX-License-Identifier: GPL-2.0
/* test_merge.c - the k-way merge of recordings: time order on the common
 * clock, ties to the lower file, every record once, across blocks, with
 * empty files among them; the same order as choosing the minimum by a scan
 * (the reference merge), for counts of files at, below and above powers of
 * two (the loser tree's leaves past the files, and files ending one by one).
 * The drain (records to a callback, two files without the tree) gives the
 * order of peeks and pops on random files, whatever its stops; the merge
 * keys of a block (AVX2) are those of the loop over valid timestamps. */
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

/* ---- the drain against peek and pop, on random files ---- */

/* A record with random times (any 64-bit values, or near one another so
 * keys tie and files interleave) and random valid bits, past NTP_TS_COUNT too. */
static void random_record(struct ntp_record *x, unsigned f, unsigned j, uint64_t base)
{
	memset(x, 0, sizeof(*x));
	x->side = f % 2 ? NTP_SIDE_TARGET : NTP_SIDE_HOST;
	x->seq = (uint64_t)f * 100000 + j;
	for (int i = 0; i < NTP_TS_SLOTS; i++)
		x->ts[i] = random() % 8 == 0 ? (uint64_t)random() << 33 ^ (uint64_t)random() << 2 ^ (uint64_t)random()
					     : base + (uint64_t)(random() % 64) * 1000;
	x->ts_valid = (uint32_t)random() ^ (uint32_t)random() << 16;
	if (random() % 4 == 0)
		x->ts_valid &= random() % 2 ? 0x7ff : 0x1ff800;	/* one side's slots only */
	if (random() % 64 == 0)
		x->ts_valid = 0;
}

struct seen {
	size_t n;
	uint64_t seq[20000];
};

static void note(void *ctx, const struct ntp_record *r)
{
	struct seen *s = ctx;

	assert_true(s->n < 20000);
	s->seq[s->n++] = r->seq;
}

static void drain_against_pops(unsigned files, unsigned seed)
{
	struct ntp_reader *ra[FILES_MAX], *rb[FILES_MAX];
	int64_t off[FILES_MAX];
	static struct seen want, got;
	uint64_t want_max = 0, got_max = 0, until = 0;
	size_t primary = seed % files;
	struct ntp_merge *ma, *mb;
	char path[FILES_MAX][256], err[256];

	strcpy(tmpdir, "/tmp/test_merge.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	srandom(seed);
	for (unsigned f = 0; f < files; f++) {
		struct ntp_file_info info = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP,
					      .sampling = 1, .start_mono_ns = 1 };
		unsigned n = random() % 5 == 0 ? 0 : (unsigned)(random() % 2500);
		uint64_t base = 1000000;
		struct ntp_writer *w;

		snprintf(path[f], sizeof(path[f]), "%s/f%u.ntp", tmpdir, f);
		w = ntp_writer_open(path[f], &info, err, sizeof(err));
		assert_non_null(w);
		for (unsigned j = 0; j < n; j++) {
			struct ntp_record x;

			base += (uint64_t)(random() % 3) * 1000;	/* mostly ascending, not always */
			random_record(&x, f, j, base);
			assert_int_equal(ntp_writer_add(w, &x), 0);
		}
		assert_int_equal(ntp_writer_close(w, base + 1), 0);
		ra[f] = ntp_reader_open(path[f], err, sizeof(err));
		rb[f] = ntp_reader_open(path[f], err, sizeof(err));
		assert_non_null(ra[f]);
		assert_non_null(rb[f]);
		off[f] = random() % 3 == 0 ? -(int64_t)(random() % 3000000) : (int64_t)(random() % 50000);
	}
	if (seed % 7 == 0)
		off[0] = INT64_MAX - 5;	/* keys that wrap */
	ma = ntp_merge_new(ra, files, off);
	mb = ntp_merge_new(rb, files, off);
	assert_non_null(ma);
	assert_non_null(mb);
	/* the reference: peek and pop */
	want.n = 0;
	for (;;) {
		const struct ntp_record *x;
		size_t f;
		uint64_t key;

		if (!ntp_merge_next(ma, &x, &f, &key))
			break;
		note(&want, x);
		if (f == primary && key > want_max)
			want_max = key;
	}
	/* the drain, stopped at random times, a peek and a pop between some */
	got.n = 0;
	for (;;) {
		const struct ntp_record *x;
		size_t f;
		uint64_t key;

		until += (uint64_t)(random() % 40000);
		if (random() % 16 == 0)
			until = UINT64_MAX;
		ntp_merge_drain(mb, until, note, &got, primary, &got_max);
		if (!ntp_merge_peek(mb, &x, &f, &key))
			break;
		/* it stopped at the first record past until */
		assert_true(key > until);
		assert_true(until != UINT64_MAX);
		if (random() % 3 == 0) {
			ntp_merge_pop(mb);
			note(&got, x);
			if (f == primary && key > got_max)
				got_max = key;
		}
	}
	assert_int_equal(got.n, want.n);
	for (size_t i = 0; i < want.n; i++)
		assert_int_equal(got.seq[i], want.seq[i]);
	assert_int_equal(got_max, want_max);
	ntp_merge_free(ma);
	ntp_merge_free(mb);
	for (unsigned f = 0; f < files; f++) {
		ntp_reader_close(ra[f]);
		ntp_reader_close(rb[f]);
		unlink(path[f]);
	}
	rmdir(tmpdir);
}

static void test_merge_drain(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 40; seed++)
		drain_against_pops(1 + seed % FILES_MAX, seed);
	/* two files, the drain's own loop, many times */
	for (unsigned seed = 100; seed < 130; seed++)
		drain_against_pops(2, seed);
}

/* The keys of a block: the latest valid timestamp (of the first
 * NTP_TS_COUNT slots) plus the offset, wrapping, a time before 0 as 0. */
static void test_merge_keys(void **state)
{
	static struct ntp_record r[777];
	static uint64_t k[777];

	(void)state;
	srandom(5);
	for (int round = 0; round < 50; round++) {
		int64_t off = round % 5 == 0 ? INT64_MIN + random() : round % 5 == 1 ? INT64_MAX - random()
			    : (int64_t)random() - (int64_t)random();
		size_t n = (size_t)(random() % 777);

		for (size_t j = 0; j < n; j++)
			random_record(&r[j], (unsigned)j, (unsigned)j, (uint64_t)random() << 20);
		ntp_merge_keys(r, n, off, k);
		for (size_t j = 0; j < n; j++) {
			uint64_t t = 0;
			int64_t x;

			for (int i = 0; i < NTP_TS_COUNT; i++)
				if (r[j].ts_valid & (1u << i) && r[j].ts[i] > t)
					t = r[j].ts[i];
			assert_int_equal(ntp_record_last_ts(&r[j]), t);
			x = (int64_t)(t + (uint64_t)off);
			assert_int_equal(k[j], x < 0 ? 0 : (uint64_t)x);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_merge_none),
		cmocka_unit_test(test_merge_drain),
		cmocka_unit_test(test_merge_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
