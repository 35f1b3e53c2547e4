// SPDX-License-Identifier: GPL-2.0
/* theme.c - parsing and resolving ntprof-top's themes (themes/README.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "theme.h"

static const char *const basic[8] = { "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white" };

/* -2 when the word is no colour. */
static int parse_colour(const char *w)
{
	char *end;
	long v;

	if (!strcmp(w, "default"))
		return NTP_COLOR_DEFAULT;
	for (int i = 0; i < 8; i++) {
		if (!strcmp(w, basic[i]))
			return i;
		if (!strncmp(w, "bright-", 7) && !strcmp(w + 7, basic[i]))
			return 8 + i;
	}
	errno = 0;
	v = strtol(w, &end, 10);
	if (!errno && end != w && !*end && v >= 0 && v <= 255)
		return (int)v;
	return -2;
}

static int parse_list(char *field, short *out, int *n, const char *what, char *err, size_t errlen,
		      const char *origin, int line)
{
	char *save = NULL;

	*n = 0;
	for (char *w = strtok_r(field, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int c = parse_colour(w);

		if (c == -2) {
			snprintf(err, errlen, "%s:%d: %s colour '%s' is not 0..255, [bright-]black..white or default",
				 origin, line, what, w);
			return -1;
		}
		if (*n == NTP_THEME_ALTS) {
			snprintf(err, errlen, "%s:%d: more than %d %s colours", origin, line, NTP_THEME_ALTS, what);
			return -1;
		}
		out[(*n)++] = (short)c;
	}
	return 0;
}

static int parse_attrs(char *field, unsigned *out, char *err, size_t errlen, const char *origin, int line)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "bold", NTP_ATTR_BOLD }, { "dim", NTP_ATTR_DIM },
		{ "reverse", NTP_ATTR_REVERSE }, { "underline", NTP_ATTR_UNDERLINE },
	};
	char *save = NULL;

	*out = 0;
	if (!strcmp(field, "-"))
		return 0;
	for (char *w = strtok_r(field, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(w, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			snprintf(err, errlen, "%s:%d: attribute '%s' is not bold, dim, reverse or underline",
				 origin, line, w);
			return -1;
		}
		*out |= names[i].bit;
	}
	return 0;
}

int ntp_theme_parse(const char *text, const char *origin, struct ntp_theme *t, char *err, size_t errlen)
{
	int line = 0;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", origin);
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		char buf[512], *f[5], *save = NULL, *hash;
		int nf = 0, role;

		line++;
		if (len >= sizeof(buf)) {
			snprintf(err, errlen, "%s:%d: line too long", origin, line);
			return -1;
		}
		memcpy(buf, text, len);
		buf[len] = 0;
		text += len + (nl ? 1 : 0);
		if ((hash = strchr(buf, '#')))
			*hash = 0;
		for (char *w = strtok_r(buf, " \t\r", &save); w && nf < 5; w = strtok_r(NULL, " \t\r", &save))
			f[nf++] = w;
		if (!nf)
			continue;
		if (nf != 4) {
			snprintf(err, errlen, "%s:%d: want 'role foreground background attributes', got %d field%s",
				 origin, line, nf, nf == 1 ? "" : "s");
			return -1;
		}
		role = ntp_ui_role_from_name(f[0]);
		if (role < 0) {
			snprintf(err, errlen, "%s:%d: unknown role '%s' (themes/README.md lists them)", origin, line, f[0]);
			return -1;
		}
		if (parse_list(f[1], t->role[role].fg, &t->role[role].n_fg, "foreground", err, errlen, origin, line) ||
		    parse_list(f[2], t->role[role].bg, &t->role[role].n_bg, "background", err, errlen, origin, line) ||
		    parse_attrs(f[3], &t->role[role].attrs, err, errlen, origin, line))
			return -1;
	}
	return 0;
}

int ntp_theme_load(const char *name, struct ntp_theme *t, char *err, size_t errlen)
{
	char *text = NULL;
	size_t cap = 0, len = 0, got;
	FILE *f;
	int ret;

	for (int i = 0; i < ntp_n_builtin_themes; i++) {
		if (!strcmp(ntp_builtin_themes[i].name, name)) {
			ret = ntp_theme_parse(ntp_builtin_themes[i].text, name, t, err, errlen);
			snprintf(t->name, sizeof(t->name), "%s", name);
			return ret;
		}
	}
	f = fopen(name, "r");
	if (!f) {
		snprintf(err, errlen, "theme '%s': %s (built-in: default, light, mono)", name, strerror(errno));
		return -1;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *n = realloc(text, cap = cap * 2 + 8192);

			if (!n) {
				free(text);
				fclose(f);
				snprintf(err, errlen, "theme '%s': out of memory", name);
				return -1;
			}
			text = n;
		}
		got = fread(text + len, 1, 4096, f);
		len += got;
	} while (got && len < (1u << 20));
	text[len] = 0;
	/* A directory opens but does not read: not an empty theme. */
	if (ferror(f) || (got && !feof(f) && fgetc(f) != EOF)) {
		snprintf(err, errlen, "theme '%s': %s", name, ferror(f) ? strerror(errno) : "larger than 1 MiB");
		free(text);
		fclose(f);
		return -1;
	}
	fclose(f);
	ret = ntp_theme_parse(text, name, t, err, errlen);
	free(text);
	return ret;
}

static short pick(const short *alts, int n, int ncolors)
{
	for (int i = 0; i < n; i++)
		if (alts[i] == NTP_COLOR_DEFAULT || alts[i] < ncolors)
			return alts[i];
	return NTP_COLOR_DEFAULT;
}

void ntp_theme_resolve(const struct ntp_theme *t, int role, int ncolors, short *fg, short *bg, unsigned *attrs)
{
	const struct ntp_theme_role *r = &t->role[role];

	*fg = pick(r->fg, r->n_fg, ncolors);
	*bg = pick(r->bg, r->n_bg, ncolors);
	*attrs = r->attrs;
}
