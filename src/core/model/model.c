// SPDX-License-Identifier: GPL-2.0
/*
 * model.c - the reducer: records -> (join) -> breakdown -> per-group
 * accumulators -> snapshots. Memory is per group (lazily allocated, at most
 * NTP_SNAP_MAX_GROUPS) plus the bounded join window: it does not grow with
 * the number of records.
 *
 * Role host: every host record is reported host-only. Role target: every
 * target record target-only. Role both: a host record enters the statistics
 * only joined with its target twin; either side may come first (in one
 * stream a target record usually precedes its host twin, but over RDMA the
 * target's send completion can come later), so both sides wait in a bounded
 * pending structure (pending.h).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "hist.h"
#include "../hugemem.h"
#include "model.h"
#include "occ.h"
#include "pending_int.h"

#define MAX_TOTALS 512

/* the components of the common joined flow (stage.h NTP_FAST_COMPS), in
 * ascending order (acc_add's, for the histograms) */
static const uint8_t fast_comp[] = {
	NTP_COMP_HOST_BLK_SUB, NTP_COMP_HOST_DRV_SUB, NTP_COMP_WIRE, NTP_COMP_TGT_RECV_CMD,
	NTP_COMP_TGT_DRV_SUB, NTP_COMP_STORAGE, NTP_COMP_TGT_DRV_COMP, NTP_COMP_HOST_RECV_RSP,
	NTP_COMP_HOST_DRV_COMP, NTP_COMP_HOST_BLK_COMP,
};
enum { FAST_N = sizeof(fast_comp) };

/* The timestamps a fast flow's components are differences of (stage.h
 * ntp_fast_compute), the host's seven from its record, then the target's
 * five from its, taken in pairs: a pair of adjacent slots of one record is
 * one 16-byte load, and the two pairs left (the host's CMD_SENT with the
 * target's CMD_ARRIVE, the target's CMD_RECV with its RSP_SENT) two loads
 * each. A sum of differences is the difference of the sums (wrapping, any
 * 64-bit times), so a command adds six pairs of timestamps, one vector add
 * each, and a close makes the components' sums from them (acc_flush).
 * BLK_SUBMIT's sum is that of the host's starts (stage.h ntp_fast_start:
 * the bio's submission where a record has it), which acc_flush gives
 * ntp_fast_compute as a record's BLK_SUBMIT without the bio. */
static const uint8_t fast_ts[] = {
	NTP_TS_H_BLK_SUBMIT, NTP_TS_H_DRV_SUBMIT, NTP_TS_H_RSP_ARRIVE, NTP_TS_H_RSP_DRV,
	NTP_TS_H_DRV_COMPLETE, NTP_TS_H_BLK_COMPLETE, NTP_TS_H_CMD_SENT, NTP_TS_T_CMD_ARRIVE,
	NTP_TS_T_CMD_RECV, NTP_TS_T_RSP_SENT, NTP_TS_T_STORAGE_SUBMIT, NTP_TS_T_STORAGE_DONE,
};
enum { FAST_TS = sizeof(fast_ts), FAST_TS_HOST = 7 };
/* a pair of one record's adjacent slots: one load */
#define FAST_PAIR_ONE(k) ((((k) + 1 < FAST_TS_HOST) == ((k) < FAST_TS_HOST)) && fast_ts[(k) + 1] == fast_ts[k] + 1)
_Static_assert(NTP_TS_H_DRV_SUBMIT == NTP_TS_H_BLK_SUBMIT + 1 && NTP_TS_H_RSP_DRV == NTP_TS_H_RSP_ARRIVE + 1 &&
	       NTP_TS_H_BLK_COMPLETE == NTP_TS_H_DRV_COMPLETE + 1 &&
	       NTP_TS_T_STORAGE_DONE == NTP_TS_T_STORAGE_SUBMIT + 1 && FAST_TS % 2 == 0,
	       "fast_ts[]'s pairs of one record are adjacent slots");

struct group;

struct acc {
	/* what a command of the common flow touches, in two cache lines (64
	 * groups' accumulators share the first-level cache with the file's
	 * pages): the counts, the span and the flow's sums. sampled's top bit
	 * is ACC_SLOW: the next common flow's command must first set the run's
	 * masks or the group's tdev (fast_prep), one test of the count it adds
	 * to instead of the masks and tdev_known read on another line */
	uint64_t seen, sampled;
	/* the first sampled submission negated (0: none; lo 0 is none too),
	 * so that the earliest is the largest: one compare, no test for
	 * none; the last completion (0: none) */
	uint64_t span_nlo, span_hi;
	/* the common joined flow's timestamp sums (account_fast), that of
	 * fast_ts[k] at k; acc_flush makes its components' sums from them and
	 * adds them into c_sum, and into st_sum of each one's stage (a stage
	 * is the sum of its components, stage.h), and its end to end into
	 * e2e_sum, so no stage or component is added per command (st_sum and
	 * c_sum span four lines). */
	uint64_t fast_ts_sum[FAST_TS] __attribute__((aligned(16)));
	/* commands with each stage and component: st_n/c_n, plus the run of
	 * commands of the last presence masks not yet added in (run_flush):
	 * sampled (without ACC_SLOW) less run_base; commands of one group
	 * have one or two masks, so a command counts one run, not a counter
	 * per stage and component */
	uint32_t run_st_mask, run_c_mask;
	uint64_t run_base;
	/* its group, and whether the group's tdev is set (acc_bind): the
	 * group lookup answers with the accumulator (gc_ent), so that a
	 * command reads its group's line only in the rare cases (the
	 * target's device not known yet, unmatched records) */
	struct group *grp;
	int tdev_known;
	int general;			/* the model's general_only: ACC_SLOW stays set */
	/* sums over every command, an absent one adding 0 (stage.h): one
	 * vector add per pair, no branch per stage or component */
	int64_t st_sum[NTP_STAGE_COUNT + 1] __attribute__((aligned(16)));
	int64_t c_sum[NTP_COMP_COUNT + 1] __attribute__((aligned(16)));
	int64_t e2e_sum;
	uint64_t fallback, incomplete, missed;
	uint64_t bio;	/* host records whose end to end starts at the bio (H_BIO_SUBMIT) */
	/* their waits for a tag, BLK_SUBMIT - BIO_SUBMIT summed (wrapping, as
	 * the other sums), where both are seen: the what-if takes it out of
	 * the host block layer's station (docs/what-if.md, "The host's tags") */
	uint64_t tag_wait_sum;
	/* sum of N over the records seen (N may change mid-run), up to the
	 * seen_n-th: the rest were seen under the model's N (acc_est), so
	 * that a record adds 1 to seen, not N to this too */
	uint64_t est_cmds, seen_n;
	uint64_t st_n[NTP_STAGE_COUNT];
	uint64_t c_n[NTP_COMP_COUNT];
	/* e2e, the stages and the components: sparse (hist.h), so a group
	 * holds the chunks its latencies use, not two dozen dense histograms;
	 * last (acc_reset) */
	struct ntp_hset h __attribute__((aligned(64)));	/* its chunks, counts and e2e's first chunks in one line */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct acc, fast_ts_sum) + sizeof(((struct acc *)0)->fast_ts_sum) <= 128,
	       "what a command of the common flow touches fits two lines");
#define ACC_SLOW (1ull << 63)
/* no histogram kept but the end to end's: a report's text */
#define NOQ_ALL (NTP_MODEL_NO_STAGE_Q | NTP_MODEL_NO_COMP_Q)

/* a's sampled commands (without the ACC_SLOW bit) */
static inline uint64_t acc_sampled(const struct acc *a)
{
	return a->sampled & ~ACC_SLOW;
}

/* ACC_SLOW as a's run masks and tdev_known say: after any change of them */
static void acc_slow(struct acc *a)
{
	int slow = a->run_st_mask != NTP_FAST_STAGES || a->run_c_mask != NTP_FAST_COMPS || !a->tdev_known ||
		   a->general;

	a->sampled = acc_sampled(a) | (slow ? ACC_SLOW : 0);
}
enum { H_E2E = 0, H_ST = 1, H_C = H_ST + NTP_STAGE_COUNT, H_COUNT = H_C + NTP_COMP_COUNT };
_Static_assert(H_COUNT <= NTP_HSET_MAX, "a group's histograms fit one set");

/* The sum of N over the records a has seen, N the model's since seen_n. */
static uint64_t acc_est(const struct acc *a, uint32_t n)
{
	return a->est_cmds + (a->seen - a->seen_n) * n;
}

/* est_cmds brought up to date (before N changes, and at a close: a
 * closed accumulator's est_cmds is its sum whatever N becomes) */
static void acc_fold(struct acc *a, uint32_t n)
{
	a->est_cmds = acc_est(a, n);
	a->seen_n = a->seen;
}

/*
 * An accumulator's end to end histogram of non-negative values, dense, at a
 * fixed offset after it (acc_e2e: no pointer to load, no directory line
 * to read: a command of 64 interleaved groups touches a line less), folded
 * into the set's H_E2E at a close (acc_flush) and left zeroed. The
 * accumulator and it are ACC_MAP bytes of anonymous memory (acc_map):
 * pages of zeros made resident by the first write, so the buckets a group
 * never uses cost no memory. Each group's starts at its own offset in its first page
 * (ACC_COLOR): at the same offset, every group's first lines, and their
 * buckets of the same latency, would share one set of the first-level
 * cache (its set is the address modulo a page).
 */
#define ACC_E2E_OFF (((sizeof(struct acc) + 63) / 64) * 64)
#define ACC_PAGE 4096u
#define ACC_MAP ((ACC_E2E_OFF + NTP_HIST_BUCKETS * sizeof(uint32_t) + ACC_PAGE - 1) / ACC_PAGE * ACC_PAGE + ACC_PAGE)
/* the offset in its page of group i's accumulators: two lines apart, the
 * two lines a common command touches */
#define ACC_COLOR(i) (((unsigned)(i) * 128u) % ACC_PAGE)

static inline uint32_t *acc_e2e(struct acc *a)
{
	return (uint32_t *)(void *)((char *)a + ACC_E2E_OFF);
}

/*
 * A group's two accumulators (cur and all) are one slot of ACC_GROUP bytes,
 * all ACC_MAP apart. The slots are one mapping per model (the arena,
 * mapped at the first group for every group it may have): a mapping and
 * an unmapping per accumulator were 128 system calls each for 64 groups,
 * the unmappings a third of what the groups added to a report's time
 * (docs/performance.md). The arena is address space: only the pages
 * touched are memory, 2 MiB at a time where it has huge pages (hugemem.h),
 * 4 KiB where not.
 */
#define ACC_GROUP (2 * ACC_MAP)
#define ACC_ARENA ((size_t)NTP_SNAP_MAX_GROUPS * ACC_GROUP)

/* The sanitized build (make check) takes each group's slot from the heap,
 * which AddressSanitizer watches (a write past it, a slot never let go);
 * the others map the arena, for the pages never touched. */
#if defined(__SANITIZE_ADDRESS__)
#define ACC_FROM_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACC_FROM_HEAP 1
#endif
#endif

static void *acc_map(void **arena, unsigned i)
{
#ifdef ACC_FROM_HEAP
	void *p = NULL;

	(void)arena;
	(void)i;
	if (posix_memalign(&p, ACC_PAGE, ACC_GROUP))
		return NULL;
	return memset(p, 0, ACC_GROUP);
#else
	/* In huge pages where the kernel has them: each group's first
	 * writes and reads of its zeroed pages were page faults of their
	 * own, four to six a group, a fault dear where page tables are a
	 * hypervisor's (docs/performance.md, "The groups' memory") */
	if (!*arena && !(*arena = ntp_huge_map(ACC_ARENA)))
		return NULL;
	return (char *)*arena + (size_t)i * ACC_GROUP;
#endif
}

void *(*ntp_model_acc_map)(void **arena, unsigned i) = acc_map;

/* Group i's zeroed accumulators, cur and all (acc_unmap releases them). */
static int acc_new_pair(void **arena, unsigned i, struct acc **cur, struct acc **all)
{
	char *p = ntp_model_acc_map(arena, i);

	if (!p)
		return -1;
	*cur = (struct acc *)(void *)(p + ACC_COLOR(i));
	*all = (struct acc *)(void *)(p + ACC_MAP + ACC_COLOR(i));
	return 0;
}

/* a's histograms' chunks; the accumulators' memory goes with acc_unmap */
static void acc_free(struct acc *a)
{
	if (a)
		ntp_hset_free(&a->h);
}

/* The memory of a group's accumulators (after acc_free of both): its heap
 * slot, at the lower of the two (they swap at a close); the arena goes
 * whole with the model (ntp_model_free). */
static void acc_unmap(struct acc *a, struct acc *b)
{
#ifdef ACC_FROM_HEAP
	uintptr_t lo = (uintptr_t)(a < b ? a : b);

	free((void *)(lo & ~(uintptr_t)(ACC_PAGE - 1)));
#else
	(void)a;
	(void)b;
#endif
}

/* The end to end's v into a's histograms: a negative one into the set's
 * mirrored buckets (none comes from ingest: stage.c and account_fast
 * leave such a command out, counted as incomplete). */
static inline void e2e_add(struct acc *a, int64_t v)
{
	if (__builtin_expect(v < 0, 0))
		ntp_hset_add(&a->h, H_E2E, v);
	else
		acc_e2e(a)[ntp_hist_index((uint64_t)v)]++;
}

/* 64-byte aligned, with its first line what a command touches:
 * with 64 groups, every line more per group is 64 more in the first-level
 * cache */
struct group {
	/* the interval's accumulator and the run's, both made with the group
	 * (group_find): a close allocates no accumulator, so none can fail
	 * there and lose an interval from the run's (ntp_model_close_interval;
	 * a histogram's chunk it may still not have: oom) */
	struct acc *cur, *all;
	uint64_t unmatched;
	/* --exact-queues: the kernel's stage sums at the last close (cumulative)
	 * and over the closed intervals; role both: the target's group is the
	 * backing device its matched records name */
	char tdev[NTP_DEV_LEN];
	uint8_t io;
	uint8_t side;			/* whose totals count its commands */
	uint32_t len;
	char dev[NTP_DEV_LEN];
	uint64_t base_cmds;		/* cumulative exact count at the last close */
	int based;			/* base_cmds set (the group was counted at a close) */
	int base_exact;			/* base_cmds is a count, not a guess past the last totals */
	uint64_t carry;			/* commands shown early (an interval raised to its records), given back next */
	uint64_t cmds_all;		/* exact commands of every closed interval */
	int counted;			/* the totals had this group */
	int counted_all;
	uint64_t unmatched_all;
	struct ntp_group_occ base_h, base_t, all_h, all_t;
	uint64_t occ_base_ns;		/* as_of of base_h/base_t (0: the start) */
	int occ_all;
	int closed;			/* all holds closed intervals (else it is the spare, zeroed) */
	/* the namespace id and LBA size of the record that made it (0: none
	 * known): a target record without its device (group_resolve) */
	uint32_t nsid, lba;
} __attribute__((aligned(64)));

/* a, new or just reset, is g's cur; general: the model's general_only */
static void acc_bind(struct acc *a, struct group *g, int general)
{
	a->grp = g;
	a->tdev_known = g->tdev[0] != '\0';
	a->general = general;
	acc_slow(a);
}

/*
 * The group lookup every record makes (twice a command in a join), in
 * front of group_find: a group's key packed in 64 bits, the device as a
 * number (the devices seen, most often one), so that a record finds its
 * group with one 32-byte compare (its device against the last one's) and
 * one slot of a direct-mapped table (fast[]), whether or not the record
 * before was of the same group: 64 interleaved groups cost what one does.
 * The table's multiplier is chosen again (gc_fast_add) when two keys meet
 * in a slot, so that each key cached has a slot of its own.
 *
 * Behind it, a key not in fast[] goes through gc_miss: a probed table of
 * group_find's answers, including "none" when every group is taken (then
 * no key's answer can change). Both hold answers that never change once
 * given (a key's group is the one found, or made, at its first record;
 * fast[] holds that group's accumulator, rewritten by gc_rebind at the
 * close that gives the group a new one). A
 * device without its NUL in NTP_DEV_LEN bytes is never cached, and after a
 * group was made from one (its stored key is cut, so two groups can then
 * share a key) only group_find answers.
 */
#define GC_DEVS 64
#define GC_SLOTS 256
#define GC_NONE 255u			/* the group number of "no group" (all taken) */
#define GC_GRP_SHIFT 56			/* above the key's device number (bits 48..54) */
_Static_assert(GC_DEVS + 1 < (1 << (GC_GRP_SHIFT - 48)) && NTP_SNAP_MAX_GROUPS < GC_NONE,
	       "the device number and the group number fit their bits");
#define GC_MAX_HIT (GC_SLOTS / 4)	/* keys cached with a group (several opcodes of one I/O type) */
_Static_assert(GC_SLOTS / 2 + GC_MAX_HIT < GC_SLOTS, "the table never fills: probes end");
/* fast[]: 2048 slots of 16 bytes, calloc's untouched pages but for the
 * lines of the keys cached; with 64 keys, a multiplier drawn at random
 * gives each its own slot with a chance of about e^(-64*63/2/2048), 0.37 */
#define GC_FAST_BITS 11
#define GC_FAST (1u << GC_FAST_BITS)
#define GC_FAST_MAX 128			/* keys in fast[] at most; the others go through gc_miss */
#define GC_FAST_TRIES 8			/* multipliers tried at a meeting of two keys */
#define GC_FAST_REHASH 32		/* first offers' meetings resolved at most over a model's life */
struct gc_ent {
	uint64_t key;			/* 0: empty */
	struct acc *a;			/* the group's cur; the model's none: no group (every group taken) */
};
struct group_cache {
	uint64_t mult;			/* fast[]'s multiplier, odd */
	char last_dev[NTP_DEV_LEN];	/* the last record's device, its key part last_dev_key */
	uint64_t last_dev_key;		/* (its number + 1) << 48 | GC_HOST; 0: none, or off (not cached) */
	int off;			/* a group was made from a device without its NUL */
	unsigned n_none;		/* keys cached with no group: at most GC_SLOTS / 2 */
	unsigned n_hit;			/* keys cached with a group: at most GC_MAX_HIT */
	unsigned n_devs;
	unsigned n_fast;		/* keys in fast[], in the slots fast_at[0..n_fast) */
	unsigned rehash;		/* meetings met with draws, retries too (first offers draw while below GC_FAST_REHASH) */
	uint64_t draws;			/* multipliers drawn */
	uint64_t out_offers;		/* offers of keys left out (gc_miss) */
	char devs[GC_DEVS][NTP_DEV_LEN];
	/* key | group number << GC_GRP_SHIFT (0: empty): one cache line a
	 * lookup reads, where a table of group numbers beside took a second */
	uint64_t key[GC_SLOTS];
	/* the slots that hold a key, walked where every key is (a redraw,
	 * gc_rebind): fast[]'s 32 KB read whole took a page fault for each
	 * of its pages no key was ever in */
	uint16_t fast_at[GC_FAST_MAX];
	struct gc_ent fast[GC_FAST] __attribute__((aligned(64)));
};
_Static_assert(GC_FAST <= UINT16_MAX + 1, "a slot fits fast_at");

struct ntp_model {
	void *mem;			/* the allocation m is aligned in (model_alloc) */
	void *acc_arena;		/* the groups' accumulators (acc_map), NULL before the first */
	struct ntp_model_config cfg;
	uint32_t sampling_open;		/* cfg.sampling when the open interval began */
	int join;
	struct ntp_pend *hpend, *tpend;
	uint64_t start_ns, first_start_ns, last_close_ns;
	int started;
	uint64_t index;
	uint64_t host_records, target_records, matched, unmatched_host, unmatched_target;
	uint64_t lost, overflow;
	uint64_t skipped;	/* ntp_model_set_skipped's */
	uint64_t spdk_tcp[2], spdk_split[2];
	int oom;			/* an allocation failed (ntp_snapshot.oom) */
	uint64_t oom_records;
	uint64_t other_side;	/* records of neither side: left out, counted */
	unsigned n_groups;
	struct group groups[NTP_SNAP_MAX_GROUPS];
	struct group_cache gc;
	struct ntp_total totals[MAX_TOTALS];
	size_t n_totals;
	uint64_t totals_as_of;		/* when the kernel's counters were read */
	struct ntp_total prev[MAX_TOTALS];	/* the totals before, for the rate between */
	size_t n_prev;
	uint64_t prev_as_of;
	/* what the group lookup answers for a record of no group (every
	 * group taken, or its memory not had): no group (grp NULL), ACC_SLOW
	 * set, so that account() sends it aside (account_slow) in the test
	 * it makes anyway, and a command tests no pointer for none */
	struct acc none;
};

uint8_t ntp_io_type_of(uint8_t opcode)
{
	switch (opcode) {
	case 0x02:
		return NTP_IO_READ;
	case 0x01:
		return NTP_IO_WRITE;
	default:
		return NTP_IO_OTHER;
	}
}

struct ntp_model *ntp_model_new(const struct ntp_model_config *cfg)
{
	/* calloc, aligned by hand: its pages come from the kernel zeroed and
	 * stay untouched until used (the totals' tables are most of it),
	 * where a memset would make them all resident */
	void *mem = calloc(1, sizeof(struct ntp_model) + 63);
	struct ntp_model *m = mem ? (void *)(((uintptr_t)mem + 63) & ~(uintptr_t)63) : NULL;
	uint32_t win;

	if (!m)
		return NULL;
	m->mem = mem;
	m->gc.mult = 0x9E3779B97F4A7C15ull;
	m->none.sampled = ACC_SLOW;
	m->cfg = *cfg;
	if (!m->cfg.sampling)
		m->cfg.sampling = 1;
	m->sampling_open = m->cfg.sampling;
	m->join = cfg->role == NTP_ROLE_BOTH;
	if (m->join) {
		win = cfg->join_window ? cfg->join_window : 16384;
		m->hpend = ntp_pend_new(win);
		m->tpend = ntp_pend_new(win);
		if (!m->hpend || !m->tpend) {
			ntp_model_free(m);
			return NULL;
		}
	}
	return m;
}

void ntp_model_free(struct ntp_model *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->n_groups; i++) {
		acc_free(m->groups[i].cur);
		acc_free(m->groups[i].all);
		acc_unmap(m->groups[i].cur, m->groups[i].all);
	}
	ntp_huge_unmap(m->acc_arena, ACC_ARENA);
	ntp_pend_free(m->hpend);
	ntp_pend_free(m->tpend);
	free(m->mem);
}

void ntp_model_set_start(struct ntp_model *m, uint64_t start_ns)
{
	m->start_ns = m->first_start_ns = m->last_close_ns = start_ns;
	m->started = 1;
}

static uint64_t first_ts(const struct ntp_record *r)
{
	uint32_t v = r->ts_valid & ((1u << NTP_TS_COUNT) - 1);

	return v ? r->ts[__builtin_ctz(v)] : 0;
}

static int group_is(const struct group *g, uint8_t io, uint8_t side, const struct ntp_record *r)
{
	return g->io == io && g->len == r->len && g->side == side && !memcmp(g->dev, r->dev, NTP_DEV_LEN);
}

/*
 * A record's group, found by comparing it with every group (first match),
 * made when none matches and there is room (else NULL): behind the cache
 * of group_of (below), which answers every record but the first of each
 * key, so this is met at most once per key (and per record only for
 * devices the cache does not number, rare).
 */
static struct group *group_new(struct ntp_model *m, uint8_t io, uint8_t side, uint32_t len, const char *dev);

/*
 * A target record without its device (and mostly its length): the command
 * left the target's table before its completion was seen, which names
 * both (bpf/ntprof_common.bpf.h close_missed; docs/top.md). Its namespace
 * id names the group's device when one target group of a device has that
 * id, its LBA count the length at that device's LBA size: *tmp is r so
 * completed. Else r as it is: its group names neither (report.c
 * ntp_group_label). Off the common path: group_of never caches a record
 * without a device (gc_dev_new).
 */
/* Whether a record of the target device told its namespace id. */
static bool device_told(const struct ntp_model *m, const char *dev)
{
	for (unsigned i = 0; i < m->n_groups; i++) {
		const struct group *g = &m->groups[i];

		if (g->side == NTP_SIDE_TARGET && g->nsid && !strncmp(g->dev, dev, NTP_DEV_LEN))
			return true;
	}
	return false;
}

static const struct ntp_record *group_resolve(const struct ntp_model *m, const struct ntp_record *r,
					      struct ntp_record *tmp)
{
	const struct group *found = NULL;

	if (!r->nsid)
		return r;
	for (unsigned i = 0; i < m->n_groups; i++) {
		const struct group *g = &m->groups[i];

		if (g->side != NTP_SIDE_TARGET || g->nsid != r->nsid || !g->dev[0])
			continue;
		if (found && strncmp(found->dev, g->dev, NTP_DEV_LEN))
			return r;	/* two devices of that id (two subsystems): neither */
		if (!found || (!found->lba && g->lba))
			found = g;
	}
	if (!found || (!r->len && !found->lba))
		return r;
	/* a device of another group whose id no record told yet (one the
	 * totals made) may be that id in another subsystem: neither. A
	 * device is told when any of its groups is (its other I/O types and
	 * sizes may never be sampled). */
	for (unsigned i = 0; i < m->n_groups; i++) {
		const struct group *g = &m->groups[i];

		if (g->side == NTP_SIDE_TARGET && !g->nsid && g->dev[0] && strncmp(found->dev, g->dev, NTP_DEV_LEN) &&
		    !device_told(m, g->dev))
			return r;
	}
	*tmp = *r;
	memcpy(tmp->dev, found->dev, NTP_DEV_LEN);
	if (!tmp->len)
		tmp->len = ((uint32_t)r->nlb + 1) * found->lba;
	return tmp;
}

static __attribute__((noinline)) struct group *group_find(struct ntp_model *m, const struct ntp_record *r,
							  uint8_t side)
{
	uint8_t io = ntp_io_type_of(r->opcode);
	struct ntp_record tmp;
	struct group *g;

	if (!r->dev[0] && side == NTP_SIDE_TARGET)
		r = group_resolve(m, r, &tmp);
	for (unsigned i = 0; i < m->n_groups; i++)
		if (group_is(&m->groups[i], io, side, r)) {
			g = &m->groups[i];
			goto found;
		}
	g = group_new(m, io, side, r->len, r->dev);
found:
	/* the record's namespace id and LBA size, for the records of its
	 * namespace without their device (group_resolve); a group the
	 * totals made takes them from its first record */
	if (g && !g->nsid && r->dev[0] && r->nsid) {
		g->nsid = r->nsid;
		g->lba = r->len && r->len % ((uint32_t)r->nlb + 1) == 0 ? r->len / ((uint32_t)r->nlb + 1) : 0;
	}
	return g;
}

/* A new group of the key (NULL: every group taken, or its memory not had). */
static struct group *group_new(struct ntp_model *m, uint8_t io, uint8_t side, uint32_t len, const char *dev)
{
	struct group *g;

	if (m->n_groups == NTP_SNAP_MAX_GROUPS)
		return NULL;
	g = &m->groups[m->n_groups];
	if (acc_new_pair(&m->acc_arena, m->n_groups, &g->cur, &g->all)) {
		/* no group (its records are asked for again, gc_miss) */
		g->cur = g->all = NULL;
		m->oom = 1;
		return NULL;
	}
	acc_bind(g->cur, g, m->cfg.general_only);
	g->io = io;
	g->side = side;
	g->len = len;
	memcpy(g->dev, dev, NTP_DEV_LEN);
	if (dev[NTP_DEV_LEN - 1] != '\0') {
		m->gc.off = 1;
		m->gc.last_dev_key = 0;		/* group_of's first test fails from now */
	}
	/* the key as stored: a dev without its NUL in 32 bytes is cut, and
	 * never equals such a record's */
	g->dev[NTP_DEV_LEN - 1] = '\0';
	m->n_groups++;
	return g;
}

/* The key's side part of a host record (group_of): kept with the device's
 * part, so that the most common lookup does not add it (a 64-bit constant
 * is a move and an or). */
#define GC_HOST ((uint64_t)NTP_SIDE_HOST << 40)

/* A device not the last one seen: its key part, (its number + 1) << 48,
 * with a host's side part (0: none, the cache is not used). */
static __attribute__((noinline)) uint64_t gc_dev_new(struct group_cache *c, const char *dev)
{
	unsigned i;

	if (dev[NTP_DEV_LEN - 1])
		return 0;
	for (i = 0; i < c->n_devs && memcmp(c->devs[i], dev, NTP_DEV_LEN); i++)
		;
	if (i == c->n_devs) {
		/* no device (a target record whose completion was not seen):
		 * never cached, its group found from its namespace id
		 * (group_resolve), which the key does not hold */
		if (i == GC_DEVS || !dev[0])
			return 0;
		memcpy(c->devs[c->n_devs++], dev, NTP_DEV_LEN);
	}
	memcpy(c->last_dev, dev, NTP_DEV_LEN);
	c->last_dev_key = (uint64_t)(i + 1) << 48 | GC_HOST;
	return c->last_dev_key;
}

/* The device names of two records are equal: 32 bytes, in two 16-byte
 * compares where SSE2 has them (fewer instructions per command than
 * memcmp's inline expansion, docs/performance.md). */
static inline int dev_eq(const char *a, const char *b)
{
#if defined(__SSE2__)
	__m128i x0 = _mm_loadu_si128((const __m128i *)a), x1 = _mm_loadu_si128((const __m128i *)(a + 16));
	__m128i y0 = _mm_loadu_si128((const __m128i *)b), y1 = _mm_loadu_si128((const __m128i *)(b + 16));

	return _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(x0, y0), _mm_cmpeq_epi8(x1, y1))) == 0xffff;
#else
	return !memcmp(a, b, NTP_DEV_LEN);
#endif
}
_Static_assert(NTP_DEV_LEN == 32, "dev_eq compares 32 bytes");

static inline unsigned gc_fast_slot(uint64_t key, uint64_t mult)
{
	return (unsigned)((key * mult) >> (64 - GC_FAST_BITS));
}

/* Puts key (answer a, its group's accumulator) in fast[], when it has room: in its slot when free,
 * else (redraw set) with a multiplier under which every key cached and this
 * one have slots of their own (a few drawn), else not at all (gc_miss
 * answers the key, the same answer). redraw is GC_REDRAW_FIRST at a key's
 * first offer (at most GC_FAST_REHASH such meetings in a model's life),
 * GC_REDRAW_RETRY at the offers of keys left out (gc_out_offer: one in a
 * power of two of them); else a key left out is offered its slot only,
 * one test per record, where a redraw per record would cost
 * GC_FAST_TRIES draws over every key cached. */
enum { GC_REDRAW_NO, GC_REDRAW_FIRST, GC_REDRAW_RETRY };
static void gc_fast_add(struct group_cache *c, uint64_t key, struct acc *a, int redraw)
{
	struct gc_ent *f = c->fast;
	uint64_t keys[GC_FAST_MAX + 1];
	struct acc *as[GC_FAST_MAX + 1];
	unsigned n = 0, slot = gc_fast_slot(key, c->mult);

	if (c->n_fast == GC_FAST_MAX)
		return;
	if (!f[slot].key) {
		f[slot].key = key;
		f[slot].a = a;
		c->fast_at[c->n_fast++] = (uint16_t)slot;
		return;
	}
	if (redraw == GC_REDRAW_NO || (redraw == GC_REDRAW_FIRST && c->rehash >= GC_FAST_REHASH))
		return;
	c->rehash++;
	for (unsigned i = 0; i < c->n_fast; i++) {
		keys[n] = f[c->fast_at[i]].key;
		as[n++] = f[c->fast_at[i]].a;
	}
	keys[n] = key;
	as[n++] = a;
	for (unsigned t = 0; t < GC_FAST_TRIES; t++) {
		uint64_t used[GC_FAST / 64] = { 0 }, z, mult;
		unsigned i;

		/* splitmix64 of the draw's number, made odd */
		z = ++c->draws * 0x9E3779B97F4A7C15ull;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		mult = (z ^ (z >> 31)) | 1;
		for (i = 0; i < n; i++) {
			unsigned sl = gc_fast_slot(keys[i], mult);

			if (used[sl / 64] & (1ull << (sl % 64)))
				break;
			used[sl / 64] |= 1ull << (sl % 64);
		}
		if (i < n)
			continue;
		for (i = 0; i < n; i++)
			f[gc_fast_slot(keys[i], c->mult)].key = 0;
		c->mult = mult;
		for (i = 0; i < n; i++) {
			unsigned sl = gc_fast_slot(keys[i], mult);

			f[sl].key = keys[i];
			f[sl].a = as[i];
			c->fast_at[i] = (uint16_t)sl;
		}
		c->n_fast = n;
		return;
	}
}

/* The redraw of an offer to fast[] of a key left out: a retry at the 1st,
 * 2nd, 4th, 8th... such offer, so that the draws grow with the log of
 * the records of keys left out, and the records on this slow path stay
 * within twice those before the retry that let the last one in (a
 * multiplier exists: there are at most GC_FAST_MAX keys). */
static int gc_out_offer(struct group_cache *c)
{
	c->out_offers++;
	return (c->out_offers & (c->out_offers - 1)) ? GC_REDRAW_NO : GC_REDRAW_RETRY;
}

/* The accumulator records of g go to (g NULL: no group, m->none). */
static inline struct acc *cur_of(struct ntp_model *m, const struct group *g)
{
	return g ? g->cur : &m->none;
}

/* group_of for a key not in fast[] (key 0: a device the cache does not
 * number, or the cache off): the probed table, else group_find, and the
 * answer into both tables when it is final. */
static __attribute__((noinline)) struct acc *gc_miss(struct ntp_model *m, const struct ntp_record *r,
							uint8_t side, uint64_t key)
{
	struct group_cache *c = &m->gc;
	struct group *g;
	unsigned slot;

	if (!key)
		return cur_of(m, group_find(m, r, side));
	for (slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 56);; slot = (slot + 1) % GC_SLOTS) {
		if ((c->key[slot] & ((1ull << GC_GRP_SHIFT) - 1)) == key) {
			unsigned n = (unsigned)(c->key[slot] >> GC_GRP_SHIFT);

			g = n == GC_NONE ? NULL : &m->groups[n];
			/* offered to fast[] when it came in here: left out
			 * (no slot, or no multiplier found), it may take a
			 * slot a later multiplier freed, and a new
			 * multiplier at the retries (gc_out_offer) */
			gc_fast_add(c, key, cur_of(m, g), gc_out_offer(c));
			return cur_of(m, g);
		}
		if (!c->key[slot])
			break;
	}
	g = group_find(m, r, side);
	if (c->off)
		return cur_of(m, g);
	if (g) {
		/* past GC_MAX_HIT keys (opcodes of many kinds), group_find
		 * answers the others: its answer is the same */
		if (c->n_hit == GC_MAX_HIT) {
			/* met again at every record: no redraw of its own */
			gc_fast_add(c, key, g->cur, gc_out_offer(c));
			return g->cur;
		}
		c->n_hit++;
		c->key[slot] = key | (uint64_t)(g - m->groups) << GC_GRP_SHIFT;
	} else {
		/* every group taken (else an allocation failed: ask again) */
		if (m->n_groups < NTP_SNAP_MAX_GROUPS || c->n_none == GC_SLOTS / 2)
			return &m->none;
		c->n_none++;
		c->key[slot] = key | (uint64_t)GC_NONE << GC_GRP_SHIFT;
	}
	gc_fast_add(c, key, cur_of(m, g), GC_REDRAW_FIRST);
	return cur_of(m, g);
}

/* The accumulator of r's group (its cur; m->none: no group, every group
 * taken): the group itself is its grp. */
static inline __attribute__((always_inline)) struct acc *group_of(struct ntp_model *m, const struct ntp_record *r,
								  uint8_t side)
{
	struct group_cache *c = &m->gc;
	const struct gc_ent *e;
	uint64_t key, dev;

	/* the last device seen (last_dev_key is 0 when the cache is off) */
	if (__builtin_expect(c->last_dev_key != 0 && dev_eq(r->dev, c->last_dev), 1))
		dev = c->last_dev_key;
	else if (c->off || !(dev = gc_dev_new(c, r->dev)))
		return gc_miss(m, r, side, 0);
	/* never 0: the device's number + 1 in the top bits; the side (dev
	 * holds a host's, side a constant: nothing to do for a host); the
	 * opcode, not its I/O type (no branch or conditional move per
	 * command): the opcodes of one type are keys of the same group */
	key = (dev ^ ((uint64_t)(side ^ NTP_SIDE_HOST) << 40)) | (uint64_t)r->opcode << 32 | r->len;
	e = &c->fast[gc_fast_slot(key, c->mult)];
	if (__builtin_expect(e->key == key, 1))
		return e->a;
	return gc_miss(m, r, side, key);
}

/* The group's span takes in [lo, hi] (lo 0: no start known). */
static inline void span_add(struct acc *a, uint64_t lo, uint64_t hi)
{
	uint64_t nlo = (uint64_t)0 - lo;

	if (nlo > a->span_nlo)
		a->span_nlo = nlo;
	if (hi > a->span_hi)
		a->span_hi = hi;
}

/* Adds the run of commands of the last presence masks into st_n and c_n:
 * when the masks change (a command of another flow) and at a close. */
static void run_flush(struct acc *a)
{
	uint64_t n = acc_sampled(a) - a->run_base;
	uint32_t bits;

	for (bits = a->run_st_mask; bits; bits &= bits - 1)
		a->st_n[__builtin_ctz(bits)] += n;
	for (bits = a->run_c_mask; bits; bits &= bits - 1)
		a->c_n[__builtin_ctz(bits)] += n;
	a->run_base = acc_sampled(a);
}

/* Before the accumulator is read (a close): the run, and the fast flow's
 * sums into st_sum and c_sum (wrapping adds: when they are added makes no
 * difference, so not at every change of flow). */
static void acc_flush(struct acc *a)
{
	/* the sums of the timestamps as the times of two records: the
	 * fast flow's own formulas then give the sums of its components */
	struct ntp_record h = { 0 }, t = { 0 };
	int64_t comp[NTP_COMP_COUNT + 1], stage[NTP_STAGE_COUNT + 1], e2e;

	run_flush(a);
	for (unsigned k = 0; k < FAST_TS; k++)
		(k < FAST_TS_HOST ? &h : &t)->ts[fast_ts[k]] = a->fast_ts_sum[k];
	ntp_fast_compute(&h, &t, comp, stage, &e2e);
	for (unsigned k = 0; k < FAST_N; k++) {
		int s = ntp_component_stage(fast_comp[k]);

		a->st_sum[s] = (int64_t)((uint64_t)a->st_sum[s] + (uint64_t)comp[fast_comp[k]]);
		a->c_sum[fast_comp[k]] = (int64_t)((uint64_t)a->c_sum[fast_comp[k]] + (uint64_t)comp[fast_comp[k]]);
	}
	a->e2e_sum = (int64_t)((uint64_t)a->e2e_sum + (uint64_t)e2e);
	memset(a->fast_ts_sum, 0, sizeof(a->fast_ts_sum));
	ntp_hset_take_dense(&a->h, H_E2E, acc_e2e(a));
}

/* Two lanes of int64 sums; GCC and clang lower them to SSE2 (or plain
 * adds elsewhere). Unsigned: sums of times from a file wrap (any 64-bit
 * values), never overflow. */
typedef uint64_t ntp_u2 __attribute__((vector_size(16), may_alias));
typedef uint64_t ntp_u2a __attribute__((vector_size(16), aligned(16), may_alias));	/* at a 16-byte boundary */

/* dst at a 16-byte boundary (struct acc's sums) */
static inline __attribute__((always_inline)) void sum_into(int64_t *restrict dst, const int64_t *restrict src,
								  unsigned n2)
{
#pragma GCC unroll 16
	for (unsigned i = 0; i < n2; i++) {
		ntp_u2 v;

		__builtin_memcpy(&v, src + 2 * i, sizeof(v));
		*(ntp_u2a *)(dst + 2 * i) += v;
	}
}

/* noq: NTP_MODEL_NO_* of the model's config, the histograms not kept */
static void acc_add(struct acc *a, const struct ntp_breakdown *b, unsigned noq)
{
	uint32_t bits;

	/* the run before this command (run_flush counts sampled) */
	if (__builtin_expect(b->stage_present != a->run_st_mask || b->comp_present != a->run_c_mask, 0)) {
		run_flush(a);
		a->run_st_mask = b->stage_present;
		a->run_c_mask = b->comp_present;
		acc_slow(a);
	}
	a->sampled++;
	a->e2e_sum = (int64_t)((uint64_t)a->e2e_sum + (uint64_t)b->e2e);
	e2e_add(a, b->e2e);
	/* absent stages and components are 0 in b (stage.h) */
	sum_into(a->st_sum, b->stage, (NTP_STAGE_COUNT + 1) / 2);
	sum_into(a->c_sum, b->comp, (NTP_COMP_COUNT + 1) / 2);
	/* the histograms are most of a command's cost: only those shown */
	if (!(noq & NTP_MODEL_NO_STAGE_Q))
		for (bits = b->stage_present; bits; bits &= bits - 1) {
			int s = __builtin_ctz(bits);

			ntp_hset_add(&a->h, H_ST + s, b->stage[s]);
		}
	if (!(noq & NTP_MODEL_NO_COMP_Q))
		for (bits = b->comp_present; bits; bits &= bits - 1) {
			int c = __builtin_ctz(bits);

			ntp_hset_add(&a->h, H_C + c, b->comp[c]);
		}
}

/* Reduces one command (host and/or target record) into its group's
 * accumulator a (of a group; account_slow counts the overflow and notes what
 * every flow does): any flow (account() takes the common joined one
 * itself). */
static __attribute__((noinline)) void account_general(struct ntp_model *m, struct acc *a, const struct ntp_record *h,
		    const struct ntp_record *t)
{
	struct ntp_breakdown b;

	if (ntp_breakdown_compute(h, t, &b)) {
		a->incomplete++;
		return;
	}
	if (b.flags & NTP_BD_RSP_FALLBACK)
		a->fallback++;
	if (h && (h->ts_valid & (1u << NTP_TS_H_BIO_SUBMIT))) {
		a->bio++;
		if (h->ts_valid & (1u << NTP_TS_H_BLK_SUBMIT))
			a->tag_wait_sum += h->ts[NTP_TS_H_BLK_SUBMIT] - h->ts[NTP_TS_H_BIO_SUBMIT];
	}
	acc_add(a, &b, m->cfg.no_quantiles);
	{
		const struct ntp_record *r = h ? h : t;
		uint64_t lo = h && (h->ts_valid & (1u << NTP_TS_H_BIO_SUBMIT))	 ? h->ts[NTP_TS_H_BIO_SUBMIT]
			      : h && (h->ts_valid & (1u << NTP_TS_H_BLK_SUBMIT)) ? h->ts[NTP_TS_H_BLK_SUBMIT]
										 : first_ts(r);
		uint64_t hi = lo + (uint64_t)(b.e2e > 0 ? b.e2e : 0);

		span_add(a, lo, hi);
	}
}

/*
 * The common joined flow (stage.h: ntp_fast_flow), most commands of a
 * recording, added up straight from the two records: account_general with
 * acc_add on the breakdown ntp_breakdown_compute gives such a command, whose
 * masks are constants, absent components are not added (they are 0) and the
 * fallback flag is clear. The histograms are updated in acc_add's order.
 * Without the breakdown in memory, its 20 zeroed and stored components and
 * 13 vector adds become six vector adds of timestamps into the group's
 * sums (fast_ts; test_model_fast.c compares the snapshots with the general
 * code's).
 */
/* The stages' and components' histograms of a fast flow (account_fast),
 * when kept: apart, so that the common case keeps its values in registers. */
static __attribute__((noinline)) void fast_hists(struct acc *a, const struct ntp_record *h,
						 const struct ntp_record *t, unsigned noq)
{
	int64_t comp[NTP_COMP_COUNT + 1], stage[NTP_STAGE_COUNT + 1], e2e;

	ntp_fast_compute(h, t, comp, stage, &e2e);
	/* unrolled: each histogram's number a constant, each value in a
	 * register (a loop kept them in memory and indexed them) */
	if (!(noq & NTP_MODEL_NO_STAGE_Q)) {
#pragma GCC unroll 5
		for (int s = 0; s < NTP_STAGE_COUNT; s++)
			ntp_hset_add(&a->h, H_ST + s, stage[s]);
	}
	/* fast_comp[] is NTP_FAST_COMPS in ascending order: acc_add's */
	if (!(noq & NTP_MODEL_NO_COMP_Q)) {
#pragma GCC unroll 10
		for (unsigned k = 0; k < FAST_N; k++)
			ntp_hset_add(&a->h, H_C + fast_comp[k], comp[fast_comp[k]]);
	}
}

/* noq: the model's no_quantiles (a constant in the block loops' common case);
 * bio: whether h has the bio's submission (NTP_FAST_H_BIO), a constant at
 * each call (account_fast_any), so a host whose records all have it or
 * none pays one well-predicted branch, not a select in every sum */
static inline __attribute__((always_inline)) void account_fast(struct acc *a, const struct ntp_record *h,
								const struct ntp_record *t, unsigned noq, int bio)
{
	/* as ntp_fast_compute (ntp_fast_start): its e2e_sum is added at the
	 * close (acc_flush), from fast_ts_sum[0], the starts' sum */
	uint64_t start = bio ? h->ts[NTP_TS_H_BIO_SUBMIT] : h->ts[NTP_TS_H_BLK_SUBMIT];
	int64_t e2e = (int64_t)(h->ts[NTP_TS_H_BLK_COMPLETE] - start);
	int64_t res = (int64_t)(t->ts[NTP_TS_T_RSP_SENT] - t->ts[NTP_TS_T_CMD_ARRIVE]);

	/* a negative end to end or target's residence (one clock read
	 * backwards: a damaged time) is left out and counted, as
	 * ntp_breakdown_compute does (stage.c) */
	if (__builtin_expect((e2e | res) < 0, 0)) {
		a->incomplete++;
		return;
	}
	/* ACC_SLOW clear (account: fast_prep), so the run is this flow's */
	a->sampled++;
	acc_e2e(a)[ntp_hist_index((uint64_t)e2e)]++;
	/* constant indices: the loop unrolls into six vector adds, each
	 * into its aligned pair of sums from memory (no load of it apart) */
#pragma GCC unroll 6
	for (unsigned k = 0; k < FAST_TS; k += 2) {
		ntp_u2a *d = (ntp_u2a *)&a->fast_ts_sum[k];
		const struct ntp_record *r0 = k < FAST_TS_HOST ? h : t, *r1 = k + 1 < FAST_TS_HOST ? h : t;
		ntp_u2 v;

		if (k == 0 && bio)	/* the start in BLK_SUBMIT's sum */
			v = (ntp_u2){ start, h->ts[fast_ts[1]] };
		else if (FAST_PAIR_ONE(k))
			__builtin_memcpy(&v, &r0->ts[fast_ts[k]], sizeof(v));
		else
			v = (ntp_u2){ r0->ts[fast_ts[k]], r1->ts[fast_ts[k + 1]] };
		*d += v;
	}
	if (__builtin_expect(noq != NOQ_ALL, 0))
		fast_hists(a, h, t, noq);
	if (bio) {
		a->bio++;
		a->tag_wait_sum += h->ts[NTP_TS_H_BLK_SUBMIT] - start;
	}
	/* the span: from the start (BLK_SUBMIT is seen in this flow, NTP_FAST_H) */
	span_add(a, start, start + (uint64_t)e2e);
}

/* account_fast for a record with or without the bio's submission */
static inline __attribute__((always_inline)) void account_fast_any(struct acc *a, const struct ntp_record *h,
								    const struct ntp_record *t, unsigned noq)
{
	if (h->ts_valid & NTP_FAST_H_BIO)
		account_fast(a, h, t, noq, 1);
	else
		account_fast(a, h, t, noq, 0);
}

/* The group's tdev from a matched target record t (its first non-empty
 * device name; out of line: called for the matched records of a group
 * whose tdev is still empty, never once it is set: acc_bind tells each
 * new accumulator which). */
static __attribute__((noinline)) void group_tdev(struct acc *a, const struct ntp_record *t)
{
	struct group *g = a->grp;

	memcpy(g->tdev, t->dev, NTP_DEV_LEN);
	g->tdev[NTP_DEV_LEN - 1] = '\0';
	a->tdev_known = g->tdev[0] != '\0';
	acc_slow(a);
}

/* Before a common flow's command (account_fast) when ACC_SLOW is set: the
 * group's tdev from t if not known yet, the run of other masks added in,
 * and ACC_SLOW as they now are (still set while tdev is unknown). */
static __attribute__((noinline)) void fast_prep(struct acc *a, const struct ntp_record *t)
{
	if (!a->tdev_known)
		group_tdev(a, t);
	if (a->run_st_mask != NTP_FAST_STAGES || a->run_c_mask != NTP_FAST_COMPS) {
		run_flush(a);
		a->run_st_mask = NTP_FAST_STAGES;
		a->run_c_mask = NTP_FAST_COMPS;
	}
	acc_slow(a);
}

/* account() of the commands its first test does not take (any flow, a
 * group's first common one, a flag set): the whole of it, out of line. */
static __attribute__((noinline)) void account_slow(struct ntp_model *m, struct acc *a, const struct ntp_record *h,
						   const struct ntp_record *t)
{
	if (!a->grp) {
		/* no group (m->none): every group taken, else its memory
		 * not had (group_find) */
		if (m->n_groups == NTP_SNAP_MAX_GROUPS)
			m->overflow++;
		else
			m->oom_records++;
		return;
	}
	/* what every flow notes: a record whose command closed a missed
	 * completion, and (joined) the target's device */
	if (((h ? h->flags : 0) | (t ? t->flags : 0)) & NTP_REC_F_CLOSED_MISSED)
		a->missed++;
	if (h && t && !m->cfg.general_only && ntp_fast_flow(h, t)) {
		if (a->sampled & ACC_SLOW)
			fast_prep(a, t);
		account_fast_any(a, h, t, m->cfg.no_quantiles);
	} else {
		if (h && t && !a->tdev_known)
			group_tdev(a, t);
		account_general(m, a, h, t);
	}
}

/* The host's and the target's timestamps of a fast flow (stage.h
 * ntp_fast_flow): disjoint bits of ts_valid, so one compare tests both */
_Static_assert(((NTP_FAST_H | NTP_FAST_H_NOT | NTP_FAST_H_BIO) & (NTP_FAST_T | NTP_FAST_T_NOT)) == 0,
	       "the sides' bits are apart");

static inline __attribute__((always_inline)) void account(struct ntp_model *m, struct acc *a,
							   const struct ntp_record *h, const struct ntp_record *t,
							   unsigned noq)
{
	/* The common joined flow, no flag of note on either record (a missed
	 * completion to count, the target's fallback), the group's run
	 * already that flow's (ACC_SLOW clear; set for general_only and for
	 * m->none too): in
	 * one test of each record's valid bits and flags. The rest, and a
	 * flag set on either record (which account_slow tests one by one),
	 * in account_slow. The host's record with the bio's submission or
	 * without: a second compare where the first fails, so that a host
	 * without it (older kernels, the bench's recordings) pays nothing. */
	if (h && t) {
		uint32_t valid = (h->ts_valid & (NTP_FAST_H | NTP_FAST_H_NOT | NTP_FAST_H_BIO)) |
				 (t->ts_valid & (NTP_FAST_T | NTP_FAST_T_NOT));
		uint32_t flags = h->flags | t->flags;
		int clear = !(flags & (NTP_REC_F_CLOSED_MISSED | NTP_REC_F_RSP_FALLBACK)) && !(a->sampled & ACC_SLOW);

		if (__builtin_expect(valid == (NTP_FAST_H | NTP_FAST_T) && clear, 1)) {
			account_fast(a, h, t, noq, 0);
			return;
		}
		if (__builtin_expect(valid == (NTP_FAST_H | NTP_FAST_H_BIO | NTP_FAST_T) && clear, 1)) {
			account_fast(a, h, t, noq, 1);
			return;
		}
	}
	account_slow(m, a, h, t);
}

/* account() out of line, for the other sites (one side only, host first). */
static __attribute__((noinline)) void account_call(struct ntp_model *m, struct acc *a,
						   const struct ntp_record *h, const struct ntp_record *t)
{
	account(m, a, h, t, m->cfg.no_quantiles);
}

/* transport and impl, adjacent bytes, in one test (one 16-bit load where
 * the compiler merges them): the SPDK NVMe/TCP records' count is a test
 * of every record */
#define TCP_SPDK ((uint16_t)(NTP_TRANSPORT_TCP | NTP_IMPL_SPDK << 8))
static inline uint16_t transport_impl(const struct ntp_record *r)
{
	return (uint16_t)(r->transport | r->impl << 8);
}

/*
 * Host records that lost their target twin, each in its own group: a
 * record of another size, I/O type or device can share a key (cntlid, qid,
 * cid) with the one that matched. Evictions are counted at the put (the
 * evicted record's copy names its group); the two drops below, and the
 * records still waiting at the end of input (ntp_model_total), name theirs
 * here, off the common path (a key's older records wait only when a twin
 * was lost).
 */
static void host_lost(struct ntp_model *m, const struct ntp_record *h)
{
	struct acc *a = group_of(m, h, NTP_SIDE_HOST);

	m->unmatched_host++;
	if (a->grp)
		a->grp->unmatched++;
}

/* A host record matched its target: the older host records of its key
 * still waiting can no longer match (pending.h). Out of line, reached only
 * with host records waiting; pending.c's ntp_pend_drop_key_some drops them,
 * after their groups were charged. */
static __attribute__((noinline)) void host_drop_key(struct ntp_model *m, uint64_t key)
{
	struct ntp_pend *p = m->hpend;
	int found = 0;

	for (int32_t i = p->bk[ntp_pend_bucket_of(p, key)].head; i >= 0; i = p->slots[i].next)
		if (p->slots[i].key == key) {
			host_lost(m, p->slots[i].rec);
			found = 1;
		}
	if (found)
		ntp_pend_drop_key_some(p, key);
}

/* host_take when the first host record of t's key, slot i (prev its
 * predecessor in bucket b, or -1), is not t's twin: the twin found after
 * it (ntp_pend_find_twin); then the older records of the key that
 * ntp_pend_take_twin drops (the first 64) are charged to their groups, and
 * it takes the twin. */
static __attribute__((noinline)) const struct ntp_record *host_take_older(struct ntp_model *m,
									  const struct ntp_record *t, uint64_t key,
									  uint32_t b, int32_t prev, int32_t i)
{
	struct ntp_pend *p = m->hpend;
	uint64_t dropped = 0;
	unsigned n_older = 0;
	int32_t j, tw = ntp_pend_find_twin(p, t, key, i);

	if (tw < 0)
		return NULL;	/* no twin: nothing is dropped */
	for (j = i; j != tw && n_older < 64; j = p->slots[j].next)
		if (p->slots[j].key == key) {
			host_lost(m, p->slots[j].rec);
			n_older++;
		}
	return ntp_pend_take_twin(p, key, b, prev, i, tw, &dropped);
}

/* ntp_pend_take_key of m->hpend for a target record t (pending_int.h; the
 * same code but for the drop of older records, host_take_older) */
static inline __attribute__((always_inline)) const struct ntp_record *host_take(struct ntp_model *m,
										 const struct ntp_record *t,
										 uint64_t key)
{
	struct ntp_pend *p = m->hpend;
	uint32_t b = ntp_pend_bucket_of(p, key);
	int32_t prev = -1, i = p->bk[b].head;

	if (i < 0)
		return NULL;
	if (p->slots[i].key != key) {
		for (prev = i, i = p->slots[i].next; i >= 0; prev = i, i = p->slots[i].next)
			if (p->slots[i].key == key)
				break;
		if (i < 0)
			return NULL;
	}
	if (__builtin_expect(!ntp_pend_same_rest(p->slots[i].rec, t), 0))
		return host_take_older(m, t, key, b, prev, i);
	ntp_pend_unlink(p, b, prev, i);
	/* The slot is free but untouched until the next put. */
	return p->slots[i].rec;
}

/* ntp_model_ingest; when ref (a constant) is set (ntp_model_ingest_block),
 * the records waiting for their twin kept by reference and the start set
 * by the caller; join is m->join (a constant in the block's loop, whose
 * role is then both: no test of the role per record), noq the model's
 * no_quantiles (a constant in the block's loop for the common case) */
static inline __attribute__((always_inline)) void ingest(struct ntp_model *m, const struct ntp_record *r, int ref,
							  int join, unsigned noq)
{
	const struct ntp_record *twin;
	struct ntp_record ev;
	struct acc *a;
	uint64_t key;

	if (!ref && !m->started)
		ntp_model_set_start(m, first_ts(r));
	if (__builtin_expect(transport_impl(r) == TCP_SPDK, 0)) {
		int t = r->side == NTP_SIDE_TARGET;

		m->spdk_tcp[t]++;
		m->spdk_split[t] += !!(r->flags & NTP_REC_F_SOCK_SPLIT);
	}
	if (r->side == NTP_SIDE_HOST) {
		m->host_records++;
		if (!join && m->cfg.role == NTP_ROLE_TARGET)
			return;		/* not this model's side */
		a = group_of(m, r, NTP_SIDE_HOST);
		a->seen++;
		if (!join) {
			account_call(m, a, r, NULL);
			return;
		}
		key = ntp_pend_key(r);
		/* no test of tpend's count first: a host record mostly finds
		 * its target twin waiting (an empty bucket answers as fast) */
		twin = ref ? ntp_pend_take_key(m->tpend, r, key, &m->unmatched_target)
			   : ntp_pend_take(m->tpend, r, &m->unmatched_target);
		if (twin) {
			/* Older host records of this key lost their target. */
			if (m->hpend->count)
				host_drop_key(m, key);
			m->matched++;
			account(m, a, r, twin, noq);
		} else if (ref ? ntp_pend_put_key(m->hpend, r, key, &ev, 1) : ntp_pend_put(m->hpend, r, &ev)) {
			host_lost(m, &ev);
		}
	} else if (r->side == NTP_SIDE_TARGET) {
		m->target_records++;
		if (!join && m->cfg.role == NTP_ROLE_HOST)
			return;
		if (!join) {
			a = group_of(m, r, NTP_SIDE_TARGET);
			a->seen++;
			account_call(m, a, NULL, r);
			return;
		}
		key = ntp_pend_key(r);
		/* older host records of this key, dropped, are charged to
		 * their groups (host_take_older) */
		twin = m->hpend->count ? host_take(m, r, key) : NULL;
		if (twin) {
			m->unmatched_target += m->tpend->count ? ntp_pend_drop_key_some(m->tpend, key) : 0;
			m->matched++;
			a = group_of(m, twin, NTP_SIDE_HOST);
			account_call(m, a, twin, r);
		} else if (ref ? ntp_pend_put_key(m->tpend, r, key, &ev, 1) : ntp_pend_put(m->tpend, r, &ev)) {
			m->unmatched_target++;
		}
	} else {
		m->other_side++;	/* neither side: no group takes it */
	}
}

void ntp_model_ingest(struct ntp_model *m, const struct ntp_record *r)
{
	ingest(m, r, 0, m->join, m->cfg.no_quantiles);
}

/*
 * One loop over the block, the reduction inlined in it: a call per record
 * saved and restored the registers of the reduction each time. The records
 * that wait for their twin are kept by reference until the block's end,
 * when those still waiting are copied (ntp_pend_settle).
 */
void ntp_model_ingest_block(struct ntp_model *m, const struct ntp_record *r, size_t n)
{
	/* a pointer to the end, not an index: the index and the record's
	 * address (a multiply by 272) were both kept per record */
	const struct ntp_record *end = r + n;

	if (n && !m->started)
		ntp_model_set_start(m, first_ts(r));
	/* No prefetch: a block's records are read in order, which the CPU's
	 * own prefetcher follows (docs/performance.md). */
	if (!m->join) {
		for (; r < end; r++)
			ingest(m, r, 1, 0, m->cfg.no_quantiles);
		return;
	}
	/* a report's common case, no histogram beyond the end to end's, a
	 * loop of its own: no test of no_quantiles per command */
	if (m->cfg.no_quantiles == NOQ_ALL)
		for (; r < end; r++)
			ingest(m, r, 1, 1, NOQ_ALL);
	else
		for (; r < end; r++)
			ingest(m, r, 1, 1, m->cfg.no_quantiles);
	ntp_pend_settle(m->hpend);
	ntp_pend_settle(m->tpend);
}

/* ntp_model_ingest_block's loops over pointers to the records: a shared
 * inline body choosing between the two per record cost instructions in
 * the block's loop. */
void ntp_model_ingest_refs(struct ntp_model *m, const struct ntp_record *const *r, size_t n)
{
	if (n && !m->started)
		ntp_model_set_start(m, first_ts(r[0]));
	if (!m->join) {
		for (size_t i = 0; i < n; i++)
			ingest(m, r[i], 1, 0, m->cfg.no_quantiles);
		return;
	}
	/* a pointer to the end, as ntp_model_ingest_block's */
	const struct ntp_record *const *end = r + n;

	if (m->cfg.no_quantiles == NOQ_ALL)
		for (; r < end; r++)
			ingest(m, *r, 1, 1, NOQ_ALL);
	else
		for (; r < end; r++)
			ingest(m, *r, 1, 1, m->cfg.no_quantiles);
	ntp_pend_settle(m->hpend);
	ntp_pend_settle(m->tpend);
}

void ntp_model_set_totals(struct ntp_model *m, const struct ntp_total *t, size_t n, uint64_t now_ns)
{
	if (m->n_totals && now_ns > m->totals_as_of) {
		memcpy(m->prev, m->totals, m->n_totals * sizeof(*t));
		m->n_prev = m->n_totals;
		m->prev_as_of = m->totals_as_of;
	}
	m->totals_as_of = now_ns;
	if (n > MAX_TOTALS)
		n = MAX_TOTALS;
	if (n)
		memcpy(m->totals, t, n * sizeof(*t));
	m->n_totals = n;
}

void ntp_model_add_lost(struct ntp_model *m, uint64_t lost)
{
	m->lost += lost;
}

void ntp_model_set_skipped(struct ntp_model *m, uint64_t cumulative)
{
	m->skipped = cumulative;
}

void ntp_model_gc_stats(const struct ntp_model *m, struct ntp_model_gc_stats *out)
{
	out->fast = m->gc.n_fast;
	out->rehash = m->gc.rehash;
	out->draws = m->gc.draws;
	out->out_offers = m->gc.out_offers;
}

size_t ntp_model_pending(const struct ntp_model *m)
{
	return m->join ? ntp_pend_count(m->hpend) + ntp_pend_count(m->tpend) : 0;
}

/* Cumulative exact count of a group in rows t[0..n), or -1 when absent. */
static int64_t total_of(const struct ntp_total *t, size_t n, const struct group *g)
{
	int64_t sum = -1;

	for (size_t i = 0; i < n; i++) {
		const struct ntp_group_key *k = &t[i].key;

		if (k->side == g->side && k->io == g->io && k->len == g->len &&
		    !strncmp(k->dev, g->dev, NTP_DEV_LEN))
			sum = (sum < 0 ? 0 : sum) + (int64_t)t[i].count.commands;
	}
	return sum;
}

/*
 * A group's cumulative exact count at time t, or -1 when unknown; *exact 0
 * when it is a guess past the last totals. Live, the counters are read at
 * each close (t is their time). A replay hands over, before it closes an
 * interval, the counts at its end interpolated between the file's totals
 * blocks around it (pump_files.c), so t is their time too. Short of that (no
 * block after t: a file without totals there, or a count read failed live),
 * between two sets of totals the count is interpolated in time (exact, as
 * a replay's), past the last one it goes on at the rate between the last
 * two (the recording's start counting as zero), not exact. Past twice the blocks' spacing (at least 2 s)
 * no guess is made.
 */
static int64_t count_at(const struct ntp_model *m, const struct group *g, uint64_t t, int *exact)
{
	int64_t cur = total_of(m->totals, m->n_totals, g), prev = 0;
	uint64_t t1 = m->totals_as_of, t0 = m->first_start_ns, span, horizon;

	*exact = 1;
	if (cur < 0 || t == t1)
		return cur;
	if (m->n_prev) {
		prev = total_of(m->prev, m->n_prev, g);
		t0 = m->prev_as_of;
		if (prev < 0)
			prev = 0;
	}
	if (t1 <= t0 || cur < prev) {
		*exact = 0;
		return t > t1 ? cur : -1;
	}
	span = t1 - t0;
	if (t <= t0 && m->n_prev) {
		/* Before the earlier set (a replay's first boundary can come
		 * after a totals block and the read-ahead's counts): from zero
		 * at the recording's start, not the earlier set's count */
		uint64_t f = m->first_start_ns;

		if (t <= f)
			return 0;
		*exact = 0;
		return t0 > f ? (int64_t)llround((double)prev * (double)(t - f) / (double)(t0 - f)) : prev;
	}
	if (t < t1)
		return t <= t0 ? prev : prev + (int64_t)llround((double)(cur - prev) * (double)(t - t0) / (double)span);
	*exact = 0;
	horizon = 2 * (span > 1000000000ull ? span : 1000000000ull);
	if (t - t1 > horizon)
		return -1;
	return cur + (int64_t)llround((double)(cur - prev) * (double)(t - t1) / (double)span);
}

/* Cumulative stage sums of a group's key from the totals: 1 when a row has
 * any (recorded with --exact-queues), else 0. */
static int occ_of(const struct ntp_model *m, uint8_t side, uint8_t io, uint32_t len, const char *dev,
		  struct ntp_group_occ *out)
{
	int any = 0;

	memset(out, 0, sizeof(*out));
	if (!dev[0])
		return 0;
	for (size_t i = 0; i < m->n_totals; i++) {
		const struct ntp_group_key *k = &m->totals[i].key;

		if (k->side == side && k->io == io && k->len == len && !strncmp(k->dev, dev, NTP_DEV_LEN) &&
		    ntp_occ_any(&m->totals[i].occ)) {
			ntp_occ_add_to(out, &m->totals[i].occ);
			any = 1;
		}
	}
	return any;
}

/* Counted QDs (occ.h) in place of Little's law, for the stages present. */
static void fill_counted(struct ntp_snap_group *o, const struct ntp_group_occ *h,
			 const struct ntp_group_occ *t, double seconds)
{
	struct ntp_occ_qd q;

	if (ntp_occ_stage_qd(h, t, seconds, &q))
		return;
	o->qd_counted = 1;
	o->qd_host_recv = q.host_recv;
	o->qd_summed = q.summed;
	o->qd_incomplete = q.incomplete;
	for (int s = 0; s < NTP_STAGE_COUNT; s++)
		if (o->stage[s].present)
			o->stage[s].avg_qd = q.stage[s];
}

static double us(double ns)
{
	return ns / 1000.0;
}

static void fill_group(const struct ntp_model *m, const struct group *g, const struct acc *a,
		       int counted, uint64_t commands, uint64_t unmatched, double seconds,
		       struct ntp_snap_group *o)
{
	/* p50, p99, p99.9: one walk of a histogram's buckets for the three */
	static const double qs[3] = { 0.50, 0.99, 0.999 };
	double e2e_mean = 0, q[3];

	memset(o, 0, sizeof(*o));
	o->io = g->io;
	o->len = g->len;
	memcpy(o->dev, g->dev, NTP_DEV_LEN);
	o->host_only = m->cfg.role == NTP_ROLE_HOST;
	o->target_only = m->cfg.role == NTP_ROLE_TARGET;
	o->seen = a->seen;
	o->sampled = acc_sampled(a);
	o->unmatched = unmatched;
	o->fallback_records = a->fallback;
	o->incomplete_records = a->incomplete;
	o->missed_records = a->missed;
	o->bio_records = a->bio;
	o->tag_wait_sum_ns = (int64_t)a->tag_wait_sum;
	o->commands = counted ? commands : 0;
	if (seconds > 0)
		o->rate = counted ? (double)commands / seconds : (double)a->est_cmds / seconds;
	o->iops = o->rate;
	o->mbps = o->rate * g->len / 1e6;
	/* The time the group had commands: its sampled commands span
	 * (n - 1) / (n + 1) of it on average, when spread evenly. */
	if (o->sampled > 1 && a->span_hi > (uint64_t)0 - a->span_nlo && seconds > 0) {
		double busy = (double)(a->span_hi - ((uint64_t)0 - a->span_nlo)) / 1e9 * (double)(o->sampled + 1) /
			      (double)(o->sampled - 1);

		o->busy_rate = o->rate * seconds / (busy < seconds ? busy : seconds);
	}
	if (o->sampled) {
		e2e_mean = (double)a->e2e_sum / (double)o->sampled;
		o->e2e_mean_us = us(e2e_mean);
		ntp_hset_quantiles(&a->h, H_E2E, o->sampled, qs, q, 3);
		o->e2e_p50_us = us(q[0]);
		o->e2e_p99_us = us(q[1]);
		o->e2e_p999_us = us(q[2]);
	}
	o->largest = -1;
	for (int s = 0; s < NTP_STAGE_COUNT; s++) {
		struct ntp_snap_stage *st = &o->stage[s];

		if (!a->st_n[s])
			continue;
		st->present = 1;
		/* Every sampled command has each present stage: divide by the
		 * sampled count so the stage means add up to the e2e mean. */
		st->mean_us = us((double)a->st_sum[s] / (double)o->sampled);
		if (!(m->cfg.no_quantiles & NTP_MODEL_NO_STAGE_Q)) {
			ntp_hset_quantiles(&a->h, H_ST + s, a->st_n[s], qs, q, 3);
			st->p50_us = us(q[0]);
			st->p99_us = us(q[1]);
			st->p999_us = us(q[2]);
		}
		st->share = e2e_mean != 0 ? st->mean_us / us(e2e_mean) : 0;
		st->avg_qd = st->avg_qd_little = st->mean_us * 1e-6 * o->rate;
		if (o->largest < 0 || st->mean_us > o->stage[o->largest].mean_us)
			o->largest = s;
	}
	if (o->largest < 0)
		o->largest = NTP_STAGE_NETWORK;
	for (int c = 0; c < NTP_COMP_COUNT; c++) {
		struct ntp_snap_comp *sc = &o->comp[c];

		if (!a->c_n[c])
			continue;
		sc->n = a->c_n[c];
		sc->mean_us = us((double)a->c_sum[c] / (double)a->c_n[c]);
		if (!(m->cfg.no_quantiles & NTP_MODEL_NO_COMP_Q)) {
			ntp_hset_quantiles(&a->h, H_C + c, a->c_n[c], qs, q, 3);
			sc->p50_us = us(q[0]);
			sc->p99_us = us(q[1]);
			sc->p999_us = us(q[2]);
		}
		sc->avg_qd = sc->mean_us * 1e-6 * o->rate;
	}
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct ntp_snap_group *a = pa, *b = pb;

	if (a->io != b->io)
		return a->io < b->io ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return strncmp(a->dev, b->dev, NTP_DEV_LEN);
}

static void fill_header(const struct ntp_model *m, struct ntp_snapshot *out)
{
	out->sampling = m->cfg.sampling;
	out->role = m->cfg.role;
	out->transport = m->cfg.transport;
	out->impl_host = m->cfg.impl_host;
	out->impl_target = m->cfg.impl_target;
	out->lost_events = m->lost;
	out->skipped_runs = m->skipped;
	out->host_records = m->host_records;
	out->target_records = m->target_records;
	out->matched = m->matched;
	out->unmatched_host = m->unmatched_host;
	out->unmatched_target = m->unmatched_target;
	out->overflow_records = m->overflow;
	out->oom = m->oom;
	out->oom_records = m->oom_records;
	out->other_side_records = m->other_side;
	memcpy(out->spdk_tcp, m->spdk_tcp, sizeof(out->spdk_tcp));
	memcpy(out->spdk_split, m->spdk_split, sizeof(out->spdk_split));
}

static void acc_merge(struct acc *d, const struct acc *s)
{
	/* s is folded (ntp_model_close_interval): so is d */
	d->seen += s->seen;
	d->seen_n += s->seen_n;
	d->est_cmds += s->est_cmds;
	/* s's run is in st_n and c_n (flushed at its close); d's runs are
	 * never flushed: its counts are all in st_n and c_n too */
	d->sampled += acc_sampled(s);
	d->fallback += s->fallback;
	d->incomplete += s->incomplete;
	d->missed += s->missed;
	d->bio += s->bio;
	d->tag_wait_sum += s->tag_wait_sum;
	d->e2e_sum = (int64_t)((uint64_t)d->e2e_sum + (uint64_t)s->e2e_sum);	/* as acc_add */
	span_add(d, (uint64_t)0 - s->span_nlo, s->span_hi);
	/* s is flushed (its run is in st_n and c_n): ntp_model_close_interval */
	for (int i = 0; i < NTP_STAGE_COUNT; i++)
		d->st_n[i] += s->st_n[i];
	for (int i = 0; i < NTP_COMP_COUNT; i++)
		d->c_n[i] += s->c_n[i];
	sum_into(d->st_sum, s->st_sum, (NTP_STAGE_COUNT + 1) / 2);
	sum_into(d->c_sum, s->c_sum, (NTP_COMP_COUNT + 1) / 2);
	ntp_hset_merge(&d->h, &s->h, H_COUNT);
}

/* Zeroes the counters, keeps the histograms' pool. */
static void acc_reset(struct acc *a)
{
	memset(a, 0, offsetof(struct acc, h));
	ntp_hset_reset(&a->h);
}

/* The growth of a group's stage sums since the last close, for the sides
 * its role records (host group: the host's key, and with role both the
 * target's key of its matched records; target group: its own), and in *secs
 * the time it spans: from the totals' as_of at the last close to theirs now
 * (live, that is the interval; a replay hands over the totals at each
 * boundary, interpolated between the blocks around it: pump_files.c). 1 when every side needed has sums (counted
 * QDs), else 0: the sums then carry over to the next interval. */
static int occ_interval(struct ntp_model *m, struct group *g, uint64_t now_ns, struct ntp_group_occ *dh,
			struct ntp_group_occ *dt, double *secs)
{
	uint64_t base = g->occ_base_ns ? g->occ_base_ns : m->first_start_ns;
	uint64_t upto = m->totals_as_of && m->totals_as_of <= now_ns ? m->totals_as_of : now_ns;
	int need_h = m->cfg.role != NTP_ROLE_TARGET, need_t = m->cfg.role != NTP_ROLE_HOST;
	const char *tdev = m->cfg.role == NTP_ROLE_TARGET ? g->dev : g->tdev;
	struct ntp_group_occ ch, ct;
	int have_h = 0, have_t = 0;

	memset(dh, 0, sizeof(*dh));
	memset(dt, 0, sizeof(*dt));
	if (need_h)
		have_h = occ_of(m, NTP_SIDE_HOST, g->io, g->len, g->dev, &ch);
	if (need_t)
		have_t = occ_of(m, NTP_SIDE_TARGET, g->io, g->len, tdev, &ct);
	/* a side still missing (role both before the first join names the
	 * target's device): the sums carry over to the next interval */
	if ((need_h && !have_h) || (need_t && !have_t) || upto <= base)
		return 0;
	*secs = (double)(upto - base) / 1e9;
	g->occ_base_ns = upto;
	if (need_h) {
		ntp_occ_delta(&ch, &g->base_h, dh);
		g->base_h = ch;
	}
	if (need_t) {
		ntp_occ_delta(&ct, &g->base_t, dt);
		g->base_t = ct;
	}
	ntp_occ_add_to(&g->all_h, dh);
	ntp_occ_add_to(&g->all_t, dt);
	g->occ_all = 1;
	return 1;
}

/* The group lookup's answers after a close gave groups a new cur: each
 * entry's old accumulator (now its group's all) names the group. */
static void gc_rebind(struct group_cache *c)
{
	for (unsigned i = 0; i < c->n_fast; i++) {
		struct gc_ent *e = &c->fast[c->fast_at[i]];

		/* a key of no group answers the model's none (no grp) */
		if (e->a->grp)
			e->a = e->a->grp->cur;
	}
}

/*
 * A group for each key the totals count on the model's side (the host's;
 * the target's when only it is fed) that no record made yet: at sparse
 * sampling (-s 1000) a namespace's commands are counted long before the
 * first is sampled, and its rate is known from the count alone
 * (docs/top.md). A row of no namespace (a command the target failed
 * before it had one) makes none.
 */
static void groups_from_totals(struct ntp_model *m)
{
	uint8_t side = m->cfg.role == NTP_ROLE_TARGET ? NTP_SIDE_TARGET : NTP_SIDE_HOST;

	/* half the table at most: the rest stays for the groups records make */
	for (size_t i = 0; i < m->n_totals && m->n_groups < NTP_SNAP_MAX_GROUPS / 2; i++) {
		const struct ntp_group_key *k = &m->totals[i].key;
		char dev[NTP_DEV_LEN] = { 0 };
		unsigned j;

		/* a name that fills the field with no NUL (a damaged file: the
		 * kernel's and generate's end within it) names no group the
		 * row's count could be found for again (a new one each close) */
		if (k->side != side || !m->totals[i].count.commands || !k->dev[0] ||
		    !memchr(k->dev, 0, NTP_DEV_LEN))
			continue;
		for (j = 0; j < m->n_groups; j++) {
			const struct group *g = &m->groups[j];

			if (g->io == k->io && g->len == k->len && g->side == side &&
			    !strncmp(g->dev, k->dev, NTP_DEV_LEN))
				break;
		}
		if (j < m->n_groups)
			continue;
		/* as a record names it: NUL-padded (group_is compares the
		 * whole field) */
		strncpy(dev, k->dev, NTP_DEV_LEN - 1);
		group_new(m, k->io, side, k->len, dev);
	}
}

void ntp_model_close_interval(struct ntp_model *m, uint64_t now_ns, struct ntp_snapshot *out)
{
	double seconds;
	int swapped = 0;

	if (!m->started)
		ntp_model_set_start(m, now_ns);
	seconds = now_ns > m->start_ns ? (double)(now_ns - m->start_ns) / 1e9 : 0;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->index = m->index;
		out->start_ns = m->start_ns;
		out->end_ns = now_ns;
		out->seconds = seconds;
		fill_header(m, out);
		/* an interval that straddled a change of -s (ntprof-top's s
		 * key) says so: its records were seen under both */
		out->sampling_from = m->sampling_open != m->cfg.sampling ? m->sampling_open : 0;
	}
	m->sampling_open = m->cfg.sampling;
	groups_from_totals(m);
	for (unsigned i = 0; i < m->n_groups; i++) {
		struct group *g = &m->groups[i];
		int exact, base_exact = g->base_exact;
		int64_t cum = count_at(m, g, now_ns, &exact);
		uint64_t cmds = 0;
		struct ntp_group_occ dh, dt;
		struct acc *fresh;
		double occ_secs = 0;
		int counted_qd = occ_interval(m, g, now_ns, &dh, &dt, &occ_secs);

		if (cum >= 0 && !g->based) {
			/* first counted: the base is the count at the interval's
			 * start; the commands before it, estimated from the samples
			 * in earlier intervals, join the run's total */
			int ea;
			int64_t a = count_at(m, g, m->start_ns, &ea);

			g->base_cmds = a > 0 ? (uint64_t)a : 0;
			g->cmds_all += g->base_cmds;
			g->based = 1;
			base_exact = a >= 0 && ea;
		}
		if (cum >= 0) {
			cmds = (uint64_t)cum >= g->base_cmds ? (uint64_t)cum - g->base_cmds : 0;
			if ((uint64_t)cum > g->base_cmds)
				g->base_cmds = (uint64_t)cum;
			g->cmds_all += cmds;
			g->counted_all = 1;
		}
		/* The interval's count is exact when the counts at both of its
		 * ends are (else the estimate, sampled x N); a record is a
		 * command: never fewer than the records (the counters and the
		 * records are not read at the same instant) */
		g->counted = cum >= 0 && exact && base_exact;
		g->base_exact = cum >= 0 && exact;
		if (g->counted) {
			/* an excess shown before (below) was counted at this
			 * read: given back here, so the intervals add up to the
			 * counters; the run's count stays theirs */
			uint64_t back = cmds < g->carry ? cmds : g->carry;

			cmds -= back;
			g->carry -= back;
			if (cmds < g->cur->seen) {
				g->carry += g->cur->seen - cmds;
				cmds = g->cur->seen;
			}
		}
		acc_flush(g->cur);
		acc_fold(g->cur, m->cfg.sampling);
		if (out) {
			struct ntp_snap_group *o = &out->groups[out->n_groups++];

			fill_group(m, g, g->cur, g->counted, cmds, g->unmatched, seconds, o);
			/* g->all holds the closed intervals, else it is the
			 * zeroed spare, not read: its pages may be untouched,
			 * and a read of one maps the zero page that the write
			 * of acc_bind below must then replace (two page faults
			 * where one does) */
			o->sampled_run = (g->closed ? acc_sampled(g->all) : 0) + acc_sampled(g->cur);
			if (counted_qd)
				fill_counted(o, m->cfg.role == NTP_ROLE_TARGET ? NULL : &dh,
					     m->cfg.role == NTP_ROLE_HOST ? NULL : &dt, occ_secs);
		}
		if (g->cur->h.oom)
			m->oom = 1;
		/* Fold the interval into the run's accumulators, start afresh:
		 * at the group's first close the interval is the run (a merge
		 * into zeroed ones gives the same), so it becomes the run's
		 * and the zeroed spare takes its place, without a merge; this is
		 * the only close of `ntprof report`. */
		if (!g->closed) {
			fresh = g->all;
			g->all = g->cur;
			g->cur = fresh;
			g->closed = 1;
			swapped = 1;
		} else {
			acc_merge(g->all, g->cur);
			/* a chunk the run's histograms could not have */
			if (g->all->h.oom)
				m->oom = 1;
			acc_reset(g->cur);
		}
		acc_bind(g->cur, g, m->cfg.general_only);
		g->unmatched_all += g->unmatched;
		g->unmatched = 0;
	}
	if (swapped)
		gc_rebind(&m->gc);
	if (out) {
		out->oom = m->oom;	/* an interval's histograms and the run's too (above) */
		qsort(out->groups, out->n_groups, sizeof(out->groups[0]), group_cmp);
	}
	m->start_ns = now_ns;
	m->last_close_ns = now_ns;
	m->index++;
}

/* The host records still waiting for their target, per group (waiting[],
 * by the group's index): at the end of input their target never came. */
static uint64_t host_waiting(struct ntp_model *m, uint64_t *waiting)
{
	const struct ntp_pend *p = m->hpend;
	uint64_t n = 0;

	if (!m->join || !p || !p->count)
		return 0;
	/* every pending record arrived within the last rmask + 1 puts, in
	 * the slot of its arrival number (pending_int.h) */
	for (uint64_t at = p->seq - (p->rmask + 1); at < p->seq; at++) {
		const struct ntp_pend_slot *s = &p->slots[at & p->rmask];
		struct acc *a;

		if (s->due != at + p->cap)
			continue;	/* taken, dropped or evicted */
		n++;
		a = group_of(m, s->rec, NTP_SIDE_HOST);
		if (a->grp)
			waiting[a->grp - m->groups]++;
	}
	return n;
}

void ntp_model_total(struct ntp_model *m, struct ntp_snapshot *out)
{
	double seconds = m->last_close_ns > m->first_start_ns
			 ? (double)(m->last_close_ns - m->first_start_ns) / 1e9 : 0;
	uint64_t waiting[NTP_SNAP_MAX_GROUPS] = { 0 };
	uint64_t n_waiting = host_waiting(m, waiting);

	/* the header and the extensions after the groups; the groups are
	 * written one by one (fill_group) and read up to n_groups: the rest
	 * of the 90 KB, pages of the caller's memory that a memset would fault
	 * in, stays untouched (docs/performance.md) */
	memset(out, 0, offsetof(struct ntp_snapshot, groups));
	memset(&out->overflow_records, 0, sizeof(*out) - offsetof(struct ntp_snapshot, overflow_records));
	out->index = 0;
	out->start_ns = m->first_start_ns;
	out->end_ns = m->last_close_ns;
	out->seconds = seconds;
	fill_header(m, out);
	/* the records either side still waits with: their twin never came */
	out->unmatched_host += n_waiting;
	out->unmatched_target += m->join && m->tpend ? m->tpend->count : 0;
	for (unsigned i = 0; i < m->n_groups; i++) {
		struct group *g = &m->groups[i];

		if (!g->closed)
			continue;
		if (g->all->h.oom)
			m->oom = 1;
		fill_group(m, g, g->all, g->counted_all, g->cmds_all, g->unmatched_all + waiting[i], seconds,
			   &out->groups[out->n_groups]);
		out->groups[out->n_groups].sampled_run = acc_sampled(g->all);
		if (g->occ_all)
			fill_counted(&out->groups[out->n_groups], m->cfg.role == NTP_ROLE_TARGET ? NULL : &g->all_h,
				     m->cfg.role == NTP_ROLE_HOST ? NULL : &g->all_t, seconds);
		out->n_groups++;
	}
	out->oom = m->oom;
	qsort(out->groups, out->n_groups, sizeof(out->groups[0]), group_cmp);
}

void ntp_model_set_sampling(struct ntp_model *m, uint32_t n)
{
	/* the records seen so far were seen under the N before */
	for (unsigned i = 0; i < m->n_groups; i++)
		acc_fold(m->groups[i].cur, m->cfg.sampling);
	m->cfg.sampling = n ? n : 1;
}
