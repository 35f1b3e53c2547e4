// SPDX-License-Identifier: GPL-2.0
/* pending.c - bounded per-key FIFOs of records waiting for their twin (see pending.h). */
#include <stdlib.h>
#include <string.h>
#include "pending.h"

struct slot {
	struct ntp_record r;
	uint64_t key;
	int32_t next;		/* next slot in the same bucket, in arrival order; -1 ends */
	int32_t live;
};

struct ntp_pend {
	uint32_t mask;		/* capacity - 1 */
	uint64_t seq;		/* arrivals so far: slot of the next one is seq & mask */
	size_t count;
	struct slot *slots;
	int32_t *head, *tail;	/* per bucket; as many buckets as slots */
};

static uint64_t key_of(const struct ntp_record *r)
{
	return ((uint64_t)r->cntlid << 32) | ((uint64_t)r->qid << 16) | r->cid;
}

static uint32_t bucket_of(const struct ntp_pend *p, uint64_t key)
{
	key *= 0x9E3779B97F4A7C15ull;
	return (uint32_t)(key >> 32) & p->mask;
}

struct ntp_pend *ntp_pend_new(uint32_t capacity)
{
	struct ntp_pend *p = calloc(1, sizeof(*p));
	uint32_t cap = 16;

	if (!p)
		return NULL;
	while (cap < capacity && cap < (1u << 24))
		cap <<= 1;
	p->mask = cap - 1;
	p->slots = calloc(cap, sizeof(*p->slots));
	p->head = malloc(cap * sizeof(*p->head));
	p->tail = malloc(cap * sizeof(*p->tail));
	if (!p->slots || !p->head || !p->tail) {
		ntp_pend_free(p);
		return NULL;
	}
	memset(p->head, 0xff, cap * sizeof(*p->head));
	memset(p->tail, 0xff, cap * sizeof(*p->tail));
	return p;
}

void ntp_pend_free(struct ntp_pend *p)
{
	if (!p)
		return;
	free(p->slots);
	free(p->head);
	free(p->tail);
	free(p);
}

int ntp_same_command(const struct ntp_record *a, const struct ntp_record *b)
{
	return a->cntlid == b->cntlid && a->qid == b->qid && a->cid == b->cid &&
	       a->opcode == b->opcode && a->nsid == b->nsid && a->slba == b->slba &&
	       a->len == b->len;
}

/* Unlinks slot i (whose predecessor in its bucket is prev, or -1). */
static void unlink_slot(struct ntp_pend *p, uint32_t b, int32_t prev, int32_t i)
{
	if (prev < 0)
		p->head[b] = p->slots[i].next;
	else
		p->slots[prev].next = p->slots[i].next;
	if (p->tail[b] == i)
		p->tail[b] = prev;
	p->slots[i].live = 0;
	p->count--;
}

const struct ntp_record *ntp_pend_take(struct ntp_pend *p, const struct ntp_record *r,
				       uint64_t *dropped)
{
	uint64_t key = key_of(r);
	uint32_t b = bucket_of(p, key);
	int32_t prev = -1, i, older[64];
	unsigned n_older = 0;

	for (i = p->head[b]; i >= 0; prev = i, i = p->slots[i].next) {
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
		int32_t pv = -1, j;

		for (j = p->head[b]; j >= 0 && j != older[k]; pv = j, j = p->slots[j].next)
			;
		if (j >= 0) {
			unlink_slot(p, b, pv, j);
			(*dropped)++;
		}
	}
	return &p->slots[i].r;
}

uint64_t ntp_pend_drop_key(struct ntp_pend *p, const struct ntp_record *r)
{
	uint64_t key = key_of(r), n = 0;
	uint32_t b = bucket_of(p, key);
	int32_t prev = -1, i = p->head[b];

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

int ntp_pend_put(struct ntp_pend *p, const struct ntp_record *r, struct ntp_record *evicted)
{
	int32_t i = (int32_t)(p->seq & p->mask);
	struct slot *s = &p->slots[i];
	int ev = 0;
	uint32_t b;

	if (s->live) {
		/* The oldest arrival still pending: it heads its bucket's chain,
		 * since every older one was taken or evicted before it. */
		int32_t pv = -1, j;

		b = bucket_of(p, s->key);
		for (j = p->head[b]; j >= 0 && j != i; pv = j, j = p->slots[j].next)
			;
		*evicted = s->r;
		unlink_slot(p, b, pv, i);
		ev = 1;
	}
	s->r = *r;
	s->key = key_of(r);
	s->next = -1;
	s->live = 1;
	b = bucket_of(p, s->key);
	if (p->tail[b] < 0)
		p->head[b] = i;
	else
		p->slots[p->tail[b]].next = i;
	p->tail[b] = i;
	p->count++;
	p->seq++;
	return ev;
}

size_t ntp_pend_count(const struct ntp_pend *p)
{
	return p->count;
}
