// SPDX-License-Identifier: GPL-2.0
/* blit.c - the one file that talks to curses (ncursesw). */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "blit.h"
#include "keys.h"

static SCREEN *term;
static int n_colours;
static attr_t role_attr[NTP_ROLE_COUNT];
static short role_pair[NTP_ROLE_COUNT];

int ntp_term_open(const struct ntp_theme *t, int use_colour, char *err, size_t errlen)
{
	if (term)
		return 0;
	/* newterm, not initscr: initscr exits the program when $TERM is unknown. */
	term = newterm(NULL, stdout, stdin);
	if (!term) {
		snprintf(err, errlen, "cannot start the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "unset");
		return -1;
	}
	set_term(term);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
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
