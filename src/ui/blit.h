/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blit.h - the terminal: the only place that touches curses. Copies a
 * rendered struct ntp_screen to the terminal (roles -> theme attributes),
 * reads keys (mapped to NTP_KEY_*), reports the size.
 */
#ifndef NTP_UI_BLIT_H
#define NTP_UI_BLIT_H

#include <stddef.h>
#include "screen.h"
#include "theme.h"

/* Starts curses on the terminal; colour only when use_colour and the terminal
 * has colours. 0, or -1 with a reason (no terminal, unknown $TERM). */
int ntp_term_open(const struct ntp_theme *t, int use_colour, char *err, size_t errlen);
/* Whether the full screen can start: TERM set, known to terminfo, able to
 * move the cursor (TERM=dumb cannot). 0, or -1 with a one-line reason. */
int ntp_term_check(char *err, size_t errlen);
/* Gives the terminal back from a fatal signal's handler (async-signal-safe:
 * write() of the saved reset strings and tcsetattr() of the saved modes, no
 * curses). Does nothing when the full screen is not up. */
void ntp_term_restore_from_signal(void);
/* Restores the terminal; safe to call more than once and when not open. */
void ntp_term_close(void);
int ntp_term_colours(void);		/* 0 when drawing without colour */
void ntp_term_size(int *rows, int *cols);
/* Draws the screen; clear_first repaints every cell (Ctrl-L). */
void ntp_term_blit(const struct ntp_screen *s, int clear_first);
/* Waits up to timeout_ms for a key; NTP_KEY_NONE on timeout. */
int ntp_term_getkey(int timeout_ms);

#endif
