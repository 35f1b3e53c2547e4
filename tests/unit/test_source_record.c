// SPDX-License-Identifier: GPL-2.0
/*
 * test_source_record.c - ntprof-top's `w` while the recording's file
 * stalls (src/top/source.c, docs/recording.md "Files"): a replay read as
 * fast as it goes, recorded into a FIFO whose reader takes nothing for a
 * while. The calls the screen makes (take the intervals, the recording's
 * state, the messages) never wait for the file; the replay waits for it
 * and the file gets every record; a q meanwhile stops the replay at once.
 * (ntprof-top live drops the blocks that do not fit instead: the writer's
 * side of that is test_ntpfile_writer.c's test_nowait_drops.)
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
#include <sys/stat.h>
#include <stdatomic.h>
#include "collector/collector.h"
#include "collector/pump_live.h"
#include "core/clock.h"
#include "core/store/ntpfile.h"
#include "core/pump/pump.h"
#include "top/source.h"

/*
 * The test's link wraps ntp_writer_wait_room (the Makefile's
 * -Wl,--wrap=ntp_writer_wait_room for this program): with delay_wait set,
 * the source thread, which has let go of s->lock on its way into the wait,
 * stops there a while, as a preempted thread would, and a w comes meanwhile.
 */
static atomic_int delay_wait, entered;
static _Atomic uint64_t held_at;	/* the records added before the one the wait holds */
int __real_ntp_writer_wait_room(struct ntp_writer *w);
int __wrap_ntp_writer_wait_room(struct ntp_writer *w);
int __wrap_ntp_writer_wait_room(struct ntp_writer *w)
{
	if (atomic_load(&delay_wait) && !atomic_load(&entered)) {
		atomic_store(&held_at, ntp_writer_records(w));
		atomic_store(&entered, 1);
		usleep(1500 * 1000);
	}
	return __real_ntp_writer_wait_room(w);
}

#define NSEC 1000000000ull

/*
 * A stand-in for the live collector (the unit tests link no BPF; source.c
 * takes it by weak references): each poll delivers a burst of records
 * stamped now, more than a stalled file takes.
 */
static int fake_collector;
struct ntp_collector *ntp_collector_open(const struct ntp_collector_opts *o, char *errbuf, size_t errlen)
{
	(void)o, (void)errbuf, (void)errlen;
	return (struct ntp_collector *)&fake_collector;
}

int ntp_collector_totals(struct ntp_collector *c, struct ntp_total *out, size_t max)
{
	(void)c, (void)out, (void)max;
	return 0;
}

uint64_t ntp_collector_lost(struct ntp_collector *c)
{
	(void)c;
	return 0;
}

int ntp_collector_set_sampling(struct ntp_collector *c, uint32_t n)
{
	(void)c, (void)n;
	return 0;
}

void ntp_collector_close(struct ntp_collector *c)
{
	(void)c;
}

void ntp_live_file_info(struct ntp_file_info *fi, const struct ntp_collector_opts *co, uint64_t start_mono_ns,
			const char *tool)
{
	(void)co;
	memset(fi, 0, sizeof(*fi));
	fi->role = NTP_ROLE_HOST;
	fi->transport = NTP_TRANSPORT_TCP;
	fi->sampling = 1;
	fi->start_mono_ns = start_mono_ns;
	fi->start_real_ns = 1700000000ull * NSEC;
	snprintf(fi->hostname, sizeof(fi->hostname), "h");
	snprintf(fi->tool_version, sizeof(fi->tool_version), "%s", tool);
}

static atomic_uint_fast64_t live_sent;

int ntp_live_pull(void *ctx, struct ntp_pump *p, uint64_t until_ns, uint64_t *reached)
{
	struct ntp_live_source *ls = ctx;
	uint64_t now;
	int n;

	(void)until_ns;
	if (ls->before_poll && (n = ls->before_poll(ls->ctx, p)))
		return n;
	usleep(1000);
	now = ntp_mono_ns();
	for (unsigned i = 0; i < 2000; i++) {
		struct ntp_record r;

		memset(&r, 0, sizeof(r));
		for (int k = 0; k < NTP_TS_COUNT; k++)
			r.ts[k] = now - 100000 + (uint64_t)k * 1000;
		r.ts_valid = (1u << NTP_TS_COUNT) - 1;
		r.seq = (uint32_t)atomic_fetch_add(&live_sent, 1);
		r.len = 4096;
		r.nsid = 1;
		r.qid = 1;
		r.cid = (uint16_t)i;
		r.opcode = 2;
		r.side = NTP_SIDE_HOST;
		r.transport = NTP_TRANSPORT_TCP;
		snprintf(r.dev, sizeof(r.dev), "nvme0n1");
		ntp_pump_record(p, &r);
	}
	*reached = now;
	return 1;
}
/* 20 s of records at 10000 a second: five times what the writer's queue
 * (NTP_WRITER_QUEUE, 30 blocks) and the FIFO (64 KiB) hold */
#define NREC 200000u

static char tmpdir[] = "/tmp/test_source_record.XXXXXX";

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void on_alarm(int sig)
{
	static const char msg[] = "the screen's calls waited for the recording's stalled file\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static void make_replay(const char *path)
{
	struct ntp_file_info info;
	struct ntp_writer *w;
	char err[256];

	memset(&info, 0, sizeof(info));
	info.role = NTP_ROLE_HOST;
	info.transport = NTP_TRANSPORT_TCP;
	info.sampling = 1;
	info.start_mono_ns = NSEC;
	info.start_real_ns = 1700000000ull * NSEC;
	snprintf(info.hostname, sizeof(info.hostname), "h");
	w = ntp_writer_open(path, &info, err, sizeof(err));
	assert_non_null(w);
	for (unsigned i = 0; i < NREC; i++) {
		struct ntp_record r;
		uint64_t t = NSEC + (uint64_t)i * (NSEC / 10000);

		memset(&r, 0, sizeof(r));
		for (int k = 0; k < NTP_TS_COUNT; k++)
			r.ts[k] = t + (uint64_t)k * 1000;
		r.ts_valid = (1u << NTP_TS_COUNT) - 1;
		r.seq = i;
		r.len = 4096;
		r.nsid = 1;
		r.qid = 1;
		r.cid = (uint16_t)i;
		r.opcode = 2;
		r.side = NTP_SIDE_HOST;
		r.transport = NTP_TRANSPORT_TCP;
		snprintf(r.dev, sizeof(r.dev), "nvme0n1");
		assert_int_equal(ntp_writer_add(w, &r), 0);
		if (i % 10000 == 9999)
			assert_int_equal(ntp_writer_tick(w, t), 0);
	}
	assert_int_equal(ntp_writer_close(w, NSEC + (uint64_t)NREC * (NSEC / 10000)), 0);
}

struct drain {
	int fd;
	char path[300], fifo[300];
	uint64_t bytes;
	pthread_t th;
};

/* The FIFO's reader, once let go: everything into a file */
static void *drain_main(void *arg)
{
	struct drain *d = arg;
	int out = open(d->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char buf[65536];
	ssize_t n;

	assert_true(out >= 0);
	while ((n = read(d->fd, buf, sizeof(buf))) > 0) {
		assert_int_equal(write(out, buf, (size_t)n), n);
		d->bytes += (uint64_t)n;
	}
	close(out);
	return NULL;
}

/* A FIFO whose reader takes nothing until drain_start */
static void stalled_fifo(struct drain *d, const char *name)
{
	char fifo[300];

	snprintf(fifo, sizeof(fifo), "%s/%s.fifo", tmpdir, name);
	snprintf(d->path, sizeof(d->path), "%s/%s.ntp", tmpdir, name);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	d->fd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(d->fd >= 0);
	snprintf(d->fifo, sizeof(d->fifo), "%s", fifo);
}

static void drain_start(struct drain *d)
{
	fcntl(d->fd, F_SETFL, fcntl(d->fd, F_GETFL) & ~O_NONBLOCK);
	assert_int_equal(pthread_create(&d->th, NULL, drain_main, d), 0);
}

static void drain_end(struct drain *d)
{
	pthread_join(d->th, NULL);
	close(d->fd);
	unlink(d->fifo);
}

static void open_replay(struct top_source *s, char **files)
{
	struct top_source_opts o;
	char err[4096 + 256];

	memset(&o, 0, sizeof(o));
	ntp_capture_defaults(&o.cap);
	o.replay = files[0];
	o.replay_files = files;
	o.n_replay = 1;
	o.speed = 0;
	o.interval_ms = 1000;
	assert_int_equal(top_source_open(s, &o, err, sizeof(err)), 0);
}

/* The screen's calls for ms (or until the replay's last interval, ms 0):
 * the intervals taken; *slowest: the slowest call's ms; *said: messages
 * containing `want` */
static int screen(struct top_source *s, uint64_t *seen, unsigned ms, uint64_t *slowest, const char *want,
		  int *said)
{
	static struct ntp_snapshot snaps[TOP_OUTBOX];
	char msg[TOP_MSG_LEN], path[600];
	uint64_t start = mono_ms(), t0, rec;
	int intervals = 0;

	for (;;) {
		int got, ended = top_source_read_ended(s);

		t0 = mono_ms();
		got = top_source_take(s, seen, snaps, TOP_OUTBOX);
		top_source_recording(s, path, sizeof(path), &rec);
		while (top_source_message(s, msg, sizeof(msg)))
			*said += strstr(msg, want) != NULL;
		if (mono_ms() - t0 > *slowest)
			*slowest = mono_ms() - t0;
		intervals += got;
		if (ms ? mono_ms() - start >= ms : ended && !got && *seen >= 20)
			return intervals;
		usleep(2000);
	}
}

/* The records in a file, and its count of records lost before it */
static uint64_t file_records(const char *path, uint64_t *lost)
{
	const struct ntp_record *recs;
	struct ntp_reader *r;
	char err[4096 + 256];
	uint64_t nrec = 0;
	size_t n;

	r = ntp_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n) > 0)
		nrec += n;
	assert_int_equal(ntp_reader_stats(r)->dropped, 0);
	*lost = ntp_reader_stats(r)->lost_before;
	ntp_reader_close(r);
	return nrec;
}

/* A replay recorded into a FIFO that takes nothing for a while: the replay
 * waits for the file, the screen does not; then every record is in it. */
static void test_stalled_file(void **state)
{
	char replay[300], err[4096 + 256];
	char *files[1] = { replay };
	static struct top_source s;
	struct drain d = { 0 };
	uint64_t seen = 0, slowest = 0, lost = 1;
	int said = 0, before;
	int64_t written;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	make_replay(replay);
	stalled_fifo(&d, "stall");
	open_replay(&s, files);
	assert_int_equal(top_source_record_start(&s, d.fifo, err, sizeof(err)), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	assert_int_equal(top_source_start(&s), 0);
	/* the file takes nothing: the replay (20 s of records, read as fast as
	 * it goes) is held at what the queue and the FIFO hold, 3 s or so */
	before = screen(&s, &seen, 1500, &slowest, "the file lags", &said);
	print_message("%d intervals while the file stalls, the slowest of the screen's calls %llu ms\n", before,
		      (unsigned long long)slowest);
	assert_true(before < 10);
	assert_false(top_source_read_ended(&s));
	drain_start(&d);
	screen(&s, &seen, 0, &slowest, "the file lags", &said);
	print_message("%llu intervals in all, the slowest of the screen's calls %llu ms\n", (unsigned long long)seen,
		      (unsigned long long)slowest);
	assert_true(slowest < 1000);
	assert_int_equal(said, 0);
	written = top_source_record_stop(&s);
	alarm(0);
	drain_end(&d);
	top_source_close(&s);
	assert_int_equal(written, NREC);
	assert_int_equal(file_records(d.path, &lost), NREC);
	assert_int_equal(lost, 0);
	unlink(d.path);
	unlink(replay);
}

/* q while the replay waits for the file: the source thread stops at once
 * (the block it waited with is dropped, counted lost in the file); the
 * close then waits for the file as ntprof record's does. */
static void test_quit_while_stalled(void **state)
{
	char replay[300], err[4096 + 256], msg[TOP_MSG_LEN];
	char *files[1] = { replay };
	static struct top_source s;
	struct drain d = { 0 };
	uint64_t seen = 0, slowest = 0, lost = 0, t0, nrec;
	int said = 0;
	int64_t written;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	make_replay(replay);
	stalled_fifo(&d, "quit");
	open_replay(&s, files);
	assert_int_equal(top_source_record_start(&s, d.fifo, err, sizeof(err)), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	assert_int_equal(top_source_start(&s), 0);
	screen(&s, &seen, 500, &slowest, "the file lags", &said);
	t0 = mono_ms();
	top_source_stop(&s);
	print_message("q took %llu ms\n", (unsigned long long)(mono_ms() - t0));
	assert_true(mono_ms() - t0 < 1000);
	drain_start(&d);
	written = top_source_record_stop(&s);
	alarm(0);
	drain_end(&d);
	while (top_source_message(&s, msg, sizeof(msg)))
		said += strstr(msg, "records were dropped while the file lagged") != NULL;
	top_source_close(&s);
	nrec = file_records(d.path, &lost);
	print_message("the file: %llu records, %llu lost\n", (unsigned long long)nrec, (unsigned long long)lost);
	assert_int_equal(nrec, (uint64_t)written);
	assert_true(nrec < NREC);
	/* q found the replay waiting: the block it held is dropped, and said */
	assert_true(lost > 0);
	assert_int_equal(said, 1);
	unlink(d.path);
	unlink(replay);
}

/* w while the replay is on its way into the wait for the file, s->lock
 * already let go of: the close waits until the replay is back under the
 * lock (else it frees the writer the replay then waits on: ASan's
 * heap-use-after-free). The full block is written by the close; the record
 * the replay held, past it, is added if room came, else counted lost and
 * said (not dropped with the block, not waited for again). */
static void test_stop_while_waiting(void **state)
{
	char replay[300], err[4096 + 256], msg[TOP_MSG_LEN];
	char *files[1] = { replay };
	static struct top_source s;
	struct drain d = { 0 };
	uint64_t lost = 0, nrec;
	int said = 0;
	int64_t written;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	make_replay(replay);
	stalled_fifo(&d, "stop");
	open_replay(&s, files);
	assert_int_equal(top_source_record_start(&s, d.fifo, err, sizeof(err)), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	atomic_store(&entered, 0);
	atomic_store(&delay_wait, 1);
	assert_int_equal(top_source_start(&s), 0);
	while (!atomic_load(&entered))
		usleep(1000);
	drain_start(&d);
	written = top_source_record_stop(&s);	/* w */
	atomic_store(&delay_wait, 0);
	alarm(0);
	while (top_source_message(&s, msg, sizeof(msg)))
		said += strstr(msg, "records were dropped while the file lagged") != NULL;
	top_source_close(&s);
	drain_end(&d);
	nrec = file_records(d.path, &lost);
	print_message("the file: %llu records, %llu lost\n", (unsigned long long)nrec, (unsigned long long)lost);
	assert_true(written > 0);
	assert_int_equal(nrec, (uint64_t)written);
	/* the record the replay held is in the file (room came before the
	 * close took the lock) or counted lost and said; those before it are
	 * all in the file */
	assert_true(nrec >= atomic_load(&held_at));
	assert_true(nrec + lost >= atomic_load(&held_at) + 1);
	assert_int_equal(said, lost > 0);
	unlink(d.path);
	unlink(replay);
}

/* A write error (the FIFO's reader gone: EPIPE) while the replay waits for
 * the file and a w comes: the recording stops on that error, the stop says
 * it with the records kept, and the w gets the error itself,
 * not "Bad file descriptor" (the writer was closed under it). */
static void test_error_while_waiting(void **state)
{
	char replay[300], err[4096 + 256], msg[TOP_MSG_LEN];
	char *files[1] = { replay };
	static struct top_source s;
	struct drain d = { 0 };
	int stopped = 0;
	int64_t ret;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	make_replay(replay);
	stalled_fifo(&d, "error");
	open_replay(&s, files);
	assert_int_equal(top_source_record_start(&s, d.fifo, err, sizeof(err)), 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(30);
	atomic_store(&entered, 0);
	atomic_store(&delay_wait, 1);
	assert_int_equal(top_source_start(&s), 0);
	while (!atomic_load(&entered))
		usleep(1000);
	close(d.fd);		/* the writer's blocked write fails: EPIPE */
	ret = top_source_record_stop(&s);	/* w */
	atomic_store(&delay_wait, 0);
	alarm(0);
	while (top_source_message(&s, msg, sizeof(msg)))
		stopped += strstr(msg, "recording stopped: ") && strstr(msg, strerror(EPIPE)) &&
			   strstr(msg, "records kept");
	top_source_close(&s);
	signal(SIGPIPE, SIG_DFL);
	print_message("w returned %lld\n", (long long)ret);
	assert_int_equal(ret, -EPIPE);
	assert_int_equal(stopped, 1);
	unlink(d.fifo);
	unlink(replay);
}

/* Live, the file stalled: the blocks that find its queue full are dropped
 * (the screen's calls never wait), the status line says so once, the stop
 * says how many, and the file counts them lost (docs/recording.md). */
static void test_live_drops(void **state)
{
	char err[4096 + 256], msg[TOP_MSG_LEN];
	static struct top_source s;
	struct top_source_opts o;
	struct drain d = { 0 };
	uint64_t seen = 0, slowest = 0, lost = 0, nrec;
	int lags = 0, said = 0;
	int64_t written;

	(void)state;
	memset(&o, 0, sizeof(o));
	ntp_capture_defaults(&o.cap);
	o.interval_ms = 1000;
	assert_int_equal(top_source_open(&s, &o, err, sizeof(err)), 0);
	assert_non_null(s.live);
	stalled_fifo(&d, "live");
	assert_int_equal(top_source_record_start(&s, d.fifo, err, sizeof(err)), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	assert_int_equal(top_source_start(&s), 0);
	screen(&s, &seen, 1500, &slowest, "the file lags", &lags);
	print_message("the slowest of the screen's calls %llu ms, %llu records sent\n", (unsigned long long)slowest,
		      (unsigned long long)atomic_load(&live_sent));
	assert_true(slowest < 1000);
	assert_int_equal(lags, 1);	/* once a recording */
	drain_start(&d);
	written = top_source_record_stop(&s);
	alarm(0);
	while (top_source_message(&s, msg, sizeof(msg)))
		said += strstr(msg, "records were dropped while the file lagged") != NULL;
	top_source_close(&s);
	drain_end(&d);
	nrec = file_records(d.path, &lost);
	print_message("the file: %llu records, %llu lost\n", (unsigned long long)nrec, (unsigned long long)lost);
	assert_int_equal(nrec, (uint64_t)written);
	assert_true(lost > 0);
	assert_int_equal(lost % NTP_BLOCK_RECORDS, 0);	/* whole blocks dropped */
	assert_int_equal(said, 1);
	unlink(d.path);
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

/* A note comes after the intervals published before it: "replay ended" is
 * said once the last interval is published, so a printer that has shown
 * one interval fewer does not get it yet (run_batch: on a terminal or a
 * file holding both stdout and stderr, the note follows the last interval
 * whatever moment the printer looks). */
static void test_message_after(void **state)
{
	char replay[300], msg[TOP_MSG_LEN];
	char *files[1] = { replay };
	static struct top_source s;
	uint64_t n;
	int ended = 0;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	make_replay(replay);
	open_replay(&s, files);
	signal(SIGALRM, on_alarm);
	alarm(30);
	assert_int_equal(top_source_start(&s), 0);
	while (!atomic_load(&s.done))
		usleep(1000);
	alarm(0);
	n = s.published;	/* the thread has ended */
	assert_true(n >= 2);
	while (top_source_message_after(&s, n - 1, msg, sizeof(msg)))
		ended += strstr(msg, "replay ended") != NULL;
	assert_int_equal(ended, 0);
	assert_int_equal(top_source_message_after(&s, n, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "replay ended"));
	assert_int_equal(top_source_message(&s, msg, sizeof(msg)), 0);
	top_source_close(&s);
	unlink(replay);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalled_file),
		cmocka_unit_test(test_quit_while_stalled),
		cmocka_unit_test(test_stop_while_waiting),
		cmocka_unit_test(test_error_while_waiting),
		cmocka_unit_test(test_live_drops),
		cmocka_unit_test(test_message_after),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
