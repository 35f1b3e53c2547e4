/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pending_int.h - the inside of pending.c, for ntp_model_ingest_block
 * (model.c): its put and take inlined in the block's loop, where a call
 * per record saved and restored registers and computed the join key and
 * bucket again for each of a record's two lookups. pending.h says what
 * the functions do; only pending.c and model.c include this.
 */
#ifndef NTP_PENDING_INT_H
#define NTP_PENDING_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "pending.h"

/* A slot's bookkeeping, 32 bytes, apart from its record's copy (recs[]):
 * the walks of a bucket's chain and of the arrivals read two slots per line
 * where a slot with its record inside spanned five, and a slot's address
 * is a shift, not a multiply by 304. */
struct ntp_pend_slot {
	const struct ntp_record *rec;	/* the record: recs[buf], or the caller's (ref) */
	uint64_t key;
	uint64_t due;		/* the arrival number at which it expires; NTP_PEND_FREE: not pending */
	int32_t next;		/* next slot in the same bucket, in arrival order; -1 ends */
	int32_t buf;		/* its copy in recs[]; -1: rec is the caller's (ntp_pend_put_key
				 * with ref set), not yet settled */
};
_Static_assert(sizeof(struct ntp_pend_slot) == 32, "a slot is half a cache line");

/* The ring's first size (slots), doubled up to cap (struct ntp_pend). */
#define NTP_PEND_RING_MIN 64

/* Arrival numbers start at cap, so that a due one (at least 2 cap) is never
 * 0: the slots come zeroed from calloc (their pages resident only once
 * used), and a slot not yet written is free. */
#define NTP_PEND_FREE 0

struct ntp_pend_bucket {
	int32_t head, tail;	/* -1: empty */
};

/*
 * Expiry needs one record per put: the one that arrived cap puts before,
 * if it is still pending (with cap slots, every pending record arrived
 * within the last cap puts, so this is also the oldest when they are all
 * taken). So arrival n goes to the slot of the arrival cap puts before
 * (n mod cap once the ring below is whole), and the slot's due arrival
 * number says whether it still holds that record: no list in arrival order to link and unlink at every
 * put and take, no stack of free slots, no ring naming each arrival's. The
 * bucket table grows with the records pending, not with the capacity: a
 * join's window of 65536 had 32768 buckets, 256 KiB read at random at
 * every put and take (a cache miss each) for the few dozen records a
 * stream keeps pending.
 *
 * The slots go round in a ring of the first rmask + 1 of them, not all cap:
 * arrival n goes to slot n mod (rmask + 1), and every pending record
 * arrived within the last rmask + 1 puts. When the slot of a put still holds
 * a record (the one that arrived rmask + 1 puts before) and the ring is
 * smaller than cap, that record is not due: the ring doubles
 * (pending.c ring_grow), each pending record moving to the slot of its
 * arrival number in the larger ring. Expiry stays at cap puts; only the
 * memory touched follows the records pending: a stream whose records wait
 * a few dozen puts uses a ring of 64 slots where going round all of a
 * join's 65536 wrote 2 MiB of fresh pages, each a page fault.
 */
struct ntp_pend {
	uint32_t cap, bmask, bmax;
	uint32_t rmask;		/* the ring's slots, minus one (a power of two, at most cap, minus one) */
	uint64_t seq;		/* the next arrival's number (from cap, NTP_PEND_FREE) */
	size_t count;
	size_t grow_at;		/* the count past which the bucket table grows */
	struct ntp_pend_slot *slots;
	/* the copies of the records pending, apart from the slots (which
	 * go round with the arrivals): taken last-freed-first, so that the
	 * few copies a stream keeps stay in cache and its resident memory
	 * does not grow with the records read */
	struct ntp_record *recs;
	int32_t *rfree;		/* stack of free copies: copies 0 .. rmask, those not in use
				 * (a pending record is in a slot of the ring) */
	uint32_t nrfree;
	uint64_t settled;	/* arrivals before it are copied (ntp_pend_settle) */
	size_t nref;		/* pending records held by reference */
	struct ntp_pend_bucket *bk;	/* per bucket: first and last slot, one cache line for both */
	/* steps of the takes past a key's first record (pending.c
	 * ntp_pend_find_twin, ntp_pend_take_twin: slots walked, index entries
	 * probed): the work of the uncommon path, for the tests */
	uint64_t slow_steps;
	/* the uncommon take's index of commands and marks per key (pending.c
	 * ntp_pend_find_twin), imask + 1 entries each; NULL until it is needed */
	struct ntp_pend_idx *idx, *marks;
	uint32_t imask;
	size_t nidx, nmarks;
};

/* The out-of-line parts (pending.c) */
int32_t ntp_pend_find_twin(struct ntp_pend *p, const struct ntp_record *r, uint64_t key, int32_t first);
const struct ntp_record *ntp_pend_take_twin(struct ntp_pend *p, uint64_t key, uint32_t b, int32_t prev0,
					    int32_t first, int32_t tw, uint64_t *dropped);
void ntp_pend_idx_clear(struct ntp_pend *p);
const struct ntp_record *ntp_pend_take_past_older(struct ntp_pend *p, const struct ntp_record *r,
						  uint64_t key, uint32_t b, int32_t prev0, int32_t first,
						  uint64_t *dropped);
int ntp_pend_put_evicting(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted,
			  int32_t i, int ref);
void ntp_pend_grow(struct ntp_pend *p);
uint64_t ntp_pend_drop_key_some(struct ntp_pend *p, uint64_t key);

/*
 * A record into a slot: 272 bytes as 16-byte vector moves. GCC copies a
 * struct this size with `rep movsq`, whose start-up cost is paid at every
 * copy, the largest part of a put.
 */
typedef uint64_t ntp_pend_v16 __attribute__((vector_size(16), aligned(8), may_alias));
_Static_assert(sizeof(struct ntp_record) % sizeof(ntp_pend_v16) == 0, "record is whole vectors");

static inline void ntp_pend_record_copy(struct ntp_record *dst, const struct ntp_record *src)
{
	ntp_pend_v16 *d = (ntp_pend_v16 *)dst;
	const ntp_pend_v16 *s = (const ntp_pend_v16 *)src;

#pragma GCC unroll 17
	for (size_t i = 0; i < sizeof(*dst) / sizeof(*d); i++)
		d[i] = s[i];
}

/* The join key (cntlid, qid, cid): three adjacent 16-bit fields, one load. */
_Static_assert(offsetof(struct ntp_record, qid) == offsetof(struct ntp_record, cntlid) + 2 &&
	       offsetof(struct ntp_record, cid) == offsetof(struct ntp_record, cntlid) + 4 &&
	       offsetof(struct ntp_record, cntlid) + 8 <= sizeof(struct ntp_record), "the key is one load");
static inline uint64_t ntp_pend_key(const struct ntp_record *r)
{
	uint64_t k;

	memcpy(&k, &r->cntlid, sizeof(k));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return k >> 16;
#else
	return k & 0xffffffffffffull;
#endif
}

/* ntp_same_command of two records of the same key: the rest of the identity,
 * len and nsid (adjacent) in one load, and one test where four compares
 * each took a branch. */
_Static_assert(offsetof(struct ntp_record, nsid) == offsetof(struct ntp_record, len) + 4 &&
		       sizeof(((struct ntp_record *)0)->len) == 4 && sizeof(((struct ntp_record *)0)->nsid) == 4,
	       "len and nsid are one load");
static inline int ntp_pend_same_rest(const struct ntp_record *a, const struct ntp_record *b)
{
	uint64_t x, y;

	memcpy(&x, &a->len, sizeof(x));
	memcpy(&y, &b->len, sizeof(y));
	return !((a->slba ^ b->slba) | (x ^ y) | (uint64_t)(a->opcode ^ b->opcode));
}

/* Bits from 48 up of the product. A key's cid (bits 32 to 47) reaches
 * bit 32 + n of the product from its own bits below n only: with bits from
 * 32 up, cids with a tag in the low bits and a generation counter above
 * (ntprof generate --qd) fell sixteen to a bucket, and a take walked the
 * other keys' records before its own key's first. From 48 up the bucket
 * takes all of the cid's bits, with as many instructions; the table has at
 * most 2^16 buckets (pending.c), bits 48 to 63. */
static inline uint32_t ntp_pend_bucket_of(const struct ntp_pend *p, uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(key >> 48) & p->bmask;
}

/* Unlinks slot i (whose predecessor in its bucket is prev, or -1) and frees it
 * (the next arrival that goes to it takes it). */
static inline __attribute__((always_inline)) void ntp_pend_unlink(struct ntp_pend *p, uint32_t b,
								   int32_t prev, int32_t i)
{
	struct ntp_pend_slot *s = &p->slots[i];

	if (prev < 0)
		p->bk[b].head = s->next;
	else
		p->slots[prev].next = s->next;
	if (p->bk[b].tail == i)
		p->bk[b].tail = prev;
	if (s->buf < 0)
		p->nref--;
	else
		p->rfree[p->nrfree++] = s->buf;
	s->due = NTP_PEND_FREE;
	p->count--;
}

/* ntp_pend_take_key's answer when slot i (prev its predecessor in bucket
 * b, or -1) holds r's key: its record, unlinked, or past older ones. */
static inline __attribute__((always_inline)) const struct ntp_record *
ntp_pend_take_at(struct ntp_pend *p, const struct ntp_record *r, uint64_t key, uint32_t b, int32_t prev, int32_t i,
		 uint64_t *dropped)
{
	if (__builtin_expect(!ntp_pend_same_rest(p->slots[i].rec, r), 0))
		return ntp_pend_take_past_older(p, r, key, b, prev, i, dropped);
	ntp_pend_unlink(p, b, prev, i);
	/* The slot is free but untouched until the next put. */
	return p->slots[i].rec;
}

/* ntp_pend_take, r's key known (an empty p's buckets are all empty) */
static inline __attribute__((always_inline)) const struct ntp_record *
ntp_pend_take_key(struct ntp_pend *p, const struct ntp_record *r, uint64_t key, uint64_t *dropped)
{
	uint32_t b = ntp_pend_bucket_of(p, key);
	int32_t prev, i = p->bk[b].head;

	/* the bucket's first slot apart (a stream's buckets hold one or two
	 * records): its unlink knows it has no predecessor */
	if (i < 0)
		return NULL;
	if (p->slots[i].key == key)
		return ntp_pend_take_at(p, r, key, b, -1, i, dropped);
	for (prev = i, i = p->slots[i].next; i >= 0; prev = i, i = p->slots[i].next)
		if (p->slots[i].key == key)
			return ntp_pend_take_at(p, r, key, b, prev, i, dropped);
	return NULL;
}

/* Appends r (key), its arrival number p->seq, which goes to slot i (its
 * arrival number mod the ring's size, free); by reference when ref (a constant) is set. */
static inline __attribute__((always_inline)) void ntp_pend_append(struct ntp_pend *p, const struct ntp_record *r,
								   uint64_t key, int32_t i, int ref)
{
	struct ntp_pend_slot *s = &p->slots[i];
	uint32_t b;

	if (ref) {
		s->rec = r;
		s->buf = -1;
		p->nref++;
	} else {
		int32_t j = p->rfree[--p->nrfree];

		ntp_pend_record_copy(&p->recs[j], r);
		s->rec = &p->recs[j];
		s->buf = j;
	}
	s->key = key;
	s->due = p->seq++ + p->cap;
	s->next = -1;
	b = ntp_pend_bucket_of(p, key);
	if (p->bk[b].tail < 0)
		p->bk[b].head = i;
	else
		p->slots[p->bk[b].tail].next = i;
	p->bk[b].tail = i;
	if (__builtin_expect(++p->count > p->grow_at, 0))
		ntp_pend_grow(p);
}

static inline __attribute__((always_inline)) int ntp_pend_put_key(struct ntp_pend *p, const struct ntp_record *r,
								   uint64_t key, struct ntp_record *evicted, int ref)
{
	int32_t i = (int32_t)(p->seq & p->rmask);

	/* The slot still holds the record that arrived rmask + 1 puts ago:
	 * with a ring of cap slots it expires (with cap pending it is the
	 * oldest) and its slot takes r; in a smaller ring, the ring grows. */
	if (__builtin_expect(p->slots[i].due != NTP_PEND_FREE, 0))
		return ntp_pend_put_evicting(p, r, evicted, i, ref);
	ntp_pend_append(p, r, key, i, ref);
	return 0;
}

#endif
