// SPDX-License-Identifier: GPL-2.0
/* pending.c - bounded per-key FIFOs of records waiting for their twin
 * (see pending.h); the structure and the common put and take are in
 * pending_int.h, inlined in model.c's block loop too. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pending_int.h"

#define BUCKETS_MIN 64

/* Two records pending per bucket on average, until the table has bmax buckets. */
static void grow_limit(struct ntp_pend *p)
{
	p->grow_at = p->bmask + 1 < p->bmax ? 2 * (size_t)(p->bmask + 1) : SIZE_MAX;
}

struct ntp_pend *ntp_pend_new(uint32_t capacity)
{
	struct ntp_pend *p = calloc(1, sizeof(*p));
	uint32_t cap = 16;

	if (!p)
		return NULL;
	while (cap < capacity && cap < (1u << 24))
		cap <<= 1;
	p->cap = cap;
	p->bmax = cap / 2;
	p->bmask = (p->bmax < BUCKETS_MIN ? p->bmax : BUCKETS_MIN) - 1;
	p->rmask = (cap < NTP_PEND_RING_MIN ? cap : NTP_PEND_RING_MIN) - 1;
	p->seq = p->settled = cap;	/* NTP_PEND_FREE */
	/* all cap slots and copies, resident only as the ring reaches them */
	p->slots = calloc(cap, sizeof(*p->slots));
	p->recs = calloc(cap, sizeof(*p->recs));
	p->rfree = malloc(cap * sizeof(*p->rfree));
	p->bk = malloc((p->bmask + 1) * sizeof(*p->bk));
	if (!p->slots || !p->recs || !p->rfree || !p->bk) {
		ntp_pend_free(p);
		return NULL;
	}
	for (uint32_t i = 0; i <= p->rmask; i++)
		p->rfree[i] = (int32_t)(p->rmask - i);
	p->nrfree = p->rmask + 1;
	grow_limit(p);
	memset(p->bk, 0xff, (p->bmask + 1) * sizeof(*p->bk));
	return p;
}

void ntp_pend_free(struct ntp_pend *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->recs);
	free(p->rfree);
	free(p->bk);
	free(p);
}

int ntp_same_command(const struct ntp_record *a, const struct ntp_record *b)
{
	return a->cntlid == b->cntlid && a->qid == b->qid && a->cid == b->cid &&
	       a->opcode == b->opcode && a->nsid == b->nsid && a->slba == b->slba &&
	       a->len == b->len;
}

static void unlink_any(struct ntp_pend *p, int32_t i)
{
	uint32_t b = ntp_pend_bucket_of(p, p->slots[i].key);
	int32_t prev = -1, j;

	for (j = p->bk[b].head; j >= 0 && j != i; prev = j, j = p->slots[j].next)
		;
	if (j >= 0)
		ntp_pend_unlink(p, b, prev, i);
}

/* ntp_pend_take when an older record of r's key waits before its match
 * (a twin lost): found again, the older ones dropped. Out of line: the
 * common take is the first record of its key. */
__attribute__((noinline)) const struct ntp_record *ntp_pend_take_past_older(struct ntp_pend *p,
									     const struct ntp_record *r,
									     uint64_t key, uint32_t b,
									     uint64_t *dropped)
{
	int32_t prev = -1, i, older[64];
	unsigned n_older = 0;

	for (i = p->bk[b].head; i >= 0; prev = i, i = p->slots[i].next) {
		if (p->slots[i].key != key)
			continue;
		if (ntp_same_command(p->slots[i].rec, r))
			break;
		if (n_older < 64)
			older[n_older++] = i;
	}
	if (i < 0)
		return NULL;
	ntp_pend_unlink(p, b, prev, i);
	/* Older pending records of this key can no longer match: drop them. */
	for (unsigned k = 0; k < n_older; k++) {
		unlink_any(p, older[k]);
		(*dropped)++;
	}
	/* The slot is free but untouched until the next put. */
	return p->slots[i].rec;
}

/* ntp_pend_take with records pending. Apart, so that a take from an empty
 * structure (one side of a stream finds the other's record waiting and
 * waits for nothing itself, below) is a test and a return, without the
 * saving of registers this part needs. */
static __attribute__((noinline)) const struct ntp_record *take_some(struct ntp_pend *p,
								     const struct ntp_record *r,
								     uint64_t *dropped)
{
	return ntp_pend_take_key(p, r, ntp_pend_key(r), dropped);
}

const struct ntp_record *ntp_pend_take(struct ntp_pend *p, const struct ntp_record *r,
				       uint64_t *dropped)
{
	return p->count ? take_some(p, r, dropped) : NULL;
}

/* Drops every pending record of key (its own side's older records, once a
 * record of it matched: their twins can no longer come); called only with
 * records pending (one side of a stream mostly finds the other's record
 * waiting and waits for nothing itself). Returns how many. */
__attribute__((noinline)) uint64_t ntp_pend_drop_key_some(struct ntp_pend *p, uint64_t key)
{
	uint32_t b = ntp_pend_bucket_of(p, key);
	int32_t prev = -1, i;
	uint64_t n = 0;

	for (i = p->bk[b].head; i >= 0;) {
		int32_t next = p->slots[i].next;

		if (p->slots[i].key == key) {
			ntp_pend_unlink(p, b, prev, i);
			n++;
		} else {
			prev = i;
		}
		i = next;
	}
	return n;
}

/* Links every pending slot into the bucket table, emptied first, in
 * arrival order: each key's records stay in theirs. */
static void relink(struct ntp_pend *p)
{
	struct ntp_pend_bucket *bk = p->bk;
	const uint64_t ring = p->rmask + 1;

	memset(bk, 0xff, (p->bmask + 1) * sizeof(*bk));
	/* the pending records arrived within the last ring arrivals, each in
	 * the slot of its arrival number: in arrival order */
	for (uint64_t a = p->seq - ring; a < p->seq; a++) {
		int32_t i = (int32_t)(a & p->rmask);
		uint32_t b;

		if (p->slots[i].due != a + p->cap)
			continue;	/* taken, dropped or evicted */
		b = ntp_pend_bucket_of(p, p->slots[i].key);

		p->slots[i].next = -1;
		if (bk[b].tail < 0)
			bk[b].head = i;
		else
			p->slots[bk[b].tail].next = i;
		bk[b].tail = i;
	}
}

/* A table of twice the buckets per record pending (up to cap / 2). */
__attribute__((noinline)) void ntp_pend_grow(struct ntp_pend *p)
{
	uint32_t n = (p->bmask + 1) * 4;
	struct ntp_pend_bucket *bk;

	if (n > p->bmax)
		n = p->bmax;
	bk = malloc(n * sizeof(*bk));
	if (!bk)
		return;		/* longer chains, the same order */
	free(p->bk);
	p->bk = bk;
	p->bmask = n - 1;
	grow_limit(p);
	relink(p);
}

/* The ring of slots doubles (its size below cap): each pending record, of
 * the last ring arrivals, moves to the slot of its arrival number in the
 * larger ring, one of the new half (which calloc gave zeroed, free) or its
 * own. The new copies, ring .. 2 ring - 1, go under the free ones, which
 * stay the first taken. Nothing is allocated: the slots and copies are
 * cap's from the start. */
static void ring_grow(struct ntp_pend *p)
{
	const uint32_t ring = p->rmask + 1;

	memmove(p->rfree + ring, p->rfree, p->nrfree * sizeof(*p->rfree));
	for (uint32_t k = 0; k < ring; k++)
		p->rfree[k] = (int32_t)(2 * ring - 1 - k);
	p->nrfree += ring;
	for (uint64_t a = p->seq - ring; a < p->seq; a++) {
		int32_t i = (int32_t)(a & p->rmask), k = (int32_t)(a & (2 * ring - 1));

		if (k != i && p->slots[i].due == a + p->cap) {
			p->slots[k] = p->slots[i];
			p->slots[i].due = NTP_PEND_FREE;
		}
	}
	p->rmask = 2 * ring - 1;
	relink(p);
}

/* ntp_pend_put when slot i, the new arrival's, holds a record: it expires
 * (the ring has cap slots), or the ring grows. Out of line, so that the
 * common put saves no registers for it. */
__attribute__((noinline)) int ntp_pend_put_evicting(struct ntp_pend *p, const struct ntp_record *r,
						    struct ntp_record *evicted, int32_t i, int ref)
{
	if (p->rmask + 1 < p->cap) {
		/* the record arrived rmask + 1 < cap puts ago: not due */
		ring_grow(p);
		i = (int32_t)(p->seq & p->rmask);
		if (ref)
			ntp_pend_append(p, r, ntp_pend_key(r), i, 1);
		else
			ntp_pend_append(p, r, ntp_pend_key(r), i, 0);
		return 0;
	}
	ntp_pend_record_copy(evicted, p->slots[i].rec);
	unlink_any(p, i);
	if (ref)
		ntp_pend_append(p, r, ntp_pend_key(r), i, 1);
	else
		ntp_pend_append(p, r, ntp_pend_key(r), i, 0);
	return 1;
}

int ntp_pend_put(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted)
{
	return ntp_pend_put_key(p, r, ntp_pend_key(r), evicted, 0);
}

/* The records pending arrived within the last ring (rmask + 1) arrivals, those held by
 * reference since the last settle: walked newest first, each in the slot
 * of its arrival number, whose due arrival number says whether it still
 * holds that arrival. Most were taken soon after they came, so the
 * walk stops when it has met the nref still pending, mostly among the
 * newest. */
void ntp_pend_settle(struct ntp_pend *p)
{
	/* locals: the copies' stores may alias *p for the compiler */
	const uint64_t cap = p->cap, mask = p->rmask, end = p->seq;
	struct ntp_pend_slot *slots = p->slots;
	struct ntp_record *recs = p->recs;
	int32_t *rfree = p->rfree;
	uint32_t nrfree = p->nrfree;
	uint64_t a = end, from = end - p->settled > mask + 1 ? end - (mask + 1) : p->settled;
	size_t left = p->nref;

	while (left && a > from) {
		int32_t i = (int32_t)(--a & mask);
		struct ntp_pend_slot *s = &slots[i];

		if (s->due == a + cap && s->buf < 0) {
			int32_t j = rfree[--nrfree];

			ntp_pend_record_copy(&recs[j], s->rec);
			s->rec = &recs[j];
			s->buf = j;
			left--;
		}
	}
	p->nrfree = nrfree;
	p->nref = 0;
	p->settled = end;
}

size_t ntp_pend_count(const struct ntp_pend *p)
{
	return p->count;
}
