/* SPDX-License-Identifier: GPL-2.0 */
/*
 * theme.h - ntprof-top's themes (format: themes/README.md): per role, lists
 * of colours best first, resolved against what the terminal can show (8, 16
 * or 256 colours), and attributes. Pure: blit.c applies the result.
 */
#ifndef NTP_UI_THEME_H
#define NTP_UI_THEME_H

#include <stddef.h>
#include "screen.h"

#define NTP_ATTR_BOLD		(1u << 0)
#define NTP_ATTR_DIM		(1u << 1)
#define NTP_ATTR_REVERSE	(1u << 2)
#define NTP_ATTR_UNDERLINE	(1u << 3)

#define NTP_THEME_ALTS 4
#define NTP_COLOR_DEFAULT (-1)

struct ntp_theme_role {
	short fg[NTP_THEME_ALTS], bg[NTP_THEME_ALTS];
	int n_fg, n_bg;
	unsigned attrs;
};

struct ntp_theme {
	char name[64];
	struct ntp_theme_role role[NTP_ROLE_COUNT];
};

struct ntp_builtin_theme {
	const char *name;
	const char *text;
};
extern const struct ntp_builtin_theme ntp_builtin_themes[];
extern const int ntp_n_builtin_themes;

/* Parses theme text; origin names it in errors ("file:line: ..."). 0 or -1. */
int ntp_theme_parse(const char *text, const char *origin, struct ntp_theme *t, char *err, size_t errlen);
/* A built-in name, else a file path. 0 or -1 with a one-line reason. */
int ntp_theme_load(const char *name_or_path, struct ntp_theme *t, char *err, size_t errlen);
/* The colours a role gets on a terminal with ncolors colours (0: none). */
void ntp_theme_resolve(const struct ntp_theme *t, int role, int ncolors, short *fg, short *bg, unsigned *attrs);

#endif
