// SPDX-License-Identifier: GPL-2.0
/*
 * ntpfile_ahead.c - a reader's blocks read by a second thread.
 *
 * Mapping a window of the file, the first touch of its pages and the CRC32C
 * of every payload cost about as much as `cat` of the file
 * (docs/performance.md); the records' processing costs more again. With two
 * CPUs they overlap: this thread runs the reader's own block loop
 * (ntp_reader_block_direct, so a cut file ends, and a block whose header or
 * whole CRC is bad is skipped, exactly as without it) and hands each block
 * over in one of NTP_AHEAD_SLOTS slots; the caller takes the slots in
 * order. A block stays where it was read (the read buffer or the window
 * is retired, not reused, until the caller lets the block go).
 *
 * Each slot carries the reader's stats and, when they changed, its totals as
 * of that block, so what the caller sees after a block is what it saw
 * without the thread: report output stays byte-identical.
 *
 * The CRC of a records block handed out in place is shared: the thread
 * computes it over the first part (ntp_reader_split_crc) and counts the
 * block as good for now; the caller finishes it over the rest and decides,
 * before it takes the block. A block the
 * caller finds damaged is skipped here, and the stats of it and of every
 * later slot are corrected as the one-thread reader would have counted
 * them (take_stats, check_rest). For a merge of
 * files (merge.c), the records' merge keys too: computing them here takes
 * that work off the thread that merges and reduces, which sets a join's
 * pace.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "ntpfile_int.h"
#include "../thread.h"

struct slot {
	const struct ntp_record *recs;	/* in the reader's window, or buf */
	struct ntp_record *buf;		/* a copy when the reader's buffer is reused */
	size_t n, cap;
	uint64_t *ts;			/* the records' keys (want_keys), ts_n of them */
	size_t ts_n, ts_cap;
	int more;			/* 0: the reader's end (recs unused) */
	struct ntp_read_stats st;	/* the reader's, after this block */
	int tot_new;			/* totals changed before this block */
	struct ntp_total *tot;
	size_t ntot, tot_cap;
	uint64_t tot_as_of;
	int rest_due;			/* the caller checks the rest of the CRC */
	struct ntp_crc_rest rest;
	uint64_t why_over;		/* ntp_reader_why_over() after this block */
};

struct ntp_ahead {
	struct ntp_reader *r;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t data, space;
	struct slot slot[NTP_AHEAD_SLOTS];
	size_t head, tail, count;	/* count includes the slot the caller holds */
	uint64_t published, released;	/* blocks handed to the caller, let go by it */
	int holding, quit, finished, started;
	int want_keys;			/* set by the caller (after the two below), read by the thread */
	ntp_keys_fn keys_fn;
	int64_t key_off;
	const uint64_t *keys;		/* the caller's: of the block last handed out */
	int prod_waits, cons_waits;	/* asleep on space / on data */
	size_t wake_at;			/* blocks ready that wake the caller asleep */
	uint64_t sent_gen;		/* thread: totals generation last sent */
	/* the caller's view, as of the block last handed out */
	struct ntp_read_stats st;
	struct ntp_total *tot;
	size_t ntot, tot_cap;
	uint64_t tot_as_of;
	/* blocks the caller found damaged (rest of their CRC), to correct the
	 * stats of every later slot, which the thread counted as good */
	struct {
		uint64_t records, blocks;
		char why[sizeof(((struct ntp_read_stats *)0)->why)];	/* "": the thread's */
		uint64_t why_over;	/* the thread's count when why was set */
	} bad;
};

/* The caller, asleep on an empty ring, is woken once this many blocks are
 * ready: a wake-up costs the waker a system call and the CPU an interrupt,
 * once per half a ring rather than once per block (as for the thread when
 * the ring is full). Not for a pipe or a device: its blocks may come one
 * at a time, as a live recorder writes them (`ntprof dump /dev/stdin`),
 * and each is the caller's as soon as it is whole. */
#define WAKE_CALLER (NTP_AHEAD_SLOTS / 2)

static int grow(void **p, size_t *cap, size_t want, size_t size)
{
	void *q;

	if (want <= *cap)
		return 0;
	q = realloc(*p, want * size);
	if (!q)
		return -1;
	*p = q;
	*cap = want;
	return 0;
}

/* Fills s with the reader's next block (or its end). */
static void produce(struct ntp_ahead *a, struct slot *s)
{
	const struct ntp_record *recs;
	const struct ntp_total *t;
	const struct ntp_crc_rest *rest;
	size_t n = 0, k;
	uint64_t as_of, gen;

	s->more = ntp_reader_block_direct(a->r, &recs, &n) == 1;
	s->n = 0;
	s->st = *ntp_reader_stats_direct(a->r);
	s->why_over = ntp_reader_why_over(a->r);
	rest = s->more ? ntp_reader_crc_rest(a->r) : NULL;
	s->rest_due = rest != NULL;
	if (rest)
		s->rest = *rest;
	if (s->more) {
		if (ntp_reader_block_kept(a->r, recs)) {
			s->recs = recs;	/* the window stays until the caller lets go */
			s->n = n;
		} else if (grow((void **)&s->buf, &s->cap, n, sizeof(*recs))) {
			s->more = 0;	/* as the reader itself says when memory runs out */
			s->st.truncated = 1;
			if (!s->st.why[0])
				strcpy(s->st.why, "out of memory");
		} else {
			memcpy(s->buf, recs, n * sizeof(*recs));
			s->recs = s->buf;
			s->n = n;
		}
	}
	s->ts_n = 0;
	if (s->n && __atomic_load_n(&a->want_keys, __ATOMIC_ACQUIRE) &&
	    !grow((void **)&s->ts, &s->ts_cap, s->n, sizeof(*s->ts))) {
		a->keys_fn(s->recs, s->n, a->key_off, s->ts);
		s->ts_n = s->n;
	}
	t = ntp_reader_totals_direct(a->r, &k, &as_of, &gen);
	s->tot_new = gen != a->sent_gen;
	if (s->tot_new) {
		if (grow((void **)&s->tot, &s->tot_cap, k, sizeof(*t))) {
			s->tot_new = 0;	/* the counts stay estimated until memory allows */
		} else {
			if (k)
				memcpy(s->tot, t, k * sizeof(*t));
			s->ntot = k;
			s->tot_as_of = as_of;
			a->sent_gen = gen;
		}
	}
}

static void *run(void *arg)
{
	struct ntp_ahead *a = arg;

	for (;;) {
		struct slot *s;
		uint64_t released;
		int more;

		pthread_mutex_lock(&a->mu);
		/* full: sleep until half the slots are free, so that the caller
		 * wakes this thread once per half a ring, not once per block (a
		 * wake-up costs the caller a system call and the CPU an interrupt) */
		if (a->count == NTP_AHEAD_SLOTS)
			while (a->count > NTP_AHEAD_SLOTS / 2 && !a->quit) {
				a->prod_waits = 1;
				pthread_cond_wait(&a->space, &a->mu);
			}
		a->prod_waits = 0;
		if (a->quit) {
			pthread_mutex_unlock(&a->mu);
			break;
		}
		s = &a->slot[a->tail];
		released = a->released;
		pthread_mutex_unlock(&a->mu);
		ntp_reader_reap(a->r, released);
		produce(a, s);	/* the slot is not the caller's until published */
		more = s->more;
		pthread_mutex_lock(&a->mu);
		a->tail = (a->tail + 1) % NTP_AHEAD_SLOTS;
		a->count++;
		a->published += more;
		/* the caller asleep: woken when wake_at blocks are ready,
		 * or at the end */
		if (a->cons_waits && (a->count >= a->wake_at || !more))
			pthread_cond_signal(&a->data);
		pthread_mutex_unlock(&a->mu);
		if (!more)
			break;
	}
	return NULL;
}

uint64_t ntp_ahead_published(const struct ntp_ahead *a)
{
	return a->published;	/* the thread's own count: it alone writes it */
}

uint64_t ntp_ahead_wait_released(struct ntp_ahead *a, uint64_t seq)
{
	uint64_t released;

	pthread_mutex_lock(&a->mu);
	if (a->cons_waits && a->released < seq)
		pthread_cond_signal(&a->data);	/* what is ready, whatever its count */
	while (a->released < seq && !a->quit) {
		a->prod_waits = 1;	/* woken by the latest when the ring is half empty */
		pthread_cond_wait(&a->space, &a->mu);
	}
	a->prod_waits = 0;
	released = a->quit ? UINT64_MAX : a->released;	/* quit: the caller holds nothing */
	pthread_mutex_unlock(&a->mu);
	return released;
}

struct ntp_ahead *ntp_ahead_new(struct ntp_reader *r)
{
	struct ntp_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->r = r;
	a->wake_at = ntp_reader_stream(r) ? 1 : WAKE_CALLER;
	a->st = *ntp_reader_stats_direct(r);
	ntp_reader_totals_direct(r, NULL, NULL, &a->sent_gen);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->data, NULL);
	pthread_cond_init(&a->space, NULL);
	return a;
}

int ntp_ahead_start(struct ntp_ahead *a)
{
	int err;
	/* Signals meant for the program (SIGINT, SIGPIPE...) go to the caller's
	 * thread; faults on the mapping (SIGBUS: a file truncated while mapped,
	 * ntp_reader_catch_sigbus) are raised in the thread that touches it. */
	err = ntp_thread_start(&a->th, run, a, NULL);
	a->started = !err;
	return err ? -1 : 0;
}

/* The stats of slot s as the caller sees them: the blocks it found
 * damaged moved from the records to the dropped, and the first reason. */
static void take_stats(struct ntp_ahead *a, const struct slot *s)
{
	a->st = s->st;
	if (!a->bad.blocks)
		return;
	a->st.records -= a->bad.records;
	a->st.dropped += a->bad.records;
	a->st.damaged_blocks += a->bad.blocks;
	a->st.corrupt = 1;
	/* the first damaged block's note stands until a read error writes
	 * over it, in the one-thread reader as here */
	if (a->bad.why[0] && s->why_over != a->bad.why_over)
		a->bad.why[0] = '\0';
	if (a->bad.why[0])
		memcpy(a->st.why, a->bad.why, sizeof(a->st.why));
}

/* The rest of s's CRC: 0 good; -1 damaged, the caller's stats then those
 * of the reader that finds it damaged (ntp_reader_block_direct). */
static int check_rest(struct ntp_ahead *a, const struct slot *s)
{
	int had_why = a->st.why[0] != 0;

	if (!s->rest_due || ntp_crc_rest_ok(&s->rest, s->recs))
		return 0;
	ntp_read_stats_damaged(&a->st, &s->rest);
	a->bad.records += s->rest.count;
	a->bad.blocks++;
	if (!had_why) {
		memcpy(a->bad.why, a->st.why, sizeof(a->bad.why));
		a->bad.why_over = s->why_over;
	}
	return -1;
}

int ntp_ahead_block(struct ntp_ahead *a, const struct ntp_record **recs, size_t *n)
{
	struct slot *s;

again:
	if (a->finished)
		return 0;
	pthread_mutex_lock(&a->mu);
	if (a->holding) {	/* the previous block is no longer the caller's */
		a->head = (a->head + 1) % NTP_AHEAD_SLOTS;
		a->count--;
		a->released++;
		a->holding = 0;
		if (a->prod_waits && a->count <= NTP_AHEAD_SLOTS / 2)
			pthread_cond_signal(&a->space);
	}
	while (!a->count) {
		a->cons_waits = 1;
		pthread_cond_wait(&a->data, &a->mu);
	}
	a->cons_waits = 0;
	s = &a->slot[a->head];
	a->holding = 1;
	pthread_mutex_unlock(&a->mu);
	take_stats(a, s);
	if (s->tot_new && !grow((void **)&a->tot, &a->tot_cap, s->ntot, sizeof(*a->tot))) {
		if (s->ntot)
			memcpy(a->tot, s->tot, s->ntot * sizeof(*a->tot));
		a->ntot = s->ntot;
		a->tot_as_of = s->tot_as_of;
	}
	if (!s->more) {
		a->finished = 1;
		a->keys = NULL;
		return 0;
	}
	if (check_rest(a, s))
		goto again;	/* skipped as the reader skips it; let go at the next turn */
	*recs = s->recs;
	*n = s->n;
	a->keys = s->ts_n == s->n ? s->ts : NULL;
	return 1;
}

void ntp_ahead_want_keys(struct ntp_ahead *a, ntp_keys_fn keys, int64_t off)
{
	a->keys_fn = keys;
	a->key_off = off;
	__atomic_store_n(&a->want_keys, 1, __ATOMIC_RELEASE);
}

const uint64_t *ntp_ahead_keys(const struct ntp_ahead *a) { return a->keys; }

const struct ntp_read_stats *ntp_ahead_stats(const struct ntp_ahead *a) { return &a->st; }

const struct ntp_total *ntp_ahead_totals(const struct ntp_ahead *a, size_t *n, uint64_t *as_of_mono_ns)
{
	if (n)
		*n = a->ntot;
	if (as_of_mono_ns)
		*as_of_mono_ns = a->tot_as_of;
	return a->tot;
}

void ntp_ahead_free(struct ntp_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->quit = 1;
	pthread_cond_broadcast(&a->space);
	pthread_mutex_unlock(&a->mu);
	if (a->started)
		pthread_join(a->th, NULL);
	for (size_t i = 0; i < NTP_AHEAD_SLOTS; i++) {
		free(a->slot[i].buf);
		free(a->slot[i].ts);
		free(a->slot[i].tot);
	}
	free(a->tot);
	pthread_cond_destroy(&a->space);
	pthread_cond_destroy(&a->data);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

/*
 * The thread's part of each records block's CRC, in sixteenths; the caller
 * checks the rest just before it reads the records, so that part comes
 * into its cache for them. The thread's copy out of the page cache costs
 * about as much as the caller's reduction: the shares balance the two
 * (docs/performance.md).
 */
#define AHEAD_CRC_SPLIT 4

unsigned ntp_ahead_crc_split(void)
{
	const char *e = getenv("NTPROF_CRC_SPLIT");

	if (e && *e)
		return (unsigned)atoi(e) > 16 ? 16 : (unsigned)atoi(e);
	return AHEAD_CRC_SPLIT;
}

int ntp_read_ahead_wanted(size_t nfiles)
{
	const char *e = getenv("NTPROF_THREADS");
	cpu_set_t set;

	if (e && !strcmp(e, "0"))
		return 0;
	if (!nfiles || nfiles > NTP_AHEAD_FILES)
		return 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set) >= 2;
}
