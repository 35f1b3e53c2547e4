// SPDX-License-Identifier: GPL-2.0
/*
 * ntpfile_write.c - the writer of .ntp recordings (ntpfile.h): records
 * packed into blocks, each block written whole or not at all, through a
 * queue and a thread of its own when the caller asks for one.
 * Layout, byte by byte: docs/ntp-format.md; the writer's rules there.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ntpfile.h"
#include "ntpfile_layout.h"
#include "../thread.h"

/*
 * The writer has two halves. The front (ntp_writer_add, _set_totals, _tick,
 * _flush, _close: the caller's thread) packs records into blocks and decides
 * when a block goes out, as one job: a records block (maybe empty), then the
 * totals block of a flush, then the end block of a close. The back (the file
 * descriptor, its offset, the errors) writes a job's blocks. Without a
 * writer thread the front hands each job to the back at once, in its own
 * thread. With one (ntp_writer_thread) the jobs wait in a queue bounded in
 * bytes and the thread writes them in order: a write that blocks (a slow
 * disk, a network file system, a pipe whose reader pauses) holds up the
 * caller only once the queue is full. Either way the same back code writes
 * the same blocks: the bytes are identical (docs/ntp-format.md, "Writer
 * rules"; docs/recording.md, "Files").
 */

enum { JOB_TOTALS = 1, JOB_END = 2, JOB_LOST = 4 };

struct wjob {
	struct wjob *next;		/* the queue: oldest first */
	uint8_t *blk;			/* block header room + nrec records */
	size_t nrec;
	int pooled;			/* blk is a full block's buffer, back to the pool after */
	unsigned what;			/* JOB_*: after the records, a totals block, a lost
					 * block, the end block (in this order) */
	uint64_t as_of;			/* JOB_TOTALS: the totals' time */
	uint64_t lost_n, lost_as_of;	/* JOB_LOST: records lost before the recording, when */
	uint64_t end_ns;		/* JOB_END: the end time */
	const struct ntp_total *rows;	/* JOB_TOTALS, JOB_END: the totals as of the job */
	size_t nrows;
	size_t cost;			/* bytes it holds in the queue */
	/* queued: the rows, then (a flush's few records) the records, follow */
};

struct ntp_writer {
	/* back: the file. Only the writer thread touches these while it runs. */
	int fd;
	int err;			/* first write error (-errno), sticky */
	uint64_t written;		/* records handed to the back, less those lost */
	uint64_t lost;			/* records that did not fit (see write_records_block) */
	uint64_t off;			/* end of the last whole block in the file */
	size_t per_block;		/* records per block; fewer once the disk is full */
	int end_ret;			/* what writing the end block returned */
	/* the back's errors and losses as the front sees them */
	atomic_int err_pub;
	_Atomic uint64_t lost_pub;

	/* front: the caller's thread */
	uint8_t *blk;			/* the block being filled: header room + NTP_BLOCK_RECORDS records */
	size_t nrec;			/* records pending in blk */
	uint64_t added;			/* records added */
	uint64_t last_flush_ns;
	struct ntp_total *totals;
	size_t ntotals, totals_cap;
	uint64_t totals_as_of;
	int totals_dirty;
	uint64_t lost_n, lost_as_of;	/* ntp_writer_set_lost's last count */
	int lost_dirty;

	uint64_t dropped;		/* records of full blocks dropped (ntp_writer_drop_block) */
	int nowait;			/* ntp_writer_nowait: the front never waits for the file */

	/* the writer thread's queue; under mu */
	int threaded, stopping;
	int waiters, woken;		/* in ntp_writer_wait_room; ntp_writer_wake was called */
	struct wjob *first, **lastp;	/* jobs not yet written (the first maybe being written) */
	size_t queued, max_queued;	/* their bytes, and the bound */
	uint8_t **pool;			/* full blocks' buffers written, for the front to reuse */
	size_t npool;
	size_t nbufs, max_bufs;		/* full-block buffers there are (the front's too), at most */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, space;
};

static int write_raw(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One whole block (header then payload) or, when it fails, none: a block
 * cut by a full disk is taken back (ftruncate to the last whole block), so
 * the file stays a readable recording up to there. 0 or -errno (not sticky). */
static int put_block(struct ntp_writer *w, const uint8_t *hdr, const void *payload, size_t len)
{
	int ret = write_raw(w->fd, hdr, NTP_BLOCK_HDR_LEN);

	if (!ret && len)
		ret = write_raw(w->fd, payload, len);
	if (!ret) {
		w->off += NTP_BLOCK_HDR_LEN + len;
		return 0;
	}
	/* a pipe cannot be cut back; its reader sees a cut tail */
	if (ftruncate(w->fd, (off_t)w->off) == 0)
		lseek(w->fd, (off_t)w->off, SEEK_SET);
	return ret;
}

static int write_all(struct ntp_writer *w, const void *buf, size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = write_raw(w->fd, buf, len);
	if (ret)
		return w->err = ret;
	w->off += len;
	return 0;
}

static void block_header(uint8_t *h, uint16_t type, uint32_t len, uint32_t count, const void *payload)
{
	put32(h + B_MAGIC, NTP_BLOCK_MAGIC);
	put16(h + B_TYPE, type);
	put16(h + B_FLAGS, 0);
	put32(h + B_LEN, len);
	put32(h + B_COUNT, count);
	put32(h + B_PCRC, ntp_crc32c(0, payload, len));
	put32(h + B_HCRC, ntp_crc32c(0, h, B_HCRC));
}

#define JOB_BLK_BYTES (NTP_BLOCK_HDR_LEN + (size_t)NTP_BLOCK_RECORDS * sizeof(struct ntp_record))

static void writer_free(struct ntp_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->npool; i++)
		free(w->pool[i]);
	free(w->pool);
	free(w->blk);
	free(w->totals);
	free(w);
}

struct ntp_writer *ntp_writer_open(const char *path, const struct ntp_file_info *info,
				   char *errbuf, size_t errlen)
{
	uint8_t h[HEADER_BUF] = { 0 };
	uint32_t nq = info->n_hostq < NTP_HOSTQ_MAX ? info->n_hostq : NTP_HOSTQ_MAX;
	/* without a table the header keeps its 1.0 length */
	uint32_t hlen = nq ? NTP_HOSTQ_OFF + nq * NTP_HOSTQ_ENTRY + 4 : NTP_HEADER_LEN;
	struct ntp_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->blk = malloc(JOB_BLK_BYTES))) {
		snprintf(errbuf, errlen, "%s: out of memory", path);
		goto fail;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		snprintf(errbuf, errlen, "%s: cannot create: %s", path, strerror(errno));
		goto fail;
	}
	memcpy(h + H_MAGIC, NTP_FILE_MAGIC, 8);
	put16(h + H_MAJOR, NTP_FORMAT_MAJOR);
	put16(h + H_MINOR, NTP_FORMAT_MINOR);
	put32(h + H_HDRLEN, hlen);
	put32(h + H_RECSIZE, sizeof(struct ntp_record));
	h[H_ROLE] = info->role;
	h[H_TRANSPORT] = info->transport;
	h[H_IMPL_HOST] = info->impl_host;
	h[H_IMPL_TARGET] = info->impl_target;
	put32(h + H_SAMPLING, info->sampling);
	put32(h + H_FLAGS, 0);
	put64(h + H_START_MONO, info->start_mono_ns);
	put64(h + H_START_REAL, info->start_real_ns);
	/* always NUL-terminated on disk */
	memcpy(h + H_HOSTNAME, info->hostname, strnlen(info->hostname, NTP_HOSTNAME_LEN - 1));
	memcpy(h + H_KERNEL, info->kernel, strnlen(info->kernel, NTP_KERNEL_LEN - 1));
	memcpy(h + H_TOOLVER, info->tool_version, strnlen(info->tool_version, NTP_TOOLVER_LEN - 1));
	if (nq) {
		put32(h + H_HOSTQ_OFF, NTP_HOSTQ_OFF);
		put16(h + H_HOSTQ_COUNT, (uint16_t)nq);
		put16(h + H_HOSTQ_ENTSZ, NTP_HOSTQ_ENTRY);
		for (uint32_t i = 0; i < nq; i++) {
			uint8_t *e = h + NTP_HOSTQ_OFF + i * NTP_HOSTQ_ENTRY;

			memcpy(e, info->hostq[i].dev, strnlen(info->hostq[i].dev, NTP_DEV_LEN - 1));
			put32(e + NTP_DEV_LEN, info->hostq[i].hw_queues);
			put32(e + NTP_DEV_LEN + 4, info->hostq[i].tags);
		}
	}
	put32(h + hlen - 4, ntp_crc32c(0, h, hlen - 4));
	w->last_flush_ns = info->start_mono_ns;
	w->per_block = NTP_BLOCK_RECORDS;
	if (write_all(w, h, hlen)) {
		snprintf(errbuf, errlen, "%s: cannot write: %s", path, strerror(-w->err));
		close(w->fd);
		goto fail;
	}
	return w;
fail:
	writer_free(w);
	return NULL;
}

static int no_room(int err)
{
	return err == -ENOSPC || err == -EFBIG || err == -EDQUOT;
}

/* ---- the back: one job's blocks ---- */

/* A job's records as blocks. When the disk is full, a block of
 * NTP_BLOCK_RECORDS records would be all or nothing: the records go out in
 * blocks half as large, then half again, down to one, so what fits is kept;
 * the rest is counted lost and the error stays (the recording stops with
 * its errno). */
static int write_records_block(struct ntp_writer *w, const uint8_t *blk, size_t n)
{
	const size_t rs = sizeof(struct ntp_record);
	size_t done = 0;
	int ret = 0;

	if (!n)
		return w->err;
	if (w->err) {
		w->lost += n;
		w->written -= n;
		return w->err;
	}
	while (done < n) {
		size_t k = n - done < w->per_block ? n - done : w->per_block;
		const uint8_t *recs = blk + NTP_BLOCK_HDR_LEN + done * rs;
		uint8_t h[NTP_BLOCK_HDR_LEN];

		block_header(h, NTP_BLOCK_RECORDS_T, (uint32_t)(k * rs), (uint32_t)k, recs);
		ret = put_block(w, h, recs, k * rs);
		if (!ret) {
			done += k;
			continue;
		}
		if (!no_room(ret) || k == 1)
			break;
		w->per_block = k / 2;
	}
	if (done < n) {
		w->lost += n - done;
		w->written -= n - done;
		w->err = ret;
	}
	return w->err;
}

/* totals or end block: a fixed head then the job's totals rows */
static int write_totals_like(struct ntp_writer *w, const struct wjob *j, uint16_t type,
			     const uint8_t *head, size_t headlen)
{
	size_t len = headlen + j->nrows * sizeof(struct ntp_total);
	uint8_t *b = malloc(NTP_BLOCK_HDR_LEN + len);
	int ret;

	if (!b)
		return w->err = -ENOMEM;
	memcpy(b + NTP_BLOCK_HDR_LEN, head, headlen);
	if (j->nrows)
		memcpy(b + NTP_BLOCK_HDR_LEN + headlen, j->rows, j->nrows * sizeof(struct ntp_total));
	block_header(b, type, (uint32_t)len, (uint32_t)j->nrows, b + NTP_BLOCK_HDR_LEN);
	ret = w->err ? w->err : put_block(w, b, b + NTP_BLOCK_HDR_LEN, len);
	if (ret)
		w->err = ret;
	free(b);
	return ret;
}

static void back_run(struct ntp_writer *w, const struct wjob *j)
{
	w->written += j->nrec;
	write_records_block(w, j->blk, j->nrec);
	if (j->what & JOB_TOTALS) {
		uint8_t head[TOTALS_HDR] = { 0 };

		put64(head, j->as_of);
		put32(head + 8, sizeof(struct ntp_total));
		write_totals_like(w, j, NTP_BLOCK_TOTALS, head, sizeof(head));
	}
	if (j->what & JOB_LOST) {
		/* no rows: a head of its own */
		struct wjob none = { .nrows = 0 };
		uint8_t head[NTP_LOST_HDR];

		put64(head, j->lost_as_of);
		put64(head + 8, j->lost_n);
		write_totals_like(w, &none, NTP_BLOCK_LOST, head, sizeof(head));
	}
	if (j->what & JOB_END) {
		uint8_t head[END_HDR] = { 0 };

		put64(head, j->end_ns);
		put64(head + 8, w->written);
		put32(head + 16, sizeof(struct ntp_total));
		w->end_ret = write_totals_like(w, j, NTP_BLOCK_END, head, sizeof(head));
	}
	atomic_store_explicit(&w->lost_pub, w->lost, memory_order_relaxed);
	atomic_store_explicit(&w->err_pub, w->err, memory_order_release);
}

static void *writer_main(void *arg)
{
	struct ntp_writer *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct wjob *j;

		while (!w->first && !w->stopping)
			pthread_cond_wait(&w->work, &w->mu);
		if (!(j = w->first))
			break;
		pthread_mutex_unlock(&w->mu);
		back_run(w, j);
		pthread_mutex_lock(&w->mu);
		/* the pool has room for every full block the queue can hold */
		if (j->pooled)
			w->pool[w->npool++] = j->blk;
		w->first = j->next;
		if (!w->first)
			w->lastp = &w->first;
		w->queued -= j->cost;
		free(j);
		pthread_cond_signal(&w->space);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int ntp_writer_thread(struct ntp_writer *w, size_t max_bytes)
{
	int err;

	if (w->threaded || w->added || max_bytes < 2 * JOB_BLK_BYTES)
		return -EINVAL;
	/* every full block the queue holds, and the front's */
	w->max_bufs = max_bytes / JOB_BLK_BYTES + 1;
	w->nbufs = 1;
	w->pool = calloc(w->max_bufs, sizeof(*w->pool));
	if (!w->pool)
		return -ENOMEM;
	w->max_queued = max_bytes;
	w->first = NULL;
	w->lastp = &w->first;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->space, NULL);
	/* Signals meant for the program (SIGINT, SIGTERM) go to the caller's
	 * thread. SIGPIPE and SIGXFSZ stay open here: a write into a pipe whose
	 * reader is gone ends the program as it did in the caller's thread
	 * (docs/failures.md); faults are raised where they happen. */
	err = ntp_thread_start(&w->th, writer_main, w, (const int[]){ SIGPIPE, SIGXFSZ, 0 });
	if (err) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->space);
		free(w->pool);
		w->pool = NULL;
		return -err;
	}
	w->threaded = 1;
	return 0;
}

/* ---- the front ---- */

/* The job of the current block and totals, written in the caller's thread. */
static void run_here(struct ntp_writer *w, unsigned what, uint64_t end_ns)
{
	struct wjob j = {
		.blk = w->blk, .nrec = w->nrec, .what = what, .as_of = w->totals_as_of, .end_ns = end_ns,
		.lost_n = w->lost_n + w->dropped, .lost_as_of = w->lost_as_of,
		.rows = what & (JOB_TOTALS | JOB_END) ? w->totals : NULL,
		.nrows = what & (JOB_TOTALS | JOB_END) ? w->ntotals : 0,
	};

	back_run(w, &j);
}

/* Whether a job of cost bytes fits in the queue now (the first always
 * fits); pooled: it brings a full block's buffer. The bound counts the
 * written buffers kept for reuse too (all but the one a full block's job
 * has the front take next): those beyond it are freed, so the queue, the
 * pool and the front's block stay within max_queued and one block
 * (docs/recording.md, "Files"). Under mu. */
static int room(struct ntp_writer *w, size_t cost, int pooled)
{
	while (w->npool > (size_t)pooled &&
	       w->queued + (w->npool - (size_t)pooled) * JOB_BLK_BYTES + cost > w->max_queued) {
		free(w->pool[--w->npool]);
		w->nbufs--;
	}
	return !w->first || w->queued + cost <= w->max_queued;
}

/* Queues a job once the bytes queued leave room for it. Under mu. */
static void enqueue(struct ntp_writer *w, struct wjob *j)
{
	while (!room(w, j->cost, j->pooled))
		pthread_cond_wait(&w->space, &w->mu);
	j->next = NULL;
	*w->lastp = j;
	w->lastp = &j->next;
	w->queued += j->cost;
	pthread_cond_signal(&w->work);
}

/* A full block's next buffer without waiting: one written already, else a
 * new one up to what the queue can hold. Under mu. */
static uint8_t *spare_block(struct ntp_writer *w)
{
	uint8_t *b = NULL;

	if (w->npool)
		b = w->pool[--w->npool];
	else if (w->nbufs < w->max_bufs && (b = malloc(JOB_BLK_BYTES)))
		w->nbufs++;
	return b;
}

/*
 * Hands the pending records (and what) to the back: 1, or 0 when they stay
 * pending (ntp_writer_nowait: no room in the queue). A full block's buffer
 * goes with the job and the front takes one the thread is done with (or a
 * new one); a flush's few records and the totals are copied into the job.
 * Without memory for the job, the front waits until the thread wrote the
 * queue and writes this job itself (or, nowait, keeps the records pending).
 */
static int submit(struct ntp_writer *w, unsigned what, uint64_t end_ns)
{
	const size_t rs = sizeof(struct ntp_record);
	int full = w->nrec == NTP_BLOCK_RECORDS;
	size_t nrows = what & (JOB_TOTALS | JOB_END) ? w->ntotals : 0;
	size_t copy = full ? 0 : NTP_BLOCK_HDR_LEN + w->nrec * rs;
	uint8_t *next = NULL;
	struct wjob *j;

	if (!w->threaded) {
		run_here(w, what, end_ns);
		w->nrec = 0;
		return 1;
	}
	j = malloc(sizeof(*j) + nrows * sizeof(struct ntp_total) + copy);
	if (!j && w->nowait)
		return 0;
	if (!j) {
		pthread_mutex_lock(&w->mu);
		while (w->first)
			pthread_cond_wait(&w->space, &w->mu);
		run_here(w, what, end_ns);	/* the thread waits for work: the back is ours */
		pthread_mutex_unlock(&w->mu);
		w->nrec = 0;
		return 1;
	}
	*j = (struct wjob){ .nrec = w->nrec, .what = what, .as_of = w->totals_as_of, .end_ns = end_ns,
			    .lost_n = w->lost_n + w->dropped, .lost_as_of = w->lost_as_of, .nrows = nrows,
			    .cost = sizeof(*j) + nrows * sizeof(struct ntp_total) + copy, .pooled = full };
	if (full)
		j->cost += JOB_BLK_BYTES;
	/* nowait: only a job that fits, and a full block's only with the
	 * buffer the front takes next in hand (without nowait, no lock here) */
	if (w->nowait) {
		pthread_mutex_lock(&w->mu);
		if (!room(w, j->cost, j->pooled) || (full && !(next = spare_block(w)))) {
			pthread_mutex_unlock(&w->mu);
			free(j);
			return 0;
		}
		pthread_mutex_unlock(&w->mu);
	}
	if (nrows) {
		memcpy(j + 1, w->totals, nrows * sizeof(struct ntp_total));
		j->rows = (const struct ntp_total *)(j + 1);
	}
	if (!full) {
		j->blk = (uint8_t *)(j + 1) + nrows * sizeof(struct ntp_total);
		memcpy(j->blk + NTP_BLOCK_HDR_LEN, w->blk + NTP_BLOCK_HDR_LEN, w->nrec * rs);
	} else {
		j->blk = w->blk;
	}
	w->nrec = 0;
	pthread_mutex_lock(&w->mu);
	enqueue(w, j);
	if (full) {
		/* the next block's buffer: one written already, else a new one
		 * up to what the queue can hold, else (or without memory) the
		 * next one written: the one just queued at the latest */
		w->blk = next;
		while (!w->blk && !(w->blk = spare_block(w)))
			pthread_cond_wait(&w->space, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return 1;
}

int ntp_writer_add(struct ntp_writer *w, const struct ntp_record *r)
{
	/* nowait: a full block the queue had no room for */
	if (w->nrec == NTP_BLOCK_RECORDS && !submit(w, 0, 0)) {
		int e = ntp_writer_error(w);

		return e ? e : -EAGAIN;
	}
	memcpy(w->blk + NTP_BLOCK_HDR_LEN + w->nrec * sizeof(*r), r, sizeof(*r));
	w->added++;
	if (++w->nrec == NTP_BLOCK_RECORDS)
		submit(w, 0, 0);
	return ntp_writer_error(w);
}

int ntp_writer_set_totals(struct ntp_writer *w, const struct ntp_total *t, size_t n, uint64_t mono_ns)
{
	if (n > (NTP_BLOCK_MAX_PAYLOAD - END_HDR) / sizeof(*t))
		return -E2BIG;
	if (n > w->totals_cap) {
		struct ntp_total *nt = realloc(w->totals, n * sizeof(*t));

		if (!nt)
			return -ENOMEM;
		w->totals = nt;
		w->totals_cap = n;
	}
	if (n)
		memcpy(w->totals, t, n * sizeof(*t));
	w->ntotals = n;
	w->totals_as_of = mono_ns;
	w->totals_dirty = 1;
	return 0;
}

int ntp_writer_set_lost(struct ntp_writer *w, uint64_t cumulative, uint64_t mono_ns)
{
	if (cumulative != w->lost_n) {
		w->lost_n = cumulative;
		w->lost_as_of = mono_ns;
		w->lost_dirty = 1;
	}
	return 0;
}

/* What a flush or the close writes after the records. */
static unsigned dirty(const struct ntp_writer *w)
{
	return (w->totals_dirty ? JOB_TOTALS : 0) | (w->lost_dirty ? JOB_LOST : 0);
}

int ntp_writer_flush(struct ntp_writer *w, uint64_t mono_ns)
{
	/* nowait and no room: the records, totals and count stay pending
	 * for a later flush (the next second's) */
	if (!(w->nrec || dirty(w)) || submit(w, dirty(w), 0))
		w->totals_dirty = w->lost_dirty = 0;
	w->last_flush_ns = mono_ns;
	return ntp_writer_error(w);
}

int ntp_writer_tick(struct ntp_writer *w, uint64_t mono_ns)
{
	if (mono_ns - w->last_flush_ns >= 1000000000ull && mono_ns >= w->last_flush_ns)
		return ntp_writer_flush(w, mono_ns);
	return ntp_writer_error(w);
}

int ntp_writer_close_count(struct ntp_writer *w, uint64_t end_mono_ns, uint64_t *records, uint64_t *lost)
{
	return ntp_writer_close_why(w, end_mono_ns, records, lost, NULL);
}

int ntp_writer_close_why(struct ntp_writer *w, uint64_t end_mono_ns, uint64_t *records, uint64_t *lost,
			 int *at_close)
{
	int ret;

	/* a caller's thread waiting for room lets go of w first */
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->woken = 1;
		pthread_cond_broadcast(&w->space);
		while (w->waiters)
			pthread_cond_wait(&w->space, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
	/* the pending records, the totals if they changed, the trailer: one
	 * job, which waits for room */
	w->nowait = 0;
	submit(w, JOB_END | dirty(w), end_mono_ns);
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->stopping = 1;
		pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->space);
	}
	ret = w->end_ret;
	if (at_close)
		*at_close = 0;
	if (close(w->fd) && !ret) {
		ret = -errno;
		if (at_close)
			*at_close = 1;
	}
	if (records)
		*records = w->written;
	if (lost)
		*lost = w->lost;
	writer_free(w);
	return ret;
}

int ntp_writer_close(struct ntp_writer *w, uint64_t end_mono_ns)
{
	return ntp_writer_close_count(w, end_mono_ns, NULL, NULL);
}

size_t ntp_writer_held(struct ntp_writer *w)
{
	size_t n;

	if (!w->threaded)
		return JOB_BLK_BYTES;
	pthread_mutex_lock(&w->mu);
	n = w->queued + (w->npool + 1) * JOB_BLK_BYTES;
	pthread_mutex_unlock(&w->mu);
	return n;
}

uint64_t ntp_writer_records(const struct ntp_writer *w)
{
	return w->added - w->dropped - ntp_writer_lost(w);
}

void ntp_writer_nowait(struct ntp_writer *w)
{
	w->nowait = w->threaded;
}

int ntp_writer_wait_room(struct ntp_writer *w)
{
	int woken;

	if (!w->threaded)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->waiters++;
	while (!w->woken && !room(w, sizeof(struct wjob) + JOB_BLK_BYTES, 1))
		pthread_cond_wait(&w->space, &w->mu);
	woken = w->woken;
	if (!--w->waiters)
		pthread_cond_broadcast(&w->space);	/* a close waits for that */
	pthread_mutex_unlock(&w->mu);
	return woken ? -EINTR : 0;
}

void ntp_writer_wake(struct ntp_writer *w)
{
	if (!w->threaded)
		return;
	pthread_mutex_lock(&w->mu);
	w->woken = 1;
	pthread_cond_broadcast(&w->space);
	pthread_mutex_unlock(&w->mu);
}

uint64_t ntp_writer_drop_block(struct ntp_writer *w, uint64_t mono_ns)
{
	uint64_t n = 0;

	if (w->nrec == NTP_BLOCK_RECORDS) {
		n = w->nrec;
		w->dropped += n;
		w->nrec = 0;
		if (mono_ns > w->lost_as_of)
			w->lost_as_of = mono_ns;
		w->lost_dirty = 1;
	}
	return n;
}

uint64_t ntp_writer_dropped(const struct ntp_writer *w)
{
	return w->dropped;
}

uint64_t ntp_writer_lost(const struct ntp_writer *w)
{
	return atomic_load_explicit(&((struct ntp_writer *)w)->lost_pub, memory_order_relaxed);
}

int ntp_writer_error(const struct ntp_writer *w)
{
	return atomic_load_explicit(&((struct ntp_writer *)w)->err_pub, memory_order_acquire);
}
