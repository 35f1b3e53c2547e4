// SPDX-License-Identifier: GPL-2.0
/* opts.c - ntprof-top's options: the live source's as in `ntprof record`,
 * --replay, batch mode and the look. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "core/esc.h"
#include "cli/options.h"
#include "ui/theme.h"

#define TOP_SPEED_MIN 0.001

int top_err(const char *fmt, ...)
{
	char *msg = NULL, *safe;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (len < 0) {
		fputs("ntprof-top: out of memory\n", stderr);
		return 1;
	}
	/* file names and host names come from outside (core/esc.h) */
	safe = malloc(4 * (size_t)len + 1);
	fprintf(stderr, "ntprof-top: %s\n", safe ? ntp_escape(msg, safe, 4 * (size_t)len + 1) : msg);
	free(safe);
	free(msg);
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

struct custom_ctx {
	int done;			/* -h or -V */
	struct top_opts *o;
};

static int custom(void *ctx, int key, const char *val, char *err, size_t errlen)
{
	struct custom_ctx *c = ctx;

	if (key == 'W')		/* --what-if-servers */
		return ntp_wi_parse_servers(val, &c->o->wi, err, errlen) ? -1 : 0;
	c->done = key;
	return 0;
}

int top_parse_opts(int argc, char **argv, struct top_opts *o)
{
	void *bases[TOP_OPTSETS] = { &o->src.cap, &o->src.cap, &o->src.cap, o, o, o, o };
	struct custom_ctx cc = { 0, o };
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	char err[8192];	/* an option's value is echoed whole */
	struct ntp_theme theme;
	int first;

	memset(o, 0, sizeof(*o));
	ntp_capture_defaults(&o->src.cap);
	o->src.speed = 1;
	o->theme = "default";
	o->dir = ".";
	o->no_color = nc && *nc;
	o->width = cols && atoi(cols) >= 20 ? atoi(cols) : 100;
	first = ntp_options_parse(argc, argv, ntp_top_optsets, bases, TOP_OPTSETS, custom, &cc,
				  " (--help lists the options)", err, sizeof(err));
	if (first < 0)
		return bad("%s", err);
	if (o->wi.tags)
		o->wi.tags_from = "--what-if-tags";
	if (cc.done == 'h') {
		usage(stdout);
		return 1;
	}
	if (cc.done == 'V') {
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
	/* slower, the replay's clock would not move in a lifetime (source.c
	 * scales the wall clock by it) */
	if (o->src.speed > 0 && o->src.speed < TOP_SPEED_MIN)
		return bad("option --speed: %g is below %g; 0 means as fast as possible",
			   o->src.speed, TOP_SPEED_MIN);
	if (o->json && !o->batch)
		return bad("--json is for batch mode: add -b");
	if (o->iterations && !o->batch)
		return bad("-n is for batch mode: add -b");
	/* a theme that does not load is a value the option does not take (an
	 * option error, as the man page's EXIT STATUS says); main.c loads it */
	if (ntp_theme_load(o->theme, &theme, err, sizeof(err)))
		return bad("option --theme: %s", err);
	/* live: the capture options' errors that need no kernel, before the
	 * kernel is looked at, as `ntprof record` finds them (cli/options.h) */
	if (!o->src.replay && ntp_capture_check(&o->src.cap, err, sizeof(err)))
		return bad("%s", err);
	o->src.stop_after = o->iterations;
	o->src.lossless = o->batch;
	return 0;
}
