// SPDX-License-Identifier: GPL-2.0
/* keys.c - the key table and the pure dispatch of ntprof-top. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "keys.h"
#include "../core/model/whatif.h"

/* the views of the data: the keys that choose and step through it work in each */
#define MAIN_DETAIL (NTP_MODE_MAIN | NTP_MODE_DETAIL | NTP_MODE_WHATIF)

const struct ntp_binding ntp_bindings[] = {
	{ 'h',                NTP_ACT_HELP,          "h ? F1",  "this help (any of them again: back)", NTP_MODE_ANY, "h help", 1 },
	{ '?',                NTP_ACT_HELP,          NULL,      NULL, NTP_MODE_ANY, NULL, 0 },
	{ NTP_KEY_F1,         NTP_ACT_HELP,          NULL,      NULL, NTP_MODE_ANY, NULL, 0 },
	{ NTP_KEY_ESC,        NTP_ACT_BACK,          "Esc",     "back to the main screen", NTP_MODE_DETAIL | NTP_MODE_HELP | NTP_MODE_WHATIF, "Esc back", 2 },
	{ 'd',                NTP_ACT_DETAIL,        "d",       "detail: the components of the selected group", MAIN_DETAIL, "d detail", 7 },
	{ 'W',                NTP_ACT_WHATIF,        "W",       "what-if: the selected group predicted at another QD", MAIN_DETAIL, NULL, 0 },
	{ '>',                NTP_ACT_WI_QD_UP,      "< > [ ]", "what-if: lower / raise the target QD; [ ]: the run's QD (given)", NTP_MODE_WHATIF, "< > target QD", 2 },
	{ '<',                NTP_ACT_WI_QD_DOWN,    NULL,      NULL, NTP_MODE_WHATIF, NULL, 0 },
	{ '.',                NTP_ACT_WI_QD_UP,      NULL,      NULL, NTP_MODE_WHATIF, NULL, 0 },
	{ ',',                NTP_ACT_WI_QD_DOWN,    NULL,      NULL, NTP_MODE_WHATIF, NULL, 0 },
	/* the QD the run has, given (below 1: inferred by Little's law) */
	{ ']',                NTP_ACT_WI_WAS_UP,     NULL,      NULL, NTP_MODE_WHATIF, "[ ] run's QD", 3 },
	{ '[',                NTP_ACT_WI_WAS_DOWN,   NULL,      NULL, NTP_MODE_WHATIF, NULL, 0 },
	{ NTP_KEY_UP,         NTP_ACT_SELECT_UP,     "Up Down", "select a group", MAIN_DETAIL, NULL, 0 },
	{ NTP_KEY_DOWN,       NTP_ACT_SELECT_DOWN,   NULL,      NULL, MAIN_DETAIL, NULL, 0 },
	{ 'n',                NTP_ACT_NS_NEXT,       "n N",     "next / previous namespace (or all)", MAIN_DETAIL, "n ns", 8 },
	{ 'N',                NTP_ACT_NS_PREV,       NULL,      NULL, MAIN_DETAIL, NULL, 0 },
	{ 't',                NTP_ACT_IO_CYCLE,      "t",       "I/O type: all, read, write", MAIN_DETAIL, "t type", 9 },
	{ 's',                NTP_ACT_SAMPLING,      "s",       "sampling: one command in 1, 10, 100, 1000 (live)", MAIN_DETAIL, "s sampling", 10 },
	{ '+',                NTP_ACT_INTERVAL_UP,   "+ -",     "longer / shorter interval", MAIN_DETAIL, NULL, 0 },
	{ '-',                NTP_ACT_INTERVAL_DOWN, NULL,      NULL, MAIN_DETAIL, NULL, 0 },
	{ ' ',                NTP_ACT_PAUSE,         "Space",   "pause / resume the screen (collection goes on)", MAIN_DETAIL, "Space pause", 6 },
	{ NTP_KEY_LEFT,       NTP_ACT_STEP_BACK,     "Left Right", "older / newer interval while paused", MAIN_DETAIL, "Left/Right step", 2 },
	{ NTP_KEY_RIGHT,      NTP_ACT_STEP_FORWARD,  NULL,      NULL, MAIN_DETAIL, NULL, 0 },
	{ 'w',                NTP_ACT_RECORD,        "w",       "start / stop recording to a .ntp file", MAIN_DETAIL, "w rec", 4 },
	{ 'S',                NTP_ACT_SNAPSHOT,      "S",       "save the shown interval as text and JSON", MAIN_DETAIL, "S save", 5 },
	{ NTP_KEY_CTRL_L,     NTP_ACT_REDRAW,        "Ctrl-L",  "redraw the terminal", NTP_MODE_ANY, NULL, 0 },
	{ 'q',                NTP_ACT_QUIT,          "q",       "quit", NTP_MODE_ANY, "q quit", 0 },
};
const int ntp_n_bindings = sizeof(ntp_bindings) / sizeof(ntp_bindings[0]);

/*
 * A binding's footer item in the view's state, or NULL: the table's words,
 * less what the state makes wrong (docs/top.md, "Keys"): a replay's fixed
 * sampling; d and h on the screens Esc leaves (Esc back says it); the
 * steps only while paused, and Space then resumes. *rank: the importance
 * (0 first), the table's, the paused screen's own keys raised.
 */
static const char *foot_item(const struct ntp_binding *b, const struct ntp_view *v, int *rank)
{
	if (!b->foot || !(b->modes & v->mode))
		return NULL;
	*rank = b->foot_rank;
	switch (b->act) {
	case NTP_ACT_SAMPLING:
		return v->sampling_fixed ? NULL : b->foot;
	case NTP_ACT_DETAIL:
		return v->mode == NTP_MODE_DETAIL ? NULL : b->foot;
	case NTP_ACT_HELP:
		return v->mode == NTP_MODE_HELP ? NULL : b->foot;
	case NTP_ACT_STEP_BACK:
		return v->paused ? b->foot : NULL;
	case NTP_ACT_PAUSE:
		if (!v->paused)
			return b->foot;
		*rank = 2;
		return "Space resume";
	default:
		return b->foot;
	}
}

void ntp_key_footer(const struct ntp_view *v, int width, char *buf, size_t len)
{
	char keep[64] = { 0 };	/* per binding: in the footer */
	size_t used = 0;
	int room = width;

	if (!len)
		return;
	buf[0] = 0;
	/* the most important first, while they fit: none after one that does not */
	for (int rank = 0, full = 0; rank <= NTP_FOOT_RANKS && !full; rank++)
		for (int i = 0; i < ntp_n_bindings && i < (int)sizeof(keep) && !full; i++) {
			const char *item;
			int r, n;

			if (!(item = foot_item(&ntp_bindings[i], v, &r)) || r != rank)
				continue;
			n = (int)strlen(item) + (room < width ? 2 : 0);
			if (n > room)
				full = 1;
			else
				keep[i] = 1, room -= n;
		}
	/* shown in the table's order */
	for (int i = 0; i < ntp_n_bindings && i < (int)sizeof(keep); i++) {
		const char *item;
		int r, n;

		if (!keep[i] || !(item = foot_item(&ntp_bindings[i], v, &r)))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "  " : "", item);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = 0;
			return;
		}
		used += (size_t)n;
	}
}

static const unsigned interval_steps[] = { 250, 500, 1000, 2000, 5000, 10000, 30000 };
static const unsigned sampling_steps[] = { 1, 10, 100, 1000 };
#define N_INTERVAL_STEPS (sizeof(interval_steps) / sizeof(interval_steps[0]))
#define N_SAMPLING_STEPS (sizeof(sampling_steps) / sizeof(sampling_steps[0]))

void ntp_view_init(struct ntp_view *v, unsigned interval_ms, unsigned sampling)
{
	memset(v, 0, sizeof(*v));
	v->mode = NTP_MODE_MAIN;
	v->back_mode = NTP_MODE_MAIN;
	v->io = -1;
	v->interval_ms = interval_ms;
	v->sampling = sampling;
	v->wi_qd = 16;
}

/* msg, which snprintf cut at len - 1 bytes: back to a character's start
 * (a UTF-8 sequence cut short goes whole), without a line break left at
 * its end. */
static void msg_cut(char *msg, size_t len)
{
	size_t end = len - 1, k = end, need;
	unsigned char c;

	while (k > 0 && ((unsigned char)msg[k - 1] & 0xC0) == 0x80)
		k--;
	if (k > 0) {
		c = (unsigned char)msg[k - 1];
		need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (k - 1 + need > end)
			end = k - 1;
	}
	while (end > 0 && msg[end - 1] == '\n')
		end--;
	msg[end] = 0;
}

void ntp_view_msg(struct ntp_view *v, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	v->msg_cut = n >= (int)sizeof(v->msg);
	if (v->msg_cut)
		msg_cut(v->msg, sizeof(v->msg));
}

void ntp_view_msg_add(struct ntp_view *v, const char *line)
{
	size_t used = strlen(v->msg), cap = sizeof(v->msg);
	int n;

	if (v->msg_cut)
		return;
	n = snprintf(v->msg + used, cap - used, "%s%s", used ? "\n" : "", line);
	if (n < 0 || (size_t)n >= cap - used) {
		v->msg_cut = 1;
		msg_cut(v->msg, cap);
	}
}

void ntp_view_msg_hold(struct ntp_view *v, struct ntp_msg_hold *h, int undrawn)
{
	h->msg[0] = 0;
	h->cut = 0;
	if (undrawn && v->msg[0]) {
		memcpy(h->msg, v->msg, sizeof(h->msg));
		h->cut = v->msg_cut;
	}
	v->msg[0] = 0;
	v->msg_cut = 0;
}

void ntp_view_msg_unhold(struct ntp_view *v, const struct ntp_msg_hold *h)
{
	struct ntp_msg_hold said;

	if (!h->msg[0])
		return;
	memcpy(said.msg, v->msg, sizeof(said.msg));
	memcpy(v->msg, h->msg, sizeof(v->msg));
	v->msg_cut = h->cut;
	if (said.msg[0])
		ntp_view_msg_add(v, said.msg);
}

enum ntp_action ntp_key_action(const struct ntp_view *v, int key)
{
	for (int i = 0; i < ntp_n_bindings; i++)
		if (ntp_bindings[i].key == key && (ntp_bindings[i].modes & v->mode))
			return ntp_bindings[i].act;
	return NTP_ACT_NONE;
}

unsigned ntp_interval_step(unsigned ms, int dir)
{
	if (dir > 0) {
		for (size_t i = 0; i < N_INTERVAL_STEPS; i++)
			if (interval_steps[i] > ms)
				return interval_steps[i];
		return interval_steps[N_INTERVAL_STEPS - 1] > ms ? interval_steps[N_INTERVAL_STEPS - 1] : ms;
	}
	for (size_t i = N_INTERVAL_STEPS; i-- > 0;)
		if (interval_steps[i] < ms)
			return interval_steps[i];
	return interval_steps[0] < ms ? interval_steps[0] : ms;
}

unsigned ntp_sampling_next(unsigned n)
{
	for (size_t i = 0; i < N_SAMPLING_STEPS; i++)
		if (sampling_steps[i] > n)
			return sampling_steps[i];
	return sampling_steps[0];
}

/* Index of the view's namespace in the known list, -1 for "all" or unknown. */
static int ns_index(const struct ntp_view *v, const struct ntp_view_ctx *ctx)
{
	for (int i = 0; i < ctx->n_ns; i++)
		if (!strcmp(ctx->ns[i], v->ns))
			return i;
	return -1;
}

/* all -> first -> ... -> last -> all (dir > 0), or backwards. */
static void ns_cycle(struct ntp_view *v, const struct ntp_view_ctx *ctx, int dir)
{
	int i = v->ns[0] ? ns_index(v, ctx) : -1;

	if (!ctx->n_ns) {
		v->ns[0] = 0;
		snprintf(v->msg, sizeof(v->msg), "no namespace seen yet");
		return;
	}
	if (dir > 0)
		i = i + 1 >= ctx->n_ns ? -1 : i + 1;
	else
		i = i < 0 ? ctx->n_ns - 1 : i - 1;
	if (i < 0)
		v->ns[0] = 0;
	else
		snprintf(v->ns, sizeof(v->ns), "%s", ctx->ns[i]);
	v->selected = 0;
	snprintf(v->msg, sizeof(v->msg), "namespace: %s", v->ns[0] ? v->ns : "all");
}

static const char *io_name(int io)
{
	return io == NTP_IO_READ ? "read" : io == NTP_IO_WRITE ? "write" : "all";
}

unsigned ntp_view_apply(struct ntp_view *v, enum ntp_action a, const struct ntp_view_ctx *ctx)
{
	unsigned ms;

	switch (a) {
	case NTP_ACT_NONE:
		return 0;
	case NTP_ACT_HELP:
		if (v->mode == NTP_MODE_HELP) {
			v->mode = v->back_mode;
		} else {
			v->back_mode = v->mode;
			v->mode = NTP_MODE_HELP;
		}
		return NTP_REACT_REDRAW;
	case NTP_ACT_BACK:
		v->mode = v->mode == NTP_MODE_HELP ? v->back_mode : NTP_MODE_MAIN;
		return NTP_REACT_REDRAW;
	case NTP_ACT_DETAIL:
		v->mode = v->mode == NTP_MODE_DETAIL ? NTP_MODE_MAIN : NTP_MODE_DETAIL;
		return NTP_REACT_REDRAW;
	case NTP_ACT_NS_NEXT:
	case NTP_ACT_NS_PREV:
		ns_cycle(v, ctx, a == NTP_ACT_NS_NEXT ? 1 : -1);
		return NTP_REACT_REDRAW;
	case NTP_ACT_IO_CYCLE:
		v->io = v->io < 0 ? NTP_IO_READ : v->io == NTP_IO_READ ? NTP_IO_WRITE : -1;
		v->selected = 0;
		snprintf(v->msg, sizeof(v->msg), "I/O type: %s", io_name(v->io));
		return NTP_REACT_REDRAW;
	case NTP_ACT_SAMPLING:
		if (v->sampling_fixed) {
			snprintf(v->msg, sizeof(v->msg), "sampling is fixed by the recording (1 in %u)", v->sampling);
			return NTP_REACT_REDRAW;
		}
		v->sampling = ntp_sampling_next(v->sampling);
		snprintf(v->msg, sizeof(v->msg), "sampling: one command in %u", v->sampling);
		return NTP_REACT_REDRAW | NTP_REACT_SAMPLING;
	case NTP_ACT_INTERVAL_UP:
	case NTP_ACT_INTERVAL_DOWN:
		ms = ntp_interval_step(v->interval_ms, a == NTP_ACT_INTERVAL_UP ? 1 : -1);
		if (ms == v->interval_ms) {
			snprintf(v->msg, sizeof(v->msg), "interval stays %g s (the %s)", ms / 1000.0,
				 a == NTP_ACT_INTERVAL_UP ? "longest" : "shortest");
			return NTP_REACT_REDRAW;
		}
		v->interval_ms = ms;
		snprintf(v->msg, sizeof(v->msg), "interval: %g s (from the next one)", ms / 1000.0);
		return NTP_REACT_REDRAW | NTP_REACT_INTERVAL;
	case NTP_ACT_PAUSE:
		if (v->paused) {
			v->paused = 0;
			snprintf(v->msg, sizeof(v->msg), "resumed");
		} else if (!ctx->n_hist) {
			snprintf(v->msg, sizeof(v->msg), "nothing to pause yet");
		} else {
			v->paused = 1;
			v->shown = ctx->newest;
			snprintf(v->msg, sizeof(v->msg), "paused at interval %llu; Left/Right step, Space resumes",
				 (unsigned long long)v->shown);
		}
		return NTP_REACT_REDRAW;
	case NTP_ACT_STEP_BACK:
	case NTP_ACT_STEP_FORWARD:
		if (!v->paused) {
			snprintf(v->msg, sizeof(v->msg), "pause first (Space) to step through intervals");
			return NTP_REACT_REDRAW;
		}
		/* Older intervals may have left the history while paused. */
		if (v->shown < ctx->oldest)
			v->shown = ctx->oldest;
		if (a == NTP_ACT_STEP_BACK) {
			if (v->shown > ctx->oldest)
				v->shown--;
			else
				snprintf(v->msg, sizeof(v->msg), "interval %llu is the oldest kept",
					 (unsigned long long)v->shown);
		} else {
			if (v->shown < ctx->newest)
				v->shown++;
			else
				snprintf(v->msg, sizeof(v->msg), "interval %llu is the newest",
					 (unsigned long long)v->shown);
		}
		return NTP_REACT_REDRAW;
	case NTP_ACT_RECORD:
		return NTP_REACT_REDRAW | NTP_REACT_RECORD;
	case NTP_ACT_SNAPSHOT:
		return NTP_REACT_REDRAW | NTP_REACT_SNAPSHOT;
	case NTP_ACT_REDRAW:
		return NTP_REACT_REDRAW | NTP_REACT_CLEAR;
	case NTP_ACT_SELECT_UP:
		if (v->selected > 0)
			v->selected--;
		return NTP_REACT_REDRAW;
	case NTP_ACT_SELECT_DOWN:
		if (v->selected + 1 < ctx->n_visible)
			v->selected++;
		return NTP_REACT_REDRAW;
	case NTP_ACT_QUIT:
		return NTP_REACT_QUIT;
	case NTP_ACT_WHATIF:
		v->mode = v->mode == NTP_MODE_WHATIF ? NTP_MODE_MAIN : NTP_MODE_WHATIF;
		return NTP_REACT_REDRAW;
	case NTP_ACT_WI_QD_UP:
	case NTP_ACT_WI_QD_DOWN:
		v->wi_qd = ntp_wi_qd_step(v->wi_qd ? v->wi_qd : 1, a == NTP_ACT_WI_QD_UP ? 1 : -1);
		snprintf(v->msg, sizeof(v->msg), "what-if at QD %u", v->wi_qd);
		return NTP_REACT_REDRAW;
	case NTP_ACT_WI_WAS_UP:
	case NTP_ACT_WI_WAS_DOWN:
		/* 0 (inferred) is the step below 1 */
		if (a == NTP_ACT_WI_WAS_UP)
			v->wi_qd_was = v->wi_qd_was ? ntp_wi_qd_step(v->wi_qd_was, 1) : 1;
		else
			v->wi_qd_was = v->wi_qd_was > 1 ? ntp_wi_qd_step(v->wi_qd_was, -1) : 0;
		if (v->wi_qd_was)
			snprintf(v->msg, sizeof(v->msg), "the run's QD: %u (given)", v->wi_qd_was);
		else
			snprintf(v->msg, sizeof(v->msg), "the run's QD: inferred (rate x mean)");
		return NTP_REACT_REDRAW;
	}
	return 0;
}
