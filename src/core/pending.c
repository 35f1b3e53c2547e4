// SPDX-License-Identifier: GPL-2.0
/* pending.c - bounded per-key FIFOs of records waiting for their twin (see pending.h). */
#include <stdlib.h>
#include <string.h>
#include "pending.h"

struct slot {
	struct ntp_record r;
	uint64_t key;
	uint64_t seq;		/* arrival number */
	int32_t next;		/* next slot in the same bucket, in arrival order; -1 ends */
	int32_t older, newer;	/* the arrival list: pending slots, oldest first; -1 ends */
};

struct bucket {
	int32_t head, tail;	/* -1: empty */
};

/*
 * Expiry needs the oldest pending record only (a record still pending cap
 * arrivals later is the oldest then): pending slots are kept in arrival
 * order in a list through the slots, where a ring of every arrival (16
 * bytes each, a megabyte at a join's window) was walked and written at
 * every put. The bucket table grows with the records pending, not with the
 * capacity: a join's window of 65536 had 32768 buckets, 256 KiB read at
 * random at every put and take (a cache miss each) for the few dozen
 * records a stream keeps pending.
 */
struct ntp_pend {
	uint32_t cap, bmask, bmax;
	uint64_t seq;		/* arrivals so far */
	size_t count;
	struct slot *slots;
	int32_t *free;		/* stack of free slots */
	uint32_t nfree;
	int32_t oldest, newest;	/* the arrival list's ends; -1: empty */
	struct bucket *bk;	/* per bucket: first and last slot, one cache line for both */
};

#define BUCKETS_MIN 64

/*
 * A record into a slot: 272 bytes as 16-byte vector moves. GCC copies a
 * struct this size with `rep movsq`, whose start-up cost made the copy the
 * largest part of a put (perf annotate: ~60 % of ntp_pend_put).
 */
typedef uint64_t ntp_v16 __attribute__((vector_size(16), aligned(8), may_alias));
_Static_assert(sizeof(struct ntp_record) % sizeof(ntp_v16) == 0, "record is whole vectors");

static inline void record_copy(struct ntp_record *dst, const struct ntp_record *src)
{
	ntp_v16 *d = (ntp_v16 *)dst;
	const ntp_v16 *s = (const ntp_v16 *)src;

#pragma GCC unroll 17
	for (size_t i = 0; i < sizeof(*dst) / sizeof(*d); i++)
		d[i] = s[i];
}

static uint64_t key_of(const struct ntp_record *r)
{
	return ((uint64_t)r->cntlid << 32) | ((uint64_t)r->qid << 16) | r->cid;
}

static uint32_t bucket_of(const struct ntp_pend *p, uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(key >> 32) & p->bmask;
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
	p->oldest = p->newest = -1;
	p->slots = calloc(cap, sizeof(*p->slots));
	p->free = malloc(cap * sizeof(*p->free));
	p->bk = malloc((p->bmask + 1) * sizeof(*p->bk));
	if (!p->slots || !p->free || !p->bk) {
		ntp_pend_free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < cap; i++)
		p->free[i] = (int32_t)(cap - 1 - i);
	p->nfree = cap;
	memset(p->bk, 0xff, (p->bmask + 1) * sizeof(*p->bk));
	return p;
}

void ntp_pend_free(struct ntp_pend *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->free);
	free(p->bk);
	free(p);
}

int ntp_same_command(const struct ntp_record *a, const struct ntp_record *b)
{
	return a->cntlid == b->cntlid && a->qid == b->qid && a->cid == b->cid &&
	       a->opcode == b->opcode && a->nsid == b->nsid && a->slba == b->slba &&
	       a->len == b->len;
}

/* Unlinks slot i (whose predecessor in its bucket is prev, or -1) and frees it. */
static void unlink_slot(struct ntp_pend *p, uint32_t b, int32_t prev, int32_t i)
{
	struct slot *s = &p->slots[i];

	if (prev < 0)
		p->bk[b].head = s->next;
	else
		p->slots[prev].next = s->next;
	if (p->bk[b].tail == i)
		p->bk[b].tail = prev;
	if (s->older < 0)
		p->oldest = s->newer;
	else
		p->slots[s->older].newer = s->newer;
	if (s->newer < 0)
		p->newest = s->older;
	else
		p->slots[s->newer].older = s->older;
	p->free[p->nfree++] = i;
	p->count--;
}

static void unlink_any(struct ntp_pend *p, int32_t i)
{
	uint32_t b = bucket_of(p, p->slots[i].key);
	int32_t prev = -1, j;

	for (j = p->bk[b].head; j >= 0 && j != i; prev = j, j = p->slots[j].next)
		;
	if (j >= 0)
		unlink_slot(p, b, prev, i);
}

/* ntp_pend_take when an older record of r's key waits before its match
 * (a twin lost): found again, the older ones dropped. Out of line: the
 * common take is the first record of its key. */
static __attribute__((noinline)) const struct ntp_record *take_past_older(struct ntp_pend *p,
									   const struct ntp_record *r,
									   uint64_t key, uint32_t b,
									   uint64_t *dropped)
{
	int32_t prev = -1, i, older[64];
	unsigned n_older = 0;

	for (i = p->bk[b].head; i >= 0; prev = i, i = p->slots[i].next) {
		if (p->slots[i].key != key)
			continue;
		if (ntp_same_command(&p->slots[i].r, r))
			break;
		if (n_older < 64)
			older[n_older++] = i;
	}
	if (i < 0)
		return NULL;
	unlink_slot(p, b, prev, i);
	/* Older pending records of this key can no longer match: drop them. */
	for (unsigned k = 0; k < n_older; k++) {
		unlink_any(p, older[k]);
		(*dropped)++;
	}
	/* The slot is free but untouched until the next put. */
	return &p->slots[i].r;
}

const struct ntp_record *ntp_pend_take(struct ntp_pend *p, const struct ntp_record *r,
				       uint64_t *dropped)
{
	uint64_t key;
	uint32_t b;
	int32_t prev = -1, i;

	if (!p->count)
		return NULL;
	key = key_of(r);
	b = bucket_of(p, key);
	for (i = p->bk[b].head; i >= 0; prev = i, i = p->slots[i].next) {
		if (p->slots[i].key != key)
			continue;
		if (!ntp_same_command(&p->slots[i].r, r))
			return take_past_older(p, r, key, b, dropped);
		unlink_slot(p, b, prev, i);
		/* The slot is free but untouched until the next put. */
		return &p->slots[i].r;
	}
	return NULL;
}

uint64_t ntp_pend_drop_key(struct ntp_pend *p, const struct ntp_record *r)
{
	uint64_t key = key_of(r), n = 0;
	uint32_t b = bucket_of(p, key);
	/* one side of a stream mostly finds the other's record waiting and
	 * waits for nothing itself: its own structure is empty */
	int32_t prev = -1, i = p->count ? p->bk[b].head : -1;

	while (i >= 0) {
		int32_t next = p->slots[i].next;

		if (p->slots[i].key == key) {
			unlink_slot(p, b, prev, i);
			n++;
		} else {
			prev = i;
		}
		i = next;
	}
	return n;
}

/* Relinks every pending slot into a table of twice the buckets per
 * record pending (up to cap / 2), in arrival order: each key's records
 * stay in theirs. */
static __attribute__((noinline)) void grow(struct ntp_pend *p)
{
	uint32_t n = (p->bmask + 1) * 4;
	struct bucket *bk;

	if (n > p->bmax)
		n = p->bmax;
	bk = malloc(n * sizeof(*bk));
	if (!bk)
		return;		/* longer chains, the same order */
	memset(bk, 0xff, n * sizeof(*bk));
	free(p->bk);
	p->bk = bk;
	p->bmask = n - 1;
	for (int32_t i = p->oldest; i >= 0; i = p->slots[i].newer) {
		uint32_t b = bucket_of(p, p->slots[i].key);

		p->slots[i].next = -1;
		if (bk[b].tail < 0)
			bk[b].head = i;
		else
			p->slots[bk[b].tail].next = i;
		bk[b].tail = i;
	}
}

int ntp_pend_put(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted)
{
	int ev = 0;
	int32_t i;
	struct slot *s;
	uint32_t b;

	/* Expire by count: what is still pending cap arrivals later goes
	 * (then the oldest; with cap pending, it is that one, and a slot is
	 * free after it). */
	if (p->oldest >= 0 && p->slots[p->oldest].seq + p->cap == p->seq) {
		record_copy(evicted, &p->slots[p->oldest].r);
		unlink_any(p, p->oldest);
		ev = 1;
	}
	i = p->free[--p->nfree];
	s = &p->slots[i];
	record_copy(&s->r, r);
	s->key = key_of(r);
	s->seq = p->seq++;
	s->next = -1;
	s->older = p->newest;
	s->newer = -1;
	if (p->newest < 0)
		p->oldest = i;
	else
		p->slots[p->newest].newer = i;
	p->newest = i;
	b = bucket_of(p, s->key);
	if (p->bk[b].tail < 0)
		p->bk[b].head = i;
	else
		p->slots[p->bk[b].tail].next = i;
	p->bk[b].tail = i;
	if (++p->count > 2 * (size_t)(p->bmask + 1) && p->bmask + 1 < p->bmax)
		grow(p);
	return ev;
}

size_t ntp_pend_count(const struct ntp_pend *p)
{
	return p->count;
}
