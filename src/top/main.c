// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - ntprof-top: the UI thread. Copies the background thread's
 * snapshots into its own history, renders the view into a cell buffer and
 * blits it; blocks on the keyboard with a timeout tied to the interval, so
 * an idle monitor costs a few wakeups a second. Batch mode (-b) prints the
 * same screens, or JSON, without touching the terminal.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/render/report_whatif.h"
#include "core/model/whatif_work.h"
#include "collector/hostq.h"
#include "logcap.h"
#include "opts.h"
#include "source.h"
#include "core/store/ntpfile.h"
#include "core/render/esc.h"
#include "core/render/out.h"
#include "ui/blit.h"
#include "ui/render.h"
#include "ui/snapjson.h"
#include "ui/theme.h"

#define HIST_CAP 120	/* intervals kept for the sparklines and for stepping back */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* SIGINT/TERM/HUP/QUIT only set a flag: the loop leaves through its one
 * exit path, which restores the terminal. Installed before newterm() so
 * ncurses keeps its hands off them. */
static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

/* A fatal signal (a crash, or SIGBUS from a replayed file truncated under
 * its mapping) must not leave the terminal in the alternate screen with
 * echo off: the handler gives it back with async-signal-safe calls only
 * (blit.h), then hands the signal on: to the reader's SIGBUS handler
 * (core/ntpfile.h: it names the file and exits 1), or to the default
 * action (the core dump and exit status stay those of the signal). */
static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
static struct sigaction fatal_prev[sizeof(fatal_sigs) / sizeof(fatal_sigs[0])];

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	ntp_term_restore_from_signal();
	top_logcap_release_from_signal();	/* the reason must reach the real stderr */
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		const struct sigaction *p = &fatal_prev[i];

		if (fatal_sigs[i] != sig)
			continue;
		if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
			p->sa_sigaction(sig, si, uc);
			return;
		}
		if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN && p->sa_handler != SIG_ERR) {
			p->sa_handler(sig);
			return;
		}
	}
	/* the default action, taken when the faulting instruction runs again
	 * (or now, for a raised signal) */
	signal(sig, SIG_DFL);
	if (si && si->si_code <= 0)
		raise(sig);
}

static void install_fatal(void)
{
	struct sigaction sa;

	/* the reader's handler first, so it is the one chained to */
	ntp_reader_catch_sigbus("ntprof-top");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		sigaction(fatal_sigs[i], &sa, &fatal_prev[i]);
}

static void restore_at_exit(void)
{
	/* exit() from anywhere (another thread, a library) with the screen up */
	ntp_term_restore_from_signal();
	top_logcap_release_from_signal();
}

/* The UI's own history: copies, so the background thread never waits for it. */
struct hist {
	struct ntp_snapshot *buf;
	const struct ntp_snapshot **ptrs;
	int n, head;
};

static int hist_init(struct hist *h)
{
	h->buf = calloc(HIST_CAP, sizeof(*h->buf));
	h->ptrs = calloc(HIST_CAP, sizeof(*h->ptrs));
	h->n = h->head = 0;
	return h->buf && h->ptrs ? 0 : -1;
}

static void hist_free(struct hist *h)
{
	free(h->buf);
	free(h->ptrs);
}

/* Takes the intervals published since *seen into the history, at most max
 * of them (the source may publish as fast as they are taken: a replay of
 * short, nearly empty intervals; batch mode prints the last ones taken,
 * which must still be in the history). Returns how many. */
static int hist_pull(struct hist *h, struct top_source *src, uint64_t *seen, int max)
{
	struct ntp_snapshot tmp[4];
	int got, total = 0;

	while (total < max && (got = top_source_take(src, seen, tmp, max - total < 4 ? max - total : 4)) > 0) {
		for (int i = 0; i < got; i++) {
			h->buf[(h->head + h->n) % HIST_CAP] = tmp[i];
			if (h->n < HIST_CAP)
				h->n++;
			else
				h->head = (h->head + 1) % HIST_CAP;
		}
		total += got;
	}
	return total;
}

static struct ntp_history hist_view(struct hist *h)
{
	for (int i = 0; i < h->n; i++)
		h->ptrs[i] = &h->buf[(h->head + i) % HIST_CAP];
	return (struct ntp_history){ h->ptrs, h->n };
}

static void now_stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

/* The shown interval as a full screen of text (every group, 100 columns). */
static char *screen_text(const struct ntp_view *v, const struct ntp_history *h, const struct ntp_top_info *info,
			 int cols)
{
	struct ntp_view flat = *v;
	struct ntp_top_info in = *info;
	struct ntp_screen s;
	char *text;

	flat.mode = NTP_MODE_MAIN;
	flat.msg[0] = 0;
	in.hint = "";
	if (ntp_screen_init(&s, ntp_render_rows_needed(&flat, h), cols))
		return NULL;
	ntp_render(&s, &flat, h, &in);
	text = ntp_screen_to_text(&s);
	ntp_screen_free(&s);
	return text;
}

/* All or nothing (core/out.h): a full disk leaves no empty or cut file. */
static int write_file(const char *path, const char *text, char *err, size_t errlen)
{
	struct ntp_out o;

	if (ntp_out_open(&o, path, NULL, 0, err, errlen))
		return -1;
	fputs(text, o.f);
	return ntp_out_close(&o, err, errlen);
}

/* The what-if view as shown (after the main screen's text, 100 columns). */
static char *append_whatif(char *text, const struct ntp_view *v, const struct ntp_history *h,
			   const struct ntp_top_info *info)
{
	struct ntp_top_info in = *info;
	struct ntp_screen scr;
	char *w, *all = NULL;

	in.hint = "";
	if (ntp_screen_init(&scr, 24, 100))
		return text;
	ntp_render(&scr, v, h, &in);
	w = ntp_screen_to_text(&scr);
	ntp_screen_free(&scr);
	if (w && asprintf(&all, "%s\n%s", text, w) < 0)
		all = NULL;
	free(w);
	if (!all)
		return text;
	free(text);
	return all;
}

/* The what-if the view shows, at its QD: the report's "what_if" member
 * (docs/json-schema.md) for the selected group, fitted on the input the
 * screen's fit was made on (in: its base interval's group and the copies
 * of its load levels; paused, those taken while paused), so the numbers
 * are the screen's. The fit is deterministic: made again from the same
 * input it is the same model. ntp_whatif_json takes snapshots: one each
 * for the base and every level, holding that one group. */
static json_object *whatif_json(const struct ntp_view *v, const struct ntp_wi_input *in)
{
	struct ntp_snapshot *one = calloc((size_t)in->n_fit + 1, sizeof(*one));
	const struct ntp_snapshot *fit[NTP_WI_MAX_FIT];
	struct ntp_wi_request rq;
	json_object *o, *g;

	if (!one)
		return NULL;
	memset(&rq, 0, sizeof(rq));
	rq.qd[0] = v->wi_qd ? v->wi_qd : 1;
	rq.n_qd = 1;
	rq.params = in->p;
	one[0].index = in->index;
	one[0].n_groups = 1;
	one[0].groups[0] = in->base;
	/* already the load levels (ntp_wi_fit_groups): indexes 2 apart, so
	 * none is taken for another's predecessor */
	for (int i = 0; i < in->n_fit; i++) {
		one[i + 1].index = 2 * (uint64_t)i + 1;
		one[i + 1].n_groups = 1;
		one[i + 1].groups[0] = in->fit[i];
		fit[rq.n_fit++] = &one[i + 1];
	}
	rq.fit = fit;
	rq.fit_is_history = 1;	/* the history's groups as they are */
	o = ntp_whatif_json(&one[0], &rq);
	free(one);
	/* no --what-if-fit recordings here: the intervals kept stand for them
	 * (docs/json-schema.md) */
	if (o) {
		json_object_object_add(o, "fit_recordings", json_object_new_int64(0));
		json_object_object_add(o, "fit_intervals", json_object_new_int64(in->n_fit + in->n_left_out));
	}
	if (o && json_object_object_get_ex(o, "groups", &g) && (g = json_object_array_get_idx(g, 0))) {
		json_object_object_add(g, "fitted_on", json_object_new_uint64(in->index));
		if (json_object_object_get_ex(g, "intervals_left_out", NULL))
			json_object_object_add(g, "intervals_left_out", json_object_new_int64(in->n_left_out));
	}
	return o;
}

/* The host's tags of the selected group's namespace: --what-if-tags, else
 * the replayed recording's header (docs/ntp-format.md), else sysfs. */
static void host_queues(const struct ntp_view *v, const struct ntp_history *h, const struct top_source *src,
			int replay, struct ntp_wi_params *wi)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	int idx[NTP_SNAP_MAX_GROUPS], n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	const char *dev;

	if (wi->tags_from && !strcmp(wi->tags_from, "--what-if-tags"))
		return;
	wi->tags = wi->hw_queues = 0;
	wi->tags_from = NULL;
	if (!n)
		return;
	dev = s->groups[idx[v->selected >= 0 && v->selected < n ? v->selected : 0]].dev;
	if (replay) {
		const struct ntp_hostq *q = ntp_hostq_find(&src->info, dev);

		if (q && q->tags) {
			wi->tags = q->tags;
			wi->hw_queues = q->hw_queues;
			wi->tags_from = "recording";
		}
	} else if (!ntp_host_queues("", dev, &wi->tags, &wi->hw_queues)) {
		wi->tags_from = "sysfs";
	}
}

/* A message for the terminal: control bytes escaped (core/esc.h), whole
 * (ntp_esc() keeps NTP_ESC_LEN bytes: a long path would be cut). Malloc'd;
 * NULL on ENOMEM. */
static char *esc_whole(const char *in)
{
	size_t len = 4 * strlen(in) + 1;
	char *out = malloc(len);

	return out ? ntp_escape(in, out, len) : NULL;
}

/* Lines on stderr as "ntprof-top: LINE", escaped and whole. */
static void say_stderr(const char *line)
{
	char *e = esc_whole(line);

	fprintf(stderr, "ntprof-top: %s\n", e ? e : "out of memory");
	free(e);
}

/* The notes of the replay's damaged or cut files known now (n lines,
 * NUL-separated) on stderr. */
static void notes_stderr(struct top_source *src)
{
	char *notes, *p;
	size_t n = top_source_notes(src, UINT64_MAX, &notes);

	p = notes;
	for (size_t i = 0; i < n; i++, p += strlen(p) + 1)
		say_stderr(p);
	free(notes);
}

/* Interval s as its JSON line (docs/json-schema.md), with the notes on the
 * replay's files when it is the interval that carries them. */
static struct json_object *interval_json(struct top_source *src, const struct ntp_snapshot *s, const char *host)
{
	char *notes;
	size_t n = top_source_notes(src, s->index, &notes);
	struct json_object *j = ntp_snapshot_json(s, host, notes, n);

	free(notes);
	return j;
}

/* The what-if view's fit runs on a worker (core/whatif_work.h): asks it
 * for the shown interval's selected group at the view's QDs. Paused, the
 * intervals are taken once per interval and group shown (a parameter
 * changed keeps them): the history goes on dropping its oldest, and a
 * paused screen must not change by itself (docs/what-if.md). Without a
 * worker the input is taken all the same (S saves its what-if). */
struct wi_ui {
	struct ntp_wi_work *w;
	int no_worker;		/* it could not start: the view fits by itself */
	int have_in;		/* in is of the interval and group shown */
	struct ntp_wi_input in;
	struct ntp_wi_shown shown;
	uint64_t gen;
	int have_key;
	uint64_t key_index;
	uint8_t key_io;
	uint32_t key_len;
	char key_dev[NTP_DEV_LEN];
};

static void whatif_ask(struct wi_ui *u, const struct ntp_view *v, const struct ntp_history *h,
		       struct ntp_wi_params *wi)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	int idx[NTP_SNAP_MAX_GROUPS], n = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	const struct ntp_snap_group *g;
	struct ntp_wi_params p = *wi;
	int same;

	wi->shown = NULL;
	u->have_in = 0;
	if (!n)
		return;
	g = &s->groups[idx[v->selected >= 0 && v->selected < n ? v->selected : 0]];
	p.base_qd = v->wi_qd_was;
	p.shown = NULL;
	same = u->have_key && u->key_index == s->index && u->key_io == g->io && u->key_len == g->len &&
	       !strncmp(u->key_dev, g->dev, NTP_DEV_LEN);
	if (v->paused && same) {
		/* the intervals taken when the pause began, the parameters as now */
		u->in.p = p;
	} else {
		ntp_wi_input_of(h->snap, h->n, s, g, &p, &u->in);
		u->have_key = 1;
		u->key_index = s->index;
		u->key_io = g->io;
		u->key_len = g->len;
		memcpy(u->key_dev, g->dev, NTP_DEV_LEN);
	}
	u->have_in = 1;
	if (!u->w)
		return;
	ntp_wi_work_want(u->w, &u->in, v->wi_qd ? v->wi_qd : 1);
	u->gen = ntp_wi_work_get(u->w, &u->shown);
	wi->shown = &u->shown;
}

/* S in the what-if view waits for the worker's request (the text and the
 * JSON are the same finished result). A pass at nice 19 on a busy machine
 * can take long: past a moment the status line says so, and q or a signal
 * quits meanwhile, without saving (other keys wait). Returns 1 to quit. */
static int whatif_wait(struct wi_ui *u, struct ntp_view *v, const struct ntp_history *h, struct ntp_screen *scr,
		       const struct ntp_top_info *info)
{
	if (!u->w || !u->have_in || ntp_wi_work_wait_ms(u->w, 200))
		return 0;
	ntp_view_msg(v, "S: saving once the what-if is computed (q quits without saving)");
	u->gen = ntp_wi_work_get(u->w, &u->shown);
	if (scr->rows) {
		ntp_render(scr, v, h, info);
		ntp_term_blit(scr, 0);
	}
	while (!ntp_wi_work_wait_ms(u->w, 100))
		if (got_signal || ntp_term_getkey(0) == 'q')
			return 1;
	return 0;
}

/* The input of the what-if shown, for S: the worker's request done
 * (whatif_wait), its input the one the result was fitted on; without a
 * worker, the one the view fits by itself. NULL: nothing to fit. */
static const struct ntp_wi_input *whatif_done(struct wi_ui *u)
{
	if (!u->have_in)
		return NULL;
	if (!u->w)
		return &u->in;
	ntp_wi_work_wait(u->w);
	u->gen = ntp_wi_work_get(u->w, &u->shown);
	return ntp_wi_work_fitted(u->w);
}

/* S: the shown interval as PREFIX.txt (the screen) and PREFIX.json; in
 * the what-if view, its what-if in both, once computed (whatif_done). */
static void save_snapshot(struct ntp_view *v, const struct ntp_history *h, const struct ntp_top_info *info,
			  const char *dir, struct top_source *src, struct wi_ui *u)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	const struct ntp_wi_input *in = NULL;
	char stamp[32], base[600], path[640], err[800];
	struct json_object *j;
	char *text;

	if (!s) {
		ntp_view_msg(v, "nothing to save yet");
		return;
	}
	if (v->mode == NTP_MODE_WHATIF)
		in = whatif_done(u);
	now_stamp(stamp, sizeof(stamp));
	snprintf(base, sizeof(base), "%s/ntprof-top-%s-i%llu", dir, stamp, (unsigned long long)s->index);
	text = screen_text(v, h, info, 100);
	if (text && v->mode == NTP_MODE_WHATIF)
		text = append_whatif(text, v, h, info);
	snprintf(path, sizeof(path), "%s.txt", base);
	if (!text)
		snprintf(err, sizeof(err), "out of memory");
	if (!text || write_file(path, text, err, sizeof(err))) {
		free(text);
		ntp_view_msg(v, "cannot save: %s", err);
		return;
	}
	free(text);
	j = interval_json(src, s, info->host);
	if (j && in)
		json_object_object_add(j, "what_if", whatif_json(v, in));
	snprintf(path, sizeof(path), "%s.json", base);
	if (!j || write_file(path, json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY), err, sizeof(err))) {
		if (!j)
			snprintf(err, sizeof(err), "out of memory");
		/* the pair or nothing */
		snprintf(path, sizeof(path), "%s.txt", base);
		unlink(path);
		json_object_put(j);
		ntp_view_msg(v, "cannot save: %s", err);
		return;
	}
	json_object_put(j);
	ntp_view_msg(v, "saved %s.txt and .json", base);
}

static void toggle_recording(struct ntp_view *v, struct top_source *src, const char *dir)
{
	char path[600], stamp[32], err[4096 + 256];	/* a path and why */
	uint64_t n;

	if (top_source_recording(src, path, sizeof(path), &n)) {
		int64_t written = top_source_record_stop(src);

		if (written < 0)
			ntp_view_msg(v, "recording to %s failed while closing: %s (the whole blocks written are kept)",
				 path, strerror((int)-written));
		else
			ntp_view_msg(v, "recorded %lld records to %s (ntprof report reads it)",
				 (long long)written, path);
		return;
	}
	now_stamp(stamp, sizeof(stamp));
	snprintf(path, sizeof(path), "%s/ntprof-top-%s.ntp", dir, stamp);
	if (top_source_record_start(src, path, err, sizeof(err)))
		ntp_view_msg(v, "cannot record: %s", err);
	else
		ntp_view_msg(v, "recording to %s (w stops)", path);
}

/* What dispatch may know: namespaces and groups of what is shown, the history's span. */
static void view_ctx(const struct ntp_view *v, const struct ntp_history *h, char (*ns)[NTP_DEV_LEN],
		     struct ntp_view_ctx *ctx)
{
	const struct ntp_snapshot *s = ntp_history_shown(h, v);
	int idx[NTP_SNAP_MAX_GROUPS];

	memset(ctx, 0, sizeof(*ctx));
	ctx->ns = (const char (*)[NTP_DEV_LEN])ns;
	ctx->n_ns = ntp_snapshot_namespaces(h->n ? h->snap[h->n - 1] : NULL, ns, NTP_SNAP_MAX_GROUPS);
	ctx->n_visible = ntp_view_groups(v, s, idx, NTP_SNAP_MAX_GROUPS);
	ctx->n_hist = h->n;
	if (h->n) {
		ctx->oldest = h->snap[0]->index;
		ctx->newest = h->snap[h->n - 1]->index;
	}
}

/* A message for the status line: under the one shown if that one was not
 * drawn yet (a message is drawn at least once before a key or another
 * message takes its place, docs/top.md), else in its place; escaped
 * (core/esc.h). */
static void say(struct ntp_view *v, int *undrawn, const char *line)
{
	char *e = esc_whole(line);

	if (*undrawn)
		ntp_view_msg_add(v, e ? e : "out of memory");
	else
		ntp_view_msg(v, "%s", e ? e : "out of memory");
	free(e);
	*undrawn = 1;
}

/* The what-if view's tags and request, its worker started at the first
 * W. Returns 1 the one time the worker cannot start (the view then fits by
 * itself, on the UI thread, and no start is tried again). */
static int whatif_update(struct wi_ui *u, const struct ntp_view *v, const struct ntp_history *h,
			 const struct top_source *src, int replay, struct ntp_wi_params *wi)
{
	int failed = 0;

	host_queues(v, h, src, replay, wi);
	if (!u->w && !u->no_worker) {
		u->w = ntp_wi_work_start();
		failed = u->no_worker = !u->w;
	}
	whatif_ask(u, v, h, wi);
	return failed;
}

static int run_interactive(struct top_opts *o, struct top_source *src, const struct ntp_theme *theme, int glyphs)
{
	char ns[NTP_SNAP_MAX_GROUPS][NTP_DEV_LEN], err[256], rec_path[600], source[300], msg[TOP_MSG_LEN];
	char host[4 * NTP_HOSTNAME_LEN + 1];
	struct ntp_top_info info = { 0 };
	struct ntp_screen scr = { 0 };
	struct ntp_wi_params wi = { 0 };
	struct ntp_view_ctx ctx;
	struct ntp_view v;
	struct hist hist;
	uint64_t seen = 0;
	int dirty = 1, clear = 0, done_said = 0, notes_said = 0, undrawn = 0, done, ret = 0;
	/* a message not drawn yet, over a key's action (ntp_view_msg_hold()) */
	static struct ntp_msg_hold held;
	/* the what-if's worker, started at the first W */
	static struct wi_ui wiu;

	if (hist_init(&hist))
		return top_err("out of memory");
	ntp_view_init(&v, o->src.interval_ms, src->info.sampling);
	v.sampling_fixed = o->src.replay != NULL;
	v.wi_qd_was = o->wi.base_qd;	/* --what-if-qd-was; keys [ ] change it */
	if (o->src.replay)
		snprintf(source, sizeof(source), "replay %s%s", ntp_esc(o->src.replay),
			 o->src.speed == 1 ? "" : o->src.speed == 0 ? " (fast)" : " (faster)");
	else
		snprintf(source, sizeof(source), "live");
	/* names from the file's header and the command line: no control bytes on the screen */
	info.host = src->info.hostname[0] ? ntp_escape(src->info.hostname, host, sizeof(host)) : "?";
	info.source = source;
	info.rec_path = rec_path;
	wi = o->wi;
	info.wi = &wi;

	top_logcap_hold(1);
	if (ntp_term_open(theme, !o->no_color, err, sizeof(err))) {
		top_logcap_hold(0);
		hist_free(&hist);
		return top_err("%s", err);
	}
	/* Without colours the stages are told apart by shade. */
	info.glyphs = glyphs == NTP_GLYPHS_UTF8 && !ntp_term_colours() ? NTP_GLYPHS_MONO : glyphs;

	while (!got_signal) {
		/* Wake at least four times an interval (the snapshot shows up
		 * within a quarter of it), at most 20 times a second. */
		unsigned tmo = v.interval_ms / 4;
		/* (sooner while the what-if's worker computes what is shown) */
		int key = ntp_term_getkey(tmo < 50 || (v.mode == NTP_MODE_WHATIF && wi.shown && wiu.shown.pending) ? 50
					  : tmo > 250 ? 250 : (int)tmo);
		struct ntp_history h;

		if (hist_pull(&hist, src, &seen, HIST_CAP))
			dirty = 1;
		/* done read first: the messages the source queued before it set
		 * done ("replay ended: ...") are popped now, before the notes */
		done = atomic_load(&src->done);
		while (top_source_message(src, msg, sizeof(msg))) {
			say(&v, &undrawn, msg);
			dirty = 1;
		}
		/* the replay's damaged or cut files, one line each under its end
		 * (the whole notes are on stderr after q) */
		if (done && !notes_said && o->src.replay) {
			char *notes, *p;
			size_t n = top_source_notes(src, UINT64_MAX, &notes);

			p = notes;
			for (size_t i = 0; i < n; i++, p += strlen(p) + 1)
				say(&v, &undrawn, p);
			free(notes);
			notes_said = 1;
			dirty |= n > 0;
		}
		if (done && !done_said && !o->src.replay) {
			say(&v, &undrawn, "the live source stopped; q quits");
			done_said = dirty = 1;
		}
		h = hist_view(&hist);
		/* the what-if worker published a result: show it */
		if (wi.shown && v.mode == NTP_MODE_WHATIF && ntp_wi_work_get(wiu.w, &wiu.shown) != wiu.gen)
			dirty = 1;
		if (key == NTP_KEY_RESIZE) {
			dirty = 1;
		} else if (key != NTP_KEY_NONE) {
			enum ntp_action a;
			unsigned r;

			/* the key's message replaces the one shown, if that one
			 * was drawn; else goes under it */
			ntp_view_msg_hold(&v, &held, undrawn);
			a = ntp_key_action(&v, key);
			view_ctx(&v, &h, ns, &ctx);
			r = ntp_view_apply(&v, a, &ctx);
			if (r & NTP_REACT_QUIT)
				break;
			if (r & NTP_REACT_INTERVAL)
				atomic_store(&src->interval_ms, v.interval_ms);
			if (r & NTP_REACT_SAMPLING) {
				/* A .ntp file has one sampling rate in its header. */
				if (top_source_recording(src, rec_path, sizeof(rec_path), &info.rec_records)) {
					v.sampling = top_source_sampling(src);
					ntp_view_msg(&v, "stop recording (w) before changing the sampling");
				} else {
					atomic_store(&src->sampling_req, v.sampling);
				}
			}
			if (r & NTP_REACT_RECORD)
				toggle_recording(&v, src, o->dir);
			if (r & NTP_REACT_SNAPSHOT) {
				/* the what-if as it is now, not as last drawn */
				if (v.mode == NTP_MODE_WHATIF) {
					whatif_update(&wiu, &v, &h, src, o->src.replay != NULL, &wi);
					if (whatif_wait(&wiu, &v, &h, &scr, &info))
						break;
				}
				save_snapshot(&v, &h, &info, o->dir, src, &wiu);
			}
			ntp_view_msg_unhold(&v, &held);
			/* what the source said during the action (w's count of
			 * records dropped) goes under the key's message, not
			 * drawn yet either: the next pass would replace it */
			if (v.msg[0])
				undrawn = 1;
			while (top_source_message(src, msg, sizeof(msg)))
				say(&v, &undrawn, msg);
			clear |= !!(r & NTP_REACT_CLEAR);
			dirty = 1;
		}
		if (!dirty)
			continue;
		view_ctx(&v, &h, ns, &ctx);
		if (v.selected >= ctx.n_visible)
			v.selected = ctx.n_visible ? ctx.n_visible - 1 : 0;
		if (v.mode == NTP_MODE_WHATIF && whatif_update(&wiu, &v, &h, src, o->src.replay != NULL, &wi))
			say(&v, &undrawn, "what-if: no worker thread, fitting on the UI thread");
		info.recording = top_source_recording(src, rec_path, sizeof(rec_path), &info.rec_records);
		int rows, cols;

		ntp_term_size(&rows, &cols);
		if (rows != scr.rows || cols != scr.cols) {
			ntp_screen_free(&scr);
			if (ntp_screen_init(&scr, rows, cols)) {
				ret = top_err("out of memory");
				break;
			}
			clear = 1;
		}
		ntp_render(&scr, &v, &h, &info);
		ntp_term_blit(&scr, clear);
		dirty = clear = undrawn = 0;
	}
	ntp_term_close();
	top_logcap_hold(0);
	ntp_wi_work_stop(wiu.w);
	wiu.w = NULL;
	if (got_signal)
		fprintf(stderr, "ntprof-top: %s, stopping\n", strsignal(got_signal));
	ntp_screen_free(&scr);
	hist_free(&hist);
	return ret;
}

static int run_batch(struct top_opts *o, struct top_source *src, int glyphs)
{
	struct ntp_top_info info = { 0 };
	struct ntp_view v;
	struct hist hist;
	uint64_t seen = 0;
	int printed = 0, pending = 0;
	char msg[TOP_MSG_LEN], host[4 * NTP_HOSTNAME_LEN + 1], source[NTP_ESC_LEN];

	if (hist_init(&hist))
		return top_err("out of memory");
	ntp_view_init(&v, o->src.interval_ms, src->info.sampling);
	info.host = src->info.hostname[0] ? ntp_escape(src->info.hostname, host, sizeof(host)) : "?";
	info.source = o->src.replay ? ntp_escape(o->src.replay, source, sizeof(source)) : "live";
	info.glyphs = glyphs;
	info.hint = "";
	v.selected = -1;	/* nothing is selected on paper */
	while (!got_signal && (!o->iterations || printed < o->iterations)) {
		int done = atomic_load(&src->done);	/* before taking, so nothing is missed */
		int room = HIST_CAP - pending;
		int got = hist_pull(&hist, src, &seen, room);
		/* Once every replayed file was read, the newest interval taken
		 * waits for the thread's end: it may be the last, which carries
		 * the notes on the files (read after taking: those taken before
		 * were not last). The older ones print: holding them all would
		 * fill the history, and a full history takes nothing more. */
		int hold = !done && o->src.replay && top_source_read_ended(src);

		pending += got;
		for (int i = hist.n - pending; i < hist.n - hold; i++) {
			struct ntp_history h = hist_view(&hist);

			/* Show interval i as if it were the newest. */
			h.n = i + 1;
			if (o->json) {
				struct json_object *j = interval_json(src, h.snap[i], info.host);

				puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
				json_object_put(j);
			} else {
				char *text = screen_text(&v, &h, &info, o->width);
				size_t len = text ? strlen(text) : 0;

				/* One blank line between screens, not the unused rows. */
				while (len && text[len - 1] == '\n')
					len--;
				fwrite(text ? text : "", 1, len, stdout);
				fputs("\n\n", stdout);
				free(text);
			}
			/* a full disk or a closed pipe stops the batch with a word and exit 1 */
			if (ntp_out_flush(stdout)) {
				int e = errno;

				hist_free(&hist);
				return top_err("cannot write to stdout: %s", strerror(e));
			}
			pending--;
			if (++printed == o->iterations)
				break;
		}
		/* The source's notes (hooks chosen, replay ended) as they come,
		 * each after the intervals published before it: "replay ended"
		 * is said before the thread's end, while the last interval is
		 * still held here, and follows it. */
		while (top_source_message_after(src, seen - (uint64_t)pending, msg, sizeof(msg)))
			say_stderr(msg);
		if (!got && done && room > 0)	/* no room: more may be waiting */
			break;
		if (!got || hold)
			usleep(hold ? 1000 : 20000);
	}
	while (top_source_message(src, msg, sizeof(msg)))
		say_stderr(msg);
	hist_free(&hist);
	if (got_signal)
		fprintf(stderr, "ntprof-top: %s, stopping\n", strsignal(got_signal));
	if (!printed)
		return top_err("no interval was completed%s", o->src.replay ? " (is the recording empty?)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	struct ntp_theme theme;
	struct top_source src;
	struct top_opts o;
	char err[8192];	/* a reason naming a file: up to PATH_MAX and more */
	const char *cs;
	int ret, glyphs;

	ret = top_parse_opts(argc, argv, &o);
	if (ret > 0 && ntp_out_flush(stdout))	/* --help into a full disk */
		return top_err("cannot write to stdout: %s", strerror(errno));
	if (ret)
		return ret > 0 ? 0 : 2;
	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	glyphs = o.ascii || !cs || strcmp(cs, "UTF-8") ? NTP_GLYPHS_ASCII
	       : o.no_color ? NTP_GLYPHS_MONO : NTP_GLYPHS_UTF8;
	if (ntp_theme_load(o.no_color && !strcmp(o.theme, "default") ? "mono" : o.theme, &theme, err, sizeof(err)))
		return top_err("%s", err);
	if (!o.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return top_err("the full screen needs a terminal; -b prints plain text");
	/* before anything starts: TERM unset, unknown or dumb is refused with a word */
	if (!o.batch && ntp_term_check(err, sizeof(err)))
		return top_err("%s", err);
	install_signals();
	install_fatal();
	/* a file size limit (ulimit -f) is a full disk: `w` stops with EFBIG
	 * and keeps what fits, instead of the signal killing the monitor */
	signal(SIGXFSZ, SIG_IGN);
	atexit(restore_at_exit);
	if (top_source_open(&src, &o.src, err, sizeof(err))) {
		top_source_close(&src);
		return top_err("%s", err);
	}
	if (o.src.replay && top_check_replay(&o, &src.info)) {
		top_source_close(&src);
		return 2;
	}
	if (top_source_start(&src)) {
		top_source_close(&src);
		return top_err("cannot start the collection thread");
	}
	ret = o.batch ? run_batch(&o, &src, glyphs) : run_interactive(&o, &src, &theme, glyphs);
	/* A replay's damaged or cut files, one line each (the screen is gone,
	 * batch said the replay's end above); a block that failed its CRC is
	 * bad input: exit 1, as ntprof report (docs/failures.md). */
	top_source_stop(&src);
	notes_stderr(&src);
	if (!ret && src.corrupt)
		ret = 1;
	top_source_close(&src);
	return ret;
}
