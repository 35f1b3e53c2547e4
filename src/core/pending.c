// SPDX-License-Identifier: GPL-2.0
/* pending.c - bounded per-key FIFOs of records waiting for their twin (see pending.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pending.h"

struct slot {
	const struct ntp_record *rec;	/* the record: r, or the caller's (ntp_pend_put_ref) */
	uint64_t key;
	uint64_t due;		/* the arrival number at which it expires; DUE_FREE: not pending */
	int32_t next;		/* next slot in the same bucket, in arrival order; -1 ends */
	struct ntp_record r;
};

/* Arrival numbers start at cap, so that a due one (at least 2 cap) is never
 * 0: the slots and the ring come zeroed from calloc, their pages resident
 * only once used, and a ring entry not yet written names slot 0, whose due
 * is then 0 or at least 2 cap, never an arrival before the first. */
#define DUE_FREE 0

struct bucket {
	int32_t head, tail;	/* -1: empty */
};

/*
 * Expiry needs one record per put: the one that arrived cap puts before,
 * if it is still pending (with cap slots, every pending record arrived
 * within the last cap puts, so this is also the oldest when they are all
 * taken). A ring of the slot each arrival went to (4 bytes an arrival,
 * written and read in order, one cache line per 16 puts) names it, and the
 * slot's due arrival number says whether it still holds that record: no
 * list in arrival order to link and unlink at every put and take. The
 * bucket table grows with the records pending, not with the capacity: a
 * join's window of 65536 had 32768 buckets, 256 KiB read at random at
 * every put and take (a cache miss each) for the few dozen records a
 * stream keeps pending.
 */
struct ntp_pend {
	uint32_t cap, bmask, bmax;
	uint64_t seq;		/* the next arrival's number (from cap, DUE_FREE) */
	size_t count;
	size_t grow_at;		/* the count past which the bucket table grows */
	struct slot *slots;
	int32_t *free;		/* stack of free slots */
	uint32_t nfree;
	int32_t *ring;		/* slot of arrival n at n & (cap - 1) */
	uint64_t settled;	/* arrivals before it are copied (ntp_pend_settle) */
	size_t nref;		/* pending records held by reference */
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

/* The join key (cntlid, qid, cid): three adjacent 16-bit fields, one load. */
_Static_assert(offsetof(struct ntp_record, qid) == offsetof(struct ntp_record, cntlid) + 2 &&
	       offsetof(struct ntp_record, cid) == offsetof(struct ntp_record, cntlid) + 4 &&
	       offsetof(struct ntp_record, cntlid) + 8 <= sizeof(struct ntp_record), "the key is one load");
static inline uint64_t key_of(const struct ntp_record *r)
{
	uint64_t k;

	memcpy(&k, &r->cntlid, sizeof(k));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return k >> 16;
#else
	return k & 0xffffffffffffull;
#endif
}

/* ntp_same_command of two records of the same key: the rest of the identity. */
static inline int same_rest(const struct ntp_record *a, const struct ntp_record *b)
{
	return a->slba == b->slba && a->len == b->len && a->nsid == b->nsid && a->opcode == b->opcode;
}

static uint32_t bucket_of(const struct ntp_pend *p, uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(key >> 32) & p->bmask;
}

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
	p->seq = p->settled = cap;	/* DUE_FREE */
	p->slots = calloc(cap, sizeof(*p->slots));
	p->free = malloc(cap * sizeof(*p->free));
	p->ring = calloc(cap, sizeof(*p->ring));
	p->bk = malloc((p->bmask + 1) * sizeof(*p->bk));
	if (!p->slots || !p->free || !p->ring || !p->bk) {
		ntp_pend_free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < cap; i++)
		p->free[i] = (int32_t)(cap - 1 - i);
	p->nfree = cap;
	grow_limit(p);
	memset(p->bk, 0xff, (p->bmask + 1) * sizeof(*p->bk));
	return p;
}

void ntp_pend_free(struct ntp_pend *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->free);
	free(p->ring);
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
static inline __attribute__((always_inline)) void unlink_slot(struct ntp_pend *p, uint32_t b, int32_t prev, int32_t i)
{
	struct slot *s = &p->slots[i];

	if (prev < 0)
		p->bk[b].head = s->next;
	else
		p->slots[prev].next = s->next;
	if (p->bk[b].tail == i)
		p->bk[b].tail = prev;
	p->nref -= s->rec != &s->r;
	s->due = DUE_FREE;
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
		if (ntp_same_command(p->slots[i].rec, r))
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
	uint64_t key;
	uint32_t b;
	int32_t prev = -1, i;

	key = key_of(r);
	b = bucket_of(p, key);
	for (i = p->bk[b].head; i >= 0; prev = i, i = p->slots[i].next) {
		if (p->slots[i].key != key)
			continue;
		if (!same_rest(p->slots[i].rec, r))
			return take_past_older(p, r, key, b, dropped);
		unlink_slot(p, b, prev, i);
		/* The slot is free but untouched until the next put. */
		return p->slots[i].rec;
	}
	return NULL;
}

const struct ntp_record *ntp_pend_take(struct ntp_pend *p, const struct ntp_record *r,
				       uint64_t *dropped)
{
	return p->count ? take_some(p, r, dropped) : NULL;
}

/* ntp_pend_drop_key with records pending (apart as take_some) */
static __attribute__((noinline)) uint64_t drop_key_some(struct ntp_pend *p, const struct ntp_record *r)
{
	uint64_t key, n = 0;
	uint32_t b;
	int32_t prev = -1, i;

	key = key_of(r);
	b = bucket_of(p, key);
	for (i = p->bk[b].head; i >= 0;) {
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

uint64_t ntp_pend_drop_key(struct ntp_pend *p, const struct ntp_record *r)
{
	/* one side of a stream mostly finds the other's record waiting and
	 * waits for nothing itself: its own structure is empty */
	return p->count ? drop_key_some(p, r) : 0;
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
	grow_limit(p);
	/* the pending records arrived within the last cap arrivals: the ring
	 * names them in arrival order */
	for (uint64_t a = p->seq - p->cap; a < p->seq; a++) {
		int32_t i = p->ring[a & (p->cap - 1)];
		uint32_t b;

		if (p->slots[i].due != a + p->cap)
			continue;	/* taken, dropped or evicted */
		b = bucket_of(p, p->slots[i].key);

		p->slots[i].next = -1;
		if (bk[b].tail < 0)
			bk[b].head = i;
		else
			p->slots[bk[b].tail].next = i;
		bk[b].tail = i;
	}
}

/* Appends r, its arrival number p->seq, which goes to ring entry at; by
 * reference when ref (a constant) is set. */
static inline __attribute__((always_inline)) void append(struct ntp_pend *p, const struct ntp_record *r,
							  uint32_t at, int ref)
{
	uint64_t key = key_of(r);
	int32_t i = p->free[--p->nfree];
	struct slot *s = &p->slots[i];
	uint32_t b;

	if (ref) {
		s->rec = r;
		p->nref++;
	} else {
		record_copy(&s->r, r);
		s->rec = &s->r;
	}
	s->key = key;
	s->due = p->seq++ + p->cap;
	s->next = -1;
	p->ring[at] = i;
	b = bucket_of(p, key);
	if (p->bk[b].tail < 0)
		p->bk[b].head = i;
	else
		p->slots[p->bk[b].tail].next = i;
	p->bk[b].tail = i;
	if (__builtin_expect(++p->count > p->grow_at, 0))
		grow(p);
}

/* ntp_pend_put when the record of ring entry at, slot i, expires: out of
 * line, so that the common put saves no registers for it. */
static __attribute__((noinline)) int put_evicting(struct ntp_pend *p, const struct ntp_record *r,
						  struct ntp_record *evicted, uint32_t at, int32_t i, int ref)
{
	record_copy(evicted, p->slots[i].rec);
	unlink_any(p, i);
	append(p, r, at, ref);
	return 1;
}

static inline __attribute__((always_inline)) int put(struct ntp_pend *p, const struct ntp_record *r,
						      struct ntp_record *evicted, int ref)
{
	uint32_t at = (uint32_t)p->seq & (p->cap - 1);
	int32_t i = p->ring[at];

	/* Expire by count: the record that arrived cap puts ago, if still
	 * pending, goes (with cap pending it is the oldest, and a slot is
	 * free after it). */
	if (__builtin_expect(p->slots[i].due == p->seq, 0))
		return put_evicting(p, r, evicted, at, i, ref);
	append(p, r, at, ref);
	return 0;
}

int ntp_pend_put(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted)
{
	return put(p, r, evicted, 0);
}

/*
 * The copy of a record into its slot (272 bytes) is the costliest part
 * of a put, and most records put are taken within a few records of
 * the same block: by reference, only those still pending when the block
 * is let go are copied (ntp_pend_settle), a few per block.
 */
int ntp_pend_put_ref(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted)
{
	return put(p, r, evicted, 1);
}

/* The records pending arrived within the last cap arrivals, those held by
 * reference since the last settle: the ring names the slots of the
 * arrivals, newest first, and a slot's due arrival number says whether it
 * still holds that arrival. Most were taken soon after they came, so the
 * walk stops when it has met the nref still pending, mostly among the
 * newest. */
void ntp_pend_settle(struct ntp_pend *p)
{
	/* locals: the copies' stores may alias *p for the compiler */
	const uint64_t cap = p->cap, end = p->seq;
	const int32_t *ring = p->ring;
	struct slot *slots = p->slots;
	uint64_t a = end, from = end - p->settled > cap ? end - cap : p->settled;
	size_t left = p->nref;

	while (left && a > from) {
		struct slot *s = &slots[ring[--a & (cap - 1)]];

		if (s->due == a + cap && s->rec != &s->r) {
			record_copy(&s->r, s->rec);
			s->rec = &s->r;
			left--;
		}
	}
	p->nref = 0;
	p->settled = end;
}

size_t ntp_pend_count(const struct ntp_pend *p)
{
	return p->count;
}
