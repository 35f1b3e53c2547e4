/* SPDX-License-Identifier: GPL-2.0 */
/*
 * screen.h - ntprof-top's screen as a plain cell buffer: rows x cols cells,
 * each one UTF-8 glyph (one column wide) and a role. Rendering writes here
 * and only blit.c turns roles into curses attributes, so every screen can be
 * compared as text in tests and printed as is in batch mode.
 */
#ifndef NTP_UI_SCREEN_H
#define NTP_UI_SCREEN_H

#include <stddef.h>
#include <stdint.h>

/* What a cell is, not how it looks: the theme maps roles to colours. */
enum ntp_ui_role {
	NTP_ROLE_TEXT = 0,
	NTP_ROLE_TITLE,		/* first header line */
	NTP_ROLE_LABEL,		/* header labels, column headings */
	NTP_ROLE_VALUE,		/* header values */
	NTP_ROLE_BORDER,
	NTP_ROLE_GROUP,		/* a group's title line */
	NTP_ROLE_SELECTED,	/* the selected group's title line */
	NTP_ROLE_BAR_HOST_BLOCK,	/* the five stage bars, in enum ntp_stage order */
	NTP_ROLE_BAR_HOST_DRIVER,
	NTP_ROLE_BAR_NETWORK,
	NTP_ROLE_BAR_TARGET_DRIVER,
	NTP_ROLE_BAR_STORAGE,
	NTP_ROLE_SPARK,
	NTP_ROLE_DIM,		/* absent values, notes */
	NTP_ROLE_WARN,		/* lost events, paused, too small */
	NTP_ROLE_RECORDING,
	NTP_ROLE_STATUS,	/* the status line */
	NTP_ROLE_KEY,		/* key names in the help screen */
	NTP_ROLE_COUNT,
};

int ntp_ui_role_from_name(const char *name);		/* -1 if unknown */

struct ntp_cell {
	char glyph[5];		/* one UTF-8 character, NUL-terminated */
	uint8_t role;
};

struct ntp_screen {
	int rows, cols;
	struct ntp_cell *cells;
};

/* 0, or -ENOMEM. A 0x0 screen is valid. */
int ntp_screen_init(struct ntp_screen *s, int rows, int cols);
void ntp_screen_free(struct ntp_screen *s);
void ntp_screen_clear(struct ntp_screen *s);
struct ntp_cell *ntp_screen_cell(struct ntp_screen *s, int row, int col);	/* NULL outside */

/* Writes UTF-8 text from (row, col), one column per character, clipped to the
 * screen and to at most maxcols columns (-1: to the edge). Returns the column
 * after the last one written. Invalid bytes become '?'. */
int ntp_screen_put(struct ntp_screen *s, int row, int col, int maxcols, uint8_t role, const char *utf8);
int ntp_screen_printf(struct ntp_screen *s, int row, int col, int maxcols, uint8_t role,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Fills n cells with one glyph. */
void ntp_screen_fill(struct ntp_screen *s, int row, int col, int n, uint8_t role, const char *glyph);
/* The screen as text: one line per row, trailing blanks dropped, '\n' after
 * each. Malloc'd; NULL on ENOMEM. */
char *ntp_screen_to_text(const struct ntp_screen *s);
/* The role layer: one character per cell ('.' text, 'a'.. for the others),
 * trailing text cells dropped. For golden tests of colours. */
char *ntp_screen_roles_to_text(const struct ntp_screen *s);

/* Number of UTF-8 characters (columns) in a string. */
int ntp_utf8_width(const char *s);

#endif
