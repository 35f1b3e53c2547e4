// SPDX-License-Identifier: GPL-2.0
/* merge.c - k-way merge of recordings by record time through a heap (merge.h). */
#include <stdlib.h>
#include "merge.h"

struct cursor {
	const struct ntp_record *recs;
	size_t n, i;
	int64_t offset;
};

struct item {
	uint64_t t;		/* key of the cursor's current record */
	uint32_t c;		/* cursor (reader) number: breaks ties */
};

struct ntp_merge {
	struct ntp_reader **r;
	struct cursor *cur;
	struct item *heap;
	size_t n;		/* items in the heap: readers not ended */
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

static int before(const struct item *a, const struct item *b)
{
	return a->t < b->t || (a->t == b->t && a->c < b->c);
}

static void sift_down(struct ntp_merge *m, size_t i)
{
	struct item x = m->heap[i];

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= m->n)
			break;
		if (k + 1 < m->n && before(&m->heap[k + 1], &m->heap[k]))
			k++;
		if (!before(&m->heap[k], &x))
			break;
		m->heap[i] = m->heap[k];
		i = k;
	}
	m->heap[i] = x;
}

/* Moves cursor c to its next record (a new block when needed): 1, or 0 at its end. */
static int advance(struct ntp_merge *m, uint32_t c)
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

static uint64_t key(const struct ntp_merge *m, uint32_t c)
{
	const struct cursor *cu = &m->cur[c];
	int64_t x = (int64_t)(ntp_record_last_ts(&cu->recs[cu->i]) + (uint64_t)cu->offset);	/* wraps, as mapped() in pump_files.c */

	return x < 0 ? 0 : (uint64_t)x;
}

struct ntp_merge *ntp_merge_new(struct ntp_reader **r, size_t n, const int64_t *offset)
{
	struct ntp_merge *m = calloc(1, sizeof(*m));

	if (!m || n >= UINT32_MAX)
		goto fail;
	m->r = r;
	m->last = UINT32_MAX;
	m->cur = calloc(n ? n : 1, sizeof(*m->cur));
	m->heap = calloc(n ? n : 1, sizeof(*m->heap));
	if (!m->cur || !m->heap)
		goto fail;
	for (uint32_t c = 0; c < n; c++) {
		m->cur[c].offset = offset ? offset[c] : 0;
		m->cur[c].i = (size_t)-1;
		if (advance(m, c))
			m->heap[m->n++] = (struct item){ key(m, c), c };
	}
	for (size_t i = m->n / 2; i-- > 0;)
		sift_down(m, i);
	return m;
fail:
	ntp_merge_free(m);
	return NULL;
}

void ntp_merge_free(struct ntp_merge *m)
{
	if (!m)
		return;
	free(m->cur);
	free(m->heap);
	free(m);
}

int ntp_merge_peek(struct ntp_merge *m, const struct ntp_record **rec, size_t *from, uint64_t *t)
{
	const struct cursor *cu;

	/* The cursor popped last moves on now, not then: its record stayed
	 * valid (in its reader's block) until this call. */
	if (m->last != UINT32_MAX) {
		if (advance(m, m->last))
			m->heap[0].t = key(m, m->last);
		else
			m->heap[0] = m->heap[--m->n];
		if (m->n)
			sift_down(m, 0);
		m->last = UINT32_MAX;
	}
	if (!m->n)
		return 0;
	cu = &m->cur[m->heap[0].c];
	*rec = &cu->recs[cu->i];
	*from = m->heap[0].c;
	if (t)
		*t = m->heap[0].t;
	return 1;
}

void ntp_merge_pop(struct ntp_merge *m)
{
	if (m->n)
		m->last = m->heap[0].c;
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
