// SPDX-License-Identifier: GPL-2.0
/* test_merge.c - the k-way merge of recordings against a reference merge
 * that scans every file's next record for the smallest key (ties to the
 * lower file), keys computed here from the records' valid timestamps: time
 * order on the common clock, every record once, across blocks, with empty
 * files among them, for counts of files at, below and above powers of two
 * (the loser tree's leaves past the files, files ending one by one), two
 * files (the drain's own loop) and a file drained outside the tree
 * (ntp_merge_most), files read ahead (the keys from the times their
 * threads write). The drain is stopped at random times and just before and
 * at the next record's key: the peek then shows that record and its key
 * (the keys of a block, AVX2, against the loop here). Keys at and around
 * the largest that the tree's 64-bit ranks hold, for 1 to 65 files, and
 * the file outside the tree jumping past it: the same order once the tree
 * turns to 128-bit ranks. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/store/merge.h"

#define FILES_MAX 9	/* files at most in the tests of random files */
#define FILES_CAP 65	/* files at most: a tree of 128 leaves */
#define PER_MAX 2500	/* records per file at most: several blocks */

static char tmpdir[] = "/tmp/test_merge.XXXXXX";

/* A record's time: the latest timestamp of its first NTP_TS_COUNT valid
 * slots (0: none). */
static uint64_t ref_last_ts(const struct ntp_record *r)
{
	uint64_t t = 0;

	for (int i = 0; i < NTP_TS_COUNT; i++)
		if (r->ts_valid & (1u << i) && r->ts[i] > t)
			t = r->ts[i];
	return t;
}

/* The merge key: the time plus off, wrapping, a time before 0 as 0. */
static uint64_t ref_key(const struct ntp_record *r, int64_t off)
{
	int64_t x = (int64_t)(ref_last_ts(r) + (uint64_t)off);

	return x < 0 ? 0 : (uint64_t)x;
}

struct files {
	unsigned n;
	size_t count[FILES_CAP];
	struct ntp_record rec[FILES_CAP][PER_MAX];
	int64_t off[FILES_CAP];
	size_t blk[FILES_CAP];	/* a block ends every blk records (0: no such end) */
	struct ntp_reader *r[FILES_CAP];
	char path[FILES_CAP][256];
};

/* The reference order: out[k] = file * PER_MAX + index, the key of each in
 * keys[k]; returns how many. */
static size_t ref_merge(const struct files *fs, uint32_t *out, uint64_t *keys)
{
	size_t at[FILES_CAP] = { 0 }, k = 0;

	for (;;) {
		unsigned best = FILES_CAP;
		uint64_t bk = 0;

		for (unsigned f = 0; f < fs->n; f++) {
			uint64_t x;

			if (at[f] >= fs->count[f])
				continue;
			x = ref_key(&fs->rec[f][at[f]], fs->off[f]);
			if (best == FILES_CAP || x < bk) {
				best = f;
				bk = x;
			}
		}
		if (best == FILES_CAP)
			return k;
		out[k] = best * PER_MAX + (uint32_t)at[best]++;
		keys[k++] = bk;
	}
}

/* Writes fs->rec to files, in blocks of random sizes (small ones with
 * small) and ended every fs->blk[f] records, and opens a reader on each,
 * read ahead by a second thread with ahead. */
static void files_write(struct files *fs, int small, int ahead)
{
	strcpy(tmpdir, "/tmp/test_merge.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	for (unsigned f = 0; f < fs->n; f++) {
		struct ntp_file_info info = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP,
					      .sampling = 1, .start_mono_ns = 1 };
		char err[256];
		struct ntp_writer *w;

		snprintf(fs->path[f], sizeof(fs->path[f]), "%s/f%u.ntp", tmpdir, f);
		w = ntp_writer_open(fs->path[f], &info, err, sizeof(err));
		assert_non_null(w);
		for (size_t j = 0; j < fs->count[f]; j++) {
			if (fs->blk[f] && j && j % fs->blk[f] == 0)
				assert_int_equal(ntp_writer_flush(w, 1), 0);
			assert_int_equal(ntp_writer_add(w, &fs->rec[f][j]), 0);
			if (small && random() % 100 == 0)
				assert_int_equal(ntp_writer_flush(w, 1), 0);
		}
		assert_int_equal(ntp_writer_close(w, 1), 0);
		fs->r[f] = ntp_reader_open(fs->path[f], err, sizeof(err));
		assert_non_null(fs->r[f]);
		if (ahead)
			assert_int_equal(ntp_reader_read_ahead(fs->r[f]), 0);
	}
}

static void files_remove(struct files *fs)
{
	for (unsigned f = 0; f < fs->n; f++) {
		ntp_reader_close(fs->r[f]);
		unlink(fs->path[f]);
	}
	rmdir(tmpdir);
}

struct seen {
	const struct files *fs;
	size_t n, calls;
	uint32_t id[FILES_CAP * PER_MAX];
};

/* seq holds the record's place (file * PER_MAX + index). Every record of a
 * batch is still the one written (its block not let go before the call). */
static void note(void *ctx, const struct ntp_record *const *r, size_t n)
{
	struct seen *s = ctx;

	assert_true(n > 0);
	s->calls++;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = (uint32_t)r[i]->seq;

		assert_true(s->n < FILES_CAP * PER_MAX);
		assert_true(id / PER_MAX < s->fs->n && id % PER_MAX < s->fs->count[id / PER_MAX]);
		assert_memory_equal(r[i], &s->fs->rec[id / PER_MAX][id % PER_MAX], sizeof(*r[i]));
		s->id[s->n++] = id;
	}
}

/*
 * Merges fs and checks against the reference: drains up to random times,
 * or to just before or exactly the next record's key, until the end; after
 * each, the peek shows the next record of the reference and its key, and
 * ntp_merge_current that record for its file. most: the file drained
 * outside the tree (>= n: none). ahead: files of small blocks read ahead,
 * whose threads write the records' times from the ninth block on (the
 * first eight may be read before the merge asks for them).
 */
static void check_merge(struct files *fs, size_t most, size_t primary, int ahead, unsigned seed)
{
	static uint32_t want[FILES_CAP * PER_MAX];
	static uint64_t keys[FILES_CAP * PER_MAX];
	static struct seen got;
	size_t nwant = ref_merge(fs, want, keys), k = 0;
	uint64_t want_max = 0, got_max = 0, until = 0;
	struct ntp_merge *m;

	for (size_t i = 0; i < nwant; i++)
		if (want[i] / PER_MAX == primary && keys[i] > want_max)
			want_max = keys[i];
	srandom(seed);
	files_write(fs, ahead || seed % 2, ahead);
	m = ntp_merge_new(fs->r, fs->n, fs->off);
	assert_non_null(m);
	ntp_merge_most(m, most);
	got.n = 0;
	got.fs = fs;
	for (;;) {
		const struct ntp_record *x;
		size_t f, fed;
		uint64_t key;
		int how = (int)(random() % 4);

		if (k < nwant && how == 0)
			until = keys[k] - 1 < keys[k] ? keys[k] - 1 : 0;	/* just before the next */
		else if (k < nwant && how == 1)
			until = keys[k];		/* the next one, and its ties */
		else if (random() % 16 == 0)
			until = UINT64_MAX;
		else
			until += (uint64_t)(random() % 40000);
		fed = ntp_merge_drain(m, until, note, &got, primary, &got_max);
		if (how == 0 && k < nwant && keys[k] > 0)
			assert_int_equal(fed, 0);	/* nothing up to just before the next */
		for (size_t i = k; i < got.n; i++) {
			assert_int_equal(got.id[i], want[i]);
			assert_true(keys[i] <= until);
		}
		assert_int_equal(fed, got.n - k);
		k = got.n;
		if (!ntp_merge_peek(m, &x, &f, &key))
			break;
		/* it stopped at the first record past until */
		assert_true(k < nwant);
		assert_int_equal(x->seq, want[k]);
		assert_int_equal(f, want[k] / PER_MAX);
		assert_int_equal(key, keys[k]);
		assert_true(key > until);
		assert_ptr_equal(ntp_merge_current(m, f), x);
	}
	assert_int_equal(got.n, nwant);
	assert_int_equal(got_max, want_max);
	/* the end stays the end */
	assert_int_equal(ntp_merge_drain(m, UINT64_MAX, note, &got, primary, &got_max), 0);
	for (unsigned f = 0; f < fs->n; f++)
		assert_null(ntp_merge_current(m, f));
	ntp_merge_free(m);
	files_remove(fs);
}

/* Record j of file f: last timestamp t (two timestamps set, the later one
 * counts; a later one not valid must not). */
static void ordered_record(struct ntp_record *r, unsigned f, unsigned j, uint64_t t)
{
	memset(r, 0, sizeof(*r));
	r->side = NTP_SIDE_HOST;
	r->ts[NTP_TS_H_BLK_SUBMIT] = t - 50;
	r->ts[NTP_TS_H_BLK_COMPLETE] = t;
	r->ts[NTP_TS_H_SEND_DONE] = t + 1000;
	r->ts_valid = 1u << NTP_TS_H_BLK_SUBMIT | 1u << NTP_TS_H_BLK_COMPLETE;
	r->seq = (uint64_t)f * PER_MAX + j;
}

/* Each file in increasing time, coarse steps so times tie across files,
 * of different lengths (they end one by one), file 3 empty; the first
 * times of even files map below 0. */
static void test_merge_order(void **state)
{
	static struct files fs;

	(void)state;
	for (unsigned n = 1; n <= FILES_MAX; n++) {
		srandom(11 + n);
		fs.n = n;
		for (unsigned f = 0; f < n; f++) {
			uint64_t now = 1000;

			fs.count[f] = f == 3 ? 0 : 1500 - 100 * f;
			for (unsigned j = 0; j < fs.count[f]; j++) {
				now += (uint64_t)(random() % 4) * 1000;
				ordered_record(&fs.rec[f][j], f, j, now);
				assert_int_equal(ntp_record_last_ts(&fs.rec[f][j]), now);
			}
			fs.off[f] = f % 2 ? 3000 : -5000;
		}
		check_merge(&fs, SIZE_MAX, 0, 0, n);
		check_merge(&fs, n - 1, n / 2, 0, n + 100);	/* the last file outside the tree */
		check_merge(&fs, n - 1, 0, 1, n + 200);
	}
}

/* No file at all: nothing to merge, and the end stays the end. */
static void test_merge_none(void **state)
{
	static struct seen got;
	const struct ntp_record *x;
	struct ntp_merge *m;
	uint64_t pm = 0;
	size_t f;

	(void)state;
	m = ntp_merge_new(NULL, 0, NULL);
	assert_non_null(m);
	ntp_merge_most(m, 0);
	assert_int_equal(ntp_merge_peek(m, &x, &f, NULL), 0);
	assert_int_equal(ntp_merge_drain(m, UINT64_MAX, note, &got, 0, &pm), 0);
	assert_int_equal(ntp_merge_peek(m, &x, &f, NULL), 0);
	ntp_merge_free(m);
}

/* A record with random times (any 64-bit values, or near one another so
 * keys tie and files interleave) and random valid bits, past NTP_TS_COUNT
 * too, or one side's slots only (the AVX2 keys' branches). */
static void random_record(struct ntp_record *x, unsigned f, unsigned j, uint64_t base)
{
	memset(x, 0, sizeof(*x));
	x->side = f % 2 ? NTP_SIDE_TARGET : NTP_SIDE_HOST;
	x->seq = (uint64_t)f * PER_MAX + j;
	for (int i = 0; i < NTP_TS_SLOTS; i++)
		x->ts[i] = random() % 8 == 0 ? (uint64_t)random() << 33 ^ (uint64_t)random() << 2 ^ (uint64_t)random()
					     : base + (uint64_t)(random() % 64) * 1000;
	x->ts_valid = (uint32_t)random() ^ (uint32_t)random() << 16;
	if (random() % 4 == 0)
		x->ts_valid &= random() % 2 ? 0xfff : 0xffff00;
	if (random() % 64 == 0)
		x->ts_valid = 0;
}

/* Random files, mostly ascending times, some empty, offsets that map
 * below 0 or wrap; with and without a file outside the tree. */
static void test_merge_random(void **state)
{
	static struct files fs;

	(void)state;
	for (unsigned seed = 1; seed <= 70; seed++) {
		/* two files many times: the drain's own loop */
		unsigned n = seed > 40 ? 2 : 1 + seed % FILES_MAX;

		srandom(seed);
		fs.n = n;
		for (unsigned f = 0; f < n; f++) {
			uint64_t base = 1000000;

			fs.count[f] = random() % 5 == 0 ? 0 : (size_t)(random() % PER_MAX);
			for (unsigned j = 0; j < fs.count[f]; j++) {
				base += (uint64_t)(random() % 3) * 1000;	/* mostly ascending, not always */
				random_record(&fs.rec[f][j], f, j, base);
			}
			fs.off[f] = random() % 3 == 0 ? -(int64_t)(random() % 3000000) : (int64_t)(random() % 50000);
		}
		if (seed % 7 == 0)
			fs.off[0] = INT64_MAX - 5;	/* keys that wrap */
		check_merge(&fs, seed % 3 ? (size_t)random() % n : SIZE_MAX, seed % n, seed % 4 == 1, seed);
	}
}

/* The time of one record (pump_files.c's): its latest valid timestamp of
 * the first NTP_TS_COUNT slots. */
static void test_record_last_ts(void **state)
{
	static struct ntp_record r;

	(void)state;
	srandom(5);
	for (int i = 0; i < 2000; i++) {
		random_record(&r, 0, 0, (uint64_t)random() << 20);
		assert_int_equal(ntp_record_last_ts(&r), ref_last_ts(&r));
	}
}

/* The keys of a run of records at once (ntp_merge_keys: four at a time
 * and the rest one by one, AVX2 where the CPU has it) against the loop
 * here: runs of any length, records that share their valid bits with the
 * one before or not, offsets that map below 0 or wrap. */
static void test_merge_keys(void **state)
{
	static struct ntp_record r[64];
	uint64_t out[64 + 1];

	(void)state;
	srandom(9);
	for (int round = 0; round < 3000; round++) {
		size_t n = (size_t)(random() % 40), at = (size_t)(random() % 8);
		int64_t off = random() % 4 == 0 ? INT64_MAX - (int64_t)(random() % 1000)
			    : random() % 2 ? -(int64_t)(random() % 3000000) : (int64_t)(random() % 50000);

		for (size_t j = 0; j < n; j++) {
			random_record(&r[at + j], 0, (unsigned)j, (uint64_t)random() << 20);
			/* mostly the valid bits of the record before, as in a file */
			if (j && random() % 4)
				r[at + j].ts_valid = r[at + j - 1].ts_valid;
		}
		out[n] = 12345;
		ntp_merge_keys(&r[at], n, off, out);
		for (size_t j = 0; j < n; j++)
			assert_int_equal(out[j], ref_key(&r[at + j], off));
		assert_int_equal(out[n], 12345);	/* nothing written past n */
	}
}

/*
 * Merges fs in one drain up to the end (until UINT64_MAX) and checks the
 * order against the reference, record by record: a misordered record is
 * handed over in the drain, not left for a peek to show.
 */
static void check_drain_all(struct files *fs, size_t most, size_t primary, int ahead)
{
	static uint32_t want[FILES_CAP * PER_MAX];
	static uint64_t keys[FILES_CAP * PER_MAX];
	static struct seen got;
	size_t nwant = ref_merge(fs, want, keys), f;
	uint64_t want_max = 0, got_max = 0;
	const struct ntp_record *x;
	struct ntp_merge *m;

	for (size_t i = 0; i < nwant; i++)
		if (want[i] / PER_MAX == primary && keys[i] > want_max)
			want_max = keys[i];
	files_write(fs, 0, ahead);
	m = ntp_merge_new(fs->r, fs->n, fs->off);
	assert_non_null(m);
	ntp_merge_most(m, most);
	got.n = 0;
	got.fs = fs;
	assert_int_equal(ntp_merge_drain(m, UINT64_MAX, note, &got, primary, &got_max), nwant);
	assert_int_equal(got.n, nwant);
	for (size_t i = 0; i < nwant; i++)
		if (got.id[i] != want[i])
			fail_msg("%u files, most %d: record %zu is file %u #%u (key %#" PRIx64 "), "
				 "want file %u #%u (key %#" PRIx64 ")",
				 fs->n, most < fs->n ? (int)most : -1, i, got.id[i] / PER_MAX, got.id[i] % PER_MAX,
				 ref_key(&fs->rec[got.id[i] / PER_MAX][got.id[i] % PER_MAX],
					 fs->off[got.id[i] / PER_MAX]),
				 want[i] / PER_MAX, want[i] % PER_MAX, keys[i]);
	assert_int_equal(got_max, want_max);
	assert_int_equal(ntp_merge_peek(m, &x, &f, NULL), 0);
	ntp_merge_free(m);
	files_remove(fs);
}

/*
 * The largest key of n files' narrow ranks (merge.c): a tree of size
 * leaves (a power of two >= n) keeps log2(size) + 1 bits below the key, and
 * a key of all ones above them marks an ended file, so a live file's key
 * fits narrow up to one less (merge.c's klim). Keys are at most INT64_MAX
 * (ntp_merge_map): one file's all fit.
 */
static uint64_t key_top(unsigned n)
{
	unsigned size = 1, lowbits = 1;

	while (size < n) {
		size *= 2;
		lowbits++;
	}
	return UINT64_MAX >> lowbits;
}

/* Record j of file f of key key on the merge's clock (f's offset off). */
static void key_record(struct files *fs, unsigned f, unsigned j, uint64_t key)
{
	ordered_record(&fs->rec[f][j], f, j, key - (uint64_t)fs->off[f]);
	assert_int_equal(ref_key(&fs->rec[f][j], fs->off[f]), key);
}

/*
 * The file drained outside the tree (ntp_merge_most) jumps to keys past the
 * narrow ranks' (key_top) while the other files, in the tree, are live with
 * small keys: the tree turns to 128-bit ranks there (a narrow rank of such
 * a key would lose its top bits and come first). The jump within a block,
 * at a block's start, and with the keys from a read-ahead thread; files
 * of trees of 4, 16, 64 and 128 leaves. In one drain to the end and at
 * random stops.
 */
static void test_merge_most_wide(void **state)
{
	static const unsigned counts[] = { 3, 4, 9, 64, 65 };
	static struct files fs;

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		unsigned n = counts[c];
		uint64_t top = key_top(n);

		/* blocks: one per file (the jump in it), of 2 records (the jump
		 * at a block's start; read ahead too), of 3 (in a block) */
		for (unsigned how = 0; how < 3; how++) {
			unsigned o = how == 1 ? n - 1 : n / 2;

			fs.n = n;
			for (unsigned f = 0; f < n; f++) {
				fs.off[f] = ((int64_t)(f % 3) - 1) * 1000;
				fs.blk[f] = how == 0 ? 0 : how + 1;
				fs.count[f] = f == o ? 40 : 30;
				for (unsigned j = 0; j < fs.count[f]; j++)
					key_record(&fs, f, j,
						   f != o ? 5000 + 1000 * (uint64_t)j
						   : j < 20 ? 5500 + 1000 * (uint64_t)j
						   : top + 1 + 7 * (uint64_t)(j - 20));
			}
			check_drain_all(&fs, o, o, 0);
			if (how == 1 && n <= FILES_MAX)
				check_drain_all(&fs, o, o, 1);
			check_merge(&fs, o, (o + 1) % n, 0, 300 + 3 * n + how);
		}
	}
	memset(fs.blk, 0, sizeof(fs.blk));
}

/*
 * Keys at the narrow ranks' limit (key_top) and around it: two below it
 * (merge.c's klim and one less), at it, one and two above (past a single
 * file's keys: not for one file), for trees of 1 to 128 leaves. A file
 * sits at the limit while another moves past it (the tree turns to 128-bit
 * ranks there: the first file's key must stay its own, not read as an
 * ended file's); the others random among those keys, after small ones.
 * With and without a file outside the tree, in one drain to the end and at
 * random stops.
 */
static void test_merge_limit_keys(void **state)
{
	static const unsigned counts[] = { 1, 2, 3, 4, 5, 8, 9, 64, 65 };
	static struct files fs;

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		unsigned n = counts[c];
		uint64_t top = key_top(n), near[5];
		unsigned nnear = 0;

		for (int d = -2; d <= 2; d++)
			if (d <= 0 || top < INT64_MAX)
				near[nnear++] = top + (uint64_t)(int64_t)d;
		for (unsigned seed = 1; seed <= 4; seed++) {
			/* a: at the limit, b: past it after a small key */
			unsigned a = seed % 2, b = 1 - a;
			size_t most = seed <= 2 ? SIZE_MAX : (size_t)(seed + n) % n;

			srandom(400 + 10 * n + seed);
			fs.n = n;
			for (unsigned f = 0; f < n; f++) {
				unsigned j = 0;

				fs.off[f] = ((int64_t)(f % 3) - 1) * 1000;
				fs.blk[f] = seed == 3 ? 1 : 0;
				if (n > 1 && f == a) {
					key_record(&fs, f, j++, top);
					key_record(&fs, f, j++, near[nnear - 1]);
				} else if (n > 1 && f == b) {
					key_record(&fs, f, j++, 5000);
					key_record(&fs, f, j++, top + 1);
					key_record(&fs, f, j++, top + 2);
				} else {
					for (unsigned s = 1 + (unsigned)(random() % 4); s; s--, j++)
						key_record(&fs, f, j, 5000 + 1000 * (uint64_t)j);
					for (unsigned i = 0; i < nnear; i++)
						for (unsigned r = (unsigned)(random() % 3); r; r--)
							key_record(&fs, f, j++, near[i]);
				}
				fs.count[f] = j;
			}
			check_drain_all(&fs, most, (size_t)seed % n, seed == 3 && n <= FILES_MAX);
			check_merge(&fs, most, (size_t)seed % n, seed == 3 && n <= FILES_MAX, 500 + 10 * n + seed);
		}
	}
	memset(fs.blk, 0, sizeof(fs.blk));
}

/* The next record of fs's file f from at[f] (the records taken): its key,
 * or UINT64_MAX when the file has no more. */
static uint64_t next_key(const struct files *fs, const size_t *at, unsigned f)
{
	return at[f] < fs->count[f] ? ref_key(&fs->rec[f][at[f]], fs->off[f]) : UINT64_MAX;
}

/* The file whose next record has the smallest key (ties to the lower
 * file), that key in *low; FILES_CAP (and UINT64_MAX) when every file ended. */
static unsigned lowest_file(const struct files *fs, const size_t *at, uint64_t *low)
{
	unsigned lf = FILES_CAP;

	*low = UINT64_MAX;
	for (unsigned g = 0; g < fs->n; g++)
		if (next_key(fs, at, g) < *low) {
			*low = next_key(fs, at, g);
			lf = g;
		}
	return lf;
}

/*
 * The windowed merge (ntp_merge_most_windowed) of files each in key order,
 * drained to random times and just before and at the smallest key left, to
 * the end: every record once, each file's in its order, none past until and
 * every one up to it (the peek then shows the smallest key left, ties to
 * the lower file); a record of another file comes after every record of
 * file most of a smaller key, and no record comes before one more than
 * NTP_MERGE_WINDOW_MAX smaller; the largest key of the primary file.
 */
static void check_windowed(struct files *fs, size_t most, size_t primary, int ahead, unsigned seed)
{
	static struct seen got;
	size_t at[FILES_CAP] = { 0 }, k = 0, total = 0;
	uint64_t want_max = 0, got_max = 0, until = 0, before = 0;
	struct ntp_merge *m;

	for (unsigned f = 0; f < fs->n; f++) {
		total += fs->count[f];
		for (size_t j = 0; j < fs->count[f]; j++) {
			uint64_t x = ref_key(&fs->rec[f][j], fs->off[f]);

			if (j)	/* the files are in key order */
				assert_true(x >= ref_key(&fs->rec[f][j - 1], fs->off[f]));
			if (f == primary && x > want_max)
				want_max = x;
		}
	}
	srandom(seed);
	files_write(fs, 1, ahead);
	m = ntp_merge_new(fs->r, fs->n, fs->off);
	assert_non_null(m);
	ntp_merge_most_windowed(m, most);
	got.n = 0;
	got.fs = fs;
	for (;;) {
		const struct ntp_record *x;
		uint64_t low, key;
		unsigned lf = lowest_file(fs, at, &low);
		size_t f, fed;
		int how = (int)(random() % 4);

		if (lf < FILES_CAP && how == 0)
			until = low ? low - 1 : 0;
		else if (lf < FILES_CAP && how == 1)
			until = low;
		else if (random() % 16 == 0)
			until = UINT64_MAX;
		else
			until += (uint64_t)(random() % 40000) << (random() % 24);
		fed = ntp_merge_drain(m, until, note, &got, primary, &got_max);
		assert_int_equal(fed, got.n - k);
		for (; k < got.n; k++) {
			unsigned g = got.id[k] / PER_MAX;
			uint64_t kx;

			assert_int_equal(got.id[k] % PER_MAX, at[g]);	/* the file's order */
			kx = next_key(fs, at, g);
			at[g]++;
			assert_true(kx <= until);
			if (g != most && most < fs->n)
				assert_true(next_key(fs, at, (unsigned)most) >= kx);
			assert_true(before <= kx || before - kx <= NTP_MERGE_WINDOW_MAX);
			before = kx > before ? kx : before;
		}
		for (unsigned g = 0; g < fs->n; g++)	/* every record up to until */
			if (at[g] < fs->count[g] && next_key(fs, at, g) <= until)
				fail_msg("seed %u n %u most %zu: file %u #%zu key %" PRIu64 " <= until %" PRIu64 " left (of %zu); fed %zu",
					 seed, fs->n, most, g, at[g], next_key(fs, at, g), until, fs->count[g], fed);
		if (!ntp_merge_peek(m, &x, &f, &key))
			break;
		lf = lowest_file(fs, at, &low);
		assert_int_equal(f, lf);
		assert_int_equal(key, low);
		assert_ptr_equal(x, ntp_merge_current(m, f));
		assert_int_equal(x->seq, (uint64_t)lf * PER_MAX + at[lf]);
	}
	assert_int_equal(got.n, total);
	assert_int_equal(got_max, want_max);
	assert_int_equal(ntp_merge_drain(m, UINT64_MAX, note, &got, primary, &got_max), 0);
	ntp_merge_free(m);
	files_remove(fs);
}

/*
 * Files in key order whose times come dense (ties across files), sparse
 * and in bursts apart by more than NTP_MERGE_WINDOW_MAX (the window's width
 * grows and shrinks, idle stretches skipped), the file outside the tree
 * among them at random, one of them empty or ending early; 2 to 9 files
 * and 64, blocks of random sizes, read ahead or not.
 */
static void test_merge_windowed(void **state)
{
	static struct files fs;

	(void)state;
	for (unsigned seed = 1; seed <= 40; seed++) {
		unsigned n = seed % 10 == 0 ? 64 : 2 + seed % (FILES_MAX - 1);
		size_t most = (size_t)seed * 7 % n;

		srandom(seed);
		fs.n = n;
		for (unsigned f = 0; f < n; f++) {
			uint64_t now = 1000 + (uint64_t)(random() % 5000);

			fs.count[f] = f == (most + 1) % n && seed % 3 == 0 ? 0
				      : f != most && n > FILES_MAX ? 100 + (size_t)(random() % 200)
				      : (size_t)(random() % PER_MAX);
			for (unsigned j = 0; j < fs.count[f]; j++) {
				switch (random() % 64) {
				case 0:
					now += NTP_MERGE_WINDOW_MAX + (uint64_t)(random() % 1000000);
					break;
				case 1:
				case 2:
					now += (uint64_t)(random() % 100000000);
					break;
				default:
					now += (uint64_t)(random() % 4) * (f == most ? 1000 : 3000);
				}
				ordered_record(&fs.rec[f][j], f, j, now);
			}
			fs.off[f] = f % 2 ? 3000 : -5000;
		}
		check_windowed(&fs, most, seed % n, seed % 4 == 1 && n <= FILES_MAX, seed);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_merge_none),
		cmocka_unit_test(test_merge_random),
		cmocka_unit_test(test_record_last_ts),
		cmocka_unit_test(test_merge_keys),
		cmocka_unit_test(test_merge_most_wide),
		cmocka_unit_test(test_merge_limit_keys),
		cmocka_unit_test(test_merge_windowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
