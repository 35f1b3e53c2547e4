// SPDX-License-Identifier: GPL-2.0
/*
 * probe_spdk.c - `ntprof probe --spdk-target BIN` / `--spdk-host BIN`, in the
 * layout of docs/spdk.md: the probes (with their site counts), the running
 * processes and the sampling variable's address in each (and the count of
 * sampled commands in flight that the stop waits on), the kernel socket
 * hooks in both flavours, the USDT program the side needs.
 */
#include <stdio.h>
#include <string.h>
#include "../../bpf/ntprof_event.h"
#include "../../bpf/ntprof_spdk.h"
#include "collector/hooks.h"
#include "collector/spdk.h"
#include "probe_spdk.h"

/* The kernel functions through which SPDK's NVMe/TCP sends and receives,
 * hooked by bpf/ntprof_spdk_sock.bpf.h to split SPDK's network time
 * (docs/spdk.md); the target's response and the host's capsule leave
 * through tcp_sendmsg. */
static const struct {
	const char *fe, *kp, *fn;
	unsigned sides;		/* NTP_HOOK_HOST | NTP_HOOK_TARGET */
} sock_hooks[] = {
	{ "ntp_s_recvmsg_fe", "ntp_s_recvmsg_kp", "tcp_recvmsg", NTP_HOOK_HOST | NTP_HOOK_TARGET },
	{ "ntp_s_copy_fe", "ntp_s_copy_kp", "skb_copy_datagram_iter", NTP_HOOK_HOST | NTP_HOOK_TARGET },
	{ "ntp_s_sendmsg_fe", "ntp_s_sendmsg_kp", "tcp_sendmsg", NTP_HOOK_HOST | NTP_HOOK_TARGET },
};

int ntp_probe_spdk(FILE *f, const char *bin, unsigned side, uint8_t transport, bool fentry_ok, bool kprobes,
		   char *why, size_t whylen)
{
	const char *need = ntp_spdk_probe_name(side, transport);
	const char *kmod = side == NTP_SIDE_HOST ? (transport == NTP_TRANSPORT_RDMA ? "nvme_rdma" : "nvme_tcp")
						 : (transport == NTP_TRANSPORT_RDMA ? "nvmet_rdma" : "nvmet_tcp");
	struct ntp_spdk_info info;
	bool have = false, addr_all = true;
	int ret = 0, nop5 = 0;

	if (ntp_spdk_inspect(bin, &info, why, whylen))
		return -1;
	fprintf(f, "spdk_%s_%s (module BTF %s: %s)\n", transport == NTP_TRANSPORT_RDMA ? "rdma" : "tcp",
		side == NTP_SIDE_HOST ? "host" : "target", kmod, ntp_module_btf(kmod) ? "present" : "absent");
	fprintf(f, "USDT probes in %s:\n", bin);
	for (int i = 0; i < info.n_probes; i++) {
		const struct ntp_usdt_count *p = &info.probes[i];

		fprintf(f, "  ok      %-20s %d site%s", p->name, p->sites, p->sites == 1 ? "" : "s");
		if (p->nop5 == p->sites)
			fprintf(f, " (5-byte nop%s)\n", p->sites == 1 ? "" : "s");
		else if (p->nop5)
			fprintf(f, " (%d of them 5-byte nops)\n", p->nop5);
		else
			fputc('\n', f);
		have |= !strcmp(p->name, need);
		nop5 += p->nop5;
	}
	if (!info.n_probes)
		fprintf(f, "  none (SPDK without ntprof's patch, or configured without --with-usdt)\n");
	/* the probes' 5-byte twins (spdk/ntprof_usdt.h) are what a recorder
	 * attaches where the kernel optimizes uprobes on them */
	if (nop5)
		fprintf(f, "  uprobes on 5-byte nops: %s\n", ntp_spdk_twins_wanted() ?
			"optimized by this kernel (arch_uprobe_optimize in /proc/kallsyms): the _nop5 probes are used" :
			ntp_uprobes_optimized() ? "optimized by this kernel, but NTPROF_NO_NOP5 is set: the 1-byte ones are used" :
			"not optimized (no arch_uprobe_optimize in /proc/kallsyms): the 1-byte ones are used");
	fprintf(f, "running processes:");
	for (int i = 0; i < info.n_pids; i++) {
		if (info.var_addr[i] && info.flight_addr[i] && !info.flight_size[i])
			fprintf(f, "%s %d (sampling variable at 0x%llx, in-flight count at 0x%llx)", i ? "," : "",
				(int)info.pids[i], (unsigned long long)info.var_addr[i],
				(unsigned long long)info.flight_addr[i]);
		else if (info.var_addr[i] && info.flight_addr[i])
			fprintf(f, "%s %d (sampling variable at 0x%llx, in-flight count %s of %llu bytes, not %zu: "
				"the stop waits %d ms)", i ? "," : "", (int)info.pids[i],
				(unsigned long long)info.var_addr[i], NTP_SPDK_FLIGHT_VAR,
				(unsigned long long)info.flight_size[i], sizeof(struct ntp_spdk_flight), NTP_SPDK_OLD_GRACE_MS);
		else if (info.var_addr[i])
			fprintf(f, "%s %d (sampling variable at 0x%llx, no in-flight count %s: an older patch, "
				"the stop waits %d ms)", i ? "," : "", (int)info.pids[i],
				(unsigned long long)info.var_addr[i], NTP_SPDK_FLIGHT_VAR, NTP_SPDK_OLD_GRACE_MS);
		else
			fprintf(f, "%s %d (no sampling variable %s)", i ? "," : "", (int)info.pids[i],
				NTP_SPDK_SAMPLE_VAR);
		addr_all &= info.var_addr[i] != 0;
	}
	fprintf(f, "%s\n", info.n_pids ? "" : " none (start it first)");
	if (transport == NTP_TRANSPORT_TCP) {
		for (size_t i = 0; i < sizeof(sock_hooks) / sizeof(sock_hooks[0]); i++) {
			struct ntp_hook h = { .target = sock_hooks[i].fn, .kind = NTP_HOOK_ENTRY };
			bool fe = fentry_ok && ntp_hook_present_fentry(&h), kp = kprobes && ntp_hook_present_kprobe(&h);

			if (!(sock_hooks[i].sides & (side == NTP_SIDE_HOST ? NTP_HOOK_HOST : NTP_HOOK_TARGET)))
				continue;
			fprintf(f, "%-7s %-18s %-9s %s (%s)\n", fe ? "ok" : "missing", sock_hooks[i].fe, "fentry",
				h.target, fe ? "used" : fentry_ok ? "not in the kernel's BTF" : "no fentry");
			fprintf(f, "%-7s %-18s %-9s %s (%s)\n", kp ? "ok" : "missing", sock_hooks[i].kp, "kprobe",
				h.target, kp ? (fe ? "used if fentry cannot attach" : "used") :
				kprobes ? "not in /proc/kallsyms" : "no kprobes");
		}
	}
	fprintf(f, "%-7s ntp_u_%-13s USDT %s:%s (required)\n", have ? "ok" : "missing", need, NTP_SPDK_PROVIDER, need);
	if (!have) {
		snprintf(why, whylen, "%s: neither it nor a library it loads has the USDT probe %s:%s (spdk/apply.sh)",
			 bin, NTP_SPDK_PROVIDER, need);
		ret = -1;
	} else if (!info.n_pids) {
		snprintf(why, whylen, "%s: no process of it is running (start it first)", bin);
		ret = -1;
	} else if (!addr_all) {
		snprintf(why, whylen, "%s: a process of it has no sampling variable %s", bin, NTP_SPDK_SAMPLE_VAR);
		ret = -1;
	}
	return ret;
}
