// SPDX-License-Identifier: GPL-2.0
/*
 * test_source_record.c - ntprof-top's `w` while the recording's file
 * stalls (src/top/source.c, docs/recording.md "Files"): a replay read as
 * fast as it goes, recorded into a FIFO whose reader takes nothing until
 * the replay ended. The calls the screen makes (take the intervals, the
 * recording's state, the messages) never wait for the file, every interval
 * is published, the records that did not fit the writer's queue are said
 * and counted lost in the file, and the file holds the others.
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
#include "core/ntpfile.h"
#include "top/source.h"

#define NSEC 1000000000ull
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
	char path[300];
	uint64_t bytes;
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

static void test_stalled_file(void **state)
{
	char replay[300], fifo[300], err[4096 + 256], msg[TOP_MSG_LEN], path[600];
	char *files[1] = { replay };
	static struct ntp_snapshot snaps[TOP_OUTBOX];
	struct top_source_opts o;
	static struct top_source s;
	struct drain d = { 0 };
	struct ntp_reader *r;
	const struct ntp_record *recs;
	pthread_t th;
	uint64_t seen = 0, rec = 0, t0, slowest = 0, nrec = 0;
	int intervals = 0, said = 0, flags;
	int64_t written;
	size_t n;

	(void)state;
	snprintf(replay, sizeof(replay), "%s/replay.ntp", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/rec.fifo", tmpdir);
	snprintf(d.path, sizeof(d.path), "%s/got.ntp", tmpdir);
	make_replay(replay);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	d.fd = open(fifo, O_RDONLY | O_NONBLOCK);	/* a reader that takes nothing yet */
	assert_true(d.fd >= 0);

	memset(&o, 0, sizeof(o));
	ntp_capture_defaults(&o.cap);
	o.replay = replay;
	o.replay_files = files;
	o.n_replay = 1;
	o.speed = 0;
	o.interval_ms = 1000;
	assert_int_equal(top_source_open(&s, &o, err, sizeof(err)), 0);
	assert_int_equal(top_source_record_start(&s, fifo, err, sizeof(err)), 0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	assert_int_equal(top_source_start(&s), 0);
	/* the screen's loop, until the replay's last interval */
	for (;;) {
		int got, ended = top_source_read_ended(&s);

		t0 = mono_ms();
		got = top_source_take(&s, &seen, snaps, TOP_OUTBOX);
		top_source_recording(&s, path, sizeof(path), &rec);
		while (top_source_message(&s, msg, sizeof(msg)))
			said += strstr(msg, "the file lags") != NULL;
		if (mono_ms() - t0 > slowest)
			slowest = mono_ms() - t0;
		intervals += got;
		if (ended && !got && intervals >= 20)
			break;
		usleep(2000);
	}
	print_message("%d intervals, the slowest of the screen's calls %llu ms, %llu records kept\n", intervals,
		      (unsigned long long)slowest, (unsigned long long)rec);
	assert_true(slowest < 1000);
	assert_int_equal(said, 1);
	assert_true(rec < NREC);
	/* the reader goes on: the close writes what the queue holds */
	flags = fcntl(d.fd, F_GETFL);
	fcntl(d.fd, F_SETFL, flags & ~O_NONBLOCK);
	assert_int_equal(pthread_create(&th, NULL, drain_main, &d), 0);
	written = top_source_record_stop(&s);
	alarm(0);
	pthread_join(th, NULL);
	close(d.fd);
	said = 0;
	while (top_source_message(&s, msg, sizeof(msg)))
		said += strstr(msg, "records were dropped while the file lagged") != NULL;
	assert_int_equal(said, 1);
	top_source_close(&s);

	/* the file: the records kept, and those dropped counted lost */
	r = ntp_reader_open(d.path, err, sizeof(err));
	assert_non_null(r);
	while (ntp_reader_next_block(r, &recs, &n) > 0)
		nrec += n;
	assert_int_equal(nrec, (uint64_t)written);
	assert_int_equal(ntp_reader_stats(r)->dropped, 0);
	print_message("the file: %llu records, %llu lost\n", (unsigned long long)nrec,
		      (unsigned long long)ntp_reader_stats(r)->lost_before);
	assert_int_equal(nrec + ntp_reader_stats(r)->lost_before, NREC);
	ntp_reader_close(r);
	unlink(d.path);
	unlink(fifo);
	unlink(replay);
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
		cmocka_unit_test(test_stalled_file),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
