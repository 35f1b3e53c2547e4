// SPDX-License-Identifier: GPL-2.0
/* source.c - ntprof-top's background thread (see source.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "source.h"
#include "core/clock.h"
#include "core/model/totals.h"
#include "core/thread.h"
#include "collector/hostq.h"

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
#pragma weak ntp_live_pull
#pragma weak ntp_live_file_info
#pragma weak ntp_transport_mismatch
#pragma weak ntp_sys_root

/* top_source_say under the lock */
static void say_locked(struct top_source *s, const char *fmt, va_list ap)
{
	vsnprintf(s->msgs[s->msg_head % TOP_MSGS], TOP_MSG_LEN, fmt, ap);
	s->msg_after[s->msg_head % TOP_MSGS] = s->published;
	s->msg_head++;
	if (s->msg_head - s->msg_tail > TOP_MSGS)
		s->msg_tail = s->msg_head - TOP_MSGS;
}

void top_source_say(struct top_source *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	va_start(ap, fmt);
	say_locked(s, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&s->lock);
}

static void say_held(struct top_source *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say_held(struct top_source *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say_locked(s, fmt, ap);
	va_end(ap);
}

int top_source_message(struct top_source *s, char *buf, size_t len)
{
	return top_source_message_after(s, UINT64_MAX, buf, len);
}

int top_source_message_after(struct top_source *s, uint64_t shown, char *buf, size_t len)
{
	int got = 0;

	pthread_mutex_lock(&s->lock);
	if (s->msg_tail != s->msg_head && s->msg_after[s->msg_tail % TOP_MSGS] <= shown) {
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

/* Only this thread writes it: relaxed, no fence per record (the UI reads it
 * under the lock only to date a recording it starts or stops). */
static void set_data_now(struct top_source *s, uint64_t t)
{
	atomic_store_explicit(&s->data_now_ns, t, memory_order_relaxed);
}

/* ---- the sinks: the recording's writer, the outbox ---- */

/*
 * The file lags (the writer's queue is full): the screen waits on s->lock,
 * so nothing here waits for the file while holding it (docs/recording.md,
 * "Files"). A replay, which has no ring buffer to overflow, waits for the
 * file outside the lock, as ntprof record's draining does: the replay goes
 * at the file's pace, the screen stays live, and a w or q meanwhile ends
 * the wait. Live, the records go on to the intervals: the full block is
 * dropped, its records counted lost in the file as those of a full ring
 * buffer are, and the status line says so once a recording (and at its
 * stop). Under s->lock, which a replay drops and takes again: s->rec_waiting
 * keeps w from closing the writer meanwhile (top_source_record_stop).
 */
static int rec_add(struct top_source *s, const struct ntp_record *r)
{
	struct ntp_writer *w = s->writer;
	int waited = 0, woken, err;

	while ((err = ntp_writer_add(w, r)) == -EAGAIN) {
		if (s->rec_stopping) {
			/* w is closing it: the close writes the full block; this
			 * record, past it, has no room: counted lost, and said */
			uint64_t ring = s->lost_cur > s->lost_base ? s->lost_cur - s->lost_base : 0;

			s->rec_unsaved++;
			ntp_writer_set_lost(w, ring + s->rec_unsaved, s->data_now_ns);
			return 0;
		}
		/* one wait a record: then room, and the add goes in; else (q,
		 * or no memory for the block) the block is dropped */
		if (!s->live && !waited) {
			waited = 1;
			s->rec_waiting = 1;
			pthread_mutex_unlock(&s->lock);
			woken = ntp_writer_wait_room(w);
			pthread_mutex_lock(&s->lock);
			s->rec_waiting = 0;
			pthread_cond_broadcast(&s->rec_cond);
			if (!woken || s->rec_stopping)
				continue;
		}
		/* the first block dropped */
		if (ntp_writer_drop_block(w, s->data_now_ns) == ntp_writer_dropped(w))
			say_held(s, "recording to %s: the file lags; records that do not fit its queue are "
				 "dropped (counted lost in it)", s->rec_path);
	}
	return err;
}

static int rec_record(void *ctx, const struct ntp_record *r)
{
	struct top_source *s = ctx;
	int err;

	/* Not recording (the usual case): no lock per record. */
	if (!atomic_load_explicit(&s->recording, memory_order_relaxed))
		return 0;
	/* The writer is only touched under the lock the UI takes to start/stop it. */
	pthread_mutex_lock(&s->lock);
	if (s->writer && (err = rec_add(s, r)) < 0) {
		/* the blocks that fit are kept (ntpfile.h); the screen says why.
		 * After the error the writer thread writes nothing more: the
		 * close does not wait on the file. */
		uint64_t kept, lost, dropped = ntp_writer_dropped(s->writer) + s->rec_unsaved;

		ntp_writer_close_count(s->writer, s->data_now_ns, &kept, &lost);
		s->writer = NULL;
		s->rec_unsaved = 0;
		/* a w that found the recording on and waited meanwhile
		 * (top_source_record_stop) gets this error, not "no writer" */
		s->rec_err = err;
		atomic_store(&s->recording, 0);
		/* said before the lock goes: that w then finds it queued */
		if (dropped)	/* the live drops too (docs/recording.md: said at the stop) */
			say_held(s, "recording stopped: %s: %s; %llu records kept, %llu lost, %llu dropped "
				 "while the file lagged", s->rec_path, strerror(-err), (unsigned long long)kept,
				 (unsigned long long)lost, (unsigned long long)dropped);
		else
			say_held(s, "recording stopped: %s: %s; %llu records kept, %llu lost", s->rec_path,
				 strerror(-err), (unsigned long long)kept, (unsigned long long)lost);
		pthread_mutex_unlock(&s->lock);
		return 0;	/* the monitor goes on */
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int rec_totals(void *ctx, const struct ntp_total *t, size_t n, uint64_t as_of)
{
	struct top_source *s = ctx;

	if (n > TOP_MAX_TOTALS)
		n = TOP_MAX_TOTALS;
	/* under the lock: the UI's w reads them to end a recording */
	pthread_mutex_lock(&s->lock);
	if (as_of != s->cur_as_of && s->n_cur) {
		memcpy(s->tot_prev, s->tot_cur, s->n_cur * sizeof(*t));
		s->n_prev = s->n_cur;
		s->prev_as_of = s->cur_as_of;
	}
	if (n)
		memcpy(s->tot_cur, t, n * sizeof(*t));
	s->n_cur = n;
	s->cur_as_of = as_of;
	if (s->writer && atomic_load_explicit(&s->recording, memory_order_relaxed)) {
		/* the recording's counts are since its start */
		ntp_totals_since(t, n, s->tot_base, s->n_base, s->tot_since);
		ntp_writer_set_totals(s->writer, s->tot_since, n, as_of);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The recording's file counts the records lost since its start
 * (docs/ntp-format.md, type 4), as ntprof record's does. */
static int rec_lost(void *ctx, uint64_t cumulative, uint64_t now)
{
	struct top_source *s = ctx;

	pthread_mutex_lock(&s->lock);
	s->lost_cur = cumulative;
	if (s->writer && atomic_load_explicit(&s->recording, memory_order_relaxed) && cumulative > s->lost_base)
		ntp_writer_set_lost(s->writer, cumulative - s->lost_base, now);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The counters as of now on the data clock, between or past the last two
 * readings (the source reads them at each boundary, a replay's files hold
 * them a second apart), for the recording's end. Under the lock. */
static size_t totals_now(struct top_source *s, uint64_t now, struct ntp_total *out)
{
	return ntp_totals_at(s->tot_prev, s->n_prev, s->n_prev ? s->prev_as_of : s->t0, s->tot_cur, s->n_cur,
			     s->cur_as_of, now, out);
}

/* w was pressed: the counters as of now become the recording's zero (live:
 * read now; a replay: between its last two readings), then its records flow. */
static void arm_recording(struct top_source *s)
{
	uint64_t now = s->data_now_ns;
	int n = 0;

	if (!atomic_load(&s->rec_arming))
		return;
	if (s->live) {
		n = ntp_collector_totals(s->live->c, s->tot_base, TOP_MAX_TOTALS);
		if (n < 0)
			n = 0;
	} else {
		pthread_mutex_lock(&s->lock);
		n = (int)totals_now(s, now, s->tot_base);
		pthread_mutex_unlock(&s->lock);
	}
	s->n_base = (size_t)n;
	pthread_mutex_lock(&s->lock);
	s->lost_base = s->lost_cur;
	if (s->live && ntp_collector_lost && ntp_collector_lost(s->live->c) > s->lost_base)
		s->lost_base = ntp_collector_lost(s->live->c);
	atomic_store(&s->rec_arming, 0);
	if (s->writer)
		atomic_store(&s->recording, 1);
	pthread_mutex_unlock(&s->lock);
}

static int rec_tick(void *ctx, uint64_t now)
{
	struct top_source *s = ctx;

	set_data_now(s, now);
	if (!atomic_load_explicit(&s->recording, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->writer)
		ntp_writer_tick(s->writer, now);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ---- the replay's damaged and cut files ---- */

/* One line per file with records lost before it, and per damaged or cut
 * file, in the words of the report's note
 * (note_damage() in src/cli/load.c), NUL-separated into a new buffer;
 * *n lines, *len bytes. Marks s->corrupt after a CRC failure. Only this
 * thread reads the readers' stats. NULL when none (or out of memory). */
static char *damage_lines(struct top_source *s, size_t *n, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	*n = *len = 0;
	if (!s->files)
		return NULL;
	f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (size_t i = 0; i < ntp_files_count(s->files); i++) {
		const struct ntp_read_stats *st = ntp_reader_stats(ntp_files_reader(s->files, i));

		/* the report's note on records lost before the recording */
		if (st->lost_before) {
			fprintf(f, "%s: records lost before reaching the recording: %llu (%s)%c",
				s->o.replay_files[i], (unsigned long long)st->lost_before, NTP_LOST_WHY, 0);
			(*n)++;
		}
		if (!st->truncated && !st->corrupt)
			continue;
		s->corrupt |= st->corrupt;
		fprintf(f, "%s %s (%s): %llu records read, %llu dropped; the intervals are of the records read%c",
			s->o.replay_files[i], st->corrupt ? "is damaged" : "was cut short",
			st->why[0] ? st->why : "no trailer", (unsigned long long)st->records,
			(unsigned long long)st->dropped, 0);
		(*n)++;
	}
	if (fclose(f) || !*n) {
		free(buf);
		*n = 0;
		return NULL;
	}
	*len = size;
	return buf;
}

/* The notes as of now, for the interval of this index (UINT64_MAX: none). */
static void set_notes(struct top_source *s, uint64_t index)
{
	size_t n, len;
	char *lines = damage_lines(s, &n, &len);

	pthread_mutex_lock(&s->lock);
	free(s->notes);
	s->notes = lines;
	s->n_notes = n;
	s->notes_len = len;
	s->notes_index = index;
	pthread_mutex_unlock(&s->lock);
}

size_t top_source_notes(struct top_source *s, uint64_t index, char **out)
{
	size_t n = 0;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->n_notes && (index == UINT64_MAX || index == s->notes_index)) {
		*out = malloc(s->notes_len);
		if (*out) {
			memcpy(*out, s->notes, s->notes_len);
			n = s->n_notes;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

int top_source_read_ended(struct top_source *s)
{
	return atomic_load(&s->read_ended);
}

/* Publishes a closed interval. 1 when -n is reached. */
static int publish(void *ctx, const struct ntp_snapshot *snap)
{
	struct top_source *s = ctx;
	int last = s->o.stop_after && s->published + 1 >= (uint64_t)s->o.stop_after;
	struct ntp_snapshot *out;

	/* The last interval of a replay (the reading ended, or -n is reached)
	 * carries the notes on its files, set before anyone can take it. */
	if (s->files && (last || atomic_load(&s->read_ended)))
		set_notes(s, snap->index);
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
	/* The UI copies under the lock and only up to 'published'. */
	out = &s->outbox[s->published % TOP_OUTBOX];
	*out = *snap;
	/* the model counts the join from the start; a line is of its interval */
	out->host_records -= s->last_host;
	out->target_records -= s->last_target;
	out->matched -= s->last_matched;
	s->last_host = snap->host_records;
	s->last_target = snap->target_records;
	s->last_matched = snap->matched;
	s->published++;
	pthread_mutex_unlock(&s->lock);
	return s->o.stop_after && s->published >= (uint64_t)s->o.stop_after;
}

/* --session, --io-type, --size on a replay select from the files what they
 * select live; --session names the host's namespace, which a target's
 * records do not carry (they name its backing device). */
static int replay_filter(const struct ntp_collector_opts *co, const struct ntp_model_config *cfg,
			 struct ntp_record_filter *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->io_type = co->io_type;
	f->n_sizes = co->n_sizes < NTP_FILTER_MAX_SIZES ? co->n_sizes : NTP_FILTER_MAX_SIZES;
	memcpy(f->sizes, co->sizes, (size_t)f->n_sizes * sizeof(f->sizes[0]));
	if (co->session[0] && cfg->role == NTP_ROLE_TARGET) {
		snprintf(err, errlen, "--session %s: a target recording's records name the target's backing "
			 "devices, not the host's namespaces; replay it without --session", co->session);
		return -1;
	}
	memcpy(f->session, co->session, NTP_DEV_LEN);
	return 0;
}

/* How far from a file's end the session check looks for its latest totals
 * (a trailer or a totals block: one per second of recording, ntpfile.h). */
#define SESSION_TAIL ((size_t)4 << 20)

/* Adds dev to the list (NUL-separated names, ", " between them when said),
 * a multipath path nvme<S>c<C>n<N> as its head nvme<S>n<N>, the name the
 * replay's filter compares (ntp_filter_keeps, src/core/pump/pump.c). -1: the
 * list is full and the name left out. */
static int dev_add(char *list, size_t cap, size_t *n, const char *dev)
{
	char d[NTP_DEV_LEN];
	unsigned sub, ctrl, ns;
	int end = 0;
	size_t len;

	memcpy(d, dev, NTP_DEV_LEN);
	d[NTP_DEV_LEN - 1] = '\0';
	if (sscanf(d, "nvme%uc%un%u%n", &sub, &ctrl, &ns, &end) == 3 && end > 0 && !d[end])
		snprintf(d, sizeof(d), "nvme%un%u", sub, ns);
	if (!(len = strlen(d)))
		return 0;
	for (const char *p = list; p < list + *n; p += strlen(p) + 1)
		if (strlen(p) == len && !memcmp(p, d, len))
			return 0;
	if (*n + len + 1 > cap)
		return -1;
	memcpy(list + *n, d, len + 1);
	*n += len + 1;
	return 0;
}

/*
 * --session on a replay names a host namespace the recording should have:
 * the namespaces its headers list (format 1.2), with those counted in the
 * latest totals of each file (read from its end), path names folded to
 * their head as the filter folds them, refuse a name it lacks, as live
 * recording refuses one that does not exist (docs/top.md). Refused only
 * when that list is known whole; otherwise the replay runs and its
 * intervals show what the filter keeps: a file that says neither (an older
 * header and no totals block yet, a recording just started), a header
 * with its table full (more are left out), a file longer than the tail
 * read with no totals within it, a pipe (read once, by the replay), more
 * names than the list holds.
 */
static int session_check(struct top_source *s, const char *session, char *err, size_t errlen)
{
	char list[NTP_HOSTQ_MAX * NTP_DEV_LEN];
	size_t n = 0, shown = 0;
	char names[256];
	int whole = s->info.n_hostq < NTP_HOSTQ_MAX;

	if (!session[0])
		return 0;
	for (uint32_t i = 0; i < s->info.n_hostq && i < NTP_HOSTQ_MAX; i++)
		if (dev_add(list, sizeof(list), &n, s->info.hostq[i].dev))
			whole = 0;
	for (size_t i = 0; whole && i < ntp_files_count(s->files); i++) {
		struct ntp_reader *r = ntp_files_reader(s->files, i);
		struct ntp_total *rows;
		ssize_t k;

		if (ntp_reader_info(r)->role == NTP_ROLE_TARGET)
			continue;
		if (ntp_reader_info(r)->n_hostq >= NTP_HOSTQ_MAX || ntp_reader_stream(r)) {
			whole = 0;
			break;
		}
		k = ntp_file_last_totals(ntp_reader_path(r), SESSION_TAIL, &rows);
		if (k < 0)
			whole = 0;
		for (ssize_t j = 0; j < k; j++)
			if (rows[j].key.side == NTP_SIDE_HOST && dev_add(list, sizeof(list), &n, rows[j].key.dev))
				whole = 0;
		free(rows);
	}
	if (!n || !whole)
		return 0;
	for (const char *p = list; p < list + n; p += strlen(p) + 1)
		if (!strncmp(p, session, NTP_DEV_LEN))
			return 0;
	names[0] = '\0';
	for (const char *p = list; p < list + n; p += strlen(p) + 1) {
		size_t at = strlen(names);

		if (at + strlen(p) + 8 >= sizeof(names)) {
			snprintf(names + at, sizeof(names) - at, ", ...");
			break;
		}
		snprintf(names + at, sizeof(names) - at, "%s%s", shown++ ? ", " : "", p);
	}
	snprintf(err, errlen, "%s is not in the recording (it has %s)", session, names);
	return -1;
}

/* A file to follow whose recorder has created it but not written its
 * header yet (docs/top.md): waited for as a following replay waits, until
 * it holds a header or has not grown for the idle time (its modification
 * time tells); then opened, and refused as before if still short. */
static void header_wait(const char *path)
{
	struct stat sb;

	while (!stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size < NTP_HEADER_LEN) {
		struct timespec now, step = { 0, 50 * 1000000L };

		clock_gettime(CLOCK_REALTIME, &now);
		if ((now.tv_sec - sb.st_mtim.tv_sec) * 1000000000LL + (now.tv_nsec - sb.st_mtim.tv_nsec) >
		    (long long)TOP_FOLLOW_IDLE_NS)
			return;
		nanosleep(&step, NULL);
	}
}

/* The replay's files: joined, the model's configuration and where they start. */
static int open_replay(struct top_source *s, const struct top_source_opts *o, struct ntp_model_config *cfg,
		       struct ntp_pump_config *pc, struct ntp_record_filter *filter, char *err, size_t errlen)
{
	if (o->speed > 0 && o->n_replay == 1)
		header_wait(o->replay_files[0]);
	s->files = ntp_files_open(o->replay_files, o->n_replay, err, errlen);
	if (!s->files)
		return -1;
	*cfg = *ntp_files_model_config(s->files);
	/* a recording made with w: the primary file's header, the joined roles */
	s->info = *ntp_reader_info(ntp_files_reader(s->files, ntp_files_primary(s->files)));
	/* each host file's queues (what-if view): joined files name their own */
	for (size_t i = 0; i < ntp_files_count(s->files); i++)
		ntp_hostq_merge(&s->info, ntp_reader_info(ntp_files_reader(s->files, i)));
	s->info.role = cfg->role;
	s->info.impl_host = cfg->impl_host;
	s->info.impl_target = cfg->impl_target;
	/* a paced replay of one file follows it while it is written
	 * (docs/top.md): a recording's end is its trailer */
	if (o->speed > 0 && o->n_replay == 1)
		ntp_reader_follow(ntp_files_reader(s->files, 0), TOP_FOLLOW_IDLE_NS);
	pc->start_ns = ntp_files_start(s->files);
	if (replay_filter(&o->cap.co, cfg, filter, err, errlen) || session_check(s, o->cap.co.session, err, errlen))
		return -1;
	pc->filter = filter->io_type >= 0 || filter->n_sizes || filter->session[0] ? filter : NULL;
	return 0;
}

/* The live collector, loaded and attached; the recording header of this run. */
static int open_live(struct top_source *s, const struct top_source_opts *o, struct ntp_model_config *cfg,
		     struct ntp_pump_config *pc, char *err, size_t errlen)
{
	struct ntp_collector_opts co = o->cap.co;
	char mismatch[600] = "";

	if (!ntp_collector_open) {
		snprintf(err, errlen, "live mode: this ntprof-top was built without the BPF collector; "
			 "--replay FILE.ntp works");
		return -1;
	}
	s->live = calloc(1, sizeof(*s->live));
	if (!s->live) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	co.say = collector_say;
	co.say_ctx = s;
	/* -t against the controllers and ports there: a warning
	 * (docs/recording.md), ahead of the error when the load fails */
	if (ntp_transport_mismatch && ntp_sys_root &&
	    ntp_transport_mismatch(ntp_sys_root(), co.transport, (co.role & NTP_ROLE_HOST) && !co.spdk_host,
				   (co.role & NTP_ROLE_TARGET) && !co.spdk_target, mismatch, sizeof(mismatch)))
		top_source_say(s, "%s", mismatch);
	s->live->c = ntp_collector_open(&co, err, errlen);
	if (!s->live->c) {
		if (mismatch[0]) {
			char why[600];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s; %s", mismatch, why);
		}
		return -1;
	}
	pc->start_ns = ntp_mono_ns();
	ntp_live_file_info(&s->info, &co, pc->start_ns, "ntprof-top " NTP_VERSION);
	memset(cfg, 0, sizeof(*cfg));
	cfg->role = co.role;
	cfg->transport = co.transport;
	cfg->impl_host = s->info.impl_host;	/* SPDK with --spdk-host/--spdk-target */
	cfg->impl_target = s->info.impl_target;
	cfg->sampling = co.sampling;
	return 0;
}

int top_source_open(struct top_source *s, const struct top_source_opts *o, char *err, size_t errlen)
{
	struct ntp_model_config cfg;
	struct ntp_pump_config pc = { 0 };
	struct ntp_record_filter filter;

	memset(s, 0, sizeof(*s));
	s->o = *o;
	atomic_init(&s->interval_ms, o->interval_ms);
	s->notes_index = UINT64_MAX;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->taken_cond, NULL);
	pthread_cond_init(&s->rec_cond, NULL);
	s->outbox = calloc(TOP_OUTBOX, sizeof(*s->outbox));
	s->tot_prev = calloc(TOP_MAX_TOTALS, sizeof(struct ntp_total));
	s->tot_cur = calloc(TOP_MAX_TOTALS, sizeof(struct ntp_total));
	s->tot_base = calloc(TOP_MAX_TOTALS, sizeof(struct ntp_total));
	s->tot_since = calloc(TOP_MAX_TOTALS, sizeof(struct ntp_total));
	s->tot_at = calloc(TOP_MAX_TOTALS, sizeof(struct ntp_total));
	if (!s->outbox || !s->tot_prev || !s->tot_cur || !s->tot_base || !s->tot_since || !s->tot_at) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (o->replay ? open_replay(s, o, &cfg, &pc, &filter, err, errlen) : open_live(s, o, &cfg, &pc, err, errlen))
		return -1;
	pc.model = s->model = ntp_model_new(&cfg);
	pc.interval_ns = (uint64_t)o->interval_ms * 1000000ull;
	s->pump_interval_ms = o->interval_ms;
	s->pump = s->model ? ntp_pump_new(&pc) : NULL;
	if (!s->pump) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ntp_pump_add_sink(s->pump, &(struct ntp_pump_sink){ .record = rec_record, .totals = rec_totals,
							     .tick = rec_tick, .lost = rec_lost, .ctx = s });
	ntp_pump_add_sink(s->pump, &(struct ntp_pump_sink){ .interval = publish, .ctx = s });
	set_data_now(s, pc.start_ns);
	return 0;
}

/* The UI's + and -: the pump's grid from the next boundary. */
static void apply_interval(struct top_source *s)
{
	unsigned ms = atomic_load(&s->interval_ms);

	if (ms != s->pump_interval_ms) {
		ntp_pump_set_interval(s->pump, (uint64_t)ms * 1000000ull);
		s->pump_interval_ms = ms;
	}
}

/* Live: the keys' requests, applied between two polls. */
static int live_before_poll(void *ctx, struct ntp_pump *p)
{
	struct top_source *s = ctx;
	unsigned req = atomic_exchange(&s->sampling_req, 0);

	(void)p;
	apply_interval(s);
	arm_recording(s);
	if (!req)
		return 0;
	if (ntp_collector_set_sampling(s->live->c, req) < 0) {
		top_source_say(s, "cannot change the sampling to 1 in %u", req);
		return 0;
	}
	ntp_model_set_sampling(s->model, req);
	pthread_mutex_lock(&s->lock);
	s->info.sampling = req;	/* the next recording's header */
	pthread_mutex_unlock(&s->lock);
	top_source_say(s, "sampling one command in %u (from now on)", req);
	return 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

/* Replay: the files source, released no faster than --speed times the
 * recording's own pace. Waiting for the next boundary sleeps in steps of at
 * most 100 ms (stop and + / - are seen); records are then taken in a burst:
 * 10 wakeups a second, not one per record. */
static int paced_pull(void *ctx, struct ntp_pump *p, uint64_t until, uint64_t *reached)
{
	struct top_source *s = ctx;
	uint64_t limit = until;
	int more;

	apply_interval(s);
	arm_recording(s);
	until = ntp_pump_next_boundary(p);
	limit = until;
	if (s->o.speed > 0) {
		double ahead = (double)(ntp_mono_ns() - s->wall0) * s->o.speed;
		uint64_t paced = ahead >= (double)(UINT64_MAX - s->t0) ? UINT64_MAX : s->t0 + (uint64_t)ahead;

		if (paced < limit)
			limit = paced;
	}
	more = ntp_files_pull(s->files, p, limit, reached);
	if (!more)	/* every file read: the intervals closed from now on are the last */
		atomic_store(&s->read_ended, 1);
	if (more == 1 && !s->follow_said && ntp_reader_waiting(ntp_files_reader(s->files, 0))) {
		/* once: a recording being written waits for its writer at every flush */
		s->follow_said = 1;
		top_source_say(s, "waiting for the writer: %s has no trailer yet; following it until its trailer "
			       "(or until it has not grown for %u s)", s->o.replay,
			       (unsigned)(TOP_FOLLOW_IDLE_NS / 1000000000ull));
	}
	if (more == 1 && *reached > until) {
		/* the source skipped a gap without records (pump_files.h): the
		 * pace goes on from its far side instead of waiting through it */
		top_source_say(s, "no records for %.0f s of the recording: skipped",
			       (double)(*reached - until) / 1e9);
		if (s->o.speed > 0)
			s->t0 = *reached - (uint64_t)((double)(ntp_mono_ns() - s->wall0) * s->o.speed);
		return more;
	}
	if (more == 1 && *reached < until && s->o.speed > 0) {
		uint64_t wait = (uint64_t)((double)(until - *reached) / s->o.speed);

		sleep_ns(wait < 100000000ull ? wait + 1000000ull : 100000000ull);
	}
	return more;
}

static int stop_requested(void *ctx)
{
	return atomic_load(&((struct top_source *)ctx)->stop);
}

static void *thread_main(void *arg)
{
	struct top_source *s = arg;
	int rc;

	if (s->files) {
		s->t0 = ntp_files_start(s->files);
		s->wall0 = ntp_mono_ns();
		rc = ntp_pump_run(s->pump, &(struct ntp_pump_source){ paced_pull, s }, stop_requested, s);
		if (!rc) {
			uint64_t records = 0, dropped = 0;

			/* The last, partial interval ends where the recording does. */
			ntp_pump_finish(s->pump, ntp_files_end(s->files), NULL);
			for (size_t i = 0; i < ntp_files_count(s->files); i++) {
				const struct ntp_read_stats *st = ntp_reader_stats(ntp_files_reader(s->files, i));

				records += st->records;
				dropped += st->dropped;
			}
			if (dropped)
				top_source_say(s, "replay ended: %llu records read, %llu dropped",
					       (unsigned long long)records, (unsigned long long)dropped);
			else
				top_source_say(s, "replay ended: %llu records", (unsigned long long)records);
		}
		/* stopped early (q, -n): what was read so far, for stderr and the exit status */
		if (!s->notes)
			set_notes(s, UINT64_MAX);
	} else {
		s->live->before_poll = live_before_poll;
		s->live->ctx = s;
		rc = ntp_pump_run(s->pump, &(struct ntp_pump_source){ ntp_live_pull, s->live }, stop_requested, s);
		if (rc < 0)
			top_source_say(s, "collector: %s; stopped", strerror(-rc));
	}
	atomic_store(&s->done, 1);
	return NULL;
}

int top_source_start(struct top_source *s)
{
	/* the process's signals go to the UI thread, whose key wait they end */
	int err = ntp_thread_start(&s->thread, thread_main, s, NULL);

	if (err)
		return -err;
	s->started = 1;
	return 0;
}

void top_source_stop(struct top_source *s)
{
	if (s->started) {
		atomic_store(&s->stop, 1);
		/* a replay waiting for the recording's file drops instead (rec_add) */
		pthread_mutex_lock(&s->lock);
		if (s->writer)
			ntp_writer_wake(s->writer);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
		s->started = 0;
	}
}

void top_source_close(struct top_source *s)
{
	top_source_stop(s);
	top_source_record_stop(s);
	if (s->live && s->live->c)
		ntp_collector_close(s->live->c);
	free(s->live);
	ntp_files_close(s->files);
	ntp_pump_free(s->pump);
	ntp_model_free(s->model);
	free(s->outbox);
	free(s->tot_prev);
	free(s->tot_cur);
	free(s->tot_base);
	free(s->tot_since);
	free(s->tot_at);
	free(s->notes);
	s->notes = NULL;
	s->n_notes = 0;
	s->tot_prev = s->tot_cur = s->tot_base = s->tot_since = s->tot_at = NULL;
	s->live = NULL;
	s->files = NULL;
	s->pump = NULL;
	s->model = NULL;
	s->outbox = NULL;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->taken_cond);
	pthread_cond_destroy(&s->rec_cond);
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
	/* the source thread hands blocks to the writer's own thread: a write
	 * that blocks stops neither the draining nor the screen, which waits on
	 * s->lock (docs/recording.md, "Files") */
	ntp_writer_thread(w, NTP_WRITER_QUEUE);
	ntp_writer_nowait(w);	/* the lock is the screen's too (rec_add) */
	pthread_mutex_lock(&s->lock);
	s->writer = w;
	atomic_store(&s->rec_arming, 1);	/* the source thread takes the baseline, then records */
	snprintf(s->rec_path, sizeof(s->rec_path), "%s", path);
	s->rec_err = 0;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int64_t top_source_record_stop(struct top_source *s)
{
	struct ntp_writer *w = NULL;
	uint64_t now = 0, kept, dropped = 0;
	int err;

	pthread_mutex_lock(&s->lock);
	if (s->writer && s->rec_waiting) {
		/* a replay waits for the file outside the lock (rec_add): wake
		 * it, and close only once it is back under the lock, out of w */
		s->rec_stopping = 1;
		ntp_writer_wake(s->writer);
		while (s->rec_waiting)
			pthread_cond_wait(&s->rec_cond, &s->lock);
		s->rec_stopping = 0;
	}
	if (s->writer) {
		now = s->data_now_ns;
		/* the counts up to the end, not to the last reading: up to an
		 * interval of commands would be missing from the rate */
		if (atomic_load(&s->recording) && s->n_cur) {
			size_t k = totals_now(s, now, s->tot_at);

			ntp_totals_since(s->tot_at, k, s->tot_base, s->n_base, s->tot_since);
			ntp_writer_set_totals(s->writer, s->tot_since, k, now);
		}
		w = s->writer;
		s->writer = NULL;
		atomic_store(&s->recording, 0);
		dropped = ntp_writer_dropped(w) + s->rec_unsaved;
		s->rec_unsaved = 0;
	}
	/* the recording stopped on a write error just before (rec_record,
	 * maybe while this w waited for the replay): that error */
	if (!w && s->rec_err)
		err = s->rec_err;
	else
		err = w ? 0 : -EBADF;
	s->rec_err = 0;
	pthread_mutex_unlock(&s->lock);
	if (!w)
		return err;
	/* Outside the lock: the close waits until the queued blocks are
	 * written, and the source thread no longer touches w (no replay
	 * waits on it: see above). */
	err = ntp_writer_close_count(w, now, &kept, NULL);
	if (dropped)
		top_source_say(s, "%s: %llu records were dropped while the file lagged (counted lost in it)",
			       s->rec_path, (unsigned long long)dropped);
	return err < 0 ? err : (int64_t)kept;
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
