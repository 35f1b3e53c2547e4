// SPDX-License-Identifier: GPL-2.0
/* screen.c - the cell buffer every ntprof-top screen is rendered into. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "screen.h"

static const char *const role_names[NTP_ROLE_COUNT] = {
	[NTP_ROLE_TEXT] = "text",
	[NTP_ROLE_TITLE] = "title",
	[NTP_ROLE_LABEL] = "label",
	[NTP_ROLE_VALUE] = "value",
	[NTP_ROLE_BORDER] = "border",
	[NTP_ROLE_GROUP] = "group",
	[NTP_ROLE_SELECTED] = "selected",
	[NTP_ROLE_BAR_HOST_BLOCK] = "bar-host-block",
	[NTP_ROLE_BAR_HOST_DRIVER] = "bar-host-driver",
	[NTP_ROLE_BAR_NETWORK] = "bar-network",
	[NTP_ROLE_BAR_TARGET_DRIVER] = "bar-target-driver",
	[NTP_ROLE_BAR_STORAGE] = "bar-storage",
	[NTP_ROLE_SPARK] = "spark",
	[NTP_ROLE_DIM] = "dim",
	[NTP_ROLE_WARN] = "warn",
	[NTP_ROLE_RECORDING] = "recording",
	[NTP_ROLE_STATUS] = "status",
	[NTP_ROLE_KEY] = "key",
};

int ntp_ui_role_from_name(const char *name)
{
	for (int i = 0; i < NTP_ROLE_COUNT; i++)
		if (!strcmp(role_names[i], name))
			return i;
	return -1;
}

int ntp_screen_init(struct ntp_screen *s, int rows, int cols)
{
	if (rows < 0)
		rows = 0;
	if (cols < 0)
		cols = 0;
	s->rows = rows;
	s->cols = cols;
	s->cells = calloc((size_t)rows * cols + 1, sizeof(*s->cells));
	if (!s->cells)
		return -ENOMEM;
	ntp_screen_clear(s);
	return 0;
}

void ntp_screen_free(struct ntp_screen *s)
{
	free(s->cells);
	s->cells = NULL;
	s->rows = s->cols = 0;
}

void ntp_screen_clear(struct ntp_screen *s)
{
	for (int i = 0; i < s->rows * s->cols; i++) {
		s->cells[i].glyph[0] = ' ';
		s->cells[i].glyph[1] = 0;
		s->cells[i].role = NTP_ROLE_TEXT;
	}
}

struct ntp_cell *ntp_screen_cell(struct ntp_screen *s, int row, int col)
{
	if (row < 0 || col < 0 || row >= s->rows || col >= s->cols)
		return NULL;
	return &s->cells[row * s->cols + col];
}

/* Length of the UTF-8 sequence starting at p, or 0 if invalid. */
static int utf8_len(const unsigned char *p)
{
	int n;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

int ntp_utf8_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int w = 0;

	while (*p) {
		int n = utf8_len(p);

		p += n ? n : 1;
		w++;
	}
	return w;
}

int ntp_screen_put(struct ntp_screen *s, int row, int col, int maxcols, uint8_t role, const char *utf8)
{
	const unsigned char *p = (const unsigned char *)utf8;
	int end = maxcols < 0 ? s->cols : col + maxcols;

	if (end > s->cols)
		end = s->cols;
	while (*p && col < end) {
		int n = utf8_len(p);
		struct ntp_cell *c = ntp_screen_cell(s, row, col);

		/* a control byte (C0, DEL, a UTF-8 C1) from a name in a file
		 * would act on the terminal: shown as '?' */
		if ((n == 1 && (*p < 0x20 || *p == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			n = 0;

		if (c) {
			if (n) {
				memcpy(c->glyph, p, n);
				c->glyph[n] = 0;
			} else {
				strcpy(c->glyph, "?");
			}
			c->role = role;
		}
		p += n ? n : 1;
		col++;
	}
	return col;
}

int ntp_screen_printf(struct ntp_screen *s, int row, int col, int maxcols, uint8_t role, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return ntp_screen_put(s, row, col, maxcols, role, buf);
}

void ntp_screen_fill(struct ntp_screen *s, int row, int col, int n, uint8_t role, const char *glyph)
{
	for (int i = 0; i < n; i++)
		ntp_screen_put(s, row, col + i, 1, role, glyph);
}

/* Appends rows of per-cell strings given by cell_text, trimming trailing
 * cells for which blank() is true. */
static char *screen_dump(const struct ntp_screen *s, int roles)
{
	size_t cap = (size_t)s->rows * (s->cols * 4 + 1) + 1, len = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (int r = 0; r < s->rows; r++) {
		const struct ntp_cell *row = &s->cells[r * s->cols];
		int last = -1;

		for (int c = 0; c < s->cols; c++) {
			int blank = roles ? row[c].role == NTP_ROLE_TEXT : !strcmp(row[c].glyph, " ");

			if (!blank)
				last = c;
		}
		for (int c = 0; c <= last; c++) {
			if (roles) {
				out[len++] = row[c].role == NTP_ROLE_TEXT ? '.' : 'a' + row[c].role - 1;
			} else {
				size_t n = strlen(row[c].glyph);

				memcpy(out + len, row[c].glyph, n);
				len += n;
			}
		}
		out[len++] = '\n';
	}
	out[len] = 0;
	return out;
}

char *ntp_screen_to_text(const struct ntp_screen *s)
{
	return screen_dump(s, 0);
}

char *ntp_screen_roles_to_text(const struct ntp_screen *s)
{
	return screen_dump(s, 1);
}
