// SPDX-License-Identifier: GPL-2.0
/*
 * join_align.c - how to interleave several recordings before the join.
 *
 * The merge of ntp_join_feed() orders records by their time mapped onto the
 * wall clock through each file's header. Machines whose wall clocks disagree
 * by more than the join window covers would then feed twins too far apart.
 * This pre-pass looks at a bounded sample of each file (a target's first
 * records; of many hosts, a host's share counted from its first command
 * its target's sample holds, struct sampler), finds commands present in a
 * host-side file and a target-side file (same
 * key, LBA, length, opcode), and takes the median of the host's "command
 * sent" minus the target's "command arrived" on the mapped clocks: the wall
 * clocks' disagreement plus a one-way trip of the wire. When a recording
 * began more than a second before the last one did, a second sample of it
 * starts where the last one began (on the wall clocks), and the offset more
 * pairs agree on wins: its first records may hold no command of the other's.
 * An offset is taken only where the pairs agree on it (judged_offset); a
 * host whose samples give none is read on (host_search), and a file that
 * still has none is left on the wall clocks and said
 * (ntp_join_align_state, docs/failures.md). Files the primary file does not
 * reach are aligned from another (spread): which files are aligned does not
 * depend on the order they were given in.
 * That offset only orders the input; no stage time uses it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "join.h"
#include "../thread.h"

#define ALIGN_SAMPLE 32768	/* records read from the start of each file... */
/* A join of one or two hosts is first aligned from samples this long, and
 * that alignment is kept if it aligned every file on one clock, each pair
 * of files by at least ALIGN_QUICK_AGREE agreeing pairs; else it is done
 * again with ALIGN_SAMPLE (ntp_join_align_state). Reading, indexing and
 * matching 32768 records of each file, and the first touch of their
 * memory, was most of what a small join costs beyond its records
 * (docs/performance.md, "A quick sample first"). Of more hosts, each
 * host's share of a target's quick sample is too short to agree that
 * much. */
#define ALIGN_QUICK 4096
#define ALIGN_QUICK_AGREE 1024
#define ALIGN_QUICK_HOSTS 2
/* False pairs (a command id and LBA that came back: an SPDK host at queue
 * depth 1 that began early) agree within a sample that spans a few
 * ALIGN_WINDOW_NS, as a quick one may: where more than one in this many
 * of the targets' quick marks repeat a command of their sample, the quick
 * run is not used. */
#define ALIGN_QUICK_REPEAT 16
#define ALIGN_HOST_MIN 256	/* ...but of each of many host-side files its share, at least this */
/* A host's sample as it once was, of any number of hosts: its first this
 * many records. One of many hosts looks that far for its first command the
 * targets' samples hold, if they hold none of its controllers (struct
 * sampler); further only in host_search. */
#define ALIGN_HOST_FLOOR 4096
#define ALIGN_MIN_PAIRS 8
/* A host file of fewer records than this that pairs with nothing is a short
 * or idle recording, not a wrong one: not said (ntp_join_align_note) */
#define ALIGN_FEW_RECORDS 64
/* A second sample starts where the last recording began, on the wall clocks,
 * less this margin, after passing at most ALIGN_SKIP_MAX records: for a side
 * that began so much earlier that its first records hold no command of the
 * other's (an SPDK target recorded seconds before its host). */
#define ALIGN_LATE_MARGIN_NS 1000000000ll
#define ALIGN_SKIP_MAX (16 * ALIGN_SAMPLE)
#define ALIGN_SORT_STACK 256	/* differences sorted without malloc: one command's shifts */
/* The scratch memory of the phases one after another, one block for all:
 * tindex_build's group of each target mark (4 bytes a mark), then
 * median_offset's per host mark (ALIGN_MED_BYTES), whose first part then
 * holds sort_diffs's other buffer (8 bytes a difference, at most one per
 * host mark). Each phase had blocks of its own, malloc'd and freed: each
 * came back as fresh pages, a page fault per 4 KiB at its first touch,
 * where the block of the phase before was already resident. */
#define ALIGN_MED_BYTES (sizeof(int64_t) + 2 * sizeof(uint32_t))
#define ALIGN_SCRATCH_BYTES (ALIGN_SAMPLE * ALIGN_MED_BYTES)
_Static_assert(ALIGN_QUICK <= ALIGN_SAMPLE, "the quick sample is the shorter");

/*
 * The arrays of a run (the samples' marks, the targets' indexes, the
 * differences, the scratch block) are carved from one zeroed block in
 * turn, sized before the first is taken (align_run). Each from malloc
 * came back as fresh pages, a page fault per 4 KiB at its first touch,
 * most of a 2-file join's alignment where faults are dear
 * (docs/performance.md, "The run's memory in the buffer's huge page").
 * The block is the rest of the huge page of the samples' read() buffer
 * (ntp_buf_arena_extra), which that buffer's first read zeroes whole.
 */
struct carve {
	uint8_t *at;
};
/* ...unless the files are this short (align_run) */
#define ALIGN_SMALL_BYTES (64u << 10)

static size_t carve_len(size_t bytes)
{
	return (bytes + 63) & ~(size_t)63;
}

/* bytes of c (align_run sizes its room for every take) */
static void *carve(struct carve *c, size_t bytes)
{
	void *p = c->at;

	c->at += carve_len(bytes);
	return p;
}

struct mark {
	uint64_t key, slba;
	uint32_t len;
	uint8_t opcode;
	/* a host mark kept for the one target sample there is: its command's
	 * group there + 1 (struct tindex), found as it was kept, so that
	 * median_offset does not look it up again; else 0 */
	uint16_t tg;
	int64_t t;		/* host: CMD_SENT, target: CMD_ARRIVE, on the mapped clock */
};
/* a target sample's groups are at most its marks */
_Static_assert(ALIGN_SAMPLE < UINT16_MAX, "a group + 1 fits in mark.tg");

/* Times from a file are any 64-bit values (a damaged or hostile file, a
 * clock years off): sums and differences wrap as the unsigned clock does
 * instead of overflowing a signed integer, which is undefined. A wrapped
 * offset only misorders the merge; the join window still decides twins. */
static int64_t wrap_add(uint64_t a, int64_t b)
{
	return (int64_t)(a + (uint64_t)b);
}

static int64_t wrap_sub(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

static inline int i64_less(const int64_t *a, const int64_t *b)
{
	return *a < *b;
}

/*
 * Sorts with the comparison inlined: qsort's call through a pointer per
 * comparison was most of this pre-pass (a fifth of a 64-file report).
 * Bottom-up merge sort over runs of 16 sorted by insertion, through tmp
 * (n elements). Elements that compare equal are equal in every field the
 * callers read, so the result is the one qsort gave.
 */
#define DEFINE_SORT(name, T, less)						\
static void name(T *a, size_t n, T *tmp)					\
{										\
	T *src = a, *dst = tmp;							\
										\
	for (size_t lo = 0; lo < n; lo += 16) {					\
		size_t hi = lo + 16 < n ? lo + 16 : n;				\
										\
		for (size_t i = lo + 1; i < hi; i++) {				\
			T x = a[i];						\
			size_t j = i;						\
										\
			for (; j > lo && less(&x, &a[j - 1]); j--)		\
				a[j] = a[j - 1];				\
			a[j] = x;						\
		}								\
	}									\
	for (size_t w = 16; w < n; w *= 2) {					\
		for (size_t lo = 0; lo < n; lo += 2 * w) {			\
			size_t mid = lo + w < n ? lo + w : n;			\
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;		\
			size_t i = lo, j = mid, k = lo;				\
										\
			while (i < mid && j < hi)				\
				dst[k++] = less(&src[j], &src[i]) ? src[j++] : src[i++]; \
			while (i < mid)						\
				dst[k++] = src[i++];				\
			while (j < hi)						\
				dst[k++] = src[j++];				\
		}								\
		T *t = src;							\
										\
		src = dst;							\
		dst = t;							\
	}									\
	if (src != a)								\
		memcpy(a, src, n * sizeof(*a));					\
}

DEFINE_SORT(sort_i64_in, int64_t, i64_less)

static void sort_i64(int64_t *a, size_t n)
{
	int64_t stack[ALIGN_SORT_STACK], *tmp = n <= ALIGN_SORT_STACK ? stack : malloc(n * sizeof(*tmp));

	if (!tmp) {
		qsort(a, n, sizeof(*a), cmp_i64);
		return;
	}
	sort_i64_in(a, n, tmp);
	if (tmp != stack)
		free(tmp);
}

struct tindex;
static inline int in_targets(struct tindex *const *ti, size_t nti, struct mark *m);
static int ctl_known(struct tindex *const *ti, size_t nti, const struct ntp_record *x, size_t k, uint8_t side);

/*
 * One sample of one side of a file: the first records (at most max) of the
 * file, that side's marks, in file order (a target's are sorted by command
 * later, tindex_build); with from (not 0), the first from that time on
 * (mapped clock), after passing at most ALIGN_SKIP_MAX earlier records.
 * With ti (a host's side among many hosts, the targets' samples indexed):
 * only the marks of commands one of ti[0..nti) holds, and the max records
 * counted from the first such mark: a host's share of the target's sample begins where the host's
 * commands and the target's first meet, not where the host's file does.
 * That mark is looked for within the first ALIGN_HOST_FLOOR records, or
 * ALIGN_SAMPLE if the targets' samples hold commands of the controllers
 * of the host's records in the block of its ALIGN_HOST_FLOOR-th
 * (ctl_known, sample_file): a host of none of their controllers stops
 * where its sample once did, and is read on only if nothing else aligns
 * it (host_search).
 */
struct sampler {
	struct mark *out;
	size_t max, n, seen, skipped;
	size_t limit;		/* the records the sample ends at (sample_file) */
	int64_t from;
	struct tindex *const *ti;
	size_t nti;
	uint8_t side;
};

static inline __attribute__((always_inline)) int sampler_take_(struct sampler *s, const struct ntp_record *x,
								 size_t k, int64_t to_wall, int filter)
{
	int slot = s->side == NTP_SIDE_HOST ? NTP_TS_H_CMD_SENT : NTP_TS_T_CMD_ARRIVE;
	size_t n = s->n, seen = s->seen;

	for (size_t i = 0; i < k && seen < s->limit; i++, seen++) {
		struct mark *m;
		int64_t t;

		if (x[i].side != s->side || !(x[i].ts_valid & (1u << slot)))
			continue;
		t = wrap_add(x[i].ts[slot], to_wall);
		if (s->from && t < s->from && s->skipped < ALIGN_SKIP_MAX) {
			s->skipped++;
			seen--;		/* passed: not one of the max */
			continue;
		}
		/* written in place, kept by counting it: a filtered sample
		 * has fewer marks than records left (the share counted from
		 * its first mark), so out[n] is within it */
		m = &s->out[n];
		*m = (struct mark){ .key = ((uint64_t)x[i].cntlid << 32) | ((uint64_t)x[i].qid << 16) | x[i].cid,
				    .slba = x[i].slba, .len = x[i].len, .opcode = x[i].opcode, .t = t };
		if (filter) {
			if (!in_targets(s->ti, s->nti, m))
				continue;
			if (!n)		/* the first: the share counted from here */
				s->limit = seen + s->max;
		}
		n++;
	}
	s->n = n;
	s->seen = seen;
	return seen >= s->limit;
}

/* Takes the records x[0..k) into s while it is not full; 1 once it is. A
 * loop of its own for a filtered sample: its lookup kept out of the loop
 * of the others. */
static int sampler_take(struct sampler *s, const struct ntp_record *x, size_t k, int64_t to_wall)
{
	return s->ti ? sampler_take_(s, x, k, to_wall, 1) : sampler_take_(s, x, k, to_wall, 0);
}

/* Fills the samplers s[0..ns) of one file (its sides, from its start and,
 * for a file that began early, again from the late start) in one pass over
 * its first records: a file that began early was read twice, once per
 * sample. */
static void sample_file(const char *path, struct sampler *s, size_t ns, struct ntp_buf_arena *rbuf)
{
	char err[256];
	/* Samples with read(), into one buffer reused block after block: it
	 * copies the sample and no more, where a window costs an mmap and an
	 * munmap per file, maps pages past the sample, and its faults cost
	 * more than the copy, a full sample's too (docs/performance.md). The
	 * buffer is rbuf's, one for the files read one after another, where
	 * one of each reader's own took a page fault per 4 KiB (NULL: its own). */
	const struct ntp_reader_opts o = { .no_mmap = 1, .arena = rbuf };
	struct ntp_reader *r;
	const struct ntp_record *recs;
	size_t k, left = 0;
	int64_t to_wall;

	for (size_t j = 0; j < ns; j++) {
		s[j].n = s[j].seen = s[j].skipped = 0;
		s[j].limit = !s[j].ti ? s[j].max : ALIGN_HOST_FLOOR;
		left += s[j].max > 0;
	}
	if (!left || !(r = ntp_reader_open_opts(path, &o, err, sizeof(err))))
		return;
	to_wall = wrap_sub(ntp_reader_info(r)->start_real_ns, ntp_reader_info(r)->start_mono_ns);
	/* each sampler walks the block on its own: the same records as a walk
	 * of all of them record by record */
	while (left && ntp_reader_next_block(r, &recs, &k) == 1)
		for (size_t j = 0; j < ns; j++) {
			if (!s[j].max || s[j].seen >= s[j].limit)
				continue;
			/* a filtered sample without a mark whose search may
			 * end in this block: on to ALIGN_SAMPLE if the host's
			 * controllers are the targets' */
			if (s[j].ti && !s[j].n && s[j].limit < ALIGN_SAMPLE && s[j].seen + k >= s[j].limit &&
			    ctl_known(s[j].ti, s[j].nti, recs, k, s[j].side))
				s[j].limit = ALIGN_SAMPLE;
			if (sampler_take(&s[j], recs, k, to_wall))
				left--;
		}
	ntp_reader_close(r);
}

static int same_cmd(const struct mark *a, const struct mark *b)
{
	return a->key == b->key && a->slba == b->slba && a->len == b->len && a->opcode == b->opcode;
}

/*
 * The offset, from commands both samples hold. One command (key, LBA,
 * length, opcode) can be sampled many times: an SPDK host at queue depth 1
 * uses one command id, so a sampled LBA comes back with the same key, and
 * the file that began earlier holds instances the other lacks. Both sides
 * see the instances of one command in the same order, so the k-th host
 * instance is the (k + s)-th target instance for one shift s per command:
 * the shift whose differences agree best (most within ALIGN_WINDOW_NS of
 * their median) is taken, and the offset is the median of the densest
 * ALIGN_WINDOW_NS of all those differences. 0 if too few.
 */
#define ALIGN_GROUP_MAX 256	/* instances of one command looked at */
#define ALIGN_SHIFT_MAX 128
#define ALIGN_WINDOW_NS 2000000

/* Of n sorted differences, how many lie within the window of their median. */
static size_t agree(const int64_t *x, size_t n)
{
	int64_t med = x[n / 2];
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		/* 128-bit: differences from a file may be anywhere in 64 bits */
		c += (__int128)x[i] - med >= -ALIGN_WINDOW_NS && (__int128)x[i] - med <= ALIGN_WINDOW_NS;
	return c;
}

/* The differences of the best shift of one command's instances, appended to d. */
static size_t best_shift(const int64_t *h, size_t nh, const int64_t *t, size_t nt, int64_t *d,
			 size_t nd)
{
	int64_t tmp[ALIGN_GROUP_MAX], best[ALIGN_GROUP_MAX];
	size_t nbest = 0, score = 0, need;
	long lo, hi;

	nh = nh < ALIGN_GROUP_MAX ? nh : ALIGN_GROUP_MAX;
	nt = nt < ALIGN_GROUP_MAX ? nt : ALIGN_GROUP_MAX;
	need = (nh < nt ? nh : nt) / 2;
	if (need < 1)
		need = 1;
	lo = -(long)nh + 1;
	hi = (long)nt - 1;
	if (lo < -ALIGN_SHIFT_MAX)
		lo = -ALIGN_SHIFT_MAX;
	if (hi > ALIGN_SHIFT_MAX)
		hi = ALIGN_SHIFT_MAX;
	for (long sh = lo; sh <= hi; sh++) {
		size_t n = 0, c;

		for (long k = sh < 0 ? -sh : 0; k < (long)nh && k + sh < (long)nt; k++)
			tmp[n++] = wrap_sub((uint64_t)h[k], (uint64_t)t[k + sh]);
		if (n < need)
			continue;
		sort_i64(tmp, n);
		c = agree(tmp, n);
		if (c > score) {
			score = c;
			nbest = n;
			memcpy(best, tmp, n * sizeof(*tmp));
		}
	}
	for (size_t k = 0; k < nbest && nd < ALIGN_SAMPLE; k++)
		d[nd++] = best[k];
	return nd;
}

/*
 * A target sample's commands found by hash: each command (key, LBA,
 * length, opcode) a group, its instances' times in time order, in a table
 * of open addressing. A host sample is looked up record by record: with 63
 * hosts and their target, sorting every host's sample and walking the
 * target's sorted sample beside each was the largest part of the join's
 * start, and sorting a 2-file join's samples most of its alignment
 * (docs/performance.md).
 * The offset is the one the two sorted samples walked side by side gave:
 * the same commands, each command's instances in time order on both sides,
 * and the differences sorted before they are used, so the order commands
 * are met in does not count (nor does the cap on differences, never
 * reached: at most one difference per host mark).
 */
struct tgroup {
	uint32_t first;		/* a mark of the command, in the sample */
	uint32_t start, end;	/* its instances' times: tt[start, end) */
	uint32_t hhead, stamp;	/* a host sample's hits of it (median_offset) */
};

struct tindex {
	const struct mark *t;	/* the sample, in file order, nt marks */
	int64_t *tt;		/* the groups' times, group by group, each in time order */
	struct tgroup *g;
	uint32_t nt, ng, stamp;
	uint64_t *tab;		/* by hash: the hash above, group + 1 below; 0: empty */
	uint32_t mask;
	/* a bit per value of the hash's low bits, set for the sample's
	 * commands (at most one in 16 set): a host mark whose command is not
	 * in the sample, most of many hosts' marks, is told by one bit
	 * instead of a probe of the table to its next empty entry */
	uint64_t *bits;
	uint32_t bmask;
};

static uint32_t cmd_hash(const struct mark *m)
{
	uint64_t h = m->key * 0x9E3779B97F4A7C15ull;

	h ^= m->slba * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)m->len << 8 | m->opcode) * 0x165667B19E3779F9ull;
	return (uint32_t)(h >> 32);
}

/* The group of m's command, or UINT32_MAX (and *slot, its table entry to
 * fill, *hash). A command is compared only where the hash matches: most
 * host marks of many hosts have no instance in the target's sample. */
static inline __attribute__((always_inline)) uint32_t tindex_find(const struct tindex *x, const struct mark *m, uint32_t *slot, uint32_t *hash)
{
	uint32_t h = cmd_hash(m), b = h & x->mask;

	if (!slot && !(x->bits[(h & x->bmask) >> 6] >> (h & 63) & 1))
		return UINT32_MAX;
	for (; x->tab[b]; b = (b + 1) & x->mask) {
		uint32_t g = (uint32_t)x->tab[b] - 1;

		if ((uint32_t)(x->tab[b] >> 32) == h && same_cmd(&x->t[x->g[g].first], m))
			return g;
	}
	if (slot) {
		*slot = b;
		*hash = h;
	}
	return UINT32_MAX;
}

/* Whether one of the target samples ti[0..nti) holds m's command; m->tg
 * set where there is one sample. */
static inline __attribute__((always_inline)) int in_targets(struct tindex *const *ti, size_t nti,
								struct mark *m)
{
	for (size_t b = 0; b < nti; b++) {
		uint32_t g = tindex_find(ti[b], m, NULL, NULL);

		if (g != UINT32_MAX) {
			m->tg = nti == 1 ? (uint16_t)(g + 1) : 0;
			return 1;
		}
	}
	return 0;
}

/* Whether the targets' samples ti[0..nti) hold a command of a controller
 * of the side's records of x[0..k) (of more than a few controllers: yes).
 * Asked once per host, of one that has no command in them so far. */
static int ctl_known(struct tindex *const *ti, size_t nti, const struct ntp_record *x, size_t k, uint8_t side)
{
	uint16_t c[8];
	size_t nc = 0;

	for (size_t i = 0; i < k; i++) {
		size_t j = 0;

		if (x[i].side != side)
			continue;
		while (j < nc && c[j] != x[i].cntlid)
			j++;
		if (j == nc) {
			if (nc == sizeof(c) / sizeof(c[0]))
				return 1;
			c[nc++] = x[i].cntlid;
		}
	}
	for (size_t j = 0; j < nc; j++)
		for (size_t b = 0; b < nti; b++)
			for (uint32_t i = 0; i < ti[b]->nt; i++)
				if ((uint16_t)(ti[b]->t[i].key >> 32) == c[j])
					return 1;
	return 0;
}

/* The entries of the table of a sample of nt marks: a power of two, at
 * least twice nt. */
static uint32_t tindex_size(size_t nt)
{
	uint32_t size = 16;

	while (size < 2 * nt)
		size *= 2;
	return size;
}

/* The bytes of the arrays of a target sample of at most nt marks: the
 * marks and their index (tindex_build). */
static size_t tsample_bytes(size_t nt)
{
	size_t size = tindex_size(nt);

	return carve_len(nt * sizeof(struct mark)) + carve_len(nt * sizeof(int64_t)) +
	       carve_len(nt * sizeof(struct tgroup)) + carve_len(size * sizeof(uint64_t)) +
	       carve_len(size / 8 * sizeof(uint64_t));
}

/* Indexes the commands of t (not moved; nt at most ALIGN_SAMPLE), its
 * arrays taken from c (room for tsample_bytes(nt) but the marks), gid the
 * scratch block. */
static void tindex_build(struct tindex *x, const struct mark *t, size_t nt, uint32_t *gid, struct carve *c)
{
	uint32_t size = tindex_size(nt);

	x->t = t;
	x->nt = (uint32_t)nt;
	x->mask = size - 1;
	x->ng = 0;
	x->stamp = 0;
	x->tt = carve(c, nt * sizeof(*x->tt));
	x->g = carve(c, nt * sizeof(*x->g));
	x->tab = carve(c, size * sizeof(*x->tab));	/* zeroed: empty */
	x->bmask = 8 * size - 1;
	x->bits = carve(c, size / 8 * sizeof(*x->bits));
	/* the groups, their sizes, then their times in place */
	for (size_t i = 0; i < nt; i++) {
		uint32_t slot = 0, hash = 0, g = tindex_find(x, &t[i], &slot, &hash);

		if (g == UINT32_MAX) {
			g = x->ng++;
			x->g[g] = (struct tgroup){ .first = (uint32_t)i };
			x->tab[slot] = (uint64_t)hash << 32 | (g + 1);
			x->bits[(hash & x->bmask) >> 6] |= 1ull << (hash & 63);
		}
		x->g[g].end++;
		gid[i] = g;
	}
	for (uint32_t g = 0, at = 0; g < x->ng; g++) {
		x->g[g].start = at;
		at += x->g[g].end;
		x->g[g].end = x->g[g].start;
	}
	for (size_t i = 0; i < nt; i++)
		x->tt[x->g[gid[i]].end++] = t[i].t;
	for (uint32_t g = 0; g < x->ng; g++)
		if (x->g[g].end - x->g[g].start > 1)
			sort_i64(x->tt + x->g[g].start, x->g[g].end - x->g[g].start);
}

/* A radix sort's fixed part is a count of 256 per byte that differs
 * between values (mostly two or three bytes here): below this, the merge
 * sort costs less. A many-host join sorts a few hundred differences per
 * host. */
#define ALIGN_RADIX_MIN 128

/* The differences in order: a radix sort, a pass of a byte each over the
 * values with the sign bit flipped (their unsigned order is the signed
 * one), no comparison to mispredict; the merge sort for few. A pass whose
 * byte is the same in every value would leave the order as it is and is
 * skipped: the differences of one pair of clocks are close to one another,
 * so their high bytes mostly are. tmp: n values' room. */
static void sort_diffs(int64_t *a, size_t n, uint64_t *tmp)
{
	uint64_t *src = (uint64_t *)(void *)a, *dst = tmp, *t, diff = 0;
	size_t cnt[8][256];
	unsigned sh[8], np = 0;

	if (n < ALIGN_RADIX_MIN) {
		sort_i64(a, n);
		return;
	}
	/* the bytes that differ between values: the others' passes skipped,
	 * and not counted either */
	for (size_t i = 0; i < n; i++)
		diff |= src[i] ^ src[0];
	for (unsigned b = 0; b < 8; b++)
		if (diff >> (8 * b) & 0xff)
			sh[np++] = 8 * b;
	memset(cnt, 0, np * sizeof(cnt[0]));
	for (size_t i = 0; i < n; i++) {
		uint64_t v = src[i] ^ (1ull << 63);

		for (unsigned p = 0; p < np; p++)
			cnt[p][(v >> sh[p]) & 0xff]++;
	}
	for (unsigned p = 0; p < np; p++) {
		size_t at = 0;

		for (int v = 0; v < 256; v++) {
			size_t c = cnt[p][v];

			cnt[p][v] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[cnt[p][((src[i] ^ (1ull << 63)) >> sh[p]) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	/* an odd number of passes: the result is in the other buffer */
	if (src != (uint64_t *)(void *)a)
		memcpy(a, src, n * sizeof(*a));
}

/* The offset of the host marks h[0..nh) (nh at most ALIGN_SAMPLE) against
 * the target sample x, scratch the scratch block; with tg, the marks' tg
 * are their groups in x (one out of x's range is looked up). The count of
 * differences it was the median of the densest window of, *pairs those
 * differences (the pairs of the best shifts). */
static size_t median_offset(const struct mark *h, size_t nh, struct tindex *x, size_t nt,
			    int64_t *d, int64_t *out, void *scratch, int tg, size_t *pairs)
{
	size_t nd = 0, l = 0, best = 0, best_l = 0, nhit = 0, ntouched = 0;
	/* per host mark: its time, the next hit of its group (+1); the groups hit */
	int64_t *ht = scratch, buf[ALIGN_GROUP_MAX];
	uint32_t *next = (uint32_t *)(ht + nh), *touched = next + nh;

	*pairs = 0;
	if (!nh || !nt)
		return 0;
	/* a stamp per call tells a group's hits of this call from an earlier one's */
	if (++x->stamp == 0) {
		for (uint32_t g = 0; g < x->ng; g++)
			x->g[g].stamp = 0;
		x->stamp = 1;
	}
	for (size_t i = 0; i < nh; i++) {
		/* a group out of range (0: none kept) is never read: looked up */
		uint32_t g = tg && h[i].tg - 1u < x->ng ? h[i].tg - 1u : tindex_find(x, &h[i], NULL, NULL);

		if (g == UINT32_MAX)
			continue;
		if (x->g[g].stamp != x->stamp) {
			x->g[g].stamp = x->stamp;
			x->g[g].hhead = 0;
			touched[ntouched++] = g;
		}
		ht[nhit] = h[i].t;
		next[nhit] = x->g[g].hhead;
		x->g[g].hhead = (uint32_t)++nhit;
	}
	for (size_t k = 0; k < ntouched; k++) {
		const struct tgroup *g = &x->g[touched[k]];
		size_t n = 0;

		/* the command's host instances (at most the first ALIGN_GROUP_MAX
		 * in time order count: all of them sorted, then cut) */
		for (uint32_t i = g->hhead; i; i = next[i - 1])
			n++;
		if (n == 1 && g->end - g->start == 1) {
			if (nd < ALIGN_SAMPLE)
				d[nd++] = wrap_sub((uint64_t)ht[g->hhead - 1], (uint64_t)x->tt[g->start]);
			continue;	/* one shift, one difference: best_shift's result */
		}
		{
			int64_t *hs = n <= ALIGN_GROUP_MAX ? buf : malloc(n * sizeof(*hs));
			size_t j = 0;

			if (!hs)
				continue;
			for (uint32_t i = g->hhead; i; i = next[i - 1])
				hs[j++] = ht[i - 1];
			sort_i64(hs, n);
			nd = best_shift(hs, n, x->tt + g->start, g->end - g->start, d, nd);
			if (hs != buf)
				free(hs);
		}
	}
	*pairs = nd;
	if (nd < ALIGN_MIN_PAIRS)
		return 0;
	/* ht and next are done with: at most one difference per host mark */
	sort_diffs(d, nd, scratch);
	for (size_t r = 0; r < nd; r++) {
		while ((__int128)d[r] - d[l] > ALIGN_WINDOW_NS)
			l++;
		if (r - l + 1 > best) {
			best = r - l + 1;
			best_l = l;
		}
	}
	*out = d[best_l + best / 2];
	return best;
}

static int has_side(uint8_t role, uint8_t side)
{
	return side == NTP_SIDE_HOST ? role != NTP_ROLE_TARGET : role != NTP_ROLE_HOST;
}

/* A file's samples: set 0 from its start, set 1 (a file that began early
 * only; else set 1 is set 0) from where the last recording began. A host's
 * marks are only those the targets' samples hold a command of: median_offset
 * passes over the others, and the 63 hosts of a 64-file join kept whole
 * samples (most of the alignment's memory, touched once). */
struct fsample {
	struct mark *h[2], *t[2];
	const struct tindex *tgx;	/* the target sample the host marks' tg are of */
	size_t nh[2], nt[2];
	struct tindex ti[2];
};

/* What the offsets of pairs of files take: the files, their samples, the
 * differences' buffer and the scratch block; per pair of files (a * n + b)
 * what was tried (struct tried); per file why it is not aligned (state). */
struct align {
	const struct ntp_join_input *in;
	size_t n;
	struct fsample *fs;
	const char *early;
	size_t host_max;
	int64_t from, *d;
	void *scratch;
	uint8_t *tried, *state;
	/* the quick samples' run (ALIGN_QUICK): the samples only, no file
	 * read on (host_search: its windows take ALIGN_SAMPLE marks, d and
	 * scratch are the quick sample's); least, the fewest agreeing pairs
	 * a file was aligned by */
	int quick;
	size_t least;
	struct ntp_buf_arena *rbuf;	/* read() buffer of the files read here (sample_file) */
};

/* pair_offset's memory of a pair of files: its samples gave no agreeing
 * offset (not asked again), it was searched (host_search) */
enum { TRIED_SAMPLES = 1, TRIED_SEARCH = 2 };

/*
 * Whether the c differences of the densest window of the nd of al->d
 * (sorted, at offset off) agree on one offset: at least a quarter of them
 * there (as a share of true pairs has: nearly all of them), or at least
 * ALIGN_MIN_PAIRS and an eighth of them there and ALIGN_DOMINANCE times as
 * many as in the densest window elsewhere, past span / ALIGN_SPREAD_DIV of
 * the offset (span: the host marks' time span): true pairs whose commands
 * came back and lost their twin on one side (a target's missed record)
 * take differences a few instances off, close to the offset, and clocks
 * that drift apart spread them too. False pairs (a command id
 * and LBA that came back: an SPDK host at queue depth 1) spread their
 * differences over the sample's time: their densest window holds a few in
 * a hundred, and windows as dense lie beside it. A host of few commands
 * in the target's sample among many false pairs may be judged not to agree
 * though its offset was right: then it is read on (host_search), and said
 * if nothing agrees. agrees_slow is asked only where the quarter does not
 * hold.
 */
#define ALIGN_AGREE_DIV 4
#define ALIGN_SLOW_DIV 8
#define ALIGN_DOMINANCE 4
#define ALIGN_SPREAD_DIV 16

static size_t densest(const int64_t *d, size_t n)
{
	size_t best = 0;

	for (size_t r = 0, l = 0; r < n; r++) {
		while ((__int128)d[r] - d[l] > ALIGN_WINDOW_NS)
			l++;
		if (r - l + 1 > best)
			best = r - l + 1;
	}
	return best;
}

static int agrees_slow(const int64_t *d, size_t nd, size_t c, int64_t off, uint64_t span)
{
	int64_t z = (int64_t)(span / ALIGN_SPREAD_DIV);
	size_t lo = 0, hi = nd, c2;

	if (c < ALIGN_MIN_PAIRS || c * ALIGN_SLOW_DIV < nd)
		return 0;
	if (z < ALIGN_WINDOW_NS)
		z = ALIGN_WINDOW_NS;
	while (lo < nd && (__int128)d[lo] < (__int128)off - z)
		lo++;
	while (hi > lo && (__int128)d[hi - 1] > (__int128)off + z)
		hi--;
	c2 = densest(d, lo);
	if (densest(d + hi, nd - hi) > c2)
		c2 = densest(d + hi, nd - hi);
	return c >= ALIGN_DOMINANCE * c2;
}

/* The span of the marks' times (m[0..n)), for agrees_slow. */
static uint64_t marks_span(const struct mark *m, size_t n)
{
	int64_t lo = n ? m[0].t : 0, hi = lo;

	for (size_t i = 1; i < n; i++) {
		lo = m[i].t < lo ? m[i].t : lo;
		hi = m[i].t > hi ? m[i].t : hi;
	}
	return (uint64_t)hi - (uint64_t)lo;
}

/* The offset of host marks h[0..nh) against target sample x (nt marks, tg:
 * the marks' groups are x's): its agreeing count if its pairs agree
 * (above), else 0; *pairs the pairs it had. */
static size_t judged_offset(struct align *al, const struct mark *h, size_t nh, struct tindex *x, size_t nt,
			    int tg, int64_t *off, size_t *pairs)
{
	size_t c = median_offset(h, nh, x, nt, al->d, off, al->scratch, tg, pairs);

	if (!c || c * ALIGN_AGREE_DIV >= *pairs)
		return c;
	return agrees_slow(al->d, *pairs, c, *off, marks_span(h, nh)) ? c : 0;
}

/*
 * A host whose samples gave no agreeing offset against b's target samples
 * is read on: a host that began recording more than its sample before the
 * target (an SPDK host at queue depth 1 started a minute before its
 * target: its first records repeat command ids and LBAs the target's
 * sample holds from later on, false pairs only). Its file is read from
 * the start, up to ALIGN_SEARCH_MAX records, and the marks of commands a
 * target sample of b holds are judged window by window (host_max of them,
 * at most ALIGN_SEARCH_WINDOW,
 * each window half the last one's and half new: the stretch of true pairs
 * is whole in one) until one agrees. The reach is the second sample's
 * (ALIGN_SKIP_MAX): a side that began earlier than that is not aligned
 * either way, and a host none of whose windows agree, or that holds no
 * command of b's samples, costs at most that many records read (a host's
 * search stops at the first window that agrees). -1 if the file could not
 * be read again.
 */
#define ALIGN_SEARCH_MAX ALIGN_SKIP_MAX
/* A window's cost grows with the instances of a command in it (best_shift
 * tries each shift of the host's against the target's): a window holds
 * this many marks (host_max if fewer, a many-host share), not a 2-file
 * join's ALIGN_SAMPLE (docs/performance.md)... */
#define ALIGN_SEARCH_WINDOW 1024
/* ...and spanning at least this much of the host's clock (or ALIGN_SAMPLE
 * marks): false pairs of a window shorter than a few ALIGN_WINDOW_NS lie
 * within one window whatever their offset, and agree. */
#define ALIGN_SEARCH_SPAN_NS (32 * ALIGN_WINDOW_NS)

static long host_search(struct align *al, size_t a, size_t b, int64_t from, int64_t *off)
{
	struct fsample *fb = &al->fs[b];
	size_t win = al->host_max, k, seen = 0, skipped = 0, n[2] = { 0, 0 }, fresh[2] = { 0, 0 }, pairs, c;
	struct mark *w[2] = { NULL, NULL };
	struct ntp_reader_opts o = { .no_mmap = 1, .arena = al->rbuf };
	struct ntp_reader *r;
	const struct ntp_record *recs;
	char err[256];
	long found = 0;
	int64_t to_wall, o1;
	int sets = 1 + al->early[b];

	if (win > ALIGN_SEARCH_WINDOW)
		win = ALIGN_SEARCH_WINDOW;
	if (win < ALIGN_HOST_MIN)
		win = ALIGN_HOST_MIN;
	for (int sb = 0; sb < sets; sb++)
		if (fb->nt[sb] && !(w[sb] = malloc(ALIGN_SAMPLE * sizeof(*w[sb]))))
			goto out;
	if (!(r = ntp_reader_open_opts(al->in[a].path, &o, err, sizeof(err)))) {
		found = -1;
		goto out;
	}
	to_wall = wrap_sub(ntp_reader_info(r)->start_real_ns, ntp_reader_info(r)->start_mono_ns);
	while (!found && seen < ALIGN_SEARCH_MAX && ntp_reader_next_block(r, &recs, &k) == 1) {
		for (size_t i = 0; i < k && !found && seen < ALIGN_SEARCH_MAX; i++, seen++) {
			const struct ntp_record *x = &recs[i];
			struct mark m;

			if (x->side != NTP_SIDE_HOST || !(x->ts_valid & (1u << NTP_TS_H_CMD_SENT)))
				continue;
			m = (struct mark){ .key = ((uint64_t)x->cntlid << 32) | ((uint64_t)x->qid << 16) | x->cid,
					   .slba = x->slba, .len = x->len, .opcode = x->opcode,
					   .t = wrap_add(x->ts[NTP_TS_H_CMD_SENT], to_wall) };
			if (from && m.t < from && skipped < ALIGN_SKIP_MAX) {
				skipped++;	/* passed, as struct sampler passes them */
				seen--;
				continue;
			}
			for (int sb = 0; sb < sets && !found; sb++) {
				uint32_t g;

				if (!w[sb] || (g = tindex_find(&fb->ti[sb], &m, NULL, NULL)) == UINT32_MAX)
					continue;
				m.tg = (uint16_t)(g + 1);
				w[sb][n[sb]++] = m;
				fresh[sb]++;
				/* judged once it holds win marks over ALIGN_SEARCH_SPAN_NS */
				if (n[sb] < win || (n[sb] < ALIGN_SAMPLE &&
						    (uint64_t)m.t - (uint64_t)w[sb][0].t < ALIGN_SEARCH_SPAN_NS))
					continue;
				if ((c = judged_offset(al, w[sb], n[sb], &fb->ti[sb], fb->nt[sb], 1, &o1, &pairs))) {
					*off = o1;
					found = (long)c;
					break;
				}
				/* the next window: the last half of this one and as many new */
				memmove(w[sb], w[sb] + n[sb] / 2, (n[sb] - n[sb] / 2) * sizeof(*w[sb]));
				n[sb] -= n[sb] / 2;
				fresh[sb] = 0;
			}
		}
	}
	/* the last window, if it holds marks no window judged */
	for (int sb = 0; sb < sets && !found; sb++)
		if (w[sb] && fresh[sb] &&
		    (c = judged_offset(al, w[sb], n[sb], &fb->ti[sb], fb->nt[sb], 1, &o1, &pairs))) {
			*off = o1;
			found = (long)c;
		}
	ntp_reader_close(r);
out:
	free(w[0]);
	free(w[1]);
	return found;
}

/* Files a and b (not aligned yet) are at least as far as st from it. */
static void al_state(struct align *al, size_t a, size_t b, uint8_t st)
{
	if (al->state[a] < st)
		al->state[a] = st;
	if (al->state[b] < st)
		al->state[b] = st;
}

/* The records a file holds at most, by its size (SIZE_MAX if not known) */
static size_t file_records(const struct ntp_join_input *in)
{
	struct stat sb;
	uint32_t rs = in->info ? in->info->record_size : 0;

	if (!rs || stat(in->path, &sb) || (uint64_t)sb.st_size / rs >= SIZE_MAX)
		return SIZE_MAX;
	return (size_t)((uint64_t)sb.st_size / rs);
}

/* The most records one of the files in[0..n) holds, by their sizes */
static size_t most_file_records(const struct ntp_join_input *in, size_t n)
{
	size_t most = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = file_records(&in[i]);

		if (k > most)
			most = k;
	}
	return most;
}

/* Whether a file holds fewer than ALIGN_FEW_RECORDS records (by its size:
 * only asked of a file not aligned) */
static int few_records(const struct ntp_join_input *in)
{
	return file_records(in) < ALIGN_FEW_RECORDS;
}

/* The offset of b's targets against a's hosts (from set 0 or 1 of the
 * samples, whichever more pairs agree on; with search, a's host file read
 * on where they do not agree, host_search): its agreeing count, 0 if none.
 * Why a file is not aligned goes to al->state of the host's file. */
static size_t pair_offset(struct align *al, size_t a, size_t b, int64_t *off, int search)
{
	struct fsample *fs = al->fs;
	uint8_t *tried = &al->tried[a * al->n + b];
	size_t best = 0, most = 0;
	long found;

	if (!(*tried & TRIED_SAMPLES)) {
		for (int set = 0; set < 2; set++) {
			int sa = set && al->early[a], sb = set && al->early[b];
			int64_t o;
			size_t c, pairs;

			if (set && !sa && !sb)
				continue;	/* the same samples as set 0 */
			c = judged_offset(al, fs[a].h[sa], fs[a].nh[sa], &fs[b].ti[sb], fs[b].nt[sb],
					  fs[a].tgx == &fs[b].ti[sb], &o, &pairs);
			if (pairs > most)
				most = pairs;
			if (c > best) {
				best = c;
				*off = o;
			}
		}
		if (best)
			return best;
		*tried |= TRIED_SAMPLES;
		if (fs[a].h[0] && (fs[b].nt[0] || fs[b].nt[1]))
			/* too few pairs to judge: a short recording's, else of
			 * a host of another run or target (chance pairs) */
			al_state(al, a, b, most >= ALIGN_MIN_PAIRS ? NTP_ALIGN_DISAGREE :
					   few_records(&al->in[a]) ? NTP_ALIGN_FEW_PAIRS : NTP_ALIGN_NO_PAIRS);
	}
	if (!search || (*tried & TRIED_SEARCH) || !fs[a].h[0] || (!fs[b].nt[0] && !fs[b].nt[1]))
		return 0;
	*tried |= TRIED_SEARCH;
	found = host_search(al, a, b, 0, off);
	/* a host that began early: on from where its second sample began too */
	if (!found && al->early[a])
		found = host_search(al, a, b, al->from, off);
	if (found < 0)
		al_state(al, a, a, NTP_ALIGN_UNREADABLE);
	return found > 0 ? (size_t)found : 0;
}

/* The host sides' samples: files ho[first], ho[first + step]... of
 * ho[0..nho), with filter only the marks the targets' samples ti[0..nti)
 * hold (struct sampler); file i's marks at hits + hbase[i] (set 1 host_cap
 * further). */
struct hosts_job {
	const struct ntp_join_input *in;
	const size_t *ho, *hbase;
	size_t nho, first, step, nti;
	struct fsample *fs;
	const char *early;
	struct mark *hits;
	struct tindex *const *ti;
	int64_t from;
	int filter;
	size_t host_cap;		/* the marks of a host sample, at most (align_run) */
	struct ntp_buf_arena *rbuf;	/* read() buffer of its files (sample_file); NULL: their own */
};

static void *sample_hosts(void *arg)
{
	const struct hosts_job *j = arg;

	for (size_t k = j->first; k < j->nho; k += j->step) {
		size_t i = j->ho[k];
		struct fsample *f = &j->fs[i];
		struct sampler s[2];
		size_t ns = 0;

		for (int set = 0; set < 1 + j->early[i]; set++)
			s[ns++] = (struct sampler){ .out = j->hits + j->hbase[i] + set * j->host_cap,
						    .max = j->host_cap, .from = set ? j->from : 0,
						    .ti = j->filter ? j->ti : NULL, .nti = j->nti,
						    .side = NTP_SIDE_HOST };
		sample_file(j->in[i].path, s, ns, j->rbuf);
		f->tgx = j->filter && j->nti == 1 ? j->ti[0] : NULL;
		for (int set = 0; set < (int)ns; set++) {
			f->h[set] = s[set].out;
			f->nh[set] = s[set].n;
		}
	}
	return NULL;
}

/* Runs job[1] in a second thread beside job[0] in this one (when two CPUs
 * may run them, ntp_read_ahead_wanted), else both here: a 64-file join's
 * alignment is mostly reading and checking 63 hosts' samples, before the
 * first record is merged. */
static void sample_hosts_2(struct hosts_job job[2])
{
	pthread_t th;
	int err = 1;

	if (job[1].first < job[1].nho && ntp_read_ahead_wanted(1)) {
		/* signals meant for the program go to this thread */
		err = ntp_thread_start(&th, sample_hosts, &job[1], NULL);
	}
	sample_hosts(&job[0]);
	if (!err) {
		pthread_join(th, NULL);
	} else {
		job[1].rbuf = job[0].rbuf;	/* this thread's, free again */
		sample_hosts(&job[1]);
	}
}

/* Aligns every file not aligned yet (done[b] 0; else its group + 1) that
 * the aligned ones reach through pairs of files, in the group of the file
 * it was aligned on: a target aligned on a host, then the other hosts of
 * that target on it, and so on, from the samples; a host's file read on
 * (host_search) only once no file can be aligned from the samples. adj[b]
 * on the clock of the group's first file. A pair tried once is not tried
 * again (pair_offset): the files of a group begun earlier, which reached
 * none of those left, cost next to nothing here. */
static void spread(struct align *al, size_t *done, int64_t *adj)
{
	size_t n = al->n;
	int progress = 1;

	for (int search = 0; search < (al->quick ? 1 : 2); search++) {
		for (progress = 1; progress;) {
			progress = 0;
			for (size_t a = 0; a < n; a++) {
				for (size_t b = 0; b < n; b++) {
					int64_t off;
					size_t c;

					if (a == b || !done[a] || done[b])
						continue;
					/* a's hosts against b's targets: b's times + off match a's */
					if ((c = pair_offset(al, a, b, &off, search))) {
						adj[b] = wrap_add((uint64_t)adj[a], off);
					} else if ((c = pair_offset(al, b, a, &off, search))) {
						adj[b] = wrap_sub((uint64_t)adj[a], (uint64_t)off);
					} else {
						continue;
					}
					done[b] = done[a];
					progress = 1;
					if (c < al->least)
						al->least = c;
				}
			}
			/* a file aligned: the others from the samples first */
			if (progress && search)
				break;
		}
		if (progress)
			search = -1;
	}
}

/* The files with a host's side. */
static size_t host_files(const struct ntp_join_input *in, size_t n)
{
	size_t hosts = 0;

	for (size_t i = 0; i < n; i++)
		hosts += has_side(in[i].info->role, NTP_SIDE_HOST);
	return hosts;
}

/* ntp_join_align_state from samples of sample records (a target's; a
 * host's share of it, below); with least (the quick run, sample
 * ALIGN_QUICK), from the samples only, and *least the fewest agreeing
 * pairs a file was aligned by, 0 unless every file was aligned on one
 * clock. most_records: most_file_records of the files, taken once for
 * both runs. */
static size_t align_run(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj,
			uint8_t *state, size_t sample, size_t *least, size_t most_records)
{
	struct fsample *fs = calloc(n ? n : 1, sizeof(*fs));
	struct mark *hits;
	size_t *hbase = calloc(n ? n : 1, sizeof(*hbase)), *ho = calloc(n ? n : 1, sizeof(*ho));
	struct hosts_job job[2];
	struct tindex **ti = calloc(2 * (n ? n : 1), sizeof(*ti));	/* the targets' samples */
	/* of the quick run, the quick sample's: it reads no file on */
	int64_t *d, late = 0, from;
	void *scratch, *block = NULL;
	size_t *done = calloc(n ? n : 1, sizeof(*done)), groups = 0;
	char *early = calloc(n ? n : 1, 1);
	uint8_t *tried = calloc(n ? n * n : 1, 1), *st = calloc(n ? n : 1, 1);
	/* the read() buffer of the files read in this thread (NULL: each
	 * reader its own, as a second thread's readers have), the arrays
	 * carved from the rest of its mapping */
	struct ntp_buf_arena *rbuf = NULL;
	struct carve c;
	size_t hosts, host_max, host_cap, target_cap, room;
	size_t nti = 0, nhits = 0, nho = 0, unaligned = 0;
	int filter;
	struct align al;

	memset(adj, 0, n * sizeof(*adj));
	if (state)
		memset(state, 0, n);
	if (least)
		*least = 0;
	if (n < 2)
		goto out;
	if (!fs || !hbase || !ho || !ti || !done || !early || !tried || !st)
		goto no_memory;
	/* the latest start of a recording, on the wall clocks */
	for (size_t i = 0; i < n; i++)
		if ((int64_t)in[i].info->start_real_ns > late)
			late = (int64_t)in[i].info->start_real_ns;
	from = late - ALIGN_LATE_MARGIN_NS;
	for (size_t i = 0; i < n; i++)
		early[i] = (int64_t)in[i].info->start_real_ns < from;
	/* A target's sample holds the first commands of all its hosts, of
	 * each host about ALIGN_SAMPLE / hosts: a longer sample of a host's
	 * own file finds no more pairs, and 64 files of full samples cost more
	 * to sort than the join itself. Up to twice that share, all hosts'
	 * samples together up to twice a target's (the share counted from the
	 * host's first command the target's sample holds, struct sampler, so
	 * it may reach into one more block); of more than a block, whole
	 * blocks: a file is read and checked a block at a time, and a few
	 * records of a next block cost all of it. */
	hosts = host_files(in, n);
	host_max = hosts > 1 ? 2 * sample / hosts : sample;
	if (host_max > NTP_BLOCK_RECORDS)
		host_max -= host_max % NTP_BLOCK_RECORDS;
	if (host_max < ALIGN_HOST_MIN)
		host_max = ALIGN_HOST_MIN;
	/* The files with a target's side first, each read once for all its
	 * samples, the targets' indexed; then the host sides, in two threads
	 * (sample_hosts_2). A host file's marks go to its part of hits (a
	 * block of its own per file came between the files' read buffers in
	 * the heap, which then took fresh pages at every file). Of many hosts,
	 * a host's sample is short and much of it has no command in the
	 * target's sample (which holds a share of each host's first
	 * commands): a host's marks are looked up as they are read and only
	 * those the targets' samples hold are kept, with their group (struct
	 * mark: median_offset passes over the others and does not look up the
	 * kept ones again), the share counted from the first (struct sampler);
	 * a file of both sides is read a second time for its host side, once
	 * its targets are indexed. Of one host nearly every mark has its
	 * command there, and the filter would look each up twice. */
	filter = host_max < sample;
	/* A sample holds no more marks than its file records: the arrays of
	 * short files' samples are short, their room within the huge page
	 * the read() buffer's first touch zeroes (a file's size bounds its
	 * records from above; a file that grows while it is read is sampled
	 * up to the records it had). At least one: a filtered sampler writes
	 * a mark before it knows whether to keep it. */
	if (!most_records)
		most_records = 1;
	target_cap = sample < most_records ? sample : most_records;
	host_cap = host_max < most_records ? host_max : most_records;
	room = carve_len(sample * sizeof(*d)) + carve_len(sample * ALIGN_MED_BYTES);
	for (size_t i = 0; i < n; i++) {
		if (has_side(in[i].info->role, NTP_SIDE_TARGET))
			room += (1 + (size_t)early[i]) * tsample_bytes(target_cap);
		if (!has_side(in[i].info->role, NTP_SIDE_HOST))
			continue;
		hbase[i] = nhits;
		nhits += (1 + early[i]) * host_cap;
		if (filter || !has_side(in[i].info->role, NTP_SIDE_TARGET))
			ho[nho++] = i;
	}
	room += carve_len(nhits * sizeof(*hits));
	/* Files of a few pages are read into their readers' own buffers
	 * and the arrays carved from the C library's memory: a huge page's
	 * first touch zeroes all 2 MiB, which costs more than the few page
	 * faults of small pages that so little takes. */
	if (most_records > ALIGN_SMALL_BYTES / sizeof(struct ntp_record) && (rbuf = ntp_buf_arena_new(1, room)))
		c.at = ntp_buf_arena_extra(rbuf);
	else if ((block = calloc(1, room)))	/* zeroed too; each reader its own buffer */
		c.at = block;
	else
		goto no_memory;
	d = carve(&c, sample * sizeof(*d));
	scratch = carve(&c, sample * ALIGN_MED_BYTES);
	hits = carve(&c, nhits * sizeof(*hits));
	for (size_t i = 0; i < n; i++) {
		int hh = !filter && has_side(in[i].info->role, NTP_SIDE_HOST);
		struct sampler s[4];
		int sset[4];
		size_t ns = 0;

		if (!has_side(in[i].info->role, NTP_SIDE_TARGET))
			continue;
		for (int set = 0; set < 1 + early[i]; set++) {
			/* set 1: only the files that began early (pair_offset) */
			int64_t f = set ? from : 0;

			fs[i].t[set] = carve(&c, target_cap * sizeof(struct mark));
			sset[ns] = set;
			s[ns++] = (struct sampler){ .out = fs[i].t[set], .max = target_cap, .from = f,
						    .side = NTP_SIDE_TARGET };
			if (!hh)
				continue;
			fs[i].h[set] = hits + hbase[i] + set * host_cap;
			sset[ns] = set;
			s[ns++] = (struct sampler){ .out = fs[i].h[set], .max = host_cap, .from = f,
						    .side = NTP_SIDE_HOST };
		}
		sample_file(in[i].path, s, ns, rbuf);
		for (size_t j = 0; j < ns; j++) {
			int set = sset[j];

			if (s[j].side == NTP_SIDE_TARGET) {
				fs[i].nt[set] = s[j].n;
				tindex_build(&fs[i].ti[set], fs[i].t[set], s[j].n, scratch, &c);
				ti[nti++] = &fs[i].ti[set];
			} else {
				fs[i].nh[set] = s[j].n;
			}
		}
	}
	if (least) {
		size_t marks = 0, cmds = 0;

		for (size_t b = 0; b < nti; b++) {
			marks += ti[b]->nt;
			cmds += ti[b]->ng;
		}
		if ((marks - cmds) * ALIGN_QUICK_REPEAT > marks)
			goto out;	/* *least 0: not used */
	}
	for (int t = 0; t < 2; t++)
		job[t] = (struct hosts_job){ .in = in, .ho = ho, .hbase = hbase, .nho = nho, .first = (size_t)t,
					     .step = 2, .nti = nti, .fs = fs, .early = early,
					     .hits = hits, .ti = ti, .from = from, .filter = filter, .host_cap = host_cap,
					     .rbuf = t ? NULL : rbuf };
	sample_hosts_2(job);
	al = (struct align){ .in = in, .n = n, .fs = fs, .early = early, .host_max = host_max, .from = from,
			     .d = d, .scratch = scratch, .tried = tried, .state = st, .quick = least != NULL,
			     .least = SIZE_MAX, .rbuf = rbuf };
	/* Spread from the primary file, then from each file left (a primary
	 * that aligns with nothing, a host of another run or an idle one, does
	 * not leave the others on the wall clocks), each group on the clock
	 * of the file it was begun from (done[i]: its group + 1). */
	for (size_t i = 0, k = primary; i < n; i++, k = (k + 1) % n)
		if (!done[k]) {
			done[k] = ++groups;
			spread(&al, done, adj);
		}
	/* A file alone in its group is not aligned: said, whatever the order
	 * the files were given in (the primary too, unless no two files were
	 * aligned: then the others are said). The files of a group are
	 * aligned on each other, as their commands pair; two groups share no
	 * command the alignment found (hosts each of its own target). */
	if (groups > 1) {
		size_t *cnt = hbase, most = 0;	/* hbase is done with: the groups' sizes */

		memset(cnt, 0, n * sizeof(*cnt));
		for (size_t i = 0; i < n; i++)
			if (++cnt[done[i] - 1] > most)
				most = cnt[done[i] - 1];
		for (size_t i = 0; i < n; i++) {
			if (cnt[done[i] - 1] > 1 || (most == 1 && i == primary))
				continue;
			unaligned++;
			if (state)
				state[i] = st[i] ? st[i] : NTP_ALIGN_NO_PEER;
		}
	} else if (least) {
		*least = al.least;
	}
	goto out;
no_memory:
	/* nothing aligned: said of every file but the primary */
	for (size_t i = 0; state && i < n; i++)
		state[i] = i == primary ? NTP_ALIGNED : NTP_ALIGN_NO_MEMORY;
	unaligned = n - 1;
out:
	free(hbase);
	free(ho);
	free(ti);
	free(fs);
	free(block);
	free(done);
	free(early);
	free(tried);
	free(st);
	ntp_buf_arena_put(rbuf);
	return unaligned;
}

/* Whether the quick run (ALIGN_QUICK) aligned every file well enough to
 * be kept: adj and state are its. */
static int align_quick(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj, uint8_t *state,
		       size_t most_records)
{
	size_t least;

	/* a file aligned by fewer pairs than ALIGN_QUICK_AGREE is not kept:
	 * files that hold fewer records are not sampled twice */
	return n >= 2 && host_files(in, n) <= ALIGN_QUICK_HOSTS && most_records >= ALIGN_QUICK_AGREE &&
	       !align_run(in, n, primary, adj, state, ALIGN_QUICK, &least, most_records) &&
	       least >= ALIGN_QUICK_AGREE;
}

size_t ntp_join_align_state(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj,
			    uint8_t *state)
{
	size_t most_records = most_file_records(in, n);

	if (align_quick(in, n, primary, adj, state, most_records))
		return 0;
	return align_run(in, n, primary, adj, state, ALIGN_SAMPLE, NULL, most_records);
}

void ntp_join_align(const struct ntp_join_input *in, size_t n, size_t primary, int64_t *adj)
{
	ntp_join_align_state(in, n, primary, adj, NULL);
}

int ntp_join_align_note(const struct ntp_join_input *in, size_t n, const uint8_t *state, size_t i,
			char *buf, size_t len)
{
	const char *why;

	/* too few pairs to judge, or a short or idle recording left without a
	 * peer: nothing says its records pair with other commands, as before
	 * the judging; a busy file left without a peer is said (its records are
	 * joined on the wall clocks) */
	if (i >= n || !state[i] || state[i] == NTP_ALIGN_FEW_PAIRS ||
	    (state[i] == NTP_ALIGN_NO_PEER && few_records(&in[i])))
		return 0;
	switch (state[i]) {
	case NTP_ALIGN_NO_PEER:
		why = "no file of the other side held a record to pair with (its target, or its hosts)";
		break;
	case NTP_ALIGN_NO_PAIRS:
		why = "none of its commands, or too few to judge, is in the other side's recordings (a "
		      "recording of another run or of another target?)";
		break;
	case NTP_ALIGN_DISAGREE:
		why = "the commands both sides hold do not agree on one (as when a host with one command id, "
		      "SPDK's at queue depth 1, began recording long before its target)";
		break;
	case NTP_ALIGN_UNREADABLE:
		why = "it could not be read again";
		break;
	default:
		why = "out of memory";
		break;
	}
	snprintf(buf, len, "%s: no clock offset to the other recordings found: %s", in[i].path, why);
	return 1;
}
