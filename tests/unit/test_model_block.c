// SPDX-License-Identifier: GPL-2.0
/* test_model_block.c - a block fed whole (ntp_model_ingest_block: records
 * that wait for their twin held by reference until the block's end) gives
 * the snapshots of the same records fed one at a time (ntp_model_ingest),
 * every field of every interval and of the run: blocks of random sizes,
 * overwritten after each call (a record not copied at the block's end
 * would read as garbage), on a joined stream with twins that never come
 * (dropped target records), responses unseen, several hosts and queues,
 * and a join window small enough that records expire; and the same
 * stream read by a host's or a target's model (its loop without the
 * join). The same for batches of pointers (ntp_model_ingest_refs, as
 * merge.c's drain hands a join's records over): the host's and the
 * target's records in two buffers (two files' blocks), both overwritten
 * after each call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/model/model.h"
#include "core/synth/synth.h"

#define BLOCK_MAX 300
#define CLOSE_EVERY 7001	/* records between interval closes (inside blocks' runs) */

static struct ntp_synth *stream(uint64_t seed, double drop_target)
{
	struct ntp_synth_config c;
	struct ntp_synth *s;
	char err[256];

	ntp_synth_defaults(&c);
	c.seed = seed;
	c.count = 30000;
	c.duration_ns = 0;
	c.sampling = 1;
	c.transport = NTP_TRANSPORT_TCP;
	c.read_pct = 60;
	c.sizes[0] = 4096;
	c.sizes[1] = 65536;
	c.nsizes = 2;
	c.hosts = 3;
	c.queues = 2;
	c.qd = 16;
	c.miss_rsp_sent = 0.05;
	c.drop_target = drop_target;
	s = ntp_synth_new(&c, err, sizeof(err));
	assert_non_null(s);
	return s;
}

enum feed { ONE_BY_ONE, BLOCKS, REFS };

/* The stream's snapshots: an interval after every CLOSE_EVERY records and
 * at the end, into iv[] (n_iv of them), the run's into *all, the records
 * still pending before the end into *pending; fed as feed says. */
static void run(uint8_t role, uint64_t seed, double drop_target, uint32_t window, enum feed block,
		struct ntp_snapshot *iv, size_t max_iv, size_t *n_iv, struct ntp_snapshot *all, size_t *pending)
{
	struct ntp_model_config cfg = { .role = role, .transport = NTP_TRANSPORT_TCP, .sampling = 1,
					.join_window = window };
	struct ntp_model *m = ntp_model_new(&cfg);
	struct ntp_synth *s = stream(seed, drop_target);
	/* a block, or (REFS) the two files' blocks and the batch in stream order */
	static struct ntp_record buf[BLOCK_MAX], tbuf[BLOCK_MAX];
	static const struct ntp_record *batch[BLOCK_MAX];
	size_t nh = 0, nt = 0;
	struct ntp_record r;
	size_t in = 0, want = 1, fed = 0;
	uint64_t t, last = 0;
	enum ntp_synth_event ev;

	assert_non_null(m);
	ntp_model_set_start(m, 0);
	srandom((unsigned)seed);
	*n_iv = 0;
	for (;;) {
		int end = (ev = ntp_synth_next(s, &r, &t)) == NTP_SYNTH_END;

		if (!end && ev != NTP_SYNTH_RECORD)
			continue;
		if (!end) {
			if (r.ts[NTP_TS_H_BLK_SUBMIT] > last)
				last = r.ts[NTP_TS_H_BLK_SUBMIT];
			if (block == BLOCKS)
				buf[in++] = r;
			else if (block == REFS && r.side == NTP_SIDE_HOST) {
				buf[nh] = r;
				batch[in++] = &buf[nh++];
			} else if (block == REFS) {
				tbuf[nt] = r;
				batch[in++] = &tbuf[nt++];
			} else
				ntp_model_ingest(m, &r);
			fed++;
		}
		if (block && in && (end || in == want || fed % CLOSE_EVERY == 0)) {
			if (block == REFS)
				ntp_model_ingest_refs(m, batch, in);
			else
				ntp_model_ingest_block(m, buf, in);
			memset(buf, 0xa5, sizeof(buf));
			memset(tbuf, 0x5a, sizeof(tbuf));
			in = nh = nt = 0;
			want = 1 + (size_t)random() % BLOCK_MAX;
		}
		if (end)
			*pending = ntp_model_pending(m);
		if (end || fed % CLOSE_EVERY == 0) {
			assert_true(*n_iv < max_iv);
			ntp_model_close_interval(m, last + 1, &iv[(*n_iv)++]);
		}
		if (end)
			break;
	}
	ntp_model_total(m, all);
	ntp_synth_free(s);
	ntp_model_free(m);
}

/* fed as feed says, the snapshots of the records fed one at a time */
static void same(enum feed feed, uint8_t role, uint64_t seed, double drop_target, uint32_t window)
{
	enum { MAX_IV = 16 };
	struct ntp_snapshot *iv = calloc(MAX_IV, sizeof(*iv)), *iv_b = calloc(MAX_IV, sizeof(*iv_b));
	struct ntp_snapshot *all = calloc(1, sizeof(*all)), *all_b = calloc(1, sizeof(*all_b));
	size_t n, n_b, pending, pending_b;

	assert_true(iv && iv_b && all && all_b);
	run(role, seed, drop_target, window, ONE_BY_ONE, iv, MAX_IV, &n, all, &pending);
	run(role, seed, drop_target, window, feed, iv_b, MAX_IV, &n_b, all_b, &pending_b);
	assert_true(n > 3);
	assert_int_equal(n, n_b);
	for (size_t i = 0; i < n; i++)
		assert_memory_equal(&iv[i], &iv_b[i], sizeof(iv[i]));
	assert_memory_equal(all, all_b, sizeof(*all));
	assert_int_equal(pending, pending_b);
	if (role != NTP_ROLE_BOTH) {
		/* one side's commands, each its own */
		assert_true(all->n_groups > 0 && all->groups[0].sampled > 1000);
		assert_int_equal(all->matched, 0);
	} else {
		/* the stream joined commands, and some never found their twin */
		assert_true(all->matched > 10000);
		if (drop_target > 0 || (window && window < 64))
			assert_true(all->unmatched_host > 0);
	}
	free(iv);
	free(iv_b);
	free(all);
	free(all_b);
}

static void joined(enum feed feed)
{
	same(feed, NTP_ROLE_BOTH, 1, 0, 0);		/* the default window */
	same(feed, NTP_ROLE_BOTH, 2, 0.1, 0);		/* twins that never come */
	same(feed, NTP_ROLE_BOTH, 3, 0.05, 16);	/* records expire from a window of 16 */
	same(feed, NTP_ROLE_BOTH, 4, 0.2, 64);
}

static void one_side(enum feed feed)
{
	same(feed, NTP_ROLE_HOST, 5, 0.1, 0);
	same(feed, NTP_ROLE_TARGET, 6, 0.1, 0);
}

static void test_block_equals_one_by_one(void **state)
{
	(void)state;
	joined(BLOCKS);
}

static void test_block_one_side(void **state)
{
	(void)state;
	one_side(BLOCKS);
}

static void test_refs_equal_one_by_one(void **state)
{
	(void)state;
	joined(REFS);
}

static void test_refs_one_side(void **state)
{
	(void)state;
	one_side(REFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_equals_one_by_one),
		cmocka_unit_test(test_block_one_side),
		cmocka_unit_test(test_refs_equal_one_by_one),
		cmocka_unit_test(test_refs_one_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
