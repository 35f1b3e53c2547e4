// SPDX-License-Identifier: GPL-2.0
/*
 * test_ntpfile_writer.c - the .ntp writer's thread (ntp_writer_thread,
 * docs/recording.md "Files"): the same bytes as without it for any sequence
 * of calls, adds that do not wait on a pipe whose reader pauses (and do once
 * the queue is full), the once-a-second flush reaching a file a reader
 * follows, and write errors (a closed pipe, a full disk) reported by the
 * next call and by close, and nowait (ntprof-top): full blocks dropped, not
 * waited for.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "core/store/ntpfile.h"

#define NSEC 1000000000ull
#define PAUSE_MS 2500
/* the bytes of a full records block (ntpfile_write.c queues it whole) */
#define BLOCK_BYTES ((size_t)NTP_BLOCK_HDR_LEN + NTP_BLOCK_RECORDS * sizeof(struct ntp_record))

static char tmpdir[] = "/tmp/test_ntpfile_writer.XXXXXX";

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct ntp_record mkrec(unsigned i)
{
	struct ntp_record r;

	memset(&r, 0, sizeof(r));
	for (int k = 0; k < NTP_TS_COUNT; k++)
		r.ts[k] = 1000000ull * i + (uint64_t)k * 1000 + 7;
	r.ts_valid = (1u << NTP_TS_COUNT) - 1;
	r.slba = 8ull * i;
	r.seq = i;
	r.len = 4096;
	r.nsid = 1;
	r.qid = (uint16_t)(1 + i % 4);
	r.cid = (uint16_t)(i & 0xffff);
	r.opcode = 2;
	r.side = NTP_SIDE_HOST;
	r.transport = NTP_TRANSPORT_TCP;
	snprintf(r.dev, sizeof(r.dev), "nvme0n%u", i % 3);
	return r;
}

static struct ntp_file_info mkinfo(void)
{
	struct ntp_file_info info = { 0 };

	info.role = NTP_ROLE_HOST;
	info.transport = NTP_TRANSPORT_TCP;
	info.sampling = 1;
	info.start_mono_ns = 5 * NSEC;
	info.start_real_ns = 1700000000ull * NSEC;
	snprintf(info.hostname, sizeof(info.hostname), "testhost");
	snprintf(info.kernel, sizeof(info.kernel), "6.1.0-test");
	snprintf(info.tool_version, sizeof(info.tool_version), "9.9.9");
	return info;
}

static struct ntp_total mktotal(unsigned i, uint64_t n)
{
	struct ntp_total t;

	memset(&t, 0, sizeof(t));
	t.key.side = NTP_SIDE_HOST;
	t.key.io = (uint8_t)(i % 2);
	t.key.len = 4096u << (i % 4);
	snprintf(t.key.dev, sizeof(t.key.dev), "nvme0n%u", i);
	t.count.commands = n;
	t.count.bytes = n * 4096;
	return t;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* ---- a script of writer calls, played the same way on several writers ---- */

enum op_kind { OP_ADD, OP_TOTALS, OP_TICK, OP_FLUSH, OP_LOST };
struct op {
	enum op_kind kind;
	unsigned n;		/* OP_ADD: records; OP_TOTALS: rows; OP_LOST: records lost, cumulative */
	uint64_t t;		/* the data clock */
};

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Bursts of records (none to a few blocks), totals, ticks and flushes on a
 * clock that moves by up to 0.15 s a call. */
static size_t make_script(struct op *ops, size_t max, unsigned *records)
{
	uint64_t t = 5 * NSEC;
	size_t n = 0;
	unsigned lost = 0;

	*records = 0;
	while (n < max) {
		unsigned r = (unsigned)(next_rand() % 100);

		t += next_rand() % (3 * NSEC / 2 / 10);
		if (r < 60) {
			unsigned k = r < 5 ? NTP_BLOCK_RECORDS * 2 + (unsigned)(next_rand() % 700)
					   : (unsigned)(next_rand() % 900);

			ops[n++] = (struct op){ OP_ADD, k, t };
			*records += k;
		} else if (r < 75) {
			ops[n++] = (struct op){ OP_TOTALS, (unsigned)(next_rand() % 6), t };
		} else if (r < 79) {
			lost += (unsigned)(next_rand() % 3);	/* unchanged at times: no block */
			ops[n++] = (struct op){ OP_LOST, lost, t };
		} else if (r < 95) {
			ops[n++] = (struct op){ OP_TICK, 0, t };
		} else {
			ops[n++] = (struct op){ OP_FLUSH, 0, t };
		}
	}
	return n;
}

/* Plays the script; stops at the first error. Returns it (0: none), with
 * *added the records added. */
static int play(struct ntp_writer *w, const struct op *ops, size_t n, unsigned *added)
{
	unsigned rec = 0;

	for (size_t i = 0; i < n; i++) {
		int ret = 0;

		switch (ops[i].kind) {
		case OP_ADD:
			for (unsigned k = 0; k < ops[i].n && !ret; k++) {
				struct ntp_record r = mkrec(rec++);

				ret = ntp_writer_add(w, &r);
			}
			break;
		case OP_TOTALS: {
			struct ntp_total t[6];

			for (unsigned k = 0; k < ops[i].n; k++)
				t[k] = mktotal(k, rec + k);
			assert_int_equal(ntp_writer_set_totals(w, t, ops[i].n, ops[i].t), 0);
			break;
		}
		case OP_TICK:
			ret = ntp_writer_tick(w, ops[i].t);
			break;
		case OP_FLUSH:
			ret = ntp_writer_flush(w, ops[i].t);
			break;
		case OP_LOST:
			assert_int_equal(ntp_writer_set_lost(w, ops[i].n, ops[i].t), 0);
			break;
		}
		if (ret) {
			*added = rec;
			return ret;
		}
	}
	*added = rec;
	return 0;
}

/* A writer on path, with a thread and a queue of max_bytes (0: none). */
static struct ntp_writer *open_writer(const char *path, size_t max_bytes)
{
	struct ntp_file_info info = mkinfo();
	char err[256];
	struct ntp_writer *w = ntp_writer_open(path, &info, err, sizeof(err));

	assert_non_null(w);
	if (max_bytes)
		assert_int_equal(ntp_writer_thread(w, max_bytes), 0);
	return w;
}

/* Any sequence of calls writes the same bytes with the thread (a queue of
 * two blocks, which waits often, and of NTP_WRITER_QUEUE) as without it. */
static void test_same_bytes(void **state)
{
	static struct op ops[400];
	const size_t queue[] = { 0, 2 * BLOCK_BYTES, NTP_WRITER_QUEUE };
	uint8_t *buf[3];
	size_t len[3], n;
	unsigned records;

	(void)state;
	n = make_script(ops, sizeof(ops) / sizeof(ops[0]), &records);
	assert_true(records > 10 * NTP_BLOCK_RECORDS);
	for (int i = 0; i < 3; i++) {
		char path[300], name[32];
		struct ntp_writer *w;
		unsigned added;
		uint64_t kept = 0, lost = 1;

		snprintf(name, sizeof(name), "same%d.ntp", i);
		tmp_path(path, sizeof(path), name);
		w = open_writer(path, queue[i]);
		assert_int_equal(play(w, ops, n, &added), 0);
		assert_int_equal(added, records);
		assert_int_equal(ntp_writer_records(w), records);
		assert_int_equal(ntp_writer_close_count(w, ops[n - 1].t + NSEC, &kept, &lost), 0);
		assert_int_equal(kept, records);
		assert_int_equal(lost, 0);
		buf[i] = slurp(path, &len[i]);
		unlink(path);
	}
	for (int i = 1; i < 3; i++) {
		assert_int_equal(len[i], len[0]);
		assert_memory_equal(buf[i], buf[0], len[0]);
	}
	for (int i = 0; i < 3; i++)
		free(buf[i]);
}

/* ---- a fifo whose reader pauses ---- */

struct fifo_reader {
	char path[300];
	unsigned pause_ms;	/* after the header */
	int close_early;	/* read the header, then close */
	uint8_t *buf;
	size_t len, cap;
	_Atomic int paused, resumed;
	pthread_t th;
};

static void *fifo_read(void *arg)
{
	struct fifo_reader *f = arg;
	int fd = open(f->path, O_RDONLY);

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;

		if (f->cap - f->len < 65536) {
			f->cap = f->cap ? 2 * f->cap : 1 << 20;
			f->buf = realloc(f->buf, f->cap);
			if (!f->buf)
				break;
		}
		n = read(fd, f->buf + f->len, f->cap - f->len);
		if (n <= 0)
			break;
		f->len += (size_t)n;
		if (f->len >= NTP_HEADER_LEN && !f->paused) {
			f->paused = 1;
			if (f->close_early)
				break;
			sleep_ms(f->pause_ms);
			f->resumed = 1;
		}
	}
	close(fd);
	return NULL;
}

/* A fifo and its reader, which opens it (the writer's open waits for that),
 * takes the header, then sleeps pause_ms or, with close_early, closes it. */
static void fifo_start(struct fifo_reader *f, const char *name, unsigned pause_ms, int close_early)
{
	memset(f, 0, sizeof(*f));
	tmp_path(f->path, sizeof(f->path), name);
	unlink(f->path);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	f->pause_ms = pause_ms;
	f->close_early = close_early;
	assert_int_equal(pthread_create(&f->th, NULL, fifo_read, f), 0);
}

static void fifo_end(struct fifo_reader *f)
{
	pthread_join(f->th, NULL);
	unlink(f->path);
}

/* Adds `blocks` full blocks with a tick and new totals after each (the
 * data clock a second on), as the pump would; returns the wall ms it took. */
static uint64_t add_blocks(struct ntp_writer *w, unsigned blocks)
{
	uint64_t t0 = mono_ms();
	unsigned rec = 0;

	for (unsigned b = 0; b < blocks; b++) {
		struct ntp_total t = mktotal(0, rec);

		for (unsigned k = 0; k < NTP_BLOCK_RECORDS; k++) {
			struct ntp_record r = mkrec(rec++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
		}
		assert_int_equal(ntp_writer_set_totals(w, &t, 1, (6 + b) * NSEC), 0);
		assert_int_equal(ntp_writer_tick(w, (6 + b) * NSEC), 0);
	}
	return mono_ms() - t0;
}

/*
 * The writer on a fifo whose reader stops for 2.5 s after the header
 * (the pipe holds 64 KiB, a block 278 KB): the adds of 20 blocks (5.6 MB)
 * return without waiting, all while the reader sleeps, and the close waits
 * until the reader took every byte: the bytes of the same calls written
 * without the thread. Without the thread (the last part, and this test
 * before ntp_writer_thread existed) the adds wait for the reader.
 */
static void test_pipe_pause(void **state)
{
	const unsigned blocks = 20;
	struct fifo_reader f;
	struct ntp_writer *w;
	char path[300];
	uint8_t *want;
	size_t want_len;
	uint64_t took, t0, kept = 0, lost = 1;

	(void)state;
	assert_true(blocks * (BLOCK_BYTES + 4096) < NTP_WRITER_QUEUE);
	/* the file's bytes, written in the caller's thread */
	tmp_path(path, sizeof(path), "direct.ntp");
	w = open_writer(path, 0);
	add_blocks(w, blocks);
	assert_int_equal(ntp_writer_close(w, 60 * NSEC), 0);
	want = slurp(path, &want_len);
	unlink(path);

	fifo_start(&f, "pause.fifo", PAUSE_MS, 0);
	w = open_writer(f.path, NTP_WRITER_QUEUE);
	while (!f.paused)
		sleep_ms(1);
	took = add_blocks(w, blocks);
	print_message("20 blocks added in %llu ms while the reader sleeps %u ms\n", (unsigned long long)took,
		      PAUSE_MS);
	assert_true(took < 1000);
	assert_false(f.resumed);	/* every add returned while the reader slept */
	t0 = mono_ms();
	assert_int_equal(ntp_writer_close_count(w, 60 * NSEC, &kept, &lost), 0);
	assert_true(f.resumed);		/* the close waited for the reader */
	print_message("the close waited %llu ms\n", (unsigned long long)(mono_ms() - t0));
	assert_int_equal(kept, blocks * NTP_BLOCK_RECORDS);
	assert_int_equal(lost, 0);
	fifo_end(&f);
	assert_int_equal(f.len, want_len);
	assert_memory_equal(f.buf, want, want_len);
	free(f.buf);

	/* the premise: in the caller's thread the same adds wait */
	fifo_start(&f, "direct.fifo", PAUSE_MS, 0);
	w = open_writer(f.path, 0);
	while (!f.paused)
		sleep_ms(1);
	took = add_blocks(w, blocks);
	assert_true(took >= PAUSE_MS / 2);
	assert_int_equal(ntp_writer_close(w, 60 * NSEC), 0);
	fifo_end(&f);
	assert_int_equal(f.len, want_len);
	assert_memory_equal(f.buf, want, want_len);
	free(f.buf);
	free(want);
}

/* The queue is bounded: with room for two blocks the adds wait for the
 * reader once it is full, and nothing is lost. */
static void test_queue_full_waits(void **state)
{
	struct fifo_reader f;
	struct ntp_writer *w;
	uint64_t took, kept = 0;

	(void)state;
	fifo_start(&f, "full.fifo", PAUSE_MS, 0);
	w = open_writer(f.path, 2 * BLOCK_BYTES);
	while (!f.paused)
		sleep_ms(1);
	took = add_blocks(w, 8);
	assert_true(took >= PAUSE_MS / 2);
	assert_int_equal(ntp_writer_close_count(w, 60 * NSEC, &kept, NULL), 0);
	assert_int_equal(kept, 8 * NTP_BLOCK_RECORDS);
	fifo_end(&f);
	free(f.buf);
}

/* The once-a-second flush reaches the file while the recording goes on: a
 * reader of the growing file gets the records of the last tick (what a
 * live ntprof-top --replay of it shows). */
static void test_tick_reaches_file(void **state)
{
	struct ntp_writer *w;
	struct ntp_reader *r;
	struct ntp_record x;
	char path[300], err[256];
	struct stat st;
	uint64_t t0;
	int got = 0;

	(void)state;
	tmp_path(path, sizeof(path), "live.ntp");
	w = open_writer(path, NTP_WRITER_QUEUE);
	for (unsigned i = 0; i < 10; i++) {
		struct ntp_record one = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &one), 0);
	}
	assert_int_equal(ntp_writer_tick(w, 5 * NSEC + NSEC / 2), 0);	/* not a second yet */
	assert_int_equal(ntp_writer_tick(w, 6 * NSEC), 0);
	t0 = mono_ms();
	while (!stat(path, &st) && st.st_size < (off_t)(NTP_HEADER_LEN + NTP_BLOCK_HDR_LEN + 10 * 272) &&
	       mono_ms() - t0 < 5000)
		sleep_ms(5);
	assert_int_equal(st.st_size, NTP_HEADER_LEN + NTP_BLOCK_HDR_LEN + 10 * 272);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next(r, &x) == 1)
		assert_int_equal(x.seq, got++);
	assert_int_equal(got, 10);
	assert_true(ntp_reader_stats(r)->truncated);	/* no trailer yet */
	ntp_reader_close(r);
	assert_int_equal(ntp_writer_close(w, 7 * NSEC), 0);
	unlink(path);
}

/* A pipe whose reader is gone (SIGPIPE ignored, as a caller may): the
 * thread's failed write is returned by the next add, tick and by close;
 * every record is counted kept or lost. */
static void test_closed_pipe(void **state)
{
	struct fifo_reader f;
	struct ntp_writer *w;
	void (*prev)(int) = signal(SIGPIPE, SIG_IGN);
	uint64_t kept = 1, lost = 0, t0;
	unsigned added = 0;
	int ret = 0;

	(void)state;
	fifo_start(&f, "closed.fifo", 0, 1);
	w = open_writer(f.path, NTP_WRITER_QUEUE);
	fifo_end(&f);	/* the reader took the header and closed */
	t0 = mono_ms();
	while (!ret && mono_ms() - t0 < 5000) {
		struct ntp_record r = mkrec(added++);

		ret = ntp_writer_add(w, &r);
		if (!ret && added % NTP_BLOCK_RECORDS == 0)
			sleep_ms(10);
	}
	assert_int_equal(ret, -EPIPE);
	assert_int_equal(ntp_writer_error(w), -EPIPE);
	assert_int_equal(ntp_writer_tick(w, 100 * NSEC), -EPIPE);
	assert_int_equal(ntp_writer_close_count(w, 100 * NSEC, &kept, &lost), -EPIPE);
	assert_int_equal(kept, 0);
	assert_int_equal(lost, added);
	signal(SIGPIPE, prev);
	free(f.buf);
}

/* A disk that fills up (RLIMIT_FSIZE stands in: test_harden.c): with the
 * thread the same blocks fit, the same bytes are left and the same counts
 * and error come back, at the next call and at close, as without it. */
static void test_full_disk(void **state)
{
	static struct op ops[400];
	const rlim_t limit = 3 * 278528 + 5000;
	uint8_t *buf[2];
	size_t len[2], n;
	unsigned records;
	uint64_t kept[2], lost[2];
	struct rlimit old, lim;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);

	(void)state;
	n = make_script(ops, sizeof(ops) / sizeof(ops[0]), &records);
	assert_true(records > 8 * NTP_BLOCK_RECORDS);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	for (int i = 0; i < 2; i++) {
		char path[300], name[32];
		struct ntp_writer *w;
		unsigned added;
		int ret;

		snprintf(name, sizeof(name), "full%d.ntp", i);
		tmp_path(path, sizeof(path), name);
		w = open_writer(path, i ? NTP_WRITER_QUEUE : 0);
		lim = old;
		lim.rlim_cur = limit;
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
		ret = play(w, ops, n, &added);
		if (!ret) {	/* the thread may not have said it yet */
			uint64_t t0 = mono_ms();

			while (!(ret = ntp_writer_tick(w, ops[n - 1].t)) && mono_ms() - t0 < 5000)
				sleep_ms(5);
		}
		assert_int_equal(ret, -EFBIG);
		assert_int_equal(ntp_writer_close_count(w, ops[n - 1].t + NSEC, &kept[i], &lost[i]), -EFBIG);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
		assert_int_equal(kept[i] + lost[i], added);
		buf[i] = slurp(path, &len[i]);
		unlink(path);
	}
	signal(SIGXFSZ, prev);
	/* the file: the blocks that fit, the same with and without the thread */
	assert_int_equal(len[1], len[0]);
	assert_memory_equal(buf[1], buf[0], len[0]);
	assert_int_equal(kept[1], kept[0]);
	assert_true(kept[0] > 0);
	for (int i = 0; i < 2; i++)
		free(buf[i]);
}

/* The thread starts before the first record, with room for two blocks or
 * more; a recording without records is whole either way. */
static void test_thread_rules(void **state)
{
	struct ntp_record one = mkrec(1);
	struct ntp_writer *w;
	struct ntp_reader *r;
	char path[300], err[256];

	(void)state;
	tmp_path(path, sizeof(path), "rules.ntp");
	w = open_writer(path, 0);
	assert_int_equal(ntp_writer_thread(w, 2 * BLOCK_BYTES - 1), -EINVAL);
	assert_int_equal(ntp_writer_add(w, &one), 0);
	assert_int_equal(ntp_writer_thread(w, NTP_WRITER_QUEUE), -EINVAL);
	assert_int_equal(ntp_writer_close(w, 9 * NSEC), 0);

	w = open_writer(path, NTP_WRITER_QUEUE);
	assert_int_equal(ntp_writer_thread(w, NTP_WRITER_QUEUE), -EINVAL);	/* once */
	assert_int_equal(ntp_writer_close(w, 9 * NSEC), 0);
	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	assert_int_equal(ntp_reader_next(r, &one), 0);
	assert_false(ntp_reader_stats(r)->truncated);
	assert_int_equal(ntp_reader_stats(r)->end_mono_ns, 9 * NSEC);
	ntp_reader_close(r);
	unlink(path);
}

/* ---- records lost before the recording: the lost block (type 4) ---- */

/* The types of the blocks of a file in buf, in order; their count. */
static size_t block_types(const uint8_t *buf, size_t len, uint16_t *types, size_t max, size_t *ends)
{
	uint32_t hlen, blen;
	size_t off, n = 0;

	memcpy(&hlen, buf + 12, 4);
	for (off = hlen; off + NTP_BLOCK_HDR_LEN <= len && n < max; n++) {
		memcpy(&types[n], buf + off + 4, 2);
		memcpy(&blen, buf + off + 8, 4);
		off += NTP_BLOCK_HDR_LEN + blen;
		ends[n] = off;
	}
	return n;
}

/* The calls of a recording that lost records before it: at a flush and at
 * the close, after the totals. */
static void lost_calls(struct ntp_writer *w, int with_lost)
{
	struct ntp_total t = mktotal(0, 100);

	for (unsigned i = 0; i < 3; i++) {
		struct ntp_record r = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &r), 0);
	}
	assert_int_equal(ntp_writer_set_totals(w, &t, 1, 6 * NSEC), 0);
	if (with_lost)
		assert_int_equal(ntp_writer_set_lost(w, 7, 6 * NSEC), 0);
	assert_int_equal(ntp_writer_tick(w, 6 * NSEC), 0);
	if (with_lost)	/* unchanged: no second block */
		assert_int_equal(ntp_writer_set_lost(w, 7, 6 * NSEC + 1), 0);
	assert_int_equal(ntp_writer_tick(w, 7 * NSEC), 0);
	for (unsigned i = 3; i < 5; i++) {
		struct ntp_record r = mkrec(i);

		assert_int_equal(ntp_writer_add(w, &r), 0);
	}
	if (with_lost)
		assert_int_equal(ntp_writer_set_lost(w, 12, 7 * NSEC + 5), 0);
	assert_int_equal(ntp_writer_close(w, 8 * NSEC), 0);
}

static uint64_t read_lost(const uint8_t *buf, size_t len, uint64_t *records, int *truncated)
{
	char err[256];
	struct ntp_reader *r = ntp_reader_open_mem(buf, len, "mem", err, sizeof(err));
	const struct ntp_record *recs;
	uint64_t lost;
	size_t n;

	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n))
		;
	lost = ntp_reader_stats(r)->lost_before;
	*records = ntp_reader_stats(r)->records;
	*truncated = ntp_reader_stats(r)->truncated;
	assert_int_equal(ntp_reader_stats(r)->corrupt, 0);
	assert_int_equal(ntp_reader_stats(r)->skipped_blocks, 0);
	ntp_reader_close(r);
	return lost;
}

/* The count written is the count read, the latest one; the blocks come
 * after the totals of their flush, before the trailer; with the thread the
 * bytes are the same; a file cut after a lost block keeps its count; and a
 * recording that lost nothing has no lost block (its bytes as before). */
static void test_lost_block(void **state)
{
	const uint16_t want[] = { NTP_BLOCK_RECORDS_T, NTP_BLOCK_TOTALS, NTP_BLOCK_LOST,
				  NTP_BLOCK_RECORDS_T, NTP_BLOCK_LOST, NTP_BLOCK_END };
	char a[256], b[256], c[256];
	uint8_t *fa, *fb, *fc;
	size_t la, lb, lc, nb, ends[16];
	uint16_t types[16];
	uint64_t records, lost, as_of;
	int cut;
	struct ntp_writer *w;

	(void)state;
	tmp_path(a, sizeof(a), "nolost.ntp");
	tmp_path(b, sizeof(b), "lost.ntp");
	tmp_path(c, sizeof(c), "lost-thread.ntp");
	lost_calls(open_writer(a, 0), 0);
	lost_calls(open_writer(b, 0), 1);
	lost_calls(open_writer(c, NTP_WRITER_QUEUE), 1);
	fa = slurp(a, &la);
	fb = slurp(b, &lb);
	fc = slurp(c, &lc);
	assert_int_equal(lb, lc);
	assert_memory_equal(fb, fc, lb);

	nb = block_types(fb, lb, types, 16, ends);
	assert_int_equal(nb, 6);
	assert_memory_equal(types, want, sizeof(want));
	assert_int_equal(ends[nb - 1], lb);
	/* the first lost block's payload: as of, the count */
	memcpy(&as_of, fb + ends[1] + NTP_BLOCK_HDR_LEN, 8);
	memcpy(&lost, fb + ends[1] + NTP_BLOCK_HDR_LEN + 8, 8);
	assert_int_equal(as_of, 6 * NSEC);
	assert_int_equal(lost, 7);
	assert_int_equal(ends[2] - ends[1], NTP_BLOCK_HDR_LEN + NTP_LOST_HDR);

	/* without lost blocks: the same file less them */
	assert_int_equal(la, lb - 2 * (NTP_BLOCK_HDR_LEN + NTP_LOST_HDR));
	assert_int_equal(read_lost(fa, la, &records, &cut), 0);
	assert_int_equal(records, 5);

	assert_int_equal(read_lost(fb, lb, &records, &cut), 12);
	assert_int_equal(records, 5);
	assert_int_equal(cut, 0);
	/* cut short: the count of the last whole lost block */
	assert_int_equal(read_lost(fb, ends[2], &records, &cut), 7);
	assert_int_equal(records, 3);
	assert_int_equal(cut, 1);
	assert_int_equal(read_lost(fb, ends[4] - 3, &records, &cut), 7);
	assert_int_equal(records, 5);
	assert_int_equal(cut, 1);
	assert_int_equal(read_lost(fb, ends[4], &records, &cut), 12);
	assert_int_equal(cut, 1);
	assert_int_equal(read_lost(fb, ends[1], &records, &cut), 0);

	/* a count set back to 0 (nothing lost yet) writes nothing either */
	w = open_writer(c, 0);
	assert_int_equal(ntp_writer_set_lost(w, 0, 6 * NSEC), 0);
	assert_int_equal(ntp_writer_close(w, 8 * NSEC), 0);
	free(fc);
	fc = slurp(c, &lc);
	assert_int_equal(block_types(fc, lc, types, 16, ends), 1);
	assert_int_equal(types[0], NTP_BLOCK_END);
	unlink(a);
	unlink(b);
	unlink(c);
	free(fa);
	free(fb);
	free(fc);
}

/* ---- a fifo whose reader reads only while the test lets it ---- */

struct gated_reader {
	char path[300];
	_Atomic int go, done;
	_Atomic size_t len;
	pthread_t th;
};

static void *gated_read(void *arg)
{
	struct gated_reader *g = arg;
	int fd = open(g->path, O_RDONLY);
	static uint8_t buf[65536];

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;

		while (!g->go)
			sleep_ms(1);
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		g->len += (size_t)n;
	}
	close(fd);
	g->done = 1;
	return NULL;
}

/*
 * The memory bound counts the buffers kept for reuse: a stall of full
 * blocks leaves the pool full, and a second stall of flushes (copies of
 * fewer records) must not come on top of it. The writer holds at most its
 * queue and one block throughout. Before the bound counted the pool, the
 * second stall held the pool (4 blocks), the copies (3) and the front's
 * block: 8 blocks against 5.
 */
static void test_memory_bound(void **state)
{
	const size_t max = 4 * BLOCK_BYTES + 4096, bound = max + BLOCK_BYTES;
	struct gated_reader g;
	struct ntp_writer *w;
	uint64_t kept = 0, lost = 1, t0;
	unsigned rec = 0;

	(void)state;
	memset(&g, 0, sizeof(g));
	tmp_path(g.path, sizeof(g.path), "gate.fifo");
	unlink(g.path);
	assert_int_equal(mkfifo(g.path, 0600), 0);
	assert_int_equal(pthread_create(&g.th, NULL, gated_read, &g), 0);
	w = open_writer(g.path, max);
	/* stall 1: the queue full of full blocks (the pipe takes a part of the first) */
	for (unsigned b = 0; b < 4; b++)
		for (unsigned k = 0; k < NTP_BLOCK_RECORDS; k++) {
			struct ntp_record r = mkrec(rec++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
			assert_true(ntp_writer_held(w) <= bound);
		}
	/* the file drains: every buffer is back in the pool */
	g.go = 1;
	t0 = mono_ms();
	while (ntp_writer_held(w) > 5 * BLOCK_BYTES && mono_ms() - t0 < 20000)
		sleep_ms(1);
	assert_true(ntp_writer_held(w) <= 5 * BLOCK_BYTES);
	g.go = 0;
	/* stall 2: three flushes of a block less one record each */
	for (unsigned f = 0; f < 3; f++) {
		for (unsigned k = 0; k < NTP_BLOCK_RECORDS - 1; k++) {
			struct ntp_record r = mkrec(rec++);

			assert_int_equal(ntp_writer_add(w, &r), 0);
		}
		assert_int_equal(ntp_writer_flush(w, (6 + f) * NSEC), 0);
		print_message("flush %u: the writer holds %zu bytes (bound %zu)\n", f, ntp_writer_held(w), bound);
		assert_true(ntp_writer_held(w) <= bound);
	}
	g.go = 1;
	assert_int_equal(ntp_writer_close_count(w, 60 * NSEC, &kept, &lost), 0);
	assert_int_equal(kept, rec);
	assert_int_equal(lost, 0);
	pthread_join(g.th, NULL);
	assert_true(g.done);
	unlink(g.path);
}

/*
 * nowait (ntprof-top's w, src/top/source.c): on a fifo whose reader sleeps,
 * no call waits. Once the queue is full, the add after a full block returns
 * -EAGAIN without taking its record, a flush leaves its records pending
 * (not lost), and the full block dropped is counted lost in the file's lost
 * block; the file holds every other record, and the close waits as before.
 */
static void test_nowait_drops(void **state)
{
	const struct ntp_record *recs;
	struct fifo_reader f;
	struct ntp_writer *w;
	struct ntp_reader *r;
	struct ntp_record rr;
	uint64_t t0, kept = 0, lost = 1, nrec = 0;
	unsigned i = 0;
	char err[256];
	size_t n;
	int ret;

	(void)state;
	fifo_start(&f, "nowait.fifo", PAUSE_MS, 0);
	w = open_writer(f.path, NTP_WRITER_QUEUE);
	ntp_writer_nowait(w);
	while (!f.paused)
		sleep_ms(1);
	t0 = mono_ms();
	for (;;) {
		rr = mkrec(i);
		if ((ret = ntp_writer_add(w, &rr)) == -EAGAIN)
			break;
		assert_int_equal(ret, 0);
		i++;
	}
	print_message("-EAGAIN after %u records (%u blocks)\n", i, i / NTP_BLOCK_RECORDS);
	/* the queue's blocks, the one being written, the pending one */
	assert_int_equal(i % NTP_BLOCK_RECORDS, 0);
	assert_true(i >= NTP_WRITER_QUEUE / BLOCK_BYTES * NTP_BLOCK_RECORDS);
	assert_true(i <= (NTP_WRITER_QUEUE / BLOCK_BYTES + 3) * NTP_BLOCK_RECORDS);
	assert_int_equal(ntp_writer_records(w), i);
	/* a flush without room: no wait, no error, the full block still pending */
	assert_int_equal(ntp_writer_flush(w, 7 * NSEC), 0);
	assert_int_equal(ntp_writer_add(w, &rr), -EAGAIN);
	assert_int_equal(ntp_writer_drop_block(w, 7 * NSEC), NTP_BLOCK_RECORDS);
	assert_int_equal(ntp_writer_drop_block(w, 7 * NSEC), 0);
	assert_int_equal(ntp_writer_dropped(w), NTP_BLOCK_RECORDS);
	assert_int_equal(ntp_writer_add(w, &rr), 0);
	i++;
	for (unsigned k = 0; k < 10; k++, i++) {
		rr = mkrec(i);
		assert_int_equal(ntp_writer_add(w, &rr), 0);
	}
	assert_int_equal(ntp_writer_flush(w, 8 * NSEC), 0);	/* no room: pending */
	assert_int_equal(ntp_writer_records(w), i - NTP_BLOCK_RECORDS);
	assert_true(mono_ms() - t0 < PAUSE_MS / 2);
	assert_false(f.resumed);
	assert_int_equal(ntp_writer_close_count(w, 9 * NSEC, &kept, &lost), 0);
	assert_true(f.resumed);		/* the close waited for the reader */
	fifo_end(&f);
	assert_int_equal(kept, i - NTP_BLOCK_RECORDS);
	assert_int_equal(lost, 0);
	r = ntp_reader_open_mem(f.buf, f.len, "nowait.ntp", err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n) > 0)
		nrec += n;
	assert_int_equal(nrec, kept);
	assert_int_equal(ntp_reader_stats(r)->dropped, 0);
	assert_int_equal(ntp_reader_stats(r)->lost_before, NTP_BLOCK_RECORDS);
	ntp_reader_close(r);
	free(f.buf);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_pipe_pause),
		cmocka_unit_test(test_queue_full_waits),
		cmocka_unit_test(test_tick_reaches_file),
		cmocka_unit_test(test_closed_pipe),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_thread_rules),
		cmocka_unit_test(test_lost_block),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_nowait_drops),
	};

	return cmocka_run_group_tests_name("ntpfile_writer", tests, setup, teardown);
}
