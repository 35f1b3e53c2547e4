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
	p->bmax = cap / 2 < (1u << 16) ? cap / 2 : 1u << 16;	/* bits 48 to 63 (ntp_pend_bucket_of) */
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
	ntp_pend_idx_clear(p);
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

/*
 * The uncommon take: the first pending record of r's key is not r's twin.
 * Walking the key's records for the twin costs as many steps as the key has
 * records pending, and a host file from another run (no command with a
 * twin) keeps up to capacity records pending, the same few keys (cid
 * tags) for all: each take walked a long chain to find nothing. So these
 * takes keep, apart from the common path (which never sees them), an index
 * of the records they walked, by command (key and identity), and per key a
 * mark: the newest of its records indexed. A take looks its command up in
 * the index and walks only the key's records newer than the mark, indexing
 * them: each record is walked about once, not once per take.
 *
 * Entries are never removed: an entry or mark names a slot and the due
 * arrival number of its record then, and is true only while the slot still
 * holds that record (the common path's take, a drop or an eviction frees
 * the slot, a put gives it a new due). The tables are rebuilt with their
 * true entries when half full, and emptied when the ring grows (its records
 * move to other slots).
 */
struct ntp_pend_idx {
	uint64_t due;		/* 0 (NTP_PEND_FREE): empty */
	uint64_t tag;		/* the command's hash (idx), the key (marks) */
	int32_t slot;
	uint32_t pad;
};

static uint64_t cmd_hash(uint64_t key, const struct ntp_record *r)
{
	uint64_t x, h;

	memcpy(&x, &r->len, sizeof(x));
	h = (key ^ ((uint64_t)r->opcode << 48)) * 0x9E3779B97F4A7C15ull;
	h = (h ^ r->slba ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
	h = (h ^ x ^ (h >> 32)) * 0x94D049BB133111EBull;
	return h ^ (h >> 31);
}

static int idx_true(const struct ntp_pend *p, const struct ntp_pend_idx *e)
{
	return p->slots[e->slot].due == e->due;
}

static void idx_insert(struct ntp_pend_idx *t, uint32_t mask, uint64_t tag, int32_t slot, uint64_t due)
{
	uint32_t h = (uint32_t)(tag ^ (tag >> 32)) & mask;

	while (t[h].due != NTP_PEND_FREE)
		h = (h + 1) & mask;
	t[h].due = due;
	t[h].tag = tag;
	t[h].slot = slot;
}

/* Tables of 4 cap entries: at most cap true ones (the records pending, the
 * marks of their keys), so a rebuild leaves them at most a quarter full. */
static int idx_ready(struct ntp_pend *p)
{
	size_t n = 4 * (size_t)p->cap;

	if (p->idx)
		return 0;
	p->idx = calloc(n, sizeof(*p->idx));
	p->marks = calloc(n, sizeof(*p->marks));
	if (!p->idx || !p->marks) {
		free(p->idx);
		free(p->marks);
		p->idx = p->marks = NULL;
		return -1;
	}
	p->imask = (uint32_t)(n - 1);
	p->nidx = p->nmarks = 0;
	return 0;
}

void ntp_pend_idx_clear(struct ntp_pend *p)
{
	free(p->idx);
	free(p->marks);
	p->idx = p->marks = NULL;
}

static void idx_rebuild(struct ntp_pend *p, struct ntp_pend_idx *t, size_t *n)
{
	size_t size = (size_t)p->imask + 1, kept = 0;
	struct ntp_pend_idx *old = malloc(size * sizeof(*old));

	if (!old) {
		ntp_pend_idx_clear(p);
		return;
	}
	memcpy(old, t, size * sizeof(*old));
	memset(t, 0, size * sizeof(*t));
	for (size_t k = 0; k < size; k++)
		if (old[k].due != NTP_PEND_FREE && idx_true(p, &old[k])) {
			idx_insert(t, p->imask, old[k].tag, old[k].slot, old[k].due);
			kept++;
		}
	p->slow_steps += size;
	*n = kept;
	free(old);
}

/* The mark of key, found or made (due 0: none yet). */
static struct ntp_pend_idx *mark_of(struct ntp_pend *p, uint64_t key)
{
	uint32_t h;

	if (p->nmarks > p->imask / 2)
		idx_rebuild(p, p->marks, &p->nmarks);
	if (!p->marks)
		return NULL;
	for (h = (uint32_t)(key ^ (key >> 32)) & p->imask; p->marks[h].due != NTP_PEND_FREE;
	     h = (h + 1) & p->imask) {
		p->slow_steps++;
		if (p->marks[h].tag == key)
			return &p->marks[h];
	}
	p->marks[h].tag = key;
	p->marks[h].slot = -1;
	/* due stays 0 until set: an empty entry to the probes, but for the
	 * entry just made, which the caller sets before any other probe */
	return &p->marks[h];
}

/* The oldest pending record of key that is the same command as r, or -1;
 * first is the first of key's slots in its bucket, not r's twin. */
int32_t ntp_pend_find_twin(struct ntp_pend *p, const struct ntp_record *r, uint64_t key, int32_t first)
{
	const struct ntp_pend_slot *slots = p->slots;
	uint64_t h = cmd_hash(key, r), known = 0;
	struct ntp_pend_idx *mk;
	int32_t i, best = -1;

	if (idx_ready(p) < 0 || !(mk = mark_of(p, key)))
		goto walk_all;
	if (mk->due != NTP_PEND_FREE && mk->slot >= 0 && slots[mk->slot].due == mk->due) {
		i = slots[mk->slot].next;	/* every record of key up to the mark is indexed */
	} else {
		i = first;	/* those up to the mark's arrival, still pending, are */
		known = mk->due;
	}
	/* the index: the oldest true entry of r's command */
	for (uint32_t e = (uint32_t)(h ^ (h >> 32)) & p->imask; p->idx[e].due != NTP_PEND_FREE;
	     e = (e + 1) & p->imask) {
		const struct ntp_pend_idx *x = &p->idx[e];

		p->slow_steps++;
		if (x->tag == h && idx_true(p, x) && slots[x->slot].key == key &&
		    ntp_pend_same_rest(slots[x->slot].rec, r) && (best < 0 || x->due < slots[best].due))
			best = x->slot;
	}
	if (best >= 0)
		return best;	/* older than any not indexed */
	/* the records of key newer than the mark, indexed and marked */
	for (; i >= 0; i = slots[i].next) {
		p->slow_steps++;
		if (slots[i].key != key)
			continue;
		if (ntp_pend_same_rest(slots[i].rec, r))
			return i;
		if (slots[i].due > known) {
			if (p->nidx > p->imask / 2) {
				idx_rebuild(p, p->idx, &p->nidx);
				if (!p->idx)
					goto walk_all;
				/* the mark's table too: mk stays valid */
			}
			idx_insert(p->idx, p->imask, cmd_hash(key, slots[i].rec), i, slots[i].due);
			p->nidx++;
		}
		if (mk->due == NTP_PEND_FREE)
			p->nmarks++;
		mk->slot = i;
		mk->due = slots[i].due;
	}
	return -1;
walk_all:
	for (i = first; i >= 0; i = slots[i].next) {
		p->slow_steps++;
		if (slots[i].key == key && ntp_pend_same_rest(slots[i].rec, r))
			return i;
	}
	return -1;
}

/* Takes tw, the twin of a record of key found by ntp_pend_find_twin after
 * first (the first of key's slots in bucket b, prev0 its predecessor or
 * -1), and drops the older records of key, the first 64 of them. */
const struct ntp_record *ntp_pend_take_twin(struct ntp_pend *p, uint64_t key, uint32_t b, int32_t prev0,
					    int32_t first, int32_t tw, uint64_t *dropped)
{
	int32_t prev = first, j;
	unsigned n_older = 0;



	for (j = p->slots[first].next; j != tw; prev = j, j = p->slots[j].next)
		p->slow_steps++;
	ntp_pend_unlink(p, b, prev, tw);
	/* Older pending records of this key can no longer match: drop them,
	 * the first 64 of the key's slots from first on (all before tw). */
	for (int32_t pj = prev0, jn, j = first; n_older < 64; j = jn) {
		jn = p->slots[j].next;
		p->slow_steps++;
		if (p->slots[j].key == key) {
			ntp_pend_unlink(p, b, pj, j);
			n_older++;
		} else {
			pj = j;
		}
		if (j == prev)
			break;	/* tw's predecessor: no older one after it */
	}
	*dropped += n_older;
	/* The slot is free but untouched until the next put. */
	return p->slots[tw].rec;
}

/* ntp_pend_take when the first record of r's key, slot first (prev0 its
 * predecessor in bucket b, or -1), is not r's twin (a twin lost). Out of
 * line: the common take is the first record of its key. */
__attribute__((noinline)) const struct ntp_record *ntp_pend_take_past_older(struct ntp_pend *p,
									     const struct ntp_record *r,
									     uint64_t key, uint32_t b,
									     int32_t prev0, int32_t first,
									     uint64_t *dropped)
{
	int32_t tw = ntp_pend_find_twin(p, r, key, first);

	return tw < 0 ? NULL : ntp_pend_take_twin(p, key, b, prev0, first, tw, dropped);
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
	ntp_pend_idx_clear(p);	/* its entries name the slots before the move */
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
