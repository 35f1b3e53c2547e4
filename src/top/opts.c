// SPDX-License-Identifier: GPL-2.0
/* opts.c - ntprof-top's options: the live source's as in `ntprof record`,
 * --replay, batch mode and the look. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "collector/hooks.h"
#include "core/esc.h"
#include "core/opt.h"
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
		"       ntprof-top --replay FILE.ntp  a recording, same screen and keys\n"
		"       ntprof-top -b [-n N] [--json] the same screens (or JSON) as plain text\n"
		"\n"
		"what to watch (as in ntprof record):\n"
		"  -r host|target|both     the side(s) recorded on this machine (default host)\n"
		"  -t tcp|rdma             the transport (default tcp)\n"
		"  -s N                    sample one command in N (default 1000; key s changes it)\n"
		"  --session nvmeXnY       one namespace\n"
		"  --io-type read|write    only reads or only writes\n"
		"  --size 4K,128K          only these I/O sizes\n"
		"  -i SEC                  interval (default 1; keys + and -)\n"
		"  --exact-queues          count each stage's avg QD from every command's times\n"
		"                          (map operations on every I/O) instead of Little's law\n"
		"how to hook (as in ntprof record):\n"
		"  --kprobes, --fentry     only this flavour (default: fentry if it can attach now)\n"
		"  --btf FILE              the NVMe modules' types for a kernel without module BTF\n"
		"                          (tools/ntprof-btf.sh; default " NTP_BTF_DIR "/$(uname -r).btf)\n"
		"replay:\n"
		"  --replay FILE.ntp       play a recording instead of the live source\n"
		"  --speed X               X times its own pace (default 1; 0: as fast as possible)\n"
		"batch:\n"
		"  -b, --batch             print each interval's screen as text, no terminal control\n"
		"  -n N                    stop after N intervals\n"
		"  --json                  one JSON object per interval instead of the screen\n"
		"  --width COLS            batch screen width (default $COLUMNS or 100)\n"
		"look:\n"
		"  --theme NAME|FILE       default, light, mono, or a theme file (themes/README.md)\n"
		"  --no-color              no colour (NO_COLOR in the environment does the same)\n"
		"  --ascii                 ASCII bars and markers (automatic outside UTF-8 locales)\n"
		"  --dir DIR               where w (recordings) and S (snapshots) write (default .)\n"
		"\n"
		"In the monitor, h, ? or F1 lists the keys.\n");
}

int top_parse_opts(int argc, char **argv, struct top_opts *o)
{
	enum { O_SESSION = 256, O_IO, O_SIZE, O_REPLAY, O_SPEED, O_JSON, O_THEME, O_NOCOLOR, O_ASCII, O_DIR,
	       O_WIDTH, O_EXACT, O_KPROBES, O_FENTRY, O_BTF };
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, O_SESSION },
		{ "io-type", required_argument, NULL, O_IO },
		{ "size", required_argument, NULL, O_SIZE },
		{ "replay", required_argument, NULL, O_REPLAY },
		{ "speed", required_argument, NULL, O_SPEED },
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, O_JSON },
		{ "theme", required_argument, NULL, O_THEME },
		{ "no-color", no_argument, NULL, O_NOCOLOR },
		{ "ascii", no_argument, NULL, O_ASCII },
		{ "dir", required_argument, NULL, O_DIR },
		{ "width", required_argument, NULL, O_WIDTH },
		{ "exact-queues", no_argument, NULL, O_EXACT },
		{ "kprobes", no_argument, NULL, O_KPROBES },
		{ "fentry", no_argument, NULL, O_FENTRY },
		{ "btf", required_argument, NULL, O_BTF },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	char err[NTP_OPT_ERR_LEN];
	unsigned v, n_sizes;
	double d;
	int c;

	memset(o, 0, sizeof(*o));
	o->src.speed = 1;
	o->src.interval_ms = 1000;
	o->src.live.role = NTP_ROLE_HOST;
	o->src.live.transport = NTP_TRANSPORT_TCP;
	o->src.live.sampling = 1000;
	o->src.live.io_type = -1;
	o->src.live.attach_timeout_s = 10;
	o->theme = "default";
	o->dir = ".";
	o->no_color = nc && *nc;
	o->width = cols && atoi(cols) >= 20 ? atoi(cols) : 100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:t:s:i:bn:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (ntp_opt_role("-r", optarg, &o->src.live.role, err))
				return bad("%s", err);
			break;
		case 't':
			if (ntp_opt_transport("-t", optarg, &o->src.live.transport, err))
				return bad("%s", err);
			break;
		case 's':
			if (ntp_opt_u32("-s", optarg, 1, 1u << 30, &o->src.live.sampling, err))
				return bad("%s", err);
			break;
		case 'i':
			if (ntp_opt_double("-i", optarg, 0.1, 3600, &d, err))
				return bad("%s", err);
			o->src.interval_ms = (unsigned)(d * 1000 + 0.5);
			break;
		case 'b':
			o->batch = 1;
			break;
		case 'n':
			if (ntp_opt_u32("-n", optarg, 1, 1000000000, &v, err))
				return bad("%s", err);
			o->iterations = (int)v;
			break;
		case O_SESSION:
			if (ntp_opt_session("--session", optarg, o->src.live.session, err))
				return bad("%s", err);
			break;
		case O_IO:
			if (ntp_opt_io_type("--io-type", optarg, &o->src.live.io_type, err))
				return bad("%s", err);
			break;
		case O_SIZE:
			n_sizes = (unsigned)o->src.live.n_sizes;
			if (ntp_opt_sizes("--size", optarg, o->src.live.sizes, NTP_MAX_SIZES, &n_sizes, err))
				return bad("%s", err);
			o->src.live.n_sizes = (int)n_sizes;
			break;
		case O_EXACT:
			o->src.live.exact_queues = true;
			break;
		case O_KPROBES:
		case O_FENTRY:
			if (o->src.live.flavour != NTP_FLAVOUR_AUTO)
				return bad("--kprobes and --fentry exclude each other");
			o->src.live.flavour = c == O_KPROBES ? NTP_FLAVOUR_KPROBE : NTP_FLAVOUR_FENTRY;
			break;
		case O_BTF:
			o->src.live.btf_path = optarg;
			break;
		case O_REPLAY:
			o->src.replay = optarg;
			break;
		case O_SPEED:
			if (ntp_opt_double("--speed", optarg, 0, 10000, &o->src.speed, err))
				return bad("%s", err);
			/* slower, the replay's clock would not move in a lifetime
			 * (source.c scales the wall clock by it) */
			if (o->src.speed > 0 && o->src.speed < TOP_SPEED_MIN)
				return bad("option --speed: '%s' is below %g; 0 means as fast as possible",
					   optarg, TOP_SPEED_MIN);
			break;
		case O_JSON:
			o->json = 1;
			break;
		case O_THEME:
			o->theme = optarg;
			break;
		case O_NOCOLOR:
			o->no_color = 1;
			break;
		case O_ASCII:
			o->ascii = 1;
			break;
		case O_DIR:
			o->dir = optarg;
			break;
		case O_WIDTH:
			if (ntp_opt_u32("--width", optarg, 20, 1000, &v, err))
				return bad("%s", err);
			o->width = (int)v;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("ntprof-top %s\n", NTP_VERSION);
			return 1;
		case ':':
			return bad("option %s needs a value (--help lists the options)", argv[optind - 1]);
		default:
			return bad("unknown option '%s' (--help lists the options)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s' (--help lists the options)", argv[optind]);
	if (o->json && !o->batch)
		return bad("--json is for batch mode: add -b");
	if (o->iterations && !o->batch)
		return bad("-n is for batch mode: add -b");
	o->src.stop_after = o->iterations;
	o->src.lossless = o->batch;
	return 0;
}
