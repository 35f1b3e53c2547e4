// SPDX-License-Identifier: GPL-2.0
/* test_model.c - the reducer over intervals: per-interval counts and exact totals,
 * rates and Little's law, the whole-run snapshot, groups and their order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/hist.h"
#include "core/model/model.h"
#include "core/render/report.h"

#define SET(r, slot, v) do { (r)->ts[slot] = (v); (r)->ts_valid |= 1u << (slot); } while (0)
#define SEC 1000000000ull

/* A host record: e2e = 100 us, of which 80 us "network and target". */
static void host_rec(struct ntp_record *h, uint8_t opcode, uint32_t len, const char *dev, uint64_t t0)
{
	memset(h, 0, sizeof(*h));
	h->side = NTP_SIDE_HOST;
	h->opcode = opcode;
	h->len = len;
	snprintf(h->dev, sizeof(h->dev), "%s", dev);
	SET(h, NTP_TS_H_BLK_SUBMIT, t0);
	SET(h, NTP_TS_H_DRV_SUBMIT, t0 + 2000);
	SET(h, NTP_TS_H_CMD_SENT, t0 + 7000);
	SET(h, NTP_TS_H_RSP_ARRIVE, t0 + 87000);
	SET(h, NTP_TS_H_RSP_DRV, t0 + 91000);
	SET(h, NTP_TS_H_DRV_COMPLETE, t0 + 99000);
	SET(h, NTP_TS_H_BLK_COMPLETE, t0 + 100000);
}

static struct ntp_total total(uint8_t io, uint32_t len, const char *dev, uint64_t commands)
{
	struct ntp_total t;

	memset(&t, 0, sizeof(t));
	t.key.side = NTP_SIDE_HOST;
	t.key.io = io;
	t.key.len = len;
	snprintf(t.key.dev, sizeof(t.key.dev), "%s", dev);
	t.count.commands = commands;
	t.count.bytes = commands * len;
	return t;
}

static void test_intervals_and_totals(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 10 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;
	uint64_t cum = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	for (int sec = 0; sec < 3; sec++) {
		int n = 100 * (sec + 1);	/* 100, 200, 300 sampled */

		for (int i = 0; i < n; i++) {
			host_rec(&r, 0x02, 4096, "nvme0n1", (10 + sec) * SEC + (uint64_t)i * 1000);
			ntp_model_ingest(m, &r);
		}
		cum += (uint64_t)n * 10 + 7;	/* the kernel counted a few more */
		struct ntp_total t = total(NTP_IO_READ, 4096, "nvme0n1", cum);

		ntp_model_set_totals(m, &t, 1, (11 + sec) * SEC);
		ntp_model_close_interval(m, (11 + sec) * SEC, s);
		assert_int_equal(s->index, sec);
		assert_true(s->seconds == 1.0);
		assert_int_equal(s->n_groups, 1);
		assert_int_equal(s->groups[0].sampled, n);
		assert_int_equal(s->groups[0].commands, n * 10 + 7);
		assert_true(s->groups[0].rate == n * 10 + 7);
		assert_true(s->groups[0].host_only);
		assert_true(s->groups[0].e2e_mean_us == 100.0);
		/* Little's law: 100 us x rate; the stage QDs add up to it. */
		double qd = 0;

		for (int st = 0; st < NTP_STAGE_COUNT; st++)
			qd += s->groups[0].stage[st].avg_qd;
		assert_true(qd > 100e-6 * (n * 10 + 7) * 0.999 && qd < 100e-6 * (n * 10 + 7) * 1.001);
		assert_true(s->groups[0].stage[NTP_STAGE_NETWORK].mean_us == 84.0);	/* 80 + receive 4 */
	}
	ntp_model_total(m, s);
	assert_true(s->seconds == 3.0);
	assert_int_equal(s->groups[0].sampled, 600);
	assert_int_equal(s->groups[0].commands, cum);
	assert_true(s->groups[0].rate == cum / 3.0);
	assert_int_equal(s->host_records, 600);
	free(s);
	ntp_model_free(m);
}

/* Sparse sampling: a key the totals count before any of its commands is
 * sampled is a group of its own, its rate the count's, no record in it;
 * sampled_run says whether it ever had one. Rows of the other side, and of
 * no namespace, make none. */
static void test_counted_before_sampled(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1000 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_total t[3];
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	t[0] = total(NTP_IO_READ, 4096, "nvme1n1", 1234);
	t[1] = total(NTP_IO_READ, 4096, "nullb0", 1234);
	t[1].key.side = NTP_SIDE_TARGET;
	t[2] = total(NTP_IO_READ, 0, "", 5);
	ntp_model_set_totals(m, t, 3, 11 * SEC);
	ntp_model_close_interval(m, 11 * SEC, s);
	assert_int_equal(s->n_groups, 1);
	assert_string_equal(s->groups[0].dev, "nvme1n1");
	assert_int_equal(s->groups[0].commands, 1234);
	assert_true(s->groups[0].rate == 1234);
	assert_int_equal(s->groups[0].sampled, 0);
	assert_int_equal(s->groups[0].seen, 0);
	assert_int_equal(s->groups[0].sampled_run, 0);
	/* its first record finds that group */
	host_rec(&r, 0x02, 4096, "nvme1n1", 11 * SEC + 1000);
	ntp_model_ingest(m, &r);
	t[0].count.commands = 2500;
	ntp_model_set_totals(m, t, 1, 12 * SEC);
	ntp_model_close_interval(m, 12 * SEC, s);
	assert_int_equal(s->n_groups, 1);
	assert_int_equal(s->groups[0].sampled, 1);
	assert_int_equal(s->groups[0].commands, 1266);
	assert_int_equal(s->groups[0].sampled_run, 1);
	/* none in this one: sampled before */
	t[0].count.commands = 3000;
	ntp_model_set_totals(m, t, 1, 13 * SEC);
	ntp_model_close_interval(m, 13 * SEC, s);
	assert_int_equal(s->groups[0].sampled, 0);
	assert_int_equal(s->groups[0].commands, 500);
	assert_int_equal(s->groups[0].sampled_run, 1);
	ntp_model_total(m, s);
	assert_int_equal(s->n_groups, 1);
	assert_int_equal(s->groups[0].commands, 3000);
	assert_int_equal(s->groups[0].sampled_run, 1);
	free(s);
	ntp_model_free(m);
}

/* Without totals the rate is sampled x N / seconds; groups sort reads first, then size. */
static void test_estimated_rate_and_order(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 100 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;

	(void)state;
	ntp_model_set_start(m, 0);
	for (int i = 0; i < 50; i++) {
		host_rec(&r, 0x01, 4096, "nvme0n1", (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
		host_rec(&r, 0x02, 131072, "nvme0n1", (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
		host_rec(&r, 0x02, 4096, "nvme1n1", (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
		host_rec(&r, 0x02, 4096, "nvme0n1", (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
	}
	/* one incomplete record: counted, left out */
	host_rec(&r, 0x02, 4096, "nvme0n1", 0);
	r.ts_valid &= ~(1u << NTP_TS_H_RSP_DRV);
	ntp_model_ingest(m, &r);
	ntp_model_close_interval(m, 2 * SEC, s);
	assert_int_equal(s->n_groups, 4);
	assert_int_equal(s->groups[0].io, NTP_IO_READ);
	assert_int_equal(s->groups[0].len, 4096);
	assert_string_equal(s->groups[0].dev, "nvme0n1");
	assert_string_equal(s->groups[1].dev, "nvme1n1");
	assert_int_equal(s->groups[2].len, 131072);
	assert_int_equal(s->groups[3].io, NTP_IO_WRITE);
	assert_int_equal(s->groups[0].commands, 0);
	assert_int_equal(s->groups[0].incomplete_records, 1);
	assert_int_equal(s->groups[0].sampled, 50);
	assert_int_equal(s->groups[0].seen, 51);
	assert_true(s->groups[1].rate == 50 * 100 / 2.0);
	assert_true(s->groups[2].mbps == 2500 * 131072 / 1e6);
	/* The next interval starts empty. */
	ntp_model_close_interval(m, 3 * SEC, s);
	assert_int_equal(s->groups[0].sampled, 0);
	assert_true(s->groups[0].e2e_mean_us == 0);
	free(s);
	ntp_model_free(m);
}

/*
 * More groups than a snapshot holds, their records interleaved at random
 * (the group lookup's direct-mapped table and the probed table behind it
 * both see every case): each of the first 64 keys seen counts exactly its own records over
 * two intervals, the rest are counted as overflow, and keys that differ only
 * in one byte of the device name or in the I/O type stay apart.
 */
static void test_many_groups(void **state)
{
	enum { KEYS = 70, PER = 40 };
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	unsigned left[KEYS], order[KEYS], seen = 0, total = 0;
	int first[KEYS];
	struct ntp_record r;
	uint64_t overflow = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	srandom(3);
	for (unsigned k = 0; k < KEYS; k++) {
		left[k] = PER;
		first[k] = -1;
	}
	for (unsigned n = 0; n < KEYS * PER; n++) {
		unsigned k;
		char dev[24];

		do
			k = (unsigned)random() % KEYS;
		while (!left[k]);
		left[k]--;
		if (first[k] < 0) {
			first[k] = (int)seen;
			order[seen++] = k;
		}
		/* key k: device "nvme0n<k / 2>", read or write by k's parity */
		snprintf(dev, sizeof(dev), "nvme0n%u", k / 2);
		host_rec(&r, k % 2 ? 0x01 : 0x02, 4096, dev, (uint64_t)n * 1000);
		ntp_model_ingest(m, &r);
		if (first[k] >= NTP_SNAP_MAX_GROUPS)
			overflow++;
		if (n == KEYS * PER / 2) {
			ntp_model_close_interval(m, SEC, s);
			for (unsigned g = 0; g < s->n_groups; g++)
				total += (unsigned)s->groups[g].sampled;
		}
	}
	ntp_model_close_interval(m, 2 * SEC, s);
	assert_int_equal(seen, KEYS);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS);
	for (unsigned g = 0; g < s->n_groups; g++)
		total += (unsigned)s->groups[g].sampled;
	assert_int_equal(total + overflow, KEYS * PER);
	ntp_model_total(m, s);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS);
	assert_int_equal(s->overflow_records, overflow);
	for (unsigned i = 0; i < NTP_SNAP_MAX_GROUPS; i++) {
		unsigned k = order[i], found = 0;
		char dev[24];

		snprintf(dev, sizeof(dev), "nvme0n%u", k / 2);
		for (unsigned g = 0; g < s->n_groups; g++)
			if (!strcmp(s->groups[g].dev, dev) && s->groups[g].io == (k % 2 ? NTP_IO_WRITE : NTP_IO_READ)) {
				assert_int_equal(s->groups[g].sampled, PER);
				found++;
			}
		assert_int_equal(found, 1);
	}
	free(s);
	ntp_model_free(m);
}

/*
 * The group lookup's cache of packed keys: groups of one device that differ
 * in size and I/O type, interleaved, each count exactly their records, also
 * after a record whose device fills NTP_DEV_LEN bytes without a NUL made a
 * group of its own (its key is stored cut: the lookup then stops caching)
 * and with more devices than the cache numbers.
 */
static void test_group_cache(void **state)
{
	enum { LENS = 8, PER = 50, DEVS = 80 };
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	unsigned got[2][LENS], n_long = 0;
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	for (unsigned n = 0; n < 2 * LENS * PER; n++) {
		unsigned k = n % (2 * LENS);

		host_rec(&r, k & 1 ? 0x01 : 0x02, 4096u * (k / 2 + 1), "nvme0n1", (uint64_t)n * 1000);
		ntp_model_ingest(m, &r);
		if (n == LENS * PER) {	/* halfway: a device of 32 bytes, no NUL */
			host_rec(&r, 0x02, 4096, "nvme0n1", (uint64_t)n * 1000);
			memset(r.dev, 'x', NTP_DEV_LEN);
			ntp_model_ingest(m, &r);
			n_long++;
		}
	}
	/* devices beyond the cache's numbers: the groups left take them */
	for (unsigned d = 0; d < DEVS; d++) {
		char dev[24];

		snprintf(dev, sizeof(dev), "nvme9n%u", d);
		host_rec(&r, 0x02, 512, dev, SEC / 2 + d);
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, SEC, s);
	ntp_model_total(m, s);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS);
	memset(got, 0, sizeof(got));
	for (unsigned g = 0; g < s->n_groups; g++) {
		const struct ntp_snap_group *o = &s->groups[g];

		if (!strcmp(o->dev, "nvme0n1")) {
			assert_true(o->len % 4096 == 0 && o->len / 4096 - 1 < LENS);
			got[o->io == NTP_IO_WRITE][o->len / 4096 - 1] += (unsigned)o->sampled;
		} else if (o->dev[0] == 'x') {
			assert_int_equal(o->sampled, n_long);
		} else {
			assert_int_equal(o->sampled, 1);
			assert_int_equal(o->len, 512);
		}
	}
	for (unsigned w = 0; w < 2; w++)
		for (unsigned l = 0; l < LENS; l++)
			assert_int_equal(got[w][l], PER);
	assert_int_equal(s->overflow_records, DEVS - (NTP_SNAP_MAX_GROUPS - 2 * LENS - 1));
	free(s);
	ntp_model_free(m);
}

/*
 * Every group taken: the lookup caches the keys without a group (up to
 * half its table), so more keys past the 64th than it holds, interleaved
 * with the groups' own records and met again and again, are each counted
 * as overflow, and the groups keep exactly their records.
 */
static void test_group_cache_full(void **state)
{
	enum { EXTRA = 400, ROUNDS = 3 };
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;
	uint64_t t = 0, overflow = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	for (unsigned g = 0; g < NTP_SNAP_MAX_GROUPS; g++) {
		host_rec(&r, 0x02, 512u * (g + 1), "nvme0n1", t += 1000);
		ntp_model_ingest(m, &r);
	}
	for (unsigned round = 0; round < ROUNDS; round++)
		for (unsigned k = 0; k < EXTRA; k++) {
			/* a key past the groups (a size none has, either device) */
			host_rec(&r, k % 3 ? 0x02 : 0x01, 512u * (NTP_SNAP_MAX_GROUPS + 1 + k),
				 k % 2 ? "nvme0n1" : "nvme1n1", t += 1000);
			ntp_model_ingest(m, &r);
			overflow++;
			/* and one of a group's */
			host_rec(&r, 0x02, 512u * (k % NTP_SNAP_MAX_GROUPS + 1), "nvme0n1", t += 1000);
			ntp_model_ingest(m, &r);
		}
	ntp_model_close_interval(m, t + SEC, s);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS);
	assert_int_equal(s->overflow_records, overflow);
	for (unsigned g = 0; g < s->n_groups; g++) {
		unsigned n = s->groups[g].len / 512 - 1, per = 1;

		assert_true(n < NTP_SNAP_MAX_GROUPS);
		for (unsigned round = 0; round < ROUNDS; round++)
			for (unsigned k = 0; k < EXTRA; k++)
				per += k % NTP_SNAP_MAX_GROUPS == n;
		assert_int_equal(s->groups[g].sampled, per);
	}
	free(s);
	ntp_model_free(m);
}

/*
 * The lookup's keys hold the opcode, not its I/O type: every opcode but
 * 0x01 and 0x02 is of type "other", so the keys of many opcodes (more
 * than the cache holds with a group) and sizes name the same few groups;
 * fed one at a time and as blocks, each group counts exactly the records
 * of its type and size.
 */
static void test_group_cache_opcodes(void **state)
{
	enum { LENS = 6, OPS = 60, BLOCK = 37 };
	struct ntp_snapshot *s = malloc(sizeof(*s));
	static struct ntp_record buf[BLOCK];

	(void)state;
	assert_non_null(s);
	for (int block = 0; block < 2; block++) {
		struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP,
						.sampling = 1 };
		struct ntp_model *m = ntp_model_new(&cfg);
		unsigned want[3][LENS], got[3][LENS], in = 0;

		assert_non_null(m);
		ntp_model_set_start(m, 0);
		memset(want, 0, sizeof(want));
		memset(got, 0, sizeof(got));
		srandom(7);
		for (unsigned n = 0; n < 20000; n++) {
			/* opcodes 0x00..0x3b, 0x01 and 0x02 among them */
			uint8_t op = (uint8_t)(random() % OPS);
			unsigned l = (unsigned)random() % LENS;

			host_rec(&buf[in], op, 4096u << l, "nvme0n1", (uint64_t)n * 1000);
			want[ntp_io_type_of(op)][l]++;
			if (!block)
				ntp_model_ingest(m, &buf[in]);
			else if (++in == BLOCK) {
				ntp_model_ingest_block(m, buf, in);
				in = 0;
			}
		}
		if (in)
			ntp_model_ingest_block(m, buf, in);
		ntp_model_close_interval(m, SEC, s);
		assert_int_equal(s->n_groups, 3 * LENS);
		assert_int_equal(s->overflow_records, 0);
		for (unsigned g = 0; g < s->n_groups; g++) {
			const struct ntp_snap_group *o = &s->groups[g];
			unsigned l = (unsigned)__builtin_ctz(o->len / 4096);

			assert_true(o->io < 3 && l < LENS && o->len == 4096u << l);
			got[o->io][l] += (unsigned)o->sampled;
		}
		assert_memory_equal(got, want, sizeof(got));
		ntp_model_free(m);
	}
	free(s);
}

/*
 * Keys that meet in one slot of the group lookup's direct-mapped table
 * (model.c group_of: the key's device number + 1 in bits 48.., side,
 * opcode, size, times a multiplier, the top 11 bits; sizes chosen so that
 * eight keys meet under the first multiplier): interleaved, each group
 * counts exactly its records once the table has drawn another multiplier
 * (the probed table behind it is what test_group_cache_full and
 * test_group_cache_opcodes fill).
 */
static void test_group_cache_collide(void **state)
{
	enum { KEYS = 8, PER = 300 };
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	uint32_t len[KEYS];
	unsigned found = 0, target = 0;
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	/* the slot of the first size, then the next sizes with that slot */
	for (uint32_t k = 1; found < KEYS && k < (1u << 20); k++) {
		uint64_t key = 1ull << 48 | (uint64_t)NTP_SIDE_HOST << 40 | 0x02ull << 32 | 512u * k;
		unsigned slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 53);

		if (!found)
			target = slot;
		if (slot == target)
			len[found++] = 512u * k;
	}
	assert_int_equal(found, KEYS);
	ntp_model_set_start(m, 0);
	for (unsigned n = 0; n < KEYS * PER; n++) {
		/* runs of one key and changes at every record, in turn */
		unsigned k = n < KEYS * PER / 2 ? n % KEYS : n / 7 % KEYS;

		host_rec(&r, 0x02, len[k], "nvme0n1", (uint64_t)n * 1000);
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, SEC, s);
	assert_int_equal(s->n_groups, KEYS);
	for (unsigned g = 0; g < s->n_groups; g++) {
		unsigned want = 0;

		for (unsigned n = 0; n < KEYS * PER; n++)
			want += len[n < KEYS * PER / 2 ? n % KEYS : n / 7 % KEYS] == s->groups[g].len;
		assert_int_equal(s->groups[g].sampled, want);
		assert_true(want > 0);
	}
	free(s);
	ntp_model_free(m);
}

/*
 * A key the direct-mapped table left out (it met a cached key and no
 * multiplier drawn gave every key a slot of its own) is answered by the
 * probed table at its records, and offered the table again: a redraw at the
 * 1st, 2nd, 4th... offer of keys left out (model.c gc_out_offer), not at
 * each (a redraw per record cost GC_FAST_TRIES draws over every key
 * cached), nor never (a key left out stayed on the slow path for the run),
 * so that with fewer keys than the table holds all end up in it; then no
 * more offers nor draws; and every key still counts exactly its records.
 */
static void test_group_cache_left_out(void **state)
{
	enum { MAX_KEYS = 127, ROUNDS = 20 };
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_model_gc_stats st, st2;
	struct ntp_record r;
	uint32_t len[MAX_KEYS];
	unsigned keys = 0;
	uint64_t t = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	srandom(11);
	/* new keys (sizes at random: the sizes of an arithmetic progression
	 * spread evenly under a multiplicative hash and never meet; past the
	 * 64th, keys of no group) until one is left out: fewer keys in the
	 * table than seen */
	do {
		uint32_t l;
		unsigned i;

		do {
			l = 512u * (1 + (uint32_t)random() % (1u << 20));
			for (i = 0; i < keys && len[i] != l; i++)
				;
		} while (i < keys);
		len[keys++] = l;
		host_rec(&r, 0x02, l, "nvme0n1", t += 1000);
		ntp_model_ingest(m, &r);
		ntp_model_gc_stats(m, &st);
	} while (st.fast == keys && keys < MAX_KEYS);
	assert_true(st.fast < keys);
	assert_true(st.draws > 0);
	/* the budget of meetings (GC_FAST_REHASH) is not spent: a redraw per
	 * record could still happen */
	assert_true(st.rehash < 32);
	for (unsigned round = 0; round < ROUNDS; round++)
		for (unsigned k = 0; k < keys; k++) {
			host_rec(&r, 0x02, len[k], "nvme0n1", t += 1000);
			ntp_model_ingest(m, &r);
		}
	ntp_model_gc_stats(m, &st2);
	/* the keys left out were offered again and drew at the 1st, 2nd,
	 * 4th... offer only (GC_FAST_TRIES draws at most each), and with
	 * fewer keys than GC_FAST_MAX a retry found them all a slot */
	assert_true(st2.out_offers > 0);
	assert_true(st2.draws - st.draws <= 8u * (64u - (unsigned)__builtin_clzll(st2.out_offers)));
	assert_int_equal(st2.fast, keys);
	/* none left out: no more offers, no more draws */
	for (unsigned round = 0; round < ROUNDS; round++)
		for (unsigned k = 0; k < keys; k++) {
			host_rec(&r, 0x02, len[k], "nvme0n1", t += 1000);
			ntp_model_ingest(m, &r);
		}
	ntp_model_gc_stats(m, &st);
	assert_int_equal(st.out_offers, st2.out_offers);
	assert_int_equal(st.draws, st2.draws);
	assert_int_equal(st.fast, keys);
	ntp_model_close_interval(m, t + SEC, s);
	assert_int_equal(s->overflow_records,
			 keys > NTP_SNAP_MAX_GROUPS ? (uint64_t)(keys - NTP_SNAP_MAX_GROUPS) * (2 * ROUNDS + 1) : 0);
	assert_int_equal(s->n_groups, keys < NTP_SNAP_MAX_GROUPS ? keys : NTP_SNAP_MAX_GROUPS);
	for (unsigned g = 0; g < s->n_groups; g++) {
		unsigned k;

		for (k = 0; k < keys && k < NTP_SNAP_MAX_GROUPS && len[k] != s->groups[g].len; k++)
			;
		assert_true(k < keys && k < NTP_SNAP_MAX_GROUPS);
		assert_int_equal(s->groups[g].sampled, 2 * ROUNDS + 1);
	}
	free(s);
	ntp_model_free(m);
}

/*
 * The run's snapshot does not depend on how it was cut into intervals:
 * the first close hands its accumulators to the run, later ones are
 * merged in, and either way every count, mean and quantile of every
 * stage and component equals that of one interval over the whole run.
 */
/* Two host models of -s 1 started at 0, and a snapshot for each */
static void twin_models(struct ntp_model **ma, struct ntp_model **mb, struct ntp_snapshot **a,
			struct ntp_snapshot **b)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };

	*a = malloc(sizeof(**a));
	*b = malloc(sizeof(**b));
	*ma = ntp_model_new(&cfg);
	*mb = ntp_model_new(&cfg);
	assert_non_null(*a);
	assert_non_null(*b);
	assert_non_null(*ma);
	assert_non_null(*mb);
	ntp_model_set_start(*ma, 0);
	ntp_model_set_start(*mb, 0);
}

static void test_total_of_intervals(void **state)
{
	struct ntp_snapshot *a, *b;
	struct ntp_model *ma, *mb;
	struct ntp_record r;

	(void)state;
	twin_models(&ma, &mb, &a, &b);
	srandom(5);
	for (unsigned n = 0; n < 30000; n++) {
		uint64_t t = (uint64_t)n * (3 * SEC / 30000), d = 0;
		static const unsigned slot[] = { NTP_TS_H_DRV_SUBMIT, NTP_TS_H_CMD_SENT, NTP_TS_H_RSP_ARRIVE,
						  NTP_TS_H_RSP_DRV, NTP_TS_H_DRV_COMPLETE, NTP_TS_H_BLK_COMPLETE };

		/* four groups (reads and writes, 4 and 8 KiB); each time a
		 * random length, spread over decades */
		host_rec(&r, n % 3 ? 0x02 : 0x01, 4096u << (n % 2), "nvme0n1", t);
		for (unsigned i = 0; i < sizeof(slot) / sizeof(slot[0]); i++) {
			d += (uint64_t)(random() % 1000) << (random() % 8);
			SET(&r, slot[i], t + d);
		}
		ntp_model_ingest(ma, &r);
		ntp_model_ingest(mb, &r);
		/* a's intervals end after the 10000th and the 20000th record */
		if (n == 9999 || n == 19999)
			ntp_model_close_interval(ma, t + 1, a);
	}
	ntp_model_close_interval(ma, 3 * SEC, a);
	ntp_model_close_interval(mb, 3 * SEC, b);
	ntp_model_total(ma, a);
	ntp_model_total(mb, b);
	assert_int_equal(a->n_groups, 4);
	assert_int_equal(a->n_groups, b->n_groups);
	for (unsigned g = 0; g < a->n_groups; g++) {
		const struct ntp_snap_group *x = &a->groups[g], *y = &b->groups[g];

		assert_int_equal(x->sampled, y->sampled);
		assert_int_equal(x->seen, y->seen);
		assert_true(x->sampled >= 5000);
		assert_true(x->e2e_mean_us == y->e2e_mean_us && x->e2e_p50_us == y->e2e_p50_us &&
			    x->e2e_p99_us == y->e2e_p99_us && x->e2e_p999_us == y->e2e_p999_us);
		assert_true(x->e2e_p50_us < x->e2e_p99_us);
		assert_true(x->busy_rate == y->busy_rate && x->rate == y->rate);
		for (int st = 0; st < NTP_STAGE_COUNT; st++)
			assert_memory_equal(&x->stage[st], &y->stage[st], sizeof(x->stage[st]));
		for (int c = 0; c < NTP_COMP_COUNT; c++)
			assert_memory_equal(&x->comp[c], &y->comp[c], sizeof(x->comp[c]));
	}
	free(a);
	free(b);
	ntp_model_free(ma);
	ntp_model_free(mb);
}

/*
 * A close nobody reads (out NULL: `ntprof report`'s pump) changes the model
 * as a close into a snapshot does, and the total written over memory that
 * held anything is the total written over zeros, up to its n_groups (the
 * groups past it are left as they were: model.h).
 */
static void test_close_unread(void **state)
{
	const size_t tail = offsetof(struct ntp_snapshot, overflow_records);
	struct ntp_snapshot *a, *b;
	struct ntp_model *ma, *mb;
	struct ntp_record r;

	(void)state;
	twin_models(&ma, &mb, &a, &b);
	srandom(7);
	for (unsigned n = 0; n < 6000; n++) {
		uint64_t t = (uint64_t)n * (3 * SEC / 6000);

		host_rec(&r, n % 3 ? 0x02 : 0x01, 4096u << (n % 2), "nvme0n1", t);
		SET(&r, NTP_TS_H_BLK_COMPLETE, t + 100000 + (uint64_t)(random() % 50000));
		ntp_model_ingest(ma, &r);
		ntp_model_ingest(mb, &r);
		if (n == 1999 || n == 3999) {
			ntp_model_close_interval(ma, t + 1, a);
			ntp_model_close_interval(mb, t + 1, NULL);
		}
	}
	ntp_model_close_interval(ma, 3 * SEC, a);
	ntp_model_close_interval(mb, 3 * SEC, NULL);
	memset(a, 0, sizeof(*a));
	memset(b, 0xa5, sizeof(*b));
	ntp_model_total(ma, a);
	ntp_model_total(mb, b);
	assert_int_equal(a->n_groups, 4);
	assert_memory_equal(a, b, offsetof(struct ntp_snapshot, groups));
	assert_memory_equal(a->groups, b->groups, a->n_groups * sizeof(a->groups[0]));
	assert_memory_equal((char *)a + tail, (char *)b + tail, sizeof(*a) - tail);
	assert_int_equal(a->groups[0].sampled + a->groups[1].sampled + a->groups[2].sampled + a->groups[3].sampled,
			 6000);
	free(a);
	free(b);
	ntp_model_free(ma);
	ntp_model_free(mb);
}

/*
 * -s N changed mid-interval (ntprof-top's s key): the estimated rate sums
 * N over the records as each was seen, in the interval and in the run,
 * and an N changed after a close leaves the closed intervals as they were;
 * an interval in which N changed carries the N it began with.
 */
static void test_sampling_change(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 10 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;
	uint64_t t = 0;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	for (unsigned n = 0; n < 150; n++) {
		if (n == 100)
			ntp_model_set_sampling(m, 20);
		host_rec(&r, 0x02, 4096, "nvme0n1", t += 1000);
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, SEC, s);
	assert_int_equal(s->n_groups, 1);
	assert_true(s->groups[0].rate == 100 * 10 + 50 * 20);
	/* the interval says it straddled the change */
	assert_int_equal(s->sampling, 20);
	assert_int_equal(s->sampling_from, 10);
	ntp_model_set_sampling(m, 5);
	ntp_model_set_sampling(m, 7);
	for (unsigned n = 0; n < 10; n++) {
		if (n == 4)
			ntp_model_set_sampling(m, 3);
		host_rec(&r, 0x02, 4096, "nvme0n1", SEC + (t += 1000));
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, 2 * SEC, s);
	assert_true(s->groups[0].rate == 4 * 7 + 6 * 3);
	assert_int_equal(s->sampling, 3);
	assert_int_equal(s->sampling_from, 20);
	ntp_model_set_sampling(m, 1000);	/* after the close: changes nothing closed */
	ntp_model_total(m, s);
	assert_int_equal(s->groups[0].seen, 160);
	assert_true(s->groups[0].rate == (100 * 10 + 50 * 20 + 4 * 7 + 6 * 3) / 2.0);
	ntp_model_close_interval(m, 3 * SEC, s);
	assert_int_equal(s->sampling, 1000);
	assert_int_equal(s->sampling_from, 3);
	ntp_model_close_interval(m, 4 * SEC, s);
	assert_int_equal(s->sampling, 1000);
	assert_int_equal(s->sampling_from, 0);	/* no change in this one */
	free(s);
	ntp_model_free(m);
}

/* End-to-end times below zero: one machine's clock (CLOCK_MONOTONIC) read
 * backwards, a damaged time in a record whose CRC holds. Such a command is
 * left out and counted with the incomplete ones (docs/reports.md), host-only
 * (the general code) and joined (the fast path; a negative target residence
 * too): the mean and quantiles are those of the others, not wrecked by one
 * huge negative value. Before, they were kept, and a single one made a
 * group's mean -4785044.89 us. */
static void test_negative_e2e(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	for (int i = 0; i < 400; i++) {
		uint64_t t0 = 10 * SEC + (uint64_t)i * 1000000;

		host_rec(&r, 0x02, 4096, "nvme0n1", t0);
		if (i % 4 != 3)	/* three in four: 50 us before their submission */
			SET(&r, NTP_TS_H_BLK_COMPLETE, t0 - 50000);
		ntp_model_ingest(m, &r);
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			ntp_model_close_interval(m, 11 * SEC, s);
		else
			ntp_model_total(m, s);
		assert_int_equal(s->n_groups, 1);
		assert_int_equal(s->groups[0].seen, 400);
		assert_int_equal(s->groups[0].sampled, 100);
		assert_int_equal(s->groups[0].incomplete_records, 300);
		/* the 100 x +100 us left */
		assert_true(s->groups[0].e2e_mean_us == 100.0);
		assert_true(s->groups[0].e2e_p50_us > 100.0 * 0.99 && s->groups[0].e2e_p50_us < 100.0 * 1.01);
	}
	free(s);
	ntp_model_free(m);
}

/* A histogram's chunk not had (out of memory): the snapshots say so, from
 * the interval whose counts were lost on (the flag stays: the run's total
 * lacks them too); the counts and means are whole. */
static void *realloc_fails(void *p, size_t size)
{
	(void)p;
	(void)size;
	return NULL;
}

static void test_oom_said(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	host_rec(&r, 0x02, 4096, "nvme0n1", 1000);
	ntp_model_ingest(m, &r);
	ntp_model_close_interval(m, SEC, s);
	assert_int_equal(s->oom, 0);
	assert_int_equal(s->oom_records, 0);
	ntp_hset_realloc = realloc_fails;
	for (int i = 0; i < 10; i++) {
		/* a latency the first interval's chunks do not hold */
		host_rec(&r, 0x02, 4096, "nvme0n1", SEC + (uint64_t)i * 1000);
		r.ts[NTP_TS_H_BLK_COMPLETE] += 50 * SEC;
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, 2 * SEC, s);
	ntp_hset_realloc = realloc;
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->groups[0].sampled, 10);
	assert_true(s->groups[0].e2e_mean_us > 50e6);
	ntp_model_close_interval(m, 3 * SEC, s);
	assert_int_equal(s->oom, 1);
	ntp_model_total(m, s);
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->groups[0].sampled, 11);
	free(s);
	ntp_model_free(m);
}

/* realloc until the call numbered fail_from (counted in calls), NULL from it on */
static unsigned calls, fail_from = ~0u;

static void *realloc_counted(void *p, size_t size)
{
	return ++calls >= fail_from ? NULL : realloc(p, size);
}

/* A chunk the run's histograms could not have when an interval is merged
 * into them (the second close on, model.c ntp_model_close_interval) is
 * said by that close and every later one, not only by the run's total:
 * the interval's own chunks had (its first realloc at the close), the
 * merge's failing. */
static void test_oom_at_merge(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1,
					.no_quantiles = NTP_MODEL_NO_STAGE_Q | NTP_MODEL_NO_COMP_Q };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	static const uint64_t lat[3] = { 40 * SEC, 1000000, 300000000 };
	struct ntp_record r;
	unsigned before;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	calls = 0;
	fail_from = ~0u;
	ntp_hset_realloc = realloc_counted;
	ntp_model_set_start(m, 0);
	host_rec(&r, 0x02, 4096, "nvme0n1", 1000);
	ntp_model_ingest(m, &r);
	ntp_model_close_interval(m, SEC, s);
	assert_int_equal(s->oom, 0);
	/* latencies far from the first interval's chunk */
	for (int i = 0; i < 3; i++) {
		host_rec(&r, 0x02, 4096, "nvme0n1", SEC + 1000 * (uint64_t)(i + 1));
		r.ts[NTP_TS_H_BLK_COMPLETE] += lat[i];
		ntp_model_ingest(m, &r);
	}
	before = calls;
	fail_from = calls + 2;
	ntp_model_close_interval(m, 2 * SEC, s);
	assert_true(calls - before >= 2);	/* the merge asked, and was refused */
	fail_from = ~0u;
	assert_int_equal(s->oom, 1);
	ntp_model_close_interval(m, 3 * SEC, s);
	assert_int_equal(s->oom, 1);
	ntp_model_total(m, s);
	ntp_hset_realloc = realloc;
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->groups[0].sampled, 4);
	free(s);
	ntp_model_free(m);
}

static void *acc_map_fails(void **arena, unsigned i)
{
	(void)arena;
	(void)i;
	return NULL;
}

/* A group whose accumulators cannot be had is not made: its records are
 * counted as oom_records (not as the overflow's: there is room for more
 * groups) and oom is said; once memory is back, the group's next record
 * makes it (a key of no group is not cached while groups are left,
 * model.c group_of). */
static void test_oom_group(void **state)
{
	void *(*const acc_map_default)(void **, unsigned) = ntp_model_acc_map;
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	host_rec(&r, 0x02, 4096, "nvme0n1", 1000);
	ntp_model_ingest(m, &r);
	ntp_model_acc_map = acc_map_fails;
	for (int i = 0; i < 5; i++) {
		host_rec(&r, 0x02, 4096, "nvme1n1", 2000 + (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
		host_rec(&r, 0x02, 4096, "nvme0n1", 2500 + (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, SEC, s);
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->oom_records, 5);
	assert_int_equal(s->overflow_records, 0);
	assert_int_equal(s->n_groups, 1);
	assert_string_equal(s->groups[0].dev, "nvme0n1");
	assert_int_equal(s->groups[0].sampled, 6);
	ntp_model_acc_map = acc_map_fails;
	host_rec(&r, 0x02, 4096, "nvme1n1", SEC + 1000);
	ntp_model_ingest(m, &r);
	ntp_model_acc_map = acc_map_default;
	for (int i = 0; i < 3; i++) {
		host_rec(&r, 0x02, 4096, "nvme1n1", SEC + 2000 + (uint64_t)i * 1000);
		ntp_model_ingest(m, &r);
	}
	ntp_model_close_interval(m, 2 * SEC, s);
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->oom_records, 6);
	assert_int_equal(s->overflow_records, 0);
	assert_int_equal(s->n_groups, 2);
	for (unsigned g = 0; g < 2; g++)
		if (!strcmp(s->groups[g].dev, "nvme1n1"))
			assert_int_equal(s->groups[g].sampled, 3);
		else
			assert_int_equal(s->groups[g].sampled, 0);
	ntp_model_total(m, s);
	assert_int_equal(s->oom, 1);
	assert_int_equal(s->oom_records, 6);
	assert_int_equal(s->n_groups, 2);
	free(s);
	ntp_model_free(m);
}

/* A joined command of key (1, 1, cid): host record h and its target twin t. */
static void joined_cmd(struct ntp_record *h, struct ntp_record *t, uint8_t opcode, uint32_t len, uint16_t cid,
		       uint64_t t0)
{
	host_rec(h, opcode, len, "nvme1n1", t0);
	h->transport = NTP_TRANSPORT_TCP;
	h->nsid = 1;
	h->slba = t0 / 1000;
	h->cntlid = 1;
	h->qid = 1;
	h->cid = cid;
	memset(t, 0, sizeof(*t));
	t->side = NTP_SIDE_TARGET;
	t->transport = NTP_TRANSPORT_TCP;
	t->opcode = opcode;
	t->nsid = 1;
	t->len = len;
	t->slba = h->slba;
	t->cntlid = 1;
	t->qid = 1;
	t->cid = cid;
	snprintf(t->dev, sizeof(t->dev), "nullb0");
	SET(t, NTP_TS_T_CMD_ARRIVE, t0 + 8000);
	SET(t, NTP_TS_T_CMD_RECV, t0 + 10000);
	SET(t, NTP_TS_T_STORAGE_SUBMIT, t0 + 11000);
	SET(t, NTP_TS_T_STORAGE_DONE, t0 + 80000);
	SET(t, NTP_TS_T_RSP_SENT, t0 + 81000);
}

/*
 * A target-only run: records whose completion was not seen have neither
 * device nor length (bpf close_missed). One of a namespace id another
 * record named goes to that record's group, its length from its LBA count;
 * one of an id none named, to a group that says it knows neither, not a
 * "read 0B ?". The report's label says the same.
 */
static void test_target_no_device(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_TARGET, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record h, t;
	char label[64];

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	for (int i = 0; i < 4; i++) {
		joined_cmd(&h, &t, 0x02, 4096, (uint16_t)i, 10 * SEC + (uint64_t)i * 200000);
		t.nlb = 7;	/* 8 LBAs of 512 bytes */
		if (i >= 2) {
			/* the completion not seen: closed when its slot was reused */
			memset(t.dev, 0, sizeof(t.dev));
			t.len = 0;
			t.nlb = i == 2 ? 7 : 15;
			t.flags |= NTP_REC_F_CLOSED_MISSED;
			t.ts_valid &= ~(1u << NTP_TS_T_STORAGE_DONE);
		}
		ntp_model_ingest(m, &t);
	}
	/* a namespace no record named */
	joined_cmd(&h, &t, 0x02, 4096, 9, 11 * SEC);
	memset(t.dev, 0, sizeof(t.dev));
	t.len = 0;
	t.nsid = 2;
	ntp_model_ingest(m, &t);
	ntp_model_close_interval(m, 12 * SEC, s);
	assert_int_equal(s->n_groups, 3);
	/* sorted by size: the unknown (0), 4K, 8K */
	assert_int_equal(s->groups[0].len, 0);
	assert_string_equal(s->groups[0].dev, "");
	assert_int_equal(s->groups[0].seen, 1);
	ntp_group_label(&s->groups[0], label, sizeof(label));
	assert_string_equal(label, "read, size and namespace unknown");
	assert_int_equal(s->groups[1].len, 4096);
	assert_string_equal(s->groups[1].dev, "nullb0");
	assert_int_equal(s->groups[1].seen, 3);
	assert_int_equal(s->groups[1].missed_records, 1);
	assert_int_equal(s->groups[2].len, 8192);
	assert_string_equal(s->groups[2].dev, "nullb0");
	assert_int_equal(s->groups[2].seen, 1);
	ntp_group_label(&s->groups[2], label, sizeof(label));
	assert_string_equal(label, "read 8KiB nullb0");
	free(s);
	ntp_model_free(m);
}

static const struct ntp_snap_group *group_io_len(const struct ntp_snapshot *s, uint8_t io, uint32_t len);

/*
 * Two subsystems, each with a namespace 1: while the other's device is
 * known only from the totals (its id not told by any record), a record
 * without its device may be either's and goes to neither; once a record of
 * the other device names its id (2 here), the first device is the only
 * one of id 1 again.
 */
static void test_target_no_device_other_subsystem(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_TARGET, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	/* nullb1's 4 KiB reads are sampled below, its 1 MiB writes never */
	struct ntp_total tt[2] = { total(NTP_IO_READ, 4096, "nullb1", 100), total(NTP_IO_WRITE, 1 << 20, "nullb1", 3) };
	struct ntp_record h, t, lost;
	const struct ntp_snap_group *g;
	bool seen_nullb0 = false;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	tt[0].key.side = tt[1].key.side = NTP_SIDE_TARGET;
	joined_cmd(&h, &t, 0x02, 4096, 1, 10 * SEC);
	t.nlb = 7;
	ntp_model_ingest(m, &t);		/* nullb0 learns namespace id 1 */
	ntp_model_set_totals(m, tt, 2, 11 * SEC);
	ntp_model_close_interval(m, 11 * SEC, s);	/* nullb1's groups, from the totals */
	lost = t;
	lost.cid = 2;
	lost.ts[NTP_TS_T_CMD_ARRIVE] += 100000;
	memset(lost.dev, 0, sizeof(lost.dev));
	lost.len = 0;
	ntp_model_ingest(m, &lost);
	ntp_model_close_interval(m, 12 * SEC, s);
	g = group_io_len(s, NTP_IO_READ, 0);
	assert_string_equal(g->dev, "");
	assert_int_equal(g->seen, 1);
	/* nullb1 tells its id: the next one is nullb0's */
	joined_cmd(&h, &t, 0x02, 4096, 3, 12 * SEC);
	t.nlb = 7;
	t.nsid = 2;
	snprintf(t.dev, sizeof(t.dev), "nullb1");
	ntp_model_ingest(m, &t);
	lost.cid = 4;
	lost.ts[NTP_TS_T_CMD_ARRIVE] = 12 * SEC + 100000;
	ntp_model_ingest(m, &lost);
	ntp_model_close_interval(m, 13 * SEC, s);
	for (uint32_t i = 0; i < s->n_groups; i++)
		if (!strcmp(s->groups[i].dev, "nullb0")) {
			assert_int_equal(s->groups[i].seen, 1);
			seen_nullb0 = true;
		}
	assert_true(seen_nullb0);
	free(s);
	ntp_model_free(m);
}

/* The totals make groups in half the table at most: the rest stays for
 * the groups that records make. */
static void test_counted_groups_half_table(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP, .sampling = 1000 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_total t[NTP_SNAP_MAX_GROUPS];
	struct ntp_record r;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 10 * SEC);
	for (int i = 0; i < NTP_SNAP_MAX_GROUPS; i++)
		t[i] = total(NTP_IO_READ, 4096u * (uint32_t)(i + 1), "nvme1n1", 100);
	ntp_model_set_totals(m, t, NTP_SNAP_MAX_GROUPS, 11 * SEC);
	ntp_model_close_interval(m, 11 * SEC, s);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS / 2);
	/* a record of another key still has its group */
	host_rec(&r, 0x02, 512, "nvme2n1", 11 * SEC + 1000);
	ntp_model_ingest(m, &r);
	ntp_model_close_interval(m, 12 * SEC, s);
	assert_int_equal(s->n_groups, NTP_SNAP_MAX_GROUPS / 2 + 1);
	free(s);
	ntp_model_free(m);
}

static const struct ntp_snap_group *group_io_len(const struct ntp_snapshot *s, uint8_t io, uint32_t len)
{
	for (uint32_t g = 0; g < s->n_groups; g++)
		if (s->groups[g].io == io && s->groups[g].len == len)
			return &s->groups[g];
	fail_msg("no group io %u len %u", io, len);
	return NULL;
}

/*
 * Host records whose target never came, each counted in its own group: one
 * dropped when a later command of its key (another size) matched on the host
 * side, one dropped when a later command of its key (another I/O type)
 * matched on the target side, one still waiting at the end of input.
 */
static void test_unmatched_own_group(void **state)
{
	struct ntp_model_config cfg = { .role = NTP_ROLE_BOTH, .transport = NTP_TRANSPORT_TCP, .sampling = 1 };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_snapshot *s = malloc(sizeof(*s));
	struct ntp_record h, t;
	const struct ntp_snap_group *g;

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ntp_model_set_start(m, 0);
	/* read 4 KiB, cid 5: its target never comes; then read 128 KiB, cid
	 * 5: the target first, then the host, which drops the 4 KiB one */
	joined_cmd(&h, &t, 0x02, 4096, 5, 1000000);
	ntp_model_ingest(m, &h);
	joined_cmd(&h, &t, 0x02, 131072, 5, 2000000);
	ntp_model_ingest(m, &t);
	ntp_model_ingest(m, &h);
	/* write 4 KiB, cid 6, never joined; read 4 KiB, cid 6: its host
	 * record, then the target, which drops the write */
	joined_cmd(&h, &t, 0x01, 4096, 6, 3000000);
	ntp_model_ingest(m, &h);
	joined_cmd(&h, &t, 0x02, 4096, 6, 4000000);
	ntp_model_ingest(m, &h);
	ntp_model_ingest(m, &t);
	/* read 4 KiB, cid 7: still waiting at the end */
	joined_cmd(&h, &t, 0x02, 4096, 7, 5000000);
	ntp_model_ingest(m, &h);
	ntp_model_close_interval(m, SEC, s);
	ntp_model_total(m, s);
	assert_int_equal(s->matched, 2);
	assert_int_equal(s->unmatched_host, 3);
	assert_int_equal(s->unmatched_target, 0);
	g = group_io_len(s, NTP_IO_READ, 4096);
	assert_int_equal(g->seen, 3);
	assert_int_equal(g->unmatched, 2);
	g = group_io_len(s, NTP_IO_READ, 131072);
	assert_int_equal(g->seen, 1);
	assert_int_equal(g->unmatched, 0);
	g = group_io_len(s, NTP_IO_WRITE, 4096);
	assert_int_equal(g->seen, 1);
	assert_int_equal(g->unmatched, 1);
	/* in every group, a host record matched or its target never came */
	for (uint32_t k = 0; k < s->n_groups; k++)
		assert_int_equal(s->groups[k].seen,
				 s->groups[k].sampled + s->groups[k].incomplete_records + s->groups[k].unmatched);
	free(s);
	ntp_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intervals_and_totals),
		cmocka_unit_test(test_estimated_rate_and_order),
		cmocka_unit_test(test_many_groups),
		cmocka_unit_test(test_group_cache),
		cmocka_unit_test(test_group_cache_full),
		cmocka_unit_test(test_group_cache_opcodes),
		cmocka_unit_test(test_group_cache_collide),
		cmocka_unit_test(test_group_cache_left_out),
		cmocka_unit_test(test_total_of_intervals),
		cmocka_unit_test(test_close_unread),
		cmocka_unit_test(test_sampling_change),
		cmocka_unit_test(test_negative_e2e),
		cmocka_unit_test(test_oom_said),
		cmocka_unit_test(test_oom_at_merge),
		cmocka_unit_test(test_oom_group),
		cmocka_unit_test(test_unmatched_own_group),
		cmocka_unit_test(test_counted_before_sampled),
		cmocka_unit_test(test_target_no_device),
		cmocka_unit_test(test_target_no_device_other_subsystem),
		cmocka_unit_test(test_counted_groups_half_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
