// SPDX-License-Identifier: GPL-2.0
/* test_pending.c - the join's pending records (pending.h) against a plain
 * list in arrival order that does what pending.h says: a take finds the
 * oldest record of the same command among those of its key and drops the
 * older ones of the key (at most 64, as the structure does), a put evicts
 * the record still pending capacity arrivals later, drop_key drops a key's
 * records. Random operations over few keys and commands, capacities from
 * the smallest up, so chains, evictions, reuse of slots and the growth of
 * the bucket table and of the ring of slots all happen; every returned
 * record, count and eviction compared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/pending.h"
#include "core/model/pending_int.h"

#define REF_MAX 70000

struct ref {
	uint32_t cap;
	uint64_t puts;
	size_t n;
	uint64_t seq[REF_MAX];		/* arrival number of each live record, oldest first */
	struct ntp_record r[REF_MAX];
};

static int same_key(const struct ntp_record *a, const struct ntp_record *b)
{
	return a->cntlid == b->cntlid && a->qid == b->qid && a->cid == b->cid;
}

static void ref_remove(struct ref *x, size_t i)
{
	memmove(&x->seq[i], &x->seq[i + 1], (x->n - i - 1) * sizeof(x->seq[0]));
	memmove(&x->r[i], &x->r[i + 1], (x->n - i - 1) * sizeof(x->r[0]));
	x->n--;
}

static int ref_put(struct ref *x, const struct ntp_record *r, struct ntp_record *ev)
{
	int evicted = 0;

	if (x->n && x->seq[0] + x->cap == x->puts) {
		*ev = x->r[0];
		ref_remove(x, 0);
		evicted = 1;
	}
	x->seq[x->n] = x->puts++;
	x->r[x->n++] = *r;
	return evicted;
}

/* the taken record copied to *out: 1, or 0 */
static int ref_take(struct ref *x, const struct ntp_record *r, uint64_t *dropped, struct ntp_record *out)
{
	size_t older[REF_MAX], n_older = 0, i;

	for (i = 0; i < x->n; i++) {
		if (!same_key(&x->r[i], r))
			continue;
		if (ntp_same_command(&x->r[i], r))
			break;
		older[n_older++] = i;
	}
	if (i == x->n)
		return 0;
	*out = x->r[i];
	ref_remove(x, i);
	if (n_older > 64)
		n_older = 64;
	while (n_older--) {
		ref_remove(x, older[n_older]);	/* from the last: the indices before stay */
		(*dropped)++;
	}
	return 1;
}

static uint64_t ref_drop_key(struct ref *x, const struct ntp_record *r)
{
	uint64_t n = 0;

	for (size_t i = x->n; i-- > 0;)
		if (same_key(&x->r[i], r)) {
			ref_remove(x, i);
			n++;
		}
	return n;
}

static void random_cmd(struct ntp_record *r, unsigned keys, unsigned cmds, uint64_t id)
{
	unsigned k = (unsigned)random() % keys;

	memset(r, 0, sizeof(*r));
	r->cntlid = (uint16_t)(1 + k % 3);
	r->qid = (uint16_t)(k / 3 % 5);
	r->cid = (uint16_t)(k / 15);
	r->opcode = 2;
	r->nsid = 1;
	r->len = 4096;
	r->slba = (uint64_t)(random() % cmds);
	r->seq = id;			/* tells the records apart */
	r->ts[3] = id * 7;
	r->ts_valid = 1u << 3;
}

#define BLOCK 96

/* puts and takes in percent of the operations, the rest drop_key: put1
 * and take1 for the first half of the operations, put2 and take2 after;
 * ref percent of the puts by reference (ntp_pend_put_key with ref set, as the model's block loop does) from a block of
 * records settled at random or when full, then overwritten (a record not
 * copied at the settle would read as garbage) */
static void against_reference_mixed(uint32_t capacity, unsigned keys, unsigned cmds, unsigned ops, int put1,
				    int take1, int put2, int take2, int ref, unsigned seed)
{
	static struct ref x;
	static struct ntp_record block[BLOCK];
	unsigned in_block = 0;
	struct ntp_pend *p = ntp_pend_new(capacity);
	uint64_t id = 1;

	assert_non_null(p);
	srandom(seed);
	memset(&x, 0, sizeof(x));
	x.cap = 16;
	while (x.cap < capacity && x.cap < (1u << 24))
		x.cap <<= 1;
	for (unsigned op = 0; op < ops; op++) {
		struct ntp_record r, ev1, ev2, out;
		uint64_t d1 = 0, d2 = 0;
		const struct ntp_record *got;
		int w = (int)(random() % 100), e1, e2;
		int put = op < ops / 2 ? put1 : put2, take = op < ops / 2 ? take1 : take2;

		random_cmd(&r, keys, cmds, id++);
		if (w < put) {
			int by_ref = (int)(random() % 100) < ref;

			memset(&ev1, 0, sizeof(ev1));
			memset(&ev2, 0, sizeof(ev2));
			if (by_ref) {
				block[in_block] = r;
				e1 = ntp_pend_put_key(p, &block[in_block], ntp_pend_key(&block[in_block]), &ev1, 1);
				in_block++;
			} else {
				e1 = ntp_pend_put(p, &r, &ev1);
			}
			e2 = ref_put(&x, &r, &ev2);
			assert_int_equal(e1, e2);
			if (e1)
				assert_memory_equal(&ev1, &ev2, sizeof(ev1));
		} else if (w < put + take) {
			got = ntp_pend_take(p, &r, &d1);
			e2 = ref_take(&x, &r, &d2, &out);
			assert_int_equal(got != NULL, e2);
			if (got)
				assert_memory_equal(got, &out, sizeof(out));
			assert_int_equal(d1, d2);
		} else {
			assert_int_equal(p->count ? ntp_pend_drop_key_some(p, ntp_pend_key(&r)) : 0, ref_drop_key(&x, &r));
		}
		assert_int_equal(ntp_pend_count(p), x.n);
		/* one copy held per record pending not by reference, the
		 * others free: none lost, none handed out twice */
		assert_int_equal(p->nrfree, p->rmask + 1 - (p->count - p->nref));
		if (in_block == BLOCK || (ref && random() % 50 == 0)) {
			ntp_pend_settle(p);
			memset(block, 0xa5, sizeof(block));
			in_block = 0;
		}
	}
	ntp_pend_free(p);
}

static void against_reference_phases(uint32_t capacity, unsigned keys, unsigned cmds, unsigned ops, int put1,
				     int take1, int put2, int take2, unsigned seed)
{
	against_reference_mixed(capacity, keys, cmds, ops, put1, take1, put2, take2, 0, seed);
}

static void against_reference(uint32_t capacity, unsigned keys, unsigned cmds, unsigned ops, int put, int take,
			      unsigned seed)
{
	against_reference_phases(capacity, keys, cmds, ops, put, take, put, take, seed);
}

static void test_pending_reference(void **state)
{
	(void)state;
	/* few keys and commands: long chains, matches past older records */
	against_reference(16, 4, 3, 20000, 50, 40, 1);
	against_reference(16, 40, 2, 20000, 50, 40, 2);
	/* more puts than takes: evictions of the oldest, records taken
	 * from the middle of the arrival order before */
	against_reference(16, 50, 4, 20000, 70, 28, 6);
	/* more keys than the table starts with buckets, evictions at 64 */
	against_reference(64, 3000, 4, 60000, 50, 40, 3);
	/* one key: more than 64 older records of it before a match */
	against_reference(1024, 1, 300, 20000, 60, 40, 4);
	/* a join's window, most records taken soon: the bucket table grows */
	against_reference(4096, 2000, 2, 40000, 50, 40, 5);
	/* many commands per key, few twins: the uncommon take's index
	 * (pending.c ntp_pend_find_twin) filled, rebuilt and emptied as the
	 * ring grows, its records taken, dropped and evicted under it */
	against_reference(1024, 6, 100000, 60000, 60, 40, 7);
	against_reference(256, 30, 3000, 60000, 55, 45, 8);
	against_reference_mixed(2048, 12, 50000, 60000, 60, 40, 50, 50, 60, 9);
}

/* Puts by reference: records taken from the block they were put from,
 * others settled (copied) and met again after the block was overwritten,
 * evictions of records held either way, more puts between two settles
 * than the capacity (the arrivals go round the slots within a block), settles with
 * nothing pending by reference. */
static void test_pending_ref(void **state)
{
	(void)state;
	against_reference_mixed(16, 4, 3, 20000, 50, 40, 50, 40, 100, 11);
	against_reference_mixed(16, 50, 4, 20000, 70, 28, 70, 28, 50, 12);
	against_reference_mixed(64, 3000, 2, 40000, 50, 50, 85, 10, 100, 13);
	against_reference_mixed(256, 500, 3, 40000, 45, 55, 75, 20, 70, 14);
	against_reference_mixed(1024, 1, 300, 20000, 60, 40, 60, 40, 100, 15);
	against_reference_mixed(4096, 2000, 2, 40000, 50, 40, 50, 40, 90, 16);
}

/* one put and one take on both, compared */
static void both_put(struct ntp_pend *p, struct ref *x, const struct ntp_record *r)
{
	struct ntp_record ev1, ev2;
	int e1, e2;

	memset(&ev1, 0, sizeof(ev1));
	memset(&ev2, 0, sizeof(ev2));
	e1 = ntp_pend_put(p, r, &ev1);
	e2 = ref_put(x, r, &ev2);
	assert_int_equal(e1, e2);
	if (e1)
		assert_memory_equal(&ev1, &ev2, sizeof(ev1));
	assert_int_equal(ntp_pend_count(p), x->n);
}

static void both_take(struct ntp_pend *p, struct ref *x, const struct ntp_record *r, int found)
{
	struct ntp_record out;
	uint64_t d1 = 0, d2 = 0;
	const struct ntp_record *got = ntp_pend_take(p, r, &d1);

	assert_int_equal(ref_take(x, r, &d2, &out), found);
	assert_int_equal(got != NULL, found);
	if (got)
		assert_memory_equal(got, &out, sizeof(out));
	assert_int_equal(d1, d2);
	assert_int_equal(ntp_pend_count(p), x->n);
}

static void key_cmd(struct ntp_record *r, unsigned k, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->cntlid = 1;
	r->qid = (uint16_t)(k % 7);
	r->cid = (uint16_t)k;
	r->opcode = 2;
	r->nsid = 1;
	r->len = 4096;
	r->slba = k;
	r->seq = id;
	r->ts_valid = 1;
}

/* The bucket table grows (64 to 128 buckets at 129 pending, capacity 256)
 * when the record that arrived exactly capacity puts before is still
 * pending, the arrivals having gone round the slots: it must be relinked (it expires at the
 * next put), and every record after it found. */
static void test_pending_grow_oldest(void **state)
{
	static struct ref x;
	struct ntp_pend *p = ntp_pend_new(256);
	struct ntp_record r;
	uint64_t id = 1;

	(void)state;
	assert_non_null(p);
	memset(&x, 0, sizeof(x));
	x.cap = 256;
	/* the ring wraps: arrivals taken at once */
	for (unsigned i = 0; i < 1000; i++) {
		key_cmd(&r, 5000 + i, id++);
		both_put(p, &x, &r);
		both_take(p, &x, &r, 1);
	}
	key_cmd(&r, 1, id++);		/* the oldest, arrival 1000 */
	both_put(p, &x, &r);
	for (unsigned i = 0; i < 127; i++) {
		key_cmd(&r, 9000 + i, id++);
		both_put(p, &x, &r);
		both_take(p, &x, &r, 1);
	}
	for (unsigned i = 0; i < 128; i++) {	/* the 129th pending grows the table */
		key_cmd(&r, 100 + i, id++);
		both_put(p, &x, &r);
	}
	assert_int_equal(ntp_pend_count(p), 129);
	key_cmd(&r, 2, id++);		/* evicts the oldest */
	both_put(p, &x, &r);
	key_cmd(&r, 1, id++);
	both_take(p, &x, &r, 0);
	for (unsigned i = 0; i < 128; i++) {
		key_cmd(&r, 100 + i, id++);
		both_take(p, &x, &r, 1);
	}
	ntp_pend_free(p);
}

/* Expiry reads the slot of the arrival capacity puts before, and the
 * bucket table's growth relinks the pending records in arrival order
 * from the slots: first many arrivals taken soon (they go round the slots
 * many times), then more puts than takes, so that the table grows and
 * records expire with their slots written long after the start. */
static void test_pending_ring(void **state)
{
	(void)state;
	against_reference_phases(64, 3000, 2, 60000, 50, 50, 85, 10, 7);
	against_reference_phases(256, 500, 3, 60000, 45, 55, 75, 20, 8);
	/* the smallest capacity: every slot expires, taken or reused */
	against_reference_phases(16, 8, 2, 20000, 55, 45, 90, 8, 9);
	/* a take or drop on an empty structure between bursts */
	against_reference_phases(1024, 50, 2, 20000, 20, 40, 60, 30, 10);
}

#define RING_CAP 65536	/* the join's window of two files (join.c) */
#define RING_LATE 97	/* the most puts a record waits before its take */

/* arrival t's record: most taken 1 to RING_LATE puts later (how long
 * varies, so that the pending records sit in both halves of a ring
 * that doubles), one in 1000 never (cntlid 2: no record taken shares its
 * key), so that it is still pending when the ring comes round to it */
static unsigned ring_wait(unsigned t)
{
	return t % 1000 == 0 ? 0 : 1 + (t * 7919u) % RING_LATE;
}

static void ring_cmd(struct ntp_record *r, unsigned t)
{
	key_cmd(r, t % 60000, t + 1);
	if (!ring_wait(t))
		r->cntlid = 2;
}

/* The ring of slots doubles from 64 to the join's window as the records
 * left pending come round, each growth with records pending in both halves
 * and held by reference (put from a block settled when full, then
 * overwritten): every put, take and eviction against the reference, whose
 * window is the capacity from the start; then every step of the ring
 * seen, the records left pending evicted at capacity puts, and a window
 * whose records are all taken soon keeping the smallest ring. */
static void test_pending_ring_grow(void **state)
{
	static struct ref x;
	static struct ntp_record block[BLOCK];
	struct ntp_pend *p = ntp_pend_new(RING_CAP);
	unsigned in_block = 0, nsizes = 0, t;
	uint32_t sizes[32], last = 0;
	uint64_t evictions = 0;

	(void)state;
	assert_non_null(p);
	memset(&x, 0, sizeof(x));
	x.cap = RING_CAP;
	for (t = 0; t < RING_CAP + 5000; t++) {
		struct ntp_record r, ev1, ev2;
		int e1, e2;

		ring_cmd(&r, t);
		memset(&ev1, 0, sizeof(ev1));
		memset(&ev2, 0, sizeof(ev2));
		block[in_block] = r;
		e1 = ntp_pend_put_key(p, &block[in_block], ntp_pend_key(&block[in_block]), &ev1, 1);
		in_block++;
		e2 = ref_put(&x, &r, &ev2);
		assert_int_equal(e1, e2);
		if (e1) {
			assert_memory_equal(&ev1, &ev2, sizeof(ev1));
			assert_int_equal(ev1.cntlid, 2);
			evictions++;
		}
		for (unsigned s = t > RING_LATE ? t - RING_LATE : 0; s < t; s++)
			if (ring_wait(s) && s + ring_wait(s) == t) {
				ring_cmd(&r, s);
				both_take(p, &x, &r, 1);
			}
		assert_int_equal(ntp_pend_count(p), x.n);
		assert_int_equal(p->nrfree, p->rmask + 1 - (p->count - p->nref));
		if (p->rmask + 1 != last) {
			assert_true(nsizes < 32);
			sizes[nsizes++] = last = p->rmask + 1;
		}
		if (in_block == BLOCK) {
			ntp_pend_settle(p);
			memset(block, 0xa5, sizeof(block));
			in_block = 0;
		}
	}
	/* 64, 128, ... the capacity: one step at a time, each reached */
	assert_int_equal(nsizes, 11);
	for (unsigned i = 0; i < nsizes; i++)
		assert_int_equal(sizes[i], 64u << i);
	/* those left pending from the first 5000 puts expired */
	assert_int_equal(evictions, 5);
	ntp_pend_free(p);

	/* every record taken 50 puts after it came: the ring stays at 64 */
	p = ntp_pend_new(RING_CAP);
	assert_non_null(p);
	memset(&x, 0, sizeof(x));
	x.cap = RING_CAP;
	for (t = 0; t < 20000; t++) {
		struct ntp_record r;

		key_cmd(&r, t % 60000, t + 1);
		both_put(p, &x, &r);
		if (t >= 50) {
			key_cmd(&r, (t - 50) % 60000, t - 49);
			both_take(p, &x, &r, 1);
		}
	}
	assert_int_equal(p->rmask + 1, 64);
	ntp_pend_free(p);
}

/* A host file from another run: none of its records has a twin, so a key's
 * records pile up to the capacity, and every take of the other side finds
 * its key's first record another command. Such a take once walked all the
 * key's records (a step each, per take); the uncommon take's index
 * (pending.c ntp_pend_find_twin) walks each record about once. The steps
 * are counted (slow_steps), not timed: with the walk per take they are
 * about takes * records / keys, here over a hundred times the bound. */
static void test_pending_foreign_bounded(void **state)
{
	const unsigned keys = 16, n = 40000;
	struct ntp_pend *p = ntp_pend_new(65536);
	struct ntp_record r, ev;
	uint64_t dropped = 0;

	(void)state;
	assert_non_null(p);
	memset(&r, 0, sizeof(r));
	r.cntlid = 1;
	r.opcode = 2;
	r.nsid = 1;
	r.len = 4096;
	for (unsigned k = 0; k < n; k++) {
		r.cid = (uint16_t)(k % keys);
		r.slba = 2 * k;			/* the foreign side's commands */
		assert_int_equal(ntp_pend_put(p, &r, &ev), 0);
		if (k % 2 == 0)
			continue;
		r.slba = 2 * k + 1;		/* a command never put */
		assert_null(ntp_pend_take(p, &r, &dropped));
	}
	assert_int_equal(ntp_pend_count(p), n);
	assert_int_equal(dropped, 0);
	/* a record pending put twice into the index at most (the ring's
	 * growth empties it), a few probes per take */
	assert_true(p->slow_steps < 8ull * n);
	ntp_pend_free(p);
}

/* The bucket of a key: the cids of one controller's queue, a tag in the
 * low bits and a generation counter above (as ntprof generate --qd makes
 * them), spread over the table. The hash's bits from 32 up put sixteen of
 * these keys in a bucket: a take walked the other keys' records before its
 * key's first. Here every bucket is walked once per key in it, so the
 * total is the records pending when each key has a bucket of its own. */
static void test_pending_bucket_spread(void **state)
{
	const unsigned per_key = 16;
	struct ntp_pend *p = ntp_pend_new(65536);
	struct ntp_record r, ev;
	uint64_t walked = 0;

	(void)state;
	assert_non_null(p);
	memset(&r, 0, sizeof(r));
	r.cntlid = 2;
	r.qid = 1;
	for (unsigned g = 0; g < 16; g++)
		for (unsigned tag = 0; tag < 32; tag++)
			for (unsigned k = 0; k < per_key; k++) {
				r.cid = (uint16_t)(g << 12 | tag);
				r.slba = k;
				assert_int_equal(ntp_pend_put(p, &r, &ev), 0);
			}
	for (unsigned g = 0; g < 16; g++)
		for (unsigned tag = 0; tag < 32; tag++) {
			r.cid = (uint16_t)(g << 12 | tag);
			for (int32_t i = p->bk[ntp_pend_bucket_of(p, ntp_pend_key(&r))].head; i >= 0;
			     i = p->slots[i].next)
				walked++;
		}
	/* 512 keys of 16 records: 8192 with a bucket each */
	assert_true(walked <= 2ull * 512 * per_key);
	ntp_pend_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_reference),
		cmocka_unit_test(test_pending_ring),
		cmocka_unit_test(test_pending_grow_oldest),
		cmocka_unit_test(test_pending_ref),
		cmocka_unit_test(test_pending_ring_grow),
		cmocka_unit_test(test_pending_foreign_bounded),
		cmocka_unit_test(test_pending_bucket_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
