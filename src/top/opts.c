// SPDX-License-Identifier: GPL-2.0
/* opts.c - ntprof-top's options: the live source's as in `ntprof record`,
 * --replay, batch mode and the look. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "core/render/esc.h"
#include "cli/options.h"
#include "ui/theme.h"

#define TOP_SPEED_MIN 0.001

int top_err(const char *fmt, ...)
{
	char *msg = NULL;
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
	ntp_put_escaped_line(stderr, "ntprof-top", msg);
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

	(void)err;
	(void)errlen;
	/* --what-if-servers: parsed once all are read, so that the last one
	 * given is the one taken, as in ntprof report (docs/options.md) */
	if (key == 'W') {
		c->o->wi_servers = val;
		return 0;
	}
	c->done = key;
	return 0;
}

int top_parse_opts(int argc, char **argv, struct top_opts *o)
{
	void *bases[TOP_OPTSETS] = { &o->src.cap, &o->src.cap, &o->src.cap, o, o, o, o };
	struct custom_ctx cc = { 0, o };
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	char err[8192];	/* an option's value is echoed whole */
	struct ntp_capture_opts def;
	struct ntp_collector_opts *co = &o->src.cap.co;
	struct ntp_theme theme;
	const char *no_replay = NULL, *no_batch = NULL;
	int first, speed_given, width_given, look_given;

	memset(o, 0, sizeof(*o));
	ntp_capture_defaults(&def);
	o->src.cap = def;
	/* unset, to tell what was given (a mode refuses what it does not use);
	 * the defaults replace them after parsing */
	co->role = co->transport = UINT8_MAX;
	co->sampling = 0;
	co->attach_timeout_s = -1;
	o->src.speed = -1;
	o->no_color = nc && *nc;
	first = ntp_options_parse(argc, argv, ntp_top_optsets, bases, TOP_OPTSETS, custom, &cc,
				  " (--help lists the options)", err, sizeof(err));
	if (first < 0)
		return bad("%s", err);
	o->given = (co->role != UINT8_MAX ? TOP_GIVEN_ROLE : 0) |
		   (co->transport != UINT8_MAX ? TOP_GIVEN_TRANSPORT : 0) |
		   (co->sampling ? TOP_GIVEN_SAMPLING : 0);
	if (co->role == UINT8_MAX)
		co->role = def.co.role;
	if (co->transport == UINT8_MAX)
		co->transport = def.co.transport;
	if (!co->sampling)
		co->sampling = def.co.sampling;
	/* the live source's options a replay has no use for: it attaches
	 * nothing and reads what the recording holds (-r, -t and -s are
	 * checked against it: top_check_replay()) */
	if (co->target_session[0])
		no_replay = "--target-session";
	else if (co->exact_queues)
		no_replay = "--exact-queues";
	else if (co->spdk_host)
		no_replay = "--spdk-host";
	else if (co->spdk_target)
		no_replay = "--spdk-target";
	else if (co->flavour == NTP_FLAVOUR_KPROBE)
		no_replay = "--kprobes";
	else if (co->flavour == NTP_FLAVOUR_FENTRY)
		no_replay = "--fentry";
	else if (co->attach_timeout_s >= 0)
		no_replay = "--attach-timeout";
	else if (co->btf_path)
		no_replay = "--btf";
	if (co->attach_timeout_s < 0)
		co->attach_timeout_s = def.co.attach_timeout_s;
	speed_given = o->src.speed >= 0;
	if (!speed_given)
		o->src.speed = 1;
	width_given = o->width != 0;
	if (!width_given)
		o->width = cols && atoi(cols) >= 20 ? atoi(cols) : 100;
	/* what only the full screen shows or does: colours, the files of w
	 * and S, the what-if view */
	if (o->theme)
		no_batch = "--theme";
	else if (o->dir)
		no_batch = "--dir";
	else if (o->wi_servers)
		no_batch = "--what-if-servers";
	else if (o->wi.tags)
		no_batch = "--what-if-tags";
	else if (o->wi.base_qd)
		no_batch = "--what-if-qd-was";
	look_given = o->theme != NULL;
	if (!o->theme)
		o->theme = "default";
	if (!o->dir)
		o->dir = ".";
	if (o->wi_servers && ntp_wi_parse_servers(o->wi_servers, &o->wi, err, sizeof(err)))
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
	/* a theme that does not load is a value the option does not take (an
	 * option error, as the man page's EXIT STATUS says); main.c loads it */
	if (look_given && ntp_theme_load(o->theme, &theme, err, sizeof(err)))
		return bad("option --theme: %s", err);
	/* an option the mode run has no use for is refused, not ignored
	 * (docs/top.md) */
	if (o->json && !o->batch)
		return bad("--json is for batch mode: add -b");
	if (o->iterations && !o->batch)
		return bad("-n is for batch mode: add -b");
	if (width_given && !o->batch)
		return bad("--width is for batch mode: add -b (the full screen takes the terminal's width)");
	if (width_given && o->json)
		return bad("--width is for batch mode's screens, not --json");
	if (no_batch && o->batch)
		return bad("%s is for the full screen, not -b (%s)", no_batch,
			   !strcmp(no_batch, "--theme") ? "batch mode prints no colours"
			   : !strcmp(no_batch, "--dir") ? "where its keys w and S write"
			   : "its what-if view, key W");
	if (speed_given && !o->src.replay)
		return bad("--speed is for --replay");
	if (no_replay && o->src.replay)
		return bad("%s is for the live source, not --replay (a replay reads what the recording holds)",
			   no_replay);
	/* live: the capture options' errors that need no kernel, before the
	 * kernel is looked at, as `ntprof record` finds them (cli/options.h) */
	if (!o->src.replay && ntp_capture_check(&o->src.cap, err, sizeof(err)))
		return bad("%s", err);
	o->src.stop_after = o->iterations;
	o->src.lossless = o->batch;
	return 0;
}

int top_check_replay(const struct top_opts *o, const struct ntp_file_info *fi)
{
	const struct ntp_collector_opts *co = &o->src.cap.co;

	/* -r names the side(s) wanted: the recording (or the files joined)
	 * must hold them; -r host of a recording of both shows both */
	if ((o->given & TOP_GIVEN_ROLE) && co->role != fi->role && fi->role != NTP_ROLE_BOTH)
		return bad("option -r %s: the replayed recording holds the %s side only", ntp_role_name(co->role),
			   ntp_role_name(fi->role));
	if ((o->given & TOP_GIVEN_TRANSPORT) && co->transport != fi->transport)
		return bad("option -t %s: the replayed recording is of NVMe/%s", ntp_transport_name(co->transport),
			   fi->transport == NTP_TRANSPORT_RDMA ? "RDMA" : "TCP");
	if ((o->given & TOP_GIVEN_SAMPLING) && co->sampling != fi->sampling)
		return bad("option -s %u: the replayed recording samples one command in %u (a replay cannot change it)",
			   co->sampling, fi->sampling);
	return 0;
}
