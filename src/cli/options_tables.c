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

/* Which side(s) and transport: record, ntprof-top and probe. */
const struct ntp_optdef ntp_side_optdefs[] = {
	{ .name = "role", .letter = 'r', .arg = "host|target|both",
	  .help = "the side(s) recorded on this machine (default host)",
	  .type = NTP_OT_ROLE, .off = CAP(co.role), .values = "host target both" },
	{ .name = "transport", .letter = 't', .arg = "tcp|rdma",
	  .help = "the transport (default tcp)",
	  .type = NTP_OT_TRANSPORT, .off = CAP(co.transport), .values = "tcp rdma" },
	NTP_OPTDEF_END
};

/* What to record: `ntprof record` and ntprof-top alike. */
const struct ntp_optdef ntp_capture_optdefs[] = {
	{ .letter = 's', .arg = "N",
	  .help = "record one command in N (default 1000)",
	  .type = NTP_OT_U32, .off = CAP(co.sampling), .lo = 1, .hi = 1u << 30 },
	{ .name = "session", .arg = "nvmeXnY",
	  .help = "one namespace of the host (with -r both the target\nside follows it: see --target-session)",
	  .type = NTP_OT_SESSION, .off = CAP(co.session) },
	{ .name = "target-session", .arg = "NQN:NSID",
	  .help = "the target side's namespace: its subsystem and NSID\n"
	  "(default with -r both: the one --session's namespace\nmaps to; else every namespace)",
	  .type = NTP_OT_CHARS, .off = CAP(co.target_session), .hi = sizeof(((struct ntp_collector_opts *)0)->target_session) },
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
	  "default " NTP_BTF_DIR "/$(uname -r).btf if it exists",
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
	{ "what to record:", ntp_side_optdefs },
	{ NULL, ntp_capture_optdefs },
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

static const struct ntp_optdef top_whatif_optdefs[] = {
	{ .name = "what-if-servers", .arg = "STAGE=N|delay[,...]",
	  .help = "a stage's parallelism, e.g. storage=4 (stages: host_block\nhost_driver network target_driver storage)",
	  .type = NTP_OT_CUSTOM, .key = 'W', .list = "stage" },
	{ .name = "what-if-tags", .arg = "N",
	  .help = "the host's tags per hardware queue (default: from sysfs\nlive, from the recording's header in replay)",
	  .type = NTP_OT_U32, .off = TOP(wi.tags), .lo = 1, .hi = 65536 },
	{ .name = "what-if-qd-was", .arg = "N",
	  .help = "the queue depth the workload runs at (default: rate x\nmean, which reads low when the application's own time\nper command is not small beside the latency; keys [ ])",
	  .type = NTP_OT_U32, .off = TOP(wi.base_qd), .lo = 1, .hi = 1024 },
	NTP_OPTDEF_END
};

const struct ntp_optset ntp_top_optsets[] = {
	{ "what to watch (as in ntprof record):", ntp_side_optdefs },
	{ NULL, ntp_capture_optdefs },
	{ "how to hook (as in ntprof record):", ntp_hook_optdefs },
	{ "replay:", top_replay_optdefs },
	{ "batch:", top_batch_optdefs },
	{ "look:", top_look_optdefs },
	{ "what-if (key W; docs/what-if.md):", top_whatif_optdefs },
};

#define CMD(f) offsetof(struct ntp_cmd_opts, f)

static const struct ntp_optdef help_optdefs[] = {
	{ .name = "help", .letter = 'h', .help = "this help", .type = NTP_OT_FLAG, .off = CMD(help) },
	NTP_OPTDEF_END
};

static const struct ntp_optdef report_optdefs[] = {
	{ .name = "detail", .letter = 'd', .help = "also the components of each stage, in path order",
	  .type = NTP_OT_FLAG, .off = CMD(detail) },
	{ .name = "json", .letter = 'j', .arg = "FILE",
	  .help = "write the report as JSON to FILE ('-': to stdout, instead\nof the text); schema in docs/json-schema.md",
	  .type = NTP_OT_STRING, .off = CMD(json), .values = "FILE" },
	{ .name = "what-if-qd", .arg = "N[,N...]",
	  .help = "also predict each group at these queue depths (1..1024):\nIOPS, mean, p99, each stage; method in docs/what-if.md",
	  .type = NTP_OT_STRING, .off = CMD(wi_qd), .list = "queue depth" },
	{ .name = "what-if-qd-was", .arg = "N",
	  .help = "the queue depth the recording ran at (default: rate x\nmean, which reads low when the application's own time\nper command is not small beside the latency)",
	  .type = NTP_OT_U32, .off = CMD(wi_qd_was), .lo = 1, .hi = 1024 },
	{ .name = "what-if-fit", .arg = "FILE[@QD][,...]",
	  .help = "the same workload recorded at other queue depths (QD if\nknown): the stages' parallelism is fitted across the loads",
	  .type = NTP_OT_STRING, .off = CMD(wi_fit), .values = "FILE", .list = "file" },
	{ .name = "what-if-servers", .arg = "STAGE=N|delay[,...]",
	  .help = "give a stage's parallelism, e.g. storage=4 (stages:\nhost_block host_driver network target_driver storage)",
	  .type = NTP_OT_STRING, .off = CMD(wi_servers), .list = "stage" },
	{ .name = "what-if-tags", .arg = "N",
	  .help = "the host's tags per hardware queue (nr_requests):\nbeyond them commands wait in the host's block layer",
	  .type = NTP_OT_U32, .off = CMD(wi_tags), .lo = 1, .hi = 65536 },
	{ .name = "help", .letter = 'h', .help = "this help", .type = NTP_OT_FLAG, .off = CMD(help) },
	NTP_OPTDEF_END
};

static const struct ntp_optdef compare_optdefs[] = {
	{ .name = "json", .letter = 'j', .arg = "FILE",
	  .help = "write the comparison as JSON to FILE ('-': to stdout,\ninstead of the text); schema in docs/json-schema.md",
	  .type = NTP_OT_STRING, .off = CMD(json), .values = "FILE" },
	{ .name = "help", .letter = 'h', .help = "this help", .type = NTP_OT_FLAG, .off = CMD(help) },
	NTP_OPTDEF_END
};

static const struct ntp_optdef btf_optdefs[] = {
	{ .name = "output", .letter = 'o', .arg = "OUT", .help = "the merged BTF file (required)",
	  .type = NTP_OT_STRING, .off = CMD(out), .values = "FILE" },
	{ .name = "help", .letter = 'h', .help = "this help", .type = NTP_OT_FLAG, .off = CMD(help) },
	NTP_OPTDEF_END
};

static const struct ntp_optset report_optsets[] = { { NULL, report_optdefs } };
static const struct ntp_optset compare_optsets[] = { { NULL, compare_optdefs } };
static const struct ntp_optdef dump_optdefs[] = {
	{ .name = "header", .help = "print the file's header instead of the records\n(docs/ntp-format.md)",
	  .type = NTP_OT_FLAG, .off = CMD(header) },
	{ .name = "help", .letter = 'h', .help = "this help", .type = NTP_OT_FLAG, .off = CMD(help) },
	NTP_OPTDEF_END
};

static const struct ntp_optset dump_optsets[] = { { NULL, dump_optdefs } };
static const struct ntp_optset btf_optsets[] = { { NULL, btf_optdefs } };
/* probe's words for the SPDK sides (record's are in ntp_capture_optdefs) */
static const struct ntp_optdef probe_spdk_optdefs[] = {
	{ .name = "spdk-host", .arg = "BIN", .help = "the host is SPDK: check BIN (docs/spdk.md)",
	  .type = NTP_OT_STRING, .off = CAP(co.spdk_host), .values = "FILE" },
	{ .name = "spdk-target", .arg = "BIN", .help = "the target is SPDK: check BIN",
	  .type = NTP_OT_STRING, .off = CAP(co.spdk_target), .values = "FILE" },
	NTP_OPTDEF_END
};

/* probe: bases { struct ntp_capture_opts x 3, struct ntp_cmd_opts } */
static const struct ntp_optset probe_optsets[] = {
	{ NULL, ntp_side_optdefs }, { NULL, ntp_hook_optdefs }, { NULL, probe_spdk_optdefs },
	{ NULL, help_optdefs },
};

#define SETS(a) a, sizeof(a) / sizeof(a[0])

const struct ntp_optcmd ntp_optcmds[] = {
	{ "ntprof", "record", "ntprof record [options]",
	  "attach the hooks, sample commands, print a line per interval and the report",
	  SETS(ntp_record_optsets) },
	{ "ntprof", "report", "ntprof report [--detail] [-j FILE] FILE...",
	  "one report over whole recordings, host and target files joined", SETS(report_optsets) },
	{ "ntprof", "compare", "ntprof compare [-j FILE] A.ntp B.ntp",
	  "two recordings group by group, and the stage that amplifies latency", SETS(compare_optsets) },
	{ "ntprof", "dump", "ntprof dump [--header] FILE", "every record of a recording as CSV, or its header",
	  SETS(dump_optsets) },
	{ "ntprof", "probe", "ntprof probe [-r host|target|both] [-t tcp|rdma] [--kprobes|--fentry] [--btf FILE] "
	  "[--spdk-host BIN] [--spdk-target BIN]",
	  "what this kernel offers ntprof, and a test load", SETS(probe_optsets) },
	{ "ntprof", "btf", "ntprof btf -o OUT INPUT...",
	  "merge the kernel's and the NVMe modules' BTF for kernels before 5.11", SETS(btf_optsets) },
	{ "ntprof-top", NULL, "ntprof-top [options] [--replay FILE.ntp [FILE.ntp...]]",
	  "the live monitor: per group the stage bars, queue depths and p99",
	  SETS(ntp_top_optsets) },
};
const size_t ntp_n_optcmds = sizeof(ntp_optcmds) / sizeof(ntp_optcmds[0]);
