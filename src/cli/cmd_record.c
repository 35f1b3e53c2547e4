// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_record.c - `ntprof record`: attach the hooks, sample commands until
 * Ctrl-C, SIGTERM or -d, print a line per group every -i seconds, save every
 * record with -o, and print the core's report at the end (docs/recording.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "cli.h"
#include "core/render/out.h"
#include "collector/collector.h"
#include "collector/hooks.h"
#include "collector/hostq.h"
#include "collector/pump_live.h"
#include "core/clock.h"
#include "core/render/metrics.h"
#include "core/model/model.h"
#include "core/store/ntpfile.h"
#include "core/pump/pump.h"
#include "core/render/report.h"
#include "options.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int stopped(void *ctx)
{
	(void)ctx;
	return stop_signal != 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof record [options]\n"
"Attaches ntprof's hooks, samples commands until Ctrl-C (or -d), prints a line\n"
"per group every interval, and the report at the end. Needs root.\n"
"\n");
	ntp_options_help(f, ntp_record_optsets, 4);
}

/* The sinks of a recording: the .ntp writer, and the per-interval line. */
struct rec_ctx {
	struct ntp_writer *w;
	uint64_t start;
	int lines;
};

static int w_record(void *ctx, const struct ntp_record *r)
{
	return ntp_writer_add(((struct rec_ctx *)ctx)->w, r);
}

static int w_totals(void *ctx, const struct ntp_total *t, size_t n, uint64_t as_of)
{
	return ntp_writer_set_totals(((struct rec_ctx *)ctx)->w, t, n, as_of);
}

/* The file says what was lost before it (docs/ntp-format.md, type 4), from
 * the next flush on: a file cut short keeps the count up to then. */
static int w_lost(void *ctx, uint64_t cumulative, uint64_t now)
{
	return ntp_writer_set_lost(((struct rec_ctx *)ctx)->w, cumulative, now);
}

static int w_tick(void *ctx, uint64_t now)
{
	return ntp_writer_tick(((struct rec_ctx *)ctx)->w, now);	/* it flushes: a write may fail */
}

static int line_interval(void *ctx, const struct ntp_snapshot *s)
{
	struct rec_ctx *rc = ctx;

	ntp_interval_lines(stdout, s, (s->end_ns - rc->start) / 1e9);
	fflush(stdout);
	return 0;
}

/* --metrics: a sink rewriting the file every interval (docs/recording.md,
 * "Prometheus"). A failed write is said once and makes the exit status 1;
 * it never stops the pump, so nothing of the recording is lost. */
struct metrics_ctx {
	const char *path;
	int failed;
	struct ntp_metrics_state st;
};

static int metrics_interval(void *ctx, const struct ntp_snapshot *s)
{
	struct metrics_ctx *mc = ctx;
	char err[600];

	if (ntp_metrics_write(mc->path, &mc->st, s, err, sizeof(err)) < 0 && !mc->failed++)
		ntp_err("--metrics %s", err);
	return 0;
}

/* The file is written once before attaching, with no group yet: a path that
 * cannot be written is refused before anything is loaded. */
static int metrics_open(struct metrics_ctx *mc, const struct ntp_capture_opts *cap, struct ntp_snapshot *tmp)
{
	char err[600];

	ntp_metrics_init(&mc->st);
	memset(tmp, 0, sizeof(*tmp));
	tmp->role = cap->co.role;
	tmp->transport = cap->co.transport;
	tmp->sampling = cap->co.sampling;
	if (ntp_metrics_write(mc->path, &mc->st, tmp, err, sizeof(err)) < 0)
		return ntp_err("--metrics %s", err);
	return 0;
}

static void say_stderr(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "ntprof: %s\n", line);
}

/* The report; after an error, marked partial on its first line (and in a
 * note, which the JSON report carries too). */
static void print_report(const struct ntp_snapshot *snap, const struct ntp_report_meta *meta,
			 const char *partial)
{
	if (partial[0])
		printf("PARTIAL REPORT (the recording stopped at an error: %s)\n", partial);
	ntp_report_print(stdout, snap, meta);
}

/* 0 when dir takes a new file for the effective ids, else the errno.
 * glibc asks the faccessat2 system call for AT_EACCESS and emulates it
 * itself only on ENOSYS; an older container's seccomp profile answers
 * EPERM instead, which would refuse -o and -j before recording. Then
 * access(2), which asks with the real ids, answers the same question when
 * they are the effective ones (and still says EPERM for an immutable
 * directory); otherwise (a set-id ntprof) the check is skipped and the
 * file's open says what fails. */
static int dir_writable(const char *dir)
{
	if (!faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS))
		return 0;
	if (errno != EPERM && errno != ENOSYS)
		return errno;
	if (geteuid() != getuid() || getegid() != getgid())
		return 0;
	return access(dir, W_OK | X_OK) ? errno : 0;
}

/* An output's directory must exist and take a new file before anything is
 * attached: the file is created only then (-o) or at the end (-j), after a
 * recording of hours. An existing path that is opened where it is needs no
 * new file: a device or a pipe (/dev/stdout, /dev/null, a FIFO; core/out.h),
 * and the recording (-o), which the writer opens in place; whether it may be
 * written is for that open to say. The directory's permission is asked with
 * the effective ids (AT_EACCESS), those the open will use, not access()'s
 * real ones. in_place: an existing regular file is written in place too (-o;
 * -j replaces one through a file beside it). 0, or -1 with a one-line reason
 * naming opt. */
static int out_dir_check(const char *opt, const char *path, int in_place, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	int e;

	if (!strcmp(path, "-"))
		return 0;
	if (!stat(path, &st) && (in_place || !S_ISREG(st.st_mode)))
		return 0;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		e = errno;
	else if (!S_ISDIR(st.st_mode))
		e = ENOTDIR;
	else if (!(e = dir_writable(dir)))
		return 0;
	snprintf(err, errlen, "%s %s: cannot create a file in %s: %s", opt, path, dir, strerror(e));
	return -1;
}

/* Options into *cap and *ro: 0, 1 after an error (printed), 2 after --help.
 * Every option error that needs no kernel is found here, before the
 * collector looks at the kernel (a command prepared on another machine
 * fails there too). */
static int parse(int argc, char **argv, struct ntp_capture_opts *cap, struct ntp_record_opts *ro)
{
	void *bases[] = { cap, cap, cap, ro };
	char err[NTP_ERR_LEN];
	int first;

	ntp_capture_defaults(cap);
	cap->co.say = say_stderr;
	memset(ro, 0, sizeof(*ro));
	if (ntp_options_json_stdout(argc, argv, ntp_record_optsets, 4))
		ntp_json_errors = true;	/* -j -: the options' errors are JSON too */
	first = ntp_options_parse(argc, argv, ntp_record_optsets, bases, 4, NULL, NULL,
				  " (ntprof record --help)", err, sizeof(err));
	if (first < 0)
		return ntp_err("%s", err);
	if (ro->help) {
		usage(stdout);
		return 2;
	}
	if (first < argc)
		return ntp_err("unexpected argument '%s' (ntprof record --help)", argv[first]);
	if (ro->json && !strcmp(ro->json, "-")) {
		ntp_json_errors = true;
		ro->offline = 1;	/* stdout carries the JSON document only */
	}
	/* -j must not replace the recording (-o) nor follow a link (core/out.h) */
	if (ro->json && ntp_out_check_report(ro->json, &ro->out, 1, err, sizeof(err)))
		return ntp_err("-j %s", err);
	if (ro->out && ntp_out_check(ro->out, NULL, 0, err, sizeof(err)))
		return ntp_err("-o %s", err);
	if ((ro->out && out_dir_check("-o", ro->out, 1, err, sizeof(err))) ||
	    (ro->json && out_dir_check("-j", ro->json, 0, err, sizeof(err))) ||
	    ntp_capture_check(cap, err, sizeof(err)))
		return ntp_err("%s", err);
	return 0;
}

static void print_legend(const struct ntp_capture_opts *cap)
{
	printf("every %g s, per group: sampled commands, rate, latency, and each stage's share of the mean\n",
	       cap->interval_s);
	if (cap->co.role == NTP_ROLE_HOST)
		printf("(*: network and target together; the target's side is not recorded)\n");
	if (cap->co.role == NTP_ROLE_TARGET)
		printf("(~: the target's receive path only; the network and the host are not recorded)\n");
	if (cap->co.exact_queues)
		printf("(QD (counted): commands in the group's stages on average, counted in the kernel)\n");
	ntp_interval_header_qd(stdout, cap->co.exact_queues);
	fflush(stdout);
}

/* The kernel side's counters, the SPDK side's losses and how the recording ended, on stderr. A
 * record closed after a missed completion is counted here as the kernel
 * closed it, per record of each side; the report's note counts, per group,
 * its commands with such a record (a command closed on both sides once, a
 * record of no group not at all), so the two differ and are named apart.
 * What misses a completion depends on the flavour attached
 * (docs/stage-model.md, "A kprobe can miss a command"). */
static void say_end(const struct ntp_collector_counters *cnt, int fentry)
{
	if (stop_signal)
		fprintf(stderr, "ntprof: stopped by %s\n", stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
	if (cnt->lost || cnt->missed_host || cnt->missed_target || cnt->table_full)
		fprintf(stderr, "ntprof: kernel side: %llu records lost (ring buffer full), %llu host and %llu "
			"target records closed after a missed completion, %llu not tracked (table full)\n",
			(unsigned long long)cnt->lost, (unsigned long long)cnt->missed_host,
			(unsigned long long)cnt->missed_target, (unsigned long long)cnt->table_full);
	if (cnt->missed_host || cnt->missed_target)
		fprintf(stderr, "ntprof: the kernel closed those %llu records when their request was reused: %s; "
			"the report's notes count the commands of each group with such a record\n",
			(unsigned long long)(cnt->missed_host + cnt->missed_target),
			fentry ? "with fentry/fexit, their completion came by a path no hook covers, or the "
				 "kernel skipped a program already running on that CPU"
			       : "with kprobes, the kernel skipped a kprobe program while another BPF program ran "
				 "on that CPU, or the completion came by a path no hook covers");
	/* the kernel's own count, which the bed checks against bpftool's */
	if (cnt->skipped)
		fprintf(stderr, "ntprof: kernel side: %llu runs of ntprof's programs skipped by the kernel (most: %llu of "
			"%s): a program is not run on a CPU where it is already running, as where a task was "
			"preempted inside it; as many records may lack a timestamp (docs/recording.md)\n",
			(unsigned long long)cnt->skipped, (unsigned long long)cnt->skipped_most_n, cnt->skipped_most);
	/* an SPDK side's losses by their own causes (docs/spdk.md); those of
	 * the stop were said at the stop, by process */
	if (cnt->spdk_lost_ring || cnt->spdk_lost_stop)
		fprintf(stderr, "ntprof: SPDK side: %llu records lost: %llu with its ring buffer full, %llu "
			"in flight past the stop's wait\n",
			(unsigned long long)(cnt->spdk_lost_ring + cnt->spdk_lost_stop),
			(unsigned long long)cnt->spdk_lost_ring, (unsigned long long)cnt->spdk_lost_stop);
}

/* One line on stderr (escaped as ntp_err does); with -j - too, where
 * stdout carries the report, whole, and the note says it. */
static void say_line(const char *line)
{
	bool json = ntp_json_errors;

	ntp_json_errors = false;
	ntp_err("%s", line);
	ntp_json_errors = json;
}

/*
 * Closes the recording: 0, or 1 after a write error met only now (printed).
 * One met during the run stopped it (rec_run: partial). One met only at
 * the close (in the blocks still queued at the stop, the end block, or the
 * file's close) leaves the run and its report as they were: the report is
 * whole, or as partial as an earlier error made it, and the file is not;
 * a note of the report says so, and no record count is claimed that the
 * close did not confirm (docs/recording.md, "Files").
 */
static int close_writer(struct ntp_writer *w, const char *out, uint64_t end, int *write_err, const char *partial,
			char *file_note, size_t note_len)
{
	uint64_t nrec = 0, lost = 0;
	int at_close = 0;
	int e = ntp_writer_close_why(w, end, &nrec, &lost, &at_close);	/* every queued block written */
	const char *report = partial[0] ? "the file lacks records this report holds" : "this report is whole, "
		"the file is not";
	char line[NTP_REPORT_NOTE_LEN];

	if (*write_err) {	/* a write error is sticky: close reports it again */
		fprintf(stderr, "ntprof: %s is incomplete: %llu records written, %llu after the write error "
			"missing\n", out, (unsigned long long)nrec, (unsigned long long)lost);
		return 0;
	}
	if (!e) {
		if (partial[0])
			fprintf(stderr, "ntprof: %llu records written to %s before the error; it lacks the rest\n",
				(unsigned long long)nrec, out);
		else
			fprintf(stderr, "ntprof: %llu records written to %s\n", (unsigned long long)nrec, out);
		return 0;
	}
	*write_err = e;
	if (at_close) {
		/* every block went to write(2); the close says they may not be stored */
		snprintf(line, sizeof(line), "%s: closing the file failed: %s", out, strerror(-e));
		say_line(line);
		fprintf(stderr, "ntprof: %s may be incomplete: the system did not confirm its %llu records\n", out,
			(unsigned long long)nrec);
		snprintf(file_note, note_len, "%s may be incomplete: closing it failed: %s; %s", out, strerror(-e),
			 partial[0] ? "the file may lack records this report holds" : "this report is whole");
	} else if (lost) {
		snprintf(line, sizeof(line), "%s: writing records failed: %s", out, strerror(-e));
		say_line(line);
		fprintf(stderr, "ntprof: %s is incomplete: %llu records written, %llu after the write error "
			"missing\n", out, (unsigned long long)nrec, (unsigned long long)lost);
		snprintf(file_note, note_len, "%s is incomplete: writing records failed at the end of the recording: "
			 "%s; %llu records written, %llu missing; %s", out, strerror(-e), (unsigned long long)nrec,
			 (unsigned long long)lost, report);
	} else {
		/* every record written; a totals, lost or end block was not */
		snprintf(line, sizeof(line), "%s: writing the file's end failed: %s", out, strerror(-e));
		say_line(line);
		fprintf(stderr, "ntprof: %s is incomplete: its %llu records are written, its end is not\n", out,
			(unsigned long long)nrec);
		snprintf(file_note, note_len, "%s is incomplete: writing its end failed at the end of the recording: "
			 "%s; its %llu records are written; %s", out, strerror(-e), (unsigned long long)nrec, report);
	}
	return 1;
}

/* The final report (text, JSON or both); 0 or 1 after an error. */
static int write_report(const struct ntp_snapshot *snap, struct ntp_report_meta *meta, const char *json,
			const char *partial)
{
	int ret = 0;

	if (json && ntp_json_errors && partial[0])
		return 0;	/* stdout already carries the error document: one document only */
	if (json) {
		json_object *o = ntp_report_json(snap, meta);
		struct ntp_out out;
		char err[NTP_ERR_LEN];

		if (partial[0])
			json_object_object_add(o, "partial", json_object_new_string(partial));
		/* all or nothing, every write checked (core/out.h) */
		if (ntp_out_open(&out, json, NULL, 0, err, sizeof(err))) {
			ret = ntp_err("cannot write the JSON report: %s", err);
		} else {
			fprintf(out.f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
										 JSON_C_TO_STRING_NOSLASHESCAPE));
			if (ntp_out_close(&out, err, sizeof(err))) {
				ntp_json_errors = false;	/* stdout may be what failed */
				ret = ntp_err("cannot write the JSON report: %s", err);
			}
		}
		json_object_put(o);
		if (!strcmp(json, "-"))
			return ret;
	}
	print_report(snap, meta, partial);
	return ret;
}

/* One recording: the live source, the model, the pump and its sinks. */
struct recording {
	struct ntp_live_source *ls;
	struct ntp_model *m;
	struct ntp_pump *p;
	struct ntp_pump_config pc;
	struct rec_ctx rc;
	struct ntp_file_info fi;
	struct ntp_snapshot *snap;
	/* Why the recording stopped early (a ring buffer read or a file write
	 * failed): the report then covers only what came before, and says so. */
	char partial[600];
	/* A write error met only at the close: the file is incomplete (and
	 * the report is not made partial by it), or "" */
	char file_note[NTP_REPORT_NOTE_LEN];
	int write_err;
	struct metrics_ctx *mc;		/* --metrics, or NULL */
};

/* Attaches, opens the file and builds the pump: 0, or 1 after an error (printed). */
static int rec_open(struct recording *r, const struct ntp_capture_opts *cap, const struct ntp_record_opts *ro)
{
	char err[512];

	r->snap = calloc(1, sizeof(*r->snap));
	r->ls = calloc(1, sizeof(*r->ls));
	if (!r->snap || !r->ls)
		return ntp_err("out of memory");
	if (ro->metrics) {
		r->mc = calloc(1, sizeof(*r->mc));
		if (!r->mc)
			return ntp_err("out of memory");
		r->mc->path = ro->metrics;
		if (metrics_open(r->mc, cap, r->snap))
			return 1;
	}
	r->ls->c = ntp_collector_open(&cap->co, err, sizeof(err));
	if (!r->ls->c)
		return ntp_err("%s", err);
	r->rc.start = ntp_mono_ns();
	ntp_live_file_info(&r->fi, &cap->co, r->rc.start, NTP_VERSION);
	if (ro->out && !(r->rc.w = ntp_writer_open(ro->out, &r->fi, err, sizeof(err))))
		return ntp_err("%s", err);
	/* A write that blocks must not stop the draining of the ring buffer:
	 * the file is written in a thread of its own, through a bounded queue
	 * (docs/recording.md, "Files"); without one it is written here. */
	if (r->rc.w)
		ntp_writer_thread(r->rc.w, NTP_WRITER_QUEUE);
	r->pc.model = r->m = ntp_model_new(&(struct ntp_model_config){ .role = cap->co.role,
		.transport = cap->co.transport, .impl_host = r->fi.impl_host, .impl_target = r->fi.impl_target,
		.sampling = cap->co.sampling });
	r->pc.start_ns = r->rc.start;
	r->pc.interval_ns = (uint64_t)(cap->interval_s * 1e9 + 0.5);
	/* -d's end is the live source's: the pull that reaches it drains the
	 * rest and ends, and the pump closes the last interval after the
	 * records drained (which the file holds too), at their latest stamp
	 * when past the end (collector/pump_live.h); the pump's own end_ns
	 * would close it at -d's end, before them */
	r->ls->end_ns = ro->duration ? r->rc.start + (uint64_t)ro->duration * 1000000000ull : 0;
	r->p = r->m ? ntp_pump_new(&r->pc) : NULL;
	if (!r->p)
		return ntp_err("out of memory");
	if (r->rc.w)
		ntp_pump_add_sink(r->p, &(struct ntp_pump_sink){ .record = w_record, .totals = w_totals,
								.tick = w_tick, .lost = w_lost,
								.ctx = &r->rc });
	if (!ro->offline)
		ntp_pump_add_sink(r->p, &(struct ntp_pump_sink){ .interval = line_interval, .ctx = &r->rc });
	if (r->mc)
		ntp_pump_add_sink(r->p, &(struct ntp_pump_sink){ .interval = metrics_interval, .ctx = r->mc });
	return 0;
}

/* Runs until Ctrl-C, -d or an error, drains, detaches and closes the file:
 * 0, or 1 after an error (printed; the report follows, marked partial). */
static int rec_run(struct recording *r, const char *out)
{
	struct ntp_collector_counters cnt;
	int run, ret = 0, fentry;
	uint64_t now;

	run = ntp_pump_run(r->p, &(struct ntp_pump_source){ ntp_live_pull, r->ls }, stopped, NULL);
	if (run < 0 && r->rc.w && ntp_pump_sink_error(r->p) == run) {
		r->write_err = run;
		snprintf(r->partial, sizeof(r->partial), "%s: writing records failed: %s", out, strerror(-run));
	} else if (run < 0) {
		snprintf(r->partial, sizeof(r->partial), "reading the BPF ring buffer failed: %s", strerror(-run));
	}
	if (r->partial[0])
		ret = ntp_err("%s", r->partial);
	/* Stop: take what is left in the ring buffer (unless reading it just
	 * failed), then detach every link. */
	now = ntp_live_drain(r->ls, r->p, !r->partial[0], r->ls->end_ns);
	ntp_collector_counters(r->ls->c, &cnt);
	fentry = ntp_collector_uses_fentry(r->ls->c);
	ntp_collector_close(r->ls->c);
	r->ls->c = NULL;
	ntp_pump_finish(r->p, now, r->snap);
	/* --metrics: the last interval's gauges dropped, the counters kept
	 * (docs/recording.md, "Prometheus"): no exporter is left showing them */
	if (r->mc) {
		char err[600];

		if (ntp_metrics_write_end(r->mc->path, &r->mc->st, r->snap, err, sizeof(err)) < 0 &&
		    !r->mc->failed++)
			ntp_err("--metrics %s", err);
	}
	if (r->rc.w) {
		if (close_writer(r->rc.w, out, ntp_pump_now(r->p), &r->write_err, r->partial, r->file_note,
				 sizeof(r->file_note)))
			ret = 1;
		r->rc.w = NULL;
	}
	say_end(&cnt, fentry);
	return ret;
}

/* The final report, with the machine and what went wrong: that of
 * `ntprof report` of the file (docs/recording.md), the kernel's counts
 * are on stderr (say_end). */
static int rec_report(struct recording *r, const struct ntp_capture_opts *cap, const char *json)
{
	struct ntp_report_meta meta;

	memset(&meta, 0, sizeof(meta));
	if (cap->co.role == NTP_ROLE_TARGET) {
		meta.target_name = r->fi.hostname;
		meta.target_kernel = r->fi.kernel;
	} else {
		meta.host_name = r->fi.hostname;
		meta.host_kernel = r->fi.kernel;
	}
	/* the header's host queues, as `ntprof report` of the file has them */
	meta.hostq = r->fi.n_hostq ? r->fi.hostq : NULL;
	meta.n_hostq = r->fi.n_hostq;
	if (r->partial[0])
		ntp_report_note(&meta, "PARTIAL: the recording stopped after %.1f s: %s",
				(ntp_pump_now(r->p) - r->rc.start) / 1e9, r->partial);
	if (r->file_note[0])
		ntp_report_note(&meta, "%s", r->file_note);
	return write_report(r->snap, &meta, json, r->partial);
}

static void rec_free(struct recording *r)
{
	if (r->ls && r->ls->c)
		ntp_collector_close(r->ls->c);
	if (r->rc.w)
		ntp_writer_close(r->rc.w, r->rc.start);
	ntp_pump_free(r->p);
	ntp_model_free(r->m);
	free(r->ls);
	free(r->snap);
	free(r->mc);
}

/* -t against the controllers and nvmet ports there: a warning, not a
 * refusal (docs/recording.md, "The transport check"). Before the load, so
 * that it comes before whatever else fails. */
static void transport_check(const struct ntp_capture_opts *cap)
{
	char line[600];

	if (ntp_transport_mismatch(ntp_sys_root(), cap->co.transport,
				   (cap->co.role & NTP_ROLE_HOST) && !cap->co.spdk_host,
				   (cap->co.role & NTP_ROLE_TARGET) && !cap->co.spdk_target, line, sizeof(line)))
		fprintf(stderr, "ntprof: %s\n", line);
}

int cmd_record(int argc, char **argv)
{
	struct ntp_capture_opts cap;
	struct ntp_record_opts ro;
	struct recording r;
	struct sigaction sa;
	int ret;

	ret = parse(argc, argv, &cap, &ro);
	if (ret)
		return ret == 2 ? 0 : ret;
	/* Signals first: a Ctrl-C while attaching still ends in a clean close. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	transport_check(&cap);
	memset(&r, 0, sizeof(r));
	ret = rec_open(&r, &cap, &ro);
	if (!ret) {
		fprintf(stderr, "ntprof: profiling as %s, sampling 1 of %u commands%s%s; %s\n",
			ntp_role_name(cap.co.role), cap.co.sampling,
			cap.co.exact_queues ? ", queue depths counted on every command" : "",
			ro.out ? ", saving records" : "", ro.duration ? "stops after -d" : "Ctrl-C to stop");
		if (!ro.offline)
			print_legend(&cap);
		ret = rec_run(&r, ro.out);
		if (rec_report(&r, &cap, ro.json))
			ret = 1;
		if (r.mc && r.mc->failed)
			ret = 1;
	}
	rec_free(&r);
	return ret;
}
