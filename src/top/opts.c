// SPDX-License-Identifier: GPL-2.0
/* opts.c - ntprof-top's options: the live source's as in `ntprof record`,
 * --replay, batch mode and the look. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "cli/options.h"

int top_err(const char *fmt, ...)
{
	va_list ap;

	fputs("ntprof-top: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* A usage error: the message, and -1 for top_parse_opts' caller. */
#define bad(...) (top_err(__VA_ARGS__), -1)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ntprof-top [OPTIONS]          live, full screen (root)\n"
		"       ntprof-top --replay FILE.ntp [FILE.ntp...]\n"
		"                                     recordings (joined as ntprof report does),\n"
		"                                     same screen and keys\n"
		"       ntprof-top -b [-n N] [--json] the same screens (or JSON) as plain text\n"
		"\n");
	ntp_options_help(f, ntp_top_optsets, TOP_OPTSETS);
	fprintf(f, "\nIn the monitor, h, ? or F1 lists the keys.\n");
}

static int custom(void *ctx, int key, const char *val, char *err, size_t errlen)
{
	(void)val;
	(void)err;
	(void)errlen;
	*(int *)ctx = key;
	return 0;
}

int top_parse_opts(int argc, char **argv, struct top_opts *o)
{
	void *bases[TOP_OPTSETS] = { &o->src.cap, &o->src.cap, &o->src.cap, o, o, o };
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	char err[512];
	int first, done = 0;

	memset(o, 0, sizeof(*o));
	ntp_capture_defaults(&o->src.cap);
	o->src.speed = 1;
	o->theme = "default";
	o->dir = ".";
	o->no_color = nc && *nc;
	o->width = cols && atoi(cols) >= 20 ? atoi(cols) : 100;
	first = ntp_options_parse(argc, argv, ntp_top_optsets, bases, TOP_OPTSETS, custom, &done,
				  " (--help lists the options)", err, sizeof(err));
	if (first < 0)
		return bad("%s", err);
	if (done == 'h') {
		usage(stdout);
		return 1;
	}
	if (done == 'V') {
		printf("ntprof-top %s\n", NTP_VERSION);
		return 1;
	}
	/* --replay A.ntp B.ntp: the files after the first are joined with it */
	if (first < argc && !o->src.replay)
		return bad("unexpected argument '%s' (--help lists the options)", argv[first]);
	if (o->src.replay) {
		/* getopt moved the operands to the end: the first file, then them */
		o->replay_files[0] = (char *)o->src.replay;
		o->src.n_replay = 1;
		for (int i = first; i < argc && o->src.n_replay < TOP_MAX_REPLAY; i++)
			o->replay_files[o->src.n_replay++] = argv[i];
		if (argc - first >= TOP_MAX_REPLAY)
			return bad("--replay: at most %d files", TOP_MAX_REPLAY);
		o->src.replay_files = o->replay_files;
	}
	o->src.interval_ms = (unsigned)(o->src.cap.interval_s * 1000 + 0.5);
	if (o->json && !o->batch)
		return bad("--json is for batch mode: add -b");
	if (o->iterations && !o->batch)
		return bad("-n is for batch mode: add -b");
	o->src.stop_after = o->iterations;
	o->src.lossless = o->batch;
	return 0;
}
