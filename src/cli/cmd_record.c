// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_record.c - `ntprof record`: attach the hooks, sample commands until
 * Ctrl-C, SIGTERM or -d, print a line per group every -i seconds, save every
 * record with -o, and print the core's report at the end (002).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "cli.h"
#include "collector/collector.h"
#include "collector/hooks.h"
#include "core/clock.h"
#include "core/model.h"
#include "core/ntpfile.h"
#include "core/opt.h"
#include "core/report.h"

#define MAX_TOTALS 1024

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* An option parser of core/opt.h returned rc: report its message. */
static int opt_failed(int rc, const char *err)
{
	return rc ? ntp_err("%s", err) : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof record [options]\n"
"Attaches ntprof's hooks, samples commands until Ctrl-C (or -d), prints a line\n"
"per group every interval, and the report at the end. Needs root.\n"
"\n"
"  -r, --role host|target|both   the side(s) recorded (default host)\n"
"  -t, --transport tcp|rdma      the transport (default tcp)\n"
"  -s N                          record one command in N (default 1000)\n"
"      --session nvmeXnY         one namespace\n"
"      --io-type read|write      only reads or only writes\n"
"      --size 4K,128K            only these I/O sizes\n"
"  -d SEC                        stop after SEC seconds (default: Ctrl-C)\n"
"  -i SEC                        print the per-group line every SEC s (default 1)\n"
"      --offline                 no per-interval lines, only the final report\n"
"  -o FILE                       save every record (.ntp)\n"
"  -j FILE                       write the final report as JSON ('-': stdout)\n"
"      --kprobes, --fentry       force a flavour of function hooks\n"
"      --attach-timeout SEC      fall back from fentry to kprobes when attaching\n"
"                                takes longer than SEC seconds (default 10)\n"
"      --btf FILE                the NVMe modules' types, for a kernel whose modules\n"
"                                have no BTF (before 5.11; tools/ntprof-btf.sh makes it);\n"
"                                default: " NTP_BTF_DIR "/$(uname -r).btf if it exists\n"
"      --exact-queues            count each stage's queue depth from every command's\n"
"                                times (map operations on every I/O) instead of\n"
"                                Little's law (sampled mean x exact command rate)\n"
"      --spdk-host BIN           the host is SPDK (e.g. build/bin/spdk_nvme_perf): record\n"
"                                the running processes of BIN through ntprof's USDT\n"
"                                probes (docs/spdk.md)\n"
"      --spdk-target BIN         the target is SPDK (e.g. build/bin/nvmf_tgt), the same way\n");
}

struct rec_ctx {
	struct ntp_writer *w;
	struct ntp_model *m;
	int write_err;
};

static void on_record(void *ctx, const struct ntp_record *r)
{
	struct rec_ctx *rc = ctx;

	if (rc->w && !rc->write_err)
		rc->write_err = ntp_writer_add(rc->w, r);
	ntp_model_ingest(rc->m, r);
}

static void say_stderr(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "ntprof: %s\n", line);
}

static void push_totals(struct ntp_collector *c, struct rec_ctx *rc, struct ntp_total *tot, uint64_t now)
{
	int n = ntp_collector_totals(c, tot, MAX_TOTALS);

	if (n < 0)
		n = 0;
	ntp_model_set_totals(rc->m, tot, (size_t)n, now);
	if (rc->w)
		ntp_writer_set_totals(rc->w, tot, (size_t)n, now);
}

/* The report; after an error, marked partial on its first line (and in a
 * note, which the JSON report carries too). */
static void print_report(const struct ntp_snapshot *snap, const struct ntp_report_meta *meta,
			 const char *partial)
{
	if (partial[0])
		printf("PARTIAL REPORT (the recording stopped at an error: %s)\n", partial);
	ntp_report_print(stdout, snap, meta);
}

int cmd_record(int argc, char **argv)
{
	enum { O_SESSION = 256, O_IOTYPE, O_SIZE, O_OFFLINE, O_KPROBES, O_FENTRY, O_EXACT, O_ATTACH_TIMEOUT, O_BTF,
	       O_SPDK_HOST, O_SPDK_TARGET };
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "transport", required_argument, NULL, 't' },
		{ "session", required_argument, NULL, O_SESSION },
		{ "io-type", required_argument, NULL, O_IOTYPE },
		{ "size", required_argument, NULL, O_SIZE },
		{ "offline", no_argument, NULL, O_OFFLINE },
		{ "kprobes", no_argument, NULL, O_KPROBES },
		{ "fentry", no_argument, NULL, O_FENTRY },
		{ "exact-queues", no_argument, NULL, O_EXACT },
		{ "attach-timeout", required_argument, NULL, O_ATTACH_TIMEOUT },
		{ "btf", required_argument, NULL, O_BTF },
		{ "spdk-host", required_argument, NULL, O_SPDK_HOST },
		{ "spdk-target", required_argument, NULL, O_SPDK_TARGET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ntp_collector_opts co = { .role = NTP_ROLE_HOST, .transport = NTP_TRANSPORT_TCP,
					 .sampling = 1000, .io_type = -1, .attach_timeout_s = 10,
					 .say = say_stderr };
	unsigned duration = 0, interval = 1;
	const char *out = NULL, *json = NULL;
	int offline = 0, opt, ret = 0;
	struct ntp_collector_counters cnt;
	struct ntp_model_config mc = { 0 };
	struct ntp_report_meta meta;
	struct ntp_file_info fi;
	struct ntp_collector *c;
	struct ntp_snapshot *snap = NULL;
	struct ntp_total *tot = NULL;
	struct rec_ctx rc = { 0 };
	struct sigaction sa;
	struct utsname u;
	char err[512], oerr[NTP_OPT_ERR_LEN], host[NTP_HOSTNAME_LEN] = "";
	/* Why the recording stopped early (a ring buffer read or a file write
	 * failed): the report then covers only what came before, and says so. */
	char partial[600] = "";
	uint64_t start, next_tick, end_at = 0, now, lost_seen = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":r:t:s:d:i:o:j:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (opt_failed(ntp_opt_role("-r", optarg, &co.role, oerr), oerr))
				return 1;
			break;
		case 't':
			if (opt_failed(ntp_opt_transport("-t", optarg, &co.transport, oerr), oerr))
				return 1;
			break;
		case 's':
			if (ntp_parse_u32("-s", optarg, 1, 1u << 30, &co.sampling))
				return 1;
			break;
		case O_SESSION:
			if (opt_failed(ntp_opt_session("--session", optarg, co.session, oerr), oerr))
				return 1;
			break;
		case O_IOTYPE:
			if (opt_failed(ntp_opt_io_type("--io-type", optarg, &co.io_type, oerr), oerr))
				return 1;
			break;
		case O_SIZE: {
			unsigned n = (unsigned)co.n_sizes;
			int rc = ntp_opt_sizes("--size", optarg, co.sizes, NTP_MAX_SIZES, &n, oerr);

			co.n_sizes = (int)n;
			if (opt_failed(rc, oerr))
				return 1;
			break;
		}
		case 'd':
			if (ntp_parse_u32("-d", optarg, 1, 86400 * 365, &duration))
				return 1;
			break;
		case 'i':
			if (ntp_parse_u32("-i", optarg, 1, 86400, &interval))
				return 1;
			break;
		case O_OFFLINE: offline = 1; break;
		case 'o': out = optarg; break;
		case 'j': json = optarg; break;
		case O_KPROBES:
			if (co.flavour == NTP_FLAVOUR_FENTRY)
				return ntp_err("--kprobes and --fentry exclude each other");
			co.flavour = NTP_FLAVOUR_KPROBE;
			break;
		case O_FENTRY:
			if (co.flavour == NTP_FLAVOUR_KPROBE)
				return ntp_err("--kprobes and --fentry exclude each other");
			co.flavour = NTP_FLAVOUR_FENTRY;
			break;
		case O_ATTACH_TIMEOUT:
			if (opt_failed(ntp_opt_double("--attach-timeout", optarg, 0.001, 3600,
						      &co.attach_timeout_s, oerr), oerr))
				return 1;
			break;
		case O_BTF: co.btf_path = optarg; break;
		case O_EXACT: co.exact_queues = true; break;
		case O_SPDK_HOST: co.spdk_host = optarg; break;
		case O_SPDK_TARGET: co.spdk_target = optarg; break;
		case 'h': usage(stdout); return 0;
		case ':': return ntp_err("option %s needs a value", argv[optind - 1]);
		default: return ntp_err("unknown option '%s' (ntprof record --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ntp_err("unexpected argument '%s' (ntprof record --help)", argv[optind]);
	if (json && !strcmp(json, "-")) {
		ntp_json_errors = true;
		offline = 1;	/* stdout carries the JSON document only */
	}

	snap = calloc(1, sizeof(*snap));
	tot = calloc(MAX_TOTALS, sizeof(*tot));
	if (!snap || !tot) {
		ret = ntp_err("out of memory");
		goto out;
	}
	gethostname(host, sizeof(host) - 1);
	memset(&u, 0, sizeof(u));
	uname(&u);

	/* Signals first: a Ctrl-C while attaching still ends in a clean close. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	c = ntp_collector_open(&co, err, sizeof(err));
	if (!c) {
		ret = ntp_err("%s", err);
		goto out;
	}
	start = ntp_mono_ns();
	if (out) {
		memset(&fi, 0, sizeof(fi));
		fi.role = co.role;
		fi.transport = co.transport;
		fi.impl_host = co.spdk_host ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
		fi.impl_target = co.spdk_target ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
		fi.sampling = co.sampling;
		fi.record_size = sizeof(struct ntp_record);
		fi.start_mono_ns = start;
		fi.start_real_ns = ntp_real_ns();
		snprintf(fi.hostname, sizeof(fi.hostname), "%s", host);
		snprintf(fi.kernel, sizeof(fi.kernel), "%.*s", (int)sizeof(fi.kernel) - 1, u.release);
		snprintf(fi.tool_version, sizeof(fi.tool_version), "%s", NTP_VERSION);
		rc.w = ntp_writer_open(out, &fi, err, sizeof(err));
		if (!rc.w) {
			ntp_collector_close(c);
			ret = ntp_err("%s", err);
			goto out;
		}
	}
	mc.role = co.role;
	mc.transport = co.transport;
	mc.impl_host = co.spdk_host ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
	mc.impl_target = co.spdk_target ? NTP_IMPL_SPDK : NTP_IMPL_LINUX;
	mc.sampling = co.sampling;
	rc.m = ntp_model_new(&mc);
	if (!rc.m) {
		ntp_collector_close(c);
		ntp_writer_close(rc.w, start);
		ret = ntp_err("out of memory");
		goto out;
	}
	ntp_model_set_start(rc.m, start);

	fprintf(stderr, "ntprof: profiling as %s, sampling 1 of %u commands%s%s; %s\n",
		ntp_role_name(co.role), co.sampling,
		co.exact_queues ? ", queue depths counted on every command" : "",
		out ? ", saving records" : "",
		duration ? "stops after -d" : "Ctrl-C to stop");
	if (!offline) {
		printf("every %u s, per group: sampled commands, rate, latency, and each stage's share of the mean\n",
		       interval);
		if (co.role == NTP_ROLE_HOST)
			printf("(*: network and target together; the target's side is not recorded)\n");
		if (co.exact_queues)
			printf("(QD (counted): commands in the group's stages on average, counted in the kernel)\n");
		ntp_interval_header_qd(stdout, co.exact_queues);
		fflush(stdout);
	}
	next_tick = start + (uint64_t)interval * 1000000000ull;
	if (duration)
		end_at = start + (uint64_t)duration * 1000000000ull;

	while (!stop_signal) {
		int n = ntp_collector_poll(c, 100, on_record, &rc);

		if (n < 0) {
			snprintf(partial, sizeof(partial), "reading the BPF ring buffer failed: %s", strerror(-n));
			break;
		}
		now = ntp_mono_ns();
		if (rc.w && !rc.write_err)
			rc.write_err = ntp_writer_tick(rc.w, now);	/* it flushes: a write may fail */
		if (rc.write_err) {
			snprintf(partial, sizeof(partial), "%s: writing records failed: %s", out,
				 strerror(-rc.write_err));
			break;
		}
		if (end_at && now >= end_at)
			now = end_at;
		if (now >= next_tick || (end_at && now >= end_at)) {
			uint64_t lost = ntp_collector_lost(c);

			push_totals(c, &rc, tot, now);
			ntp_model_add_lost(rc.m, lost - lost_seen);
			lost_seen = lost;
			if (now >= next_tick) {
				ntp_model_close_interval(rc.m, now, snap);
				if (!offline) {
					ntp_interval_lines(stdout, snap, (now - start) / 1e9);
					fflush(stdout);
				}
				next_tick += (uint64_t)interval * 1000000000ull;
			}
		}
		if (end_at && now >= end_at)
			break;
	}

	/* Stop: take what is left in the ring buffer (unless reading it just
	 * failed), then detach every link. */
	if (partial[0])
		ret = ntp_err("%s", partial);
	else
		while (ntp_collector_poll(c, 0, on_record, &rc) > 0)
			;
	now = ntp_mono_ns();
	if (end_at && now > end_at)
		now = end_at;
	push_totals(c, &rc, tot, now);
	ntp_model_add_lost(rc.m, ntp_collector_lost(c) - lost_seen);
	ntp_collector_counters(c, &cnt);
	ntp_collector_close(c);
	ntp_model_close_interval(rc.m, now, snap);
	ntp_model_total(rc.m, snap);

	if (rc.w) {
		uint64_t nrec = ntp_writer_records(rc.w);
		int e = ntp_writer_close(rc.w, now);

		rc.w = NULL;
		/* a failed close leaves a file the reader may refuse; the report
		 * itself (from memory) is whole unless partial[] says otherwise */
		if (e && !rc.write_err)	/* a write error is sticky: close reports it again */
			ret = ntp_err("%s: closing the recording failed: %s", out, strerror(-e));
		else if (rc.write_err)
			fprintf(stderr, "ntprof: %s is incomplete: records after the write error are missing\n",
				out);
		else if (partial[0])
			fprintf(stderr, "ntprof: %llu records written to %s before the error; it lacks the rest\n",
				(unsigned long long)nrec, out);
		else
			fprintf(stderr, "ntprof: %llu records written to %s\n", (unsigned long long)nrec, out);
	}
	if (stop_signal)
		fprintf(stderr, "ntprof: stopped by %s\n", stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
	if (cnt.lost || cnt.missed_host || cnt.missed_target || cnt.table_full)
		fprintf(stderr, "ntprof: kernel side: %llu records lost (ring buffer full), %llu host and %llu "
			"target records closed after a missed completion, %llu not tracked (table full)\n",
			(unsigned long long)cnt.lost, (unsigned long long)cnt.missed_host,
			(unsigned long long)cnt.missed_target, (unsigned long long)cnt.table_full);

	memset(&meta, 0, sizeof(meta));
	if (co.role == NTP_ROLE_TARGET) {
		meta.target_name = host;
		meta.target_kernel = u.release;
	} else {
		meta.host_name = host;
		meta.host_kernel = u.release;
	}
	if (cnt.missed_host || cnt.missed_target)
		ntp_report_note(&meta, "%llu records were closed after a missed completion (kprobe misses)",
				(unsigned long long)(cnt.missed_host + cnt.missed_target));
	if (partial[0])
		ntp_report_note(&meta, "PARTIAL: the recording stopped after %.1f s: %s",
				(now - start) / 1e9, partial);
	if (json && ntp_json_errors && partial[0]) {
		/* stdout already carries the error document: one document only */
	} else if (json) {
		json_object *o = ntp_report_json(snap, &meta);
		FILE *f;

		if (partial[0])
			json_object_object_add(o, "partial", json_object_new_string(partial));
		f = strcmp(json, "-") ? fopen(json, "w") : stdout;
		if (!f) {
			ret = ntp_err("%s: cannot write the JSON report: %s", json, strerror(errno));
		} else {
			fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
									     JSON_C_TO_STRING_NOSLASHESCAPE));
			if (f != stdout && fclose(f))
				ret = ntp_err("%s: cannot write the JSON report: %s", json, strerror(errno));
		}
		json_object_put(o);
		if (strcmp(json, "-"))
			print_report(snap, &meta, partial);
	} else {
		print_report(snap, &meta, partial);
	}
	ntp_model_free(rc.m);
out:
	free(snap);
	free(tot);
	return ret;
}
