// SPDX-License-Identifier: GPL-2.0
/* source.c - ntprof-top's background thread (see source.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "source.h"
#include "core/clock.h"

/*
 * The live collector comes from src/collector (the BPF programs). A build
 * without it (no clang/bpftool) still has replay; live mode then says so
 * instead of pretending. Weak references resolve to NULL in that case.
 */
#pragma weak ntp_collector_open
#pragma weak ntp_collector_poll
#pragma weak ntp_collector_totals
#pragma weak ntp_collector_lost
#pragma weak ntp_collector_set_sampling
#pragma weak ntp_collector_close

void top_source_say(struct top_source *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	va_start(ap, fmt);
	vsnprintf(s->msgs[s->msg_head % TOP_MSGS], TOP_MSG_LEN, fmt, ap);
	va_end(ap);
	s->msg_head++;
	if (s->msg_head - s->msg_tail > TOP_MSGS)
		s->msg_tail = s->msg_head - TOP_MSGS;
	pthread_mutex_unlock(&s->lock);
}

int top_source_message(struct top_source *s, char *buf, size_t len)
{
	int got = 0;

	pthread_mutex_lock(&s->lock);
	if (s->msg_tail != s->msg_head) {
		snprintf(buf, len, "%s", s->msgs[s->msg_tail % TOP_MSGS]);
		s->msg_tail++;
		got = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return got;
}

/* The collector's messages ("fentry cannot attach now: ...") go to the status line. */
static void collector_say(void *ctx, const char *line)
{
	top_source_say(ctx, "%s", line);
}

int top_source_open(struct top_source *s, const struct top_source_opts *o, char *err, size_t errlen)
{
	struct ntp_model_config mc;

	memset(s, 0, sizeof(*s));
	s->o = *o;
	atomic_init(&s->interval_ms, o->interval_ms);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->taken_cond, NULL);
	s->outbox = calloc(TOP_OUTBOX, sizeof(*s->outbox));
	if (!s->outbox) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (o->replay) {
		s->reader = ntp_reader_open(o->replay, err, errlen);
		if (!s->reader)
			return -1;
		s->info = *ntp_reader_info(s->reader);
	} else {
		struct ntp_collector_opts co = o->live;
		struct utsname u;

		if (!ntp_collector_open) {
			snprintf(err, errlen, "live mode: this ntprof-top was built without the BPF collector; "
				 "--replay FILE.ntp works");
			return -1;
		}
		co.say = collector_say;
		co.say_ctx = s;
		s->coll = ntp_collector_open(&co, err, errlen);
		if (!s->coll)
			return -1;
		s->info.role = co.role;
		s->info.transport = co.transport;
		s->info.sampling = co.sampling;
		s->info.record_size = sizeof(struct ntp_record);
		s->info.start_mono_ns = ntp_mono_ns();
		s->info.start_real_ns = ntp_real_ns();
		if (!uname(&u)) {
			snprintf(s->info.hostname, sizeof(s->info.hostname), "%.63s", u.nodename);
			snprintf(s->info.kernel, sizeof(s->info.kernel), "%.63s", u.release);
		}
		snprintf(s->info.tool_version, sizeof(s->info.tool_version), "ntprof-top %s", NTP_VERSION);
	}
	memset(&mc, 0, sizeof(mc));
	mc.role = s->info.role;
	mc.transport = s->info.transport;
	mc.impl_host = s->info.impl_host;
	mc.impl_target = s->info.impl_target;
	mc.sampling = s->info.sampling;
	s->model = ntp_model_new(&mc);
	if (!s->model) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* Only this thread writes it: relaxed, no fence per record (the UI reads it
 * under the lock only to date a recording it starts or stops). */
static void set_data_now(struct top_source *s, uint64_t t)
{
	atomic_store_explicit(&s->data_now_ns, t, memory_order_relaxed);
}

/* When a record's command left its side: its latest timestamp. */
static uint64_t record_time(const struct ntp_record *r)
{
	uint64_t t = 0;

	for (int i = 0; i < NTP_TS_COUNT; i++)
		if ((r->ts_valid & (1u << i)) && r->ts[i] > t)
			t = r->ts[i];
	return t;
}

static void ingest(struct top_source *s, const struct ntp_record *r)
{
	int err;

	ntp_model_ingest(s->model, r);
	/* Not recording (the usual case): no lock per record. */
	if (!atomic_load_explicit(&s->recording, memory_order_relaxed))
		return;
	/* The writer is only touched under the lock the UI takes to start/stop it. */
	pthread_mutex_lock(&s->lock);
	if (s->writer && (err = ntp_writer_add(s->writer, r)) < 0) {
		/* the blocks that fit are kept (ntpfile.h); the screen says why */
		uint64_t kept = ntp_writer_records(s->writer), lost = ntp_writer_lost(s->writer);

		ntp_writer_close(s->writer, s->data_now_ns);
		s->writer = NULL;
		atomic_store(&s->recording, 0);
		pthread_mutex_unlock(&s->lock);
		top_source_say(s, "recording stopped: %s: %s; %llu records kept, %llu lost", s->rec_path,
			       strerror(-err), (unsigned long long)kept, (unsigned long long)lost);
		return;
	}
	pthread_mutex_unlock(&s->lock);
}

static void live_record_cb(void *ctx, const struct ntp_record *r)
{
	ingest(ctx, r);
}

static void set_totals(struct top_source *s, const struct ntp_total *t, size_t n, uint64_t as_of)
{
	ntp_model_set_totals(s->model, t, n, as_of);
	pthread_mutex_lock(&s->lock);
	if (s->writer)
		ntp_writer_set_totals(s->writer, t, n, as_of);
	pthread_mutex_unlock(&s->lock);
}

/* Closes the interval at end_ns and publishes it. Returns 1 when -n is reached. */
static int publish(struct top_source *s, uint64_t end_ns)
{
	struct ntp_snapshot *slot;

	pthread_mutex_lock(&s->lock);
	/* Batch mode prints every interval: a replay read as fast as it
	 * goes waits here for the printer instead of overwriting. */
	while (s->o.lossless && s->published - s->taken >= TOP_OUTBOX - 1 && !atomic_load(&s->stop)) {
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_nsec += 100000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->taken_cond, &s->lock, &dl);
	}
	slot = &s->outbox[s->published % TOP_OUTBOX];
	pthread_mutex_unlock(&s->lock);
	/* The slot being filled is the oldest; the UI copies under the lock and
	 * only up to 'published', so filling it outside the lock is safe as
	 * long as the UI is less than TOP_OUTBOX intervals behind; it checks. */
	ntp_model_close_interval(s->model, end_ns, slot);
	pthread_mutex_lock(&s->lock);
	s->published++;
	if (s->writer)
		ntp_writer_tick(s->writer, end_ns);
	pthread_mutex_unlock(&s->lock);
	return s->o.stop_after && s->published >= (uint64_t)s->o.stop_after;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void run_live(struct top_source *s)
{
	uint64_t boundary = s->info.start_mono_ns + (uint64_t)atomic_load(&s->interval_ms) * 1000000ull;
	struct ntp_total totals[256];

	while (!atomic_load(&s->stop)) {
		unsigned req = atomic_exchange(&s->sampling_req, 0);
		uint64_t now;
		int n;

		if (req) {
			if (ntp_collector_set_sampling(s->coll, req) < 0) {
				top_source_say(s, "cannot change the sampling to 1 in %u", req);
			} else {
				ntp_model_set_sampling(s->model, req);
				pthread_mutex_lock(&s->lock);
				s->info.sampling = req;	/* the next recording's header */
				pthread_mutex_unlock(&s->lock);
				top_source_say(s, "sampling one command in %u (from now on)", req);
			}
		}
		n = ntp_collector_poll(s->coll, 100, live_record_cb, s);
		if (n < 0 && n != -EINTR) {
			top_source_say(s, "collector: %s; stopped", strerror(-n));
			break;
		}
		now = ntp_mono_ns();
		set_data_now(s, now);
		if (now < boundary)
			continue;
		n = ntp_collector_totals(s->coll, totals, sizeof(totals) / sizeof(totals[0]));
		if (n > 0)
			set_totals(s, totals, n, now);
		uint64_t lost = ntp_collector_lost(s->coll);

		if (lost > s->lost_seen) {
			ntp_model_add_lost(s->model, lost - s->lost_seen);
			s->lost_seen = lost;
		}
		if (publish(s, now))
			break;
		boundary = now + (uint64_t)atomic_load(&s->interval_ms) * 1000000ull;
	}
}

/* Sleeps for data_ns of the replay's clock, at most 100 ms. */
static void wait_boundary(const struct top_source *s, uint64_t data_ns)
{
	uint64_t ms = (uint64_t)(data_ns / s->o.speed) / 1000000ull + 1;

	sleep_ms(ms > 100 ? 100 : (unsigned)ms);
}

static void run_replay(struct top_source *s)
{
	const struct ntp_read_stats *st;
	struct ntp_record rec;
	uint64_t t0 = s->info.start_mono_ns, wall0 = ntp_mono_ns(), boundary, rec_t = 0, last_totals = 0, end_t;
	int have;

	have = ntp_reader_next(s->reader, &rec) == 1;
	if (have) {
		rec_t = record_time(&rec);
		if (!t0 || rec_t < t0)
			t0 = rec_t;
	}
	set_data_now(s, t0);
	boundary = t0 + (uint64_t)atomic_load(&s->interval_ms) * 1000000ull;
	while (!atomic_load(&s->stop)) {
		/* Where the replay's clock stands: wall time scaled, or as far as the data goes. */
		uint64_t now = s->o.speed > 0 ? t0 + (uint64_t)((ntp_mono_ns() - wall0) * s->o.speed)
					      : (have ? rec_t : UINT64_MAX);
		const struct ntp_total *tot;
		uint64_t as_of;
		size_t nt;

		if (have && rec_t <= now && rec_t < boundary) {
			if (rec_t > s->data_now_ns)
				set_data_now(s, rec_t);
			ingest(s, &rec);
			have = ntp_reader_next(s->reader, &rec) == 1;
			if (have)
				rec_t = record_time(&rec);
			continue;
		}
		tot = ntp_reader_totals(s->reader, &nt, &as_of);
		if (tot && nt && as_of != last_totals && as_of <= boundary) {
			set_totals(s, tot, nt, as_of);
			last_totals = as_of;
		}
		if (!have) {
			st = ntp_reader_stats(s->reader);
			end_t = st->end_mono_ns > s->data_now_ns ? st->end_mono_ns : s->data_now_ns;
			if (boundary < end_t) {
				if (now < boundary) {
					wait_boundary(s, boundary - now);
					continue;
				}
			} else {
				/* The last, partial interval ends where the recording does. */
				if (end_t > boundary - (uint64_t)atomic_load(&s->interval_ms) * 1000000ull)
					publish(s, end_t);
				top_source_say(s, "replay ended: %llu records%s%s",
					       (unsigned long long)st->records, st->why[0] ? "; " : "", st->why);
				break;
			}
		} else if (now < boundary) {
			/* The next record is due later (else it was taken above):
			 * nothing shows before the boundary, so sleep towards it in
			 * steps of at most 100 ms (stop and -/+ are seen). Records
			 * are then taken in a burst: 10 wakeups a second, not one
			 * per record. */
			wait_boundary(s, boundary - now);
			continue;
		}
		set_data_now(s, boundary);
		if (publish(s, boundary))
			break;
		boundary += (uint64_t)atomic_load(&s->interval_ms) * 1000000ull;
	}
}

static void *thread_main(void *arg)
{
	struct top_source *s = arg;

	if (s->reader)
		run_replay(s);
	else
		run_live(s);
	atomic_store(&s->done, 1);
	return NULL;
}

int top_source_start(struct top_source *s)
{
	int err = pthread_create(&s->thread, NULL, thread_main, s);

	if (err)
		return -err;
	s->started = 1;
	return 0;
}

void top_source_close(struct top_source *s)
{
	if (s->started) {
		atomic_store(&s->stop, 1);
		pthread_join(s->thread, NULL);
		s->started = 0;
	}
	top_source_record_stop(s);
	if (s->coll)
		ntp_collector_close(s->coll);
	if (s->reader)
		ntp_reader_close(s->reader);
	if (s->model)
		ntp_model_free(s->model);
	free(s->outbox);
	s->coll = NULL;
	s->reader = NULL;
	s->model = NULL;
	s->outbox = NULL;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->taken_cond);
}

int top_source_take(struct top_source *s, uint64_t *seen, struct ntp_snapshot *out, int max)
{
	int n = 0;

	pthread_mutex_lock(&s->lock);
	/* A UI that fell more than the outbox behind skips what was overwritten. */
	if (s->published > *seen + TOP_OUTBOX - 1)
		*seen = s->published - (TOP_OUTBOX - 1);
	while (*seen < s->published && n < max) {
		out[n++] = s->outbox[*seen % TOP_OUTBOX];
		(*seen)++;
	}
	s->taken = *seen;
	pthread_cond_signal(&s->taken_cond);
	pthread_mutex_unlock(&s->lock);
	return n;
}

int top_source_record_start(struct top_source *s, const char *path, char *err, size_t errlen)
{
	uint64_t now = s->data_now_ns;	/* one reading: the source thread moves it */
	struct ntp_file_info info;
	struct ntp_writer *w;

	pthread_mutex_lock(&s->lock);
	info = s->info;
	/* The recording starts now on the data's clock (the replayed file's, or this machine's). */
	if (now > info.start_mono_ns) {
		info.start_real_ns += now - info.start_mono_ns;
		info.start_mono_ns = now;
	}
	pthread_mutex_unlock(&s->lock);
	info.record_size = sizeof(struct ntp_record);
	snprintf(info.tool_version, sizeof(info.tool_version), "ntprof-top %s", NTP_VERSION);
	w = ntp_writer_open(path, &info, err, errlen);
	if (!w)
		return -1;
	pthread_mutex_lock(&s->lock);
	s->writer = w;
	atomic_store(&s->recording, 1);
	snprintf(s->rec_path, sizeof(s->rec_path), "%s", path);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int64_t top_source_record_stop(struct top_source *s)
{
	int64_t n = -EBADF;
	int err;

	pthread_mutex_lock(&s->lock);
	if (s->writer) {
		n = (int64_t)ntp_writer_records(s->writer);
		err = ntp_writer_close(s->writer, s->data_now_ns);
		if (err < 0)
			n = err;
		s->writer = NULL;
		atomic_store(&s->recording, 0);
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

uint32_t top_source_sampling(struct top_source *s)
{
	uint32_t n;

	pthread_mutex_lock(&s->lock);
	n = s->info.sampling;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int top_source_recording(struct top_source *s, char *path, size_t len, uint64_t *records)
{
	int on;

	pthread_mutex_lock(&s->lock);
	on = s->writer != NULL;
	if (on) {
		snprintf(path, len, "%s", s->rec_path);
		*records = ntp_writer_records(s->writer);
	}
	pthread_mutex_unlock(&s->lock);
	return on;
}
