// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_probe.c - `ntprof probe -r host|target|both -t tcp|rdma [--kprobes|--fentry]`:
 * what this kernel offers ntprof right now, in the layout of docs/recording.md ("ntprof probe"): kernel BTF,
 * the flavour of the function hooks, module BTF per module, each hook in
 * both flavours, and "load: ok" after a real test load and attach.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "options.h"
#include "collector/collector.h"
#include "collector/hooks.h"
#include "collector/hostq.h"
#include "collector/btf_need.h"
#include "collector/kmod.h"
#include "probe_spdk.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: ntprof probe [-r host|target|both] [-t tcp|rdma] [--kprobes|--fentry] [--btf FILE]\n"
"                    [--spdk-host BIN] [--spdk-target BIN]\n"
"Checks what this kernel offers ntprof: kernel BTF, the NVMe modules and\n"
"their BTF, every hook in both flavours (fentry/fexit and kprobe), then loads\n"
"and attaches the programs for real and detaches them. Exits non-zero and\n"
"names what is missing when recording could not work. Needs root.\n"
"A module without BTF of its own (kernels before 5.11) takes its types from\n"
"--btf FILE, by default " NTP_BTF_DIR "/$(uname -r).btf (tools/ntprof-btf.sh).\n"
"--spdk-host BIN, --spdk-target BIN: that side is SPDK patched with ntprof's\n"
"probes (docs/spdk.md): shows the probes in BIN and the libraries it loads,\n"
"its running processes and the sampling variable in each, and test-attaches.\n\n");
	ntp_cmd_help(f, "probe");
}

/* "bio issue time": which field of struct bio the programs read, and
 * whether the kernel sets it (ntp_btf_bio_issue, docs/kernel-btf.md) */
static const char *bio_issue_line(int where)
{
	switch (where) {
	case NTP_BIO_ISSUE_BI_ISSUE:
		return "yes (bio->bi_issue, set for every bio: end to end starts at the bio's submission)";
	case NTP_BIO_ISSUE_NS_UNSET:
		return "no (bio->issue_time_ns, which only blk-iolatency sets, and this kernel has no blk-iolatency: "
		       "end to end starts at the request's allocation)";
	case NTP_BIO_ISSUE_NS_IOLAT:
		return "where blk-iolatency has a target (bio->issue_time_ns, set only on a disk with an io.latency "
		       "target: there end to end starts at the bio's submission, elsewhere at the request's allocation)";
	default:
		return "no (struct bio has neither bi_issue nor issue_time_ns: end to end starts at the request's "
		       "allocation)";
	}
}

/* "packet arrival time": the clock the NVMe/TCP packet arrivals take
 * (ntp_btf_tcp_clock, docs/hooks.md) */
static const char *arrival_clock_line(int tcp_clock)
{
	if (tcp_clock < 0)
		return "unknown (the kernel's BTF did not load)";
	return tcp_clock ? "TCP's clock of the segment (tcp_sock.tcp_clock_cache)"
			 : "read at sk_data_ready (struct tcp_sock has no tcp_clock_cache)";
}

static void say_line(void *ctx, const char *line)
{
	(void)ctx;
	printf("  %s\n", line);
}

/* A stand-in hook's row says whose place it takes, and whether it would
 * (only where the inlined original is absent in that flavour). */
static bool stand_in_note(const struct ntp_hook *h, bool there, bool fentry, char *buf, size_t len)
{
	const char *orig = ntp_hook_stands_in_for(h);
	unsigned long long addr = 0;
	const char *unneeded = there ? ntp_hook_unneeded(h, fentry, &addr) : NULL;

	/* a load-time fact makes it redundant: say which, with the address found */
	if (unneeded) {
		snprintf(buf, len, " (unused: %s at 0x%llx)", unneeded, addr);
		return true;
	}
	if (!orig)
		return false;
	if (!there)
		snprintf(buf, len, " (optional, in place of %s where it is inlined)", orig);
	else if (ntp_hook_wanted(h, fentry))
		snprintf(buf, len, " (optional, stands in for %s)", orig);
	else
		snprintf(buf, len, " (optional, unused: %s is there)", orig);
	return true;
}

/*
 * Does a program of this type load here (0, else -errno)? The least
 * program, "return 0"; a tracing one on the kernel function or tracepoint
 * named (found in the kernel's BTF; not found: 0, the rows say so).
 */
static int loads(enum bpf_prog_type type, enum bpf_attach_type at, const char *name)
{
	const struct bpf_insn ret0[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, lo);
	int fd;

	if (name) {
		int id = libbpf_find_vmlinux_btf_id(name, at);

		if (id <= 0)
			return 0;
		lo.expected_attach_type = at;
		lo.attach_btf_id = (unsigned)id;
	}
	fd = bpf_prog_load(type, NULL, "GPL", ret0, 2, &lo);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Why root is refused what it may do (EPERM with CAP_BPF and CAP_PERFMON):
 * what this process can see of it; "" when err is another. */
static void refused_hint(int err, char *buf, size_t len)
{
	char line[128], mode[64] = "";
	bool seccomp = false, userns = false;
	FILE *f;

	buf[0] = '\0';
	if (err != -EPERM)
		return;
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			seccomp = atoi(line + 8) != 0;
	if (f)
		fclose(f);
	/* root of a user namespace (a container) maps uid 0 to another */
	f = fopen("/proc/self/uid_map", "r");
	if (f && fgets(line, sizeof(line), f)) {
		unsigned long in, out, n;

		userns = sscanf(line, "%lu %lu %lu", &in, &out, &n) == 3 && (in || out || n != 4294967295ul);
	}
	if (f)
		fclose(f);
	/* "none [integrity] confidentiality": the mode in brackets */
	f = fopen("/sys/kernel/security/lockdown", "r");
	if (f && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;

		if (a && b && strncmp(a + 1, "none", 4))
			snprintf(mode, sizeof(mode), "%.*s", (int)(b - a - 1), a + 1);
	}
	if (f)
		fclose(f);
	if (seccomp)
		snprintf(buf, len, "; with root's capabilities: this process runs under a seccomp filter (a container's?)");
	else if (userns)
		snprintf(buf, len, "; root of a user namespace (a container): the kernel's BPF needs the host's root");
	else if (mode[0])
		snprintf(buf, len, "; with root's capabilities: the kernel is locked down (%s)", mode);
	else
		snprintf(buf, len, "; with root's capabilities: a policy refuses it (kernel lockdown: see dmesg; "
			 "a security module; a sandbox's)");
}

int cmd_probe(int argc, char **argv)
{
	struct ntp_capture_opts cap;
	struct ntp_cmd_opts o = { 0 };
	void *bases[] = { &cap, &cap, &cap, &o };
	struct ntp_collector_opts co;
	struct ntp_collector *c;
	struct ntp_kernel k;
	char err[NTP_ERR_LEN], defbtf[300], types[NTP_ERR_LEN], *tbuf = NULL;
	const char *btf_file;
	size_t tlen = 0;
	unsigned sides, spdk_sides;
	char spdk_why[600] = "";
	FILE *t;
	bool fe_all = true, kp_all = true, fentry_ok = false, nobtf = false;
	char hint[160] = "", tp_why[96], raw_why[96];
	int first, any_err, tp_err, raw_err;

	ntp_capture_defaults(&cap);
	first = ntp_cmd_parse("probe", argc, argv, bases);
	if (first < 0)
		return 1;
	if (o.help) {
		usage(stdout);
		return 0;
	}
	co = cap.co;
	if (first < argc)
		return ntp_err("unexpected argument '%s' (ntprof probe --help)", argv[first]);

	ntp_kernel_probe(&k);
	if (!k.privileged)
		return ntp_err("probe needs root, or CAP_BPF and CAP_PERFMON, to load BPF programs");
	sides = (co.role == NTP_ROLE_HOST ? NTP_HOOK_HOST : co.role == NTP_ROLE_TARGET ? NTP_HOOK_TARGET :
		 NTP_HOOK_HOST | NTP_HOOK_TARGET);
	if ((co.spdk_host && !(sides & NTP_HOOK_HOST)) || (co.spdk_target && !(sides & NTP_HOOK_TARGET)))
		return ntp_err("%s checks the %s side: it needs -r %s or -r both",
			       co.spdk_host && !(sides & NTP_HOOK_HOST) ? "--spdk-host" : "--spdk-target",
			       co.spdk_host && !(sides & NTP_HOOK_HOST) ? "host" : "target",
			       co.spdk_host && !(sides & NTP_HOOK_HOST) ? "host" : "target");
	/* an SPDK side needs no kernel NVMe module or hook */
	spdk_sides = (co.spdk_host ? NTP_HOOK_HOST : 0) | (co.spdk_target ? NTP_HOOK_TARGET : 0);
	sides &= ~spdk_sides;

	printf("kernel: %s\n", k.release);
	printf("kernel BTF: %s\n", k.kernel_btf ? "yes" : "no (built without CONFIG_DEBUG_INFO_BTF)");
	printf("kprobes: %s%s%s\n", k.kprobes ? "yes" : "no (", k.kprobes ? "" : NTP_NO_KPROBES_WHY, k.kprobes ? "" : ")");
	/* where the host's end to end starts (docs/stage-model.md) */
	if ((sides & NTP_HOOK_HOST) && k.kernel_btf)
		printf("bio issue time: %s\n", bio_issue_line(ntp_btf_bio_issue()));
	/* where an NVMe/TCP packet's arrival time comes from (docs/hooks.md) */
	if (sides && co.transport != NTP_TRANSPORT_RDMA && k.kernel_btf)
		printf("packet arrival time: %s\n", arrival_clock_line(ntp_btf_tcp_clock()));
	/* the transport check (docs/recording.md): what is connected, and
	 * whether -t fits it (kernel sides only: an SPDK side has neither) */
	if (sides) {
		char found[1024], mis[600];

		ntp_transport_found(ntp_sys_root(), !!(sides & NTP_HOOK_HOST), !!(sides & NTP_HOOK_TARGET),
				    found, sizeof(found));
		printf("%s\n", found);
		if (ntp_transport_mismatch(ntp_sys_root(), co.transport, !!(sides & NTP_HOOK_HOST),
					   !!(sides & NTP_HOOK_TARGET), mis, sizeof(mis)))
			printf("transport: %s\n", mis);
	}
	/* whether the least program of each tracepoint flavour loads: a
	 * tracepoint's rows say ok only then (the function hooks' fentry has a
	 * real test below; kprobes are there or not) */
	any_err = loads(BPF_PROG_TYPE_SOCKET_FILTER, 0, NULL);
	if (any_err) {
		refused_hint(any_err, hint, sizeof(hint));
		printf("bpf: no (a program that does nothing does not load: %s%s)\n", strerror(-any_err), hint);
	}
	tp_err = any_err ? any_err : k.kernel_btf ? loads(BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, "block_rq_complete") : 0;
	raw_err = any_err ? any_err : loads(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, NULL);
	if (k.kernel_btf) {
		char why[256];

		fentry_ok = ntp_fentry_selftest(why, sizeof(why)) == 0;
		/* EPERM with root's rights: say what may refuse it */
		if (!fentry_ok && !any_err)
			refused_hint(loads(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, "tcp_sendmsg"), hint, sizeof(hint));
		if (!fentry_ok)
			printf("fentry: no (%s%s)\n", why, hint);
		else
			printf("fentry: yes (a test program attached to tcp_sendmsg)\n");
	}
	/* The module and hook table goes after the verdict on the function
	 * hooks (docs/recording.md's layout), which needs the real test load first. */
	btf_file = ntp_btf_file(co.btf_path, defbtf, sizeof(defbtf));
	t = open_memstream(&tbuf, &tlen);
	if (!t)
		return ntp_err("out of memory");
	for (unsigned side = NTP_HOOK_HOST; side <= NTP_HOOK_TARGET; side <<= 1) {
		if (!(sides & side))
			continue;
		const char *const *mods = ntp_side_modules(side, co.transport);

		fprintf(t, "linux_%s_%s (", co.transport == NTP_TRANSPORT_RDMA ? "rdma" : "tcp",
			side == NTP_HOOK_HOST ? "host" : "target");
		for (const char *const *m = mods; *m; m++) {
			char why[512];

			fprintf(t, "%s%s: ", m == mods ? "" : ", ", *m);
			bool builtin = ntp_module_builtin(*m);

			nobtf |= !ntp_module_btf(*m) && !builtin;
			if (!ntp_module_loaded(*m))
				fprintf(t, "not loaded");
			else if (builtin)
				fprintf(t, "built in, types in vmlinux BTF");
			else if (ntp_module_btf(*m))
				fprintf(t, "module BTF present");
			else if (!btf_file)
				fprintf(t, "loaded, no module BTF, no --btf file");
			else if (ntp_btf_file_check(btf_file, why, sizeof(why)))
				fprintf(t, "loaded, no module BTF, %s", why);
			else
				fprintf(t, "loaded, no module BTF, types from %s", btf_file);
		}
		fprintf(t, ")\n");
	}
	/* the structures and fields the programs read (src/collector/btf_need.c),
	 * where libbpf will look for them: the file when a module has no BTF */
	if (sides && k.kernel_btf) {
		const char *in = nobtf ? btf_file : NULL;

		if (ntp_btf_need_check(sides, co.transport, in, types, sizeof(types)))
			fprintf(t, "types: missing: %s\n", types);
		else
			fprintf(t, "types: ok (%s%s)\n", in ? "from " : "module BTF", in ? in : "");
	}
	snprintf(tp_why, sizeof(tp_why), " (tp_btf does not load: %s)", strerror(tp_err < 0 ? -tp_err : 0));
	snprintf(raw_why, sizeof(raw_why), " (raw_tp does not load: %s)", strerror(raw_err < 0 ? -raw_err : 0));
	for (size_t i = 0; i < ntp_n_hooks; i++) {
		const struct ntp_hook *h = &ntp_hooks[i];
		bool tp = h->kind == NTP_HOOK_TP;
		/* tp_btf needs no trampoline, fentry/fexit do; a tracepoint's
		 * flavour ok when its least program loads */
		bool fe = k.kernel_btf && (tp ? !tp_err : fentry_ok) && ntp_hook_present_fentry(h);
		/* raw_tp needs no kprobes, kprobe/kretprobe do (and BPF) */
		bool kp = (tp ? !raw_err : k.kprobes && !any_err) && ntp_hook_present_kprobe(h);
		const char *mod = h->module ? h->module : "vmlinux";
		char stand_in[160];

		if (!ntp_hook_used(h, sides, co.transport))
			continue;
		if (!h->optional) {
			fe_all &= fe;
			kp_all &= kp;
		}
		fprintf(t, "%-7s %-18s %-9s %s [%s]%s\n", fe ? "ok" : "missing", h->prog_fentry,
		       ntp_hook_flavour_name(h, true), h->target, mod,
		       stand_in_note(h, fe, true, stand_in, sizeof(stand_in)) ? stand_in :
		       h->optional ? " (optional)" : !fentry_ok && !tp ? " (no fentry)" :
		       tp && tp_err && k.kernel_btf ? tp_why : "");
		fprintf(t, "%-7s %-18s %-9s %s [%s]%s\n", kp ? "ok" : "missing", h->prog_kprobe,
		       ntp_hook_flavour_name(h, false), h->target, mod,
		       stand_in_note(h, kp, false, stand_in, sizeof(stand_in)) ? stand_in :
		       h->optional ? " (optional)" : !k.kprobes && !tp ? " (no kprobes)" :
		       any_err && !tp ? " (no BPF)" : tp && raw_err ? raw_why : "");
	}
	for (unsigned side = NTP_HOOK_HOST; side <= NTP_HOOK_TARGET; side <<= 1) {
		char why[512];

		if ((spdk_sides & side) &&
		    ntp_probe_spdk(t, side == NTP_HOOK_HOST ? co.spdk_host : co.spdk_target,
				   side == NTP_HOOK_HOST ? NTP_SIDE_HOST : NTP_SIDE_TARGET, co.transport, fentry_ok,
				   k.kprobes, why, sizeof(why)) && !spdk_why[0])
			snprintf(spdk_why, sizeof(spdk_why), "%s", why);
	}
	fclose(t);
	ntp_hooks_cleanup();
	if (spdk_why[0]) {
		printf("function hooks: %s\n%s", fentry_ok ? "fentry/fexit" : k.kprobes ? "kprobe/kretprobe" :
		       "none (no fentry, no kprobes)", tbuf);
		free(tbuf);
		printf("load: failed\n");
		fflush(stdout);
		return ntp_err("%s", spdk_why);
	}
	co.spdk_test_only = true;

	/* The real test: load and attach as `record` would, then detach. */
	co.say = say_line;
	c = ntp_collector_open(&co, err, sizeof(err));
	if (!c) {
		printf("function hooks: %s\n%s",
		       fe_all ? "fentry/fexit present, but the test load failed" :
		       kp_all ? "kprobe/kretprobe present, but the test load failed" : "neither flavour has every hook",
		       tbuf);
		free(tbuf);
		printf("load: failed\n");
		fflush(stdout);
		return ntp_err("%s", err);
	}
	if (!sides)	/* SPDK only: the function hooks are its socket hooks (TCP) */
		printf("function hooks: %s\n%s", fentry_ok ? "fentry/fexit (they can attach now)" :
		       k.kprobes ? "kprobe/kretprobe (fentry cannot attach now)" :
		       co.transport == NTP_TRANSPORT_TCP ?
		       "none (no fentry, no kprobes: SPDK's USDT probes need neither; its socket hooks cannot "
		       "attach, its receive paths are not split)" :
		       "none (no fentry, no kprobes: SPDK's probes are USDT, they need neither)", tbuf);
	else
	printf("function hooks: %s (%s)\n%s", ntp_collector_uses_fentry(c) ? "fentry/fexit" : "kprobe/kretprobe",
	       ntp_collector_uses_fentry(c) ? "they can attach now" :
	       co.flavour == NTP_FLAVOUR_KPROBE ? "--kprobes" :
	       ntp_collector_btf_file(c)[0] ? "modules without BTF of their own" : "fentry cannot attach now", tbuf);
	free(tbuf);
	ntp_collector_close(c);
	printf("load: ok\n");
	return 0;
}
