// SPDX-License-Identifier: GPL-2.0
/* merge.c - k-way merge of recordings by record time through a loser tree (merge.h). */
#include <stdlib.h>
#include "merge.h"

struct cursor {
	const struct ntp_record *recs;
	size_t n, i;
	int64_t offset;
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
 */
typedef unsigned __int128 rank_t;

struct ntp_merge {
	struct ntp_reader **r;
	struct cursor *cur;
	rank_t *node;		/* the losers' ranks; node[0]: the winner's */
	uint32_t size;		/* leaves: a power of two >= n */
	uint32_t live;		/* cursors not ended */
	uint32_t last;		/* cursor of the record popped last, to move on; UINT32_MAX: none */
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

/* Moves cursor c to its next record (a new block when needed): 1, or 0 at
 * its end. Inlined, as key() is: both run once per record. */
static inline __attribute__((always_inline)) int advance(struct ntp_merge *m, uint32_t c)
{
	struct cursor *cu = &m->cur[c];

	while (++cu->i >= cu->n) {
		cu->i = (size_t)-1;
		if (ntp_reader_next_block(m->r[c], &cu->recs, &cu->n) != 1) {
			cu->n = 0;
			return 0;
		}
	}
	/* The record after this one is read (its times, for its key) when
	 * this one is taken: with many files interleaved the hardware's
	 * stream prefetch does not follow each file, and that read missed
	 * the caches at every record. Its times start the record. */
	if (cu->i + 1 < cu->n) {
		const char *nx = (const char *)&cu->recs[cu->i + 1];

		__builtin_prefetch(nx);
		__builtin_prefetch(nx + 64);
		__builtin_prefetch(nx + 128);
		__builtin_prefetch(nx + 192);
		__builtin_prefetch(nx + 256);
	}
	return 1;
}

static inline __attribute__((always_inline)) uint64_t key(const struct ntp_merge *m, uint32_t c)
{
	const struct cursor *cu = &m->cur[c];
	int64_t x = (int64_t)(ntp_record_last_ts(&cu->recs[cu->i]) + (uint64_t)cu->offset);	/* wraps, as mapped() in pump_files.c */

	return x < 0 ? 0 : (uint64_t)x;
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
 * tournament), up to the root. */
static void replay(struct ntp_merge *m, uint32_t c, rank_t x)
{
	rank_t *node = m->node;

	for (uint32_t k = (m->size + c) >> 1; k; k >>= 1) {
		rank_t o = node[k];

		if (o < x) {
			node[k] = x;
			x = o;
		}
	}
	node[0] = x;
}

struct ntp_merge *ntp_merge_new(struct ntp_reader **r, size_t n, const int64_t *offset)
{
	struct ntp_merge *m = calloc(1, sizeof(*m));
	rank_t *win = NULL;

	if (!m || n >= UINT32_MAX / 4)
		goto fail;
	m->r = r;
	m->last = UINT32_MAX;
	m->size = 1;
	while (m->size < n)
		m->size *= 2;
	m->cur = calloc(m->size, sizeof(*m->cur));
	m->node = calloc(m->size, sizeof(*m->node));
	win = calloc(2 * (size_t)m->size, sizeof(*win));
	if (!m->cur || !m->node || !win)
		goto fail;
	/* the first tournament, bottom up: win[k] won at node k, node[k] lost */
	for (uint32_t c = 0; c < m->size; c++) {
		win[m->size + c] = rank_ended(m, c);
		if (c >= n)
			continue;
		m->cur[c].offset = offset ? offset[c] : 0;
		m->cur[c].i = (size_t)-1;
		if (advance(m, c)) {
			win[m->size + c] = rank_of(key(m, c), c);
			m->live++;
		}
	}
	for (uint32_t k = m->size; k-- > 1;) {
		rank_t a = win[2 * k], b = win[2 * k + 1];

		win[k] = b < a ? b : a;
		m->node[k] = b < a ? a : b;
	}
	m->node[0] = win[1];
	free(win);
	return m;
fail:
	free(win);
	ntp_merge_free(m);
	return NULL;
}

void ntp_merge_free(struct ntp_merge *m)
{
	if (!m)
		return;
	free(m->cur);
	free(m->node);
	free(m);
}

int ntp_merge_peek(struct ntp_merge *m, const struct ntp_record **rec, size_t *from, uint64_t *t)
{
	const struct cursor *cu;
	uint32_t w;

	/* The cursor popped last moves on now, not then: its record stayed
	 * valid (in its reader's block) until this call. */
	if (m->last != UINT32_MAX) {
		w = m->last;
		if (advance(m, w)) {
			replay(m, w, rank_of(key(m, w), w));
		} else {
			replay(m, w, rank_ended(m, w));
			m->live--;
		}
		m->last = UINT32_MAX;
	}
	if (!m->live)
		return 0;
	w = cursor_of(m, m->node[0]);
	cu = &m->cur[w];
	*rec = &cu->recs[cu->i];
	*from = w;
	if (t)
		*t = (uint64_t)(m->node[0] >> 64);
	return 1;
}

void ntp_merge_pop(struct ntp_merge *m)
{
	if (m->live)
		m->last = cursor_of(m, m->node[0]);
}

int ntp_merge_next(struct ntp_merge *m, const struct ntp_record **rec, size_t *from, uint64_t *t)
{
	if (!ntp_merge_peek(m, rec, from, t))
		return 0;
	ntp_merge_pop(m);
	return 1;
}

const struct ntp_record *ntp_merge_current(const struct ntp_merge *m, size_t i)
{
	const struct cursor *cu = &m->cur[i];

	if (cu->i >= cu->n)
		return NULL;	/* ended (or, popped last, moving on at the next peek) */
	return &cu->recs[cu->i];
}
