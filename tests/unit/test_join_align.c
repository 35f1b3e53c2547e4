// SPDX-License-Identifier: GPL-2.0
/* test_join_align.c - the alignment's offset from a host sample and a target
 * sample, found through the target's command table (join_align.c), against
 * the walk it replaced: both samples sorted by command and time, walked side
 * by side, each command's instances given to best_shift, the differences'
 * densest window. Random samples over few commands (many instances of one
 * command, host instances the target lacks and the reverse), any times.
 * And the offsets of whole files (ntp_join_align) against the alignment as
 * first written (each sample read on its own, kept whole, walked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* the file's static functions, its one external one renamed (the library's
 * copy is linked in too) */
#define ntp_join_align test_copy_of_ntp_join_align
#define ntp_join_align_state test_copy_of_ntp_join_align_state
#define ntp_join_align_note test_copy_of_ntp_join_align_note
#include "../../src/core/model/join_align.c"
#undef ntp_join_align
#undef ntp_join_align_state
#undef ntp_join_align_note

static int cmp_ref(const void *pa, const void *pb)
{
	const struct mark *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->slba != b->slba)
		return a->slba < b->slba ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	if (a->opcode != b->opcode)
		return a->opcode < b->opcode ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* The walk over two sorted samples (the reference); *pairs its differences. */
static size_t ref_offset_n(struct mark *h, size_t nh, struct mark *t, size_t nt, int64_t *d, int64_t *out,
			   size_t *pairs)
{
	size_t i = 0, j = 0, nd = 0, l = 0, best = 0, best_l = 0;
	static int64_t ht[ALIGN_SAMPLE], tt[ALIGN_SAMPLE];

	qsort(h, nh, sizeof(*h), cmp_ref);
	qsort(t, nt, sizeof(*t), cmp_ref);
	while (i < nh && j < nt) {
		if (same_cmd(&h[i], &t[j])) {
			size_t i1 = i, j1 = j;

			while (i1 < nh && same_cmd(&h[i1], &h[i]))
				i1++;
			while (j1 < nt && same_cmd(&t[j1], &t[j]))
				j1++;
			for (size_t k = i; k < i1; k++)
				ht[k - i] = h[k].t;
			for (size_t k = j; k < j1; k++)
				tt[k - j] = t[k].t;
			nd = best_shift(ht, i1 - i, tt, j1 - j, d, nd);
			i = i1;
			j = j1;
		} else if (cmp_ref(&h[i], &t[j]) < 0) {
			i++;
		} else {
			j++;
		}
	}
	*pairs = nd;
	if (nd < ALIGN_MIN_PAIRS)
		return 0;
	sort_i64(d, nd);
	for (size_t r = 0; r < nd; r++) {
		while ((__int128)d[r] - d[l] > ALIGN_WINDOW_NS)
			l++;
		if (r - l + 1 > best) {
			best = r - l + 1;
			best_l = l;
		}
	}
	*out = d[best_l + best / 2];
	return best;
}

static size_t ref_offset(struct mark *h, size_t nh, struct mark *t, size_t nt, int64_t *d, int64_t *out)
{
	size_t pairs;

	return ref_offset_n(h, nh, t, nt, d, out, &pairs);
}

static struct mark random_mark(unsigned keys, unsigned lbas, int64_t t)
{
	struct mark m;

	memset(&m, 0, sizeof(m));
	m.key = (uint64_t)(random() % keys) << 16 | 1;
	m.slba = (uint64_t)(random() % lbas);
	m.len = random() % 8 ? 4096 : 8192;
	m.opcode = random() % 4 ? 2 : 1;
	m.t = t;
	return m;
}

/* tindex_build with its arrays carved from a block of their own, which
 * the caller frees: they take what tsample_bytes counts for them (all of
 * a sample's room but its marks) */
static void *build_index(struct tindex *x, const struct mark *t, size_t nt, uint32_t *gid)
{
	void *room = calloc(1, tsample_bytes(nt));
	struct carve c = { .at = room };

	assert_non_null(room);
	tindex_build(x, t, nt, gid, &c);
	assert_int_equal((size_t)(c.at - (uint8_t *)room), tsample_bytes(nt) - carve_len(nt * sizeof(struct mark)));
	return room;
}

static void one_case(unsigned keys, unsigned lbas, size_t nh, size_t nt, int wild, unsigned seed)
{
	static struct mark h[ALIGN_SAMPLE], t[ALIGN_SAMPLE], hc[ALIGN_SAMPLE], tc[ALIGN_SAMPLE];
	static int64_t d1[ALIGN_SAMPLE], d2[ALIGN_SAMPLE];
	/* one scratch block for the index and both offsets, as ntp_join_align
	 * has, left dirty by each for the next */
	static uint64_t scratch[ALIGN_SCRATCH_BYTES / sizeof(uint64_t)];
	int64_t off = (int64_t)(random() % 1000000000) - 500000000, o1 = 0, o2 = 0;
	struct tindex x;
	size_t c1, c2, p1 = 0, p2;
	void *room;

	srandom(seed);
	/* the target's instances, then host instances: copies of some of them
	 * at the offset plus a trip, and commands of their own */
	for (size_t j = 0; j < nt; j++)
		t[j] = random_mark(keys, lbas, wild && random() % 50 == 0 ? (int64_t)((uint64_t)random() << 33)
									    : (int64_t)(j * 5000 + random() % 3000));
	for (size_t i = 0; i < nh; i++) {
		if (nt && random() % 3) {
			h[i] = t[(size_t)random() % nt];
			h[i].t = h[i].t - off - 20000 - random() % 4000;
		} else {
			h[i] = random_mark(keys, lbas, (int64_t)(i * 5000));
		}
		if (wild && random() % 40 == 0)
			h[i].t = (int64_t)((uint64_t)random() << 40 ^ (uint64_t)random());
	}
	memcpy(hc, h, nh * sizeof(*h));
	memcpy(tc, t, nt * sizeof(*t));
	c1 = ref_offset_n(hc, nh, tc, nt, d1, &o1, &p1);
	memset(&x, 0, sizeof(x));
	memset(scratch, 0xa5, sizeof(scratch));
	room = build_index(&x, t, nt, (uint32_t *)scratch);
	c2 = median_offset(h, nh, &x, nt, d2, &o2, scratch, 0, &p2);
	/* a second host sample on the same table (the stamps tell the calls apart) */
	c2 = median_offset(h, nh, &x, nt, d2, &o2, scratch, 0, &p2);
	assert_int_equal(c2, c1);
	assert_int_equal(p2, p1);
	if (c1)
		assert_int_equal(o2, o1);
	/* the host marks kept as a filtered sample keeps them (their groups
	 * found as they are kept, not looked up again): the same offset */
	{
		struct tindex *one = &x;
		size_t nk = 0;

		for (size_t i = 0; i < nh; i++) {
			struct mark m = h[i];

			m.tg = 0;
			if (in_targets(&one, 1, &m)) {
				assert_true(m.tg > 0 && m.tg <= x.ng);
				hc[nk++] = m;
			}
		}
		c2 = median_offset(hc, nk, &x, nt, d2, &o2, scratch, 1, &p2);
		assert_int_equal(c2, c1);
		if (c1)
			assert_int_equal(o2, o1);
		/* groups out of the index's range (a mark kept for another
		 * index): looked up, never read */
		for (size_t k = 0; k < nk; k++)
			if (random() % 3 == 0)
				hc[k].tg = (uint16_t)(random() % 2 ? UINT16_MAX : x.ng + 1 + random() % 100);
		c2 = median_offset(hc, nk, &x, nt, d2, &o2, scratch, 1, &p2);
		assert_int_equal(c2, c1);
		if (c1)
			assert_int_equal(o2, o1);
	}
	free(room);
}

static void test_align_against_walk(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 60; seed++) {
		srandom(seed);
		/* commands of many instances, of one or two, none in common */
		one_case(1 + seed % 5, 1 + seed % 7, 300 + seed * 7, 200 + seed * 11, seed % 3 == 0, seed);
		one_case(64, 4096, 4096, 32768, seed % 2, seed + 1000);
		one_case(2, 3, 700, 900, 1, seed + 2000);	/* past ALIGN_GROUP_MAX instances */
	}
	one_case(64, 4096, 32768, 32768, 0, 77);	/* the largest samples: the whole scratch block */
	one_case(5, 5, 0, 100, 0, 7);
	one_case(5, 5, 100, 0, 0, 8);
}

/* The differences' radix sort against the merge sort: any 64-bit values,
 * repeats, the extremes. */
static void test_sort_diffs(void **state)
{
	static int64_t a[40000], b[40000];
	static uint64_t tmp[40000];

	(void)state;
	srandom(3);
	for (size_t n = 0; n <= 40000; n = n * 3 + 7) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = (uint64_t)random() << 42 ^ (uint64_t)random() << 21 ^ (uint64_t)random();

			a[i] = random() % 5 == 0 ? (int64_t)(v % 7) - 3 : random() % 50 == 0 ? INT64_MIN
			     : random() % 50 == 0 ? INT64_MAX : (int64_t)v;
		}
		memcpy(b, a, n * sizeof(*a));
		sort_diffs(a, n, tmp);
		sort_i64(b, n);
		assert_memory_equal(a, b, n * sizeof(*a));
		/* values close to one another (one pair of clocks): the passes
		 * of bytes every value shares skipped, an odd or even number
		 * of passes left, around 0 and far from it */
		for (int bits = 1; bits < 64; bits += 5) {
			int64_t base = bits % 3 == 0 ? -(int64_t)(bits * 1000003) : (int64_t)((uint64_t)bits << 40);

			for (size_t i = 0; i < n; i++) {
				uint64_t v = (uint64_t)random() << 42 ^ (uint64_t)random() << 21 ^ (uint64_t)random();

				a[i] = (int64_t)((uint64_t)base + (v & ((1ull << bits) - 1)));
			}
			memcpy(b, a, n * sizeof(*a));
			sort_diffs(a, n, tmp);
			sort_i64(b, n);
			assert_memory_equal(a, b, n * sizeof(*a));
		}
	}
}

/* ---- the whole alignment of files against the way it was first written ---- */

/* The first records (at most max) of one file, one side's marks, each file
 * and each sample read on its own (from_wall: the first from that time on,
 * after passing at most ALIGN_SKIP_MAX earlier records). */
static size_t ref_sample(const char *path, uint8_t side, struct mark *out, size_t max, int64_t from_wall)
{
	char err[256];
	struct ntp_reader *r = ntp_reader_open(path, err, sizeof(err));
	const struct ntp_record *recs;
	size_t n = 0, k, seen = 0, skipped = 0;
	int slot = side == NTP_SIDE_HOST ? NTP_TS_H_CMD_SENT : NTP_TS_T_CMD_ARRIVE;
	int64_t to_wall;

	assert_non_null(r);
	to_wall = wrap_sub(ntp_reader_info(r)->start_real_ns, ntp_reader_info(r)->start_mono_ns);
	while (seen < max && ntp_reader_next_block(r, &recs, &k) == 1) {
		for (size_t i = 0; i < k && seen < max; i++, seen++) {
			const struct ntp_record *x = &recs[i];

			if (x->side != side || !(x->ts_valid & (1u << slot)))
				continue;
			if (from_wall && wrap_add(x->ts[slot], to_wall) < from_wall && skipped < ALIGN_SKIP_MAX) {
				skipped++;
				seen--;
				continue;
			}
			out[n++] = (struct mark){ .key = ((uint64_t)x->cntlid << 32) | ((uint64_t)x->qid << 16) | x->cid,
						  .slba = x->slba, .len = x->len, .opcode = x->opcode,
						  .t = wrap_add(x->ts[slot], to_wall) };
		}
	}
	ntp_reader_close(r);
	return n;
}

#define REF_FILES 8

/* ntp_join_align as first written: every sample of every file read on its
 * own, a host's sample kept whole, each pair of samples walked sorted; a
 * target's sample of sample records (ALIGN_SAMPLE, or the quick run's). */
static void ref_join_align(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj,
			   size_t sample)
{
	static struct mark hm[2][REF_FILES][ALIGN_SAMPLE], tm[2][REF_FILES][ALIGN_SAMPLE];
	static struct mark hc[ALIGN_SAMPLE], tc[ALIGN_SAMPLE];
	static int64_t d[ALIGN_SAMPLE];
	size_t nh[2][REF_FILES] = { { 0 } }, nt[2][REF_FILES] = { { 0 } }, hosts = 0, host_max;
	char done[REF_FILES] = { 0 }, early[REF_FILES] = { 0 };
	int64_t late = 0, from;
	int progress = 1, sets = 1;

	memset(adj, 0, n * sizeof(*adj));
	for (size_t i = 0; i < n; i++)
		if ((int64_t)in[i].info->start_real_ns > late)
			late = (int64_t)in[i].info->start_real_ns;
	from = late - ALIGN_LATE_MARGIN_NS;
	for (size_t i = 0; i < n; i++)
		if ((int64_t)in[i].info->start_real_ns < from)
			early[i] = 1, sets = 2;
	for (size_t i = 0; i < n; i++)
		hosts += has_side(in[i].info->role, NTP_SIDE_HOST);
	/* the budget of join_align.c (for the few hosts here, whole blocks) */
	host_max = hosts > 1 ? 2 * sample / hosts : sample;
	if (host_max > NTP_BLOCK_RECORDS)
		host_max -= host_max % NTP_BLOCK_RECORDS;
	for (int set = 0; set < sets; set++)
		for (size_t i = 0; i < n; i++) {
			if (set && !early[i])
				continue;
			if (has_side(in[i].info->role, NTP_SIDE_HOST))
				nh[set][i] = ref_sample(in[i].path, NTP_SIDE_HOST, hm[set][i], host_max, set ? from : 0);
			if (has_side(in[i].info->role, NTP_SIDE_TARGET))
				nt[set][i] = ref_sample(in[i].path, NTP_SIDE_TARGET, tm[set][i], sample,
							set ? from : 0);
		}
	done[primary] = 1;
	while (progress) {
		progress = 0;
		for (size_t a = 0; a < n; a++)
			for (size_t b = 0; b < n; b++) {
				for (int dir = 0; dir < 2 && a != b && done[a] && !done[b]; dir++) {
					size_t x = dir ? b : a, y = dir ? a : b, best = 0;
					int64_t off = 0;

					for (int set = 0; set < 2; set++) {
						int sa = set && early[x], sb = set && early[y];
						int64_t o;
						size_t c;

						if (set && !sa && !sb)
							continue;
						memcpy(hc, hm[sa][x], nh[sa][x] * sizeof(*hc));
						memcpy(tc, tm[sb][y], nt[sb][y] * sizeof(*tc));
						c = nh[sa][x] && nt[sb][y] ? ref_offset(hc, nh[sa][x], tc, nt[sb][y], d, &o) : 0;
						if (c > best) {
							best = c;
							off = o;
						}
					}
					if (best) {
						adj[b] = dir ? wrap_sub((uint64_t)adj[a], (uint64_t)off)
							     : wrap_add((uint64_t)adj[a], off);
						done[b] = progress = 1;
					}
				}
			}
	}
}

/*
 * hosts host files and their target's, the target last: command c of host
 * h (one command id per tag, LBAs that come back) sent at wall time w_c,
 * on each file's clock off by its own error; host 0 began `early` seconds
 * before the others with commands the target never saw; some of each
 * host's commands missed by the target, some of the target's by no host.
 */
static void align_files(unsigned hosts, unsigned early, unsigned seed, size_t unaligned)
{
	uint8_t state[REF_FILES], sq[REF_FILES];
	char dir[] = "/tmp/test_join_align.XXXXXX", path[REF_FILES][300], err[256];
	struct ntp_file_info info[REF_FILES];
	struct ntp_join_input in[REF_FILES];
	struct ntp_writer *w[REF_FILES];
	int64_t skew[REF_FILES], a1[REF_FILES], a2[REF_FILES], aq[REF_FILES];
	const uint64_t t0 = 1700000000000000000ull;
	unsigned n = hosts + 1, tgt = hosts;
	int quick;

	assert_true(n <= REF_FILES);
	assert_non_null(mkdtemp(dir));
	srandom(seed);
	for (unsigned f = 0; f < n; f++) {
		memset(&info[f], 0, sizeof(info[f]));
		info[f].role = f == tgt ? NTP_ROLE_TARGET : NTP_ROLE_HOST;
		info[f].transport = NTP_TRANSPORT_TCP;
		info[f].sampling = 1;
		info[f].start_mono_ns = 1000000000ull * (f + 1);
		info[f].start_real_ns = t0 - (f == 0 ? early * 1000000000ull : 0);
		snprintf(info[f].hostname, sizeof(info[f].hostname), "m%u", f);
		snprintf(path[f], sizeof(path[f]), "%s/f%u.ntp", dir, f);
		w[f] = ntp_writer_open(path[f], &info[f], err, sizeof(err));
		assert_non_null(w[f]);
		skew[f] = (int64_t)(random() % 400000000) - 200000000;	/* each wall clock's error */
		in[f].path = path[f];
		in[f].info = &info[f];
	}
	/* host 0's commands before the others began, then everyone's */
	for (int64_t wt = -(int64_t)early * 1000000000; wt < 600000000; wt += 2000 + random() % 2000) {
		unsigned h = wt < 0 ? 0 : (unsigned)random() % hosts;
		struct ntp_record x;

		memset(&x, 0, sizeof(x));
		x.cntlid = (uint16_t)(h + 1);
		x.qid = 1;
		x.cid = (uint16_t)(random() % 16);
		x.slba = (uint64_t)(random() % 64) * 8;
		x.len = 4096;
		x.opcode = 2;
		if (random() % 20) {
			x.side = NTP_SIDE_HOST;
			x.ts[NTP_TS_H_CMD_SENT] = (uint64_t)((int64_t)(t0 + info[h].start_mono_ns - info[h].start_real_ns)
							    + wt + skew[h]);
			x.ts_valid = 1u << NTP_TS_H_CMD_SENT;
			assert_int_equal(ntp_writer_add(w[h], &x), 0);
		}
		if (wt >= 0 && random() % 10) {
			x.side = NTP_SIDE_TARGET;
			x.ts[NTP_TS_H_CMD_SENT] = 0;
			x.ts[NTP_TS_T_CMD_ARRIVE] = (uint64_t)((int64_t)(t0 + info[tgt].start_mono_ns -
									 info[tgt].start_real_ns) + wt + 30000 +
							       (int64_t)(random() % 5000) + skew[tgt]);
			x.ts_valid = 1u << NTP_TS_T_CMD_ARRIVE;
			assert_int_equal(ntp_writer_add(w[tgt], &x), 0);
		}
	}
	for (unsigned f = 0; f < n; f++)
		assert_int_equal(ntp_writer_close(w[f], 1), 0);
	/* of few hosts, the quick samples' alignment where they agree
	 * (ntp_join_align_state), its offsets the first alignment's of
	 * samples as short */
	quick = align_quick(in, n, 0, aq, sq, most_file_records(in, n));
	ref_join_align(in, n, 0, a1, quick ? ALIGN_QUICK : ALIGN_SAMPLE);
	assert_int_equal(test_copy_of_ntp_join_align_state(in, n, 0, a2, state), unaligned);
	if (quick)
		assert_memory_equal(a2, aq, n * sizeof(*a2));
	for (unsigned f = 0; f < n; f++)
		unlink(path[f]);
	rmdir(dir);
	/* the skews and the trip undone (within the trip's spread): the
	 * target aligned on host 0, the hosts on the target; the offset the
	 * first alignment took where it was right. Where it was not (host 0
	 * began so early that its samples held false pairs only: a command id
	 * and LBA that came back), aligned by reading on, or said. */
	for (unsigned f = 1; f < n; f++) {
		int64_t truth = -(skew[f] - skew[0] + (f == tgt ? 32500 : 0));

		if (llabs(a1[f] - truth) < 100000)
			assert_int_equal(a2[f], a1[f]);
		else if (state[f])
			assert_int_equal(a2[f], 0);
		else
			assert_true(llabs(a2[f] - truth) < 100000);
	}
	assert_int_equal(state[0], NTP_ALIGNED);
	/* on time: the first alignment was right */
	if (!early)
		for (unsigned f = 1; f < n; f++)
			assert_true(llabs(a1[f] + skew[f] - skew[0] + (f == tgt ? 32500 : 0)) < 100000);
}

/* One to seven hosts (three and more: only the marks the target's sample
 * holds are kept, the hosts' files read in two threads), host 0 on time or
 * seconds early (a second sample of it and of the target). */
static void test_align_files(void **state)
{
	(void)state;
	align_files(1, 0, 1, 0);
	align_files(1, 3, 2, 0);
	align_files(3, 0, 3, 0);
	align_files(4, 2, 4, 0);
	align_files(7, 3, 5, 0);
}

/* ---- many hosts: a host's share of the target's sample ---- */

/* A host record of command (key 1, LBA slba), sent at ts. */
static void add_host(struct ntp_writer *w, uint64_t slba, uint64_t ts)
{
	struct ntp_record x;

	memset(&x, 0, sizeof(x));
	x.cntlid = 1;
	x.qid = 1;
	x.cid = 3;
	x.slba = slba;
	x.len = 4096;
	x.opcode = 2;
	x.side = NTP_SIDE_HOST;
	x.ts[NTP_TS_H_CMD_SENT] = ts;
	x.ts_valid = 1u << NTP_TS_H_CMD_SENT;
	assert_int_equal(ntp_writer_add(w, &x), 0);
}

/*
 * A filtered host sample (struct sampler with the target's index) keeps
 * only the marks of commands the target's sample holds, and counts its
 * max records from the first of them: a
 * host whose first records the target never saw (it began earlier) still
 * gets its share. Without a mark, the sample ends empty within
 * ALIGN_SAMPLE records if the target's sample holds the host's
 * controller, else within ALIGN_HOST_FLOOR, where it once did.
 */
static void test_host_share(void **state)
{
	char dir[] = "/tmp/test_join_align.XXXXXX", path[300], err[256];
	static struct mark t[4000], out[ALIGN_SAMPLE];
	static uint64_t scratch[ALIGN_SCRATCH_BYTES / sizeof(uint64_t)];
	struct ntp_file_info info;
	struct ntp_writer *w;
	struct tindex x, *one = &x;
	const size_t lead = 5000, max = 1000;
	void *room;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/h.ntp", dir);
	memset(&info, 0, sizeof(info));
	info.role = NTP_ROLE_HOST;
	info.transport = NTP_TRANSPORT_TCP;
	info.sampling = 1;
	/* the target's sample: commands (key 1, LBA 8 * j) */
	for (size_t j = 0; j < 4000; j++)
		t[j] = (struct mark){ .key = 1ull << 32 | 1u << 16 | 3, .slba = 8 * j, .len = 4096, .opcode = 2,
				      .t = (int64_t)j * 1000 };
	memset(&x, 0, sizeof(x));
	room = build_index(&x, t, 4000, (uint32_t *)scratch);
	/* the host: lead commands the target lacks, then 4000 it holds
	 * (every other one), then none */
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (size_t i = 0; i < lead; i++)
		add_host(w, 1000000 + i, i);
	for (size_t i = 0; i < 4000; i++)
		add_host(w, i % 2 ? 2000000 + i : 8 * i, lead + i);
	for (size_t i = 0; i < 3 * ALIGN_SAMPLE; i++)
		add_host(w, 3000000 + i, lead + 4000 + i);
	assert_int_equal(ntp_writer_close(w, 1), 0);
	{
		struct sampler s = { .out = out, .max = max, .ti = &one, .nti = 1, .side = NTP_SIDE_HOST };

		sample_file(path, &s, 1, NULL);
		assert_int_equal(s.seen, lead + max);
		assert_int_equal(s.n, max / 2);
		for (size_t k = 0; k < s.n; k++) {
			assert_int_equal(out[k].slba, 16 * k);
			/* the group found as it was kept: the command's */
			assert_int_equal(out[k].tg, 2 * k + 1);
		}
	}
	/* a share larger than the stretch the target holds: all of it */
	{
		struct sampler s = { .out = out, .max = 6000, .ti = &one, .nti = 1,
				     .side = NTP_SIDE_HOST };

		sample_file(path, &s, 1, NULL);
		assert_int_equal(s.seen, lead + 6000);
		assert_int_equal(s.n, 2000);
	}
	free(room);
	/* nothing the target holds: ALIGN_SAMPLE records, no mark */
	for (size_t j = 0; j < 4000; j++)
		t[j].slba += 1ull << 40;
	memset(&x, 0, sizeof(x));
	room = build_index(&x, t, 4000, (uint32_t *)scratch);
	{
		struct sampler s = { .out = out, .max = max, .ti = &one, .nti = 1, .side = NTP_SIDE_HOST };

		sample_file(path, &s, 1, NULL);
		assert_int_equal(s.seen, ALIGN_SAMPLE);
		assert_int_equal(s.n, 0);
	}
	free(room);
	/* nor a command of its controller: ALIGN_HOST_FLOOR records */
	for (size_t j = 0; j < 4000; j++)
		t[j].key = 2ull << 32 | 1u << 16 | 3;
	memset(&x, 0, sizeof(x));
	room = build_index(&x, t, 4000, (uint32_t *)scratch);
	{
		struct sampler s = { .out = out, .max = max, .ti = &one, .nti = 1, .side = NTP_SIDE_HOST };

		sample_file(path, &s, 1, NULL);
		assert_int_equal(s.seen, ALIGN_HOST_FLOOR);
		assert_int_equal(s.n, 0);
	}
	free(room);
	unlink(path);
	rmdir(dir);
}

#define MANY_HOSTS 40
#define MAX_HOSTS 63

/* How the commands of align_many look. */
struct many {
	size_t early_cmds;
	/* 0: each command its own LBA and a command id of 64; else one
	 * command id and LBAs that come back, of lbas (SPDK at queue depth 1) */
	unsigned lbas;
	int both0;		/* host 0 a file of both sides (its targets' commands of no recorded host) */
	unsigned targets;	/* 1, or 2: host h's commands to target h % 2, host 0's to either */
	unsigned hosts;		/* 0: MANY_HOSTS */
	int all_early;		/* every host began early_cmds / hosts commands early, not host 0 alone */
	int stop;		/* the hosts stopped recording when the targets began: no true pair */
	size_t foreign;		/* host 1's first records: this many of a controller no target has */
	int vanish;		/* host 1's file removed before the alignment reads it */
	int alien0;		/* host 0 (the primary) of another run: no target holds its commands */
	int quick;		/* 1: the quick samples align every file (the offsets are
				 * theirs); -1: they do not (ALIGN_SAMPLE's are) */
};

/*
 * Hosts (MANY_HOSTS unless said) and their targets, each clock off by its
 * own error; host 0 (the primary file), or every host, began early_cmds
 * commands before the targets (well within the second's margin of a
 * second sample): its first records hold no command of the target's
 * sample. Every host and target is aligned, host 0 too; or, when the
 * hosts stopped as the targets began, none is, and each is said.
 */
static void align_many(const struct many *o, unsigned seed)
{
	char dir[] = "/tmp/test_join_align.XXXXXX", path[MAX_HOSTS + 2][300], err[256], note[1024];
	static struct ntp_file_info info[MAX_HOSTS + 2];
	struct ntp_join_input in[MAX_HOSTS + 2];
	struct ntp_writer *w[MAX_HOSTS + 2];
	int64_t skew[MAX_HOSTS + 2], adj[MAX_HOSTS + 2];
	uint8_t state[MAX_HOSTS + 2];
	const uint64_t t0 = 1700000000000000000ull;
	const unsigned hosts = o->hosts ? o->hosts : MANY_HOSTS, n = hosts + o->targets;
	uint64_t lba = 0;
	int64_t wt = -(int64_t)o->early_cmds * 3000;	/* a command each 3 us on average */
	size_t unaligned;

	assert_true(hosts <= MAX_HOSTS);
	assert_non_null(mkdtemp(dir));
	srandom(seed);
	for (unsigned f = 0; f < n; f++) {
		memset(&info[f], 0, sizeof(info[f]));
		info[f].role = f >= hosts ? NTP_ROLE_TARGET : f == 0 && o->both0 ? NTP_ROLE_BOTH : NTP_ROLE_HOST;
		info[f].transport = NTP_TRANSPORT_TCP;
		info[f].sampling = 1;
		info[f].start_mono_ns = 1000000000ull * (f + 1);
		info[f].start_real_ns = t0 - ((f == 0 || (o->all_early && f < hosts)) ? o->early_cmds * 3000 : 0);
		snprintf(info[f].hostname, sizeof(info[f].hostname), "m%u", f);
		snprintf(path[f], sizeof(path[f]), "%s/f%u.ntp", dir, f);
		w[f] = ntp_writer_open(path[f], &info[f], err, sizeof(err));
		assert_non_null(w[f]);
		skew[f] = (int64_t)(random() % 400000000) - 200000000;
		in[f].path = path[f];
		in[f].info = &info[f];
	}
	for (size_t i = 0; i < o->foreign; i++) {
		struct ntp_record x;

		memset(&x, 0, sizeof(x));
		x.cntlid = 999;
		x.qid = 1;
		x.cid = (uint16_t)(i % 64);
		x.slba = 8 * (uint64_t)i;
		x.len = 4096;
		x.opcode = 2;
		x.side = NTP_SIDE_HOST;
		x.ts[NTP_TS_H_CMD_SENT] = (uint64_t)((int64_t)(t0 + info[1].start_mono_ns - info[1].start_real_ns) +
						     wt - (int64_t)(o->foreign - i) * 1000 + skew[1]);
		x.ts_valid = 1u << NTP_TS_H_CMD_SENT;
		assert_int_equal(ntp_writer_add(w[1], &x), 0);
	}
	for (; wt < 150000000; wt += 2000 + random() % 2000) {
		unsigned h = wt < 0 && !o->all_early ? 0 : (unsigned)random() % hosts;
		unsigned tgt = hosts + (h ? h : (unsigned)random()) % o->targets;
		struct ntp_record x;

		memset(&x, 0, sizeof(x));
		x.cntlid = o->alien0 && !h ? 999 : (uint16_t)(h + 1);
		x.qid = 1;
		x.cid = o->lbas ? 0 : (uint16_t)(random() % 64);
		x.slba = o->lbas ? 8 * (uint64_t)(random() % o->lbas) : 8 * lba++;
		x.len = 4096;
		x.opcode = 2;
		x.side = NTP_SIDE_HOST;
		x.ts[NTP_TS_H_CMD_SENT] = (uint64_t)((int64_t)(t0 + info[h].start_mono_ns - info[h].start_real_ns) +
						     wt + skew[h]);
		x.ts_valid = 1u << NTP_TS_H_CMD_SENT;
		if (wt < 0 || !o->stop)
			assert_int_equal(ntp_writer_add(w[h], &x), 0);
		if (wt >= 0 && random() % 10 && !(o->alien0 && !h)) {
			x.side = NTP_SIDE_TARGET;
			x.ts[NTP_TS_H_CMD_SENT] = 0;
			x.ts[NTP_TS_T_CMD_ARRIVE] = (uint64_t)((int64_t)(t0 + info[tgt].start_mono_ns -
									 info[tgt].start_real_ns) + wt + 30000 +
							       (int64_t)(random() % 5000) + skew[tgt]);
			x.ts_valid = 1u << NTP_TS_T_CMD_ARRIVE;
			assert_int_equal(ntp_writer_add(w[tgt], &x), 0);
		}
		if (o->both0 && random() % 8 == 0) {
			/* host 0's target side: a command of another host */
			memset(&x, 0, sizeof(x));
			x.cntlid = 777;
			x.qid = 1;
			x.cid = (uint16_t)(random() % 64);
			x.slba = 8 * (uint64_t)random();
			x.len = 4096;
			x.opcode = 2;
			x.side = NTP_SIDE_TARGET;
			x.ts[NTP_TS_T_CMD_ARRIVE] = (uint64_t)((int64_t)(t0 + info[0].start_mono_ns - info[0].start_real_ns) +
							       wt + skew[0]);
			x.ts_valid = 1u << NTP_TS_T_CMD_ARRIVE;
			assert_int_equal(ntp_writer_add(w[0], &x), 0);
		}
	}
	for (unsigned f = 0; f < n; f++)
		assert_int_equal(ntp_writer_close(w[f], 1), 0);
	if (o->vanish)
		unlink(path[1]);
	unaligned = test_copy_of_ntp_join_align_state(in, n, 0, adj, state);
	if (o->quick) {
		int64_t aq[MAX_HOSTS + 2];
		uint8_t sq[MAX_HOSTS + 2];

		if (o->quick > 0) {
			assert_true(align_quick(in, n, 0, aq, sq, most_file_records(in, n)));
		} else {
			/* the full samples' offsets, not the quick run's */
			assert_false(align_quick(in, n, 0, aq, sq, most_file_records(in, n)));
			assert_int_equal(align_run(in, n, 0, aq, sq, ALIGN_SAMPLE, NULL, most_file_records(in, n)), unaligned);
		}
		assert_memory_equal(aq, adj, n * sizeof(*adj));
	}
	if (o->alien0) {
		/* the same offsets with host 1 the primary: the order of
		 * the files does not change what is aligned */
		int64_t adj1[MAX_HOSTS + 2];
		uint8_t state1[MAX_HOSTS + 2];

		assert_int_equal(test_copy_of_ntp_join_align_state(in, n, 1, adj1, state1), 1);
		assert_memory_equal(adj1, adj, n * sizeof(*adj));
		assert_memory_equal(state1, state, n);
	}
	for (unsigned f = 0; f < n; f++)
		unlink(path[f]);
	rmdir(dir);
	assert_int_equal(adj[0], 0);
	if (o->alien0) {
		/* said; every other file aligned, on host 1's clock (the
		 * first file the alignment was begun from again); of two
		 * targets, host 2's and its target on host 2's (their own
		 * group: no command of theirs is in the others' files) */
		assert_int_equal(state[0], NTP_ALIGN_NO_PAIRS);
		assert_int_equal(test_copy_of_ntp_join_align_note(in, n, state, 0, note, sizeof(note)), 1);
		assert_non_null(strstr(note, path[0]));
		assert_non_null(strstr(note, "another run"));
		assert_int_equal(unaligned, 1);
		for (unsigned f = 1; f < n; f++) {
			assert_int_equal(state[f], NTP_ALIGNED);
			unsigned ref = o->targets == 1 || (f < hosts ? f : f - hosts) % 2 ? 1 : 2;

			assert_true(llabs(adj[f] + skew[f] - skew[ref] + (f >= hosts ? 32500 : 0)) < 100000);
		}
		return;
	}
	assert_int_equal(state[0], NTP_ALIGNED);
	assert_int_equal(test_copy_of_ntp_join_align_note(in, n, state, 0, note, sizeof(note)), 0);
	if (o->stop) {
		/* said, each file with its name, and left on the wall clocks */
		assert_int_equal(unaligned, n - 1);
		for (unsigned f = 1; f < n; f++) {
			assert_int_equal(adj[f], 0);
			/* the target's pairs do not agree, nor do those of
			 * each host tried against it on its own (not left
			 * without a peer: the alignment is tried from every
			 * file, whichever comes first) */
			assert_int_equal(state[f], NTP_ALIGN_DISAGREE);
			assert_int_equal(test_copy_of_ntp_join_align_note(in, n, state, f, note, sizeof(note)), 1);
			assert_non_null(strstr(note, path[f]));
		}
		return;
	}
	if (o->vanish) {
		/* said, not an empty sample taken for a host without pairs */
		assert_int_equal(state[1], NTP_ALIGN_UNREADABLE);
		assert_int_equal(adj[1], 0);
		assert_int_equal(test_copy_of_ntp_join_align_note(in, n, state, 1, note, sizeof(note)), 1);
		assert_non_null(strstr(note, "could not be read again"));
		assert_int_equal(unaligned, 1);
	} else {
		assert_int_equal(unaligned, 0);
	}
	/* skews and trip undone (within the trip's spread) */
	for (unsigned f = 1; f < n; f++) {
		if (o->vanish && f == 1)
			continue;
		assert_int_equal(state[f], NTP_ALIGNED);
		assert_true(llabs(adj[f] + skew[f] - skew[0] + (f >= hosts ? 32500 : 0)) < 100000);
	}
}

static void test_align_many_hosts(void **state)
{
	(void)state;
	align_many(&(struct many){ .targets = 1 }, 11);
	/* past the first 4096 records a host's sample once was */
	align_many(&(struct many){ .early_cmds = 6000, .targets = 1 }, 12);
	/* a host whose first 6000 records are of a controller no target
	 * sample holds: its sample stops empty at ALIGN_HOST_FLOOR records,
	 * and it is read on (host_search) */
	align_many(&(struct many){ .targets = 1, .foreign = 6000 }, 13);
	/* a host's file removed before the alignment reads it: said */
	align_many(&(struct many){ .targets = 1, .vanish = 1 }, 14);
}

/*
 * A host at queue depth 1 with one command id (SPDK) that began early
 * repeats in its first records commands the target's sample holds from
 * later on: its share counted from the first of them holds false pairs
 * only, which do not agree, and the host's file is read on (host_search)
 * to where the true pairs begin.
 */
static void test_align_many_qd1(void **state)
{
	(void)state;
	align_many(&(struct many){ .early_cmds = 3000, .lbas = 256, .targets = 1 }, 21);
	align_many(&(struct many){ .early_cmds = 1500, .lbas = 65536, .targets = 1 }, 22);
	align_many(&(struct many){ .lbas = 256, .targets = 1 }, 23);
}

/*
 * S7: hosts at queue depth 1 with one command id that began more than
 * their first 4096 records (many hosts) or their whole sample (one host:
 * 32768 records) before their target: every sample holds false pairs
 * only, whose offsets do not agree. Each host's file is read on
 * (host_search) until a window of its marks agrees: all aligned. Took a
 * false pair's offset before: 40 of 40 hosts, and the one host of a
 * 2-file join, misaligned.
 */
static void test_align_s7(void **state)
{
	(void)state;
	align_many(&(struct many){ .lbas = 256, .targets = 1, .hosts = 1 }, 50);
	align_many(&(struct many){ .early_cmds = 40000, .lbas = 256, .targets = 1, .hosts = 1 }, 51);
	align_many(&(struct many){ .early_cmds = 40 * 4500, .lbas = 256, .targets = 1, .all_early = 1 }, 52);
	align_many(&(struct many){ .early_cmds = 63 * 4300, .lbas = 256, .targets = 1, .hosts = 63,
				   .all_early = 1 }, 53);
}

/* No true pair at all (the hosts stopped recording as the target began;
 * false pairs only, a command id and LBA that came back): every file but
 * the primary is said not aligned, none takes a false pair's offset. */
static void test_align_no_true_pairs(void **state)
{
	(void)state;
	align_many(&(struct many){ .early_cmds = 40000, .lbas = 256, .targets = 1, .hosts = 1, .stop = 1 }, 61);
	align_many(&(struct many){ .early_cmds = 40 * 4500, .lbas = 256, .targets = 1, .all_early = 1,
				   .stop = 1 }, 62);
}

/* A file of both sides among many hosts: its host side's share counted
 * from its first command the targets' samples hold, as a host-only
 * file's (it was its first records only: nothing aligned). */
/* The primary file (the first host given) a busy host of another run: it
 * aligns with nothing, and is said; the others are aligned on each other
 * as when it is given later (tests/cli/join-order.sh). */
static void test_align_alien_primary(void **state)
{
	(void)state;
	align_many(&(struct many){ .targets = 1, .alien0 = 1 }, 71);
	align_many(&(struct many){ .targets = 1, .hosts = 2, .alien0 = 1 }, 72);
	align_many(&(struct many){ .targets = 2, .hosts = 3, .alien0 = 1 }, 73);
}

static void test_align_many_both(void **state)
{
	(void)state;
	align_many(&(struct many){ .early_cmds = 3000, .both0 = 1, .targets = 1 }, 31);
	align_many(&(struct many){ .early_cmds = 6000, .both0 = 1, .targets = 1 }, 32);
}

/* One or two hosts and their target: aligned from the quick samples
 * (ALIGN_QUICK records) where they agree, from the full ones where a host
 * began more than its quick sample before the target (its first 4096
 * records hold none of the target's commands; its first 32768 do), where
 * the quick samples hold too few pairs (ALIGN_QUICK_AGREE) or where the
 * target's quick sample repeats commands (ALIGN_QUICK_REPEAT). */
static void test_align_quick(void **state)
{
	(void)state;
	align_many(&(struct many){ .targets = 1, .hosts = 1, .quick = 1 }, 81);
	align_many(&(struct many){ .targets = 1, .hosts = 2, .quick = 1 }, 82);
	align_many(&(struct many){ .early_cmds = 6000, .targets = 1, .hosts = 1, .quick = -1 }, 83);
	align_many(&(struct many){ .early_cmds = 6000, .targets = 1, .hosts = 2, .quick = -1 }, 84);
	/* 4000 commands early: the quick samples align it, from fewer than
	 * ALIGN_QUICK_AGREE pairs */
	align_many(&(struct many){ .early_cmds = 4000, .targets = 1, .hosts = 1, .quick = -1 }, 86);
	/* a host at queue depth 1 with one command id: its commands come
	 * back within the quick samples, whose false pairs may agree */
	align_many(&(struct many){ .lbas = 256, .targets = 1, .hosts = 1, .quick = -1 }, 85);
}

/* Two targets: a host's marks are kept for either target's sample and
 * carry no group (struct mark's tg is of the one target sample there is):
 * each host aligned on its own target. */
static void test_align_many_targets(void **state)
{
	(void)state;
	align_many(&(struct many){ .targets = 2 }, 41);
	align_many(&(struct many){ .early_cmds = 3000, .targets = 2 }, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align_against_walk),
		cmocka_unit_test(test_sort_diffs),
		cmocka_unit_test(test_align_files),
		cmocka_unit_test(test_host_share),
		cmocka_unit_test(test_align_many_hosts),
		cmocka_unit_test(test_align_many_qd1),
		cmocka_unit_test(test_align_s7),
		cmocka_unit_test(test_align_no_true_pairs),
		cmocka_unit_test(test_align_alien_primary),
		cmocka_unit_test(test_align_many_both),
		cmocka_unit_test(test_align_many_targets),
		cmocka_unit_test(test_align_quick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
