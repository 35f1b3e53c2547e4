// SPDX-License-Identifier: GPL-2.0
/*
 * ntpfile_ahead.c - a reader's blocks read by a second thread.
 *
 * Mapping a window of the file, the first touch of its pages and the CRC32C
 * of every payload cost about as much as `cat` of the file
 * (docs/performance.md); the records' processing costs more again. With two
 * CPUs they overlap: this thread runs the reader's own block loop
 * (ntp_reader_block_direct, unchanged, so a cut or damaged file ends or skips
 * exactly as without it) and hands each verified block over in one of
 * NTP_AHEAD_SLOTS slots; the caller takes the slots in order. The records
 * stay where the reader put them: it leaves a buffer or window behind
 * (ntp_reader_reap) rather than reuse it while the caller may still hold a
 * block in it (ntpfile.h); a block is copied only when it lies in a buffer
 * the next block reuses (ntp_reader_block_kept).
 *
 * Each slot carries the reader's stats and, when they changed, its totals as
 * of that block, so what the caller sees after a block is what it saw
 * without the thread: report output stays byte-identical. For a merge of
 * files (merge.c), the records' merge keys too: computing them here takes
 * that work off the thread that merges and reduces, which sets a join's
 * pace.
 *
 * Many files (a join of many hosts) share one thread, the crew below,
 * which serves each file's ring as that file's own thread would.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ntpfile_int.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How long the caller waits awake for a block before it sleeps:
 * NTPROF_AHEAD_SPIN_US, 0 (never) unless set; docs/performance.md says
 * what it saves and why it is not the default. */
static uint64_t ahead_spin_ns;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;

static void spin_init(void)
{
	const char *e = getenv("NTPROF_AHEAD_SPIN_US");

	if (e)
		ahead_spin_ns = strtoull(e, NULL, 10) * 1000;
}

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* pthread_cond_wait, its count and time added to *n and *ns */
static void wait_timed(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t *n, uint64_t *ns)
{
	uint64_t t0 = now_ns();

	pthread_cond_wait(cv, mu);
	++*n;
	*ns += now_ns() - t0;
}

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
};

/*
 * One thread for many readers (ntp_readers_read_ahead): a join of many
 * files would need a thread each, and each thread's blocks (64 rings that
 * fight over two CPUs). The crew's thread fills the ring of any member
 * that has room, the one whose caller waits first, else round robin from
 * the member after the last served; it sleeps when every ring is full
 * (until a caller frees one to its half). Members share the crew's lock.
 */
struct ntp_crew {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t space, idle;	/* the thread waits for room; a free waits for the thread */
	struct ntp_ahead **m;		/* members; NULL once freed */
	size_t n, live, next;		/* live: members not freed */
	struct ntp_ahead *busy;		/* the member the thread reads for (lock released) */
	int started, quit;
};

struct ntp_ahead {
	struct ntp_reader *r;
	pthread_t th;
	pthread_mutex_t own_mu, *mu;	/* mu: own_mu, or the crew's */
	pthread_cond_t data, own_space, *space;
	struct ntp_crew *crew;		/* NULL: a thread of its own */
	size_t lim;			/* slots it may fill, <= NTP_AHEAD_SLOTS */
	int ended;			/* the thread published the reader's end */
	struct slot slot[NTP_AHEAD_SLOTS];
	size_t head, tail, count;	/* count includes the slot the caller holds */
	uint64_t published, released;	/* blocks handed to the caller, let go by it */
	int holding, quit, finished, started;
	int want_keys;			/* set by the caller (after the two below), read by the thread */
	ntp_keys_fn keys_fn;
	int64_t key_off;
	const uint64_t *keys;		/* the caller's: of the block last handed out */
	int prod_waits, cons_waits;	/* asleep on space / on data */
	/* how often and how long each side slept (NTPROF_AHEAD_STATS=1 prints
	 * them when the reader closes: where a pair of threads loses time) */
	uint64_t prod_sleeps, cons_sleeps, prod_ns, cons_ns, cons_spin_ns;
	uint64_t sent_gen;		/* thread: totals generation last sent */
	/* the caller's view, as of the block last handed out */
	struct ntp_read_stats st;
	struct ntp_total *tot;
	size_t ntot, tot_cap;
	uint64_t tot_as_of;
};

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
	size_t n = 0, k;
	uint64_t as_of, gen;

	s->more = ntp_reader_block_direct(a->r, &recs, &n) == 1;
	s->n = 0;
	s->st = *ntp_reader_stats_direct(a->r);
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

/* The slot at the tail goes to the caller (lock held). */
static void publish(struct ntp_ahead *a, int more)
{
	a->tail = (a->tail + 1) % NTP_AHEAD_SLOTS;
	__atomic_store_n(&a->count, a->count + 1, __ATOMIC_RELAXED);	/* read unlocked by the caller's wait awake */
	a->published += more;
	a->ended |= !more;
	if (a->cons_waits)
		pthread_cond_signal(&a->data);
}

static void *run(void *arg)
{
	struct ntp_ahead *a = arg;

	for (;;) {
		struct slot *s;
		uint64_t released;
		int more;

		pthread_mutex_lock(a->mu);
		/* full: sleep until half the slots are free, so that the caller
		 * wakes this thread once per half a ring, not once per block (a
		 * wake-up costs the caller a system call and the CPU an interrupt) */
		if (a->count == a->lim)
			while (a->count > a->lim / 2 && !a->quit) {
				a->prod_waits = 1;
				wait_timed(a->space, a->mu, &a->prod_sleeps, &a->prod_ns);
			}
		a->prod_waits = 0;
		if (a->quit) {
			pthread_mutex_unlock(a->mu);
			break;
		}
		s = &a->slot[a->tail];
		released = a->released;
		pthread_mutex_unlock(a->mu);
		ntp_reader_reap(a->r, released);
		produce(a, s);	/* the slot is not the caller's until published */
		more = s->more;
		pthread_mutex_lock(a->mu);
		publish(a, more);
		pthread_mutex_unlock(a->mu);
		if (!more)
			break;
	}
	return NULL;
}

/* The crew's member to read a block for next (lock held), or NULL: every
 * ring full (or every reader at its end). *live: members still reading. */
static struct ntp_ahead *crew_pick(struct ntp_crew *c, size_t *live)
{
	struct ntp_ahead *pick = NULL;
	size_t at = 0;

	*live = 0;
	for (size_t k = 0; k < c->n; k++) {
		size_t i = (c->next + k) % c->n;
		struct ntp_ahead *a = c->m[i];

		if (!a || a->ended)
			continue;
		++*live;
		if (a->count >= a->lim)
			continue;
		if (!pick || (a->cons_waits && !pick->cons_waits)) {
			pick = a;
			at = i;
		}
	}
	if (pick)
		c->next = (at + 1) % c->n;
	return pick;
}

static void *crew_run(void *arg)
{
	struct ntp_crew *c = arg;

	pthread_mutex_lock(&c->mu);
	while (!c->quit) {
		struct ntp_ahead *a;
		struct slot *s;
		uint64_t released;
		size_t live;
		int more;

		a = crew_pick(c, &live);
		if (!live)
			break;
		if (!a) {
			for (size_t i = 0; i < c->n; i++)
				if (c->m[i])
					c->m[i]->prod_waits = 1;
			pthread_cond_wait(&c->space, &c->mu);
			for (size_t i = 0; i < c->n; i++)
				if (c->m[i])
					c->m[i]->prod_waits = 0;
			continue;
		}
		s = &a->slot[a->tail];
		released = a->released;
		c->busy = a;
		pthread_mutex_unlock(&c->mu);
		ntp_reader_reap(a->r, released);
		produce(a, s);
		more = s->more;
		pthread_mutex_lock(&c->mu);
		c->busy = NULL;
		pthread_cond_broadcast(&c->idle);
		publish(a, more);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

uint64_t ntp_ahead_published(const struct ntp_ahead *a)
{
	return a->published;	/* the thread's own count: it alone writes it */
}

uint64_t ntp_ahead_wait_released(struct ntp_ahead *a, uint64_t seq)
{
	uint64_t released;

	pthread_mutex_lock(a->mu);
	while (a->released < seq && !a->quit) {
		a->prod_waits = 1;	/* woken by the latest when the ring is half empty */
		pthread_cond_wait(a->space, a->mu);
	}
	a->prod_waits = 0;
	released = a->quit ? UINT64_MAX : a->released;	/* quit: the caller holds nothing */
	pthread_mutex_unlock(a->mu);
	return released;
}

struct ntp_ahead *ntp_ahead_new(struct ntp_reader *r)
{
	struct ntp_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_once(&spin_once, spin_init);
	a->r = r;
	a->lim = NTP_AHEAD_SLOTS;
	a->st = *ntp_reader_stats_direct(r);
	ntp_reader_totals_direct(r, NULL, NULL, &a->sent_gen);
	pthread_mutex_init(&a->own_mu, NULL);
	pthread_cond_init(&a->data, NULL);
	pthread_cond_init(&a->own_space, NULL);
	a->mu = &a->own_mu;
	a->space = &a->own_space;
	return a;
}

/* Signals meant for the program (SIGINT, SIGPIPE...) go to the caller's
 * thread; faults on the mapping (SIGBUS: a file truncated while mapped,
 * ntp_reader_catch_sigbus) are raised in the thread that touches it. */
static int spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGSEGV);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err ? -1 : 0;
}

int ntp_ahead_start(struct ntp_ahead *a)
{
	int err = spawn(&a->th, run, a);

	a->started = !err;
	return err;
}

struct ntp_crew *ntp_crew_new(size_t n)
{
	struct ntp_crew *c = calloc(1, sizeof(*c));

	if (!c || !(c->m = calloc(n ? n : 1, sizeof(*c->m)))) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->space, NULL);
	pthread_cond_init(&c->idle, NULL);
	return c;
}

void ntp_crew_add(struct ntp_crew *c, struct ntp_ahead *a, size_t lim)
{
	a->crew = c;
	a->mu = &c->mu;
	a->space = &c->space;
	a->lim = lim < 2 ? 2 : lim > NTP_AHEAD_SLOTS ? NTP_AHEAD_SLOTS : lim;
	c->m[c->n++] = a;
	c->live++;
}

static void crew_free(struct ntp_crew *c)
{
	pthread_cond_destroy(&c->idle);
	pthread_cond_destroy(&c->space);
	pthread_mutex_destroy(&c->mu);
	free(c->m);
	free(c);
}

int ntp_crew_start(struct ntp_crew *c)
{
	int err = spawn(&c->th, crew_run, c);

	c->started = !err;
	if (err) {
		/* the members are freed by the caller, as never started */
		for (size_t i = 0; i < c->n; i++) {
			c->m[i]->crew = NULL;
			c->m[i]->mu = &c->m[i]->own_mu;
			c->m[i]->space = &c->m[i]->own_space;
		}
		crew_free(c);
	}
	return err;
}

void ntp_crew_start_none(struct ntp_crew *c)
{
	crew_free(c);
}

/* A member leaves once the thread is not reading for it; the last one
 * stops the thread and frees the crew. */
static void crew_leave(struct ntp_ahead *a)
{
	struct ntp_crew *c = a->crew;
	int last;

	pthread_mutex_lock(&c->mu);
	a->quit = 1;
	while (c->busy == a)
		pthread_cond_wait(&c->idle, &c->mu);
	for (size_t i = 0; i < c->n; i++)
		if (c->m[i] == a)
			c->m[i] = NULL;
	last = !--c->live;
	c->quit |= last;
	pthread_cond_signal(&c->space);
	pthread_mutex_unlock(&c->mu);
	if (last) {
		pthread_join(c->th, NULL);
		crew_free(c);
	}
}

int ntp_ahead_block(struct ntp_ahead *a, const struct ntp_record **recs, size_t *n)
{
	struct slot *s;

	if (a->finished)
		return 0;
	pthread_mutex_lock(a->mu);
	if (a->holding) {	/* the previous block is no longer the caller's */
		a->head = (a->head + 1) % NTP_AHEAD_SLOTS;
		__atomic_store_n(&a->count, a->count - 1, __ATOMIC_RELAXED);
		a->released++;
		a->holding = 0;
		if (a->prod_waits && a->count <= a->lim / 2)
			pthread_cond_signal(a->space);
	}
	if (!a->count && ahead_spin_ns) {
		/* the block is likely under way: wait for it awake a little
		 * while, so that neither side pays a sleep and a wake-up (a
		 * system call in the reading thread, which sets the pace) */
		uint64_t t0 = now_ns(), t = t0;

		pthread_mutex_unlock(a->mu);
		while (!__atomic_load_n(&a->count, __ATOMIC_RELAXED) && t - t0 < ahead_spin_ns) {
			for (int i = 0; i < 32; i++)
				spin_pause();
			t = now_ns();
		}
		a->cons_spin_ns += t - t0;
		pthread_mutex_lock(a->mu);
	}
	while (!a->count) {
		a->cons_waits = 1;
		wait_timed(&a->data, a->mu, &a->cons_sleeps, &a->cons_ns);
	}
	a->cons_waits = 0;
	s = &a->slot[a->head];
	a->holding = 1;
	pthread_mutex_unlock(a->mu);
	a->st = s->st;
	if (s->tot_new && !grow((void **)&a->tot, &a->tot_cap, s->ntot, sizeof(*a->tot))) {
		if (s->ntot)
			memcpy(a->tot, s->tot, s->ntot * sizeof(*a->tot));
		a->ntot = s->ntot;
		a->tot_as_of = s->tot_as_of;
	}
	if (!s->more) {
		if (getenv("NTPROF_AHEAD_STATS"))	/* at the end: the reader sleeps no more */
			fprintf(stderr, "read-ahead%s: %llu blocks; the reader slept %llu times, %.3f s; "
				"the caller %llu times, %.3f s, and waited awake %.3f s\n", a->crew ? " (shared)" : "",
				(unsigned long long)a->published, (unsigned long long)a->prod_sleeps,
				a->prod_ns / 1e9, (unsigned long long)a->cons_sleeps, a->cons_ns / 1e9,
				a->cons_spin_ns / 1e9);
		a->finished = 1;
		a->keys = NULL;
		return 0;
	}
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
	if (a->crew) {
		crew_leave(a);
	} else {
		pthread_mutex_lock(a->mu);
		a->quit = 1;
		pthread_cond_broadcast(a->space);
		pthread_mutex_unlock(a->mu);
		if (a->started)
			pthread_join(a->th, NULL);
	}
	for (size_t i = 0; i < NTP_AHEAD_SLOTS; i++) {
		free(a->slot[i].buf);
		free(a->slot[i].ts);
		free(a->slot[i].tot);
	}
	free(a->tot);
	pthread_cond_destroy(&a->own_space);
	pthread_cond_destroy(&a->data);
	pthread_mutex_destroy(&a->own_mu);
	free(a);
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
