// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_generate.c - `ntprof generate`: write synthetic .ntp recordings from the
 * path model of src/core/synth/synth.c, so tests, benchmarks and readers without
 * NVMe hardware get recordings with known stage times.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "core/render/out.h"
#include "core/opt.h"
#include "core/store/ntpfile.h"
#include "core/synth/synth.h"
#include "options.h"

#define NSEC 1000000000ull
#define START_REAL_NS (1796000000ull * NSEC)	/* a fixed wall clock: output is deterministic */
#define MAX_TOTALS 64

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof generate -o FILE [OPTIONS]\n"
"Writes a synthetic recording from a model of the NVMe-oF path: each segment\n"
"between two timestamps takes a delay from its own distribution.\n"
"\n"
"Output:\n"
"  -o, --output FILE        the recording (host file when --target-out is given;\n"
"                           with --hosts N, a %%d in FILE gives one file per host)\n"
"      --target-out FILE    -r both: write the target's records here, the host's to -o\n"
"  -r, --role host|target|both  the side(s) (default both: one file unless --target-out)\n"
"  -t, --transport tcp|rdma  the transport (default tcp)\n"
"Workload:\n"
"  -n, --count N            commands to issue, sampled or not (default: until -d)\n"
"  -d, --duration SEC       simulated seconds (default 1 when -n is not given)\n"
"      --rate N             commands per second, Poisson arrivals (default 50000)\n"
"      --qd N               tags per queue, 1..4096 (default 32); cid = genctr<<12 | tag\n"
"      --queues N           I/O queues per host (default 1)\n"
"      --hosts N            hosts (controllers, cntlid 1..N) sharing the target (default 1);\n"
"                           a clock each in their own files, the machine's in one\n"
"                           -r both file\n"
"      --sizes LIST         I/O sizes, e.g. 4K,128K (default 4K), drawn uniformly\n"
"      --read PCT           share of reads, 0..100 (default 100); the rest are writes\n"
"      --inline-max SIZE    writes up to SIZE go in the capsule, larger ones use R2T\n"
"                           (tcp) or RDMA READ (default 8K)\n"
"      --lba-size N         bytes per LBA (default 512)\n"
"      --ns-size SIZE       namespace size; LBAs are drawn below it (default 1G)\n"
"      --nsid N             namespace id (default 1)\n"
"  -s, --sampling N         record one command in N, by the shared hash (default 100)\n"
"      --exact-queues       the totals carry every command's stage sums, as\n"
"                           ntprof record --exact-queues writes them\n"
"      --bio-stamp          host records carry the bio's submission, before the\n"
"                           wait for a tag, as a host whose kernel stamps bios\n"
"      --host-queues        host files' headers carry the host's queues, as\n"
"                           ntprof record writes them: --queues of --qd tags\n"
"Path:\n"
"      --delay SEG=DIST:MEAN[:SPREAD]  (repeatable) a segment's delay; DIST is fixed,\n"
"                           uniform (mean*(1+-SPREAD)), exp or lognormal (sigma SPREAD);\n"
"                           MEAN needs a unit: ns, us, ms or s. SEG is one of:\n"
"                           host-block-sub host-driver-sub wire target-recv\n"
"                           target-driver-sub host-recv host-driver-data\n"
"                           target-driver-data storage target-driver-comp target-send\n"
"                           host-driver-comp host-block-comp\n"
"      --link-gbps G        link rate for data serialisation, 0 = none (default 25)\n"
"      --target-clock-offset NS  target's CLOCK_MONOTONIC minus the host's, any value\n"
"                           (default 259200000012345, 0 for a one-file -r both)\n"
"      --host-dev NAME      host's device name (default nvme1n1)\n"
"      --target-dev NAME    target's backing device name (default nullb0)\n"
"Missing data, for join and fallback tests:\n"
"      --miss-rsp-sent PCT  target records without T_RSP_SENT (a missed hook)\n"
"      --drop-target PCT    sampled commands with no target record at all\n"
"Other:\n"
"      --seed N             the PRNG seed: same seed, same bytes (default 1)\n"
"  -q, --quiet              no summary line\n"
"  -h, --help\n");
}

static int parse_double(const char *opt, const char *val, double min, double max, double *out)
{
	char err[NTP_OPT_ERR_LEN];

	return ntp_opt_double(opt, val, min, max, out, err) ? ntp_err("%s", err), -1 : 0;
}

static int parse_u64(const char *opt, const char *val, uint64_t min, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno || end == val || *end || val[0] == '-' || v < min)
		return ntp_err("option %s: '%s' is not a whole number >= %llu", opt, val,
			       (unsigned long long)min), -1;
	*out = v;
	return 0;
}

/* "80us", "1.5ms", "200ns", "0.001s" -> ns */
static int parse_duration_ns(const char *opt, const char *val, double *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || !(v >= 0))
		return ntp_err("option %s: '%s' is not a time such as 80us", opt, val), -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u)) {
			*out = v * units[i].mul;
			return 0;
		}
	return ntp_err("option %s: '%s' needs a unit: ns, us, ms or s", opt, val), -1;
}

/* "1G", "512M", "4T", "1048576" -> bytes (namespace sizes beyond ntp_parse_size's 1 GiB) */
static int parse_bytes64(const char *opt, const char *val, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(val, &end, 10);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (errno || end == val || *end || val[0] == '-' || !v || v > (1ull << 56) >> shift)
		return ntp_err("option %s: '%s' is not a size such as 1G or 4T", opt, val), -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_delay(const char *val, struct ntp_synth_config *c)
{
	static const char *const dists[] = { "fixed", "uniform", "exp", "lognormal" };
	char buf[128], *eq, *dist, *mean, *spread;
	int seg, di = -1;
	double sp;

	snprintf(buf, sizeof(buf), "%s", val);
	eq = strchr(buf, '=');
	if (!eq)
		return ntp_err("option --delay: '%s' is not SEG=DIST:MEAN[:SPREAD]", val), -1;
	*eq = '\0';
	seg = ntp_seg_by_name(buf);
	if (seg < 0)
		return ntp_err("option --delay: unknown segment '%s' (ntprof generate --help lists them)", buf), -1;
	dist = eq + 1;
	mean = strchr(dist, ':');
	if (!mean)
		return ntp_err("option --delay: '%s' is not SEG=DIST:MEAN[:SPREAD]", val), -1;
	*mean++ = '\0';
	for (int i = 0; i < 4; i++)
		if (!strcmp(dist, dists[i]))
			di = i;
	if (di < 0)
		return ntp_err("option --delay: unknown distribution '%s' (fixed, uniform, exp, lognormal)", dist), -1;
	spread = strchr(mean, ':');
	if (spread)
		*spread++ = '\0';
	if (parse_duration_ns("--delay", mean, &c->delay[seg].mean_ns))
		return -1;
	c->delay[seg].dist = (uint8_t)di;
	if (spread) {
		if (parse_double("--delay", spread, 0, di == NTP_DIST_UNIFORM ? 1 : 5, &sp))
			return -1;
		c->delay[seg].spread = sp;
	}
	return 0;
}

static int parse_sizes(const char *val, struct ntp_synth_config *c)
{
	char err[NTP_OPT_ERR_LEN];
	unsigned n = 0;

	if (ntp_opt_list_check("--sizes", val, "size", err, sizeof(err)) ||
	    ntp_opt_sizes("--sizes", val, c->sizes, NTP_SYNTH_MAX_SIZES, &n, err))
		return ntp_err("%s", err), -1;
	c->nsizes = n;
	return 0;
}

#define LINK_GBPS_MIN 1e-3

/* One output file and which records go in it. */
struct out {
	char path[4096];
	struct ntp_writer *w;
	uint8_t role;
	uint16_t cntlid;		/* host file of one controller; 0 = all */
	uint8_t clock_side;		/* whose clock the file's times are on */
};

static uint64_t out_clock(const struct ntp_synth *s, const struct out *o, uint64_t t)
{
	return ntp_synth_clock(s, o->clock_side, o->cntlid ? o->cntlid : 1, t);
}

static int out_totals(const struct ntp_synth *s, struct out *o, uint64_t t)
{
	struct ntp_total tot[2 * MAX_TOTALS];
	size_t n = 0;

	if (o->role != NTP_ROLE_TARGET)
		n += ntp_synth_totals(s, NTP_SIDE_HOST, o->cntlid, tot, MAX_TOTALS);
	if (o->role != NTP_ROLE_HOST)
		n += ntp_synth_totals(s, NTP_SIDE_TARGET, 0, tot + n, MAX_TOTALS);
	return ntp_writer_set_totals(o->w, tot, n, out_clock(s, o, t));
}

/* The simulated time a sampled command took its tag, or about (0: not
 * said): the host's block submit (the synthesizer takes the tag there);
 * a target record's command arrival, a little later (a target-only run). */
static uint64_t issued_at(const struct ntp_synth *s, const struct ntp_record *r)
{
	int id = r->side == NTP_SIDE_HOST ? NTP_TS_H_BLK_SUBMIT : NTP_TS_T_CMD_ARRIVE;
	uint64_t zero;

	if ((r->side != NTP_SIDE_HOST && r->side != NTP_SIDE_TARGET) || !(r->ts_valid >> id & 1))
		return 0;
	zero = ntp_synth_clock(s, r->side, r->cntlid, 0);
	return r->ts[id] > zero ? r->ts[id] - zero : 0;
}

int cmd_generate(int argc, char **argv)
{
	enum { O_TARGET_OUT = 256, O_RATE, O_QD, O_QUEUES, O_HOSTS, O_SIZES, O_READ, O_INLINE,
	       O_LBA, O_NSSIZE, O_NSID, O_DELAY, O_LINK, O_OFFSET, O_HOSTDEV, O_TGTDEV,
	       O_MISS, O_DROP, O_SEED, O_EXACT, O_HOSTQ, O_BIO };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "target-out", required_argument, NULL, O_TARGET_OUT },
		{ "role", required_argument, NULL, 'r' },
		{ "transport", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, O_RATE },
		{ "qd", required_argument, NULL, O_QD },
		{ "queues", required_argument, NULL, O_QUEUES },
		{ "hosts", required_argument, NULL, O_HOSTS },
		{ "sizes", required_argument, NULL, O_SIZES },
		{ "read", required_argument, NULL, O_READ },
		{ "inline-max", required_argument, NULL, O_INLINE },
		{ "lba-size", required_argument, NULL, O_LBA },
		{ "ns-size", required_argument, NULL, O_NSSIZE },
		{ "nsid", required_argument, NULL, O_NSID },
		{ "sampling", required_argument, NULL, 's' },
		{ "delay", required_argument, NULL, O_DELAY },
		{ "link-gbps", required_argument, NULL, O_LINK },
		{ "target-clock-offset", required_argument, NULL, O_OFFSET },
		{ "host-dev", required_argument, NULL, O_HOSTDEV },
		{ "target-dev", required_argument, NULL, O_TGTDEV },
		{ "miss-rsp-sent", required_argument, NULL, O_MISS },
		{ "drop-target", required_argument, NULL, O_DROP },
		{ "seed", required_argument, NULL, O_SEED },
		{ "exact-queues", no_argument, NULL, O_EXACT },
		{ "bio-stamp", no_argument, NULL, O_BIO },
		{ "host-queues", no_argument, NULL, O_HOSTQ },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ntp_synth_config c;
	const char *output = NULL, *target_out = NULL;
	uint8_t role = NTP_ROLE_BOTH;
	int offset_set = 0, quiet = 0, opt, ret = 1, per_host, werr, host_queues = 0;
	int prev_c = 0, prev_ind = 0, cur_c = 0, cur_ind = 0;
	struct out *outs = NULL;
	size_t nouts = 0;
	struct ntp_synth *s = NULL;
	char err[NTP_ERR_LEN];
	double dv;
	uint64_t t_end = 0;
	uint64_t last_issue = 0;	/* the latest a sampled command took its tag */

	ntp_synth_defaults(&c);
	c.duration_ns = 0;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:r:t:n:d:s:qh", opts, NULL)) != -1) {
		/* the letter given before this one, and the word getopt was on
		 * (it stays on a cluster's word while the cluster goes on) */
		prev_c = cur_c;
		prev_ind = cur_ind;
		cur_c = opt > 0 && opt < 256 && opt != '?' && opt != ':' ? opt : 0;
		cur_ind = optind;
		/* "-o=f.ntp": getopt hands "=f.ntp" to -o; '=' belongs to
		 * long options (options.c says the same of the other commands) */
		if (opt < 256 && opt != '?' && opt != ':' && optarg && optarg[0] == '=' &&
		    optarg != argv[optind - 1])
			return ntp_err("option -%c: a value is given after a space (-%c %s), not after '='",
				       opt, opt, optarg + 1);
		switch (opt) {
		case 'o': output = optarg; break;
		case O_TARGET_OUT: target_out = optarg; break;
		case 'r':
			if (ntp_opt_role("-r", optarg, &role, err)) return ntp_err("%s", err);
			break;
		case 't':
			if (ntp_opt_transport("-t", optarg, &c.transport, err)) return ntp_err("%s", err);
			break;
		case 'n': if (parse_u64("-n", optarg, 1, &c.count)) return 1; break;
		case 'd':
			if (parse_double("-d", optarg, 1e-9, 1e6, &dv)) return 1;
			c.duration_ns = (uint64_t)llround(dv * 1e9);
			break;
		case O_RATE: if (parse_double("--rate", optarg, 1e-3, 1e9, &c.rate)) return 1; break;
		case O_QD: if (ntp_parse_u32("--qd", optarg, 1, 4096, &c.qd)) return 1; break;
		case O_QUEUES: if (ntp_parse_u32("--queues", optarg, 1, 256, &c.queues)) return 1; break;
		case O_HOSTS: if (ntp_parse_u32("--hosts", optarg, 1, 256, &c.hosts)) return 1; break;
		case O_SIZES: if (parse_sizes(optarg, &c)) return 1; break;
		case O_READ: if (ntp_parse_u32("--read", optarg, 0, 100, &c.read_pct)) return 1; break;
		case O_INLINE:
			if (!strcmp(optarg, "0")) c.inline_max = 0;
			else if (ntp_parse_size("--inline-max", optarg, &c.inline_max)) return 1;
			break;
		case O_LBA:
			if (ntp_parse_u32("--lba-size", optarg, 512, 65536, &c.lba_size)) return 1;
			if (c.lba_size & (c.lba_size - 1))
				return ntp_err("option --lba-size: '%s' is not a power of two (512, 1024 ... 65536)", optarg);
			break;
		case O_NSSIZE: if (parse_bytes64("--ns-size", optarg, &c.ns_bytes)) return 1; break;
		case O_NSID: if (ntp_parse_u32("--nsid", optarg, 1, 0xfffffffe, &c.nsid)) return 1; break;
		case 's': if (ntp_parse_u32("-s", optarg, 1, 1u << 30, &c.sampling)) return 1; break;
		case O_DELAY: if (parse_delay(optarg, &c)) return 1; break;
		case O_EXACT: c.exact_queues = 1; break;
		case O_BIO: c.bio_stamp = 1; break;
		case O_HOSTQ: host_queues = 1; break;
		case O_LINK:
			if (parse_double("--link-gbps", optarg, 0, 1e5, &c.link_gbps)) return 1;
			/* slower than 1 Mb/s a command's serialisation outgrows
			 * the 64-bit nanosecond clock (synth.c's llround) */
			if (c.link_gbps > 0 && c.link_gbps < LINK_GBPS_MIN)
				return ntp_err("option --link-gbps: '%s' is below %g (1 Mb/s); 0 means no link",
					       optarg, LINK_GBPS_MIN);
			break;
		case O_OFFSET: {
			char *end;

			errno = 0;
			c.target_clock_offset = strtoll(optarg, &end, 0);
			if (errno || end == optarg || *end)
				return ntp_err("option --target-clock-offset: '%s' is not a whole number of ns", optarg);
			offset_set = 1;
			break;
		}
		case O_HOSTDEV:
		case O_TGTDEV:
			if (!*optarg || strlen(optarg) >= NTP_DEV_LEN)
				return ntp_err("option %s: name must be 1 to %d characters",
					       opt == O_HOSTDEV ? "--host-dev" : "--target-dev", NTP_DEV_LEN - 1);
			snprintf(opt == O_HOSTDEV ? c.host_dev : c.target_dev, NTP_DEV_LEN, "%s", optarg);
			break;
		case O_MISS:
			if (parse_double("--miss-rsp-sent", optarg, 0, 100, &dv)) return 1;
			c.miss_rsp_sent = dv / 100;
			break;
		case O_DROP:
			if (parse_double("--drop-target", optarg, 0, 100, &dv)) return 1;
			c.drop_target = dv / 100;
			break;
		case O_SEED: if (parse_u64("--seed", optarg, 0, &c.seed)) return 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case ':':
			if (optopt > 0 && optopt < 256)	/* "-qo": -o */
				return ntp_err("option -%c needs a value", optopt);
			return ntp_err("option %s needs a value", argv[optind - 1]);
		default:
			/* "--quiet=1": getopt says '?' with the option's value in optopt */
			if (optopt && !strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '='))
				return ntp_err("option %.*s takes no value", (int)strcspn(argv[optind - 1], "="),
					       argv[optind - 1]);
			/* a short option: optopt names it (argv[optind - 1] is
			 * another word inside a cluster, "-qZ", "-q=1"); an '='
			 * after a letter names that letter (as options.c does) */
			if (optopt > 0 && optopt < 256) {
				const char *w = prev_c && prev_ind < argc ? argv[prev_ind] : NULL;
				const char *eq = w && w[0] == '-' && w[1] != '-' ? strchr(w, '=') : NULL;

				if (optopt == '=' && eq && eq - w >= 2 && eq[-1] == prev_c)
					return ntp_err("option -%c takes no value", prev_c);
				return ntp_err("unknown option '-%c' (ntprof generate --help)", optopt);
			}
			return ntp_err("unknown option '%s' (ntprof generate --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ntp_err("unexpected argument '%s'", argv[optind]);
	if (!output)
		return ntp_err("option -o: an output file is needed");
	if (target_out && role != NTP_ROLE_BOTH)
		return ntp_err("option --target-out: only with -r both");
	if (!c.count && !c.duration_ns)
		c.duration_ns = NSEC;
	for (uint32_t i = 0; i < c.nsizes; i++) {
		if (c.sizes[i] % c.lba_size)
			return ntp_err("option --sizes: %u is not a multiple of the LBA size %u (--lba-size)",
				       c.sizes[i], c.lba_size);
		if (c.sizes[i] / c.lba_size > 65536)
			return ntp_err("option --sizes: %u is more than 65536 LBAs of %u bytes (--lba-size), "
				       "the most one command moves", c.sizes[i], c.lba_size);
		if (c.sizes[i] > c.ns_bytes)
			return ntp_err("option --sizes: %u is larger than the namespace (--ns-size %llu bytes)",
				       c.sizes[i], (unsigned long long)c.ns_bytes);
	}
	/* one file holding both sides is one machine: a single clock, the
	 * target's (unless --target-clock-offset says otherwise) and every
	 * host's; the file's header says one machine (role both) */
	if (role == NTP_ROLE_BOTH && !target_out) {
		if (!offset_set)
			c.target_clock_offset = 0;
		c.one_host_clock = 1;
	}
	per_host = c.hosts > 1 && role != NTP_ROLE_TARGET && strstr(output, "%d");
	if (strchr(output, '%') && (!per_host || strchr(output, '%') != strrchr(output, '%')))
		return ntp_err("option -o: '%s': the only %% allowed is one %%d, with --hosts N", output);
	if (per_host && (role == NTP_ROLE_BOTH && !target_out))
		return ntp_err("option -o: %%d (one file per host) needs -r host or --target-out");
	if (role != NTP_ROLE_TARGET && !per_host && c.hosts > 1 && (role == NTP_ROLE_HOST || target_out))
		return ntp_err("option --hosts: with several hosts, -o needs a %%d (one host file each) or -r target");

	/* the sides no file holds are still drawn (same seed, same commands) but not built */
	c.want_sides = (role != NTP_ROLE_TARGET ? 1u << NTP_SIDE_HOST : 0) |
		       (role != NTP_ROLE_HOST ? 1u << NTP_SIDE_TARGET : 0);
	s = ntp_synth_new(&c, err, sizeof(err));
	if (!s)
		return ntp_err("generate: %s", err);

	/* the output files */
	nouts = (role == NTP_ROLE_TARGET || (role == NTP_ROLE_BOTH && !target_out)) ? 1
		: (per_host ? c.hosts : 1) + (target_out ? 1 : 0);
	outs = calloc(nouts, sizeof(*outs));
	if (!outs) {
		ret = ntp_err("out of memory");
		goto done;
	}
	/* every path first: none may be another (-o X --target-out X, a
	 * link to the same file), nor a symbolic link, before one is created */
	for (size_t i = 0; i < nouts; i++) {
		struct out *o = &outs[i];

		if (role == NTP_ROLE_TARGET || (target_out && i == nouts - 1)) {
			snprintf(o->path, sizeof(o->path), "%s", target_out ? target_out : output);
		} else if (per_host) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			snprintf(o->path, sizeof(o->path), output, (int)(i + 1));
#pragma GCC diagnostic pop
		} else {
			snprintf(o->path, sizeof(o->path), "%s", output);
		}
	}
	for (size_t i = 0; i < nouts; i++) {
		const char *others[1];

		for (size_t j = 0; j < i; j++) {
			others[0] = outs[j].path;
			if (ntp_out_check(outs[i].path, others, 1, err, sizeof(err))) {
				ret = ntp_err("%s", err);
				goto done;
			}
		}
		if (ntp_out_check(outs[i].path, NULL, 0, err, sizeof(err))) {
			ret = ntp_err("%s", err);
			goto done;
		}
	}
	for (size_t i = 0; i < nouts; i++) {
		struct out *o = &outs[i];
		struct ntp_file_info info = { 0 };
		int is_target_file = role == NTP_ROLE_TARGET || (target_out && i == nouts - 1);

		if (is_target_file) {
			o->role = NTP_ROLE_TARGET;
			o->clock_side = NTP_SIDE_TARGET;
			snprintf(info.hostname, sizeof(info.hostname), "synth-target");
		} else {
			o->role = target_out ? NTP_ROLE_HOST : role;
			o->clock_side = NTP_SIDE_HOST;
			o->cntlid = per_host ? (uint16_t)(i + 1) : 0;
			if (per_host) {
				snprintf(info.hostname, sizeof(info.hostname), "synth-host%zu", i + 1);
			} else {
				snprintf(info.hostname, sizeof(info.hostname),
					 o->role == NTP_ROLE_BOTH ? "synth-loopback" : "synth-host");
			}
		}
		info.role = o->role;
		info.transport = c.transport;
		info.impl_host = NTP_IMPL_LINUX;
		info.impl_target = NTP_IMPL_LINUX;
		info.sampling = c.sampling;
		info.start_mono_ns = out_clock(s, o, 0);
		info.start_real_ns = START_REAL_NS;
		snprintf(info.kernel, sizeof(info.kernel), "synthetic");
		snprintf(info.tool_version, sizeof(info.tool_version), "%s", NTP_VERSION);
		if (host_queues && o->role != NTP_ROLE_TARGET) {
			info.n_hostq = 1;
			memcpy(info.hostq[0].dev, c.host_dev, NTP_DEV_LEN);
			info.hostq[0].hw_queues = c.queues;
			info.hostq[0].tags = c.qd;
		}
		o->w = ntp_writer_open(o->path, &info, err, sizeof(err));
		if (!o->w) {
			ret = ntp_err("%s", err);
			goto done;
		}
	}

	for (;;) {
		struct ntp_record rec;
		uint64_t t;
		enum ntp_synth_event ev = ntp_synth_next(s, &rec, &t);

		if (ev == NTP_SYNTH_END)
			break;
		if (t > t_end)
			t_end = t;
		if (ev == NTP_SYNTH_SECOND) {
			for (size_t i = 0; i < nouts; i++) {
				out_totals(s, &outs[i], t);
				ntp_writer_tick(outs[i].w, out_clock(s, &outs[i], t));
			}
			continue;
		}
		if (issued_at(s, &rec) > last_issue)
			last_issue = issued_at(s, &rec);
		for (size_t i = 0; i < nouts; i++) {
			struct out *o = &outs[i];

			if (rec.side == NTP_SIDE_HOST ? o->role == NTP_ROLE_TARGET ||
							(o->cntlid && o->cntlid != rec.cntlid)
						      : o->role == NTP_ROLE_HOST)
				continue;
			if ((werr = ntp_writer_add(o->w, &rec))) {
				ret = ntp_err("%s: cannot write: %s", o->path, strerror(-werr));
				goto done;
			}
			break;
		}
	}
	if (ntp_synth_last_time(s) > t_end)
		t_end = ntp_synth_last_time(s);
	if (c.duration_ns > t_end)
		t_end = c.duration_ns;
	ret = 0;
done:
	for (size_t i = 0; outs && i < nouts; i++) {
		struct out *o = &outs[i];
		uint64_t n;

		if (!o->w)
			continue;
		n = ntp_writer_records(o->w);
		if (!ret)
			out_totals(s, o, t_end);
		werr = ntp_writer_close(o->w, out_clock(s, o, t_end));
		if (werr && !ret)
			ret = ntp_err("%s: cannot write: %s", o->path, strerror(-werr));
		else if (!ret && !quiet)
			ntp_note("%llu records written to %s", (unsigned long long)n, o->path);
	}
	/* no half-written recording is left behind to be read as a whole one */
	for (size_t i = 0; ret && outs && i < nouts; i++)
		if (outs[i].w)
			unlink(outs[i].path);
	if (!ret && !quiet)
		ntp_note("%llu commands issued, %llu sampled (one in %u)",
			 (unsigned long long)ntp_synth_issued(s), (unsigned long long)ntp_synth_sampled(s),
			 c.sampling);
	/* An open loop faster than the tags serve: the arrivals wait for a
	 * tag (in no timestamp) and the run stretches; said, with what the
	 * tags did serve (the commands over the time they were taken in).
	 * Told by when the last sampled command took its tag against when the
	 * arrivals end (-d; with -n, count / rate give or take 4 standard
	 * deviations of a Poisson stream's), beyond a twentieth: not by the run's
	 * end, which holds the last completion (a long latency is no overload). */
	if (!ret && !quiet && c.rate > 0 && last_issue) {
		double want = c.duration_ns ? c.duration_ns / 1e9 : (double)c.count / c.rate, took = t_end / 1e9;
		double last = last_issue / 1e9, margin = 0.05 * want;
		uint32_t tags = c.qd * c.queues * c.hosts;

		if (!c.duration_ns)
			margin += 4 * sqrt((double)c.count) / c.rate;
		if (want > 0 && last > want + margin) {
			char hosts[32] = "";

			if (c.hosts > 1)
				snprintf(hosts, sizeof(hosts), " x --hosts %u", c.hosts);
			ntp_note("--rate %g is more than %u tag%s (--qd %u x --queues %u%s) serve: %.0f commands/s; "
				 "the run took %.3f s, not %.3f s, and the time commands waited for a tag is in no "
				 "timestamp", c.rate, tags, tags == 1 ? "" : "s", c.qd, c.queues, hosts,
				 (double)ntp_synth_issued(s) / last, took, want);
		}
	}
	free(outs);
	ntp_synth_free(s);
	return ret;
}
