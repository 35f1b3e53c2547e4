// SPDX-License-Identifier: GPL-2.0
/*
 * pump_files.c - recordings as a pump source (see pump_files.h).
 *
 * Several files are merged by each record's emission time mapped onto the
 * primary file's clock through the wall clock of each header (start_real -
 * start_mono) plus join_align.c's correction; that order only decides when a
 * record is fed, never a stage time (the join is by key, pending.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../model/join.h"
#include "../store/merge.h"
#include "pump_files.h"

/* How far a scout reads past a boundary for the totals block after it (the
 * recorder writes one about every second, ntpfile.h). */
#define NTP_FILES_AHEAD_NS (3ull * 1000000000ull)

struct cursor {
	const struct ntp_record *recs;
	size_t n, i;
	int done;
	int64_t off;			/* ns to add to map this file's clock onto the primary's */
	uint64_t totals_as_of;		/* of the rows last delivered from this file */
};

struct ntp_files {
	size_t n, primary;
	int own;			/* readers opened (and closed) here */
	struct ntp_reader **r;
	struct ntp_join_input *in;
	struct cursor *cur;		/* one file: its records; several: offsets and totals */
	struct ntp_merge *mg;		/* several files: their records in time order */
	size_t lone;			/* the lone target of hosts (merge.h ntp_merge_most), or n */
	struct ntp_model_config cfg;
	uint64_t start, last;		/* last: latest record time fed, primary's clock */
	int ended;
	int no_totals;			/* ntp_join_feed: the caller applies them */
	struct ntp_total *tot;		/* every file's latest rows, delivered together */
	size_t ntot_cap;
	/* a paced replay's second reader of each file, ahead of the data to the
	 * totals block after the boundary the pump closes at (deliver_ahead) */
	struct scout *scout;
	uint32_t *bins;			/* the primary's records per ms, a ring (SCOUT_BINS) */
	uint64_t bin_lo;		/* the first ms the ring holds */
	int scout_off;			/* no scouts: a stream, or one failed to open */
	uint64_t ahead_as_of;		/* of the rows last handed to the model ahead */
	uint64_t share_of;		/* the later block's time share_rec was decided for */
	int share_rec;			/* between those blocks: the records' share (else the time's) */
	/* notes on the files no clock offset was found for (ntp_join_align_state) */
	char (*left)[NTP_FILES_NOTE_LEN];
	size_t nleft;
};

/* 1: a record at c->i; 0: the file's end; -1: a followed file has no more
 * whole blocks yet (ntp_reader_follow), call again later. */
static int cursor_fill(struct ntp_reader *r, struct cursor *c)
{
	while (!c->done && c->i >= c->n) {
		int ret = ntp_reader_next_block(r, &c->recs, &c->n);

		c->i = 0;
		if (ret == -EAGAIN) {
			c->n = 0;
			return -1;
		}
		if (ret != 1) {
			c->done = 1;
			c->n = 0;
		}
	}
	return !c->done;
}

/* Of hosts and their one target, the target's file: it holds a record of
 * every host's command, about half of all records. SIZE_MAX: none (one
 * file, or several targets). */
static size_t lone_target(struct ntp_reader *const *r, size_t n)
{
	size_t t = SIZE_MAX;

	for (size_t i = 0; n > 1 && i < n; i++) {
		if (ntp_reader_info(r[i])->role == NTP_ROLE_HOST)
			continue;
		if (t != SIZE_MAX)
			return SIZE_MAX;
		t = i;
	}
	return t;
}

/* Sets up the cursors over f->r (already open). adj: join_align's corrections (may be NULL). */
static int files_init(struct ntp_files *f, const int64_t *adj)
{
	const struct ntp_file_info *pi = ntp_reader_info(f->r[f->primary]);
	uint64_t to_wall_p = pi->start_real_ns - pi->start_mono_ns + (uint64_t)(adj ? adj[f->primary] : 0);

	f->cur = calloc(f->n, sizeof(*f->cur));
	if (!f->cur)
		return -1;
	for (size_t i = 0; i < f->n; i++) {
		const struct ntp_file_info *fi = ntp_reader_info(f->r[i]);

		if (f->n > 1)
			f->cur[i].off = (int64_t)(fi->start_real_ns - fi->start_mono_ns +
						  (uint64_t)(adj ? adj[i] : 0) - to_wall_p);
	}
	if (f->n > 1) {
		/* several files: a loser tree picks the next record (merge.h), in the
		 * order of a scan over the files' next records with their times
		 * mapped as ntp_merge_map() does (ties to the lower file) */
		int64_t *off = malloc(f->n * sizeof(*off));

		if (!off)
			return -1;
		for (size_t i = 0; i < f->n; i++)
			off[i] = f->cur[i].off;
		f->mg = ntp_merge_new(f->r, f->n, off);
		free(off);
		if (!f->mg)
			return -1;
		f->lone = lone_target(f->r, f->n);
	}
	return 0;
}

static struct ntp_files *files_alloc(size_t n)
{
	struct ntp_files *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->n = n;
	f->r = calloc(n ? n : 1, sizeof(*f->r));
	f->in = calloc(n ? n : 1, sizeof(*f->in));
	if (!f->r || !f->in) {
		free(f->r);
		free(f->in);
		free(f);
		return NULL;
	}
	return f;
}

/* Aligns the files' clocks (ntp_join_align_state). A file no offset was
 * found for stays on the wall clocks of the headers (adj 0), as before the
 * alignment: a note names it (docs/failures.md). -1 out of memory. */
static int align_files(struct ntp_files *f, int64_t *adj)
{
	uint8_t *st = calloc(f->n, 1);
	size_t left;

	if (!st)
		return -1;
	left = ntp_join_align_state(f->in, f->n, f->primary, adj, st);
	if (left && !(f->left = calloc(left, sizeof(*f->left)))) {
		free(st);
		return -1;
	}
	/* the files that could not be aligned first, targets before hosts (a
	 * target of another run given with its would-be hosts is the one
	 * wrong file, and a report names only the first few), then those
	 * that had no aligned file to be aligned on (a target's hosts) */
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < f->n && f->nleft < left; i++) {
			char note[NTP_FILES_NOTE_LEN - 128];
			int target = f->in[i].info->role == NTP_ROLE_TARGET;
			int want = st[i] == NTP_ALIGN_NO_PEER ? 2 : target ? 0 : 1;

			if (want != pass || !ntp_join_align_note(f->in, f->n, st, i, note, sizeof(note)))
				continue;
			snprintf(f->left[f->nleft++], NTP_FILES_NOTE_LEN, "%s; joined on the wall clocks alone, "
				 "its records may pair with other commands", note);
		}
	free(st);
	return 0;
}

const char *ntp_files_unaligned(const struct ntp_files *f, size_t i)
{
	return i < f->nleft ? f->left[i] : NULL;
}

struct ntp_files *ntp_files_open(char *const *paths, size_t n, char *err, size_t errlen)
{
	return ntp_files_open_ahead(paths, n, 0, err, errlen);
}

struct ntp_files *ntp_files_open_ahead(char *const *paths, size_t n, int read_ahead,
				       char *err, size_t errlen)
{
	struct ntp_files *f = files_alloc(n);
	int64_t *adj = NULL;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->own = 1;
	for (size_t i = 0; i < n; i++) {
		f->r[i] = ntp_reader_open(paths[i], err, errlen);
		if (!f->r[i])
			goto fail;
		f->in[i].path = paths[i];
		f->in[i].info = ntp_reader_info(f->r[i]);
	}
	if (ntp_join_check(f->in, n, &f->cfg, err, errlen))
		goto fail;
	/* read ahead by a second thread before the merge takes the first block
	 * of each file, and while the alignment reads its samples, or with
	 * read() in this one (ntpfile.h). Too many files for a thread each: the
	 * target's of many hosts, half of the records, is the one told apart. */
	if (read_ahead)
		ntp_readers_full_speed(f->r, n, lone_target(f->r, n));
	f->primary = ntp_join_primary(f->in, n);
	adj = calloc(n, sizeof(*adj));
	if (!adj) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (n > 1 && align_files(f, adj)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (files_init(f, adj)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	free(adj);
	return f;
fail:
	free(adj);
	ntp_files_close(f);
	return NULL;
}

static void scouts_free(struct ntp_files *f);

void ntp_files_close(struct ntp_files *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->own && i < f->n; i++)
		if (f->r[i])
			ntp_reader_close(f->r[i]);
	scouts_free(f);
	free(f->r);
	free(f->in);
	free(f->cur);
	ntp_merge_free(f->mg);
	free(f->tot);
	free(f->left);
	free(f);
}

const struct ntp_model_config *ntp_files_model_config(const struct ntp_files *f) { return &f->cfg; }
size_t ntp_files_count(const struct ntp_files *f) { return f->n; }
size_t ntp_files_primary(const struct ntp_files *f) { return f->primary; }
struct ntp_reader *ntp_files_reader(const struct ntp_files *f, size_t i) { return f->r[i]; }
int64_t ntp_files_offset(const struct ntp_files *f, size_t i) { return f->cur[i].off; }

uint64_t ntp_files_start(struct ntp_files *f)
{
	struct cursor *c = &f->cur[f->primary];

	if (!f->start)
		f->start = ntp_reader_info(f->r[f->primary])->start_mono_ns;
	/* a header without a start (0): the first record's time */
	if (!f->start && f->mg) {
		const struct ntp_record *r = ntp_merge_current(f->mg, f->primary);

		if (r)
			f->start = ntp_record_last_ts(r);
	} else if (!f->start && cursor_fill(f->r[f->primary], c) > 0) {
		f->start = ntp_record_last_ts(&c->recs[c->i]);
	}
	return f->start;
}

uint64_t ntp_files_end(const struct ntp_files *f)
{
	uint64_t end = ntp_reader_stats(f->r[f->primary])->end_mono_ns;

	if (end < f->last)
		end = f->last;
	if (end < f->start)
		end = f->start;
	return end;
}

/* Delivers every file's latest rows when one file has rows newer than the
 * last delivered and, unless at the end, the data reached them. */
static void deliver_totals(struct ntp_files *f, struct ntp_pump *p, uint64_t until, int at_end)
{
	uint64_t as_of = 0, primary_as_of = 0;
	size_t total = 0;
	int fresh = 0;

	if (f->no_totals)
		return;
	for (size_t i = 0; i < f->n; i++) {
		uint64_t t;
		size_t k;

		ntp_reader_totals(f->r[i], &k, &t);
		if (!k || t == f->cur[i].totals_as_of || (!at_end && ntp_merge_map(t, f->cur[i].off) > until))
			continue;
		fresh = 1;
	}
	if (!fresh)
		return;
	for (size_t i = 0; i < f->n; i++) {
		size_t k;

		ntp_reader_totals(f->r[i], &k, NULL);
		total += k;
	}
	if (total > f->ntot_cap) {
		struct ntp_total *g = realloc(f->tot, total * sizeof(*g));

		if (!g)
			return;		/* the counts stay estimated until memory allows */
		f->tot = g;
		f->ntot_cap = total;
	}
	total = 0;
	for (size_t i = 0; i < f->n; i++) {
		uint64_t t;
		size_t k;
		const struct ntp_total *rows = ntp_reader_totals(f->r[i], &k, &t);

		if (!k)
			continue;
		memcpy(f->tot + total, rows, k * sizeof(*rows));
		total += k;
		f->cur[i].totals_as_of = t;
		if (ntp_merge_map(t, f->cur[i].off) > as_of)
			as_of = ntp_merge_map(t, f->cur[i].off);
		if (i == f->primary)
			primary_as_of = ntp_merge_map(t, f->cur[i].off);
	}
	/* The model keeps one time for all rows. The groups reported are the
	 * primary file's (a join reports the host's commands), so its rows'
	 * time is the one that counts: a target that recorded longer would
	 * otherwise date the host's counts to its own stop, and the host's rate
	 * would be spread over time it did not record. At the end every count is
	 * final: none is dated past the report's end. */
	if (primary_as_of)
		as_of = primary_as_of;
	if (at_end && as_of > ntp_files_end(f))
		as_of = ntp_files_end(f);
	/* the model already has later rows, read ahead: the sinks alone */
	ntp_pump_totals_to(p, f->tot, total, as_of,
			   NTP_TOTALS_SINKS | (at_end || as_of > f->ahead_as_of ? NTP_TOTALS_MODEL : 0));
}

/* Read ahead for the totals: a paced replay's second reader of a file, the
 * latest two totals blocks it passed (as of their time on the primary's
 * clock) and, of the primary file, how many records each millisecond had. */
struct scout {
	struct ntp_reader *r;
	uint64_t last;			/* the latest record time read */
	int done;
	struct ntp_total *rows[2];	/* [0] the block before [1] */
	size_t n[2], cap[2];
	uint64_t as_of[2], raw;		/* raw: [1]'s time in the file's clock */
	int have[2];
};

#define SCOUT_BIN_NS 1000000ull
#define SCOUT_BINS 8192u		/* a power of 2: 8 s of records */

static void scouts_free(struct ntp_files *f)
{
	for (size_t i = 0; f->scout && i < f->n; i++) {
		if (f->scout[i].r)
			ntp_reader_close(f->scout[i].r);
		free(f->scout[i].rows[0]);
		free(f->scout[i].rows[1]);
	}
	free(f->scout);
	free(f->bins);
	f->scout = NULL;
	f->bins = NULL;
}

/* Opens the scouts: 0, or -1 when there are none (a stream cannot be read
 * twice; readers not opened here are the caller's). */
static int scouts_open(struct ntp_files *f)
{
	if (f->scout)
		return 0;
	if (f->scout_off || !f->own)
		goto off;
	for (size_t i = 0; i < f->n; i++)
		if (ntp_reader_stream(f->r[i]))
			goto off;
	f->scout = calloc(f->n, sizeof(*f->scout));
	f->bins = calloc(SCOUT_BINS, sizeof(*f->bins));
	if (!f->scout || !f->bins)
		goto off;
	for (size_t i = 0; i < f->n; i++) {
		char err[256];

		f->scout[i].r = ntp_reader_open(ntp_reader_path(f->r[i]), err, sizeof(err));
		if (!f->scout[i].r)
			goto off;
		/* a followed file: its scout stops at the end written so far and
		 * reads on from there at the next boundary (scout_to) */
		if (ntp_reader_following(f->r[i]))
			ntp_reader_follow(f->scout[i].r, ntp_reader_following(f->r[i]));
	}
	return 0;
off:
	scouts_free(f);
	f->scout_off = 1;
	return -1;
}

/* The primary's records in (a, b] on its clock, from the bins; -1 when the
 * bins no longer hold a. Past the bins' top no record was read yet: the
 * caller asks up to a totals block the scout passed, so none is there (a
 * recording whose records stop before its last block, its trailer). */
static int64_t records_in(const struct ntp_files *f, uint64_t a, uint64_t b)
{
	uint64_t lo = a / SCOUT_BIN_NS + 1, hi = b / SCOUT_BIN_NS;
	int64_t n = 0;

	if (lo < f->bin_lo)
		return -1;
	if (hi >= f->bin_lo + SCOUT_BINS)
		hi = f->bin_lo + SCOUT_BINS - 1;
	for (uint64_t k = lo; k <= hi; k++)
		n += f->bins[k & (SCOUT_BINS - 1)];
	return n;
}

static void bin_record(struct ntp_files *f, uint64_t t)
{
	uint64_t k = t / SCOUT_BIN_NS;

	if (k < f->bin_lo)
		return;		/* older than the bins: not asked for */
	if (k >= f->bin_lo + SCOUT_BINS) {
		uint64_t lo = k - SCOUT_BINS + 1;

		/* the bins that leave are zeroed for the times that take them */
		for (uint64_t j = f->bin_lo; j < lo && j < f->bin_lo + SCOUT_BINS; j++)
			f->bins[j & (SCOUT_BINS - 1)] = 0;
		f->bin_lo = lo;
	}
	f->bins[k & (SCOUT_BINS - 1)]++;
}

/* The scout's reader passed a totals block (or its trailer): it becomes the
 * latest, the one before it the earlier. */
static void scout_take(struct ntp_files *f, size_t i)
{
	struct scout *s = &f->scout[i];
	struct ntp_total *tmp;
	uint64_t t, end;
	size_t k, c;
	const struct ntp_total *rows = ntp_reader_totals(s->r, &k, &t);

	if (!k || (s->have[1] && t == s->raw && !s->done))
		return;
	if (s->have[1] && t != s->raw) {
		tmp = s->rows[0];
		s->rows[0] = s->rows[1];
		s->rows[1] = tmp;
		c = s->cap[0];
		s->cap[0] = s->cap[1];
		s->cap[1] = c;
		s->n[0] = s->n[1];
		s->as_of[0] = s->as_of[1];
		s->have[0] = 1;
	}
	if (k > s->cap[1]) {
		tmp = realloc(s->rows[1], k * sizeof(*tmp));
		if (!tmp) {
			s->have[1] = 0;
			return;
		}
		s->rows[1] = tmp;
		s->cap[1] = k;
	}
	memcpy(s->rows[1], rows, k * sizeof(*rows));
	s->n[1] = k;
	s->raw = t;
	s->as_of[1] = ntp_merge_map(t, f->cur[i].off);
	s->have[1] = 1;
	/* the trailer's: dated no later than the recording's end */
	end = ntp_reader_stats(s->r)->end_mono_ns;
	if (s->done && end && ntp_merge_map(end, f->cur[i].off) < s->as_of[1])
		s->as_of[1] = ntp_merge_map(end, f->cur[i].off);
}

/* A scout reads on until its latest totals are as of at or later, the file
 * ends (its trailer's totals), or its records are NTP_FILES_AHEAD_NS past at
 * (a file without totals there is not read to its end). */
static void scout_to(struct ntp_files *f, size_t i, uint64_t at)
{
	struct scout *s = &f->scout[i];

	while (!s->done && !(s->have[1] && s->as_of[1] >= at) && !(s->last > at + NTP_FILES_AHEAD_NS)) {
		const struct ntp_record *recs;
		size_t n;
		int ret = ntp_reader_next_block(s->r, &recs, &n);

		if (ret == -EAGAIN)
			return;		/* followed: nothing more yet */
		if (ret != 1) {
			s->done = 1;
			scout_take(f, i);
			return;
		}
		for (size_t j = 0; j < n; j++) {
			uint64_t t = ntp_merge_map(ntp_record_last_ts(&recs[j]), f->cur[i].off);

			if (i == f->primary)
				bin_record(f, t);
			if (t > s->last)
				s->last = t;
		}
		scout_take(f, i);
	}
}

/* Rows b[0..nb) moved back towards a[0..na) (the same key's earlier row;
 * none: zero) to the share w of the way from a to b, into out. */
static void rows_between(const struct ntp_total *a, size_t na, const struct ntp_total *b, size_t nb, double w,
			 struct ntp_total *out)
{
	static const struct ntp_total zero;

	for (size_t j = 0; j < nb; j++) {
		const struct ntp_total *o = &zero;

		for (size_t i = 0; i < na; i++)
			if (!memcmp(&a[i].key, &b[j].key, sizeof(a[i].key))) {
				o = &a[i];
				break;
			}
		out[j] = b[j];
#define BETWEEN(x) out[j].x = o->x + (uint64_t)llround((double)(int64_t)(b[j].x - o->x) * w)
		BETWEEN(count.commands);
		BETWEEN(count.bytes);
		BETWEEN(occ.summed);
		BETWEEN(occ.incomplete);
		for (int s = 0; s < NTP_OCC_SLOTS; s++)
			BETWEEN(occ.ns[s]);
#undef BETWEEN
		/* a count that went back (a damaged block): the later one */
		if (b[j].count.commands < o->count.commands)
			out[j] = b[j];
	}
}

/* A paced replay is about to close an interval at at. The model gets the
 * counts as of at, interpolated between the totals blocks around it (read
 * ahead by the scouts, at most about a second past at): in the share of the
 * primary's records that fell between the earlier block and at (the
 * commands come as the records do; at 1 in 1 they are the records), or of
 * the time when the bins do not reach back to the earlier block or the
 * records sampled 1 in N are too few for one interval (SHARE_MIN). No block
 * after at (none written yet, a file without totals): nothing, and the
 * model guesses past the last (count_at in model.c, not exact). The blocks
 * go to the sinks when the data reaches them (deliver_totals). */
/* Records sampled 1 in N in an interval that holds any: at least this many
 * on average (the block's records over the interval-long stretches from
 * the earlier block that hold one) for an interval's share of the records
 * to stand for its commands (within 1 / sqrt(100), 10 %, one standard
 * deviation). Fewer (-s 1000 of a device under a million commands a second
 * at a tenth of a second), and an interval's count would swing with the
 * few records it holds (all or nothing at one or none): the time's share,
 * which shows a load that bursts within a block flat. Stretches without a record do
 * not count: a load that bursts, or stops before the block, has its
 * records where its commands are. Decided once per pair of blocks, so an
 * interval changed between them does not move the count back. */
#define SHARE_MIN 100

/* 1 when the records between the blocks at t0 and t1 are dense enough in
 * the stretches of interval ns that hold them (SHARE_MIN). */
static int share_by_records(const struct ntp_files *f, uint64_t t0, uint64_t t1, int64_t den, uint64_t interval)
{
	int64_t held = 0;

	if (den <= 0 || !interval)
		return 0;
	/* past the bins' top no record was read: nothing more to count (a
	 * block far ahead, a damaged file's time, would be endless) */
	for (uint64_t a = t0; a < t1 && a / SCOUT_BIN_NS < f->bin_lo + SCOUT_BINS; a += interval) {
		int64_t n = records_in(f, a, t1 - a > interval ? a + interval : t1);

		if (n < 0)
			return 0;
		held += n > 0;
	}
	return den >= SHARE_MIN * held;
}

static void deliver_ahead(struct ntp_files *f, struct ntp_pump *p, uint64_t at, uint64_t interval)
{
	const struct scout *ps;
	uint64_t t0;
	size_t total = 0;
	double w;
	int64_t num, den;

	if (f->no_totals || at <= f->ahead_as_of || scouts_open(f))
		return;
	for (size_t i = 0; i < f->n; i++)
		scout_to(f, i, at);
	ps = &f->scout[f->primary];
	if (!ps->have[1] || ps->as_of[1] < at)
		return;
	t0 = ps->have[0] ? ps->as_of[0] : ntp_files_start(f);
	if (t0 > at)
		return;		/* two blocks past at: the model keeps its own */
	num = records_in(f, t0, at);
	den = records_in(f, t0, ps->as_of[1]);
	if (f->share_of != ps->as_of[1]) {
		f->share_of = ps->as_of[1];
		f->share_rec = ntp_reader_info(f->r[f->primary])->sampling <= 1 ||
			       share_by_records(f, t0, ps->as_of[1], den, interval);
	}
	if (num >= 0 && den > 0 && f->share_rec)
		w = (double)num / (double)den;
	else
		w = ps->as_of[1] > t0 ? (double)(at - t0) / (double)(ps->as_of[1] - t0) : 1;
	for (size_t i = 0; i < f->n; i++)
		total += f->scout[i].have[1] ? f->scout[i].n[1] : 0;
	if (total > f->ntot_cap) {
		struct ntp_total *g = realloc(f->tot, total * sizeof(*g));

		if (!g)
			return;
		f->tot = g;
		f->ntot_cap = total;
	}
	total = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct scout *s = &f->scout[i];
		double wi = w;

		if (!s->have[1])
			continue;
		/* another file's blocks: their own times around at */
		if (i != f->primary) {
			uint64_t u0 = s->have[0] ? s->as_of[0] : t0;

			wi = s->as_of[1] <= at ? 1 : u0 >= at ? 0 : (double)(at - u0) / (double)(s->as_of[1] - u0);
		}
		rows_between(s->rows[0], s->have[0] ? s->n[0] : 0, s->rows[1], s->n[1], wi, f->tot + total);
		total += s->n[1];
	}
	ntp_pump_totals_to(p, f->tot, total, at, NTP_TOTALS_MODEL);
	f->ahead_as_of = at;
}

/* The records lost before they reached the files (their lost blocks, as
 * read so far), summed over the files, to the pump: the model counts them
 * as a live source's (docs/ntp-format.md, type 4). */
static void deliver_lost(struct ntp_files *f, struct ntp_pump *p)
{
	uint64_t lost = 0;

	for (size_t i = 0; i < f->n; i++)
		lost += ntp_reader_stats(f->r[i])->lost_before;
	if (lost)
		ntp_pump_lost(p, lost);
}

/* One file read to the end: straight from the reader's block to the pump. */
static void pull_all_one(struct ntp_files *f, struct ntp_pump *p)
{
	struct cursor *c = &f->cur[0];

	while (cursor_fill(f->r[0], c) > 0) {
		const struct ntp_record *recs = c->recs;
		size_t k = c->n;

		ntp_pump_records(p, recs + c->i, k - c->i);
		if (k) {
			uint64_t t = ntp_record_last_ts(&recs[k - 1]);

			if (t > f->last)
				f->last = t;
		}
		c->i = k;
	}
}

/* The data went past until (next record at t): the totals up to it, and how
 * far the data reached. Nothing fed up to until and the next record far later
 * (an idle recording, or a time a damaged file holds): the data reached the
 * record, so the pump closes one interval over the gap instead of one per
 * grid step (endless for a time years ahead). */
static int pause_at(struct ntp_files *f, struct ntp_pump *p, uint64_t until, uint64_t t, int fed,
		    uint64_t *reached)
{
	deliver_totals(f, p, until, 0);
	deliver_lost(f, p);
	*reached = until;
	if (!fed && t - until > NTP_FILES_GAP_NS)
		*reached = t - 1;
	/* the pump closes an interval at *reached */
	if (*reached >= ntp_pump_next_boundary(p))
		deliver_ahead(f, p, *reached, ntp_pump_interval(p));
	return 1;
}

/* A followed file has no more whole blocks yet (ntp_reader_follow): the
 * totals read so far, and the data reached its last record, or its last
 * totals block, which the writer flushes after the records before it (an
 * idle recording's intervals close as its flushes come). The caller comes
 * back later (the pump's next pull). */
static int wait_at(struct ntp_files *f, struct ntp_pump *p, uint64_t until, uint64_t *reached)
{
	uint64_t t, at = f->last;
	size_t k;

	deliver_totals(f, p, until, 0);
	deliver_lost(f, p);
	ntp_reader_totals(f->r[0], &k, &t);
	if (k && ntp_merge_map(t, f->cur[0].off) > at)
		at = ntp_merge_map(t, f->cur[0].off);
	*reached = at < until ? at : until;
	if (*reached >= ntp_pump_next_boundary(p))
		deliver_ahead(f, p, *reached, ntp_pump_interval(p));
	return 1;
}

/* A report: the merge's batch to the model in one call, whose records
 * wait for their twin by reference within it (model.h). */
static void feed_model(void *m, const struct ntp_record *const *r, size_t n)
{
	ntp_model_ingest_refs(m, r, n);
}

static void feed_pump(void *p, const struct ntp_record *const *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ntp_pump_record(p, r[i]);
}

int ntp_files_pull(void *ctx, struct ntp_pump *p, uint64_t until, uint64_t *reached)
{
	struct ntp_files *f = ctx;

	if (f->ended) {
		*reached = ntp_files_end(f);
		return 0;
	}
	if (f->n == 1 && until == UINT64_MAX) {
		pull_all_one(f, p);
	} else if (f->mg) {
		const struct ntp_record *r;
		uint64_t t;
		size_t from;
		/* a report: each record to the model without the pump's checks */
		struct ntp_model *plain = ntp_pump_plain_model(p);
		int fed;

		/* A lone target among hosts: the model alone takes the records,
		 * in windows of time, the target's first (the join pairs a
		 * command's twins in the order of each side's file, which the
		 * windows keep, and the sums do not depend on the order); a
		 * recording written from them takes them in time order. */
		if (ntp_pump_record_sinks(p))
			ntp_merge_most(f->mg, f->lone);
		else
			ntp_merge_most_windowed(f->mg, f->lone);
		fed = plain ? ntp_merge_drain(f->mg, until, feed_model, plain, f->primary, &f->last) > 0
				: ntp_merge_drain(f->mg, until, feed_pump, p, f->primary, &f->last) > 0;

		if (ntp_merge_peek(f->mg, &r, &from, &t))
			return pause_at(f, p, until, t, fed, reached);
	} else {
		/* one file, paced */
		struct cursor *c = &f->cur[0];
		int fed = 0, more;

		while ((more = cursor_fill(f->r[0], c)) > 0) {
			uint64_t t = ntp_merge_map(ntp_record_last_ts(&c->recs[c->i]), c->off);

			if (t > until)
				return pause_at(f, p, until, t, fed, reached);
			fed = 1;
			ntp_pump_record(p, &c->recs[c->i++]);
			if (t > f->last)
				f->last = t;
		}
		if (more < 0)
			return wait_at(f, p, until, reached);
	}
	/* every record fed: the final totals (trailers), and the end */
	f->ended = 1;
	deliver_totals(f, p, until, 1);
	deliver_lost(f, p);
	*reached = ntp_files_end(f);
	return 0;
}

/* ---- join.h's one-call feed, over the same source ---- */
uint64_t ntp_join_feed(struct ntp_reader **r, size_t n, size_t primary, const int64_t *adj,
		       struct ntp_model *m)
{
	struct ntp_files *f = files_alloc(n);
	struct ntp_pump_config pc = { .model = m };
	struct ntp_pump *p = NULL;
	uint64_t last = 0, reached;

	if (!f)
		return 0;
	memcpy(f->r, r, n * sizeof(*r));
	f->primary = primary;
	if (!files_init(f, adj))
		p = ntp_pump_new(&pc);
	if (p) {
		f->no_totals = 1;	/* the caller applies them */
		while (ntp_files_pull(f, p, UINT64_MAX, &reached) > 0)
			;
		last = f->last;
	}
	ntp_pump_free(p);
	ntp_files_close(f);
	return last;
}
