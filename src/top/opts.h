/* SPDX-License-Identifier: GPL-2.0 */
/* opts.h - ntprof-top's command line. */
#ifndef NTP_TOP_OPTS_H
#define NTP_TOP_OPTS_H

#include "source.h"
#include "core/whatif.h"

#define TOP_OPTSETS 7		/* ntp_top_optsets[] (src/cli/options_tables.c) */
#define TOP_MAX_REPLAY 64

struct top_opts {
	struct top_source_opts src;
	int batch;			/* -b */
	int iterations;			/* -n N (batch: intervals to print; 0 = until the end) */
	int json;			/* --json */
	const char *theme;		/* --theme NAME|FILE */
	int no_color;			/* --no-color or NO_COLOR */
	int ascii;			/* --ascii */
	const char *dir;		/* --dir: where w and S write */
	int width;			/* batch: columns (--width, else $COLUMNS, else 100) */
	char *replay_files[TOP_MAX_REPLAY];	/* --replay FILE and the files after it */
	struct ntp_wi_params wi;	/* --what-if-servers, --what-if-tags (docs/what-if.md) */
};

/* 0: run; 1: done (help/version printed); -1: bad usage (message printed). */
int top_parse_opts(int argc, char **argv, struct top_opts *o);
int top_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
