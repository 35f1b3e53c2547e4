/* SPDX-License-Identifier: GPL-2.0 */
/*
 * source.h - ntprof-top's background thread: runs the pump (core/pump.h)
 * from the live collector or from .ntp files replayed at their own pace (or
 * faster), into a small outbox the UI copies from and, when it is on, the
 * recording's writer. Only this
 * thread touches the model, the reader and the collector; it never touches
 * the terminal, and the UI never waits for it (the outbox lock is held only
 * for a copy).
 */
#ifndef NTP_TOP_SOURCE_H
#define NTP_TOP_SOURCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "cli/options.h"
#include "collector/collector.h"
#include "collector/pump_live.h"
#include "core/model/model.h"
#include "core/store/ntpfile.h"
#include "core/pump/pump.h"
#include "core/pump/pump_files.h"

#define TOP_OUTBOX 16
/* a message names a file: a path (PATH_MAX) and why, whole (docs/failures.md) */
#define TOP_MSG_LEN (4096 + 512)
#define TOP_MSGS 8
#define TOP_MAX_TOTALS 1024
/* A paced replay of a file still being written follows it (docs/top.md)
 * until its trailer, or until it has not grown for this long: the writer
 * flushes at least once a second while it runs (docs/recording.md). */
#define TOP_FOLLOW_IDLE_NS (10ull * 1000000000ull)

struct top_source_opts {
	const char *replay;		/* NULL: live; else the first file replayed */
	char *const *replay_files;	/* every file replayed (joined as ntprof report does) */
	size_t n_replay;
	double speed;			/* replay: 1 = own pace, 0 = as fast as possible */
	struct ntp_capture_opts cap;	/* the live collector's options and -i, as in ntprof record */
	unsigned interval_ms;		/* -i in ms (from cap.interval_s) */
	int stop_after;			/* 0: run until stopped or the replay ends; else intervals */
	int lossless;			/* batch: wait for the reader rather than drop intervals */
};

struct top_source {
	struct top_source_opts o;
	pthread_t thread;
	int started;
	atomic_int stop;
	atomic_uint interval_ms;	/* set by the UI, used from the next interval */
	atomic_uint sampling_req;	/* 0: none; else apply -s N to the running programs */
	atomic_int done;		/* no more snapshots will come (replay ended, -n reached, error) */

	struct ntp_file_info info;	/* of the replayed files, or built for the live run */
	struct ntp_model *model;
	struct ntp_pump *pump;
	struct ntp_files *files;	/* replay */
	struct ntp_live_source *live;	/* live */
	uint64_t wall0, t0;		/* replay: the pace's origin (wall clock, data clock) */
	unsigned pump_interval_ms;	/* the interval the pump runs on */

	pthread_mutex_t lock;		/* outbox, messages, recording */
	struct ntp_snapshot *outbox;	/* TOP_OUTBOX entries, a ring */
	uint64_t published;		/* snapshots published so far */
	uint64_t taken;			/* ... and taken by the reader (lossless mode) */
	pthread_cond_t taken_cond;
	char msgs[TOP_MSGS][TOP_MSG_LEN];
	uint64_t msg_after[TOP_MSGS];	/* the snapshots published before each message */
	unsigned msg_head, msg_tail;
	struct ntp_writer *writer;
	atomic_int recording;		/* writer != NULL, read without the lock per record */
	atomic_int rec_arming;		/* w: the recording waits for its baseline (source thread) */
	/* A replay's rec_add waits for the file outside the lock (rec_waiting,
	 * set before it lets go of it): a w meanwhile (rec_stopping) wakes it
	 * and waits on rec_cond until it holds the lock again, so the writer is
	 * never closed under a thread about to wait on it. rec_unsaved: the
	 * records that found no room meanwhile (the one it held), counted
	 * lost in the file, not waited for. Under the lock. */
	int rec_waiting, rec_stopping;
	uint64_t rec_unsaved;
	int rec_err;			/* the write error that stopped the last recording (-errno) */
	pthread_cond_t rec_cond;
	/* The exact counters as the source thread last got them (two readings,
	 * for a replay's counts between them), and those at the recording's
	 * start: a recording counts from its start, not from ntprof-top's. */
	struct ntp_total *tot_prev, *tot_cur, *tot_base, *tot_since, *tot_at;
	size_t n_prev, n_cur, n_base;
	uint64_t prev_as_of, cur_as_of;
	/* records lost before the source (ring full, a replay's lost blocks),
	 * cumulative, and at the recording's start; under the lock */
	uint64_t lost_cur, lost_base;
	char rec_path[512];
	/* A replay's damaged or cut files (the report's notes, src/cli/load.c):
	 * one line each, NUL-separated, n_notes of them, for the JSON line of
	 * interval notes_index (the last one published once reading ended, or
	 * the -n-th), the status line and stderr. Under the lock. */
	char *notes;
	size_t notes_len, n_notes;
	uint64_t notes_index;		/* UINT64_MAX: no interval carries them */
	int corrupt;			/* a block failed its CRC: exit 1, as ntprof report */
	atomic_int read_ended;		/* replay: every file read to its end */
	int follow_said;		/* replay: "waiting for the writer" said (source thread) */
	/* The join counters at the end of the last interval published: the
	 * outbox's snapshots carry those of their own interval (json-schema.md) */
	uint64_t last_host, last_target, last_matched;
	_Atomic uint64_t data_now_ns;	/* the data clock, as of the last record or tick;
					 * written by the source thread, read by the UI's w */
};

/* Opens the source (the replay file, or loads and attaches the collector).
 * 0, or -1 with a one-line reason. */
int top_source_open(struct top_source *s, const struct top_source_opts *o, char *err, size_t errlen);
int top_source_start(struct top_source *s);
/* Stops the thread (and waits for it). */
void top_source_stop(struct top_source *s);
/* Stops the thread, closes the recording, frees everything. */
void top_source_close(struct top_source *s);

/* Copies snapshots published after *seen (at most max, oldest first) and
 * advances *seen. Returns the number copied. Never blocks for long. */
int top_source_take(struct top_source *s, uint64_t *seen, struct ntp_snapshot *out, int max);
/* The notes on the replay's damaged or cut files: how many lines, and a
 * malloc'd copy of them, NUL-separated, in *out (NULL when none or out of
 * memory). With index != UINT64_MAX, only if the interval of that index
 * carries them (its JSON line); else whatever is known. */
size_t top_source_notes(struct top_source *s, uint64_t index, char **out);
/* 1 once every replayed file was read to its end (the intervals published
 * since may still gain the notes: wait for done before printing them). */
int top_source_read_ended(struct top_source *s);
/* Pops one queued message for the status line; 0 when none. */
int top_source_message(struct top_source *s, char *buf, size_t len);
/* The same, only a message said once at most shown snapshots were
 * published: one who prints every interval (batch mode) and has shown
 * that many prints a note after the intervals that came before it
 * ("replay ended" after the last), whatever moment it looks. */
int top_source_message_after(struct top_source *s, uint64_t shown, char *buf, size_t len);
void top_source_say(struct top_source *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Starts recording to path (0, or -1 with a reason), stops it (records written, or -errno). */
int top_source_record_start(struct top_source *s, const char *path, char *err, size_t errlen);
int64_t top_source_record_stop(struct top_source *s);
/* The sampling rate in force (changes with s in live mode). */
uint32_t top_source_sampling(struct top_source *s);
/* Recording state for the header. */
int top_source_recording(struct top_source *s, char *path, size_t len, uint64_t *records);

#endif
