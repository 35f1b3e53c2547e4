// SPDX-License-Identifier: GPL-2.0
/*
 * options_tables.c - every command's options as data (options.h): the parsers
 * and --help of `ntprof record` and ntprof-top read these tables; the man
 * pages and the shell completion are made from that --help
 * (tools/gen-docs.sh).
 */
#include <stddef.h>
#include "options.h"
#include "collector/hooks.h"
#include "top/opts.h"

#define CAP(f) offsetof(struct ntp_capture_opts, f)

/* What to record: `ntprof record` and ntprof-top alike. */
const struct ntp_optdef ntp_capture_optdefs[] = {
	{ .name = "role", .letter = 'r', .arg = "host|target|both",
	  .help = "the side(s) recorded on this machine (default host)",
	  .type = NTP_OT_ROLE, .off = CAP(co.role), .values = "host target both" },
	{ .name = "transport", .letter = 't', .arg = "tcp|rdma",
	  .help = "the transport (default tcp)",
	  .type = NTP_OT_TRANSPORT, .off = CAP(co.transport), .values = "tcp rdma" },
	{ .letter = 's', .arg = "N",
	  .help = "record one command in N (default 1000)",
	  .type = NTP_OT_U32, .off = CAP(co.sampling), .lo = 1, .hi = 1u << 30 },
	{ .name = "session", .arg = "nvmeXnY",
	  .help = "one namespace",
	  .type = NTP_OT_SESSION, .off = CAP(co.session) },
	{ .name = "io-type", .arg = "read|write",
	  .help = "only reads or only writes",
	  .type = NTP_OT_IO_TYPE, .off = CAP(co.io_type), .values = "read write" },
	{ .name = "size", .arg = "4K,128K",
	  .help = "only these I/O sizes",
	  .type = NTP_OT_SIZES, .off = CAP(co.sizes), .off2 = CAP(co.n_sizes) },
	{ .letter = 'i', .arg = "SEC",
	  .help = "one interval every SEC seconds, 0.1 to 86400 (default 1)",
	  .type = NTP_OT_DOUBLE, .off = CAP(interval_s), .lo = 0.1, .hi = 86400 },
	{ .name = "exact-queues",
	  .help = "count each stage's queue depth from every command's\n"
	  "times (map operations on every I/O) instead of\nLittle's law (sampled mean x exact command rate)",
	  .type = NTP_OT_BOOL, .off = CAP(co.exact_queues) },
	{ .name = "spdk-host", .arg = "BIN",
	  .help = "the host is SPDK (e.g. build/bin/spdk_nvme_perf): record\n"
	  "the running processes of BIN through ntprof's USDT\nprobes (docs/spdk.md)",
	  .type = NTP_OT_STRING, .off = CAP(co.spdk_host), .values = "FILE" },
	{ .name = "spdk-target", .arg = "BIN",
	  .help = "the target is SPDK (e.g. build/bin/nvmf_tgt), the same way",
	  .type = NTP_OT_STRING, .off = CAP(co.spdk_target), .values = "FILE" },
	NTP_OPTDEF_END
};

/* How to hook. */
const struct ntp_optdef ntp_hook_optdefs[] = {
	{ .name = "kprobes",
	  .help = "only kprobes (default: fentry if it can attach now)",
	  .type = NTP_OT_CHOICE, .off = CAP(co.flavour), .lo = NTP_FLAVOUR_KPROBE },
	{ .name = "fentry",
	  .help = "only fentry/fexit",
	  .type = NTP_OT_CHOICE, .off = CAP(co.flavour), .lo = NTP_FLAVOUR_FENTRY },
	{ .name = "attach-timeout", .arg = "SEC",
	  .help = "fall back from fentry to kprobes when attaching\n"
	  "takes longer than SEC seconds (default 10)",
	  .type = NTP_OT_DOUBLE, .off = CAP(co.attach_timeout_s), .lo = 0.001, .hi = 3600 },
	{ .name = "btf", .arg = "FILE",
	  .help = "the NVMe modules' types, for a kernel whose modules\n"
	  "have no BTF (before 5.11; tools/ntprof-btf.sh makes it);\n"
	  "default: " NTP_BTF_DIR "/$(uname -r).btf if it exists",
	  .type = NTP_OT_STRING, .off = CAP(co.btf_path), .values = "FILE" },
	NTP_OPTDEF_END
};

#define REC(f) offsetof(struct ntp_record_opts, f)

static const struct ntp_optdef record_optdefs[] = {
	{ .letter = 'd', .arg = "SEC",
	  .help = "stop after SEC seconds (default: Ctrl-C)",
	  .type = NTP_OT_U32, .off = REC(duration), .lo = 1, .hi = 86400 * 365 },
	{ .name = "offline",
	  .help = "no per-interval lines, only the final report",
	  .type = NTP_OT_FLAG, .off = REC(offline) },
	{ .letter = 'o', .arg = "FILE",
	  .help = "save every record (.ntp)",
	  .type = NTP_OT_STRING, .off = REC(out), .values = "FILE" },
	{ .letter = 'j', .arg = "FILE",
	  .help = "write the final report as JSON ('-': stdout)",
	  .type = NTP_OT_STRING, .off = REC(json), .values = "FILE" },
	{ .name = "metrics", .arg = "FILE",
	  .help = "rewrite FILE every interval in the Prometheus text\n"
	  "format (node_exporter's textfile collector)",
	  .type = NTP_OT_STRING, .off = REC(metrics), .values = "FILE" },
	{ .name = "help", .letter = 'h',
	  .help = "this help",
	  .type = NTP_OT_FLAG, .off = REC(help) },
	NTP_OPTDEF_END
};

const struct ntp_optset ntp_record_optsets[] = {
	{ "what to record:", ntp_capture_optdefs },
	{ "how to hook:", ntp_hook_optdefs },
	{ "output:", record_optdefs },
};

#define TOP(f) offsetof(struct top_opts, f)

static const struct ntp_optdef top_replay_optdefs[] = {
	{ .name = "replay", .arg = "FILE.ntp",
	  .help = "play a recording instead of the live source; more\n"
	  "files after it are joined as `ntprof report` does\n(HOST.ntp... TARGET.ntp)",
	  .type = NTP_OT_STRING, .off = TOP(src.replay), .values = "FILE" },
	{ .name = "speed", .arg = "X",
	  .help = "X times its own pace (default 1; 0: as fast as possible)",
	  .type = NTP_OT_DOUBLE, .off = TOP(src.speed), .lo = 0, .hi = 10000 },
	NTP_OPTDEF_END
};

static const struct ntp_optdef top_batch_optdefs[] = {
	{ .name = "batch", .letter = 'b',
	  .help = "print each interval's screen as text, no terminal control",
	  .type = NTP_OT_FLAG, .off = TOP(batch) },
	{ .letter = 'n', .arg = "N",
	  .help = "stop after N intervals",
	  .type = NTP_OT_U32, .off = TOP(iterations), .lo = 1, .hi = 1000000000 },
	{ .name = "json",
	  .help = "one JSON object per interval instead of the screen",
	  .type = NTP_OT_FLAG, .off = TOP(json) },
	{ .name = "width", .arg = "COLS",
	  .help = "batch screen width (default $COLUMNS or 100)",
	  .type = NTP_OT_U32, .off = TOP(width), .lo = 20, .hi = 1000 },
	NTP_OPTDEF_END
};

static const struct ntp_optdef top_look_optdefs[] = {
	{ .name = "theme", .arg = "NAME|FILE",
	  .help = "default, light, mono, or a theme file (themes/README.md)",
	  .type = NTP_OT_STRING, .off = TOP(theme), .values = "default light mono" },
	{ .name = "no-color",
	  .help = "no colour (NO_COLOR in the environment does the same)",
	  .type = NTP_OT_FLAG, .off = TOP(no_color) },
	{ .name = "ascii",
	  .help = "ASCII bars and markers (automatic outside UTF-8 locales)",
	  .type = NTP_OT_FLAG, .off = TOP(ascii) },
	{ .name = "dir", .arg = "DIR",
	  .help = "where w (recordings) and S (snapshots) write (default .)",
	  .type = NTP_OT_STRING, .off = TOP(dir), .values = "DIR" },
	{ .name = "help", .letter = 'h',
	  .help = "this help",
	  .type = NTP_OT_CUSTOM, .key = 'h' },
	{ .name = "version", .letter = 'V',
	  .help = "the version",
	  .type = NTP_OT_CUSTOM, .key = 'V' },
	NTP_OPTDEF_END
};

const struct ntp_optset ntp_top_optsets[] = {
	{ "what to watch (as in ntprof record):", ntp_capture_optdefs },
	{ "how to hook (as in ntprof record):", ntp_hook_optdefs },
	{ "replay:", top_replay_optdefs },
	{ "batch:", top_batch_optdefs },
	{ "look:", top_look_optdefs },
};

const struct ntp_optcmd ntp_optcmds[] = {
	{ "ntprof", "record", "ntprof record [options]",
	  "attach the hooks, sample commands, print a line per interval and the report",
	  ntp_record_optsets, sizeof(ntp_record_optsets) / sizeof(ntp_record_optsets[0]) },
	{ "ntprof-top", NULL, "ntprof-top [options] [--replay FILE.ntp [FILE.ntp...]]",
	  "the live monitor: per group the stage bars, queue depths and p99",
	  ntp_top_optsets, sizeof(ntp_top_optsets) / sizeof(ntp_top_optsets[0]) },
};
const size_t ntp_n_optcmds = sizeof(ntp_optcmds) / sizeof(ntp_optcmds[0]);
