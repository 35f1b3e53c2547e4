/* SPDX-License-Identifier: GPL-2.0 */
/* opts.h - ntprof-top's command line. */
#ifndef NTP_TOP_OPTS_H
#define NTP_TOP_OPTS_H

#include "source.h"
#include "core/model/whatif.h"

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
	const char *wi_servers;		/* --what-if-servers: the last one given, parsed into wi */
	unsigned given;			/* TOP_GIVEN_*: what a replay checks against its recording */
};

/* -r, -t, -s given: with --replay they must say what the recording holds
 * (top_check_replay(), docs/top.md) */
#define TOP_GIVEN_ROLE		1u
#define TOP_GIVEN_TRANSPORT	2u
#define TOP_GIVEN_SAMPLING	4u

/* 0: run; 1: done (help/version printed); -1: bad usage (message printed). */
int top_parse_opts(int argc, char **argv, struct top_opts *o);
int top_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A replay: -r, -t and -s, if given, against its recording's header (fi);
 * 0, or -1 with the message printed (an option error: exit 2). */
int top_check_replay(const struct top_opts *o, const struct ntp_file_info *fi);

#endif
