/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keys.h - ntprof-top's view state and its one key table. The table drives
 * both the dispatch and the help screen, so they cannot drift apart.
 * Dispatch is a pure function: (view, action, what is known) -> reaction
 * bits that the main loop carries out (redraw, quit, change the interval,
 * the sampling rate, start/stop recording, save a snapshot).
 */
#ifndef NTP_UI_KEYS_H
#define NTP_UI_KEYS_H

#include <stdint.h>
#include "../../bpf/ntprof_event.h"

/* Keys that are not characters; blit.c maps curses' codes onto these. */
enum {
	NTP_KEY_CTRL_L = 12,
	NTP_KEY_ESC = 27,
	NTP_KEY_UP = 0x1001,
	NTP_KEY_DOWN,
	NTP_KEY_LEFT,
	NTP_KEY_RIGHT,
	NTP_KEY_F1,
	NTP_KEY_RESIZE,
	NTP_KEY_NONE = -1,
};

enum ntp_mode {
	NTP_MODE_MAIN = 1u << 0,
	NTP_MODE_DETAIL = 1u << 1,
	NTP_MODE_HELP = 1u << 2,
	NTP_MODE_WHATIF = 1u << 3,	/* the selected group predicted at another QD */
};
#define NTP_MODE_ANY (NTP_MODE_MAIN | NTP_MODE_DETAIL | NTP_MODE_HELP | NTP_MODE_WHATIF)

enum ntp_action {
	NTP_ACT_NONE = 0,
	NTP_ACT_HELP,
	NTP_ACT_BACK,
	NTP_ACT_DETAIL,
	NTP_ACT_NS_NEXT,
	NTP_ACT_NS_PREV,
	NTP_ACT_IO_CYCLE,
	NTP_ACT_SAMPLING,
	NTP_ACT_INTERVAL_UP,
	NTP_ACT_INTERVAL_DOWN,
	NTP_ACT_PAUSE,
	NTP_ACT_STEP_BACK,
	NTP_ACT_STEP_FORWARD,
	NTP_ACT_RECORD,
	NTP_ACT_SNAPSHOT,
	NTP_ACT_REDRAW,
	NTP_ACT_SELECT_UP,
	NTP_ACT_SELECT_DOWN,
	NTP_ACT_QUIT,
	NTP_ACT_WHATIF,
	NTP_ACT_WI_QD_UP,
	NTP_ACT_WI_QD_DOWN,
	NTP_ACT_WI_WAS_UP,
	NTP_ACT_WI_WAS_DOWN,
};

/* Reaction bits. */
#define NTP_REACT_REDRAW	(1u << 0)	/* render again */
#define NTP_REACT_CLEAR		(1u << 1)	/* repaint the whole terminal (Ctrl-L) */
#define NTP_REACT_QUIT		(1u << 2)
#define NTP_REACT_INTERVAL	(1u << 3)	/* view.interval_ms changed */
#define NTP_REACT_SAMPLING	(1u << 4)	/* view.sampling changed: apply to the source */
#define NTP_REACT_RECORD	(1u << 5)	/* start or stop recording */
#define NTP_REACT_SNAPSHOT	(1u << 6)	/* save the shown interval */

struct ntp_binding {
	int key;
	enum ntp_action act;
	const char *keyname;	/* as the help screen shows it; NULL: same line as the previous binding */
	const char *help;
	unsigned modes;		/* NTP_MODE_* where it applies */
	const char *foot;	/* the status line's item for it ("w rec"); NULL: only on the
				 * help screen */
	int foot_rank;		/* the item's importance, 0 (q quit) first, up to
				 * NTP_FOOT_RANKS: the footer drops the least important */
};
#define NTP_FOOT_RANKS 10

extern const struct ntp_binding ntp_bindings[];
extern const int ntp_n_bindings;

/* a message names files (paths, PATH_MAX) and why, a line per file, whole; the
 * status line marks what it cannot show (render.c) */
#define NTP_VIEW_MSG_LEN 16384

struct ntp_view {
	unsigned mode;			/* NTP_MODE_MAIN, _DETAIL or _HELP */
	unsigned back_mode;		/* where help returns to */
	char ns[NTP_DEV_LEN];		/* namespace shown, "" = all */
	int io;				/* -1 all, NTP_IO_READ, NTP_IO_WRITE */
	int selected;			/* index among the visible groups */
	int paused;
	uint64_t shown;			/* interval index shown while paused */
	unsigned interval_ms;
	unsigned sampling;
	int sampling_fixed;		/* replay: the recording's rate cannot change */
	uint32_t wi_qd;			/* the what-if view's target queue depth */
	uint32_t wi_qd_was;		/* the QD the workload runs at, as given (--what-if-qd-was,
					 * keys [ ]); 0: inferred by Little's law */
	char msg[NTP_VIEW_MSG_LEN];	/* status line; "" = the default hint; '\n' starts a line */
	int msg_cut;			/* msg was cut at its end: the status line marks it (render.c) */
};

/* A message not drawn yet, kept over a key (ntp_view_msg_hold()). */
struct ntp_msg_hold {
	char msg[NTP_VIEW_MSG_LEN];
	int cut;
};

/* What dispatch may know about the data, read-only. */
struct ntp_view_ctx {
	const char (*ns)[NTP_DEV_LEN];	/* namespaces seen, sorted */
	int n_ns;
	int n_visible;			/* groups left after the view's filters */
	int n_hist;			/* intervals kept in the history */
	uint64_t oldest, newest;	/* their indices (valid when n_hist > 0) */
};

void ntp_view_init(struct ntp_view *v, unsigned interval_ms, unsigned sampling);
/* Sets the status line message (cut to the view's buffer at a character's
 * start, then marked: msg_cut). */
void ntp_view_msg(struct ntp_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds line under the message (is the message when there is none); what
 * does not fit the buffer is cut as ntp_view_msg() cuts, and nothing goes
 * after a cut. */
void ntp_view_msg_add(struct ntp_view *v, const char *line);
/* A key clears the message before its action, except a message not drawn
 * yet (undrawn: ntprof-top popped it in the same pass, docs/top.md): that
 * one is moved to h, and ntp_view_msg_unhold() puts it back after the
 * action, with what the key said (if anything) under it. */
void ntp_view_msg_hold(struct ntp_view *v, struct ntp_msg_hold *h, int undrawn);
void ntp_view_msg_unhold(struct ntp_view *v, const struct ntp_msg_hold *h);
/* The action bound to key in the view's mode, or NTP_ACT_NONE. */
enum ntp_action ntp_key_action(const struct ntp_view *v, int key);
/* Applies an action; returns NTP_REACT_* bits. Pure: touches only *v. */
unsigned ntp_view_apply(struct ntp_view *v, enum ntp_action a, const struct ntp_view_ctx *ctx);
/* The status line's key hint in the view's mode and state (paused, a
 * replay's fixed sampling), from the key table (each binding's foot): the
 * most important items (foot_rank) that fit width columns, shown in the
 * table's order; q quit always; buf holds len bytes. */
void ntp_key_footer(const struct ntp_view *v, int width, char *buf, size_t len);
/* Interval steps of +/- and the rates `s` cycles through. */
unsigned ntp_interval_step(unsigned ms, int dir);
unsigned ntp_sampling_next(unsigned n);

#endif
