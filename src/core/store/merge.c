// SPDX-License-Identifier: GPL-2.0
/* merge.c - k-way merge of recordings by record time through a loser tree (merge.h). */
#include <stdlib.h>
#include "merge.h"
#include "ntpfile_int.h"

/* Keys are computed for a chunk of a cursor's records at a time, in one
 * loop over records (keys_block), not one call per record: KEY_CHUNK_MANY
 * for a tree of many files (each file's chunk of records waits in the
 * cache for its turn), KEY_CHUNK for two (the call's cost spread over more
 * records; the two chunks' records stay within the second-level cache). */
#define KEY_CHUNK 64
#define KEY_CHUNK_MANY 16
/* Records handed to the drain's function per call (below). */
#define BATCH 256
/* Records of the most cursor a window of drain_windowed aims at: its width
 * is doubled below half of it and halved above twice. */
#define WINDOW_RECORDS 128

struct cursor {
	const struct ntp_record *recs;
	size_t n, i;
	int64_t offset;
	struct ntp_ahead *ahead;	/* the reader's read-ahead, or NULL */
	/* kp[j]: the key of recs[kbase + j], j < kcnt: in key, or the whole
	 * block's from its read-ahead */
	const uint64_t *kp;
	size_t kbase, kcnt;
	size_t chunk;		/* keys computed per call: KEY_CHUNK or KEY_CHUNK_MANY */
	/* windowed, a cursor other than most (whole): a whole block's keys,
	 * computed when the block is read, in bkeys[0..bcap) */
	int whole;
	uint64_t *bkeys;
	size_t bcap;
	/* the chunk's keys, then 0 (the end's mark for drain2's stretches) */
	uint64_t key[KEY_CHUNK + 1];
};

/*
 * A loser tree (a tournament) over the cursors: of size leaves (a power
 * of two >= n, leaf c for cursor c), node[k] (1 <= k < size) holds the
 * rank of the cursor that lost the match at k, node[0] the winner's (the
 * ranks in place: no read through a cursor's number). After the winner
 * moves on, its new rank replays the matches on its path to the root:
 * log2(size) comparisons, one per level with no swap of entries (a binary
 * heap's sift-down makes two per level, and moved 16-byte entries).
 *
 * A rank orders (key, cursor) in one 128-bit integer: the key above, the
 * cursor below (ties to the lower cursor). An ended cursor, and a leaf
 * past n, ranks after every live one: its key is UINT64_MAX and its low
 * part size + cursor, above any live cursor's number (the cursor is the
 * low part modulo size either way).
 *
 * While every key in the tree fits, the ranks are 64-bit (narrow): the key
 * shifted up by lowbits (enough for size + cursor), the low part below; a
 * match is then one comparison and two conditional moves of one word,
 * where a 128-bit rank takes a comparison with borrow and four. An ended
 * cursor's key (UINT64_MAX) shifted up is all ones above the low part,
 * above any live key that fits (at most klim). A key that does not fit (a
 * file's times may be anywhere in 64 bits) turns the tree to 128-bit ranks
 * (wide) for good: the same order, each rank rewritten once (go_wide).
 */
typedef unsigned __int128 rank_t;

/*
 * Where a windowed merge's other cursor is, for drain_windowed's pass over
 * the hosts: its next record, its block's end, and that record's key in
 * the block's keys (kp NULL: the cursor's keys are not the whole block's,
 * and the cursor itself is moved). A host takes a record or two a window,
 * and each visit read its cursor (the record's index, the keys' array and
 * base), which the records taken and reduced since had pushed out of the
 * first-level cache; side by side, 64 hosts' positions take 24 lines. The
 * cursors' indexes are written back when the drain ends (others_sync).
 */
struct other_pos {
	const struct ntp_record *rec, *end;
	const uint64_t *kp;
};

struct ntp_merge {
	struct ntp_reader **r;
	struct cursor *cur;
	rank_t *node;		/* wide: the losers' ranks; node[0]: the winner's */
	uint64_t *node64;	/* narrow: the same */
	rank_t *win;		/* rebuild's: the winners' ranks */
	uint64_t klim;		/* narrow: the largest live key that fits */
	uint32_t lowbits;	/* narrow: the low part's bits */
	int wide;		/* 1: the ranks are node's, 0: node64's */
	uint32_t size;		/* leaves: a power of two >= n */
	uint32_t live;		/* cursors not ended */
	uint32_t most;		/* the cursor drained outside the tree (ntp_merge_most); UINT32_MAX: none */
	int windowed;		/* the others' records by windows (ntp_merge_most_windowed) */
	uint64_t width;		/* windowed: the window's width in ns (drain_windowed) */
	uint32_t *others;	/* windowed: the live cursors other than most */
	uint64_t *okey;		/* windowed: okey[j], the next key of cursor others[j] */
	struct other_pos *opos;	/* windowed: opos[j], where cursor others[j] is (drain_windowed) */
	/* The drain's records not yet handed to fn: each in its cursor's
	 * block, handed over before any cursor moves to its next block (which
	 * lets go of the one before, ntpfile.h) and at the drain's end. A
	 * batch lets the model keep the records that wait for their twin by
	 * reference (model.h ntp_model_ingest_refs) across the files' runs: a
	 * host's and its target's records alternate in runs of about two. */
	ntp_merge_fn fn;
	void *ctx;
	size_t nb;
	const struct ntp_record *batch[BATCH];
};

uint64_t ntp_record_last_ts(const struct ntp_record *r)
{
	uint64_t t = 0;

	for (uint32_t v = r->ts_valid & ((1u << NTP_TS_COUNT) - 1); v; v &= v - 1) {
		uint64_t x = r->ts[__builtin_ctz(v)];

		if (x > t)
			t = x;
	}
	return t;
}

static void keys_scalar(const struct ntp_record *r, size_t k, int64_t off, uint64_t *out)
{
	for (size_t j = 0; j < k; j++)
		out[j] = ntp_merge_map(ntp_record_last_ts(&r[j]), off);
}

#if defined(__x86_64__)
#include <immintrin.h>
/*
 * The same with AVX2, without a branch per timestamp: the loop over a
 * record's valid timestamps (ten or so) cost a load, a compare and a branch
 * each, and its trip count differs between a host's record and a target's,
 * which alternate in a join. Here the 24 slots are six vectors; a lane of
 * a valid slot is kept (ANDed with all ones) and an invalid one's is 0,
 * the "none" of ntp_record_last_ts; an unsigned maximum is the signed one
 * with the top bit flipped. The six lane masks are made from a record's
 * valid bits (each bit shifted to its lane's top, then spread by a compare)
 * only when they differ from the record before's: a file's records mostly
 * share one set. Slots from NTP_TS_COUNT on are masked off as the loop's
 * mask does.
 */
#define SEL(q) _mm256_xor_si256(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)&x->ts[4 * (q)]), \
						 mk[q]), flip)
#define MAX4(a, b) _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a))
#define MAX2(a, b) _mm_blendv_epi8(a, b, _mm_cmpgt_epi64(b, a))

/* The masks of lanes of valid slots (bit l of valid to the top of lane l,
 * spread by a compare) when valid differs from *last. */
__attribute__((target("avx2"), always_inline)) static inline void lane_masks(uint32_t valid, uint32_t *last,
									      __m256i mk[6])
{
	const __m256i zero = _mm256_setzero_si256(), v = _mm256_set1_epi64x(valid);

	if (valid == *last)
		return;
	*last = valid;
	mk[0] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(63, 62, 61, 60)));
	mk[1] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(59, 58, 57, 56)));
	mk[2] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(55, 54, 53, 52)));
	mk[3] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(51, 50, 49, 48)));
	mk[4] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(47, 46, 45, 44)));
	mk[5] = _mm256_cmpgt_epi64(zero, _mm256_sllv_epi64(v, _mm256_setr_epi64x(43, 42, 41, 40)));
}

/* Record x's valid times (top bit flipped, 0 for an invalid slot) folded
 * into four lanes. */
__attribute__((target("avx2"), always_inline)) static inline __m256i lanes_max(const struct ntp_record *x,
									        uint32_t *last, __m256i mk[6])
{
	const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
	uint32_t valid = x->ts_valid & ((1u << NTP_TS_COUNT) - 1);

	lane_masks(valid, last, mk);
	/* a host's record has times in slots 0-11 only, a target's in 8-23:
	 * half the vectors (a file is one side: the branch is predicted) */
	if (!(valid >> 12))
		return MAX4(MAX4(SEL(0), SEL(1)), SEL(2));
	if (!(valid & 0xff))
		return MAX4(MAX4(SEL(2), SEL(3)), MAX4(SEL(4), SEL(5)));
	return MAX4(MAX4(MAX4(SEL(0), SEL(1)), MAX4(SEL(2), SEL(3))), MAX4(SEL(4), SEL(5)));
}

__attribute__((target("avx2"))) static void keys_avx2(const struct ntp_record *r, size_t k, int64_t off,
						      uint64_t *out)
{
	const __m256i flip = _mm256_set1_epi64x(INT64_MIN), zero = _mm256_setzero_si256();
	const __m256i voff = _mm256_set1_epi64x(off);
	__m256i mk[6] = { zero, zero, zero, zero, zero, zero };
	uint32_t last = 0;	/* the masks' valid bits: none */
	size_t j = 0;

	_Static_assert(NTP_TS_SLOTS == 24, "six vectors of timestamps");
	/* Four records at a time: their four vectors' lanes folded together
	 * (pairs of lanes, then the halves), four keys mapped and stored in
	 * one vector each step: the fold's shuffles shared by four records. */
	for (; j + 4 <= k; j += 4) {
		__m256i y0 = lanes_max(&r[j], &last, mk), y1 = lanes_max(&r[j + 1], &last, mk);
		__m256i y2 = lanes_max(&r[j + 2], &last, mk), y3 = lanes_max(&r[j + 3], &last, mk);
		/* lanes: y0's 0|1, y1's 0|1, y0's 2|3, y1's 2|3 (| the maximum) */
		__m256i a = MAX4(_mm256_unpacklo_epi64(y0, y1), _mm256_unpackhi_epi64(y0, y1));
		__m256i b = MAX4(_mm256_unpacklo_epi64(y2, y3), _mm256_unpackhi_epi64(y2, y3));
		__m256i t = MAX4(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
		/* ntp_merge_map: the offset added, wrapping; below 0 is 0 */
		__m256i x = _mm256_add_epi64(_mm256_xor_si256(t, flip), voff);

		_mm256_storeu_si256((__m256i *)&out[j], _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, x), x));
	}
	for (; j < k; j++) {
		__m256i y = lanes_max(&r[j], &last, mk);
		__m128i a = MAX2(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));

		a = MAX2(a, _mm_unpackhi_epi64(a, a));
		out[j] = ntp_merge_map((uint64_t)_mm_cvtsi128_si64(a) ^ (uint64_t)INT64_MIN, off);
	}
}
#undef SEL
#undef MAX4
#undef MAX2

static int use_avx2 = -1;

static void keys_block(const struct ntp_record *r, size_t k, int64_t off, uint64_t *out)
{
	if (__atomic_load_n(&use_avx2, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&use_avx2, __builtin_cpu_supports("avx2") && !getenv("NTPROF_NO_AVX2"),
				 __ATOMIC_RELAXED);
	if (__atomic_load_n(&use_avx2, __ATOMIC_RELAXED))
		keys_avx2(r, k, off, out);
	else
		keys_scalar(r, k, off, out);
}
#else
static void keys_block(const struct ntp_record *r, size_t k, int64_t off, uint64_t *out)
{
	keys_scalar(r, k, off, out);
}
#endif

/* The largest of keys q[0..n) and pm. */
static uint64_t keys_max_scalar(const uint64_t *q, size_t n, uint64_t pm)
{
	for (size_t i = 0; i < n; i++)
		pm = q[i] > pm ? q[i] : pm;
	return pm;
}

#if defined(__x86_64__)
/* The same, four keys a step: a key is at most INT64_MAX (ntp_merge_map),
 * so the signed comparison orders them. */
__attribute__((target("avx2"))) static uint64_t keys_max_avx2(const uint64_t *q, size_t n, uint64_t pm)
{
	__m256i m = _mm256_setzero_si256();
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		__m256i x = _mm256_loadu_si256((const __m256i *)&q[i]);

		m = _mm256_blendv_epi8(m, x, _mm256_cmpgt_epi64(x, m));
	}
	if (i) {
		__m128i a = _mm256_castsi256_si128(m), b = _mm256_extracti128_si256(m, 1), h;
		uint64_t v;

		a = _mm_blendv_epi8(a, b, _mm_cmpgt_epi64(b, a));
		h = _mm_unpackhi_epi64(a, a);
		a = _mm_blendv_epi8(a, h, _mm_cmpgt_epi64(h, a));
		v = (uint64_t)_mm_cvtsi128_si64(a);
		pm = v > pm ? v : pm;
	}
	return keys_max_scalar(&q[i], n - i, pm);
}

static uint64_t keys_max(const uint64_t *q, size_t n, uint64_t pm)
{
	/* use_avx2 is set: the keys were computed (keys_block) */
	return __atomic_load_n(&use_avx2, __ATOMIC_RELAXED) > 0 ? keys_max_avx2(q, n, pm) : keys_max_scalar(q, n, pm);
}
#else
static uint64_t keys_max(const uint64_t *q, size_t n, uint64_t pm)
{
	return keys_max_scalar(q, n, pm);
}
#endif

void ntp_merge_keys(const struct ntp_record *r, size_t n, int64_t off, uint64_t *out)
{
	keys_block(r, n, off, out);
}

/* The keys of cursor cu's records from i on (at most KEY_CHUNK, within its block). */
static __attribute__((noinline)) void keys_fill(struct cursor *cu, size_t i)
{
	size_t k = cu->n - i < cu->chunk ? cu->n - i : cu->chunk;

	keys_block(&cu->recs[i], k, cu->offset, cu->key);
	cu->key[k] = 0;
	cu->kp = cu->key;
	cu->kbase = i;
	cu->kcnt = k;
}

/* The key of cursor cu's record i (in its block). */
static inline __attribute__((always_inline)) uint64_t key_at(struct cursor *cu, size_t i)
{
	if (i - cu->kbase >= cu->kcnt)
		keys_fill(cu, i);
	return cu->kp[i - cu->kbase];
}

/*
 * A windowed merge's other cursor (ntp_merge_most_windowed) takes about one
 * record a window: its block is read (and its CRC checked) long before its
 * last records are taken, out of the caches by then. Its keys are computed
 * for the whole block while the check left it in the cache, so that a
 * record's first touch is the prefetch when the one before is taken
 * (advance), not a chunk of keys (16 records' misses at once). No room for
 * a longer block's keys: chunks, as other cursors.
 */
static __attribute__((noinline)) void block_keys(struct cursor *cu)
{
	if (cu->n > cu->bcap) {
		size_t cap = cu->n;
		uint64_t *k = realloc(cu->bkeys, cap * sizeof(*k));

		if (!k)
			return;
		cu->bkeys = k;
		cu->bcap = cap;
	}
	keys_block(cu->recs, cu->n, cu->offset, cu->bkeys);
	cu->kp = cu->bkeys;
	cu->kbase = 0;
	cu->kcnt = cu->n;
}

/* Hands the batch over (see struct ntp_merge). */
static __attribute__((noinline)) void flush(struct ntp_merge *m)
{
	if (m->nb)
		m->fn(m->ctx, m->batch, m->nb);
	m->nb = 0;
}

static inline __attribute__((always_inline)) void emit(struct ntp_merge *m, const struct ntp_record *r)
{
	m->batch[m->nb++] = r;
	if (m->nb == BATCH)
		flush(m);
}

/* Moves cursor c to its next record (a new block when needed): 1, or 0 at
 * its end. Inlined, as key() is: both run once per record. */
static inline __attribute__((always_inline)) int advance(struct ntp_merge *m, uint32_t c)
{
	struct cursor *cu = &m->cur[c];

	while (++cu->i >= cu->n) {
		cu->i = (size_t)-1;
		cu->kcnt = 0;	/* the keys were of the block before */
		if (m->nb)
			flush(m);	/* the records in the block let go */
		if (ntp_reader_next_block(m->r[c], &cu->recs, &cu->n) != 1) {
			cu->n = 0;
			return 0;
		}
		/* the block's keys from its read-ahead, if it wrote them */
		cu->kp = cu->ahead ? ntp_ahead_keys(cu->ahead) : NULL;
		cu->kbase = 0;
		cu->kcnt = cu->kp ? cu->n : 0;
		if (!cu->kp && cu->whole)
			block_keys(cu);
	}
	/* The record after this one is read (its times, for its key) when
	 * this one is taken: with many files interleaved the hardware's
	 * stream prefetch does not follow each file, and that read missed
	 * the caches at every record. Its times start the record. */
	if (cu->i + 1 < cu->n)
		ntp_prefetch_record(&cu->recs[cu->i + 1]);
	return 1;
}

static inline __attribute__((always_inline)) uint64_t key(struct ntp_merge *m, uint32_t c)
{
	struct cursor *cu = &m->cur[c];

	return key_at(cu, cu->i);
}

static rank_t rank_of(uint64_t key, uint32_t c)
{
	return (rank_t)key << 64 | c;
}

static rank_t rank_ended(const struct ntp_merge *m, uint32_t c)
{
	return rank_of(UINT64_MAX, m->size + c);
}

static uint32_t cursor_of(const struct ntp_merge *m, rank_t x)
{
	return (uint32_t)x & (m->size - 1);
}

/* Replays the matches of leaf c, of new rank x (it won the last
 * tournament), up to the root. Without a branch on a match's outcome: the
 * files' records interleave at random, so a jump on "o < x" is
 * mispredicted often (docs/performance.md, "The merge"); the loser (the
 * larger rank) is written back and the winner goes on, chosen by
 * conditional moves on x86-64 and by a mask on both halves elsewhere. */
static void replay_wide(struct ntp_merge *m, uint32_t c, rank_t x)
{
	rank_t *node = m->node;
	uint64_t xh = (uint64_t)(x >> 64), xl = (uint64_t)x;

	for (uint32_t k = (m->size + c) >> 1; k; k >>= 1) {
		rank_t o = node[k];
		uint64_t oh = (uint64_t)(o >> 64), ol = (uint64_t)o, nh, nl;
#if defined(__x86_64__)
		uint64_t t;

		/* the borrow of o - x is o < x; the selects are conditional
		 * moves on it (the compiler made them a jump) */
		__asm__("cmp %[xl], %[ol]\n\t"
			"mov %[oh], %[t]\n\t"
			"sbb %[xh], %[t]\n\t"
			"mov %[oh], %[nh]\n\t"
			"mov %[ol], %[nl]\n\t"
			"cmovc %[xh], %[nh]\n\t"
			"cmovc %[xl], %[nl]\n\t"
			"cmovc %[oh], %[xh]\n\t"
			"cmovc %[ol], %[xl]"
			: [t] "=&r"(t), [nh] "=&r"(nh), [nl] "=&r"(nl), [xh] "+r"(xh), [xl] "+r"(xl)
			: [oh] "r"(oh), [ol] "r"(ol)
			: "cc");
#else
		uint64_t sel = (uint64_t)0 - (uint64_t)(o < ((rank_t)xh << 64 | xl)), th, tl;

		/* kept a mask: the compiler would make the selects a jump */
		__asm__("" : "+r"(sel));
		th = (oh ^ xh) & sel;
		tl = (ol ^ xl) & sel;
		nh = oh ^ th;
		nl = ol ^ tl;
		xh ^= th;
		xl ^= tl;
#endif
		node[k] = (rank_t)nh << 64 | nl;	/* the loser: o < x: x, else o */
	}
	node[0] = (rank_t)xh << 64 | xl;
}

/* The same with narrow ranks: the larger of the two written back, the
 * smaller carried up, by conditional moves. */
static void replay_narrow(struct ntp_merge *m, uint32_t c, uint64_t x)
{
	uint64_t *node = m->node64;
#if defined(__x86_64__)
	uint64_t k = (m->size + c) >> 1, o, n;

	/* the whole loop: the compiler made the selects a jump, and kept
	 * more than the five instructions of a level around them */
	if (k)
		__asm__("1:\n\t"
			"mov (%[node],%[k],8), %[o]\n\t"
			"mov %[o], %[n]\n\t"
			"cmp %[x], %[o]\n\t"
			"cmovb %[x], %[n]\n\t"
			"cmovb %[o], %[x]\n\t"
			"mov %[n], (%[node],%[k],8)\n\t"
			"shr %[k]\n\t"
			"jnz 1b"
			: [k] "+r"(k), [x] "+r"(x), [o] "=&r"(o), [n] "=&r"(n)
			: [node] "r"(node)
			: "cc", "memory");
#else
	for (uint32_t k = (m->size + c) >> 1; k; k >>= 1) {
		uint64_t o = node[k], n;
		uint64_t sel = (uint64_t)0 - (uint64_t)(o < x), t;

		__asm__("" : "+r"(sel));
		t = (o ^ x) & sel;
		n = o ^ t;
		x ^= t;
		node[k] = n;	/* the loser: o < x: x, else o */
	}
#endif
	node[0] = x;
}

/* The tree's ranks from narrow to wide, for good. */
static __attribute__((noinline)) void go_wide(struct ntp_merge *m)
{
	uint64_t top = UINT64_MAX >> m->lowbits, low = ((uint64_t)1 << m->lowbits) - 1;

	for (uint32_t k = 0; k < m->size; k++) {
		uint64_t key = m->node64[k] >> m->lowbits;

		m->node[k] = rank_of(key == top ? UINT64_MAX : key, (uint32_t)(m->node64[k] & low));
	}
	m->wide = 1;
}

/* The wide ranks just written to node made narrow, if every key fits. */
static void settle(struct ntp_merge *m)
{
	if (m->wide)
		return;
	for (uint32_t k = 0; k < m->size; k++) {
		uint64_t key = (uint64_t)(m->node[k] >> 64);

		if (key > m->klim && key != UINT64_MAX) {
			m->wide = 1;
			return;
		}
	}
	for (uint32_t k = 0; k < m->size; k++)
		m->node64[k] = (uint64_t)(m->node[k] >> 64) << m->lowbits | (uint64_t)m->node[k];
}

/* Leaf c's new key (UINT64_MAX: ended, low part size + c) replayed. */
static inline __attribute__((always_inline)) void replay(struct ntp_merge *m, uint32_t c, uint64_t key, uint32_t low)
{
	if (!m->wide) {
		if (key <= m->klim || key == UINT64_MAX) {
			replay_narrow(m, c, key << m->lowbits | low);
			return;
		}
		go_wide(m);
	}
	replay_wide(m, c, rank_of(key, low));
}

/* The winner's key and cursor. */
static inline __attribute__((always_inline)) uint64_t top(const struct ntp_merge *m, uint32_t *w)
{
	if (m->wide) {
		*w = cursor_of(m, m->node[0]);
		return (uint64_t)(m->node[0] >> 64);
	}
	*w = (uint32_t)m->node64[0] & (m->size - 1);
	return m->node64[0] >> m->lowbits;	/* a live cursor's: its key */
}

/* Plays the whole tournament again from the cursors' ranks, bottom up
 * (win[k]: the winner at node k, node[k] its loser), cursor out (if any)
 * ranked as ended: a replay only moves the winner's leaf. */
static void rebuild(struct ntp_merge *m, uint32_t out)
{
	rank_t *win = m->win;

	for (uint32_t c = 0; c < m->size; c++) {
		const struct cursor *cu = &m->cur[c];

		win[m->size + c] = c != out && cu->i < cu->n ? rank_of(key(m, c), c) : rank_ended(m, c);
	}
	for (uint32_t k = m->size; k-- > 1;) {
		rank_t a = win[2 * k], b = win[2 * k + 1];

		win[k] = b < a ? b : a;
		m->node[k] = b < a ? a : b;
	}
	m->node[0] = win[1];
	settle(m);
}

struct ntp_merge *ntp_merge_new(struct ntp_reader **r, size_t n, const int64_t *offset)
{
	struct ntp_merge *m = calloc(1, sizeof(*m));

	if (!m || n >= UINT32_MAX / 4)
		goto fail;
	m->r = r;
	m->most = UINT32_MAX;
	m->size = 1;
	while (m->size < n)
		m->size *= 2;
	/* size + cursor < 2 * size */
	m->lowbits = (uint32_t)__builtin_ctz(m->size) + 1;
	m->klim = (UINT64_MAX >> m->lowbits) - 1;
	m->cur = calloc(m->size, sizeof(*m->cur));
	m->node = calloc(m->size, sizeof(*m->node));
	m->node64 = calloc(m->size, sizeof(*m->node64));
	m->win = calloc(2 * (size_t)m->size, sizeof(*m->win));
	m->others = calloc(m->size, sizeof(*m->others));
	m->okey = calloc(m->size, sizeof(*m->okey));
	m->opos = calloc(m->size, sizeof(*m->opos));
	m->width = 4096;
	if (!m->cur || !m->node || !m->node64 || !m->win || !m->others || !m->okey || !m->opos)
		goto fail;
	for (uint32_t c = 0; c < n; c++) {
		m->cur[c].offset = offset ? offset[c] : 0;
		m->cur[c].chunk = n > 2 ? KEY_CHUNK_MANY : KEY_CHUNK;
		m->cur[c].i = (size_t)-1;
		/* a reader read ahead: its thread computes the keys */
		m->cur[c].ahead = ntp_reader_ahead(r[c]);
		if (m->cur[c].ahead)
			ntp_ahead_want_keys(m->cur[c].ahead, ntp_merge_keys, m->cur[c].offset);
		m->live += advance(m, c);
	}
	rebuild(m, UINT32_MAX);
	return m;
fail:
	ntp_merge_free(m);
	return NULL;
}

void ntp_merge_free(struct ntp_merge *m)
{
	if (!m)
		return;
	for (uint32_t c = 0; m->cur && c < m->size; c++)
		free(m->cur[c].bkeys);
	free(m->cur);
	free(m->node);
	free(m->node64);
	free(m->win);
	free(m->others);
	free(m->okey);
	free(m->opos);
	free(m);
}

/* Cursor w, whose record was taken, moves on and takes its new place in the
 * tree (or leaves it, ended). */
static inline __attribute__((always_inline)) void step(struct ntp_merge *m, uint32_t w)
{
	if (advance(m, w)) {
		replay(m, w, key(m, w), w);
	} else {
		replay(m, w, UINT64_MAX, m->size + w);
		m->live--;
	}
}

int ntp_merge_peek(struct ntp_merge *m, const struct ntp_record **rec, size_t *from, uint64_t *t)
{
	const struct cursor *cu;
	uint32_t w;
	uint64_t k;

	if (!m->live)
		return 0;
	k = top(m, &w);
	cu = &m->cur[w];
	*rec = &cu->recs[cu->i];
	*from = w;
	if (t)
		*t = k;
	return 1;
}

void ntp_merge_most(struct ntp_merge *m, size_t i)
{
	m->most = i < m->size ? (uint32_t)i : UINT32_MAX;
	m->windowed = 0;
}

void ntp_merge_most_windowed(struct ntp_merge *m, size_t i)
{
	ntp_merge_most(m, i);
	m->windowed = m->most != UINT32_MAX;
	if (!m->windowed)
		return;
	m->cur[m->most].chunk = KEY_CHUNK;	/* its records are taken in runs */
	for (uint32_t c = 0; c < m->size; c++)
		m->cur[c].whole = c != m->most && !m->cur[c].ahead;
}

/*
 * Two files, both live: no tree, the two cursors' keys compared (ties to
 * cursor 0, as the ranks order them). The tree's two ranks are written
 * back at the end.
 *
 * The records are taken in stretches (stretch below) whose loop checks
 * only one thing per record besides the batch's room: the winning key
 * less one against until less one, which stops at a key past until and
 * at a key of 0. A cursor's own chunk of keys ends with a 0 (keys_fill),
 * which wins against any key: the stretch stops there, before a cursor
 * passes the end of its keys. Keys from a read-ahead (a whole block's,
 * without that mark) bound the stretch by how many are left. After a
 * stretch the cause is found: the batch full, a cursor at the end of its
 * keys (its next chunk or block), a key past until (the end), or a real
 * key of 0 (taken alone).
 */
struct side {
	const struct ntp_record *p;	/* the cursor's next record */
	const uint64_t *kp, *kend;	/* its key, the end of its keys */
};

/* Takes records into out, up to stop, while the winning key k has k - 1 <=
 * lim1: the winner chosen and its key and record pointers stepped by
 * masks, not a jump on which cursor won (the files' records interleave at
 * random, docs/performance.md, "The merge"). Returns the new end of out. */
static inline __attribute__((always_inline)) const struct ntp_record **
stretch(const struct ntp_record **out, const struct ntp_record **stop, struct side *s0, struct side *s1,
	uint64_t lim1)
{
	const struct ntp_record *p0 = s0->p, *p1 = s1->p;
	const uint64_t *k0p = s0->kp, *k1p = s1->kp;

	if (out >= stop)
		return out;
#if defined(__x86_64__)
	{
		uint64_t k0, k1, mw;
		const struct ntp_record *t;

		/* CF of k1 - k0 (cursor 1 wins) selects the key and the record
		 * and makes mw all ones; the record is written before the test
		 * and counted after it */
		__asm__("1:\n\t"
			"mov (%[k0p]), %[k0]\n\t"
			"mov (%[k1p]), %[k1]\n\t"
			"mov %[p0], %[t]\n\t"
			"cmp %[k0], %[k1]\n\t"
			"cmovb %[k1], %[k0]\n\t"
			"cmovb %[p1], %[t]\n\t"
			"sbb %[mw], %[mw]\n\t"
			"mov %[t], (%[out])\n\t"
			"sub $1, %[k0]\n\t"
			"cmp %[lim1], %[k0]\n\t"
			"ja 2f\n\t"
			"add $8, %[out]\n\t"
			"lea 8(%[k0p],%[mw],8), %[k0p]\n\t"
			"mov %[mw], %[k1]\n\t"
			"and $8, %[k1]\n\t"
			"add %[k1], %[k1p]\n\t"
			"and %[rsz], %[mw]\n\t"
			"add %[mw], %[p1]\n\t"
			"sub %[mw], %[p0]\n\t"
			"add %[rsz], %[p0]\n\t"
			"cmp %[stop], %[out]\n\t"
			"jb 1b\n"
			"2:"
			: [out] "+r"(out), [k0p] "+r"(k0p), [k1p] "+r"(k1p), [p0] "+r"(p0), [p1] "+r"(p1),
			  [k0] "=&r"(k0), [k1] "=&r"(k1), [mw] "=&r"(mw), [t] "=&r"(t)
			: [stop] "r"(stop), [lim1] "r"(lim1), [rsz] "i"(sizeof(*p0))
			: "cc", "memory");
	}
#else
	do {
		uint64_t k0 = *k0p, k1 = *k1p, w = k1 < k0, mw = (uint64_t)0 - w;
		uint64_t k = w ? k1 : k0;

		if (k - 1 > lim1)
			break;
		/* kept a mask: the compiler would make the selects a jump */
		__asm__("" : "+r"(mw));
		*out++ = (const struct ntp_record *)(((uintptr_t)p0 & ~mw) | ((uintptr_t)p1 & mw));
		k0p += 1 - w;
		k1p += w;
		p0 = (const struct ntp_record *)((const char *)p0 + (sizeof(*p0) & ~mw));
		p1 = (const struct ntp_record *)((const char *)p1 + (sizeof(*p1) & mw));
	} while (out < stop);
#endif
	s0->p = p0;
	s1->p = p1;
	s0->kp = k0p;
	s1->kp = k1p;
	return out;
}

/* Cursor c's side, its key computed (key() was called). */
static inline __attribute__((always_inline)) void side_load(struct side *s, const struct cursor *cu)
{
	s->p = &cu->recs[cu->i];
	s->kp = &cu->kp[cu->i - cu->kbase];
	s->kend = &cu->kp[cu->kcnt];
}

static size_t drain2(struct ntp_merge *m, uint64_t until, size_t primary, uint64_t *pmax)
{
	const struct ntp_record **b = m->batch;
	uint64_t pm = *pmax;
	size_t fed = 0, nb = m->nb;
	struct side sd[2];
	uint32_t ended = 0;	/* bit c: cursor c ended */

	for (uint32_t c = 0; c < 2; c++) {
		(void)key(m, c);
		side_load(&sd[c], &m->cur[c]);
	}
	for (;;) {
		size_t room = until ? BATCH - nb : 0;	/* until 0: every key stops a stretch */
		const uint64_t *pstart = primary < 2 ? sd[primary].kp : NULL;
		const struct ntp_record **out;
		uint32_t w;
		uint64_t k;

		/* keys without the end's mark (a read-ahead's, not the cursor's
		 * own key[]) bound the stretch */
		for (uint32_t c = 0; c < 2; c++)
			if (m->cur[c].kp != m->cur[c].key && (size_t)(sd[c].kend - sd[c].kp) < room)
				room = (size_t)(sd[c].kend - sd[c].kp);
		out = stretch(b + nb, b + nb + room, &sd[0], &sd[1], until - 1);
		fed += (size_t)(out - (b + nb));
		nb = (size_t)(out - b);
		if (pstart)
			pm = keys_max(pstart, (size_t)(sd[primary].kp - pstart), pm);
		if (nb == BATCH) {
			m->nb = nb;
			flush(m);
			nb = 0;
		}
		/* a cursor at the end of its keys: its next keys, or its next
		 * block (advance() hands the batch over first) */
		w = 2;
		for (uint32_t c = 0; c < 2; c++) {
			struct cursor *cu = &m->cur[c];

			if (sd[c].kp < sd[c].kend)
				continue;
			w = c;
			cu->i = (size_t)(sd[c].p - cu->recs);
			if (cu->i >= cu->n) {
				cu->i--;
				m->nb = nb;
				if (!advance(m, c)) {
					nb = m->nb;
					ended |= 1u << c;
					continue;
				}
				nb = m->nb;
			}
			(void)key(m, c);
			side_load(&sd[c], cu);
		}
		if (ended) {
			m->live -= (uint32_t)__builtin_popcount(ended);
			break;
		}
		if (w < 2)
			continue;
		/* both within their keys: the winner's key is past until, or 0 */
		w = *sd[1].kp < *sd[0].kp;
		k = *sd[w].kp;
		if (k > until)
			break;
		/* taken alone: a key of 0 (or any, when until is 0) */
		b[nb++] = sd[w].p;
		fed++;
		pm = w == primary && k > pm ? k : pm;
		sd[w].p++;
		sd[w].kp++;
		if (nb == BATCH) {
			m->nb = nb;
			flush(m);
			nb = 0;
		}
	}
	/* the cursors where the records taken leave them (an ended one stays
	 * ended), and the tree as replays leave it: the winner's rank at 0,
	 * the loser's at 1 */
	{
		rank_t rk[2];

		for (uint32_t c = 0; c < 2; c++) {
			struct cursor *cu = &m->cur[c];

			if (ended >> c & 1) {
				rk[c] = rank_ended(m, c);
				continue;
			}
			cu->i = (size_t)(sd[c].p - cu->recs);
			rk[c] = rank_of(*sd[c].kp, c);
		}
		m->node[0] = rk[0] < rk[1] ? rk[0] : rk[1];
		m->node[1] = rk[0] < rk[1] ? rk[1] : rk[0];
		settle(m);
	}
	m->nb = nb;
	*pmax = pm;
	return fed;
}

/*
 * One cursor (ntp_merge_most: a target's file beside its hosts', about half
 * of the records) kept out of the tree: its next record against the tree's
 * winner, one comparison of ranks, and its records taken without a replay
 * (a replay is a comparison per level, six for 64 files). The order is the
 * tree's: the smaller rank first. The tree is played again without the
 * cursor at the start and with it at the end (a replay moves only the
 * winner's leaf): twice the tree's size per drain, once for a report.
 */
static size_t drain_most(struct ntp_merge *m, uint64_t until, size_t primary, uint64_t *pmax)
{
	uint32_t o = m->most;
	struct cursor *co = &m->cur[o];
	uint64_t ko, rko = 0, pm = *pmax;
	size_t fed = 0;
	int live = 1;

	rebuild(m, o);
	/* o's key, and its narrow rank while the tree's are narrow */
#define KO_SET(v)                                      \
	do {                                           \
		ko = (v);                              \
		if (!m->wide && ko > m->klim)          \
			go_wide(m);                    \
		rko = ko << m->lowbits | o;            \
	} while (0)
	KO_SET(key(m, o));
	for (;;) {
		struct cursor *cu;
		uint32_t w;
		uint64_t k;

		if (m->wide ? rank_of(ko, o) < m->node[0] : rko < m->node64[0]) {
			if (ko > until)
				break;
			emit(m, &co->recs[co->i]);
			fed++;
			pm = o == primary && ko > pm ? ko : pm;
			if (++co->i < co->n) {
				KO_SET(key_at(co, co->i));
				continue;
			}
			co->i--;
			if (advance(m, o)) {
				KO_SET(key(m, o));
				continue;
			}
			live = 0;
			m->live--;
			break;
		}
		/* the tree's winner is a live cursor: an ended one ranks after o */
		k = top(m, &w);
		if (k > until)
			break;
		cu = &m->cur[w];
		emit(m, &cu->recs[cu->i]);
		fed++;
		pm = w == primary && k > pm ? k : pm;
		step(m, w);
	}
#undef KO_SET
	if (live)
		rebuild(m, UINT32_MAX);
	*pmax = pm;
	return fed;
}

/*
 * drain_windowed's stretch: records r[0..) into the batch while their keys
 * kp[0..) are <= w (kp[0] is), at most avail of them and as many as the
 * batch has room for, in a loop that keeps the batch's count in a register
 * (emit() stored it back and read it again at every record: a hand-over
 * may follow any); the primary file's largest key once a stretch, as
 * drain2 takes it; the batch handed over when full. prefetch: each record
 * taken prefetches the one after the next (a file met among many,
 * advance's prefetch; past the block's end, a prefetch that does not
 * fault). Returns how many were taken.
 */
static inline __attribute__((always_inline)) size_t take_stretch(struct ntp_merge *m, const struct ntp_record *r,
								  const uint64_t *kp, size_t avail, uint64_t w,
								  int primary, uint64_t *pm, int prefetch)
{
	const struct ntp_record **b = &m->batch[m->nb];
	size_t lim = avail < BATCH - m->nb ? avail : BATCH - m->nb, t = 0;

	do {
		b[t] = r + t;
		if (++t == lim)
			break;
		if (prefetch)
			ntp_prefetch_record(r + t + 1);
	} while (kp[t] <= w);
	if (primary)
		*pm = keys_max(kp, t, *pm);
	m->nb += t;
	if (m->nb == BATCH)
		flush(m);
	return t;
}

/* Cursor cu's position (struct other_pos), once it has a record and its key. */
static inline __attribute__((always_inline)) void other_load(struct other_pos *op, const struct cursor *cu)
{
	op->rec = &cu->recs[cu->i];
	op->end = cu->recs + cu->n;
	op->kp = cu->kp && !cu->kbase && cu->kcnt == cu->n ? &cu->kp[cu->i] : NULL;
}

/* The cursors' indexes from their positions, which drain_windowed moved. */
static void others_sync(struct ntp_merge *m, uint32_t nl)
{
	for (uint32_t j = 0; j < nl; j++) {
		struct cursor *cu = &m->cur[m->others[j]];

		if (m->opos[j].kp)
			cu->i = (size_t)(m->opos[j].rec - cu->recs);
	}
}

/*
 * ntp_merge_most_windowed's drain: windows of keys [lo, lo + width], lo the
 * smallest next key of every live cursor (so two records of one window are
 * at most width apart, and an idle stretch is skipped), up to until; in
 * each, the most cursor's records, then each other cursor's, without a
 * replay of the tree (a host's record cost one, six comparisons for 64
 * files, and its cursor's next key was a miss of the caches behind the
 * replay's chain of loads); the tree is played again at the end. The most
 * cursor ended, the others' records from that window on are left to the
 * tree (ntp_merge_drain's loop): few, at the recording's end.
 */
static size_t drain_windowed(struct ntp_merge *m, uint64_t until, size_t primary, uint64_t *pmax)
{
	uint32_t o = m->most, nl = 0, *others = m->others;
	struct cursor *co = &m->cur[o];
	uint64_t pm = *pmax, ko = key(m, o), lo = ko, *okey = m->okey;
	struct other_pos *opos = m->opos;
	size_t fed = 0;

	for (uint32_t c = 0; c < m->size; c++) {
		if (c == o || m->cur[c].i >= m->cur[c].n)
			continue;
		others[nl] = c;
		okey[nl] = key(m, c);
		other_load(&opos[nl], &m->cur[c]);
		lo = okey[nl] < lo ? okey[nl] : lo;
		nl++;
	}
	while (lo <= until) {
		uint64_t w = lo + m->width, next = UINT64_MAX;
		size_t took = 0;

		w = w < until ? w : until;
		/* the most cursor's records of the window, a stretch of its
		 * keys at hand at a time */
		while (ko <= w) {
			size_t i = co->i, t = take_stretch(m, &co->recs[i], &co->kp[i - co->kbase],
							   co->kbase + co->kcnt - i, w, o == primary, &pm, 0);

			took += t;
			i += t;
			if (i < co->n) {
				co->i = i;
				ko = key_at(co, i);
				continue;
			}
			co->i = i - 1;
			if (!advance(m, o)) {
				m->live--;
				ko = UINT64_MAX;
				break;
			}
			ko = key(m, o);
		}
		fed += took;
		/* most of them have no record in a window: their next keys
		 * side by side, their positions too, the cursors touched only
		 * at a block's end */
		for (uint32_t j = 0; j < nl;) {
			uint32_t c = others[j];
			uint64_t k = okey[j];

			if (k > w) {
				next = k < next ? k : next;
				j++;
				continue;
			}
			while (k <= w) {
				struct other_pos *op = &opos[j];
				struct cursor *cu = &m->cur[c];

				if (op->kp) {
					/* within the block, by its position alone */
					const struct ntp_record *r = op->rec;
					const uint64_t *kp = op->kp;
					size_t t = take_stretch(m, r, kp, (size_t)(op->end - r), w, c == primary, &pm, 1);

					fed += t;
					r += t;
					kp += t;
					if (r < op->end) {	/* it waits at r, or the batch was full */
						op->rec = r;
						op->kp = kp;
						k = *kp;
						continue;
					}
					cu->i = cu->n - 1;	/* its block's last record taken */
				} else {
					emit(m, &cu->recs[cu->i]);
					fed++;
					pm = c == primary && k > pm ? k : pm;
				}
				if (!advance(m, c))
					break;	/* ended: k, its last key, still <= w */
				k = key(m, c);
				other_load(op, cu);
			}
			if (k > w) {
				next = k < next ? k : next;
				okey[j++] = k;
			} else {
				nl--;		/* ended */
				others[j] = others[nl];
				okey[j] = okey[nl];
				opos[j] = opos[nl];
				m->live--;
			}
		}
		/* the batch handed over where a window ends, when it is half
		 * full: the most cursor's records of a window wait for the
		 * others' (a host's for its target's twin), and a record still
		 * waiting when its batch ends is copied (model.h) */
		if (m->nb >= BATCH / 2)
			flush(m);
		if (ko == UINT64_MAX)
			break;		/* the most cursor ended: the tree takes the rest */
		if (took < WINDOW_RECORDS / 2 && m->width < NTP_MERGE_WINDOW_MAX)
			m->width *= 2;
		else if (took > 2 * WINDOW_RECORDS && m->width > 1)
			m->width /= 2;
		lo = ko < next ? ko : next;	/* keys are at most INT64_MAX: no wrap above */
	}
	others_sync(m, nl);
	rebuild(m, UINT32_MAX);
	*pmax = pm;
	return fed;
}

size_t ntp_merge_drain(struct ntp_merge *m, uint64_t until, ntp_merge_fn fn, void *ctx, size_t primary,
		       uint64_t *primary_max)
{
	size_t fed = 0;
	uint64_t pm = *primary_max;

	m->fn = fn;
	m->ctx = ctx;
	if (m->size == 2 && m->live == 2)
		fed = drain2(m, until, primary, &pm);
	else if (m->most != UINT32_MAX && m->cur[m->most].i < m->cur[m->most].n)
		fed = m->windowed ? drain_windowed(m, until, primary, &pm) : drain_most(m, until, primary, &pm);
	while (m->live) {
		uint32_t w;
		uint64_t k = top(m, &w);
		struct cursor *cu = &m->cur[w];

		if (k > until)
			break;
		emit(m, &cu->recs[cu->i]);
		fed++;
		pm = w == primary && k > pm ? k : pm;
		step(m, w);
	}
	flush(m);
	*primary_max = pm;
	return fed;
}

const struct ntp_record *ntp_merge_current(const struct ntp_merge *m, size_t i)
{
	const struct cursor *cu = &m->cur[i];

	if (cu->i >= cu->n)
		return NULL;	/* ended */
	return &cu->recs[cu->i];
}
