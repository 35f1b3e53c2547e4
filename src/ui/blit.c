// SPDX-License-Identifier: GPL-2.0
/* blit.c - the one file that talks to curses (ncursesw). */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>
#include "blit.h"
#include "keys.h"

static SCREEN *term;
/* What a fatal signal's handler needs to give the terminal back without
 * curses (endwin() is not async-signal-safe): the terminal's modes from
 * before curses, and the terminfo strings that leave the alternate screen,
 * show the cursor and reset the attributes, copied while curses was
 * started. write() and tcsetattr() are async-signal-safe (signal-safety(7)). */
static struct termios saved_tio;
static int saved_tio_ok;
static char reset_seq[256];
static size_t reset_len;
static volatile sig_atomic_t term_active;
static int n_colours;
static attr_t role_attr[NTP_ROLE_COUNT];
static short role_pair[NTP_ROLE_COUNT];

static void add_reset(const char *cap)
{
	const char *v = tigetstr(cap);
	size_t n;

	if (!v || v == (char *)-1)
		return;
	n = strlen(v);
	if (reset_len + n < sizeof(reset_seq)) {
		memcpy(reset_seq + reset_len, v, n);
		reset_len += n;
	}
}

int ntp_term_check(char *err, size_t errlen)
{
	const char *name = getenv("TERM");
	const char *cup;
	int e = 0;

	/* newterm() on an unknown or missing TERM returns NULL but keeps what
	 * it allocated; setupterm() tells the cases apart and frees its own. */
	if (!name || !*name) {
		snprintf(err, errlen, "TERM is not set: the full screen needs the terminal's type "
			 "(e.g. TERM=xterm-256color); -b prints plain text");
		return -1;
	}
	if (setupterm(NULL, STDOUT_FILENO, &e) != OK) {
		snprintf(err, errlen, "TERM=%s: %s; -b prints plain text", name,
			 e == 0 ? "no such terminal type in the terminfo database" :
			 "cannot read the terminfo database");
		return -1;
	}
	cup = tigetstr("cup");
	if (!cup || cup == (char *)-1) {
		del_curterm(cur_term);
		snprintf(err, errlen, "TERM=%s cannot move the cursor, which the full screen needs; "
			 "-b prints plain text", name);
		return -1;
	}
	del_curterm(cur_term);
	return 0;
}

void ntp_term_restore_from_signal(void)
{
	if (!term_active)
		return;
	term_active = 0;
	if (reset_len)
		(void)!write(STDOUT_FILENO, reset_seq, reset_len);
	if (saved_tio_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

int ntp_term_open(const struct ntp_theme *t, int use_colour, char *err, size_t errlen)
{
	struct termios tio;

	if (term)
		return 0;
	if (ntp_term_check(err, errlen))
		return -1;
	saved_tio_ok = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	/* newterm, not initscr: initscr exits the program when $TERM is unknown. */
	term = newterm(NULL, stdout, stdin);
	if (!term) {
		snprintf(err, errlen, "cannot start the terminal (TERM=%s)", getenv("TERM"));
		return -1;
	}
	set_term(term);
	cbreak();
	noecho();
	nonl();
	/* Ctrl-S would stop the terminal's output (IXON flow control) until
	 * Ctrl-Q: the monitor would look frozen. Flow control off, signals
	 * kept (cbreak, not raw: Ctrl-C and Ctrl-Z still work); def_prog_mode()
	 * makes curses restore these modes after a suspend. */
	if (tcgetattr(STDIN_FILENO, &tio) == 0) {
		tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
		tcsetattr(STDIN_FILENO, TCSANOW, &tio);
		def_prog_mode();
	}
	keypad(stdscr, TRUE);
	curs_set(0);
	reset_len = 0;
	add_reset("sgr0");
	add_reset("cnorm");
	add_reset("rmkx");
	add_reset("rmcup");
	term_active = 1;
	set_escdelay(25);	/* Esc alone should not feel slow */
	n_colours = 0;
	if (use_colour && has_colors() && start_color() == OK) {
		use_default_colors();
		n_colours = COLORS;
	}
	for (int r = 0; r < NTP_ROLE_COUNT; r++) {
		short fg, bg;
		unsigned a;

		ntp_theme_resolve(t, r, n_colours, &fg, &bg, &a);
		role_attr[r] = (a & NTP_ATTR_BOLD ? A_BOLD : 0) | (a & NTP_ATTR_DIM ? A_DIM : 0) |
			       (a & NTP_ATTR_REVERSE ? A_REVERSE : 0) | (a & NTP_ATTR_UNDERLINE ? A_UNDERLINE : 0);
		role_pair[r] = 0;
		if (n_colours && r + 1 < COLOR_PAIRS && (fg != -1 || bg != -1)) {
			init_pair(r + 1, fg, bg);
			role_pair[r] = r + 1;
		}
	}
	return 0;
}

void ntp_term_close(void)
{
	if (!term)
		return;
	term_active = 0;
	endwin();
	delscreen(term);
	term = NULL;
}

int ntp_term_colours(void)
{
	return n_colours;
}

void ntp_term_size(int *rows, int *cols)
{
	getmaxyx(stdscr, *rows, *cols);
}

void ntp_term_blit(const struct ntp_screen *s, int clear_first)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (clear_first)
		clearok(curscr, TRUE);
	for (int r = 0; r < s->rows && r < rows; r++) {
		for (int c = 0; c < s->cols && c < cols; c++) {
			const struct ntp_cell *cell = &s->cells[r * s->cols + c];
			wchar_t wc[2] = { L'?', 0 };
			mbstate_t st;
			cchar_t cc;

			memset(&st, 0, sizeof(st));
			if (mbrtowc(&wc[0], cell->glyph, strlen(cell->glyph), &st) > 4)
				wc[0] = L'?';
			setcchar(&cc, wc, role_attr[cell->role], role_pair[cell->role], NULL);
			/* The bottom-right cell returns ERR (the cursor cannot
			 * advance) yet is drawn; nothing to handle. */
			mvadd_wch(r, c, &cc);
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

int ntp_term_getkey(int timeout_ms)
{
	int ch;

	timeout(timeout_ms);
	ch = getch();
	switch (ch) {
	case ERR:
		return NTP_KEY_NONE;
	case KEY_UP:
		return NTP_KEY_UP;
	case KEY_DOWN:
		return NTP_KEY_DOWN;
	case KEY_LEFT:
		return NTP_KEY_LEFT;
	case KEY_RIGHT:
		return NTP_KEY_RIGHT;
	case KEY_F(1):
		return NTP_KEY_F1;
	case KEY_RESIZE:
		return NTP_KEY_RESIZE;
	default:
		return ch;
	}
}
