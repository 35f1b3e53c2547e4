// SPDX-License-Identifier: GPL-2.0
/* opts.c - ntprof-top's options: the live source's as in `ntprof record`,
 * --replay, batch mode and the look. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"

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
static int __attribute__((format(printf, 1, 2))) bad(const char *fmt, ...)
{
	va_list ap;

	fputs("ntprof-top: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

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

static int parse_uint(const char *opt, const char *val, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-' || v < min || v > max)
		return bad("%s: '%s' is not a number from %lu to %lu", opt, val, min, max);
	*out = v;
	return 0;
}

static int parse_sizes(const char *val, struct ntp_collector_opts *c)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", val);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(w, &end, 10);
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (errno || end == w || *end || !v || v > (1ul << 30))
			return bad("--size: '%s' is not a size like 4K, 128K or 1M", w);
		if (c->n_sizes == NTP_MAX_SIZES)
			return bad("--size: more than %d sizes", NTP_MAX_SIZES);
		c->sizes[c->n_sizes++] = (uint32_t)v;
	}
	return 0;
}

int top_parse_opts(int argc, char **argv, struct top_opts *o)
{
	enum { O_SESSION = 256, O_IO, O_SIZE, O_REPLAY, O_SPEED, O_JSON, O_THEME, O_NOCOLOR, O_ASCII, O_DIR,
	       O_WIDTH };
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	unsigned long v;
	char *end;
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
			if (!strcmp(optarg, "host"))
				o->src.live.role = NTP_ROLE_HOST;
			else if (!strcmp(optarg, "target"))
				o->src.live.role = NTP_ROLE_TARGET;
			else if (!strcmp(optarg, "both"))
				o->src.live.role = NTP_ROLE_BOTH;
			else
				return bad("-r: '%s' is not host, target or both", optarg);
			break;
		case 't':
			if (!strcmp(optarg, "tcp"))
				o->src.live.transport = NTP_TRANSPORT_TCP;
			else if (!strcmp(optarg, "rdma"))
				o->src.live.transport = NTP_TRANSPORT_RDMA;
			else
				return bad("-t: '%s' is not tcp or rdma", optarg);
			break;
		case 's':
			if (parse_uint("-s", optarg, 1, 1u << 30, &v))
				return -1;
			o->src.live.sampling = (uint32_t)v;
			break;
		case 'i':
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || d < 0.1 || d > 3600)
				return bad("-i: '%s' is not a number of seconds from 0.1 to 3600", optarg);
			o->src.interval_ms = (unsigned)(d * 1000 + 0.5);
			break;
		case 'b':
			o->batch = 1;
			break;
		case 'n':
			if (parse_uint("-n", optarg, 1, 1000000000, &v))
				return -1;
			o->iterations = (int)v;
			break;
		case O_SESSION:
			if (strlen(optarg) >= NTP_DEV_LEN)
				return bad("--session: '%s' is longer than a namespace name", optarg);
			snprintf(o->src.live.session, sizeof(o->src.live.session), "%s", optarg);
			break;
		case O_IO:
			if (!strcmp(optarg, "read"))
				o->src.live.io_type = NTP_IO_READ;
			else if (!strcmp(optarg, "write"))
				o->src.live.io_type = NTP_IO_WRITE;
			else
				return bad("--io-type: '%s' is not read or write", optarg);
			break;
		case O_SIZE:
			if (parse_sizes(optarg, &o->src.live))
				return -1;
			break;
		case O_REPLAY:
			o->src.replay = optarg;
			break;
		case O_SPEED:
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || d < 0 || d > 10000)
				return bad("--speed: '%s' is not a factor from 0 (as fast as possible) to 10000",
					       optarg);
			o->src.speed = d;
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
			if (parse_uint("--width", optarg, 20, 1000, &v))
				return -1;
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
